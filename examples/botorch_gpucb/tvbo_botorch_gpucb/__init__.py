"""GP-UCB written with BoTorch, as a tvbo Algorithm: the counterpart of tvbo's ``gp-ucb``.

tvbo's ``gp-ucb`` preset is a spatial GP (Matérn-5/2, time ignored) that keeps every
observation, with UCB ``mu + sqrt(beta) sigma`` and ``beta = 0.2 d log(2n)`` (the W-DBO code's
schedule, tvbo's default). :class:`BoTorchGPUCB` does the same with BoTorch's stock parts, each
at its defaults unless stated:

* ``SingleTaskGP`` on x in [0, 1]^d (the release's default kernel, priors and ``Standardize``
  outcome transform; BoTorch 0.18.1: an RBF kernel with dimension-scaled log-normal
  lengthscale priors), refitted from scratch by ``fit_gpytorch_mll`` at every proposal;
* ``UpperConfidenceBound(beta=0.2 d log(2n))``, beta as a float64 tensor (a Python float would
  be stored in float32);
* ``optimize_acqf(q=1, num_restarts=20, raw_samples=512)`` over [0, 1]^d, the W-DBO code's
  settings.

So the comparison with ``gp-ucb`` measures tvbo's numerics and fit (Matérn-5/2, L-BFGS-B ML)
against BoTorch's defaults on the same algorithm. float64 and one torch thread are set at setup
(process-wide), for the reasons given in ``tvbo_wdbo_public``. The code reports no work to tvbo's
counter: run it with ``compute="measured"``.
"""

from __future__ import annotations

import math
from importlib.metadata import version
from typing import Any

import numpy as np

from tvbo.algorithms.base import Algorithm

__all__ = ["BoTorchGPUCB"]


class BoTorchGPUCB(Algorithm):
    """GP-UCB from BoTorch's stock parts: SingleTaskGP, UpperConfidenceBound, optimize_acqf.

    See the module docstring for the settings.
    """

    name = "botorch-gp-ucb"
    #: the label of tables and figures (tvbo's plugin mechanism reads it)
    display_name = "GP-UCB (BoTorch)"
    citation = "Srinivas et al. 2012, written with BoTorch 0.18.1"

    def __init__(self, beta_scale: float = 0.2, num_restarts: int = 20, raw_samples: int = 512,
                 torch_threads: int = 1) -> None:
        super().__init__()
        if isinstance(beta_scale, bool) or not (isinstance(beta_scale, int | float)
                                                and math.isfinite(beta_scale) and beta_scale > 0):
            raise ValueError(f"botorch-gp-ucb: beta_scale must be a finite number > 0, "
                             f"got {beta_scale!r}")
        for label, value in (("num_restarts", num_restarts), ("raw_samples", raw_samples),
                             ("torch_threads", torch_threads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"botorch-gp-ucb: {label} must be an integer >= 1, "
                                 f"got {value!r}")
        self.beta_scale = float(beta_scale)
        self.num_restarts = int(num_restarts)
        self.raw_samples = int(raw_samples)
        self.torch_threads = int(torch_threads)
        self._X: list[np.ndarray] = []
        self._y: list[float] = []
        self._torch: Any = None

    def _setup(self) -> None:
        import torch

        assert self.problem is not None
        if self.problem.candidates is not None:
            raise ValueError("botorch-gp-ucb optimises over a box; this benchmark has a finite "
                             "candidate set")
        torch.set_num_threads(self.torch_threads)
        torch.set_default_dtype(torch.float64)
        torch.manual_seed(int(self.rng.integers(2**31 - 1)))
        self._torch = torch

    def propose(self, t: float) -> np.ndarray:
        import warnings

        from botorch.acquisition import UpperConfidenceBound
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import SingleTaskGP
        from botorch.optim import optimize_acqf
        from gpytorch.mlls import ExactMarginalLogLikelihood

        torch = self._torch
        assert self.problem is not None
        d, n = self.problem.d, len(self._y)
        if n < 2:  # nothing to fit yet: a uniform draw, as the engine's warm-up
            return self.rng.uniform(size=d)
        X = torch.tensor(np.array(self._X), dtype=torch.float64)
        y = torch.tensor(self._y, dtype=torch.float64).unsqueeze(-1)
        model = SingleTaskGP(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # BoTorch's input-scaling/optimisation notes
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
            beta = torch.tensor(self.beta_scale * d * math.log(2 * n), dtype=torch.float64)
            bounds = torch.stack([torch.zeros(d), torch.ones(d)])
            candidate, _ = optimize_acqf(UpperConfidenceBound(model, beta=beta), bounds=bounds,
                                         q=1, num_restarts=self.num_restarts,
                                         raw_samples=self.raw_samples)
        return np.clip(candidate[0].detach().numpy(), 0.0, 1.0)

    def ingest(self, x: np.ndarray, t: float, y: float, *, now: float, warmup: bool) -> None:
        self._X.append(np.asarray(x, float).copy())
        self._y.append(float(y))

    def dataset_size(self) -> int:
        return len(self._y)

    def options(self) -> dict:
        return {"beta_scale": self.beta_scale, "num_restarts": self.num_restarts,
                "raw_samples": self.raw_samples, "torch_threads": self.torch_threads,
                "torch": version("torch"), "botorch": version("botorch"),
                "gpytorch": version("gpytorch")}
