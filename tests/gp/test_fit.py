"""Hyperparameter fitting: analytic gradients, recovery on prior samples, bounds, warm starts."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from tvbo.gp.exact import ExactGP
from tvbo.gp.fit import fit_hyperparameters
from tvbo.gp.kernels import CORRELATIONS, HyperparameterBounds, Hyperparameters, SeparableKernel
from tvbo.gp.lml import log_marginal_likelihood_and_grad, parameter_names
from tvbo.work import WorkCounter


def dense_lml(kern: SeparableKernel, hp: Hyperparameters, gp: ExactGP) -> float:
    """Independent LML: scipy's Gaussian log-density of the standardised targets."""
    X, T, ys = gp.X, gp.T, gp.y_standardized
    Delta = kern.matrix(X, T, X, T, hp) + hp.noise_var * np.eye(len(ys))
    return float(multivariate_normal(np.zeros(len(ys)), Delta).logpdf(ys))


def with_log_param(hp: Hyperparameters, name: str, delta: float) -> Hyperparameters:
    values = {
        "signal_var": hp.signal_var,
        "lengthscale_space": hp.lengthscale_space,
        "lengthscale_time": hp.lengthscale_time,
        "noise_var": hp.noise_var,
    }
    values[name] = values[name] * np.exp(delta)
    return Hyperparameters(**values)


