"""The 1-D moving-bump benchmark of SparQ-GP-UCB (Mauduit, Berthier & Simonetto, §4.1).

The paper's synthetic objective, to maximise over z in [-50, 50] at discrete steps s = 1..T:

    f(z, s) = exp(-0.05 (z - 5 sin(0.1 s))^2) + 0.5 cos(0.2 z) + 1.5,

observed with noise N(0, sigma^2), sigma^2 = 0.01, for T = 500 steps (spec_sparq_pegpucb.md
§A.8.1). A bump of height ~1 oscillates around z = 0 with amplitude 5 and period 2 pi / 0.1 ~ 63
steps, on top of a cosine whose secondary peaks at z = +-10 pi reach ~2.0; max_z f is in
[2.80, 3.00] and the global minimum ~1.0, so instantaneous regret is at most ~2.

Time mapping (the paper is discrete-time): one paper step lasts ``step_seconds`` virtual
seconds, s = t / step_seconds, and by default one evaluation costs one step (``cost =
step_seconds``) and the horizon is ``H = steps * step_seconds`` = 500 s, so an algorithm whose
compute is negligible makes one query per paper step, as in the paper. The paper's expert answers
its side queries within the step: run with ``expert_cost=0`` (engine option) to reproduce that.
f is a smooth function of continuous t, so regret is defined at every virtual instant.

Normalisation: x in [0, 1] maps to z = -50 + 100 x. The oracle is exact in the sense of the other
1-D benchmarks: a dense grid (16385 points, spacing 0.006 in z) + bounded Brent polish.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tvbo.benchmarks.base import Benchmark
from tvbo.benchmarks.oracle import maximise_1d

#: options of :func:`make_moving_bump`
MOVING_BUMP_OPTIONS: tuple[str, ...] = (
    "horizon",
    "cost",
    "noise_var",
    "steps",
    "step_seconds",
    "oracle_grid_step",
    "cost_table",
)


class MovingBump(Benchmark):
    """SparQ-GP-UCB's synthetic moving bump on [-50, 50] (see the module docstring)."""

    name = "moving-bump"
    d = 1
    temporal_kernel = "matern32"
    oracle_exact = True
    lower, upper = -50.0, 50.0

    def __init__(
        self,
        *,
        steps: int = 500,
        step_seconds: float = 1.0,
        horizon: float | None = None,
        cost: float | None = None,
        noise_var: float = 0.01,
        oracle_grid_step: float | None = None,
    ) -> None:
        if isinstance(steps, bool) or not isinstance(steps, int | np.integer) or steps < 1:
            raise ValueError(f"steps (the paper's T) must be an integer >= 1, got {steps!r}")
        try:
            step_seconds = float(step_seconds)
        except (TypeError, ValueError):
            raise TypeError(f"step_seconds must be a number, got {step_seconds!r}") from None
        if not (np.isfinite(step_seconds) and step_seconds > 0):
            raise ValueError(f"step_seconds must be finite and > 0, got {step_seconds!r}")
        self.steps = int(steps)
        self.step_seconds = step_seconds
        super().__init__(
            horizon=self.steps * step_seconds if horizon is None else horizon,
            noise_var=noise_var,
            cost=step_seconds if cost is None else cost,
            table="sparq",
            oracle_grid_step=step_seconds if oracle_grid_step is None else oracle_grid_step,
        )

    # -- the objective ----------------------------------------------------------------------
    def to_original(self, x: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Original coordinates (..., 2): z in [-50, 50] and the paper's step s = t / step."""
        x = np.asarray(x, float)
        t = np.asarray(t, float)
        batch = np.broadcast_shapes(x.shape[:-1], t.shape)
        z = np.empty(batch + (2,))
        z[..., 0] = self.lower + (self.upper - self.lower) * x[..., 0]
        z[..., 1] = t / self.step_seconds
        return z

    def raw(self, z: np.ndarray) -> np.ndarray:
        """``-f(z, s)`` (minimisation form, like the other benchmarks), time last."""
        z = np.asarray(z, float)
        u, s = z[..., 0], z[..., 1]
        return -(np.exp(-0.05 * (u - 5.0 * np.sin(0.1 * s)) ** 2) + 0.5 * np.cos(0.2 * u) + 1.5)

    def _evaluate(self, x: np.ndarray, t: np.ndarray) -> np.ndarray:
        return -self.raw(self.to_original(x, t))

    def _gradient(self, x: np.ndarray, t: np.ndarray) -> np.ndarray:
        z = self.to_original(x, t)
        u, s = z[..., 0], z[..., 1]
        c = u - 5.0 * np.sin(0.1 * s)
        dfdu = -0.1 * c * np.exp(-0.05 * c * c) - 0.1 * np.sin(0.2 * u)
        return (dfdu * (self.upper - self.lower))[..., None]

    def bump_centre(self, t: Any) -> np.ndarray:
        """Normalised centre of the bump at time t (not the argmax: the cosine shifts it)."""
        s = np.asarray(t, float) / self.step_seconds
        return (5.0 * np.sin(0.1 * s) - self.lower) / (self.upper - self.lower)

    # -- oracle -----------------------------------------------------------------------------
    def oracle_solve(self, t: float, warm: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
        fun, _ = self._batch(t)
        x, f = maximise_1d(fun)
        return x[None, :], np.array([f])

    def domain(self) -> dict[str, Any]:
        return {
            "spatial": [[self.lower, self.upper]],
            "time": [0.0, self.horizon / self.step_seconds],
            "time_seconds": [0.0, self.horizon],
        }

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out.update(
            steps=self.steps,
            step_seconds=self.step_seconds,
            objective="maximise exp(-0.05 (z - 5 sin(0.1 s))^2) + 0.5 cos(0.2 z) + 1.5, "
            "z = -50 + 100 x, s = t / step_seconds",
        )
        return out


def make_moving_bump(**opts: Any) -> MovingBump:
    """Build the moving bump; options: see :data:`MOVING_BUMP_OPTIONS` (None = the paper's).

    ``cost_table`` is accepted for interface compatibility (``tvbo.simulate`` always passes it)
    and ignored: the paper's noise (0.01), T (500) and one-step cost are not in the BOLT tables.
    """
    unknown = sorted(set(opts) - set(MOVING_BUMP_OPTIONS))
    if unknown:
        raise TypeError(
            f"unknown option(s) {', '.join(unknown)} for benchmark 'moving-bump'; "
            f"valid options: {', '.join(MOVING_BUMP_OPTIONS)}"
        )
    kwargs = {k: v for k, v in opts.items() if k != "cost_table" and v is not None}
    return MovingBump(**kwargs)
