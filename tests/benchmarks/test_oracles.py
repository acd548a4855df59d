"""Oracles: f*(t) is never beaten (no negative regret), argmax is consistent, and exact
structure agrees with independent computations (hand formulas, dense grids, scipy)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from scipy.optimize import minimize

from tvbo import benchmarks as B

NAMES = [
    "ackley",
    "eggholder",
    "griewank",
    "hartmann3",
    "hartmann6",
    "powell",
    "schwefel",
    "shekel",
]
STEP = 30.0  # coarse oracle grid in tests: off-grid times lean on neighbours 30 s apart


@pytest.fixture(scope="module")
def benches():
    return {n: B.make(n, oracle_grid_step=STEP) for n in NAMES}


def _query_times(rng: np.random.Generator, n: int = 12) -> np.ndarray:
    grid = np.arange(0.0, 600.0 + 1e-9, STEP)
    return np.r_[rng.choice(grid, 3, replace=False), 0.0, 600.0, rng.uniform(0, 600, n - 5)]


@pytest.mark.parametrize("name", NAMES)
def test_no_negative_regret(benches, name):
    b = benches[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for t in _query_times(rng):
        fs = b.f_star(t)
        X = rng.uniform(size=(2000, b.d))
        fx = b(X, t)
        scale = max(fs - fx.min(), 1e-12)  # range of f at this time
        best = fx.max()
        for x0 in X[np.argsort(-fx)[:2]].tolist() + rng.uniform(size=(2, b.d)).tolist():
            res = minimize(
                lambda x, t=t: -b(np.clip(x, 0, 1), t),
                x0,
                method="L-BFGS-B",
                bounds=[(0, 1)] * b.d,
                options={"maxiter": 200},
            )
            best = max(best, -res.fun)
        assert fs - best >= -1e-6 * scale, (name, t, fs, best)
        # argmax evaluates to f*
        assert b(b.argmax(t), t) == pytest.approx(fs, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_refine_never_decreases(benches, name):
    b = benches[name]
    rng = np.random.default_rng(7)
    for t in (0.0, 37.3, 300.0, 512.9):
        before = b.f_star(t)
        r = b.refine_f_star(t, rng.uniform(size=b.d))
        assert r >= before
        assert b.f_star(t) >= before


def test_refine_repairs_a_bad_cache():
    b = B.make("shekel", oracle_grid_step=STEP)
    t = 120.0  # a grid time
    good_x, good_f = b.argmax(t), b.f_star(t)
    k = int(round(t / STEP))
    b.oracle._X[k] = np.full(3, 0.95)  # corrupt the cache with a poor point
    b.oracle._F[k] = b(b.oracle._X[k], t)
    assert b.f_star(t) < good_f - 1.0
    # a query near the true optimum is polished to it and the cache is repaired
    r = b.refine_f_star(t, np.clip(good_x + 0.02, 0, 1))
    assert r == pytest.approx(good_f, abs=1e-9)
    assert b.f_star(t) == pytest.approx(good_f, abs=1e-9)
    np.testing.assert_allclose(b.argmax(t), good_x, atol=1e-5)


def test_vectorised_queries(benches):
    b = benches["hartmann3"]
    ts = np.array([0.0, 15.5, 30.0, 599.9])
    fs = b.f_star(ts)
    assert fs.shape == (4,)
    np.testing.assert_array_equal(fs, [b.f_star(t) for t in ts])
    assert b.argmax(ts).shape == (4, 2) and b.argmax(15.5).shape == (2,)
    # f* is continuous: a time just off the grid is close to the grid value
    assert abs(b.f_star(30.0 + 1e-4) - b.f_star(30.0)) < 1e-3
    with pytest.raises(ValueError, match="t must lie"):
        b.f_star(700.0)


def test_grid_shape_and_step():
    b = B.make("hartmann3", oracle_grid_step=7.0, horizon=100.0)
    times, X, F = b.oracle.grid()
    assert times[0] == 0.0 and times[-1] == 100.0 and np.all(np.diff(times) <= 7.0)
    assert X.shape == (len(times), 2)
    np.testing.assert_allclose(b(X, times), F, rtol=0, atol=0)


# -- independent checks of the exact structure ---------------------------------------------
def _zt(t: float, lo: float, hi: float, horizon: float = 600.0) -> float:
    return lo + (hi - lo) * t / horizon


def test_ackley_exact(benches):
    b = benches["ackley"]
    for t in np.linspace(0, 600, 7):
        z = np.array([0.0, 0.0, 0.0, _zt(t, -32, 32)])
        by_hand = (
            20 * np.exp(-0.2 * np.sqrt(np.sum(z**2) / 4))
            + np.exp(np.mean(np.cos(2 * np.pi * z)))
            - 20
            - np.e
        )
        assert b.f_star(t) == pytest.approx(by_hand, abs=1e-12)


def test_schwefel_exact(benches):
    b = benches["schwefel"]
    g_max = 418.98288727243369  # max of z sin(sqrt|z|) on [-500, 500], at z = 420.968746...
    for t in (0.0, 133.0, 421.7):
        zt = _zt(t, -500, 500)
        by_hand = -(418.9829 * 4 - 3 * g_max - zt * np.sin(np.sqrt(abs(zt))))
        assert b.f_star(t) == pytest.approx(by_hand, abs=1e-9)
        np.testing.assert_allclose(-500 + 1000 * b.argmax(t), 420.968746, atol=1e-5)


def test_griewank_against_structure(benches):
    b = benches["griewank"]
    z1 = np.linspace(-600, 600, 1_200_001)
    for t in np.linspace(1.0, 599.0, 9):
        zt = _zt(t, -600, 600)
        ct = np.cos(zt / np.sqrt(6))
        if ct >= 0:
            expected = ct - zt**2 / 4000 - 1  # z_s = 0
        else:  # one coordinate moves (z_1), the others stay at 0: dense 1-D scan
            expected = np.max(ct * np.cos(z1) - (z1**2 + zt**2) / 4000 - 1)
        assert b.f_star(t) >= expected - 1e-9
        assert b.f_star(t) - expected < 1e-6


def test_eggholder_against_dense_grid(benches):
    b = benches["eggholder"]
    x = np.linspace(0, 1, 2_000_001)
    for t in (0.0, 77.7, 300.0, 455.5, 600.0):
        dense = b(x[:, None], t).max()
        assert b.f_star(t) >= dense - 1e-9
        assert b.f_star(t) - dense < 1e-2  # grid spacing 5e-4 in z


def test_hartmann3_against_dense_grid(benches):
    b = benches["hartmann3"]
    g = np.linspace(0, 1, 1001)
    X = np.stack(np.meshgrid(g, g, indexing="ij"), axis=-1).reshape(-1, 2)
    for t in (10.0, 250.0, 511.0):
        f = b(X, t)
        x0 = X[np.argmax(f)]
        res = minimize(
            lambda x, t=t: -b(x, t),
            x0,
            method="Nelder-Mead",
            options={"xatol": 1e-10, "fatol": 1e-14},
        )
        ref = max(f.max(), -res.fun) if np.all((res.x >= 0) & (res.x <= 1)) else f.max()
        assert b.f_star(t) == pytest.approx(ref, abs=1e-8)


def test_powell_convex_reference(benches):
    b = benches["powell"]
    for t in (0.0, 266.6, 600.0):
        zt = _zt(t, -4, 5)
        res = minimize(
            lambda q, zt=zt: float(b.raw(np.r_[q, zt])),
            np.zeros(3),
            method="Nelder-Mead",
            options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 40000},
        )
        assert b.f_star(t) == pytest.approx(-res.fun, abs=1e-6)
