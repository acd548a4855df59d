"""f* at query times, refined for all queries at once after the run (Engine._f_stars,
Benchmark.refine_f_star_many, TimeGridOracle.refine_many).

The reference is the per-query refinement (:meth:`TimeGridOracle.refine`, what the engine called
once per query before) on a separate benchmark instance, so the two never share a cache; the
regression against the recorded baseline is tests/benchmarks/test_oracle_table.py's.
"""

from __future__ import annotations

import numpy as np
import pytest

import tvbo
from tvbo import benchmarks
from tvbo.benchmarks.oracle import REFINE_RTOL, newton_polish


def _bench(name: str):
    return benchmarks.make(name, horizon=40.0, oracle_grid_step=1.0)


@pytest.mark.parametrize("name", ["shekel", "hartmann3", "eggholder", "powell", "hartmann6"])
def test_batched_refinement_matches_per_query_refinement(name: str) -> None:
    rng = np.random.default_rng(7)
    one, many = _bench(name), _bench(name)
    t = np.sort(rng.uniform(0.0, 40.0, 30))
    t[5] = 12.0  # a grid time
    t[6] = t[7]  # a repeated time: the second goes through refine after the batch
    X = rng.uniform(0.0, 1.0, (len(t), one.d))
    X[3] = one.argmax(float(t[3]))  # a query at the optimum
    expected = np.array([one.refine_f_star(ti, xi) for ti, xi in zip(t, X, strict=True)])
    got = many.refine_f_star_many(t, X)
    assert np.all(np.abs(got - expected) <= REFINE_RTOL * (1 + np.abs(expected))), (
        np.max(np.abs(got - expected)))
    assert np.all(got >= many(X, t) - 1e-12 * (1 + np.abs(got)))


def test_rows_aware_newton_equals_separate_polishes() -> None:
    """Each row of a batched polish (its own time) follows the path of its own polish."""
    bench = _bench("hartmann3")
    rng = np.random.default_rng(3)
    X0 = rng.uniform(0.0, 1.0, (6, bench.d))
    T = np.array([1.5, 1.5, 7.25, 7.25, 30.1, 39.9])
    X, F, conv = newton_polish(lambda Z, r: bench._evaluate(Z, T[r]),
                               lambda Z, r: bench._gradient(Z, T[r]), X0, rows=True)
    for i in range(len(X0)):
        t = np.float64(T[i])
        Xi, Fi, ci = newton_polish(lambda Z, t=t: bench._evaluate(Z, t),
                                   lambda Z, t=t: bench._gradient(Z, t), X0[i : i + 1])
        assert abs(Fi[0] - F[i]) <= 1e-12 * (1 + abs(Fi[0])) and ci[0] == conv[i]
        assert np.allclose(Xi[0], X[i], atol=1e-8)


@pytest.mark.parametrize("name", ["shekel", "eggholder", "ackley"])
def test_a_run_records_f_star_at_every_query_and_no_negative_regret(name: str) -> None:
    ds = tvbo.simulate(name, "gp-ucb", seed=1, horizon=40.0, warmup=3, max_iterations=25,
                       benchmark_options={"oracle_grid_step": 1.0}).squeeze()
    f_star, f = ds["f_star"].values, ds["f"].values
    assert np.all(np.isfinite(f_star)) and np.all(f_star >= f)
    assert np.all(ds["regret"].values >= 0.0)
    # the per-query refinement of a fresh benchmark gives the same f* (to the tolerance)
    bench = _bench(name)
    t = ds["t_sample"].values
    X = ds["x"].values.reshape(len(t), bench.d)
    again = np.array([bench.refine_f_star(ti, xi) for ti, xi in zip(t, X, strict=True)])
    assert np.all(np.abs(f_star - np.maximum(again, f)) <= REFINE_RTOL * (1 + np.abs(again)))
