"""The lean L-BFGS-B driver against ``scipy.optimize.minimize``, bit for bit.

Each case runs both on the same objective, logging every point the objective is handed, and
requires the same call sequence (bytes of every point), ``x``, ``fun``, ``nit``, ``nfev``,
``status``, ``success`` and ``message``. Problems: random quadratics (unbounded, boxed, half
bounded, active bounds), Rosenbrock, iteration and evaluation limits, line-search limits,
objectives that go non-finite, odd return types, an objective that overwrites its argument, and
tvbo's real objectives (the LML fit, a published fit mode and the acquisition's joint run).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy
from scipy.optimize import minimize

import tvbo.lbfgsb as lbfgsb
from tvbo.acquisition import AcquisitionOptimizer, ucb
from tvbo.benchmarks.oracle import polish
from tvbo.gp.exact import ExactGP
from tvbo.gp.fit import fit_hyperparameters
from tvbo.gp.kernels import HyperparameterBounds, Hyperparameters, SeparableKernel
from tvbo.lbfgsb import bounds_from_pairs, minimize_lbfgsb
from tvbo.work import WorkCounter

pytestmark = pytest.mark.skipif(not lbfgsb.LEAN, reason=f"lean driver off: "
                                f"{lbfgsb.FALLBACK_REASON}")


class Logged:
    """An objective wrapper that records the bytes of every point it is handed."""

    def __init__(self, fun):
        self.fun = fun
        self.points: list[bytes] = []

    def __call__(self, x, *args):
        self.points.append(np.asarray(x).tobytes())
        return self.fun(x, *args)


def _bits(value) -> bytes:
    return np.asarray(value, dtype=float).tobytes()


def assert_same(fun, x0, bounds=None, **options) -> None:
    """Run scipy's minimize and the lean driver on ``fun`` and compare everything."""
    ref_fun, lean_fun = Logged(fun), Logged(fun)
    ref = minimize(ref_fun, np.array(x0, copy=True), jac=True, method="L-BFGS-B",
                   bounds=bounds, options=options)
    lower, upper = (-np.inf, np.inf) if bounds is None else bounds_from_pairs(bounds)
    lean = minimize_lbfgsb(lean_fun, np.array(x0, copy=True), lower, upper, **options)
    assert lean_fun.points == ref_fun.points, "different sequence of objective calls"
    assert lean.x.tobytes() == np.asarray(ref.x, float).tobytes()
    assert _bits(lean.fun) == _bits(ref.fun)
    assert (lean.nit, lean.nfev, lean.njev) == (ref.nit, ref.nfev, ref.njev)
    assert (lean.status, lean.success, lean.message) == (ref.status, ref.success, ref.message)
    assert lean.jac.tobytes() == np.asarray(ref.jac, float).tobytes()


def _quadratic(seed: int, n: int):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    H = A @ A.T + 0.1 * np.eye(n)
    c = rng.standard_normal(n) * 2.0

    def fun(x):
        r = x - c
        return 0.5 * r @ H @ r + 1.0, H @ r

    return fun, rng


@pytest.mark.parametrize("seed", range(12))
def test_random_quadratics(seed):
    n = 1 + seed * 3 % 25
    fun, rng = _quadratic(seed, n)
    x0 = rng.uniform(-3, 3, n)
    assert_same(fun, x0)  # unbounded
    assert_same(fun, x0, [(-1.0, 1.0)] * n)  # boxed, minimum mostly outside: active bounds
    half = [(-0.5, None) if i % 3 == 0 else (None, 0.5) if i % 3 == 1 else (None, None)
            for i in range(n)]
    assert_same(fun, x0, half)
    assert_same(fun, x0 * 10, [(-2.0, 2.0)] * n, maxiter=4)  # start clipped, maxiter hit
    assert_same(fun, x0, [(-1.0, 1.0)] * n, ftol=1e-12, gtol=1e-9, maxcor=3)


def _rosenbrock(x):
    f = np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    g = np.zeros_like(x)
    g[:-1] = -400.0 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2.0 * (1 - x[:-1])
    g[1:] += 200.0 * (x[1:] - x[:-1] ** 2)
    return f, g


@pytest.mark.parametrize("n", [2, 5, 10])
def test_rosenbrock_and_limits(n):
    x0 = np.full(n, -1.2)
    assert_same(_rosenbrock, x0)
    assert_same(_rosenbrock, x0, [(-1.5, 0.8)] * n)
    assert_same(_rosenbrock, x0, maxiter=7)
    assert_same(_rosenbrock, x0, maxfun=9)  # maxfun hit (checked at the next iterate)
    assert_same(_rosenbrock, x0, maxls=1)  # line searches cut short
    assert_same(_rosenbrock, x0, [(0.0, 2.0)] * n, maxiter=1)


