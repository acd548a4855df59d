"""TV-GP-UCB's back-to-prior surrogate: the kernel of Bogunovic et al. (2016), its posterior
at the upcoming step (eqs. (7)-(8), checked by a dense solve), the mapping from clock time to
step, maximum-likelihood eps (recovery on data drawn from the Markov model) and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tvbo.algorithms as algorithms
from tvbo.algorithms import ProblemInfo
from tvbo.algorithms.gpucb.tvgp import (
    TVGPSurrogate,
    eps_lengthscale_bounds,
    eps_to_lengthscale,
    lengthscale_to_eps,
)
from tvbo.work import WorkCounter

CHEAP_UCB = {"kind": "ucb", "n_restarts": 2, "raw_samples": 64}


def matern52(r: np.ndarray) -> np.ndarray:
    s = math.sqrt(5.0) * r
    return (1.0 + s + s * s / 3.0) * np.exp(-s)


def make_tv(d: int = 2, clock: float = 0.0, **surrogate):
    alg = algorithms.make("tv-gp-ucb", surrogate=surrogate, acquisition=CHEAP_UCB)
    alg.setup(ProblemInfo(d=d), np.random.default_rng(0), WorkCounter(), clock=lambda: clock)
    return alg


def bogunovic_posterior(X, y, steps, x_new, s, eps, hp):
    """Eqs. (7)-(8) on standardised y, written out with (1 - eps)^{lag/2} and a dense solve."""
    mean, std = y.mean(), y.std()
    ys = (y - mean) / std
    dist = np.linalg.norm(X[:, None, :] - X[None, :, :], axis=-1)
    D = (1.0 - eps) ** (np.abs(steps[:, None] - steps[None, :]) / 2.0)
    K = hp["signal_var"] * matern52(dist / hp["lengthscale_space"]) * D
    A = K + hp["noise_var"] * np.eye(len(y))
    k_new = (
        hp["signal_var"]
        * matern52(np.linalg.norm(X - x_new, axis=1) / hp["lengthscale_space"])
        * (1.0 - eps) ** (np.abs(s - steps) / 2.0)
    )
    mu = k_new @ np.linalg.solve(A, ys)
    var = hp["signal_var"] - k_new @ np.linalg.solve(A, k_new)
    return mean + std * mu, std**2 * var


def test_eps_is_a_matern12_lengthscale_over_the_lag():
    for eps in (1e-5, 0.003, 0.1, 0.5):
        lengthscale = eps_to_lengthscale(eps)
        lags = np.arange(0, 50)
        assert np.allclose(np.exp(-lags / lengthscale), (1.0 - eps) ** (lags / 2.0), rtol=1e-12)
        assert lengthscale_to_eps(lengthscale) == pytest.approx(eps, rel=1e-12)
    lo, hi = eps_lengthscale_bounds((1e-5, 0.5))
    assert lo == pytest.approx(2.0 / math.log(2.0))  # eps = 0.5
    assert hi == pytest.approx(-2.0 / math.log(1.0 - 1e-5))  # eps = 1e-5, ~2e5 steps


def test_posterior_at_the_upcoming_step_matches_eqs_7_8():
    rng = np.random.default_rng(1)
    hp = {"signal_var": 1.3, "lengthscale_space": 0.3, "noise_var": 0.02}
    eps = 0.08
    alg = make_tv(initial=hp, initial_eps=eps)
    n = 12
    X = rng.uniform(size=(n, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=n)
    stamps = np.cumsum(rng.uniform(0.1, 5.0, size=n))  # irregular clock: index mode ignores it
    for i in range(n):
        alg.ingest(X[i], stamps[i], y[i], now=stamps[i], warmup=True)  # warm-up: no fit
    surrogate = alg.surrogate
    assert surrogate.next_step == n + 1
    assert np.array_equal(surrogate.T, stamps)
    assert np.array_equal(surrogate.steps, np.arange(1, n + 1))
    x_new = rng.uniform(size=(3, 2))
    pred = surrogate.predict(x_new, stamps[-1] + 1.0)
    for j in range(3):
        mu, var = bogunovic_posterior(X, y, np.arange(1.0, n + 1), x_new[j], n + 1, eps, hp)
        assert pred.mean[j] == pytest.approx(mu, rel=1e-9, abs=1e-10)
        assert pred.var[j] == pytest.approx(var, rel=1e-9, abs=1e-10)
    # a time inside the history maps to the step of the first observation stamped at/after it
    mid = 0.5 * (stamps[4] + stamps[5])
    mu, var = bogunovic_posterior(X, y, np.arange(1.0, n + 1), x_new[0], 6, eps, hp)
    inside = surrogate.predict(x_new[:1], mid)
    assert inside.mean[0] == pytest.approx(mu, rel=1e-9)
    assert surrogate.model_time(np.array([stamps[0], mid, stamps[-1] + 9.0])) == pytest.approx(
        [1.0, 6.0, n + 1.0]
    )


def test_time_axis_uses_the_stamps():
    rng = np.random.default_rng(2)
    hp = {"signal_var": 1.0, "lengthscale_space": 0.25, "noise_var": 0.05}
    eps = 0.02
    alg = make_tv(time_axis="time", initial=hp, initial_eps=eps)
    n = 9
    X = rng.uniform(size=(n, 2))
    y = rng.normal(size=n)
    stamps = np.cumsum(rng.uniform(0.5, 3.0, size=n))
    for i in range(n):
        alg.ingest(X[i], stamps[i], y[i], now=stamps[i], warmup=True)
    t = stamps[-1] + 2.5
    pred = alg.surrogate.predict(X[:1] + 0.01, t)
    mu, var = bogunovic_posterior(X, y, stamps, X[0] + 0.01, t, eps, hp)
    assert pred.mean[0] == pytest.approx(mu, rel=1e-9)
    assert pred.var[0] == pytest.approx(var, rel=1e-9)


def test_remove_and_clear_keep_stamps_in_step_and_steps_stay_global():
    rng = np.random.default_rng(3)
    alg = make_tv()
    for i in range(6):
        alg.ingest(rng.uniform(size=2), float(i), float(i), now=float(i), warmup=True)
    alg.remove(1)
    assert np.array_equal(alg.surrogate.T, [0.0, 2.0, 3.0, 4.0, 5.0])
    assert np.array_equal(alg.surrogate.steps, [1.0, 3.0, 4.0, 5.0, 6.0])
    alg.reset()
    assert alg.surrogate.n == 0 and alg.surrogate.T.shape == (0,)
    alg.ingest(rng.uniform(size=2), 6.0, 1.0, now=6.0, warmup=True)
    assert np.array_equal(alg.surrogate.steps, [7.0])


def sample_markov_model(eps: float, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One draw of Bogunovic's model at n steps (one query per step) plus 1% noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 1))
    steps = np.arange(n, dtype=float)
    K = matern52(np.abs(X - X.T) / 0.2) * (1.0 - eps) ** (np.abs(steps[:, None] - steps) / 2)
    L = np.linalg.cholesky(K + 1e-8 * np.eye(n))
    return X, L @ rng.normal(size=n) + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("eps_true", [0.002, 0.1])
def test_eps_is_fitted_by_maximum_likelihood(eps_true):
    X, y = sample_markov_model(eps_true, 150, seed=4)
    alg = make_tv(d=1)
    for i in range(len(y)):
        alg.ingest(X[i], float(i), float(y[i]), now=float(i), warmup=i < len(y) - 1)
    state = alg.state()
    eps_hat = state["forgetting_rate"]
    assert eps_hat == pytest.approx(lengthscale_to_eps(state["lengthscale_time"]))
    assert 1e-5 <= eps_hat <= 0.5
    assert eps_true / 4 < eps_hat < eps_true * 4


def test_acquisition_runs_on_the_tv_gp():
    rng = np.random.default_rng(5)
    alg = make_tv(d=2)
    for i in range(8):
        x = rng.uniform(size=2)
        alg.ingest(x, float(i), float(-np.sum((x - 0.3) ** 2)), now=float(i), warmup=True)
    for i in range(8, 11):
        x = alg.propose(float(i))
        assert x.shape == (2,) and np.all((x >= 0) & (x <= 1))
        alg.ingest(x, float(i), float(-np.sum((x - 0.3) ** 2)), now=float(i), warmup=False)
    assert alg.dataset_size() == 11
    assert "forgetting_rate" in alg.state() and "beta" in alg.state()


def test_the_constant_beta_variant_keeps_beta_at_2_while_the_schedule_grows():
    """Mandl & Kekkonen's Alg. 1: the same surrogate, beta_t = 2 at every step; TV-GP-UCB's
    default schedule (W-DBO's 0.2 d log 2n) moves with the dataset size."""
    rng = np.random.default_rng(5)
    seen = {}
    for name in ("tv-gp-ucb", "tv-gp-ucb-constant-beta"):
        alg = algorithms.make(name, acquisition={"n_restarts": 2, "raw_samples": 64})
        alg.setup(ProblemInfo(d=2), np.random.default_rng(0), WorkCounter(), clock=lambda: 0.0)
        assert type(alg.surrogate) is TVGPSurrogate
        betas = []
        for i in range(10):
            x = rng.uniform(size=2) if i < 6 else alg.propose(float(i))
            alg.ingest(x, float(i), float(-np.sum((x - 0.3) ** 2)), now=float(i), warmup=i < 6)
            if i >= 6:
                betas.append(alg.state()["beta"])
        seen[name] = betas
    assert seen["tv-gp-ucb-constant-beta"] == [2.0] * 4
    assert len(set(seen["tv-gp-ucb"])) > 1

def test_bad_input_names_the_valid_choices():
    with pytest.raises(ValueError, match="valid: index, time"):
        TVGPSurrogate(time_axis="clock")
    with pytest.raises(ValueError, match="0 < lo <= hi < 1"):
        TVGPSurrogate(eps_bounds=(0.0, 0.5))
    with pytest.raises(ValueError, match="0 < lo <= hi < 1"):
        TVGPSurrogate(eps_bounds=(0.1, 1.0))
    with pytest.raises(ValueError, match="initial_eps"):
        TVGPSurrogate(initial_eps=0.9)
    with pytest.raises(ValueError, match="eps_bounds"):
        TVGPSurrogate(bounds={"lengthscale_time": (1.0, 10.0)})
    with pytest.raises(ValueError, match="initial_eps"):
        TVGPSurrogate(initial={"lengthscale_time": 5.0})
    with pytest.raises(ValueError, match="eps must be in"):
        eps_to_lengthscale(1.0)
    with pytest.raises(ValueError, match="valid:.*time_axis"):
        algorithms.make("tv-gp-ucb", surrogate={"time_kernel": "matern32"})
    with pytest.raises(ValueError, match="tv-gp-ucb"):
        algorithms.make("tv-gp-ucbb")
