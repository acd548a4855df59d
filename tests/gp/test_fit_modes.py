"""Fit modes that follow the papers' implementations (tvbo/gp/fit_modes.py).

Numerics are checked against independent code written here: a from-scratch numpy LML of a
Matérn-5/2 x Matérn-3/2 GP with a constant mean, finite-difference gradients of it, and torch's
Adam update written out by hand; Gamma densities against scipy.stats.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tests.toys import ToyBenchmark
from tvbo.algorithms import make
from tvbo.gp.exact import ExactGP
from tvbo.gp.fit import fit_hyperparameters
from tvbo.gp.fit_modes import (
    FIT_MODES,
    Constraint,
    FitMode,
    GammaPrior,
    ParameterSpec,
    inv_softplus,
    softplus,
)
from tvbo.gp.kernels import HyperparameterBounds, Hyperparameters, SeparableKernel
from tvbo.sim.compute import CountedModel
from tvbo.sim.engine import Engine, EngineOptions
from tvbo.sim.profiles import HardwareProfile


# ------------------------------------------------------------------------------------------------
# independent reference: LML of standardised y under lambda k52(x) k32(t) + noise, mean c
# ------------------------------------------------------------------------------------------------
def _k52(r):
    return (1 + math.sqrt(5) * r + 5 * r**2 / 3) * np.exp(-math.sqrt(5) * r)


def _k32(r):
    return (1 + math.sqrt(3) * r) * np.exp(-math.sqrt(3) * r)


def _lml(X, T, y, sv, ls, lt, nv, c=0.0):
    """log N(y | c 1, sv K52 K32 + nv I), written independently of tvbo."""
    dx = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    K = sv * _k52(dx / ls)
    if T is not None:
        K = K * _k32(np.abs(T[:, None] - T[None, :]) / lt)
    A = K + nv * np.eye(len(y))
    r = y - c
    sign, logdet = np.linalg.slogdet(A)
    assert sign > 0
    return -0.5 * r @ np.linalg.solve(A, r) - 0.5 * logdet - 0.5 * len(y) * math.log(2 * math.pi)


def _sp(r):
    return math.log1p(math.exp(-abs(r))) + max(r, 0.0)


def _gpytorch_loss(z, X, T, y, time_scale=1.0):
    """-ExactMarginalLogLikelihood: raw (signal, l_S, l_T, noise, mean) -> -LML / n."""
    sv, ls, lt, nv = _sp(z[0]), _sp(z[1]), _sp(z[2]) * time_scale, _sp(z[3]) + 1e-4
    return -_lml(X, T, y, sv, ls, lt, nv, z[4]) / len(y)


def _fd_grad(f, z, h=1e-6):
    g = np.zeros_like(z)
    for i in range(len(z)):
        e = np.zeros_like(z)
        e[i] = h
        g[i] = (f(z + e) - f(z - e)) / (2 * h)
    return g


def _hand_adam(f, z0, steps, lr=0.1):
    z = np.array(z0, float)
    m = np.zeros_like(z)
    v = np.zeros_like(z)
    for t in range(1, steps + 1):
        g = _fd_grad(f, z)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        z = z - lr / (1 - 0.9**t) * m / (np.sqrt(v) / math.sqrt(1 - 0.999**t) + 1e-8)
    return z


def _data(n=8, seed=0, static_in_time=False):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    T = np.sort(rng.uniform(0.0, 30.0, n))
    y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.05 * rng.normal(size=n)
    if not static_in_time:
        y = y + 0.05 * T
    return X, T, y


def _gp(X, T, y, hp=None):
    gp = ExactGP(SeparableKernel(space="matern52", time="matern32"),
                 hp or Hyperparameters(1.0, 0.2, 10.0, 0.01))
    gp.set_data(X, T, y)
    return gp


def _ystd(y):
    return (y - y.mean()) / y.std()


# ------------------------------------------------------------------------------------------------
# parametrisation and priors
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("h", [1e-6, 0.05, math.log(2.0), 3.0, 40.0])
def test_softplus_round_trip(h):
    assert softplus(inv_softplus(h)) == pytest.approx(h, rel=1e-12)
    assert softplus(0.0) == pytest.approx(math.log(2.0))  # GPyTorch's default initial value


@pytest.mark.parametrize("constraint,h", [
    (Constraint("positive"), 0.3),
    (Constraint("greater_than", 1e-4), 0.7),
    (Constraint("interval", 0.5, 6.0), 1.8),
    (Constraint("bounded", 1e-4), 2.0),
])
def test_constraint_round_trip_and_derivative(constraint, h):
    r = constraint.raw(h)
    assert constraint.value(r) == pytest.approx(h, rel=1e-10)
    fd = (constraint.value(r + 1e-6) - constraint.value(r - 1e-6)) / 2e-6
    assert constraint.dvalue(r) == pytest.approx(fd, rel=1e-6)


def test_gamma_prior_matches_scipy():
    for a, b in [(3.0, 6.0), (2.0, 0.15), (1.1, 0.05), (6.0, 1 / 0.3)]:
        prior = GammaPrior(a, b)
        for h in [0.05, 0.5, 2.0, 7.0]:
            ref = stats.gamma(a, scale=1.0 / b).logpdf(h)
            assert prior.log_density(h) == pytest.approx(ref, rel=1e-12)
            fd = (prior.log_density(h + 1e-6) - prior.log_density(h - 1e-6)) / 2e-6
            assert prior.dlog_density_dh(h) == pytest.approx(fd, rel=1e-6)
    assert GammaPrior(6.0, 1 / 0.3).mean == pytest.approx(1.8)
    assert GammaPrior(1.1, 0.05).mode == pytest.approx(2.0)
    assert GammaPrior(3.0, 6.0).log_density(0.0) == -math.inf  # a softplus underflow


def test_map_mode_survives_raw_values_that_underflow():
    """An L-BFGS-B line search can try raw parameters whose softplus is 0 (it did on Powell):
    a failed evaluation, not a crash; here even the start is degenerate, so nothing is
    installed and the fit reports failure, as mode 'lbfgs' does."""
    X, T, y = _data(n=10, seed=3)
    gp = ExactGP(SeparableKernel(space="matern52", time=None), Hyperparameters(1.0, 0.2, None, 0.1))
    gp.set_data(X, None, y)
    mode = FitMode("probe", "test", {"lengthscale_space": ParameterSpec(
        Constraint("positive"), GammaPrior(3.0, 6.0), init=1e-320)}, optimizer="lbfgs-raw")
    result = fit_hyperparameters(gp, mode=mode)
    assert not result.success and result.lml == -math.inf
    assert gp.hyperparameters == Hyperparameters(1.0, 0.2, None, 0.1)
    assert "left unchanged" in result.message
    with pytest.raises(ValueError, match="rate"):
        GammaPrior(2.0, 0.0)


def test_unknown_hyperparameter_in_a_mode_lists_valid_names():
    with pytest.raises(ValueError, match="valid: signal_var, lengthscale_space"):
        FitMode("x", "test", {"lengthscale": ParameterSpec()})


# ------------------------------------------------------------------------------------------------
# gpytorch-adam against a hand-written Adam on an independent LML
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("steps", [1, 5, 25])
def test_adam_mode_matches_independent_adam(steps):
    X, T, y = _data()
    ys = _ystd(y)
    z = _hand_adam(lambda v: _gpytorch_loss(v, X, T, ys), np.zeros(5), steps)
    gp = _gp(X, T, y)
    result = fit_hyperparameters(gp, mode="gpytorch-adam", mode_options={"steps": steps})
    hp = result.hyperparameters
    expected = [_sp(z[0]), _sp(z[1]), _sp(z[2]), _sp(z[3]) + 1e-4]
    got = [hp.signal_var, hp.lengthscale_space, hp.lengthscale_time, hp.noise_var]
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert gp.hyperparameters == hp  # installed
    assert result.n_evals == steps


def test_adam_time_scale_changes_the_unit_of_l_T():
    X, T, y = _data()
    ys = _ystd(y)
    z = _hand_adam(lambda v: _gpytorch_loss(v, X, T, ys, time_scale=60.0), np.zeros(5), 5)
    hp = fit_hyperparameters(_gp(X, T, y), mode="gpytorch-adam",
                             mode_options={"steps": 5, "time_scale": 60.0}).hyperparameters
    assert hp.lengthscale_time == pytest.approx(60.0 * _sp(z[2]), rel=1e-6)


def test_150_adam_steps_stop_short_of_the_optimum_lbfgs_reaches():
    """A function constant in time wants l_T -> large; Adam's 150 steps of ~0.1 in raw space
    cannot get past softplus(0 + ~15) seconds, while L-BFGS-B runs to its bound."""
    X, T, y = _data(n=12, static_in_time=True)
    adam = fit_hyperparameters(_gp(X, T, y), mode="gpytorch-adam").hyperparameters
    lbfgs = fit_hyperparameters(_gp(X, T, y)).hyperparameters
    assert adam.lengthscale_time < 20.0
    assert lbfgs.lengthscale_time > 200.0
    ys = _ystd(y)
    assert _lml(X, T, ys, lbfgs.signal_var, lbfgs.lengthscale_space, lbfgs.lengthscale_time,
                lbfgs.noise_var) > _lml(X, T, ys, adam.signal_var, adam.lengthscale_space,
                                        adam.lengthscale_time, adam.noise_var)


def test_adam_mode_cold_starts_every_fit():
    X, T, y = _data()
    a = fit_hyperparameters(_gp(X, T, y), mode="gpytorch-adam").hyperparameters
    gp = _gp(X, T, y, Hyperparameters(5.0, 2.0, 500.0, 0.5))
    b = fit_hyperparameters(gp, mode="gpytorch-adam").hyperparameters
    c = fit_hyperparameters(gp, mode="gpytorch-adam").hyperparameters  # after a previous fit
    assert a == b == c


# ------------------------------------------------------------------------------------------------
# MAP modes: stationarity of an independent objective at the optimum
# ------------------------------------------------------------------------------------------------
def test_botorch_map_is_a_stationary_point_of_the_independent_map_objective():
    X, T, y = _data(n=10, seed=3)
    ys = _ystd(y)
    result = fit_hyperparameters(_gp(X, T, y), mode="botorch-map",
                                 mode_options={"time_scale": 30.0})
    hp = result.hyperparameters
    c = float(result.message.split("constant mean ")[1].split(" ")[0])
    priors = [stats.gamma(2.0, scale=1 / 0.15), stats.gamma(3.0, scale=1 / 6.0),
              stats.gamma(3.0, scale=1 / 6.0), stats.gamma(1.1, scale=1 / 0.05)]

    def objective(v):  # natural values with time in units of 30 s; noise is raw (no transform)
        sv, ls, lt, nv, mean = _sp(v[0]), _sp(v[1]), _sp(v[2]), v[3], v[4]
        value = _lml(X, T, ys, sv, ls, 30.0 * lt, nv, mean)
        return value + sum(p.logpdf(h) for p, h in zip(priors, (sv, ls, lt, nv), strict=True))

    z = np.array([inv_softplus(hp.signal_var), inv_softplus(hp.lengthscale_space),
                  inv_softplus(hp.lengthscale_time / 30.0), hp.noise_var, c])
    grad = _fd_grad(objective, z, h=1e-5)
    assert hp.noise_var >= 1e-4
    if hp.noise_var > 1e-4 * 1.001:
        np.testing.assert_allclose(grad, 0.0, atol=2e-2)
    else:
        np.testing.assert_allclose(np.delete(grad, 3), 0.0, atol=2e-2)
    assert result.lml == pytest.approx(objective(z), abs=1e-3)


def test_uitvbo_map_fixes_scale_and_noise_and_keeps_l_S_in_its_interval():
    X, T, y = _data(n=10, seed=4)
    gp = ExactGP(SeparableKernel(space="matern52", time=None), Hyperparameters(1.0, 1.8, None, 0.3))
    gp.set_data(X, None, y)
    hp = fit_hyperparameters(gp, mode="uitvbo-map", mode_options={"noise_var": 0.05,
                                                                  "space_scale": 4.0}
                             ).hyperparameters
    assert hp.signal_var == 1.0 and hp.noise_var == pytest.approx(0.05)
    assert 0.5 / 4.0 <= hp.lengthscale_space <= 6.0 / 4.0
    prior = stats.gamma(6.0, scale=0.3)
    ys = _ystd(y)

    def objective(ls):  # l_S in the authors' units (x scaled by 4)
        return _lml(X, None, ys, 1.0, ls / 4.0, None, 0.05) + prior.logpdf(ls)

    ls = 4.0 * hp.lengthscale_space
    if 0.5 + 1e-3 < ls < 6.0 - 1e-3:
        assert (objective(ls + 1e-5) - objective(ls - 1e-5)) / 2e-5 == pytest.approx(0, abs=1e-3)


def test_uitvbo_map_warm_starts_from_the_current_fit():
    X, T, y = _data(n=10, seed=4)
    gp = ExactGP(SeparableKernel(space="matern52", time=None), Hyperparameters(1.0, 1.8, None, 0.3))
    gp.set_data(X, None, y)
    r = fit_hyperparameters(gp, mode="uitvbo-map", mode_options={"noise_var": "fit"})
    again = fit_hyperparameters(gp, mode="uitvbo-map", mode_options={"noise_var": "fit"})
    assert again.n_evals < r.n_evals  # started at the optimum


# ------------------------------------------------------------------------------------------------
# errors
# ------------------------------------------------------------------------------------------------
def test_unknown_mode_and_options_are_errors_listing_valid_choices():
    X, T, y = _data()
    with pytest.raises(ValueError, match="unknown fit mode 'adam'; valid: lbfgs, gpytorch-adam"):
        fit_hyperparameters(_gp(X, T, y), mode="adam")
    empty = ExactGP(SeparableKernel(), Hyperparameters(1.0, 0.2, 10.0, 0.01))
    with pytest.raises(ValueError, match="unknown fit mode"):
        fit_hyperparameters(empty, mode="nope")  # before the no-data early return
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['step'\]; valid: .*'steps'"):
        fit_hyperparameters(_gp(X, T, y), mode="gpytorch-adam", mode_options={"step": 3})
    with pytest.raises(ValueError, match="bounds, prior apply to mode 'lbfgs' only"):
        from tvbo.gp.lml import LogNormalPrior

        fit_hyperparameters(_gp(X, T, y), HyperparameterBounds(noise_var=(1e-3, 1.0)),
                            mode="botorch-map", prior=LogNormalPrior())
    with pytest.raises(ValueError, match="noise_var must be a number > 0 or 'fit'"):
        fit_hyperparameters(_gp(X, T, y), mode="uitvbo-map", mode_options={"noise_var": "x"})
    assert set(FIT_MODES) == {"lbfgs", "gpytorch-adam", "botorch-map", "uitvbo-map"}


def test_unknown_fit_mode_is_an_error_at_algorithm_construction():
    with pytest.raises(ValueError, match="unknown fit mode 'adam'; valid: lbfgs"):
        make("w-dbo-reference", fit_mode="adam")
    with pytest.raises(ValueError, match="prior apply to fit_mode 'lbfgs' only"):
        make("w-dbo", fit_mode="gpytorch-adam")  # the robust preset's priors are not dropped


# ------------------------------------------------------------------------------------------------
# wiring: presets and config lines
# ------------------------------------------------------------------------------------------------
def test_fit_mode_through_a_preset_option_and_defaults_unchanged():
    alg = make("wdbo-adam", preset="w-dbo-reference", fit_mode="gpytorch-adam",
               fit_mode_options={"time_scale": 60})
    assert alg.surrogate.options()["fit_mode"] == "gpytorch-adam"
    assert alg.surrogate._fit_mode.options["time_scale"] == 60.0
    for name in ("w-dbo", "w-dbo-reference", "bolt", "bolt-reference", "r-gp-ucb", "et-gp-ucb",
                 "tv-gp-ucb", "abo"):
        assert make(name).surrogate.options()["fit_mode"] == "lbfgs"
    paper = make("w-dbo-paper")
    assert paper.surrogate.options()["fit_mode"] == "gpytorch-adam"
    assert paper.dataset.options()["refit_after_removal"] is True
    assert paper.acquisition.options()["include_noise"] is True  # the code's noisy sigma
    assert paper.surrogate._fit_mode.options["time_scale"] == 600.0
    assert make("bolt-paper").surrogate.options()["fit_mode"] == "gpytorch-adam"
    tv = make("tv-gp-ucb", fit_mode="gpytorch-adam")
    assert tv.surrogate.options()["fit_mode"] == "gpytorch-adam"


def _run(algorithm, **options):
    """20 iterations on the closed-form toy with a cheap acquisition search: a few seconds."""
    options["acquisition"] = {"n_restarts": 2, "raw_samples": 32}
    alg = make(algorithm, **options)
    profile = HardwareProfile("unit", {"flop": 1e-9, "kernel": 1e-7, "call": 1e-4})
    engine = Engine(ToyBenchmark(horizon=1e6, cost=0.5), alg, CountedModel(profile, 1.0), seed=3,
                    options=EngineOptions(warmup=8, max_iterations=20))
    return engine.run()


def _post(rec, key):
    return np.array([s.get(key, np.nan) for s in rec.state[8:]], float)


def test_adam_mode_runs_in_the_simulator_deterministically():
    a = _run("w-dbo-reference", fit_mode="gpytorch-adam")
    b = _run("w-dbo-reference", fit_mode="gpytorch-adam")
    lbfgs = _run("w-dbo-reference")
    lt = _post(a, "lengthscale_time")
    assert lt.size == 12 and np.all(np.isfinite(lt))
    np.testing.assert_array_equal(lt, _post(b, "lengthscale_time"))
    np.testing.assert_array_equal(a.dataset_size, b.dataset_size)
    assert not np.array_equal(lt, _post(lbfgs, "lengthscale_time"))


def test_reset_baseline_fits_eps_with_the_surrogate_mode():
    rec = _run("r-gp-ucb", fit_mode="botorch-map")
    eps = _post(rec, "reset_eps")
    assert np.all(np.isfinite(eps)) and np.all((eps > 0) & (eps < 1))
