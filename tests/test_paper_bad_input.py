"""Bad input of the seed papers' algorithms (issue 4): clear errors at every entry point.

An empty prior set (PE-GP-UCB and its baselines), a DPP size larger than the candidate set
(SparQ-GP-UCB's expert sampler), a non-positive bandwidth (BOKE, BOKE+, KR-UCB, tv-boke) and a
negative, NaN or infinite expert cost. A zero expert cost stays valid: it models a free expert
and config/sparq_paper.yaml uses it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tvbo
from tvbo.algorithms import make
from tvbo.algorithms.boke.kernel_regression import kernel_regression
from tvbo.algorithms.sparq.dpp import greedy_map, mdpp_probabilities, sample_mdpp
from tvbo.cli import main

PRIOR_SET_ALGORITHMS = ("pe-gp-ucb", "mle-prior", "bayes-prior", "regret-balancing")
KR_ALGORITHMS = ("boke", "boke-plus", "kr-ucb", "tv-boke")


@pytest.mark.parametrize("name", PRIOR_SET_ALGORITHMS)
@pytest.mark.parametrize(
    ("priors", "message"),
    [
        ([], "the set of candidate priors is empty; give at least one prior"),
        # the Intel priors moved to the benchmark: the old mapping says where they are now
        ({"set": "intel", "paths": [], "step_seconds": 1.0}, "prior_paths"),
        ({"set": "intel", "step_seconds": 1.0}, "priors: benchmark"),
    ],
)
def test_empty_prior_set(name, priors, message):
    with pytest.raises(ValueError, match=message):
        make(name, priors=priors)


def test_empty_intel_prior_set():
    from tvbo.benchmarks.temperature import intel_priors

    with pytest.raises(ValueError, match="prior_paths is empty"):
        intel_priors([], step_seconds=1.0)


def test_empty_prior_set_through_simulate():
    with pytest.raises(ValueError, match="candidate priors is empty"):
        tvbo.simulate("hills", "pe-gp-ucb", algorithm_options={"priors": []}, warmup=0,
                      compute="polynomial", polynomial=[0.0])


def _gram(n: int) -> np.ndarray:
    x = np.linspace(0.0, 1.0, n)
    return np.exp(-((x[:, None] - x[None, :]) ** 2) / 0.1) + 1e-9 * np.eye(n)


@pytest.mark.parametrize(
    "call",
    [
        lambda K, m: sample_mdpp(K, m, 10, np.random.default_rng(0)),
        lambda K, m: greedy_map(K, m),
        lambda K, m: mdpp_probabilities(K, m),
    ],
    ids=["sample_mdpp", "greedy_map", "mdpp_probabilities"],
)
def test_dpp_size_larger_than_the_candidate_set(call):
    with pytest.raises(ValueError, match=r"M = 5 is larger than the candidate set \(N = 4\); "
                                         r"choose M <= 4"):
        call(_gram(4), 5)
    with pytest.raises(ValueError, match="the DPP size M must be an integer >= 1, got 0"):
        call(_gram(4), 0)



def test_dpp_size_equal_to_the_candidate_set_is_fine():
    assert sorted(sample_mdpp(_gram(4), 4, 10, np.random.default_rng(0)).indices) == [0, 1, 2, 3]
    assert sorted(greedy_map(_gram(4), 4)) == [0, 1, 2, 3]
    assert list(mdpp_probabilities(_gram(4), 4).values()) == pytest.approx([1.0])


@pytest.mark.parametrize("name", KR_ALGORITHMS)
@pytest.mark.parametrize("bad", [0.0, -0.2, math.nan, math.inf])
def test_non_positive_bandwidth(name, bad):
    with pytest.raises(ValueError, match="bandwidth must be finite and > 0"):
        make(name, bandwidth=bad)
    with pytest.raises(ValueError, match="bandwidth must be finite and > 0"):
        make(name, bandwidth_scale=bad)


def test_non_positive_bandwidth_in_the_kernel_regression_itself():
    X = np.array([[0.2], [0.7]])
    with pytest.raises(ValueError, match="bandwidth must be finite and > 0, got 0"):
        kernel_regression(X, X, np.array([1.0, 2.0]), 0.0)
    with pytest.raises(ValueError, match="bandwidth must be a positive number, got 'wide'"):
        kernel_regression(X, X, np.array([1.0, 2.0]), "wide")


@pytest.mark.parametrize("bad", [-0.5, 0.0, math.nan, math.inf])
def test_bad_expert_cost_through_simulate(bad):
    with pytest.raises(ValueError, match="expert_cost must be a finite number > 0"):
        tvbo.simulate("moving-bump", "sparq-gp-ucb", expert_cost=bad, max_iterations=3)
    if bad != 0.0:  # a noiseless expert is valid
        with pytest.raises(ValueError, match="expert_noise_var must be a finite number >= 0"):
            tvbo.simulate("moving-bump", "sparq-gp-ucb", expert_noise_var=bad, max_iterations=3)


@pytest.mark.parametrize(
    ("value", "message"), [("-1", "must be > 0"), ("0", "must be > 0"), ("inf", "must be finite")]
)
def test_bad_expert_cost_on_the_command_line(tmp_path, capsys, value, message):
    with pytest.raises(SystemExit) as err:
        main(["run", "--benchmark", "moving-bump", "--algorithm", "sparq-gp-ucb",
              "--out", str(tmp_path / "r.nc"), "--expert-cost", value])
    assert err.value.code == 2
    assert message in capsys.readouterr().err


def test_tiny_expert_cost_is_valid():
    ds = tvbo.simulate("moving-bump", "sparq-gp-ucb", expert_cost=1e-9, warmup=1, max_iterations=3)
    assert ds["n_iterations"].item() == 3
