"""W-GP-UCB's weighted GP (Deng et al. 2022): against the explicit feature-space construction (a
finite feature map whose inner product IS the kernel), gradients against finite differences, the
exact GP with per-point noise lambda / w plus the paper's width, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from tvbo.algorithms.weighted.weighted_gp import WeightedGP
from tvbo.gp.kernels import Hyperparameters, SeparableKernel
from tvbo.models import Model


class CosineFeatures:
    """phi(x) = sqrt(1/D) [cos(w_j . x), sin(w_j . x)]_j: k(x, x') = (1/D) sum cos(w_j . (x - x')),
    stationary with k(x, x) = 1, and exactly the inner product of a 2D-dimensional feature map.
    It has the interface of a spatial SeparableKernel (signal_var must be 1)."""

    has_time = False

    def __init__(self, d: int, n_freq: int, seed: int = 0) -> None:
        self.W = np.random.default_rng(seed).normal(scale=4.0, size=(n_freq, d))
        self.D = n_freq

    def features(self, X: np.ndarray) -> np.ndarray:
        Z = np.asarray(X, float) @ self.W.T
        return np.hstack([np.cos(Z), np.sin(Z)]) / np.sqrt(self.D)

    def matrix(self, X1, T1, X2, T2, hp):
        return self.features(X1) @ self.features(X2).T

    def grad_x(self, X1, T1, X2, T2, hp):
        Z = np.asarray(X1, float) @ self.W.T  # (m, D)
        P2 = self.features(X2)  # (n, 2D)
        dphi = np.concatenate(
            [-np.sin(Z)[:, :, None] * self.W[None], np.cos(Z)[:, :, None] * self.W[None]], axis=1
        ) / np.sqrt(self.D)
        return np.einsum("mfd,nf->mnd", dphi, P2)


UNIT = Hyperparameters(1.0, 1.0, None, 0.01)  # the cosine kernel's k(x, x) = 1


def _weighted(kernel, X, y, w, lam) -> WeightedGP:
    model = WeightedGP(kernel, UNIT, standardize=False)
    model.set_data(X, None, y)
    model.condition(w, lam)
    return model


def _case(n=6, d=1, gamma=0.7, lam=0.3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = rng.normal(size=n)
    w = gamma ** np.arange(n - 1, -1, -1.0)  # observation s at step s; newest weight 1
    return X, y, w, lam


def test_weighted_posterior_equals_the_feature_space_construction():
    kernel = CosineFeatures(d=1, n_freq=8)
    X, y, w, lam = _case()
    model = _weighted(kernel, X, y, w, lam)
    assert isinstance(model, Model)
    Xq = np.linspace(-0.2, 1.2, 9)[:, None]
    mean, width2, _, _ = model.width(Xq)
    # explicit: V = Phi^T W Phi + lam I, V~ = Phi^T W^2 Phi + lam I
    Phi, phi = kernel.features(X), kernel.features(Xq)
    p = Phi.shape[1]
    V = Phi.T @ (w[:, None] * Phi) + lam * np.eye(p)
    Vt = Phi.T @ ((w**2)[:, None] * Phi) + lam * np.eye(p)
    theta = np.linalg.solve(V, Phi.T @ (w * y))
    Vinv_phi = np.linalg.solve(V, phi.T)
    np.testing.assert_allclose(mean, phi @ theta, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        width2, np.einsum("ij,ij->j", Vinv_phi, Vt @ Vinv_phi), rtol=1e-8, atol=1e-12
    )


def test_weighted_gradients_match_finite_differences():
    kernel = CosineFeatures(d=2, n_freq=10, seed=3)
    X, y, w, lam = _case(n=7, d=2, gamma=0.8, lam=0.1, seed=4)
    model = _weighted(kernel, X, y, w, lam)
    Xq = np.random.default_rng(5).uniform(size=(5, 2))
    _, _, dmean, dwidth2 = model.width(Xq, grad=True)
    h = 1e-6
    for j in range(2):
        E = np.zeros(2)
        E[j] = h
        mp, wp, _, _ = model.width(Xq + E)
        mm, wm, _, _ = model.width(Xq - E)
        np.testing.assert_allclose(dmean[:, j], (mp - mm) / (2 * h), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(dwidth2[:, j], (wp - wm) / (2 * h), rtol=1e-5, atol=1e-7)


def test_regression_rejects_bad_weights_and_lambda():
    k = CosineFeatures(1, 3)
    X, y = np.zeros((2, 1)), np.zeros(2)
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        _weighted(k, X, y, np.array([1.0, 0.0]), 0.1)
    with pytest.raises(ValueError, match="regularizer"):
        _weighted(k, X, y, np.ones(2), 0.0)
    with pytest.raises(ValueError, match="one entry per observation"):
        _weighted(k, X, y, np.ones(3), 0.1)
    with pytest.raises(ValueError, match="not conditioned"):
        WeightedGP(k, UNIT).width(X)
    with pytest.raises(ValueError, match="spatial"):
        WeightedGP(SeparableKernel(), UNIT)


def test_the_weighted_gp_is_the_exact_gp_with_per_point_noise_lambda_over_w():
    """Its mean and factor are the exact GP's with noise lambda / w; its variance adds the
    paper's a^T (lambda - lambda/w) a to the GP's, checked densely after appends and removals."""
    kern = SeparableKernel("matern52", None)
    hp = Hyperparameters(1.3, 0.3, None, 0.05)
    X, y, w, lam = _case(n=9, d=2, gamma=0.8, lam=0.05, seed=8)
    model = WeightedGP(kern, hp)
    for xi, yi in zip(X, y, strict=True):
        model.append(xi, None, yi)
    model.remove(2)
    keep = np.delete(np.arange(9), 2)
    Xk, yk, wk = X[keep], y[keep], w[keep]
    model.condition(wk, lam)
    noise = lam / wk
    np.testing.assert_allclose(model.gp.point_noise, noise, rtol=1e-15)
    Xq = np.random.default_rng(9).random((6, 2))
    pred = model.predict(Xq)
    mu, sd = yk.mean(), yk.std()
    K = kern.matrix(Xk, None, Xk, None, hp)
    kq = kern.matrix(Xk, None, Xq, None, hp)
    a = np.linalg.solve(K + np.diag(noise), kq)
    mse = 1.3 - 2 * np.sum(a * kq, 0) + np.sum(a * ((K + lam * np.eye(8)) @ a), 0)
    np.testing.assert_allclose(pred.mean, mu + sd * (a.T @ ((yk - mu) / sd)), atol=1e-10)
    np.testing.assert_allclose(pred.var, mse * sd**2, atol=1e-10)
    gp_var = model.gp.predict(Xq, None).var
    np.testing.assert_allclose(
        pred.var, gp_var + sd**2 * np.sum(a * ((lam - noise)[:, None] * a), 0), atol=1e-10
    )
