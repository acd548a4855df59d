"""The exact GP with a prior mean (PE-GP-UCB's candidate priors): ``ExactGP(prior_mean=...)``.

One exact-GP arithmetic serves both: with a prior mean the GP conditions on the residuals
``y - m(X)``. Every posterior here is checked against dense numpy solves of the full covariance
to 1e-10 (no factor updates), after appends, removals, batch factorisations and new
hyperparameters."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tvbo.gp.exact import ExactGP
from tvbo.gp.kernels import Hyperparameters
from tvbo.gp.linalg import flops_trisolve
from tvbo.models.candidate_prior import CandidatePrior, PriorKernel
from tvbo.models.protocol import HasHyperparameters, HasPriorMean, Model
from tvbo.work import WorkCounter

HP = Hyperparameters(signal_var=0.7, lengthscale_space=0.3, lengthscale_time=2.0, noise_var=0.05)


def PriorMeanGP(kernel, hp, *, prior_mean=None, work=None):  # noqa: N802 - reads as a class
    """The candidate priors' model: ExactGP with a prior mean, unstandardised."""
    return ExactGP(kernel, hp, standardize=False, prior_mean=prior_mean, work=work)


def mean_fn(X):
    return 0.4 + np.sin(3.0 * X[:, 0]) - X[:, 1] ** 2


def dense(kernel, hp, X, T, y, Xs, t):
    """Independent posterior: dense solves of the full covariance, no factor updates."""
    Ts = np.full(len(Xs), float(t))
    if len(X) == 0:
        return mean_fn(Xs), kernel.variance(Xs, Ts, hp), 0.0
    K = kernel.matrix(X, T, X, T, hp) + hp.noise_var * np.eye(len(X))
    Ks = kernel.matrix(Xs, Ts, X, T, hp)
    r = y - mean_fn(X)
    mean = mean_fn(Xs) + Ks @ np.linalg.solve(K, r)
    var = kernel.variance(Xs, Ts, hp) - np.einsum("ij,ji->i", Ks, np.linalg.solve(K, Ks.T))
    _, logdet = np.linalg.slogdet(K)
    lml = -0.5 * r @ np.linalg.solve(K, r) - 0.5 * logdet - 0.5 * len(X) * math.log(2 * math.pi)
    return mean, var, lml


def check(gp, kernel, hp, Xs, t):
    pred = gp.predict(Xs, t)
    mean, var, lml = dense(kernel, hp, np.asarray(gp.X), np.asarray(gp.T), np.asarray(gp.y), Xs, t)
    np.testing.assert_allclose(pred.mean, mean, rtol=0, atol=1e-10)
    np.testing.assert_allclose(pred.var, np.maximum(var, 0), rtol=0, atol=1e-10)
    assert gp.log_marginal_likelihood() == pytest.approx(lml, abs=1e-10)
    if gp.n:
        L = np.asarray(gp.cholesky)
        K = kernel.matrix(gp.X, gp.T, gp.X, gp.T, hp) + hp.noise_var * np.eye(gp.n)
        np.testing.assert_allclose(L @ L.T, K, rtol=0, atol=1e-10)
        np.testing.assert_allclose(gp.alpha(), np.linalg.solve(K, gp.y - mean_fn(gp.X)),
                                   rtol=0, atol=1e-9)


@pytest.mark.parametrize("space", ["matern52", "rbf"])
def test_posterior_matches_dense_after_appends_and_removals(space):
    rng = np.random.default_rng(4)
    kernel = PriorKernel(space, epsilon=0.2)
    gp = PriorMeanGP(kernel, HP, prior_mean=mean_fn, work=WorkCounter())
    Xs = rng.uniform(size=(9, 2))
    check(gp, kernel, HP, Xs, 0.0)  # the prior itself before any data
    for k in range(14):
        gp.append(rng.uniform(size=2), 0.7 * k, float(rng.normal()))
        check(gp, kernel, HP, Xs, 0.7 * k + 1.0)
    for i in (0, 5, -1, 3, 0):  # front, middle, back
        gp.remove(i)
        check(gp, kernel, HP, Xs, 11.0)
    for k in range(3):  # appends after removals reuse the shrunken factor
        gp.append(rng.uniform(size=2), 12.0 + k, float(rng.normal()))
        check(gp, kernel, HP, Xs, 15.0)
    assert gp.n == 12


def test_set_data_and_fixed_hyperparameters():
    rng = np.random.default_rng(7)
    kernel = PriorKernel("matern32", epsilon=0.1)
    X, T, y = rng.uniform(size=(10, 2)), np.arange(10.0), rng.normal(size=10)
    incremental = PriorMeanGP(kernel, HP, prior_mean=mean_fn)
    for x, t, v in zip(X, T, y, strict=True):
        incremental.append(x, t, v)
    batch = PriorMeanGP(kernel, HP, prior_mean=mean_fn)
    batch.set_data(X, T, y)
    Xs = rng.uniform(size=(6, 2))
    a, b = incremental.predict(Xs, 10.0), batch.predict(Xs, 10.0)
    np.testing.assert_allclose(a.mean, b.mean, rtol=0, atol=1e-10)
    np.testing.assert_allclose(a.var, b.var, rtol=0, atol=1e-10)
    # fixed-hyperparameter mode: set once, no fit; the posterior is the new prior's
    new = Hyperparameters(signal_var=2.0, lengthscale_space=0.1, lengthscale_time=5.0,
                          noise_var=0.2)
    batch.set_hyperparameters(new)
    assert batch.hyperparameters == new
    check(batch, kernel, new, Xs, 10.0)
    empty = PriorMeanGP(kernel, HP, prior_mean=mean_fn)
    empty.set_hyperparameters(new)  # no data: nothing to factorise
    check(empty, kernel, new, Xs, 0.0)
    batch.set_data(np.empty((0, 2)), np.empty(0), np.empty(0))
    assert batch.n == 0
    check(batch, kernel, new, Xs, 0.0)


