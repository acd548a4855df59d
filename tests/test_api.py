"""The public entry point tvbo.simulate: determinism, the run record, and bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tvbo
from tvbo.results.io import validate_run
from tvbo.results.schema import ITERATION_VARIABLES, REQUIRED_ATTRIBUTES, TIME_VARIABLES

SHORT = {"horizon": 8.0, "cost": 0.2, "warmup": 5}


@pytest.mark.parametrize("algorithm", ["gp-ucb", "bolt"])
def test_counted_runs_are_bit_identical(algorithm):
    a = tvbo.simulate("eggholder", algorithm, seed=3, **SHORT)
    b = tvbo.simulate("eggholder", algorithm, seed=3, **SHORT)
    assert set(a.data_vars) == set(b.data_vars)
    for name in a.data_vars:
        np.testing.assert_array_equal(a[name].values, b[name].values, err_msg=name)
    c = tvbo.simulate("eggholder", algorithm, seed=4, **SHORT)
    assert not np.array_equal(a["x"].values, c["x"].values)


def test_the_run_record_is_complete_and_consistent():
    ds = tvbo.simulate("hartmann3", "gp-ucb", seed=0, **SHORT)
    validate_run(ds)
    for name in (*ITERATION_VARIABLES, *TIME_VARIABLES):
        assert name in ds
    for name in REQUIRED_ATTRIBUTES:
        assert name in ds.attrs
    run = ds.squeeze()
    assert np.all(np.diff(run["t_decide"].values) > 0)
    assert np.all(run["t_sample"].values >= run["t_decide"].values)
    np.testing.assert_allclose(run["t_available"] - run["t_sample"], 0.2)
    np.testing.assert_allclose(run["regret"], run["f_star"] - run["f"])
    assert run["regret"].min() >= -1e-9
    # post-warm-up mean of the query regret is the papers' average regret
    post = run["is_warmup"].values == 0
    assert float(run["average_regret"]) == pytest.approx(run["regret"].values[post].mean())
    config = json.loads(ds.attrs["config_json"])
    assert config["algorithm"]["name"] == "gp-ucb"
    assert json.loads(ds.attrs["compute_model_json"])["model"] == "counted"


def test_speed_changes_the_number_of_queries():
    slow = tvbo.simulate("eggholder", "gp-ucb", seed=0, speed=0.05, **SHORT)
    fast = tvbo.simulate("eggholder", "gp-ucb", seed=0, speed=20.0, **SHORT)
    assert int(fast["n_iterations"].values.ravel()[0]) > int(slow["n_iterations"].values.ravel()[0])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"benchmark": "himmelblau"}, "valid names: ackley"),
        ({"algorithm": "gp-lcb"}, "valid: abo, "),
        ({"cost": -1.0}, "cost"),
        ({"horizon": 0.0}, "horizon"),
        ({"speed": 0.0}, "speed"),
        ({"compute": "guessed"}, "valid: counted, measured, polynomial"),
        ({"algorithm_options": {"betta": 2}}, "betta"),
        ({"benchmark_options": {"colour": "red"}}, "colour"),
    ],
)
def test_bad_input_is_named(kwargs, match):
    args = {"benchmark": "eggholder", "algorithm": "gp-ucb", **kwargs}
    with pytest.raises(ValueError, match=match):
        tvbo.simulate(args.pop("benchmark"), args.pop("algorithm"), seed=0, **args)
