"""ABO (tvbo.algorithms.abo.parts): the joint (x, t) posterior against a dense solve and finite
differences, the l_T stability test of the author's code, kappa, and the defining behaviour on the
engine: UCB at the present before stability, a future sample time inside the window after."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tvbo.algorithms as algorithms
from tests.toys import ToyBenchmark
from tvbo.acquisition.beta import abo_kappa
from tvbo.algorithms import ProblemInfo, Query
from tvbo.algorithms.abo.parts import ABOAcquisition
from tvbo.gp.exact import ExactGP, joint_posterior
from tvbo.gp.kernels import Hyperparameters, SeparableKernel
from tvbo.sim.compute import make_compute_model
from tvbo.sim.engine import Engine, EngineOptions
from tvbo.work import WorkCounter


def _gp(time_kernel: str = "matern32", n: int = 9, d: int = 2, seed: int = 0) -> ExactGP:
    rng = np.random.default_rng(seed)
    hp = Hyperparameters(
        signal_var=1.3, lengthscale_space=0.4, lengthscale_time=3.0, noise_var=0.05
    )
    gp = ExactGP(SeparableKernel("matern52", time_kernel), hp)
    gp.set_data(rng.uniform(size=(n, d)), rng.uniform(0, 10, size=n), rng.normal(size=n) * 2 + 1)
    return gp


# ------------------------------------------------------------------------------------------------
# the joint posterior
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("time_kernel", ["matern32", "matern52", "rbf"])
def test_joint_posterior_matches_a_dense_solve(time_kernel):
    gp = _gp(time_kernel)
    rng = np.random.default_rng(1)
    Xq, Tq = rng.uniform(size=(5, 2)), rng.uniform(8, 14, size=5)
    pred = joint_posterior(gp, Xq, Tq)
    # independent: dense Delta, np.linalg.solve, explicit standardisation
    hp, k = gp.hyperparameters, gp.kernel
    y = np.asarray(gp.y)
    mu, sd = y.mean(), y.std()
    Delta = k.matrix(gp.X, gp.T, gp.X, gp.T, hp) + hp.noise_var * np.eye(gp.n)
    Kq = k.matrix(Xq, Tq, gp.X, gp.T, hp)
    mean = Kq @ np.linalg.solve(Delta, (y - mu) / sd) * sd + mu
    var = (hp.signal_var - np.einsum("ij,ji->i", Kq, np.linalg.solve(Delta, Kq.T))) * sd**2
    np.testing.assert_allclose(pred.mean, mean, rtol=1e-10)
    np.testing.assert_allclose(pred.var, var, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("time_kernel", ["matern12", "matern32", "rbf"])
def test_joint_posterior_gradients_match_finite_differences(time_kernel):
    gp = _gp(time_kernel)
    rng = np.random.default_rng(2)
    Xq, Tq = rng.uniform(size=(4, 2)), rng.uniform(8, 14, size=4)
    pred = joint_posterior(gp, Xq, Tq, grad=True)
    h = 1e-6
    for j in range(3):
        Xp, Xm, Tp, Tm = Xq.copy(), Xq.copy(), Tq.copy(), Tq.copy()
        if j < 2:
            Xp[:, j] += h
            Xm[:, j] -= h
        else:
            Tp += h
            Tm -= h
        up, um = joint_posterior(gp, Xp, Tp), joint_posterior(gp, Xm, Tm)
        np.testing.assert_allclose(
            pred.dmean[:, j], (up.mean - um.mean) / (2 * h), rtol=1e-5, atol=1e-7
        )
        np.testing.assert_allclose(
            pred.dvar[:, j], (up.var - um.var) / (2 * h), rtol=1e-5, atol=1e-7
        )


def test_joint_posterior_agrees_with_the_exact_gp_in_space():
    gp = _gp()
    Xq = np.random.default_rng(3).uniform(size=(6, 2))
    ours = joint_posterior(gp, Xq, np.full(6, 11.0), grad=True)
    ref = gp.predict(Xq, 11.0, grad=True)
    np.testing.assert_allclose(ours.dmean[:, :2], ref.dmean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.dvar[:, :2], ref.dvar, rtol=1e-9, atol=1e-12)


def test_joint_posterior_rejects_a_spatial_gp():
    gp = ExactGP(SeparableKernel("matern52", None), Hyperparameters(1.0, 0.3, None, 0.01))
    gp.set_data(np.zeros((2, 1)), None, np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="spatio-temporal"):
        joint_posterior(gp, np.zeros((1, 1)), np.zeros(1))


# ------------------------------------------------------------------------------------------------
# kappa and option validation
# ------------------------------------------------------------------------------------------------
def test_kappa_is_the_authors_schedule():
    i, d, delta = 37, 3, 0.1
    direct = 0.2 * math.sqrt(2 * math.log(i ** (d / 2 + 2) * math.pi**2 / (3 * delta)))
    assert abo_kappa(i, d, delta) == pytest.approx(direct, rel=1e-12)
    with pytest.raises(ValueError, match="i >= 1"):
        abo_kappa(0, 1)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"slope_scale": "relative"}, "valid: absolute, log"),
        ({"burn_in": 1}, "burn_in must be an integer >= 2"),
        ({"window_fraction": 0.0}, "window_fraction must be > 0"),
        ({"dt_min": -1.0}, "dt_min must be"),
        ({"stability_checks": 0}, "stability_checks"),
        ({"slope_threshold": 0}, "slope_threshold"),
        ({"dt_min": 2.0, "max_lookahead": 1.0}, "max_lookahead must be >= dt_min"),
        ({"beta": "nonsense"}, "unknown beta schedule .*valid.*constant.*srinivas.*wdbo"),
        ({"kappa_delta": 1.5}, "kappa_delta"),
    ],
)
def test_bad_options_are_rejected_with_the_valid_choices(options, message):
    with pytest.raises(ValueError, match=message):
        ABOAcquisition(**options)


def test_unknown_acquisition_option_lists_valid_ones():
    with pytest.raises(ValueError, match="window_fraction"):
        algorithms.make("abo", acquisition={"windw": 3})


# ------------------------------------------------------------------------------------------------
# driving the composed algorithm directly
# ------------------------------------------------------------------------------------------------
def _setup(lengthscales_fixed: float | None = None, d: int = 1, candidates=None, **acq):
    surrogate = {"kind": "gp", "time_kernel": "problem"}
    if lengthscales_fixed is not None:
        surrogate["bounds"] = {"lengthscale_time": [lengthscales_fixed, lengthscales_fixed]}
    alg = algorithms.make(
        "abo", surrogate=surrogate, acquisition={"n_restarts": 4, "raw_samples": 64, **acq}
    )
    now = {"t": 0.0}
    alg.setup(
        ProblemInfo(d=d, candidates=candidates),
        np.random.default_rng(0),
        WorkCounter(),
        clock=lambda: now["t"],
    )
    rng = np.random.default_rng(5)
    for k in range(8):  # warm-up data: no fit, no cleaning
        x = rng.uniform(size=d)
        alg.ingest(x, float(k), float(-np.sum((x - 0.5) ** 2)), now=float(k), warmup=True)
    return alg


def _select_with(alg, lengthscale_time: float, t: float = 10.0):
    gp = alg.surrogate.gp
    hp = gp.hyperparameters
    gp.set_hyperparameters(
        Hyperparameters(hp.signal_var, hp.lengthscale_space, lengthscale_time, hp.noise_var)
    )
    return alg.acquisition.select(alg.surrogate, t)


@pytest.mark.parametrize(
    "sequence, stable_at",
    [
        # lag-4 slopes: i=6: 15, i=7: 10, i=8: 5, then 0, 0, 0 -> qualifying at 9, 10, 11
        ([10, 30, 50, 70, 90, 90, 90, 90, 90, 90, 90, 90], 11),
        # qualifying checks need not be consecutive: i=6 yes, i=7 no (slope 10), i=8 yes, i=9 yes
        ([10, 10, 10, 10, 10, 10, 50, 10, 10, 10], 9),
        # a constant l_T: no check before burn-in, so the earliest flag is at 5 + 3
        ([40.0] * 10, 8),
    ],
)
def test_stability_flag_follows_the_authors_peg_logic(sequence, stable_at):
    alg = _setup()
    acq = alg.acquisition
    flags = []
    for lt in sequence:
        _select_with(alg, lt)
        flags.append(acq.stable)
    assert flags.index(True) + 1 == stable_at
    assert all(flags[stable_at - 1 :])  # never cleared
    assert acq.state()["abo_stable"] == 1.0


def test_log_slope_scale_is_unit_free():
    alg = _setup(slope_scale="log", slope_threshold=0.05)
    # l_T grows by 3% per iteration: absolute slope ~ 3-4 s/iter, log slope 0.0296 < 0.05
    for i in range(8):
        _select_with(alg, 100.0 * 1.03**i)
    assert alg.acquisition.stable
    assert alg.acquisition.last_slope == pytest.approx(math.log(1.03), rel=1e-9)


def test_before_stability_queries_now_and_after_inside_the_window():
    alg = _setup(burn_in=2, stability_checks=1, dt_min=0.5)
    gp = alg.surrogate.gp
    out = alg.propose(10.0)  # fits (stale after warm-up); iteration 1: not stable
    assert isinstance(out, np.ndarray)
    assert alg.acquisition.state()["abo_lookahead"] == 0.0
    lt = gp.hyperparameters.lengthscale_time
    for _ in range(3):
        _select_with(alg, lt)  # iterations 2..4: the slope check at 3 sets the flag
    assert alg.acquisition.stable
    out = alg.propose(20.0)
    assert isinstance(out, Query)
    lt = gp.hyperparameters.lengthscale_time
    assert 20.0 + 0.5 - 1e-9 <= out.at <= 20.0 + lt / 3 + 1e-9
    assert 0.0 <= out.x[0] <= 1.0
    state = alg.acquisition.state()
    assert state["abo_lookahead"] == pytest.approx(out.at - 20.0)
    assert state["abo_window"] == pytest.approx(lt / 3)


def test_max_lookahead_caps_the_window_and_abo_t_never_waits():
    alg = _setup(lengthscales_fixed=300.0, burn_in=2, stability_checks=1, max_lookahead=4.0)
    for _ in range(4):
        out = alg.propose(10.0)
    assert isinstance(out, Query) and 10.0 <= out.at <= 14.0 + 1e-9
    alg_t = _setup(burn_in=2, stability_checks=1, optimise_time=False)
    for _ in range(4):
        out = alg_t.propose(10.0)
    assert isinstance(out, np.ndarray) and alg_t.acquisition.stable


def test_discrete_candidates_choose_a_candidate_and_a_grid_time():
    cands = np.linspace(0, 1, 7)[:, None]
    alg = _setup(
        lengthscales_fixed=30.0, candidates=cands, burn_in=2, stability_checks=1, time_grid=5
    )
    for _ in range(4):
        out = alg.propose(10.0)
    assert isinstance(out, Query)
    assert np.any(np.all(np.isclose(cands, out.x), axis=1))
    assert np.isclose(out.at, 10.0 + np.linspace(0, 10.0, 5)).any()


def test_abo_beta_uses_kappa_squared():
    alg = _setup(beta="abo")
    for _ in range(3):
        alg.propose(10.0)
    assert alg.acquisition.state()["beta"] == pytest.approx(abo_kappa(3, 1) ** 2)


def test_abo_requires_a_temporal_kernel():
    alg = algorithms.make("abo", surrogate={"time_kernel": None})
    alg.setup(ProblemInfo(d=1), np.random.default_rng(0), WorkCounter())
    alg.ingest(np.array([0.3]), 0.0, 1.0, now=0.0, warmup=True)
    with pytest.raises(ValueError, match="time_kernel='problem'"):
        alg.propose(1.0)


# ------------------------------------------------------------------------------------------------
# the defining behaviour on the engine
# ------------------------------------------------------------------------------------------------
def test_on_the_engine_abo_waits_inside_its_window_only_once_stable():
    compute = 0.2  # every post-warm-up propose costs exactly 0.2 s (polynomial model)
    alg = algorithms.make(
        "abo",
        surrogate={"bounds": {"lengthscale_time": [6.0, 6.0]}, "fit_max_iter": 10},
        acquisition={
            "burn_in": 3,
            "stability_checks": 2,
            "dt_min": 0.5,
            "n_restarts": 4,
            "raw_samples": 64,
        },
    )
    engine = Engine(
        ToyBenchmark(horizon=40.0),
        alg,
        make_compute_model("polynomial", polynomial=[compute]),
        seed=1,
        options=EngineOptions(warmup=5),
    )
    rec = engine.run()
    c = rec.columns
    stable = np.array([s.get("abo_stable", np.nan) for s in rec.state])
    look = np.array([s.get("abo_lookahead", np.nan) for s in rec.state])
    gap = np.asarray(c["t_sample"]) - np.asarray(c["t_decide"])
    post = np.arange(len(gap)) >= 5
    # l_T is pinned, so the slope is 0: checks qualify at ABO iterations 4 and 5 -> stable at 5
    first_stable = int(np.argmax(stable == 1.0))
    assert first_stable == 5 + 4
    before = post & (stable == 0.0)
    after = post & (stable == 1.0)
    assert before.sum() == 4 and after.sum() >= 3
    # before stability: sampled as soon as the computation ends, at the present
    np.testing.assert_allclose(gap[before], compute, atol=1e-9)
    np.testing.assert_allclose(look[before], 0.0)
    # after: a look-ahead inside [dt_min, l_T / 3], and the engine waited for it
    assert np.all(look[after] >= 0.5 - 1e-9) and np.all(look[after] <= 2.0 + 1e-9)
    np.testing.assert_allclose(gap[after], np.maximum(look[after], compute), atol=1e-9)
    assert np.all(gap[after] > compute)  # it really waited beyond the computation