def test_non_finite_objectives():
    def wall(x):  # infinite beyond a wall: line searches back off or fail
        if x[0] > 0.3:
            return math.inf, np.full_like(x, math.inf)
        return float(np.sum((x - 1.0) ** 2)), 2.0 * (x - 1.0)

    def nan_region(x):  # NaN value and gradient in part of the box
        if x[1] < -0.5:
            return math.nan, np.full_like(x, math.nan)
        return float(np.sum((x + 1.0) ** 2)), 2.0 * (x + 1.0)

    def tvbo_style(x):  # what tvbo's fit does with a failed evaluation
        if np.sum(x) > 1.0:
            return 1e300, np.zeros_like(x)
        return float(np.sum((x - 2.0) ** 2)), 2.0 * (x - 2.0)

    for fun in (wall, nan_region, tvbo_style):
        assert_same(fun, np.zeros(3))
        assert_same(fun, np.zeros(3), [(-2.0, 2.0)] * 3)
    assert_same(nan_region, np.array([0.0, math.nan, 0.0]))  # NaN start: the gradient re-call


def test_return_types_integer_start_and_argument_overwrite():
    def zero_d(x):  # a 0-d array value and a list gradient
        return np.array(np.sum(x**2)), list(2 * x)

    def one_element(x):
        return np.array([np.sum((x - 0.2) ** 2)]), 2 * (x - 0.2)

    def float32_grad(x):
        return float(np.sum((x - 0.7) ** 2)), (2 * (x - 0.7)).astype(np.float32)

    def overwrites(x):
        v, g = float(np.sum((x - 0.4) ** 4)), 4 * (x - 0.4) ** 3
        x[:] = 99.0
        return v, g

    for fun in (zero_d, one_element, float32_grad, overwrites):
        assert_same(fun, np.array([1.0, -2.0]), [(-1.0, 3.0)] * 2)
    assert_same(one_element, np.array([1, 2]))  # integer start, converted as minimize does


def test_non_scalar_value_is_rejected_like_scipy():
    def bad(x):
        return x.copy(), x.copy()

    with pytest.raises(ValueError, match="must return a scalar"):
        minimize(bad, np.ones(2), jac=True, method="L-BFGS-B")
    with pytest.raises(ValueError, match="must return a scalar"):
        minimize_lbfgsb(bad, np.ones(2))


def test_bad_input():
    fun = _quadratic(0, 2)[0]
    with pytest.raises(ValueError, match="upper bound is less"):
        minimize_lbfgsb(fun, np.zeros(2), [0.0, 1.0], [1.0, 0.5])
    with pytest.raises(ValueError, match="maxls must be positive"):
        minimize_lbfgsb(fun, np.zeros(2), maxls=0)
    with pytest.raises(ValueError, match="one-dimensional"):
        minimize_lbfgsb(fun, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="do not match x0 of length 2"):
        minimize_lbfgsb(fun, np.zeros(2), np.zeros(3), np.ones(3))


def test_all_variables_fixed_goes_to_minimize():
    fun = _quadratic(1, 3)[0]
    ref = minimize(fun, np.zeros(3), jac=True, method="L-BFGS-B", bounds=[(0.5, 0.5)] * 3)
    lean = minimize_lbfgsb(fun, np.zeros(3), 0.5, 0.5)
    assert lean.x.tobytes() == ref.x.tobytes() and lean.fun == ref.fun
    assert lean.nfev == ref.nfev == 1 and lean.success


# -- tvbo's own objectives ------------------------------------------------------------------
def _st_gp(n: int, seed: int = 0) -> ExactGP:
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    T = np.sort(rng.random(n) * 600.0)
    y = np.sin(6.0 * X[:, 0]) + np.cos(4.0 * X[:, 1]) + 0.1 * rng.standard_normal(n)
    gp = ExactGP(SeparableKernel(), Hyperparameters(1.0, 0.3, 50.0, 0.01))
    gp.set_data(X, T, y)
    return gp


def _fit_both(monkeypatch, gp_of, **kwargs):
    results = []
    for lean in (True, False):
        monkeypatch.setattr(lbfgsb, "LEAN", lean)
        gp = gp_of()
        rng = kwargs.pop("rng_seed", None)
        if rng is not None:  # a fresh generator per path: both draw the same restarts
            kwargs = {**kwargs, "rng": np.random.default_rng(rng), "rng_seed": rng}
        res = fit_hyperparameters(gp, **{k: v for k, v in kwargs.items() if k != "rng_seed"})
        results.append((res, gp.hyperparameters, gp.work.counts(), repr(gp.work.drain_fits())))
    return results


