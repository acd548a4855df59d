"""KR-UCB (BOKE's Appendix A) over the kernel-regression model: the arm scores against a direct
computation and the widening of a chosen arm."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.algorithms.boke.test_ikr_ucb import _model
from tvbo.algorithms.boke.kr_ucb import kr_ucb_arm_scores, widen, widening_radius


def test_kr_ucb_arm_scores_equal_a_direct_computation():
    model = _model(n=10)
    X, y = model.X, model.y
    h = model.bandwidth_at(10)
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / (2 * h * h))
    W = K.sum(1)
    expected = K @ y / W + 1.5 * np.std(y) * np.sqrt(np.log(W.sum()) / W)
    np.testing.assert_allclose(kr_ucb_arm_scores(model, 1.5), expected, rtol=1e-12)


@pytest.mark.parametrize(
    ("kernel", "k"),
    [("gaussian", lambda r, h: math.exp(-r * r / (2 * h * h))),
     ("epanechnikov", lambda r, h: 1 - r * r / (h * h))],
)
def test_widening_radius_is_where_the_kernel_equals_tau(kernel, k):
    rho = widening_radius(kernel, 0.3, 0.4)
    assert k(rho, 0.3) == pytest.approx(0.4, rel=1e-12)
    assert widening_radius("uniform", 0.3, 0.4) == 0.3
    with pytest.raises(ValueError, match="valid kernels"):
        widening_radius("cosine", 0.3, 0.4)


def test_widening_stays_in_the_ball_and_the_box_and_lowers_the_density():
    model = _model(n=10)
    arm = model.X[0]
    x = widen(model, arm, 0.2, np.random.default_rng(0), 64)
    assert np.linalg.norm(x - arm) <= 0.2 + 1e-12 and np.all((0 <= x) & (x <= 1))
    assert model.regression(x[None]).log_w[0] < model.regression(arm[None]).log_w[0]