def test_empirical_kernel_uses_its_own_prior_variance():
    C = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.3], [0.1, 0.3, 0.5]])
    locs = np.array([[0.1, 0.2], [0.7, 0.4], [0.3, 0.9]])
    prior = CandidatePrior(space_kernel="empirical", covariance=C, locations=locs, mean=20.0,
                           epsilon=0.3, time_unit=10.0, noise_var=0.1)
    gp = prior.model()
    np.testing.assert_allclose(gp.predict(locs, 0.0).var, np.diag(C))
    np.testing.assert_allclose(gp.predict(locs, 0.0).mean, 20.0)
    gp.append(locs[0], 0.0, 21.0)
    gp.append(locs[2], 10.0, 19.0)
    pred = gp.predict(locs, 10.0)
    kernel, hp = prior.space_time_kernel(), prior.hyperparameters
    X, T, r = locs[[0, 2]], np.array([0.0, 10.0]), np.array([1.0, -1.0])
    K = kernel.matrix(X, T, X, T, hp) + 0.1 * np.eye(2)
    Ks = kernel.matrix(locs, np.full(3, 10.0), X, T, hp)
    np.testing.assert_allclose(pred.mean, 20.0 + Ks @ np.linalg.solve(K, r), atol=1e-10)
    want = np.diag(C) - np.einsum("ij,ji->i", Ks, np.linalg.solve(K, Ks.T))
    np.testing.assert_allclose(pred.var, want, atol=1e-10)


def test_work_is_counted_inside_and_capabilities():
    work = WorkCounter()
    gp = PriorMeanGP(PriorKernel("rbf"), HP, prior_mean=mean_fn, work=work)
    assert isinstance(gp, Model) and isinstance(gp, HasPriorMean)
    assert isinstance(gp, HasHyperparameters)
    rng = np.random.default_rng(0)
    for k in range(4):
        gp.append(rng.uniform(size=2), float(k), 1.0)
    counts = work.counts()[work.current_phase]
    # append to n = k: one call, k + 1 kernel entries, the row solve and alpha again
    assert counts["call"] == 4 and counts["kernel"] == 1 + 2 + 3 + 4
    assert counts["flop"] == sum(flops_trisolve(k) + 2 * k + 2 * flops_trisolve(k + 1)
                                 for k in range(4))
    gp.predict(rng.uniform(size=(5, 2)), 4.0)
    counts = work.counts()[work.current_phase]
    assert counts["call"] == 5 and counts["kernel"] == 10 + 5 * 4
    gp.remove(1)
    assert work.counts()[work.current_phase]["call"] == 6
    zero = PriorMeanGP(PriorKernel("rbf"), HP)  # no mean given: the zero mean
    np.testing.assert_array_equal(zero.prior_mean(np.ones((3, 2))), np.zeros(3))
    with pytest.raises(ValueError, match="grad=True"):
        gp.predict(np.ones((1, 2)), 0.0, grad=True)


def test_a_zero_prior_mean_is_bit_identical_to_none():
    """The prior mean only shifts the targets and the mean: with m = 0 every number is the plain
    ExactGP's, bit for bit (so the other algorithms' arithmetic cannot move)."""
    rng = np.random.default_rng(11)
    kernel = PriorKernel("matern52", epsilon=0.1)
    plain = ExactGP(kernel, HP, standardize=False)
    zero = ExactGP(kernel, HP, standardize=False, prior_mean=lambda X: np.zeros(len(X)))
    for k in range(8):
        x, y = rng.uniform(size=2), float(rng.normal())
        plain.append(x, float(k), y)
        zero.append(x, float(k), y)
    plain.remove(2)
    zero.remove(2)
    Xs = rng.uniform(size=(5, 2))
    a, b = plain.predict(Xs, 9.0), zero.predict(Xs, 9.0)
    assert a.mean.tobytes() == b.mean.tobytes() and a.var.tobytes() == b.var.tobytes()
    assert plain.log_marginal_likelihood() == zero.log_marginal_likelihood()
    np.testing.assert_array_equal(plain.prior_mean(Xs), np.zeros(5))


def test_standardised_residuals_match_dense():
    """``standardize=True`` with a prior mean standardises the residuals ``y - m(X)``."""
    rng = np.random.default_rng(12)
    kernel = PriorKernel("rbf", epsilon=0.0)
    gp = ExactGP(kernel, HP, standardize=True, prior_mean=mean_fn)
    X, y = rng.uniform(size=(9, 2)), 3.0 + 2.0 * rng.normal(size=9)
    for x, v in zip(X, y, strict=True):
        gp.append(x, 0.0, v)
    r = y - mean_fn(X)
    mu, sd = r.mean(), r.std()
    K = kernel.matrix(X, np.zeros(9), X, np.zeros(9), HP) + HP.noise_var * np.eye(9)
    Xs = rng.uniform(size=(4, 2))
    Ks = kernel.matrix(Xs, np.zeros(4), X, np.zeros(9), HP)
    want = mean_fn(Xs) + mu + sd * (Ks @ np.linalg.solve(K, (r - mu) / sd))
    var = sd**2 * (HP.signal_var - np.einsum("ij,ji->i", Ks, np.linalg.solve(K, Ks.T)))
    pred = gp.predict(Xs, 0.0)
    np.testing.assert_allclose(pred.mean, want, rtol=0, atol=1e-10)
    np.testing.assert_allclose(pred.var, var, rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="prior mean"):
        gp.predict_space_time(Xs, np.zeros(4))
