"""Reference policies (issue 22 item 2) against closed forms: the centre of Griewank's published
box scores 2/pi, best-static is the known fixed optimum where one exists and never worse than
the centre or random points on its own criterion."""

from __future__ import annotations

import numpy as np
import pytest

from tvbo.algorithms import make
from tvbo.algorithms.base import ProblemInfo
from tvbo.algorithms.display import (
    REFERENCE_POLICIES,
    display_name,
    is_reference_policy,
    reference_caption,
)
from tvbo.analysis.metrics import average_regret
from tvbo.api import simulate
from tvbo.benchmarks import make as make_benchmark
from tvbo.benchmarks.oracle import sobol_points
from tvbo.work import WorkCounter


def _policy(name: str, benchmark, **options):
    policy = make(name, **options)
    policy.attach_oracle(benchmark)
    policy.setup(ProblemInfo(d=benchmark.d), np.random.default_rng(0), WorkCounter())
    return policy


def _griewank_time_cos(bench, t: np.ndarray) -> np.ndarray:
    z_t = -600.0 + 1200.0 * t / bench.horizon  # the published box [-600, 600] on the time axis
    return np.cos(z_t / np.sqrt(6.0))


def test_griewank_centre_scores_two_over_pi_within_monte_carlo_error() -> None:
    # 300 queries (cost 2 s): the sample times hit the last cosine at quasi-random phases
    ds = simulate("griewank", "centre", seed=0, horizon=600.0, cost=2.0, warmup=15)
    regret = np.asarray(ds["regret"].values, float).ravel()
    warm = np.asarray(ds["is_warmup"].values).ravel().astype(bool)
    t = np.asarray(ds["t_sample"].values, float).ravel()[~warm]
    x = np.asarray(ds["x"].values, float).reshape(len(regret), -1)[~warm]
    assert np.all(x == 0.5)
    bench = make_benchmark("griewank", horizon=600.0, cost=2.0)
    # pointwise closed form: regret 0 where cos >= 0, else 2|cos| less the small price
    # (<= pi^2/4000) of moving one coordinate to the first cosine's trough
    closed = np.maximum(0.0, -2.0 * _griewank_time_cos(bench, t))
    assert np.all(np.abs(regret[~warm] - closed) <= np.pi**2 / 4000 + 1e-9)
    mean = average_regret(regret, warm)
    se = regret[~warm].std(ddof=1) / np.sqrt((~warm).sum())
    assert abs(mean - 2.0 / np.pi) < 3.0 * se, (mean, se)


def test_centre_is_the_nearest_candidate_on_a_discrete_problem() -> None:
    cands = np.array([[0.1, 0.9], [0.55, 0.45], [0.5, 0.2]])
    policy = make("centre")
    policy.setup(ProblemInfo(d=2, candidates=cands), np.random.default_rng(0), WorkCounter())
    assert np.array_equal(policy.propose(0.0), cands[1])


def test_best_static_on_ackley_is_the_centre_and_on_schwefel_the_fixed_argmax() -> None:
    # Ackley: x = 1/2 maximises f(., t) at every t, hence its time average
    ackley = make_benchmark("ackley", horizon=600.0)
    point = _policy("best-static", ackley, time_points=64, raw_samples=64).point
    np.testing.assert_allclose(point, 0.5, atol=1e-5)
    # Schwefel: time adds a constant, so the per-time argmax is the best static point
    schwefel = make_benchmark("schwefel", horizon=600.0)
    point = _policy("best-static", schwefel, time_points=16, raw_samples=256).point
    np.testing.assert_allclose(point, schwefel.exact_argmax(0.0), atol=1e-4)


@pytest.mark.parametrize("name", ["shekel", "griewank"])
def test_best_static_beats_centre_and_random_points_on_its_criterion(name) -> None:
    bench = make_benchmark(name, horizon=600.0)
    policy = _policy("best-static", bench, time_points=256, raw_samples=256)
    best = policy.time_average(policy.point[None, :])[0]
    assert best == pytest.approx(policy.value)
    assert best >= policy.time_average(np.full((1, bench.d), 0.5))[0] - 1e-12
    others = np.random.default_rng(1).uniform(size=(512, bench.d))
    assert best >= policy.time_average(others).max()


