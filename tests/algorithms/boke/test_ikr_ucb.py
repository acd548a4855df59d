"""IKR-UCB over the kernel-regression model, and BOKE's registered beta rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tvbo.acquisition.beta import BETA_RULES, beta_rule
from tvbo.acquisition.optimize import AcquisitionOptimizer
from tvbo.algorithms.boke.ikr_ucb import (
    IKRUCBBeta,
    ScreenAndPolish,
    ikr_ucb_score,
    ikr_ucb_value,
    make_search,
    maximize_ikr_ucb,
    y_scale,
)
from tvbo.algorithms.boke.kernel_regression import KernelRegression
from tvbo.work import WorkCounter


def _model(n=15, d=2, seed=0, **options):
    rng = np.random.default_rng(seed)
    model = KernelRegression(d, work=WorkCounter(), **options)
    model.set_data(rng.random((n, d)), np.arange(float(n)), rng.standard_normal(n))
    return model


# -- beta rules ---------------------------------------------------------------------------------
def test_boke_rules_are_registered_with_citations_and_match_the_spec():
    for name in ("boke", "boke-wdbo"):
        assert "Zhu" in BETA_RULES[name].citation or "BOKE" in BETA_RULES[name].citation
    # spec_boke.md §2.8 table: beta / s^2 at t = 10, 200 (delta = 0.1)
    assert beta_rule("boke")(t=10, noise_scale=1.0, delta=0.1) == pytest.approx(17.583, abs=1e-3)
    assert beta_rule("boke")(t=200, noise_scale=2.0, delta=0.1) == pytest.approx(
        4 * 29.566, abs=4e-3)
    assert beta_rule("boke-wdbo")(d=3, t=7.5, y_scale=2.0) == pytest.approx(
        0.2 * 3 * math.log(15.0) * 4.0)


def test_ikr_ucb_beta_in_units_of_the_observed_spread():
    y = np.array([1.0, 3.0, 2.0, 6.0])
    s = float(np.std(y))
    assert y_scale(y) == s and y_scale(y[:1]) == 1.0 and y_scale(np.ones(3)) == 1.0
    expected = 2 * (0.1 * s) ** 2 * math.log(2 * math.pi**2 * 16 / (3 * 0.1))
    assert IKRUCBBeta()(4, y, 2) == pytest.approx(expected, rel=1e-12)
    assert IKRUCBBeta("wdbo")(0.5, y, 2) == pytest.approx(0.2 * 2 * math.log(2) * s * s)
    assert IKRUCBBeta(1.5)(4, y, 2) == 1.5
    with pytest.raises(ValueError, match="paper, wdbo or a number"):
        IKRUCBBeta("big")
    with pytest.raises(ValueError, match="noise_scale"):
        IKRUCBBeta(noise_scale=0.0)


# -- IKR-UCB ------------------------------------------------------------------------------------
def test_score_is_asinh_of_the_value_and_its_gradient_matches_finite_differences():
    model = _model()
    Q = np.array([[0.31, 0.72], [0.9, 0.1], [0.5, 0.5]])
    beta = 3.0
    score, g = ikr_ucb_score(model, Q, beta, True)
    np.testing.assert_allclose(score, np.arcsinh(ikr_ucb_value(model, Q, beta)), rtol=1e-12)
    eps = 1e-6
    for j in range(2):
        e = np.zeros(2)
        e[j] = eps
        up, _ = ikr_ucb_score(model, Q + e, beta, False)
        dn, _ = ikr_ucb_score(model, Q - e, beta, False)
        np.testing.assert_allclose(g[:, j], (up - dn) / (2 * eps), rtol=1e-5, atol=1e-7)


def test_points_without_density_score_by_their_distance_to_the_data():
    model = KernelRegression(2, kernel="uniform", bandwidth=0.05)
    model.set_data(np.array([[0.1, 0.1]]), None, np.array([1.0]))
    score, _ = ikr_ucb_score(model, np.array([[0.5, 0.1], [0.9, 0.1], [0.11, 0.1]]), 1.0, False)
    assert score[1] > score[0] > 1e4 > score[2]
    assert score[1] - score[0] == pytest.approx(0.4)


@pytest.mark.parametrize("search", ["screen", "multistart"])
def test_both_searches_beat_random_points(search):
    model = _model(n=25)
    beta = 2.0
    finder = make_search(search, n_candidates=128, n_starts=4, maxiter=50)
    assert isinstance(finder, ScreenAndPolish if search == "screen" else AcquisitionOptimizer)
    x = maximize_ikr_ucb(model, beta, np.random.default_rng(0), finder)
    others = np.random.default_rng(1).random((2000, 2))
    best = ikr_ucb_value(model, others, beta).max()
    assert ikr_ucb_value(model, x[None], beta)[0] >= best - 1e-9
    assert model.work.counts()["update"]["call"] > 3  # the model counted every evaluation


def test_search_options_are_checked():
    with pytest.raises(ValueError, match="valid: screen, multistart"):
        make_search("grid", n_candidates=8, n_starts=2, maxiter=5)
    with pytest.raises(ValueError, match="n_candidates"):
        ScreenAndPolish(n_candidates=0)
