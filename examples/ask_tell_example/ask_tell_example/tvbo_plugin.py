"""The tvbo side of the plugin: the ask/tell optimiser as a tvbo Algorithm, and a benchmark.

tvbo finds both through the entry points of ``pyproject.toml`` (groups ``tvbo.algorithms`` and
``tvbo.benchmarks``); without installing the package, ``--plugin ask_tell_example.tvbo_plugin``
(or ``plugins: [ask_tell_example.tvbo_plugin]`` in a workflow config) finds them through the
mappings at the end of this module.

The wrapper reports no work to tvbo (the outside code cannot count its flops), so
``compute: counted`` refuses it: run it with ``compute: measured``, then replay it
deterministically with ``tvbo calibrate --from-runs`` and ``compute: polynomial``.
"""

from __future__ import annotations

import numpy as np

from ask_tell_example.optimiser import OnePlusOneES
from tvbo.algorithms import Algorithm
from tvbo.benchmarks import Benchmark


class AskTellES(Algorithm):
    """(1+1)-ES through its ask/tell interface (an outside optimiser, time-unaware)."""

    #: the label of every table and figure
    display_name = "(1+1)-ES (public code)"
    citation = "example plugin: ask_tell_example"

    def __init__(self, sigma: float = 0.2) -> None:
        super().__init__()
        if not (isinstance(sigma, int | float) and 0 < sigma <= 1):
            raise ValueError(f"sigma must be a number in (0, 1], got {sigma!r}")
        self.sigma = float(sigma)
        self.optimiser: OnePlusOneES | None = None

    def _setup(self) -> None:
        # the optimiser's seed comes from the run's algorithm stream: same seed, same run
        seed = int(self.rng.integers(2**31))
        self.optimiser = OnePlusOneES(self.problem.d, self.sigma, seed)

    def propose(self, t: float) -> np.ndarray:
        return self.optimiser.ask()

    def ingest(self, x: np.ndarray, t: float, y: float, *, now: float, warmup: bool) -> None:
        self.optimiser.tell(x, y)  # warm-up points too: the optimiser learns from every value

    def dataset_size(self) -> int:
        return self.optimiser.told if self.optimiser is not None else 0

    def state(self) -> dict[str, float]:
        return {"sigma": self.optimiser.sigma} if self.optimiser is not None else {}

    def options(self) -> dict:
        return {"sigma": self.sigma}


class DriftingPeak(Benchmark):
    """A Gaussian peak drifting across [0, 1]^2 along a circle (closed-form optimum)."""

    name = "drifting-peak"
    d = 2
    oracle_exact = True

    def __init__(self, *, horizon: float | None = None, cost_table: str | None = None,
                 cost: float | None = None, noise_var: float | None = None,
                 period: float = 120.0) -> None:
        # cost_table: the built-in synthetic tables do not list this benchmark; it is ignored
        super().__init__(horizon=600.0 if horizon is None else horizon,
                         noise_var=0.01 if noise_var is None else noise_var,
                         cost=1.0 if cost is None else cost, table="plugin")
        self.period = float(period)

    def _centre(self, t: np.ndarray) -> np.ndarray:
        phase = 2 * np.pi * np.asarray(t, float) / self.period
        return np.stack([0.5 + 0.3 * np.cos(phase), 0.5 + 0.3 * np.sin(phase)], axis=-1)

    def _evaluate(self, x: np.ndarray, t: np.ndarray) -> np.ndarray:
        return np.exp(-np.sum((x - self._centre(t)) ** 2, axis=-1) / (2 * 0.1**2))

    def raw(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        return -self._evaluate(z[..., :2], z[..., 2])

    def exact_argmax(self, t: float) -> np.ndarray:
        return self._centre(np.float64(t))


#: for ``--plugin ask_tell_example.tvbo_plugin`` / ``plugins: [...]`` (no install needed)
TVBO_ALGORITHMS = {"ask-tell-es": AskTellES}
TVBO_BENCHMARKS = {"drifting-peak": DriftingPeak}