def test_time_average_is_the_midpoint_rule_of_f() -> None:
    bench = make_benchmark("hartmann3", horizon=600.0)
    policy = _policy("best-static", bench, time_points=8, raw_samples=2, top_k=1)
    X = sobol_points(bench.d, 4)
    t = (np.arange(8) + 0.5) * 75.0
    direct = np.array([[bench(x, ti) for ti in t] for x in X]).mean(axis=1)
    np.testing.assert_allclose(policy.time_average(X), direct, rtol=1e-12)
    # the gradient is the time average of f's x-gradient (finite-difference check)
    h = 1e-6
    e = np.eye(bench.d)[0] * h
    fd = (policy.time_average(X + e) - policy.time_average(X - e)) / (2 * h)
    np.testing.assert_allclose(policy.time_average_gradient(X)[:, 0], fd, rtol=1e-5, atol=1e-7)


def test_best_static_on_candidates_maximises_the_time_average() -> None:
    bench = make_benchmark("hartmann3", horizon=600.0)
    cands = sobol_points(bench.d, 16)
    policy = make("best-static", time_points=32)
    policy.attach_oracle(bench)
    policy.setup(ProblemInfo(d=bench.d, candidates=cands), np.random.default_rng(0),
                 WorkCounter())
    values = policy.time_average(cands)
    assert np.array_equal(policy.point, cands[int(np.argmax(values))])


def test_reference_policies_are_compute_free_and_run_with_zero_compute() -> None:
    assert make("centre").compute_free and make("best-static").compute_free
    assert not make("gp-ucb").compute_free
    ds = simulate("hartmann3", "best-static", seed=0, horizon=60.0,
                  algorithm_options={"time_points": 32, "raw_samples": 64})
    warm = np.asarray(ds["is_warmup"].values).ravel().astype(bool)
    assert np.all(np.asarray(ds["compute_total"].values).ravel()[~warm] == 0.0)
    assert np.all(np.asarray(ds["dataset_size"].values).ravel() == 0)


def test_best_static_needs_the_oracle_and_checks_its_options() -> None:
    policy = make("best-static")
    with pytest.raises(RuntimeError, match="attach_oracle"):
        policy.setup(ProblemInfo(d=2), np.random.default_rng(0), WorkCounter())
    for bad in ({"time_points": 0}, {"raw_samples": 1.5}, {"top_k": True}):
        with pytest.raises(ValueError, match="best-static: .* must be an integer"):
            make("best-static", **bad)
    with pytest.raises(ValueError, match="best-static"):
        make("best-static", bogus=1)


def test_reference_policies_are_declared_for_tables() -> None:
    assert REFERENCE_POLICIES == ("random-search", "centre", "best-static")
    assert all(is_reference_policy(n) for n in REFERENCE_POLICIES)
    assert not is_reference_policy("gp-ucb")
    assert is_reference_policy("my-floor", {"preset": "centre"})
    assert display_name("centre") == "Centre"
    assert display_name("best-static") == "Best static"
    caption = reference_caption(["gp-ucb", "centre", "best-static"])
    assert caption.startswith("Reference policies (floor rows, not competitors")
    assert "Centre = always the centre of the domain" in caption and "GP-UCB" not in caption
    assert reference_caption(["gp-ucb", "bolt"]) == ""


def test_best_static_choice_is_computed_once_per_objective_and_options(monkeypatch) -> None:
    """The choice does not depend on the seed: a second policy on the same objective and options
    reuses it (no second computation) and holds the point a fresh computation gives; another
    benchmark configuration or other options compute their own."""
    from tvbo.algorithms.reference import policies

    monkeypatch.setattr(policies, "_CHOICES", {})
    calls: list[str] = []
    compute = policies.BestStaticPolicy._compute_choice

    def counted(self):
        calls.append(self._benchmark.name)
        return compute(self)

    monkeypatch.setattr(policies.BestStaticPolicy, "_compute_choice", counted)
    options = {"time_points": 64, "raw_samples": 32, "top_k": 1}
    bench = make_benchmark("hartmann3", horizon=60.0)
    first = _policy("best-static", bench, **options)
    second = _policy("best-static", make_benchmark("hartmann3", horizon=60.0), **options)
    assert calls == ["hartmann3"]
    assert np.array_equal(first.point, second.point) and first.value == second.value
    monkeypatch.setattr(policies, "_CHOICES", {})
    fresh = _policy("best-static", bench, **options)
    assert np.array_equal(fresh.point, second.point) and fresh.value == second.value
    _policy("best-static", make_benchmark("hartmann3", horizon=30.0), **options)
    _policy("best-static", bench, **{**options, "top_k": 2})
    assert calls == ["hartmann3"] * 4