@pytest.mark.parametrize("seed", range(4))
def test_tvbo_fit_is_bit_identical(monkeypatch, seed):
    """fit_hyperparameters (restarts, escape from a bound) and a published fit mode with the
    driver and with scipy's minimize: same fit, same evaluations, same counted work."""
    cases = [
        dict(n_restarts=2, rng_seed=seed),
        dict(bounds=HyperparameterBounds(lengthscale_time=(1.0, 5.0))),  # pinned: escape run
        dict(max_iter=3),
        dict(bounds=HyperparameterBounds(noise_var=(0.01, 0.01))),  # one variable fixed
        dict(mode="botorch-map"),
    ]
    for kwargs in cases:
        (a, hp_a, work_a, fits_a), (b, hp_b, work_b, fits_b) = _fit_both(
            monkeypatch, lambda: _st_gp(30, seed), **kwargs)
        assert hp_a == hp_b
        assert (a.lml, a.n_evals, a.success, a.message) == (b.lml, b.n_evals, b.success,
                                                           b.message)
        assert work_a == work_b and fits_a == fits_b  # counted work and fit-health records


@pytest.mark.parametrize("d", [2, 4, 6])
def test_acquisition_joint_run_is_bit_identical(monkeypatch, d):
    """AcquisitionOptimizer.maximize (20 restarts x d): same point, value and objective calls."""
    rng = np.random.default_rng(d)
    X = rng.uniform(size=(30, d))
    y = np.sin(5 * X).sum(axis=1) + 0.05 * rng.standard_normal(30)
    gp = ExactGP(SeparableKernel("matern52", None), Hyperparameters(1.0, 0.3, None, 0.01))
    gp.set_data(X, np.zeros(30), y)
    outcomes = []
    for lean in (True, False):
        monkeypatch.setattr(lbfgsb, "LEAN", lean)
        calls = Logged(lambda Z, grad: ucb(gp, Z, 0.0, 2.0, grad=grad))
        work = WorkCounter()
        x, value = AcquisitionOptimizer().maximize(calls, d, np.random.default_rng(7), work=work)
        outcomes.append((x.tobytes(), _bits(value), calls.points, work.counts()))
    assert outcomes[0] == outcomes[1]


# -- the guard ------------------------------------------------------------------------------
def test_forced_fallback_calls_minimize(monkeypatch):
    calls = []

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return minimize(*args, **kwargs)

    monkeypatch.setattr(lbfgsb, "LEAN", False)
    monkeypatch.setattr(lbfgsb, "minimize", spy)
    fun = _quadratic(3, 4)[0]
    res = minimize_lbfgsb(fun, np.zeros(4), -1.0, 1.0, maxiter=5)
    assert len(calls) == 1 and calls[0]["method"] == "L-BFGS-B"
    monkeypatch.setattr(lbfgsb, "LEAN", True)
    lean = minimize_lbfgsb(fun, np.zeros(4), -1.0, 1.0, maxiter=5)
    assert len(calls) == 1  # the lean path does not call minimize
    assert res.x.tobytes() == lean.x.tobytes() and (res.nit, res.nfev) == (lean.nit, lean.nfev)


def test_interface_check(monkeypatch):
    assert lbfgsb._check_interface() is None
    monkeypatch.setenv(lbfgsb.ENV, "scipy")
    assert lbfgsb._check_interface() == "TVBO_LBFGSB=scipy"
    monkeypatch.setenv(lbfgsb.ENV, "fast")
    with pytest.raises(ValueError, match="TVBO_LBFGSB must be 'lean' or 'scipy'"):
        lbfgsb._check_interface()
    monkeypatch.delenv(lbfgsb.ENV)
    monkeypatch.setattr(scipy, "__version__", "1.18.0")
    assert "not a verified release" in lbfgsb._check_interface()


def test_oracle_polish_is_bit_identical(monkeypatch):
    """The f* oracle's batched polish (tvbo.benchmarks.oracle), with and without gradients."""
    def fun(X):
        return np.sin(7.0 * X).sum(axis=1) - ((X - 0.3) ** 2).sum(axis=1)

    def grad(X):
        return 7.0 * np.cos(7.0 * X) - 2.0 * (X - 0.3)

    X0 = np.random.default_rng(5).uniform(size=(13, 3))
    outcomes = []
    for lean in (True, False):
        monkeypatch.setattr(lbfgsb, "LEAN", lean)
        calls = Logged(fun)
        X, F = polish(calls, grad, X0)
        X2, F2 = polish(fun, None, X0)  # finite-difference gradients
        outcomes.append((X.tobytes(), F.tobytes(), calls.points, X2.tobytes(), F2.tobytes()))
    assert outcomes[0] == outcomes[1]
