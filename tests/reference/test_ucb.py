"""tvbo's UCB (tvbo/acquisition/ucb.py) against BoTorch's ``UpperConfidenceBound``.

Both at the same posterior: a GPyTorch ExactGP carrying tvbo's hyperparameters and data in
tvbo's units (output scale and noise times ``y_std^2``, constant mean ``y_mean``: tvbo's GP
works on standardised targets and predicts in original units), time as an input column pinned
at the decision time. Two cases:

* ``include_noise=False`` (Srinivas et al.; tvbo's default) against a BoTorch ``SingleTaskGP``,
  whose posterior is that of f;
* ``include_noise=True`` (``w-dbo-paper``) against the W-DBO public code's own model class
  (``wdbo_algo.model.SpaceTimeGPModel``), whose ``posterior`` is the likelihood's predictive,
  the quirk tvbo's option reproduces.

Agreement to 1e-10 relative. Two float32 traps on the BoTorch side, avoided by passing float64
tensors: GPyTorch's hyperparameter setters and BoTorch's ``beta`` buffer turn a Python float into
torch's default dtype (float32), a 1e-8 relative error (W-DBO's code passes a numpy float64 beta,
kept in float64). Skipped without the ``reference`` extra.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
gpytorch = pytest.importorskip("gpytorch")
botorch = pytest.importorskip("botorch")

from tests.reference._data import dataset  # noqa: E402
from tvbo.acquisition.ucb import ucb  # noqa: E402
from tvbo.gp.exact import ExactGP  # noqa: E402
from tvbo.gp.kernels import Hyperparameters, SeparableKernel  # noqa: E402

#: (d, n, seed, hyperparameters (signal, l_S, l_T s, noise), beta)
CASES = [
    (1, 12, 0, (1.3, 0.25, 80.0, 0.02), 0.5),
    (2, 20, 1, (0.8, 0.4, 150.0, 0.05), 0.2 * 2 * math.log(40)),
    (3, 35, 2, (2.0, 0.6, 40.0, 0.01), 2.0),
    (4, 50, 3, (1.0, 0.9, 300.0, 0.1), 0.2 * 4 * math.log(100)),
]


def _tvbo_gp(X, T, y, hp) -> ExactGP:
    gp = ExactGP(SeparableKernel(space="matern52", time="matern32"), Hyperparameters(*hp))
    gp.set_data(X, T, y)
    return gp


def _f64(value: float) -> torch.Tensor:
    return torch.tensor(value, dtype=torch.float64)


def _set(model, gp: ExactGP, hp) -> None:
    """tvbo's hyperparameters in original units on a GPyTorch model (time in seconds)."""
    sv, ls, lt, nv = hp
    s2 = gp.y_std**2
    kernels = model.covar_module.base_kernel.kernels
    # as float64 tensors: a Python float given to a GPyTorch setter passes through torch's
    # default dtype (float32), a 1e-8 relative error
    model.covar_module.outputscale = _f64(sv * s2)
    kernels[0].lengthscale = _f64(ls)
    kernels[1].lengthscale = _f64(lt)
    model.likelihood.noise = _f64(nv * s2)
    model.mean_module.constant.data.fill_(gp.y_mean)
    model.eval()


def _queries(d: int, t: float, m: int = 64) -> tuple[np.ndarray, torch.Tensor]:
    X = np.random.default_rng(d).uniform(size=(m, d))
    Xt = torch.tensor(np.column_stack([X, np.full(m, t)]), dtype=torch.float64).unsqueeze(1)
    return X, Xt


@pytest.mark.parametrize(("d", "n", "seed", "hp", "beta"), CASES)
def test_ucb_matches_botorch_on_the_posterior_of_f(d, n, seed, hp, beta):
    from botorch.acquisition import UpperConfidenceBound
    from botorch.models import SingleTaskGP

    X, T, y = dataset(d, n, seed)
    gp = _tvbo_gp(X, T, y, hp)
    train = torch.tensor(np.column_stack([X, T]), dtype=torch.float64)
    covar = gpytorch.kernels.ScaleKernel(
        gpytorch.kernels.MaternKernel(nu=2.5, active_dims=list(range(d)))
        * gpytorch.kernels.MaternKernel(nu=1.5, active_dims=[d]))
    model = SingleTaskGP(train, torch.tensor(y, dtype=torch.float64).unsqueeze(-1),
                         covar_module=covar, mean_module=gpytorch.means.ConstantMean(),
                         outcome_transform=None).double()
    _set(model, gp, hp)
    t = float(T[-1]) + 30.0
    Xq, Xt = _queries(d, t)
    with torch.no_grad():
        expected = UpperConfidenceBound(model, beta=_f64(beta))(Xt).numpy()
    got, _ = ucb(gp, Xq, t, beta, grad=False)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=0)


@pytest.mark.parametrize(("d", "n", "seed", "hp", "beta"), CASES)
def test_ucb_with_noise_matches_the_wdbo_public_model(d, n, seed, hp, beta):
    pytest.importorskip("wdbo_algo")
    from botorch.acquisition import UpperConfidenceBound
    from wdbo_algo.model import SpaceTimeGPModel

    X, T, y = dataset(d, n, seed)
    gp = _tvbo_gp(X, T, y, hp)
    train = torch.tensor(np.column_stack([X, T]), dtype=torch.float64)
    model = SpaceTimeGPModel(gpytorch.kernels.MaternKernel, [2.5], gpytorch.kernels.MaternKernel,
                             [1.5], train, torch.tensor(y, dtype=torch.float64),
                             gpytorch.likelihoods.GaussianLikelihood()).double()
    _set(model, gp, hp)
    t = float(T[-1]) + 30.0
    Xq, Xt = _queries(d, t)
    with torch.no_grad():
        expected = UpperConfidenceBound(model, beta=_f64(beta))(Xt).numpy()
    got, _ = ucb(gp, Xq, t, beta, grad=False, include_noise=True)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=0)
    without, _ = ucb(gp, Xq, t, beta, grad=False)
    assert np.all(without < got)  # the noise is really in it
