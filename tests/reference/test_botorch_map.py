"""``botorch-map`` (tvbo/gp/fit_modes.py) against BoTorch's SingleTaskGP + fit_gpytorch_mll.

tvbo's mode re-states the SingleTaskGP defaults of BoTorch 0.6.0-0.11.3 (the Gamma-prior era).
The release in the ``reference`` extra (0.18.1) defaults to the dimension-scaled log-normal
lengthscale prior of 0.12+, so the reference here is a 0.18.1 ``SingleTaskGP`` given the
0.6-0.11 priors explicitly ("the same priors"): lengthscales ``GammaPrior(3, 6)``, output scale
``GammaPrior(2, 0.15)``, noise ``GammaPrior(1.1, 0.05)`` on ``GreaterThan(1e-4,
transform=None)`` started at 2.0, ``ConstantMean``, no input/outcome transform (y arrives
standardised, as tvbo's GP sees it), tvbo's separable kernel with time over ``time_scale``
(600 s, the mode's default). ``fit_gpytorch_mll`` runs its own L-BFGS-B; both optima are scored
by the same GPyTorch log posterior (``mll`` x n: LML + log priors) and must agree to 1e-6
relative. Skipped without the ``reference`` extra.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
gpytorch = pytest.importorskip("gpytorch")
botorch = pytest.importorskip("botorch")

import warnings  # noqa: E402

from gpytorch.constraints import GreaterThan  # noqa: E402
from gpytorch.priors import GammaPrior  # noqa: E402

from tests.reference._data import dataset, standardized  # noqa: E402
from tvbo.gp.exact import ExactGP  # noqa: E402
from tvbo.gp.fit import fit_hyperparameters  # noqa: E402
from tvbo.gp.kernels import Hyperparameters, SeparableKernel  # noqa: E402

TIME_SCALE = 600.0
#: (d, n, seed): the sizes a W-DBO / BOLT dataset has in the [B] campaign (15 warm-up points up)
CASES = [(1, 10, 0), (2, 15, 0), (2, 30, 1), (3, 20, 0), (3, 45, 2), (4, 25, 0), (6, 40, 1)]


def _model(X, T, y):
    from botorch.models import SingleTaskGP

    d = X.shape[1]
    x = torch.tensor(np.column_stack([X, T / TIME_SCALE]), dtype=torch.float64)
    yt = torch.tensor(standardized(y), dtype=torch.float64).unsqueeze(-1)
    space = gpytorch.kernels.MaternKernel(nu=2.5, active_dims=list(range(d)),
                                          lengthscale_prior=GammaPrior(3.0, 6.0))
    time = gpytorch.kernels.MaternKernel(nu=1.5, active_dims=[d],
                                         lengthscale_prior=GammaPrior(3.0, 6.0))
    covar = gpytorch.kernels.ScaleKernel(space * time, outputscale_prior=GammaPrior(2.0, 0.15))
    noise_prior = GammaPrior(1.1, 0.05)
    likelihood = gpytorch.likelihoods.GaussianLikelihood(
        noise_prior=noise_prior,
        noise_constraint=GreaterThan(1e-4, transform=None,
                                     initial_value=(1.1 - 1.0) / 0.05))
    model = SingleTaskGP(x, yt, likelihood=likelihood, covar_module=covar,
                         mean_module=gpytorch.means.ConstantMean(), outcome_transform=None)
    return model.double(), x, yt.squeeze(-1)


def log_posterior(model, x, y) -> float:
    """LML + log priors of ``model``'s current hyperparameters (GPyTorch's own arithmetic)."""
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(model.likelihood, model)
    model.train()
    with torch.no_grad():
        return float(mll(model(x), y)) * len(y)


def _f64(value: float) -> torch.Tensor:
    return torch.tensor(value, dtype=torch.float64)


def _install(model, hp: Hyperparameters, mean: float) -> None:
    kernels = model.covar_module.base_kernel.kernels
    # float64 tensors: a Python float passes through torch's default dtype (float32)
    model.covar_module.outputscale = _f64(hp.signal_var)
    kernels[0].lengthscale = _f64(hp.lengthscale_space)
    kernels[1].lengthscale = _f64(hp.lengthscale_time / TIME_SCALE)
    model.likelihood.noise = _f64(hp.noise_var)
    model.mean_module.constant.data.fill_(mean)


@pytest.mark.parametrize(("d", "n", "seed"), CASES)
def test_botorch_map_reaches_botorch_s_log_posterior(d, n, seed):
    from botorch.fit import fit_gpytorch_mll

    X, T, y = dataset(d, n, seed)
    model, x, yt = _model(X, T, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_gpytorch_mll(gpytorch.mlls.ExactMarginalLogLikelihood(model.likelihood, model))
    botorch_value = log_posterior(model, x, yt)

    gp = ExactGP(SeparableKernel(space="matern52", time="matern32"),
                 Hyperparameters(1.0, 0.2, 10.0, 0.01))
    gp.set_data(X, T, y)
    result = fit_hyperparameters(gp, mode="botorch-map")
    mean = float(result.message.split("constant mean ")[1].split(" ")[0])
    scored, x2, y2 = _model(X, T, y)
    _install(scored, result.hyperparameters, mean)
    tvbo_value = log_posterior(scored, x2, y2)
    assert tvbo_value == pytest.approx(botorch_value, rel=1e-6)


def test_the_release_in_use_no_longer_has_the_gamma_priors():
    """Why the reference above passes its priors explicitly: BoTorch >= 0.12 (the extra pins
    0.18.1) gives SingleTaskGP a dimension-scaled log-normal lengthscale prior and no Gamma
    output-scale prior; tvbo's ``botorch-map`` follows the 0.6.0-0.11.3 defaults it names."""
    from botorch.models import SingleTaskGP

    x = torch.rand(5, 2, dtype=torch.float64)
    model = SingleTaskGP(x, x.sum(-1, keepdim=True))
    priors = {name: type(prior).__name__ for name, _, prior, _, _ in model.named_priors()}
    assert "LogNormalPrior" in priors.values()
    assert "GammaPrior" not in {v for k, v in priors.items() if "lengthscale" in k}
