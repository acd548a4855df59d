"""``gpytorch-adam`` (tvbo/gp/fit_modes.py) against a real GPyTorch ExactGP trained by Adam.

The reference is the W-DBO public code's recipe (wdbo_algo model.py) written with GPyTorch
itself: ``ScaleKernel(Matern(5/2) on x * Matern(3/2) on t)`` (or the spatial factor alone),
``ConstantMean``, ``GaussianLikelihood``, every parameter at GPyTorch's default, trained for 150
steps of ``torch.optim.Adam(lr=0.1)`` on ``-ExactMarginalLogLikelihood``, in float64, with time
in the mode's ``time_scale`` unit. The fitted hyperparameters must agree to 1e-6 relative.
Skipped without the ``reference`` extra.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
gpytorch = pytest.importorskip("gpytorch")

from tests.reference._data import CASES, dataset, standardized  # noqa: E402
from tvbo.gp.exact import ExactGP  # noqa: E402
from tvbo.gp.fit import fit_hyperparameters  # noqa: E402
from tvbo.gp.kernels import Hyperparameters, SeparableKernel  # noqa: E402


class _SpaceTimeGP(gpytorch.models.ExactGP):
    def __init__(self, x, y, d: int, has_time: bool):
        super().__init__(x, y, gpytorch.likelihoods.GaussianLikelihood())
        self.mean_module = gpytorch.means.ConstantMean()
        space = gpytorch.kernels.MaternKernel(nu=2.5, active_dims=list(range(d)))
        base = space * gpytorch.kernels.MaternKernel(nu=1.5, active_dims=[d]) if has_time \
            else space
        self.covar_module = gpytorch.kernels.ScaleKernel(base)

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x),
                                                         self.covar_module(x))


def gpytorch_fit(X, T, y, time_scale: float | None, steps: int = 150) -> dict[str, float]:
    """Hyperparameters after ``steps`` Adam steps from GPyTorch's defaults (tvbo units)."""
    has_time = time_scale is not None
    inputs = np.column_stack([X, T / time_scale]) if has_time else X
    x = torch.tensor(inputs, dtype=torch.float64)
    yt = torch.tensor(standardized(y), dtype=torch.float64)
    model = _SpaceTimeGP(x, yt, X.shape[1], has_time).double()
    model.train()
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(model.likelihood, model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = -mll(model(x), yt)
        loss.backward()
        optimizer.step()
    kernels = model.covar_module.base_kernel
    space = kernels.kernels[0] if has_time else kernels
    out = {"signal_var": model.covar_module.outputscale.item(),
           "lengthscale_space": space.lengthscale.item(),
           "noise_var": model.likelihood.noise.item()}
    if has_time:
        out["lengthscale_time"] = kernels.kernels[1].lengthscale.item() * time_scale
    return out


def tvbo_fit(X, T, y, time_scale: float | None) -> dict[str, float]:
    has_time = time_scale is not None
    gp = ExactGP(SeparableKernel(space="matern52", time="matern32" if has_time else None),
                 Hyperparameters(1.0, 0.2, 10.0 if has_time else None, 0.01))
    gp.set_data(X, T if has_time else None, y)
    options = {"time_scale": time_scale} if has_time else {}
    hp = fit_hyperparameters(gp, mode="gpytorch-adam", mode_options=options).hyperparameters
    out = {"signal_var": hp.signal_var, "lengthscale_space": hp.lengthscale_space,
           "noise_var": hp.noise_var}
    if has_time:
        out["lengthscale_time"] = hp.lengthscale_time
    return out


def test_the_cases_span_dimensions_sizes_and_time_units():
    assert len(CASES) >= 20
    assert {c[0] for c in CASES} >= {1, 2, 3, 4, 6}
    assert {c[3] for c in CASES} == {600.0, 60.0, 1.0, None}


@pytest.mark.parametrize(("d", "n", "seed", "time_scale"), CASES)
def test_gpytorch_adam_matches_gpytorch(d, n, seed, time_scale):
    X, T, y = dataset(d, n, seed)
    expected = gpytorch_fit(X, T, y, time_scale)
    got = tvbo_fit(X, T, y, time_scale)
    assert got.keys() == expected.keys()
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, rel=1e-6), name


def test_the_comparison_sees_a_wrong_step_count():
    """The tolerance is tight enough to tell 150 steps from 149 (the test can fail)."""
    X, T, y = dataset(2, 20, 0)
    expected = gpytorch_fit(X, T, y, 600.0, steps=149)
    got = tvbo_fit(X, T, y, 600.0)
    assert any(got[k] != pytest.approx(v, rel=1e-6) for k, v in expected.items())
