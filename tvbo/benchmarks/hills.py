"""The toy problem of PE-GP-UCB [P2, Sec. 6.1]: eleven candidate priors of ten hills.

What the paper gives (spec_sparq_pegpucb.md B.8.1): ``f`` is ONE sample of the true GP prior and
is static in time; all eleven candidate priors share the same RBF kernel and differ only in their
mean; the mean of prior ``n`` (1..10) has its ``n``-th hill tallest, prior 0 has ten hills of equal
height; the true prior is prior 2 ("one prominent hill around 0.1 and nine smaller hills"); the
search space alternates between the whole domain and a restricted space that excludes the true
tall hill. Everything else is "in our code" (spec D.16); the reconstruction used here:

* domain ``[0, 1]`` (d = 1) represented by ``n_points`` equally spaced candidates (the benchmark
  is discrete, so the engine's ``ProblemInfo.candidates`` is this grid and the oracle is exact);
* hill ``j`` (0..9) centred at ``linspace(0, 1, 10)[j]``: prior ``n``'s tall hill is hill ``n-1``,
  so prior 2's sits at 0.111 ("around 0.1");
* hills are Gaussian bumps of width ``hill_width``, heights ``small_height`` / ``tall_height``;
* kernel RBF ``signal_var * exp(-|x-x'|^2 / (2 lengthscale^2))`` (the paper writes ``1/(2l)``,
  i.e. ``l = lengthscale^2``), noise variance ``noise_var`` (R^2). Defaults (written once, in
  :data:`tvbo.models.candidate_prior.HILLS_KERNEL` and ``HILLS_SHAPE``): lengthscale 0.1,
  signal_var 0.05 (std 0.22, so the hills dominate the sample as in the paper's Figure 3),
  noise_var 0.01, hills of width 0.03 and heights 1 / 3;
* ``f = mean_2 + g`` with ``g`` drawn once on the grid from the kernel with ``instance_seed``
  (between grid points ``f`` is linearly interpolated; queries are always grid points). The
  run seed does not reach a benchmark, so the seeds of one campaign share ``f`` and differ in
  noise and tie-breaking; the paper's 30 seeds may each have drawn their own ``f`` (unstated).
  Drawing ``f`` per seed (``instance_seed = seed``) moved every method's mean cumulative regret
  by at most 1.8 and kept their order (30 seeds, T = 100);
* time mapping: step ``s = floor(t / step_seconds)`` (the paper's ``t = s + 1``); with the
  evaluation ``cost = step_seconds`` and a zero compute model (``compute: polynomial``,
  ``polynomial: [0.0]``) query ``k`` is sampled at ``k * step_seconds``: one query per step;
* search space: :class:`AlternatingSearchSpace` -- the whole grid on even steps, the grid minus
  the band ``exclude`` around the true tall hill on odd steps. The engine's candidate set is
  fixed, so the restriction is exposed by :meth:`HillsBenchmark.available` and the algorithms of
  :mod:`tvbo.algorithms.pegpucb.parts` are told the SAME schedule through their
  ``search_space`` option (the toy study config passes both). ``f*(t)`` is the maximum over the
  AVAILABLE points; the oracle never credits an unavailable point (regret is measured against
  ``max_{X_t} f``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tvbo.benchmarks.base import Benchmark
from tvbo.models.candidate_prior import (
    HILLS_KERNEL,
    HILLS_SHAPE,
    N_HILLS,
    N_PRIORS,
    HillsShape,
    hills_priors,
)
from tvbo.search_space import AlternatingSearchSpace

__all__ = [
    "N_HILLS",
    "N_PRIORS",
    "TRUE_PRIOR",
    "AlternatingSearchSpace",
    "HillsBenchmark",
    "HillsShape",
    "hills_priors",
    "make_hills",
]

#: the true prior's index (the paper's text: "prior 2")
TRUE_PRIOR = 2


def rbf_matrix(x1: np.ndarray, x2: np.ndarray, signal_var: float, lengthscale: float) -> np.ndarray:
    """RBF covariance between 1-D point sets (used for the sample of the true GP)."""
    d = np.asarray(x1, float).reshape(-1, 1) - np.asarray(x2, float).reshape(1, -1)
    return signal_var * np.exp(-0.5 * (d / lengthscale) ** 2)


class HillsBenchmark(Benchmark):
    """One sample of prior 2 of the ten-hills toy, static in time, on an alternating domain."""

    name = "hills"
    d = 1
    is_discrete = True
    oracle_exact = True
    temporal_kernel = "matern32"  # unused: the toy priors have no temporal component

    def __init__(
        self,
        *,
        steps: int = 100,
        step_seconds: float = 1.0,
        n_points: int = 200,
        lengthscale: float = HILLS_KERNEL.lengthscale,
        signal_var: float = HILLS_KERNEL.signal_var,
        noise_var: float = HILLS_KERNEL.noise_var,
        hill_width: float = HILLS_SHAPE.hill_width,
        small_height: float = HILLS_SHAPE.small_height,
        tall_height: float = HILLS_SHAPE.tall_height,
        exclude: tuple[float, float] | list[float] = (0.05, 0.17),
        period: int = 2,
        instance_seed: int = 0,
        horizon: float | None = None,
        cost: float | None = None,
        oracle_grid_step: float | None = None,
    ) -> None:
        if not (isinstance(steps, int) and steps >= 1):
            raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
        if not (isinstance(n_points, int) and n_points >= 2):
            raise ValueError(f"n_points must be an integer >= 2, got {n_points!r}")
        for option, value in (("lengthscale", lengthscale), ("signal_var", signal_var)):
            if not (math.isfinite(float(value)) and float(value) > 0):
                raise ValueError(f"{option} must be finite and > 0, got {value!r}")
        self.search_space = AlternatingSearchSpace(step_seconds, tuple(exclude), period)
        self.shape = HillsShape(hill_width, small_height, tall_height)
        step_seconds = float(step_seconds)
        super().__init__(
            horizon=steps * step_seconds if horizon is None else horizon,
            noise_var=noise_var,
            cost=step_seconds if cost is None else cost,
            oracle_grid_step=step_seconds if oracle_grid_step is None else oracle_grid_step,
        )
        self.steps = steps
        self.lengthscale = float(lengthscale)
        self.signal_var = float(signal_var)
        self.instance_seed = int(instance_seed)
        self.grid = np.linspace(0.0, 1.0, n_points)
        K = rbf_matrix(self.grid, self.grid, self.signal_var, self.lengthscale)
        L = np.linalg.cholesky(K + 1e-9 * self.signal_var * np.eye(n_points))
        g = L @ np.random.default_rng(self.instance_seed).standard_normal(n_points)
        self.values = self.shape.mean(TRUE_PRIOR, self.grid) + g

    @property
    def candidate_priors(self) -> tuple[dict[str, Any], ...]:
        """The toy's 11 candidate priors with THIS benchmark's kernel, noise and hills (declared
        to the algorithms as ``ProblemInfo.candidate_priors``; option ``priors: benchmark``)."""
        return tuple(
            hills_priors(
                lengthscale=self.lengthscale,
                signal_var=self.signal_var,
                noise_var=self.noise_var,
                hill_width=self.shape.hill_width,
                small_height=self.shape.small_height,
                tall_height=self.shape.tall_height,
            )
        )

    @property
    def candidates(self) -> np.ndarray:
        """The grid the engine hands to algorithms as ``ProblemInfo.candidates`` (m, 1)."""
        return self.grid[:, None].copy()

    def available(self, x: np.ndarray, t: float) -> np.ndarray:
        """Which rows of ``x`` (m, 1) belong to the search space X_t at time ``t``."""
        return self.search_space.mask(np.asarray(x, float).reshape(-1, 1), t)

    def _evaluate(self, x: np.ndarray, t: np.ndarray) -> np.ndarray:
        return np.interp(x[..., 0], self.grid, self.values) + 0.0 * np.asarray(t)

    def raw(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        return -self._evaluate(z[..., :1], z[..., -1])

    def exact_argmax(self, t: float) -> np.ndarray:
        ok = self.available(self.candidates, t)
        i = int(np.flatnonzero(ok)[np.argmax(self.values[ok])])
        return np.array([self.grid[i]])

    def oracle_value(self, x: np.ndarray, t: float) -> float:
        """f(x, t) on X_t; ``-inf`` outside it, so an unavailable query never raises f*."""
        x = np.asarray(x, float).reshape(1, 1)
        if not self.available(x, t)[0]:
            return -math.inf
        return float(self._evaluate(x, np.float64(t))[0])

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out.update(
            steps=self.steps,
            n_points=len(self.grid),
            lengthscale=self.lengthscale,
            signal_var=self.signal_var,
            true_prior=TRUE_PRIOR,
            instance_seed=self.instance_seed,
            hill_width=self.shape.hill_width,
            small_height=self.shape.small_height,
            tall_height=self.shape.tall_height,
            search_space=self.search_space.as_dict(),
        )
        return out


def make_hills(**opts: Any) -> HillsBenchmark:
    """Build the ``hills`` benchmark; unknown options are an error listing the valid ones.

    ``cost_table`` is accepted for the common :func:`tvbo.simulate` call and ignored (the toy has
    no cost table: one evaluation = one step); ``None`` values mean "the default".
    """
    opts = {k: v for k, v in opts.items() if v is not None and k != "cost_table"}
    valid = (
        "steps",
        "step_seconds",
        "n_points",
        "lengthscale",
        "signal_var",
        "noise_var",
        "hill_width",
        "small_height",
        "tall_height",
        "exclude",
        "period",
        "instance_seed",
        "horizon",
        "cost",
        "oracle_grid_step",
    )
    unknown = sorted(set(opts) - set(valid))
    if unknown:
        raise TypeError(
            f"unknown option(s) {', '.join(unknown)} for benchmark 'hills'; "
            f"valid options: {', '.join(valid)}"
        )
    return HillsBenchmark(**opts)
