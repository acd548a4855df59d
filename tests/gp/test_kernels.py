"""Kernels: closed forms vs the general Matérn formula, derivatives vs finite differences."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gamma, kv

from tvbo.gp.kernels import (
    CORRELATIONS,
    HyperparameterBounds,
    Hyperparameters,
    SeparableKernel,
    correlation,
)

NU = {"matern12": 0.5, "matern32": 1.5, "matern52": 2.5}


def matern_bessel(nu: float, r: np.ndarray) -> np.ndarray:
    """General Matérn correlation via the modified Bessel function (independent of kernels.py)."""
    z = np.sqrt(2.0 * nu) * np.asarray(r, dtype=float)
    out = np.ones_like(z)
    pos = z > 0
    out[pos] = 2.0 ** (1.0 - nu) / gamma(nu) * z[pos] ** nu * kv(nu, z[pos])
    return out


def reference(name: str, r: np.ndarray) -> np.ndarray:
    if name == "rbf":
        return np.exp(-0.5 * np.asarray(r) ** 2)
    return matern_bessel(NU[name], r)


R = np.array([0.0, 1e-3, 0.1, 0.5, 1.0, 1.7, 3.0, 7.5])


@pytest.mark.parametrize("name", CORRELATIONS)
def test_value_matches_independent_closed_form(name: str) -> None:
    c = correlation(name)
    assert c.name == name
    np.testing.assert_allclose(c.value(R), reference(name, R), rtol=1e-12, atol=1e-15)
    assert c.value(np.array([0.0]))[0] == 1.0


def test_known_points() -> None:
    s3, s5 = math.sqrt(3), math.sqrt(5)
    assert correlation("matern12").value(np.array(2.0)) == pytest.approx(math.exp(-2))
    assert correlation("matern32").value(np.array(1.0)) == pytest.approx((1 + s3) * math.exp(-s3))
    assert correlation("matern52").value(np.array(1.0)) == pytest.approx(
        (1 + s5 + 5 / 3) * math.exp(-s5)
    )
    assert correlation("rbf").value(np.array(2.0)) == pytest.approx(math.exp(-2))


@pytest.mark.parametrize("name", CORRELATIONS)
def test_values_in_unit_interval_and_decreasing(name: str) -> None:
    r = np.linspace(0, 20, 2001)
    v = correlation(name).value(r)
    assert np.all((v >= 0) & (v <= 1))
    assert np.all(np.diff(v) <= 0)


@pytest.mark.parametrize("name", CORRELATIONS)
def test_d_dr_matches_finite_differences(name: str) -> None:
    c = correlation(name)
    r = R[R > 0.01]
    h = 1e-6
    fd = (reference(name, r + h) - reference(name, r - h)) / (2 * h)
    np.testing.assert_allclose(c.d_dr(r), fd, rtol=1e-6, atol=1e-9)
    # d_dr_over_r is the same quantity divided by r, in a form that is finite at 0
    np.testing.assert_allclose(c.d_dr_over_r(r), c.d_dr(r) / r, rtol=1e-12)
    assert np.all(np.isfinite(c.d_dr_over_r(np.array([0.0]))))


def test_derivative_at_zero() -> None:
    zero = np.array([0.0])
    # Matérn-1/2 has a cusp: the one-sided (right) derivative is -1
    h = 1e-7
    right = (reference("matern12", np.array([h])) - 1.0) / h
    assert correlation("matern12").d_dr(zero)[0] == pytest.approx(right[0], rel=1e-6)
    assert correlation("matern12").d_dr(zero)[0] == -1.0
    for name in ("matern32", "matern52", "rbf"):
        assert correlation(name).d_dr(zero)[0] == 0.0


def test_unknown_correlation_lists_valid_names() -> None:
    with pytest.raises(ValueError, match="matern12, matern32, matern52, rbf"):
        correlation("matern72")
    with pytest.raises(ValueError, match="unknown correlation"):
        SeparableKernel(space="gauss")


def test_hyperparameters_validation_and_dict() -> None:
    hp = Hyperparameters(1.5, 0.2, None, 0.01)
    assert hp.as_dict() == {"signal_var": 1.5, "lengthscale_space": 0.2, "noise_var": 0.01}
    assert Hyperparameters(1, 0.2, 30.0, 0).as_dict()["lengthscale_time"] == 30.0
    with pytest.raises(ValueError, match="lengthscale_space"):
        Hyperparameters(1.0, -0.2, 10.0, 0.1)
    with pytest.raises(ValueError, match="noise_var"):
        Hyperparameters(1.0, 0.2, 10.0, -1e-3)
    with pytest.raises(ValueError, match="signal_var"):
        Hyperparameters(float("nan"), 0.2, 10.0, 0.1)


def test_bounds_validation_names_field() -> None:
    b = HyperparameterBounds()
    for name in ("signal_var", "lengthscale_space", "lengthscale_time", "noise_var"):
        lo, hi = getattr(b, name)
        assert 0 < lo <= hi
    with pytest.raises(ValueError, match="lengthscale_time"):
        HyperparameterBounds(lengthscale_time=(0.0, 10.0))
    with pytest.raises(ValueError, match="noise_var"):
        HyperparameterBounds(noise_var=(1.0, 0.1))
    with pytest.raises(ValueError, match="signal_var"):
        HyperparameterBounds(signal_var=(1.0,))


def entrywise_kernel(kern: SeparableKernel, X1, T1, X2, T2, hp) -> np.ndarray:
    """Entry-by-entry kernel from the reference formulas (no vectorised code from kernels.py)."""
    out = np.empty((len(X1), len(X2)))
    for i in range(len(X1)):
        for j in range(len(X2)):
            rs = math.dist(X1[i], X2[j]) / hp.lengthscale_space
            v = hp.signal_var * reference(kern.space.name, np.array([rs]))[0]
            if kern.has_time:
                rt = abs(T1[i] - T2[j]) / hp.lengthscale_time
                v *= reference(kern.time.name, np.array([rt]))[0]
            out[i, j] = v
    return out


@pytest.mark.parametrize("space", CORRELATIONS)
@pytest.mark.parametrize("time", [*CORRELATIONS, None])
def test_matrix_entries_and_psd(space: str, time: str | None) -> None:
    rng = np.random.default_rng(1)
    kern = SeparableKernel(space, time)
    hp = Hyperparameters(2.0, 0.3, 50.0 if time else None, 0.1)
    X = rng.random((40, 3))
    T = rng.random(40) * 200
    K = kern.matrix(X, T, X, T, hp)
    np.testing.assert_allclose(K, entrywise_kernel(kern, X, T, X, T, hp), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(K, K.T, atol=1e-15)
    np.testing.assert_allclose(np.diag(K), 2.0)
    assert np.linalg.eigvalsh(K).min() > -1e-10 * 2.0 * 40


def test_spatial_only_kernel_ignores_time() -> None:
    rng = np.random.default_rng(2)
    kern = SeparableKernel("matern52", None)
    assert not kern.has_time and kern.time is None
    hp = Hyperparameters(1.0, 0.4, None, 0.1)
    X1, X2 = rng.random((5, 2)), rng.random((7, 2))
    K = kern.matrix(X1, None, X2, None, hp)
    np.testing.assert_allclose(K, kern.matrix(X1, rng.random(5), X2, rng.random(7), hp))
    with pytest.raises(ValueError, match="lengthscale_time"):
        SeparableKernel().matrix(X1, np.zeros(5), X2, np.zeros(7), hp)


@pytest.mark.parametrize("space", CORRELATIONS)
def test_grad_x_matches_finite_differences(space: str) -> None:
    rng = np.random.default_rng(3)
    kern = SeparableKernel(space, "matern32")
    hp = Hyperparameters(1.7, 0.35, 40.0, 0.1)
    X1, T1 = rng.random((4, 3)), rng.random(4) * 100
    X2, T2 = rng.random((6, 3)), rng.random(6) * 100
    G = kern.grad_x(X1, T1, X2, T2, hp)
    assert G.shape == (4, 6, 3)
    h = 1e-6
    for a in range(3):
        e = np.zeros(3)
        e[a] = h
        fd = (
            entrywise_kernel(kern, X1 + e, T1, X2, T2, hp)
            - entrywise_kernel(kern, X1 - e, T1, X2, T2, hp)
        ) / (2 * h)
        np.testing.assert_allclose(G[:, :, a], fd, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("space", CORRELATIONS)
def test_grad_x_at_coincident_points_is_finite(space: str) -> None:
    kern = SeparableKernel(space, None)
    hp = Hyperparameters(1.0, 0.2, None, 0.1)
    X = np.array([[0.3, 0.6], [0.3, 0.6]])
    G = kern.grad_x(X, None, X, None, hp)
    assert np.all(np.isfinite(G))
    # smooth kernels have a stationary point at r = 0; Matérn-1/2 returns the zero subgradient
    np.testing.assert_array_equal(G, 0.0)


@pytest.mark.parametrize("time", ["matern12", "matern32", "matern52", "rbf"])
def test_scalar_query_time_is_the_full_matrix_bit_for_bit(time: str) -> None:
    """A scalar T1 (every row at one time) broadcasts a k_T row: the same floats as the (m, n)
    k_T of an explicit vector of equal times, for K and the gradient factor G."""
    rng = np.random.default_rng(5)
    kern = SeparableKernel("matern52", time)
    hp = Hyperparameters(1.7, 0.3, 45.0, 0.01)
    X1, X2 = rng.random((7, 3)), rng.random((11, 3))
    T2 = np.sort(rng.random(11) * 300.0)
    full = np.full(7, 250.5)
    np.testing.assert_array_equal(kern.matrix(X1, 250.5, X2, T2, hp),
                                  kern.matrix(X1, full, X2, T2, hp))
    K_row, G_row = kern.matrix_and_grad_factor(X1, 250.5, X2, T2, hp)
    K_full, G_full = kern.matrix_and_grad_factor(X1, full, X2, T2, hp)
    np.testing.assert_array_equal(K_row, K_full)
    np.testing.assert_array_equal(G_row, G_full)
    assert K_row.shape == G_row.shape == (7, 11)
