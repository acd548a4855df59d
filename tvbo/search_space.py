"""Search spaces that change with time: X_t, the points a query may be chosen from at time t.

A leaf module (it imports nothing from ``tvbo``): the benchmark that restricts its domain
(``hills``, PE-GP-UCB's toy) and the algorithms told the same schedule through their
``search_space`` option both read the one definition here, so neither imports the other's layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class AlternatingSearchSpace:
    """X_t: the whole domain on even steps, the domain minus ``exclude`` on odd steps.

    ``step_seconds`` maps virtual time to steps (``s = floor(t / step_seconds)``); ``period``
    steps form one cycle whose LAST step is restricted (period 2: every other step).
    """

    step_seconds: float = 1.0
    exclude: tuple[float, float] = (0.05, 0.17)
    period: int = 2

    def __post_init__(self) -> None:
        if not (math.isfinite(self.step_seconds) and self.step_seconds > 0):
            raise ValueError(f"step_seconds must be finite and > 0, got {self.step_seconds!r}")
        lo, hi = (float(v) for v in self.exclude)
        if not 0.0 <= lo < hi <= 1.0:
            raise ValueError(f"exclude must be a band 0 <= lo < hi <= 1, got {self.exclude!r}")
        if not (isinstance(self.period, int) and self.period >= 1):
            raise ValueError(f"period must be an integer >= 1, got {self.period!r}")
        object.__setattr__(self, "exclude", (lo, hi))

    @classmethod
    def from_options(cls, options: dict[str, Any] | None) -> AlternatingSearchSpace | None:
        """Build from a config mapping; ``None`` (the default everywhere) = no restriction."""
        if options is None:
            return None
        if isinstance(options, cls):
            return options
        if not isinstance(options, dict):
            raise ValueError(f"search_space must be a mapping or null, got {options!r}")
        valid = ("step_seconds", "exclude", "period")
        unknown = sorted(set(options) - set(valid))
        if unknown:
            raise ValueError(f"unknown search_space option(s) {unknown}; valid: {list(valid)}")
        opts = dict(options)
        if "exclude" in opts:
            opts["exclude"] = tuple(opts["exclude"])
        return cls(**opts)

    def step(self, t: float) -> int:
        """The step index of virtual time ``t`` (robust to round-off at step boundaries)."""
        return int(math.floor(float(t) / self.step_seconds + 1e-9))

    def restricted(self, t: float) -> bool:
        return self.step(t) % self.period == self.period - 1 and self.period > 1

    def mask(self, X: np.ndarray, t: float) -> np.ndarray:
        """Boolean mask of the rows of ``X`` (m, d) that are available at time ``t``."""
        X = np.asarray(X, float)
        if not self.restricted(t):
            return np.ones(len(X), bool)
        lo, hi = self.exclude
        return ~np.all((X >= lo) & (X <= hi), axis=1)

    def as_dict(self) -> dict[str, Any]:
        return {
            "step_seconds": self.step_seconds,
            "exclude": list(self.exclude),
            "period": self.period,
        }
