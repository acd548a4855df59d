"""ExactGP with per-point noise (tvbo.models.HasPointNoise): the posterior against a dense solve of
K + diag(noise), after appends and removals; the homoscedastic path untouched; bad input."""

from __future__ import annotations

import numpy as np
import pytest

from tvbo.gp.exact import ExactGP
from tvbo.gp.kernels import Hyperparameters, SeparableKernel
from tvbo.models import HasPointNoise, Model
from tvbo.work import WorkCounter

HP = Hyperparameters(signal_var=1.3, lengthscale_space=0.35, lengthscale_time=60.0, noise_var=0.02)


def _data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    T = np.sort(rng.random(n) * 300.0)
    y = 4.0 + 2.0 * np.sin(4 * X[:, 0]) * np.cos(T / 80.0) + 0.1 * rng.standard_normal(n)
    noise = rng.uniform(0.005, 0.5, size=n)
    return X, T, y, noise


def _dense(kern, hp, X, T, y, noise, Xs, ts):
    """mean, var (original units), information gain by numpy solve of K + diag(noise)."""
    mu, sd = y.mean(), y.std()
    C = kern.matrix(X, T, X, T, hp) + np.diag(noise)
    Ks = kern.matrix(Xs, ts, X, T, hp)
    mean = Ks @ np.linalg.solve(C, (y - mu) / sd) * sd + mu
    var = (hp.signal_var - np.einsum("ij,ji->i", Ks, np.linalg.solve(C, Ks.T))) * sd**2
    gain = 0.5 * (np.linalg.slogdet(C)[1] - np.sum(np.log(noise)))
    return mean, var, gain


def _check(gp, X, T, y, noise, seed=3):
    rng = np.random.default_rng(seed)
    Xs = np.vstack([rng.random((6, 2)), X[:2]])
    ts = np.concatenate([rng.random(6) * 300.0, T[:2]])
    mean, var, gain = _dense(gp.kernel, gp.hyperparameters, X, T, y, noise, Xs, ts)
    pred = gp.predict(Xs, ts)
    np.testing.assert_allclose(pred.mean, mean, rtol=0, atol=1e-10)
    np.testing.assert_allclose(pred.var, var, rtol=0, atol=1e-10)
    np.testing.assert_allclose(gp.information_gain(), gain, rtol=1e-12)
    np.testing.assert_allclose(gp.point_noise, noise, rtol=0, atol=0)


def test_the_exact_gp_has_per_point_noise():
    gp = ExactGP(SeparableKernel(), HP)
    assert isinstance(gp, Model) and isinstance(gp, HasPointNoise)


def test_point_noise_posterior_matches_a_dense_solve_after_appends_and_removals():
    X, T, y, noise = _data(25)
    gp = ExactGP(SeparableKernel(), HP)
    gp.set_data(X[:12], T[:12], y[:12], noise=noise[:12])
    _check(gp, X[:12], T[:12], y[:12], noise[:12])
    for i in range(12, 25):  # O(n^2) appends, each with its own noise
        gp.append_with_noise(X[i], T[i], y[i], noise[i])
    _check(gp, X, T, y, noise)
    keep = np.ones(25, bool)
    for i in (0, 7, 20, -1):  # O(n^2) removals: front, middle, back
        idx = np.flatnonzero(keep)[i]
        gp.remove(i)
        keep[idx] = False
        _check(gp, X[keep], T[keep], y[keep], noise[keep])
    gp.append(X[0], T[0], y[0])  # a plain append gets noise_var
    Xk, Tk, yk = (np.concatenate([a[keep], a[:1]]) for a in (X, T, y))
    nk = np.append(noise[keep], HP.noise_var)
    _check(gp, Xk, Tk, yk, nk)
    gp.set_point_noise(nk * 2.0)  # every noise changes: one refactorisation
    _check(gp, Xk, Tk, yk, nk * 2.0)
    hp2 = Hyperparameters(0.7, 0.2, 30.0, 0.05)
    gp.set_hyperparameters(hp2)  # keeps the per-point noise
    _check(gp, Xk, Tk, yk, nk * 2.0)