def sample_prior(
    kern: SeparableKernel, hp: Hyperparameters, n: int, d: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    T = np.sort(rng.random(n) * 300.0)
    K = kern.matrix(X, T, X, T, hp) + hp.noise_var * np.eye(n)
    y = np.linalg.cholesky(K) @ rng.standard_normal(n)
    return X, T, 2.0 + 3.0 * y  # arbitrary offset/scale: standardisation must absorb them


@pytest.mark.parametrize("space", CORRELATIONS)
@pytest.mark.parametrize("time", ["matern32", "matern12", None])
@pytest.mark.parametrize("fit_noise", [True, False])
def test_analytic_gradient_matches_finite_differences(space, time, fit_noise) -> None:
    kern = SeparableKernel(space, time)
    rng = np.random.default_rng(0)
    X, T = rng.random((30, 2)), rng.random(30) * 100
    y = np.sin(5 * X[:, 0]) + np.cos(T / 30) + 0.1 * rng.standard_normal(30)
    hp = Hyperparameters(1.4, 0.3, 40.0 if time else None, 0.05)
    gp = ExactGP(kern, hp)
    gp.set_data(X, T if time else None, y)
    lml, grad = log_marginal_likelihood_and_grad(gp, hp, fit_noise=fit_noise)
    names = parameter_names(kern, fit_noise)
    assert grad.shape == (len(names),)
    assert lml == pytest.approx(dense_lml(kern, hp, gp), rel=1e-10)
    h = 1e-5
    for g, name in zip(grad, names, strict=True):
        up = dense_lml(kern, with_log_param(hp, name, h), gp)
        down = dense_lml(kern, with_log_param(hp, name, -h), gp)
        assert g == pytest.approx((up - down) / (2 * h), rel=1e-5, abs=1e-6), name


def test_fit_recovers_lengthscales_of_prior_sample() -> None:
    kern = SeparableKernel("matern52", "matern32")
    truth = Hyperparameters(1.0, 0.25, 60.0, 0.01)
    X, T, y = sample_prior(kern, truth, 150, 2, seed=11)
    gp = ExactGP(kern, Hyperparameters(1.0, 1.0, 300.0, 0.1))
    gp.set_data(X, T, y)
    res = fit_hyperparameters(gp, n_restarts=2, rng=np.random.default_rng(0))
    hp = res.hyperparameters
    assert gp.hyperparameters == hp
    assert 0.25 / 1.5 < hp.lengthscale_space < 0.25 * 1.5
    assert 60.0 / 1.5 < hp.lengthscale_time < 60.0 * 1.5
    assert hp.noise_var < 0.05
    assert res.lml == pytest.approx(gp.log_marginal_likelihood(), abs=1e-8)
    assert res.lml > dense_lml(kern, truth, gp) - 1e-6  # the MLE beats the truth


def test_fit_recovers_spatial_lengthscale_without_time() -> None:
    kern = SeparableKernel("rbf", None)
    truth = Hyperparameters(1.0, 0.2, None, 0.01)
    X, _, y = sample_prior(kern, truth, 150, 2, seed=3)
    gp = ExactGP(kern, Hyperparameters(1.0, 0.8, None, 0.1))
    gp.set_data(X, None, y)
    hp = fit_hyperparameters(gp).hyperparameters
    assert hp.lengthscale_time is None
    assert 0.2 / 1.5 < hp.lengthscale_space < 0.2 * 1.5


def test_fit_respects_bounds() -> None:
    kern = SeparableKernel("matern52", "matern32")
    truth = Hyperparameters(1.0, 0.15, 20.0, 0.01)
    X, T, y = sample_prior(kern, truth, 80, 2, seed=5)
    gp = ExactGP(kern, Hyperparameters(1.0, 5.0, 5000.0, 0.5))  # init outside the bounds
    gp.set_data(X, T, y)
    bounds = HyperparameterBounds(
        signal_var=(0.5, 2.0),
        lengthscale_space=(0.4, 3.0),
        lengthscale_time=(100.0, 1000.0),
        noise_var=(0.02, 0.5),
    )
    hp = fit_hyperparameters(gp, bounds, n_restarts=2).hyperparameters
    for name in ("signal_var", "lengthscale_space", "lengthscale_time", "noise_var"):
        lo, hi = getattr(bounds, name)
        assert lo * (1 - 1e-12) <= getattr(hp, name) <= hi * (1 + 1e-12), name
    # the truth lies below the lengthscale boxes, so the optimum sits on their lower faces
    assert hp.lengthscale_space == pytest.approx(0.4, rel=1e-6)
    assert hp.lengthscale_time == pytest.approx(100.0, rel=1e-6)


def test_warm_start_needs_fewer_evaluations_than_cold_start() -> None:
    kern = SeparableKernel("matern52", "matern32")
    truth = Hyperparameters(1.0, 0.3, 80.0, 0.02)
    X, T, y = sample_prior(kern, truth, 121, 3, seed=8)
    cold_init = Hyperparameters(1.0, 1.0, 300.0, 0.1)
    gp = ExactGP(kern, cold_init)
    gp.set_data(X[:120], T[:120], y[:120])
    previous = fit_hyperparameters(gp).hyperparameters
    gp.append(X[120], T[120], y[120])
    warm = fit_hyperparameters(gp, init=previous)
    gp.set_hyperparameters(cold_init)
    cold = fit_hyperparameters(gp, init=cold_init)
    assert warm.n_evals < cold.n_evals
    assert warm.lml == pytest.approx(cold.lml, abs=0.05)


def test_fixed_noise_and_restart_reproducibility() -> None:
    kern = SeparableKernel("matern52", "matern32")
    X, T, y = sample_prior(kern, Hyperparameters(1.0, 0.3, 50.0, 0.05), 60, 2, seed=2)
    gp = ExactGP(kern, Hyperparameters(1.0, 0.5, 100.0, 0.123))
    gp.set_data(X, T, y)
    a = fit_hyperparameters(gp, fit_noise=False, n_restarts=2, rng=np.random.default_rng(4))
    assert a.hyperparameters.noise_var == 0.123
    gp.set_hyperparameters(Hyperparameters(1.0, 0.5, 100.0, 0.123))
    b = fit_hyperparameters(gp, fit_noise=False, n_restarts=2, rng=np.random.default_rng(4))
    assert a.hyperparameters == b.hyperparameters and a.n_evals == b.n_evals
    gp.set_hyperparameters(Hyperparameters(1.0, 0.5, 100.0, 0.123))
    single = fit_hyperparameters(gp, fit_noise=False)
    assert a.n_evals > single.n_evals and a.lml >= single.lml - 1e-9


def test_fit_is_robust_to_singular_data_and_records_jitter() -> None:
    kern = SeparableKernel("rbf", "matern32")
    rng = np.random.default_rng(1)
    X = np.repeat(rng.random((6, 2)), 3, axis=0)
    T = np.repeat(rng.random(6) * 50, 3)
    y = rng.standard_normal(18)  # duplicated inputs with different outputs, zero noise
    hp = Hyperparameters(1.0, 0.3, 30.0, 0.0)
    gp = ExactGP(kern, hp)
    gp.set_data(X, T, y)
    before = gp.jitter_events
    res = fit_hyperparameters(gp, fit_noise=False, max_iter=10)
    assert np.isfinite(res.lml)
    assert res.jitter_events > 0 and gp.jitter_events >= before + res.jitter_events
    assert np.all(np.isfinite(gp.predict(X, 10.0).mean))


def test_fit_reports_work_in_fit_phase_deterministically() -> None:
    def run() -> tuple[dict, int]:
        work = WorkCounter()
        kern = SeparableKernel()
        X, T, y = sample_prior(kern, Hyperparameters(1.0, 0.3, 50.0, 0.05), 50, 2, seed=6)
        gp = ExactGP(kern, Hyperparameters(1.0, 0.5, 100.0, 0.1), work=work)
        gp.set_data(X, T, y)
        res = fit_hyperparameters(gp, max_iter=20)
        return work.counts(), res.n_evals

    (counts, n_evals), (again, _) = run(), run()
    assert counts == again
    fit = counts["fit"]
    assert fit["call"] == n_evals + 1  # one per LML+grad evaluation, one for set_hyperparameters
    assert fit["kernel"] == (n_evals + 1) * 50 * 50
    assert fit["flop"] >= n_evals * (50**3 / 3 + 50**3)
    assert counts["update"]["call"] == 1  # the initial set_data


def test_fit_argument_errors() -> None:
    gp = ExactGP(SeparableKernel(), Hyperparameters(1.0, 0.5, 100.0, 0.1))
    with pytest.raises(ValueError, match="max_iter"):
        fit_hyperparameters(gp, max_iter=0)
    with pytest.raises(ValueError, match="n_restarts"):
        fit_hyperparameters(gp, n_restarts=-1)
    res = fit_hyperparameters(gp)
    assert not res.success and res.n_evals == 0 and "no data" in res.message


def test_a_lengthscale_pinned_at_its_bound_is_escaped():
    """Samples 8 s apart from a GP with l_T = 80 s, fit warm-started at l_T = 1 s (the lower
    bound): there the likelihood is flat (every pair looks independent) and a plain local fit
    stays put; escaping re-optimises from the middle of the bounds and finds the real optimum."""
    from tvbo.gp.exact import ExactGP
    from tvbo.gp.fit import fit_hyperparameters
    from tvbo.gp.kernels import HyperparameterBounds, Hyperparameters, SeparableKernel

    rng = np.random.default_rng(5)
    n = 60
    X = rng.uniform(size=(n, 2))
    T = 8.0 * np.arange(n)
    kernel = SeparableKernel("matern52", "matern32")
    truth = Hyperparameters(1.0, 0.4, 80.0, 0.01)
    K = kernel.matrix(X, T, X, T, truth) + 0.01 * np.eye(n)
    y = np.linalg.cholesky(K) @ rng.standard_normal(n)
    start = Hyperparameters(1.0, 0.4, 1.0, 0.01)
    bounds = HyperparameterBounds()

    stuck = ExactGP(kernel, start)
    stuck.set_data(X, T, y)
    plain = fit_hyperparameters(stuck, bounds, escape_bounds=False)
    freed = ExactGP(kernel, start)
    freed.set_data(X, T, y)
    escaped = fit_hyperparameters(freed, bounds)
    assert plain.hyperparameters.lengthscale_time < 2.0  # the flat region keeps it at the bound
    assert escaped.lml > plain.lml + 1.0
    assert 20.0 < escaped.hyperparameters.lengthscale_time < 400.0


# ------------------------------------------------------------------------------------------------
# MAP-II: log-normal priors
# ------------------------------------------------------------------------------------------------
def _prior_data(seed: int = 3, n: int = 25):
    kern = SeparableKernel("matern52", "matern32")
    truth = Hyperparameters(1.0, 0.3, 60.0, 0.02)
    X, T, y = sample_prior(kern, truth, n, 2, seed)
    gp = ExactGP(kern, Hyperparameters(1.0, 0.2, 100.0, 0.05))
    gp.set_data(X, T, y)
    return kern, gp


def _dense_log_posterior(kern, hp, gp, priors) -> float:
    """Independent: scipy's Gaussian log-density plus log N(log h; log median, log_sd^2)."""
    value = dense_lml(kern, hp, gp)
    for name, (median, log_sd) in priors.items():
        value -= 0.5 * ((np.log(getattr(hp, name)) - np.log(median)) / log_sd) ** 2
    return value


def test_prior_adds_the_log_normal_density_and_its_exact_gradient() -> None:
    from tvbo.gp.lml import LMLObjective, LogNormalPrior

    kern, gp = _prior_data()
    priors = {"lengthscale_time": (300.0, 0.7), "noise_var": (np.exp(-4.0), 1.0)}
    objective = LMLObjective(
        kern, gp.X, gp.T, gp.y_standardized, prior=LogNormalPrior.from_mapping(priors)
    )
    hp = Hyperparameters(1.3, 0.25, 45.0, 0.03)
    value, grad = objective(objective.to_theta(hp))
    assert value == pytest.approx(_dense_log_posterior(kern, hp, gp, priors), rel=1e-10)
    h = 1e-5
    for g, name in zip(grad, objective.names, strict=True):
        up = _dense_log_posterior(kern, with_log_param(hp, name, h), gp, priors)
        down = _dense_log_posterior(kern, with_log_param(hp, name, -h), gp, priors)
        assert g == pytest.approx((up - down) / (2 * h), rel=1e-5, abs=1e-6), name


def test_map_fit_is_a_stationary_point_of_the_dense_log_posterior() -> None:
    from tvbo.gp.lml import LogNormalPrior

    kern, gp = _prior_data()
    priors = {"lengthscale_time": (500.0, 0.5), "lengthscale_space": (0.3, 1.0)}
    res = fit_hyperparameters(gp, prior=LogNormalPrior.from_mapping(priors), max_iter=200)
    hp = res.hyperparameters
    assert res.lml == pytest.approx(_dense_log_posterior(kern, hp, gp, priors), rel=1e-9)
    h = 1e-4
    for name in parameter_names(kern):
        up = _dense_log_posterior(kern, with_log_param(hp, name, h), gp, priors)
        down = _dense_log_posterior(kern, with_log_param(hp, name, -h), gp, priors)
        assert abs((up - down) / (2 * h)) < 2e-2, name
    # the prior pulls l_T towards its median relative to plain ML
    _, plain_gp = _prior_data()
    plain = fit_hyperparameters(plain_gp, max_iter=200).hyperparameters
    assert abs(np.log(hp.lengthscale_time / 500.0)) < abs(np.log(plain.lengthscale_time / 500.0))


def test_a_sharp_prior_pins_its_hyperparameter_and_the_empty_prior_is_ml() -> None:
    from tvbo.gp.lml import LogNormalPrior

    _, gp = _prior_data()
    res = fit_hyperparameters(gp, prior=LogNormalPrior.from_mapping({"noise_var": (0.2, 1e-3)}))
    assert res.hyperparameters.noise_var == pytest.approx(0.2, rel=1e-2)
    _, a = _prior_data()
    _, b = _prior_data()
    ml = fit_hyperparameters(a)
    empty = fit_hyperparameters(b, prior=LogNormalPrior.from_mapping({}))
    assert empty.lml == ml.lml and empty.hyperparameters == ml.hyperparameters


@pytest.mark.parametrize(
    ("mapping", "match"),
    [
        ({"lengthscale": (1.0, 1.0)}, "unknown hyperparameter 'lengthscale'; valid: signal_var"),
        ({"noise_var": (0.0, 1.0)}, "median must be finite and > 0"),
        ({"noise_var": (0.1, 0.0)}, "log_sd must be finite and > 0"),
        ({"noise_var": (0.1,)}, "must be a pair"),
    ],
)
def test_bad_priors_are_rejected(mapping, match) -> None:
    from tvbo.gp.lml import LogNormalPrior

    with pytest.raises(ValueError, match=match):
        LogNormalPrior.from_mapping(mapping)
