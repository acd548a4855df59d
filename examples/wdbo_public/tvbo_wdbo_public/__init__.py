"""The public W-DBO code (``wdbo-algo`` 1.0.7, ``WDBO-ALGORITHM/wdbo_algo``) as a tvbo Algorithm.

Nothing of the library is copied: :class:`WDBOPublic` calls ``wdbo_algo.WDBOOptimizer`` exactly
as its README loop does (``next_query`` -> evaluate -> ``tell`` -> ``clean``), with tvbo's engine
as the clock. What the wrapper decides, and why:

* **Time unit.** The library takes t as the caller passes it. The W-DBO paper normalises time
  to [0, 1] over its 600 s tasks (App. H), and tvbo's ``w-dbo-paper`` preset does the same
  (``fit_mode_options.time_scale: 600``); ``time_scale`` (seconds per library time unit, default
  600) keeps the two comparable. 60 reproduces the README loop (minutes).
* **Stamps.** ``tell`` gets the sample time the engine hands to ``ingest`` (tvbo's ``stamp``
  option), ``next_query`` the decision time, ``clean`` the time the observation became
  available (``now``): the library's clean advances its budget from the previous clean.
* **Warm-up.** The engine draws the first ``warmup`` queries itself; the library's own initial
  design (``n_initial_observations``, default 15 = the engine's default warm-up) only delays its
  first fit, as in the README loop. With a shorter engine warm-up the library answers the first
  proposals with its own uniform draws.
* **Kernels.** Matérn-5/2 in space and the benchmark's temporal family (``ProblemInfo``:
  Matérn-1/2, -3/2, -5/2 or RBF), the two GPyTorch classes the library's criterion supports.
* **Randomness.** The library draws from numpy's and torch's global generators; both are seeded
  from the run's algorithm stream at setup, so a run is repeatable on one machine (not across
  torch builds).
* **Threads.** torch's intra-op pool is set to ``torch_threads`` (default 1) at setup, as tvbo
  pins its own BLAS to one thread: one thread per run keeps runs comparable and off the shared
  cores. ``measured`` charges the CPU of every thread of the process, so more threads are
  charged too (their sum, not the wall time).
* **float64.** The library trains on float64 tensors (``torch.tensor`` of numpy data) but
  builds its parameters and ``optimize_acqf`` bounds in torch's default dtype; with gpytorch
  1.15 / botorch 0.18 float32 parameters make the posterior mean fail (``double != float``).
  The wrapper sets torch's default dtype to float64 at setup (process-wide; BoTorch's own
  advice), so the whole model is float64 as its data.
* **No work counts.** The library reports nothing to tvbo's work counter: run it with
  ``compute="measured"`` (or a response-time polynomial calibrated from measured runs).
"""

from __future__ import annotations

import math
from importlib.metadata import version
from typing import Any

import numpy as np

from tvbo.algorithms.base import Algorithm

__all__ = ["WDBOPublic"]

#: tvbo temporal family -> (gpytorch kernel class name, its constructor arguments)
_TEMPORAL = {
    "matern12": ("MaternKernel", [0.5]),
    "matern32": ("MaternKernel", [1.5]),
    "matern52": ("MaternKernel", [2.5]),
    "rbf": ("RBFKernel", []),
}


class WDBOPublic(Algorithm):
    """The public W-DBO code (wdbo-algo 1.0.7's WDBOOptimizer) on tvbo's virtual clock.

    See the module docstring for the choices the wrapper makes.
    """

    name = "w-dbo-public"
    #: the label of tables and figures (tvbo's plugin mechanism reads it)
    display_name = "W-DBO (public code)"
    citation = "Bardou, Thiran & Ranieri, NeurIPS 2024; WDBO-ALGORITHM/wdbo_algo 1.0.7"

    def __init__(self, alpha: float = 0.25, time_scale: float = 600.0,
                 n_initial_observations: int = 15, torch_threads: int = 1) -> None:
        super().__init__()
        for label, value in (("alpha", alpha), ("time_scale", time_scale)):
            if isinstance(value, bool) or not (isinstance(value, int | float)
                                               and math.isfinite(value) and value > 0):
                raise ValueError(f"w-dbo-public: {label} must be a finite number > 0, "
                                 f"got {value!r}")
        for label, value, low in (("n_initial_observations", n_initial_observations, 0),
                                  ("torch_threads", torch_threads, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"w-dbo-public: {label} must be an integer >= {low}, "
                                 f"got {value!r}")
        self.alpha = float(alpha)
        self.time_scale = float(time_scale)
        self.n_initial_observations = int(n_initial_observations)
        self.torch_threads = int(torch_threads)
        self._opt: Any = None

    def _setup(self) -> None:
        import gpytorch
        import torch
        from wdbo_algo.optimizer import WDBOOptimizer

        assert self.problem is not None
        if self.problem.candidates is not None:
            raise ValueError("w-dbo-public optimises over a box; this benchmark has a finite "
                             "candidate set")
        family = self.problem.temporal_kernel
        if family not in _TEMPORAL:
            raise ValueError(f"w-dbo-public: temporal kernel {family!r} not supported by "
                             f"wdbo-criterion; supported: {', '.join(_TEMPORAL)}")
        torch.set_num_threads(self.torch_threads)
        torch.set_default_dtype(torch.float64)
        seed = int(self.rng.integers(2**31 - 1))
        np.random.seed(seed)  # noqa: NPY002 - the library draws from the legacy global state
        torch.manual_seed(seed)
        time_class, time_args = _TEMPORAL[family]
        d = self.problem.d
        self._opt = WDBOOptimizer(
            spatial_domain=np.array([[0.0, 1.0]] * d),
            spatial_kernel=gpytorch.kernels.MaternKernel, spatial_kernel_args=[2.5],
            temporal_kernel=getattr(gpytorch.kernels, time_class),
            temporal_kernel_args=list(time_args),
            n_initial_observations=self.n_initial_observations, alpha=self.alpha)

    def propose(self, t: float) -> np.ndarray:
        x = np.asarray(self._opt.next_query(t / self.time_scale), float)
        return np.clip(x, 0.0, 1.0)  # optimize_acqf works in float32 bounds

    def ingest(self, x: np.ndarray, t: float, y: float, *, now: float, warmup: bool) -> None:
        self._opt.tell(np.asarray(x, float), t / self.time_scale, float(y))
        self._opt.clean(now / self.time_scale)

    def dataset_size(self) -> int:
        return 0 if self._opt is None or self._opt._xx_tt is None else self._opt.dataset_size()

    def state(self) -> dict[str, float]:
        opt = self._opt
        if opt is None or opt._lT is None:
            return {}
        return {"signal_var": float(opt._lambda), "lengthscale_space": float(opt._lS),
                "lengthscale_time": float(opt._lT) * self.time_scale,
                "noise_var": float(opt._noise), "budget": float(opt._budget)}

    def options(self) -> dict:
        # the releases run are what identifies the code (recorded in every run file)
        return {"alpha": self.alpha, "time_scale": self.time_scale,
                "n_initial_observations": self.n_initial_observations,
                "torch_threads": self.torch_threads,
                "wdbo_algo": version("wdbo-algo"), "wdbo_criterion": version("wdbo-criterion"),
                "torch": version("torch"), "botorch": version("botorch"),
                "gpytorch": version("gpytorch")}