def test_point_noise_gradients_match_finite_differences():
    X, T, y, noise = _data(10, seed=1)
    gp = ExactGP(SeparableKernel(), HP)
    gp.set_data(X, T, y, noise=noise)
    Xs = np.random.default_rng(2).uniform(0.1, 0.9, size=(4, 2))
    pred = gp.predict(Xs, 100.0, grad=True)
    h = 1e-6
    for j in range(2):
        e = np.zeros(2)
        e[j] = h
        up, dn = gp.predict(Xs + e, 100.0), gp.predict(Xs - e, 100.0)
        np.testing.assert_allclose(pred.dmean[:, j], (up.mean - dn.mean) / (2 * h), atol=1e-6)
        np.testing.assert_allclose(pred.dvar[:, j], (up.var - dn.var) / (2 * h), atol=1e-6)


def test_homoscedastic_append_turns_into_point_noise_consistently():
    X, T, y, noise = _data(8, seed=4)
    gp = ExactGP(SeparableKernel(), HP)
    gp.set_data(X[:7], T[:7], y[:7])
    assert not gp.has_point_noise
    gp.append_with_noise(X[7], T[7], y[7], 0.3)
    assert gp.has_point_noise
    _check(gp, X, T, y, np.append(np.full(7, HP.noise_var), 0.3))


def test_equal_point_noise_gives_the_homoscedastic_posterior():
    X, T, y, _ = _data(15, seed=5)
    a, b = ExactGP(SeparableKernel(), HP), ExactGP(SeparableKernel(), HP)
    a.set_data(X, T, y)
    b.set_data(X, T, y, noise=np.full(15, HP.noise_var))
    Xs = np.random.default_rng(0).random((5, 2))
    pa, pb = a.predict(Xs, 50.0, grad=True), b.predict(Xs, 50.0, grad=True)
    for field in ("mean", "var", "dmean", "dvar"):
        np.testing.assert_allclose(getattr(pa, field), getattr(pb, field), rtol=1e-14, atol=1e-15)
    assert a.log_marginal_likelihood() == b.log_marginal_likelihood()


def test_fixed_standardisation_and_cached_kernel_matrix():
    X, T, y, noise = _data(9, seed=6)
    kern = SeparableKernel()
    K = kern.matrix(X, T, X, T, HP)
    work = WorkCounter()
    gp = ExactGP(kern, HP, work=work)
    gp.set_standardization(1.5, 2.0)
    gp.set_data(X, T, y, noise=noise, kernel_matrix=K)
    assert work.counts()["update"].get("kernel", 0.0) == 0.0  # the cached K is not re-charged
    assert (gp.y_mean, gp.y_std) == (1.5, 2.0)
    C = K + np.diag(noise)
    Xs = X[:3] + 0.01
    ks = kern.matrix(Xs, T[:3], X, T, HP)
    mean = 1.5 + 2.0 * ks @ np.linalg.solve(C, (y - 1.5) / 2.0)
    np.testing.assert_allclose(gp.predict(Xs, T[:3]).mean, mean, atol=1e-10)
    P = gp.prior_covariance(X[:4], T[:4])
    np.testing.assert_allclose(P, K[:4, :4], rtol=0, atol=0)
    assert work.counts()["update"]["kernel"] == 16.0 + 3 * 9  # the DPP-style matrix + predict


@pytest.mark.parametrize(
    "noise, message",
    [
        (np.ones(3), "one variance per observation"),
        (np.array([0.1, 0.0, 0.1, 0.1]), "finite and > 0"),
        (np.array([0.1, np.nan, 0.1, 0.1]), "finite and > 0"),
    ],
)
def test_bad_point_noise_is_rejected(noise, message):
    X, T, y, _ = _data(4)
    gp = ExactGP(SeparableKernel(), HP)
    with pytest.raises(ValueError, match=message):
        gp.set_data(X, T, y, noise=noise)
    gp.set_data(X, T, y)
    with pytest.raises(ValueError, match="noise_var must be a finite number > 0"):
        gp.append_with_noise(X[0], T[0], y[0], -1.0)
    with pytest.raises(ValueError, match="kernel_matrix must have shape"):
        gp.set_data(X, T, y, kernel_matrix=np.eye(3))
