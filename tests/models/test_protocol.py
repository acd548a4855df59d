"""The exact GP satisfies the model protocol and its capabilities (issue 11 item 1)."""

from __future__ import annotations

import numpy as np

from tvbo.gp.exact import ExactGP
from tvbo.gp.kernels import Hyperparameters, SeparableKernel
from tvbo.models import HasHyperparameters, HasTemporalKernel, Model


def _gp() -> ExactGP:
    hp = Hyperparameters(signal_var=1.0, lengthscale_space=0.3, lengthscale_time=50.0,
                         noise_var=0.01)
    return ExactGP(SeparableKernel(), hp)


def test_exact_gp_is_a_model_with_hyperparameters_and_a_temporal_kernel():
    gp = _gp()
    assert isinstance(gp, Model)
    assert isinstance(gp, HasHyperparameters)
    assert isinstance(gp, HasTemporalKernel)
    rng = np.random.default_rng(0)
    gp.set_data(rng.random((5, 2)), np.arange(5.0), rng.random(5))
    pred = gp.predict(rng.random((3, 2)), 5.0, grad=True)
    assert pred.mean.shape == (3,) and pred.dmean.shape == (3, 2)


def test_an_object_without_predict_is_not_a_model():
    class NotAModel:
        work = None

    assert not isinstance(NotAModel(), Model)
