"""The deferred f* refinement made cheaper without changing a bit (issue 27, the floor rows'
oracle cost): rows polished once (unique_rows), shared by the runs of one process
(PolishMemo), and L-BFGS-B skipped where it would return its start (a stationary start). An
exact problem's off-grid solves (Eggholder's 1-D grid and Brent) are shared the same way.

Bit-identity rests on one property, checked here: :func:`newton_polish` with ``rows=True`` is
row-wise to the last bit, whatever the other rows of the batch.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

import tvbo
from tvbo import benchmarks
from tvbo.benchmarks import oracle
from tvbo.benchmarks.oracle import (
    _LBFGSB_OPTIONS,
    _lbfgsb,
    newton_polish,
    polish_memo,
    projected_gradient_norm,
    unique_rows,
)


def _bench(name: str, **options):
    return benchmarks.make(name, horizon=40.0, oracle_grid_step=1.0, **options)


@pytest.mark.parametrize("name", ["griewank", "hartmann6", "shekel"])
def test_newton_polish_rows_do_not_depend_on_the_rest_of_the_batch(name: str) -> None:
    bench = _bench(name)
    rng = np.random.default_rng(1)
    n = 400
    T = rng.uniform(0.0, 40.0, n)
    S = rng.uniform(0.0, 1.0, (n, bench.d))
    S[::7] = 0.5  # stationary starts (Griewank's origin) among them
    whole = newton_polish(lambda Z, r: bench._evaluate(Z, T[r]),
                          lambda Z, r: bench._gradient(Z, T[r]), S, rows=True)
    parts = [np.empty_like(a) for a in whole]
    for part in np.array_split(rng.permutation(n), [1, 50, 51, 300]):
        Tp = T[part]
        got = newton_polish(lambda Z, r, Tp=Tp: bench._evaluate(Z, Tp[r]),
                            lambda Z, r, Tp=Tp: bench._gradient(Z, Tp[r]), S[part], rows=True)
        for out, value in zip(parts, got, strict=True):
            out[part] = value
    for a, b in zip(whole, parts, strict=True):
        assert a.tobytes() == b.tobytes()


def test_unique_rows_keeps_first_appearance_and_tells_signed_zeros_apart() -> None:
    t = np.array([1.0, 1.0, 2.0, 1.0, 0.0, 1.0])
    X = np.array([[0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [0.5, -0.0], [1.0, 1.0], [0.5, 0.0]])
    tu, Xu, rep = unique_rows(t, X)
    assert rep.tolist() == [0, 0, 1, 2, 3, 0]
    assert tu.tolist() == [1.0, 2.0, 1.0, 0.0]
    assert tu[rep].tobytes() == t.tobytes() and Xu[rep].tobytes() == X.tobytes()


def _scipy(fun, grad, X0):
    k, d = X0.shape

    def objective(flat):
        X = flat.reshape(k, d)
        return -float(np.sum(fun(X))), -np.asarray(grad(X), float).ravel()

    res = minimize(objective, X0.ravel(), jac=True, method="L-BFGS-B",
                   bounds=[(0.0, 1.0)] * (k * d), options=_LBFGSB_OPTIONS)
    return np.clip(res.x.reshape(k, d), 0.0, 1.0), res.nit


@pytest.mark.parametrize("time", [0.0, 20.0, 39.5])
def test_a_stationary_start_skips_lbfgsb_with_its_result(time: float) -> None:
    bench = _bench("griewank")
    fun, grad = bench._batch_exact(time)
    centre = np.full((1, bench.d), 0.5)  # the origin: stationary at every time
    assert projected_gradient_norm(centre, -grad(centre)) == 0.0
    want, nit = _scipy(fun, grad, centre)
    assert nit == 0 and _lbfgsb(fun, grad, centre).tobytes() == want.tobytes()
    # a start on a bound whose gradient points out of the box is stationary too
    corner = np.zeros((1, bench.d))
    if projected_gradient_norm(corner, -grad(corner)) <= _LBFGSB_OPTIONS["gtol"]:
        assert _lbfgsb(fun, grad, corner).tobytes() == _scipy(fun, grad, corner)[0].tobytes()
    # a start that is not stationary is polished by scipy as before
    start = np.full((1, bench.d), 0.43)
    assert projected_gradient_norm(start, -grad(start)) > _LBFGSB_OPTIONS["gtol"]
    assert _lbfgsb(fun, grad, start).tobytes() == _scipy(fun, grad, start)[0].tobytes()


def test_projected_gradient_follows_the_box() -> None:
    X = np.array([[0.0, 1.0, 0.5]])
    # pushing out of the box at a bound projects to zero; pushing inwards does not
    assert projected_gradient_norm(X, np.array([[1.0, -1.0, 0.0]])) == 0.0
    assert projected_gradient_norm(X, np.array([[-2.0, 0.0, 0.0]])) == 1.0  # capped by x - 1
    assert projected_gradient_norm(X, np.array([[0.0, 0.0, 0.25]])) == 0.25


@pytest.mark.parametrize("name", ["griewank", "hartmann3"])
def test_runs_of_one_process_share_polishes_and_get_the_same_bits(name: str) -> None:
    rng = np.random.default_rng(5)
    first = _bench(name)
    t = np.sort(rng.uniform(0.0, 40.0, 40))
    X = rng.uniform(0.0, 1.0, (len(t), first.d))
    X[::3] = 0.5
    oracle.clear_polish_memos()
    cold = first.refine_f_star_many(t, X)
    memo = polish_memo(first.oracle_identity())
    stored, hits = len(memo), memo.hits
    assert stored > 0
    again = _bench(name).refine_f_star_many(t, X)  # a new run (instance) of the same config
    assert again.tobytes() == cold.tobytes()
    assert memo.hits > hits and len(memo) == stored  # all served from the memo
    oracle.clear_polish_memos()
    fresh = _bench(name).refine_f_star_many(t, X)
    assert fresh.tobytes() == cold.tobytes()


def test_another_configuration_gets_its_own_memo() -> None:
    a, b = _bench("griewank"), _bench("griewank", spatial_range=[-5.0, 5.0])
    assert a.oracle_identity() != b.oracle_identity()
    assert a.oracle_identity() == _bench("griewank").oracle_identity()
    assert polish_memo(a.oracle_identity()) is not polish_memo(b.oracle_identity())


def test_the_memo_is_bounded() -> None:
    memo = oracle.PolishMemo(limit=3)
    for i in range(5):
        memo.put(bytes([i]), i)
    assert len(memo) <= 3 and memo.get(bytes([4])) == 4 and memo.get(bytes([0])) is None


def test_floor_runs_of_one_job_equal_runs_in_fresh_processes() -> None:
    """Two seeds of `centre` in one process (the second served by the memo) record the same
    f* as each seed alone."""
    options = dict(horizon=30.0, warmup=3, benchmark_options={"oracle_grid_step": 1.0})
    oracle.clear_polish_memos()
    job = [tvbo.simulate("griewank", "centre", seed=s, **options) for s in (0, 1)]
    for seed, ds in zip((0, 1), job, strict=True):
        oracle.clear_polish_memos()
        alone = tvbo.simulate("griewank", "centre", seed=seed, **options)
        assert ds["f_star"].values.tobytes() == alone["f_star"].values.tobytes()
        assert ds["regret"].values.tobytes() == alone["regret"].values.tobytes()


def test_an_exact_problems_off_grid_solves_are_shared_bit_for_bit() -> None:
    """Eggholder's f* at a time off the grid is one deterministic solve from the neighbouring
    grid argmaxes: a second run of the same configuration is served from the memo, with the
    bits of a cold solve."""
    t = np.array([0.25, 3.5, 17.125, 39.75])
    X = np.full((len(t), 1), 0.5)
    oracle.clear_polish_memos()
    first = _bench("eggholder")
    cold = first.refine_f_star_many(t, X)
    memo = polish_memo(first.oracle_identity())
    stored, hits = len(memo), memo.hits
    assert stored >= len(t)
    again = _bench("eggholder").refine_f_star_many(t, X)
    assert again.tobytes() == cold.tobytes()
    assert memo.hits >= hits + len(t) and len(memo) == stored
    oracle.clear_polish_memos()
    bench = _bench("eggholder")
    # against the problem's own solve, memo aside
    times, argmax, _ = bench.oracle.grid()
    for i, s in enumerate(t):
        hi = int(np.clip(np.searchsorted(times, s), 1, len(times) - 1))
        _, F = bench.oracle_solve(float(s), argmax[[hi - 1, hi]], "offgrid")
        assert max(float(F[0]), bench.oracle_value(X[i], float(s))) == cold[i]
