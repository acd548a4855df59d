"""W-GP-UCB's surrogate (tvbo.algorithms.weighted.parts): the paper's unsimplified formula,
gradients against finite differences, the exact GP at gamma = 1, the weights, the preset and bad
input (the weighted GP itself: test_weighted_gp.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tvbo.algorithms as algorithms
from tvbo.algorithms import ProblemInfo, build_component
from tvbo.algorithms.weighted.parts import WeightedGPSurrogate, discount_weights
from tvbo.gp.exact import ExactGP
from tvbo.gp.kernels import Hyperparameters, SeparableKernel
from tvbo.work import WorkCounter


def _surrogate(d=1, **options) -> WeightedGPSurrogate:
    alg = algorithms.make("w-gp-ucb", surrogate=options)
    alg.setup(ProblemInfo(d=d), np.random.default_rng(0), WorkCounter())
    return alg.surrogate


def _fill(s: WeightedGPSurrogate, n=8, d=1, seed=1):
    rng = np.random.default_rng(seed)
    for k in range(n):
        x = rng.uniform(size=d)
        s.append(x, 2.0 * k, float(np.sin(6 * x[0]) + 0.1 * rng.normal()))


def test_surrogate_matches_the_papers_unsimplified_formula():
    hp = {"signal_var": 1.7, "lengthscale_space": 0.25, "noise_var": 0.2}
    s = _surrogate(
        discount=0.8, regularizer=0.05, hyperparameters="fixed", initial=hp, standardize=False
    )
    _fill(s)
    Xq = np.linspace(0, 1, 11)[:, None]
    pred = s.predict(Xq, 0.0)
    # dense, independent: a = (K + lam W^-1)^-1 k; sigma~^2 = |a|^2 + (k - 2 a.k + a.K a) / lam
    kern = SeparableKernel("matern52", None)
    h = Hyperparameters(1.7, 0.25, None, 0.2)
    K = kern.matrix(s.X, None, s.X, None, h)
    kq = kern.matrix(s.X, None, Xq, None, h)  # (n, m)
    w = 0.8 ** (7.0 - np.arange(8))
    a = np.linalg.solve(K + 0.05 * np.diag(1 / w), kq)
    width2 = np.sum(a * a, 0) + (1.7 - 2 * np.sum(a * kq, 0) + np.sum(a * (K @ a), 0)) / 0.05
    np.testing.assert_allclose(pred.mean, a.T @ s.y, rtol=1e-9)
    np.testing.assert_allclose(pred.var, 0.05 * width2, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(s.weights(), w, rtol=1e-12)


def test_surrogate_gradients_match_finite_differences():
    s = _surrogate(d=2, discount=0.9)
    _fill(s, n=10, d=2)
    s.fit()  # ML hyperparameters and standardisation in play
    Xq = np.random.default_rng(7).uniform(0.05, 0.95, size=(4, 2))
    pred = s.predict(Xq, 0.0, grad=True)
    h = 1e-6
    for j in range(2):
        E = np.zeros(2)
        E[j] = h
        p, m = s.predict(Xq + E, 0.0), s.predict(Xq - E, 0.0)
        np.testing.assert_allclose(
            pred.dmean[:, j], (p.mean - m.mean) / (2 * h), rtol=1e-5, atol=1e-7
        )
        np.testing.assert_allclose(pred.dvar[:, j], (p.var - m.var) / (2 * h), rtol=1e-5, atol=1e-7)


def test_gamma_one_is_the_gp_posterior_with_noise_lambda():
    hp = Hyperparameters(1.2, 0.3, None, 0.07)
    s = _surrogate(
        discount=1.0,
        hyperparameters="fixed",
        initial={"signal_var": 1.2, "lengthscale_space": 0.3, "noise_var": 0.07},
    )
    _fill(s, n=9)
    gp = ExactGP(SeparableKernel("matern52", None), hp)
    gp.set_data(s.X, None, s.y)
    Xq = np.linspace(0, 1, 7)[:, None]
    ours, ref = s.predict(Xq, 0.0, grad=True), gp.predict(Xq, None, grad=True)
    for field in ("mean", "var", "dmean", "dvar"):
        np.testing.assert_allclose(getattr(ours, field), getattr(ref, field), rtol=1e-8, atol=1e-10)


def test_discounting_forgets_old_data():
    """Two contradicting observations at the same x: the newer one wins the weighted mean."""
    s = _surrogate(discount=0.5, regularizer=0.1, hyperparameters="fixed", standardize=False)
    x = np.array([0.5])
    s.append(x, 0.0, -1.0)
    for k in range(1, 6):
        s.append(np.array([0.9]), float(k), 0.0)  # unrelated points push the first one back
    s.append(x, 6.0, 1.0)
    assert s.predict(x[None, :], 0.0).mean[0] > 0.8
    unweighted = _surrogate(
        discount=1.0, regularizer=0.1, hyperparameters="fixed", standardize=False
    )
    for xi, ti, yi in zip(s.X, s.T, s.y, strict=True):
        unweighted.append(xi, ti, yi)
    assert abs(unweighted.predict(x[None, :], 0.0).mean[0]) < 0.1


def test_weights_by_step_and_by_time_and_removal():
    s = _surrogate(discount=0.9, hyperparameters="fixed")
    for k, t in enumerate([0.0, 1.0, 5.0, 6.0]):
        s.append(np.array([0.1 * k]), t, float(k))
    np.testing.assert_allclose(s.weights(), 0.9 ** np.array([3, 2, 1, 0.0]))
    s.remove(3)  # the newest goes: weights are relative to the newest HELD observation
    np.testing.assert_allclose(s.steps, [1, 2, 3])
    np.testing.assert_allclose(s.weights(), 0.9 ** np.array([2, 1, 0.0]))
    s.append(np.array([0.7]), 9.0, 0.0)  # step 5: the global count continues
    np.testing.assert_allclose(s.weights(), 0.9 ** np.array([4, 3, 2, 0.0]))
    st = s.state()
    assert st["weight_min"] == pytest.approx(0.9**4) and st["discount"] == 0.9
    assert st["weight_sum"] == pytest.approx(np.sum(0.9 ** np.array([4, 3, 2, 0.0])))
    by_time = _surrogate(discount=0.9, discount_by="time", time_unit=2.0, hyperparameters="fixed")
    for k, t in enumerate([0.0, 1.0, 5.0, 6.0]):
        by_time.append(np.array([0.1 * k]), t, float(k))
    np.testing.assert_allclose(by_time.weights(), 0.9 ** (np.array([6, 5, 1, 0.0]) / 2.0))
    by_time.clear()
    assert by_time.n == 0 and by_time.predict(np.zeros((1, 1)), 0.0).var[0] == pytest.approx(1.0)


def test_weight_floor_keeps_the_factor_finite():
    w = discount_weights(np.array([0.0, 10.0, 1e5]), 0.5, min_weight=1e-12)
    assert w[0] == 1.0 and w[1] == pytest.approx(0.5**10) and w[2] == 1e-12
    with pytest.raises(ValueError, match=">= 0"):
        discount_weights(np.array([-1.0]), 0.5)


def test_ml_mode_fits_on_the_unweighted_data_and_lambda_follows_the_noise():
    s = _surrogate(discount=0.95)
    _fill(s, n=12)
    s.fit()
    gp = ExactGP(SeparableKernel("matern52", None), Hyperparameters(1.0, 0.2, None, 0.01))
    gp.set_data(s.X, None, s.y)
    from tvbo.gp.fit import fit_hyperparameters

    fit_hyperparameters(gp, s.bounds, max_iter=s.fit_max_iter, rng=np.random.default_rng(0))
    assert s.hyperparameters == gp.hyperparameters
    assert s.regularizer == gp.hyperparameters.noise_var
    assert s.state()["regularizer"] == s.state()["noise_var"]


def test_the_preset_runs_and_reports_one_cholesky_per_step():
    alg = algorithms.make("w-gp-ucb", acquisition={"n_restarts": 3, "raw_samples": 32})
    work = WorkCounter()
    alg.setup(ProblemInfo(d=2), np.random.default_rng(0), work)
    rng = np.random.default_rng(1)
    for k in range(6):
        x = rng.uniform(size=2)
        alg.ingest(x, float(k), float(-np.sum(x**2)), now=float(k), warmup=True)
    for k in range(6, 10):
        x = alg.propose(float(k))
        assert x.shape == (2,) and np.all((0 <= x) & (x <= 1))
        alg.ingest(x, float(k), float(-np.sum(x**2)), now=float(k), warmup=False)
    assert alg.dataset_size() == 10
    alg.surrogate.model()  # K cached for the fitted hyperparameters
    work.clear()
    alg.surrogate.append(np.array([0.2, 0.2]), 11.0, 0.0)
    alg.surrogate.model()
    n = 11
    counts = work.counts()["update"]
    assert counts["flop"] >= n**3 / 3  # the refactorisation of A was charged
    assert counts["kernel"] < n * n  # ... but K was bordered, not recomputed
    flops = counts["flop"]
    alg.surrogate.model()  # no data change: no new factorisation
    assert work.counts()["update"]["flop"] == flops


@pytest.mark.parametrize(
    "options, message",
    [
        ({"discount": 0.0}, r"discount \(gamma\) must be in \(0, 1\]"),
        ({"discount": 1.5}, r"discount \(gamma\) must be in \(0, 1\]"),
        ({"discount_by": "iteration"}, "valid: step, time"),
        ({"regularizer": -1.0}, "regularizer must be 'noise' or a number > 0"),
        ({"regularizer": "fitted"}, "regularizer must be 'noise' or a number > 0"),
        ({"hyperparameters": "map"}, "valid: ml, fixed"),
        ({"time_unit": 0.0}, "time_unit"),
        ({"space_kernel": "cubic"}, "valid names"),
        ({"initial": {"lengthscale_time": 3.0}}, "unknown hyperparameter"),
    ],
)
def test_bad_options_are_rejected(options, message):
    with pytest.raises(ValueError, match=message):
        WeightedGPSurrogate(**options)


def test_unknown_kind_lists_weighted_gp():
    with pytest.raises(ValueError, match="weighted-gp"):
        build_component("surrogate", {"kind": "weighted"})


