"""ABO's look-ahead UCB over space and future time (tvbo.algorithms.abo.lookahead) and its beta."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tvbo.acquisition import AcquisitionOptimizer, make_beta
from tvbo.acquisition.beta import BETA_RULES, abo_kappa
from tvbo.acquisition.ucb import ucb
from tvbo.algorithms.abo.lookahead import LookaheadBeta, LookaheadUCB, LookaheadWindow
from tvbo.algorithms.boke.kernel_regression import KernelRegression
from tvbo.gp.exact import ExactGP, joint_posterior
from tvbo.gp.kernels import Hyperparameters, SeparableKernel
from tvbo.models import HasSpaceTimeGradient, Model
from tvbo.work import WorkCounter


def _gp(n: int = 9, d: int = 2, seed: int = 0) -> ExactGP:
    rng = np.random.default_rng(seed)
    hp = Hyperparameters(signal_var=1.3, lengthscale_space=0.4, lengthscale_time=3.0,
                         noise_var=0.05)
    gp = ExactGP(SeparableKernel("matern52", "matern32"), hp, work=WorkCounter())
    gp.set_data(rng.uniform(size=(n, d)), rng.uniform(0, 10, size=n), rng.normal(size=n) * 2 + 1)
    return gp


def _search(**kw) -> LookaheadUCB:
    return LookaheadUCB(AcquisitionOptimizer(n_restarts=4, raw_samples=64, maxiter=50), **kw)


def test_the_exact_gp_has_the_space_time_capability_and_it_is_the_joint_posterior():
    gp = _gp()
    assert isinstance(gp, Model) and isinstance(gp, HasSpaceTimeGradient)
    assert not isinstance(KernelRegression(2), HasSpaceTimeGradient)
    rng = np.random.default_rng(1)
    X, T = rng.uniform(size=(4, 2)), rng.uniform(8, 12, size=4)
    a, b = gp.predict_space_time(X, T, grad=True), joint_posterior(gp, X, T, grad=True)
    for field in ("mean", "var", "dmean", "dvar"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_abo_beta_rule_is_registered_with_its_citation():
    rule = BETA_RULES["abo"]
    assert "Nyikosa" in rule.citation and rule.returns == "root_beta"
    direct = 0.2 * math.sqrt(2 * math.log(12 ** (2 / 2 + 2) * math.pi**2 / (3 * 0.05)))
    assert rule(i=12, d=2, delta=0.05) == pytest.approx(direct, rel=1e-12)
    assert LookaheadBeta(None, 0.05)(2, 40, 12) == pytest.approx(direct**2, rel=1e-12)
    assert LookaheadBeta(make_beta("wdbo"))(2, 40, 12) == pytest.approx(0.2 * 2 * math.log(80))
    with pytest.raises(ValueError, match="kappa_delta"):
        LookaheadBeta(None, 1.0)
    with pytest.raises(ValueError, match="abo_kappa needs"):
        abo_kappa(0, 2)


def test_window_time_gradient_is_scaled_by_the_window_length():
    gp = _gp()
    box = LookaheadWindow(gp, t_lo=10.0, span=4.0)
    U = np.array([[0.2, 0.7, 0.3], [0.6, 0.1, 0.8]])
    values, grads = ucb(box, U, 0.0, 2.0, grad=True)
    eps = 1e-6
    for j in range(3):
        e = np.zeros(3)
        e[j] = eps
        up, _ = ucb(box, U + e, 0.0, 2.0, grad=False)
        dn, _ = ucb(box, U - e, 0.0, 2.0, grad=False)
        np.testing.assert_allclose(grads[:, j], (up - dn) / (2 * eps), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(box.times(U), [11.2, 13.2])


def test_over_window_stays_in_the_window_and_beats_random_space_time_points():
    gp = _gp()
    x, t_best = _search().over_window(gp, 10.0, 14.0, 2.0, 2, np.random.default_rng(0))
    assert 10.0 <= t_best <= 14.0 and np.all((0 <= x) & (x <= 1))
    rng = np.random.default_rng(5)
    X, T = rng.random((3000, 2)), rng.uniform(10.0, 14.0, 3000)

    def value(X, T):
        p = gp.predict_space_time(X, T)
        return p.mean + math.sqrt(2.0) * np.sqrt(np.maximum(p.var, 1e-12))

    assert value(x[None], np.array([t_best]))[0] >= value(X, T).max() - 1e-6
    assert gp.work.counts()["update"]["call"] > 5  # model and optimiser counted on gp.work


def test_over_window_on_candidates_is_exhaustive_over_the_time_grid():
    gp = _gp()
    cand = np.random.default_rng(2).random((30, 2))
    x, t_best = _search(time_grid=5).over_window(gp, 10.0, 12.0, 1.0, 2,
                                                  np.random.default_rng(0), cand)
    grid = [(c, t) for t in np.linspace(10.0, 12.0, 5) for c in cand]
    vals = [ucb(gp, c[None], t, 1.0, grad=False)[0][0] for c, t in grid]
    best_c, best_t = grid[int(np.argmax(vals))]
    np.testing.assert_array_equal(x, best_c)
    assert t_best == pytest.approx(best_t)


def test_at_present_is_ucb_at_the_present_time():
    gp = _gp()
    x = _search().at_present(gp, 11.0, 2.0, 2, np.random.default_rng(0))
    others = np.random.default_rng(3).random((3000, 2))
    assert ucb(gp, x[None], 11.0, 2.0, grad=False)[0][0] >= ucb(
        gp, others, 11.0, 2.0, grad=False)[0].max() - 1e-6


def test_over_window_needs_the_capability_and_time_grid_is_checked():
    model = KernelRegression(2)
    model.set_data(np.random.default_rng(0).random((4, 2)), None, np.arange(4.0))
    with pytest.raises(TypeError, match="HasSpaceTimeGradient"):
        _search().over_window(model, 0.0, 1.0, 1.0, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="time_grid must be an integer >= 2"):
        _search(time_grid=1)
    with pytest.raises(ValueError, match="time_grid must be an integer >= 2"):
        _search(time_grid=2.5)
