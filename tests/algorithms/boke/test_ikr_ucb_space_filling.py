"""Why BOKE loses to random search on sphere6 (issue 22 item 5; docs/investigations.md, "BOKE beside
the floor rows"): with a large beta, IKR-UCB's bonus sqrt(beta) W^(-1/2) grows like exp(d(x, X)^2
/ 4h^2) away from the data and swamps the mean, so in 6-D the acquisition is a max-min-distance
space filler whose maximiser lies on a face of the box; with beta = 0 it exploits the mean."""

from __future__ import annotations

import numpy as np

from tvbo.algorithms.boke.ikr_ucb import IKRUCBBeta, ScreenAndPolish, maximize_ikr_ucb
from tvbo.algorithms.boke.kernel_regression import KernelRegression


def _sphere_model(n: int = 110, d: int = 6) -> KernelRegression:
    rng = np.random.default_rng(0)
    X = rng.random((n, d))
    y = -np.sum((10.24 * (X - 0.5)) ** 2, axis=1)  # sphere6 on [-5.12, 5.12]^6, maximised
    model = KernelRegression(d)
    model.set_data(X, None, y)
    return model


def test_thm_4_13_beta_with_a_tenth_of_std_y_is_hundreds_on_sphere6() -> None:
    model = _sphere_model()
    beta = IKRUCBBeta("paper", noise_scale=0.1, delta=0.1)(model.n, model.y, model.d)
    assert beta > 100.0  # sqrt(beta) is a large share of the spread of y
    assert np.sqrt(beta) > 0.5 * np.std(model.y)


def test_large_beta_puts_the_ikr_ucb_maximiser_on_a_face_beta_zero_exploits() -> None:
    model = _sphere_model()
    beta = IKRUCBBeta("paper", noise_scale=0.1, delta=0.1)(model.n, model.y, model.d)
    search = ScreenAndPolish()
    on_face = []
    for seed in range(5):
        x = maximize_ikr_ucb(model, beta, np.random.default_rng(seed), search)
        on_face.append(bool(np.any((x < 0.01) | (x > 0.99))))
    assert all(on_face)
    # beta = 0 (Thm 4.13 with a noise-free problem's scale): the maximiser of the NW mean, well
    # inside the box and closer to the optimum than the face-seeking queries
    x0 = maximize_ikr_ucb(model, 0.0, np.random.default_rng(0), search)
    assert not np.any((x0 < 0.01) | (x0 > 0.99))
    assert np.abs(x0 - 0.5).max() < 0.45
