"""R-GP-UCB and ET-GP-UCB dataset policies: each one's defining behaviour (reset on schedule,
reset exactly when the uniform error bound fails -- checked by a dense GP computed here --),
Bogunovic's N(eps) against hand values, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tvbo.algorithms as algorithms
from tests.toys import ToyBenchmark
from tvbo.algorithms import ProblemInfo
from tvbo.algorithms.gpucb.resets import (
    EventTrigger,
    PeriodicReset,
    reset_period,
    trigger_threshold,
)
from tvbo.sim.compute import CountedModel
from tvbo.sim.engine import Engine, EngineOptions
from tvbo.sim.profiles import HardwareProfile
from tvbo.work import WorkCounter

CHEAP_UCB = {"kind": "ucb", "n_restarts": 2, "raw_samples": 64}


def make(name: str, d: int = 1, **options):
    alg = algorithms.make(name, acquisition=CHEAP_UCB, **options)
    alg.setup(ProblemInfo(d=d), np.random.default_rng(0), WorkCounter(), clock=lambda: 0.0)
    return alg


def feed(alg, xs, f, *, warmup: int, t0: int = 0, rng=None, noise: float = 0.0):
    """Ingest x_k (k = t0, t0+1, ...) with y = f(x, k) (+ noise); returns the sizes after each."""
    sizes = []
    for k, x in enumerate(xs, start=t0):
        y = float(f(x, k)) + (noise * rng.normal() if noise else 0.0)
        alg.ingest(np.atleast_1d(x), float(k), y, now=float(k), warmup=k < warmup)
        sizes.append(alg.dataset_size())
    return sizes


def smooth(x, k):
    return np.sin(6.0 * x[0]) + 0.5 * x[0]


# ------------------------------------------------------------------------------------------------
# R-GP-UCB
# ------------------------------------------------------------------------------------------------
def test_reset_period_matches_bogunovic_by_hand():
    # Matérn-5/2, d = 2: c = 6 / 11, N = ceil(24 eps^{-11/38}); eps = 0.01 -> 24 * 10^{22/38}
    assert reset_period(0.01, 2, "matern52") == math.ceil(24 * 10 ** (22 / 38))  # 92
    assert reset_period(0.01, 2, "matern52") == 92
    # d = 1: c = 2 / 7, exponent 7 / 26
    assert reset_period(0.03, 1, "matern52") == math.ceil(24 * (1 / 0.03) ** (7 / 26))
    # SE: N = ceil(12 eps^{-1/4}); eps = 1e-4 gives exactly 120
    assert reset_period(1e-4, 3, "rbf") == 120
    assert reset_period(1e-4, 3, "rbf", constant=1.0) == 10
    with pytest.raises(ValueError, match="eps must be in"):
        reset_period(0.0, 2)
    with pytest.raises(ValueError, match="valid: matern12, matern32, matern52, rbf"):
        reset_period(0.1, 2, "cauchy")


def test_period_mode_resets_every_n_post_warmup_iterations():
    alg = make("r-gp-ucb", dataset={"mode": "period", "N": 4})
    xs = np.linspace(0.05, 0.95, 17)[:, None]
    sizes = feed(alg, xs, smooth, warmup=5)
    # warm-up 1..5 kept; then blocks of 4 post-warm-up iterations end in a reset
    assert sizes == [1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 2, 3, 0, 1, 2, 3, 0]
    state = alg.state()
    assert state["resets"] == 3 and state["since_reset"] == 0 and state["reset_period"] == 4


def test_size_mode_resets_when_the_dataset_exceeds_n_never_during_warmup():
    alg = make("r-gp-ucb", dataset={"mode": "size", "N": 3})
    xs = np.linspace(0.05, 0.95, 14)[:, None]
    sizes = feed(alg, xs, smooth, warmup=6)
    assert sizes[:6] == [1, 2, 3, 4, 5, 6]  # warm-up: no reset although |D| > N
    assert sizes[6:] == [0, 1, 2, 3, 0, 1, 2, 3]
    assert alg.state()["resets"] == 2


def test_size_mode_with_a_fixed_eps_uses_n_of_eps():
    alg = make("r-gp-ucb", dataset={"eps": 0.5})
    expected = reset_period(0.5, 1, "matern52")  # ceil(24 * 2^{7/26}) = 29
    assert expected == math.ceil(24 * 2 ** (7 / 26))
    rng = np.random.default_rng(1)
    sizes = feed(alg, rng.uniform(size=(expected + 2, 1)), smooth, warmup=3)
    assert alg.state()["reset_period"] == expected
    assert max(sizes) == expected and sizes[expected] == 0  # the (N+1)-th observation resets
    assert alg.state()["reset_eps"] == 0.5


def bogunovic_draw(eps: float, n: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 1))
    r = np.sqrt(5.0) * np.abs(X - X.T) / 0.2
    lags = np.abs(np.arange(n)[:, None] - np.arange(n)) / 2.0
    K = (1 + r + r * r / 3) * np.exp(-r) * (1.0 - eps) ** lags
    y = np.linalg.cholesky(K + 1e-8 * np.eye(n)) @ rng.normal(size=n) + 0.1 * rng.normal(size=n)
    return X, y


def test_fitted_eps_tracks_the_rate_of_change_and_sets_n():
    estimates = {}
    for eps_true in (1e-3, 0.15):
        X, y = bogunovic_draw(eps_true, 80, seed=2)
        alg = make("r-gp-ucb", dataset={"N": None, "eps": "fit"})
        for i in range(len(y)):
            alg.ingest(X[i], float(i), float(y[i]), now=float(i), warmup=i < len(y) - 1)
        state = alg.state()
        estimates[eps_true] = state["reset_eps"]
        assert 1e-5 <= state["reset_eps"] <= 0.5
        assert state["reset_period"] == reset_period(state["reset_eps"], 1, "matern52")
    assert estimates[1e-3] < 0.02 < estimates[0.15]
    assert 0.05 < estimates[0.15] < 0.45


def test_r_gp_ucb_on_the_engine_records_resets():
    profile = HardwareProfile("unit", {"flop": 1e-9, "kernel": 1e-7, "call": 1e-4})
    alg = algorithms.make("r-gp-ucb", dataset={"mode": "period", "N": 5}, acquisition=CHEAP_UCB)
    engine = Engine(
        ToyBenchmark(horizon=1e6, cost=0.5),
        alg,
        CountedModel(profile, 1.0),
        seed=1,
        options=EngineOptions(warmup=4, max_iterations=19),
    )
    rec = engine.run()
    resets = [s["resets"] for s in rec.state]
    # 4 warm-up iterations, then a reset at the end of every 5th post-warm-up iteration
    assert resets == [0] * 8 + [1] * 5 + [2] * 5 + [3]
    assert [rec.dataset_size[k] for k in (7, 8, 9, 13, 18)] == [8, 0, 1, 0, 0]


def test_periodic_reset_bad_input():
    with pytest.raises(ValueError, match="valid: period, size"):
        PeriodicReset(mode="sometimes")
    with pytest.raises(ValueError, match="N must be an integer >= 1"):
        PeriodicReset(N=0)
    with pytest.raises(ValueError, match="'fit'"):
        PeriodicReset(eps=1.5)
    with pytest.raises(ValueError, match="'fit'"):
        PeriodicReset(eps="guess")
    with pytest.raises(ValueError, match="0 < lo <= hi < 1"):
        PeriodicReset(eps_bounds=(0.5, 0.1))
    with pytest.raises(ValueError, match="valid:.*periodic-reset.*sliding-window"):
        algorithms.make("r-gp-ucb", dataset={"kind": "periodic"})


# ------------------------------------------------------------------------------------------------
# ET-GP-UCB
# ------------------------------------------------------------------------------------------------
def dense_trigger(alg, x, y, tau, delta=0.01, noise_std=None):
    """|y - mu| and E_t from a dense GP computed here (Matérn-5/2, standardised y)."""
    s = alg.surrogate
    hp = s.hyperparameters
    X, Y = np.asarray(s.X), np.asarray(s.y)
    mean, std = Y.mean(), Y.std()
    std = std if std >= 1e-12 else 1.0

    def k(A, B):
        r = math.sqrt(5.0) * np.linalg.norm(A[:, None] - B[None], axis=-1) / hp.lengthscale_space
        return hp.signal_var * (1 + r + r * r / 3) * np.exp(-r)

    A = k(X, X) + hp.noise_var * np.eye(len(Y))
    kx = k(x[None], X)[0]
    mu = mean + std * kx @ np.linalg.solve(A, (Y - mean) / std)
    sigma = std * math.sqrt(max(hp.signal_var - kx @ np.linalg.solve(A, kx), 0.0))
    sigma_n = std * math.sqrt(hp.noise_var) if noise_std is None else noise_std
    threshold = math.sqrt(2 * math.log(math.pi**2 * tau**2 / (3 * delta))) * (sigma + sigma_n)
    return abs(y - mu), threshold


def jump(x, k, at=25):
    return np.sin(6.0 * x[0]) + (3.0 if k >= at else 0.0)


def test_threshold_is_the_union_bound_of_the_paper():
    for tau, delta, sigma, sn in ((1, 0.01, 1.0, 0.0), (7, 0.1, 0.3, 0.05), (200, 0.01, 0.0, 1.0)):
        pi_tau = math.pi**2 * tau**2 / 6  # sum_tau 1 / pi_tau = 1
        rho = 2 * math.log(2 * pi_tau / delta)
        omega = math.sqrt(2 * sn**2 * math.log(2 * pi_tau / delta))
        assert trigger_threshold(tau, delta, sigma, sn) == pytest.approx(
            math.sqrt(rho) * sigma + omega, rel=1e-12
        )


def run_trigger(alg, xs, f, warm, noise, seed, noise_std=None):
    """Ingest, checking each test against :func:`dense_trigger`; returns (failures, resets)."""
    rng = np.random.default_rng(seed)
    failures, resets_at = [], []
    for k in range(len(xs)):
        y = float(f(xs[k], k)) + noise * rng.normal()
        expected = None
        if k >= warm and alg.dataset_size() >= 5:
            expected = dense_trigger(alg, xs[k], y, alg.dataset_size(), noise_std=noise_std)
            if expected[0] > expected[1]:
                failures.append(k)
        before = alg.state().get("resets", 0.0)
        alg.ingest(xs[k], float(k), y, now=float(k), warmup=k < warm)
        state = alg.state()
        if expected is not None:
            assert state["trigger_stat"] == pytest.approx(expected[0], rel=1e-6)
            assert state["trigger_threshold"] == pytest.approx(expected[1], rel=1e-6)
        else:
            assert math.isnan(state["trigger_stat"])
        if state["resets"] > before:
            resets_at.append(k)
            assert alg.dataset_size() == 1  # the triggering point is kept
            assert np.array_equal(alg.surrogate.X[0], xs[k])
    return failures, resets_at


def test_event_trigger_resets_exactly_when_the_bound_fails():
    xs = np.random.default_rng(3).uniform(size=(45, 1))
    # known noise level (the paper's setting): the first failure is the jump at k = 25
    alg = make("et-gp-ucb", dataset={"noise_std": 0.01})
    failures, resets_at = run_trigger(alg, xs, jump, 8, 0.01, seed=3, noise_std=0.01)
    assert failures[0] == 25 and resets_at == failures
    # fitted noise: the ML noise can collapse to its floor on few points and the bound then
    # fails before the jump too; the policy still resets exactly where the bound fails
    alg = make("et-gp-ucb")
    failures, resets_at = run_trigger(alg, xs, jump, 8, 0.01, seed=3)
    assert 25 in failures and resets_at == failures


def test_min_tau_prevents_the_reset_cascade_of_a_one_point_standardised_gp():
    # outputs of scale 100: a GP standardised on one point (y_std = 1) predicts sigma ~ 1,
    # so with min_tau = 1 every observation after the jump triggers again
    xs = np.random.default_rng(8).uniform(size=(45, 1))

    def big(x, k):
        return 100.0 * jump(x, k)

    sizes = {}
    for min_tau in (1, None):  # None: the default (5)
        options = {"noise_std": 1.0} | ({} if min_tau is None else {"min_tau": min_tau})
        alg = make("et-gp-ucb", dataset=options)
        sizes[min_tau] = feed(alg, xs, big, warmup=8, rng=np.random.default_rng(9), noise=1.0)
    assert max(sizes[1][25:]) <= 2 and sizes[1][25:].count(1) >= 15  # resets again and again
    assert sizes[None][25:] == list(range(1, 21))  # one reset at the jump, then it learns


def test_no_reset_on_a_static_function():
    rng = np.random.default_rng(4)
    alg = make("et-gp-ucb")
    sizes = feed(alg, rng.uniform(size=(120, 1)), smooth, warmup=10, rng=rng, noise=0.01)
    assert alg.state()["resets"] == 0
    assert sizes[-1] == 120
    assert alg.state()["trigger_stat"] < alg.state()["trigger_threshold"]


def test_event_trigger_options():
    rng = np.random.default_rng(5)
    xs = rng.uniform(size=(30, 1))
    # drop the triggering point too
    alg = make("et-gp-ucb", dataset={"keep_trigger": False})
    sizes = feed(alg, xs, lambda x, k: jump(x, k, at=20), warmup=8)
    assert sizes[20] == 0 and alg.state()["resets"] >= 1
    # min_tau: no test before tau observations are held
    alg = make("et-gp-ucb", dataset={"min_tau": 50})
    feed(alg, xs, lambda x, k: jump(x, k, at=20), warmup=8)
    assert alg.state()["resets"] == 0 and math.isnan(alg.state()["trigger_threshold"])
    # a fixed, huge noise level masks the jump (W-DBO's failure mode of an inflated sigma_n)
    alg = make("et-gp-ucb", dataset={"noise_std": 10.0})
    feed(alg, xs, lambda x, k: jump(x, k, at=20), warmup=8)
    assert alg.state()["resets"] == 0 and alg.state()["trigger_threshold"] > 10.0


def test_event_trigger_bad_input():
    for delta in (0.0, 1.0, -0.1):
        with pytest.raises(ValueError, match="delta must be in"):
            EventTrigger(delta=delta)
    with pytest.raises(ValueError, match="valid: reset, global"):
        EventTrigger(counter="time")
    with pytest.raises(ValueError, match="min_tau"):
        EventTrigger(min_tau=0)
    with pytest.raises(ValueError, match="noise_std"):
        EventTrigger(noise_std=-1.0)
    with pytest.raises(ValueError, match="tau must be >= 1"):
        trigger_threshold(0, 0.1, 1.0, 0.0)
