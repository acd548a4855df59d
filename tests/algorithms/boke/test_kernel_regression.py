"""BOKE's kernel regression is a Model: its predictions against the paper's formulas computed
directly (spec_boke.md §2.2-§2.4, §6.2), its data operations and its own work counts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tvbo.algorithms.boke.kernel_regression import KernelRegression
from tvbo.models import HasKernelDensity, HasTemporalKernel, Model
from tvbo.work import WorkCounter


def _direct(Q, X, y, h, w=None):
    """Eq. 3.1 and 3.9 with the Gaussian kernel (3.2), one query and one observation at a time."""
    w = np.ones(len(y)) if w is None else w
    mean, W = [], []
    for q in Q:
        num = den = 0.0
        for xi, yi, wi in zip(X, y, w, strict=True):
            k = wi * math.exp(-sum((a - b) ** 2 for a, b in zip(q, xi, strict=True)) / (2 * h * h))
            num += k * yi
            den += k
        mean.append(num / den)
        W.append(den)
    return np.array(mean), np.array(W)


def _model(n=9, d=3, seed=0, **options):
    rng = np.random.default_rng(seed)
    X, T, y = rng.random((n, d)), np.arange(float(n)), rng.standard_normal(n)
    model = KernelRegression(d, **options)
    model.set_data(X, T, y)
    return model, X, y


def test_it_is_a_model_with_a_kernel_density_and_no_temporal_kernel():
    model = KernelRegression(2)
    assert isinstance(model, Model)
    assert isinstance(model, HasKernelDensity)
    assert not isinstance(model, HasTemporalKernel)


def test_predictions_equal_the_papers_formulas_on_a_small_random_case():
    model, X, y = _model()
    n, d = X.shape
    h = math.sqrt(1 / 12) * n ** (-1 / (d + 4))  # Scott's rule, c = sqrt(1/12) (Eq. 5.1)
    assert model.bandwidth_at(n) == pytest.approx(h, rel=1e-14)
    Q = np.random.default_rng(1).random((5, d))
    mean, W = _direct(Q, X, y, h)
    pred = model.predict(Q, 123.0)  # static in time: t is ignored
    np.testing.assert_allclose(pred.mean, mean, rtol=1e-12)
    np.testing.assert_allclose(pred.var, 1.0 / W, rtol=1e-12)  # sigma = W^(-1/2), Eq. 3.13
    r = model.regression(Q)
    np.testing.assert_allclose(np.exp(r.log_w), W, rtol=1e-12)
    nn = np.sqrt(((Q[:, None] - X[None]) ** 2).sum(-1)).min(1)
    np.testing.assert_allclose(r.nn_dist, nn, rtol=1e-12)


def test_gradients_of_the_prediction_match_finite_differences():
    model, X, y = _model(n=12, d=2)
    Q = np.array([[0.3, 0.6], [0.7, 0.2]])
    pred = model.predict(Q, None, grad=True)
    eps = 1e-6
    for j in range(2):
        e = np.zeros(2)
        e[j] = eps
        up, dn = model.predict(Q + e, None), model.predict(Q - e, None)
        np.testing.assert_allclose(pred.dmean[:, j], (up.mean - dn.mean) / (2 * eps),
                                   rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(pred.dvar[:, j], (up.var - dn.var) / (2 * eps),
                                   rtol=1e-5, atol=1e-8)


def test_discounted_weights_enter_both_sums_and_the_bandwidth():
    model, X, y = _model(n=8, d=2, forgetting="discount", gamma=0.7)
    w = 0.7 ** np.arange(7, -1, -1.0)
    h = math.sqrt(1 / 12) * w.sum() ** (-1 / 6)
    Q = np.random.default_rng(2).random((4, 2))
    mean, W = _direct(Q, X, y, h, w)
    pred = model.predict(Q, 0.0)
    np.testing.assert_allclose(pred.mean, mean, rtol=1e-12)
    np.testing.assert_allclose(pred.var, 1.0 / W, rtol=1e-12)
    assert model.state() == pytest.approx({"h": h, "n_eff": w.sum()})
    assert model.n_max == int(math.floor(math.log(1e-4) / math.log(0.7))) + 1
    assert KernelRegression(2).n_max is None


def test_data_operations_and_their_work():
    work = WorkCounter()
    model = KernelRegression(2, work=work)
    model.set_data(np.empty((0, 2)), np.empty(0), np.empty(0))  # a reset: nothing to do
    assert work.counts() == {}
    rng = np.random.default_rng(3)
    X, y = rng.random((4, 2)), rng.standard_normal(4)
    for i in range(4):
        model.append(X[i], float(i), y[i])
    model.remove(1)
    assert model.n == 3
    np.testing.assert_array_equal(model.X, X[[0, 2, 3]])
    np.testing.assert_array_equal(model.T, [0.0, 2.0, 3.0])
    np.testing.assert_array_equal(model.y, y[[0, 2, 3]])
    assert work.counts()["update"] == {"call": 5.0}  # 4 appends + 1 removal
    work.clear()
    model.predict(rng.random((7, 2)), 0.0)
    counts = work.counts()["update"]
    assert counts["kernel"] == 3 * 7 and counts["call"] == 1 and counts["flop"] > 0
    with pytest.raises(IndexError, match="out of range"):
        model.remove(3)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"d": 0}, "d \\(input dimension\\)"),
        ({"kernel": "cosine"}, "gaussian, epanechnikov, uniform"),
        ({"bandwidth": "wide"}, "scott, silverman"),
        ({"bandwidth": -1.0}, "bandwidth must be finite and > 0"),
        ({"forgetting": "never"}, "none, discount"),
        ({"min_weight": 1.0}, "min_weight"),
    ],
)
def test_bad_options_name_the_field_and_the_choices(options, match):
    options = {"d": 2, **options}
    with pytest.raises(ValueError, match=match):
        KernelRegression(options.pop("d"), **options)


def test_set_data_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="same length"):
        KernelRegression(2).set_data(np.zeros((3, 2)), np.zeros(2), np.zeros(3))
