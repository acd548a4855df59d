"""Closed-form convolutions against brute-force numerical integration (scipy.integrate)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from tvbo.gp.convolutions import (
    SUPPORTED,
    space_convolution,
    space_convolution_amplitude,
    time_convolution,
)


def kernel(name: str, r: float) -> float:
    """The four correlations, written out independently of the module under test."""
    r = abs(r)
    if name == "matern12":
        return math.exp(-r)
    if name == "matern32":
        return (1 + math.sqrt(3) * r) * math.exp(-math.sqrt(3) * r)
    if name == "matern52":
        return (1 + math.sqrt(5) * r + 5 * r * r / 3) * math.exp(-math.sqrt(5) * r)
    return math.exp(-r * r / 2)


def quad_time(name, ell, ti, tj, t0):
    """integral_{t0}^{inf} k(t - ti) k(t - tj) dt, split at the kinks after t0."""
    f = lambda t: kernel(name, (t - ti) / ell) * kernel(name, (t - tj) / ell)  # noqa: E731
    cuts = [t0] + sorted(p for p in {ti, tj} if p > t0) + [np.inf]
    return sum(
        integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-12, limit=200)[0]
        for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)
    )


@pytest.mark.parametrize("name", SUPPORTED)
@pytest.mark.parametrize("ell", [0.3, 2.5, 40.0])
def test_time_convolution_matches_quadrature_past_points(name, ell):
    t0 = 10.0
    # (t0 - ti, t0 - tj) in lengthscale units: recent, old, mixed, at t0
    for di, dj in [(0.04, 0.04), (0.4, 0.12), (3.2, 0.2), (0.0, 0.8), (0.0, 0.0), (1.0, 2.8)]:
        ti, tj = t0 - di * ell, t0 - dj * ell
        exact = quad_time(name, ell, ti, tj, t0)
        got = float(time_convolution(name, ell, ti, tj, t0))
        assert got == pytest.approx(exact, rel=1e-6), (ti, tj)


@pytest.mark.parametrize("name", SUPPORTED)
def test_time_convolution_handles_points_after_t0(name):
    ell, t0 = 0.7, 1.0
    for ti, tj in [(1.3, 1.3), (0.4, 1.6), (1.2, 2.9), (2.0, 0.9), (0.99, 1.01)]:
        exact = quad_time(name, ell, ti, tj, t0)
        assert float(time_convolution(name, ell, ti, tj, t0)) == pytest.approx(exact, rel=1e-6)


@pytest.mark.parametrize("name", SUPPORTED)
def test_time_convolution_is_vectorised_and_symmetric(name):
    rng = np.random.default_rng(3)
    t = np.sort(rng.uniform(0.0, 5.0, 7))
    mat = time_convolution(name, 1.3, t[:, None], t[None, :], 5.0)
    assert mat.shape == (7, 7)
    np.testing.assert_allclose(mat, mat.T, rtol=1e-14)
    for i, j in [(0, 6), (3, 3), (5, 2)]:
        assert mat[i, j] == pytest.approx(quad_time(name, 1.3, t[i], t[j], 5.0), rel=1e-6)
    # a Gram matrix of functions in L2([t0, inf)): positive semi-definite
    assert np.linalg.eigvalsh(mat).min() > -1e-12 * np.abs(mat).max()


def test_rbf_time_convolution_uses_the_exact_exponent():
    # spec_baselines §7.4: quadrature 0.0012641 (4 l^2); the paper's printed 2 l^2 gives 0.0006313
    got = float(time_convolution("rbf", 0.3, 0.7, 0.2, 1.0))
    assert got == pytest.approx(0.0012641, rel=1e-4)


@pytest.mark.parametrize("name", SUPPORTED)
@pytest.mark.parametrize("ell", [0.05, 0.3, 1.7])
def test_space_convolution_1d_matches_quadrature(name, ell):
    for a, b in [(0.2, 0.2), (0.1, 0.6), (0.9, 0.0), (0.0, 3 * ell)]:
        f = lambda x, a=a, b=b: kernel(name, (x - a) / ell) * kernel(name, (x - b) / ell)  # noqa: E731
        lo, hi = min(a, b), max(a, b)
        exact = sum(
            integrate.quad(f, p, q, epsabs=0, epsrel=1e-12, limit=200)[0]
            for p, q in [(-np.inf, lo), (lo, hi), (hi, np.inf)]
        )
        got = float(space_convolution(name, ell, np.array([a - b]), 1))
        assert got == pytest.approx(exact, rel=1e-6), (a, b)


@pytest.mark.parametrize("name", SUPPORTED)
@pytest.mark.parametrize("ell", [0.2, 0.7])
def test_space_convolution_2d_matches_polar_quadrature(name, ell):
    a, b = np.array([0.1, 0.3]), np.array([0.5, -0.2])
    diff = b - a

    def f(rho, theta):  # polar coordinates centred at a: x = a + rho (cos, sin)
        r_b = math.hypot(rho * math.cos(theta) - diff[0], rho * math.sin(theta) - diff[1])
        return kernel(name, rho / ell) * kernel(name, r_b / ell) * rho

    theta_b = math.atan2(diff[1], diff[0])
    exact = sum(
        integrate.dblquad(f, lo, lo + math.pi, 0, np.inf, epsabs=0, epsrel=1e-9)[0]
        for lo in (theta_b - math.pi, theta_b)
    )
    assert float(space_convolution(name, ell, a - b, 2)) == pytest.approx(exact, rel=1e-6)


@pytest.mark.parametrize("name", SUPPORTED)
@pytest.mark.parametrize("d", [1, 2, 3, 5])
def test_space_amplitude_is_the_radial_integral_of_k_squared(name, d):
    ell = 0.4
    surface = 2 * math.pi ** (d / 2) / math.gamma(d / 2)  # area of the unit sphere in R^d
    radial = integrate.quad(
        lambda r: kernel(name, r / ell) ** 2 * surface * r ** (d - 1), 0, np.inf, epsrel=1e-12
    )[0]
    assert space_convolution_amplitude(name, ell, d) == pytest.approx(radial, rel=1e-8)
    assert float(space_convolution(name, ell, np.zeros(d), d)) == pytest.approx(radial, rel=1e-8)


@pytest.mark.parametrize("name", SUPPORTED)
def test_space_convolution_decays_and_stays_finite_far_away(name):
    d = 3
    r = np.array([0.0, 1e-12, 1e-3, 1.0, 50.0, 1e4])
    diff = np.stack([r, np.zeros_like(r), np.zeros_like(r)], axis=-1)
    vals = space_convolution(name, 0.1, diff, d)
    assert np.all(np.isfinite(vals)) and np.all(vals >= 0)
    assert np.all(np.diff(vals) <= 0)
    assert vals[-1] == 0.0 or vals[-1] < 1e-300


def test_invalid_inputs_are_rejected_with_the_valid_choices():
    with pytest.raises(ValueError, match="matern12, matern32, matern52, rbf"):
        time_convolution("matern72", 1.0, 0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="valid choices"):
        space_convolution("periodic", 1.0, np.zeros(2), 2)
    with pytest.raises(ValueError, match="lengthscale"):
        space_convolution("rbf", -1.0, np.zeros(2), 2)
    with pytest.raises(ValueError, match="shape"):
        space_convolution("rbf", 1.0, np.zeros(3), 2)
    with pytest.raises(ValueError, match="dimension"):
        space_convolution_amplitude("rbf", 1.0, 0)
