"""Exploration schedules beta for GP-UCB, ``alpha = mu + sqrt(beta) * sigma``.

None of the BOLT papers states the schedule used in its experiments; the public W-DBO reference
uses ``beta = 0.2 * d * log(2 n)`` with ``n`` the *current dataset size* (so beta shrinks when
observations are removed). That is our default. The theoretical schedule of Srinivas et al. (2012,
Thm. 2) is offered for study; it is far more exploratory in practice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

BETA_SCHEDULES: tuple[str, ...] = ("wdbo", "constant", "srinivas")


@dataclass(frozen=True)
class BetaSchedule:
    """beta as a function of the spatial dimension d, dataset size n and iteration count k.

    ``kind``:
      * ``"wdbo"``: ``scale * d * log(2 n)`` (default scale 0.2, the W-DBO reference);
      * ``"constant"``: ``value``;
      * ``"srinivas"``: Srinivas et al. (2012), Theorem 2, with ``a = b = r = 1`` on [0,1]^d:
        ``2 log(k^2 2 pi^2 / (3 delta)) + 2 d log(k^2 d b r sqrt(log(4 d a / delta)))``.
    """

    kind: str = "wdbo"
    scale: float = 0.2
    value: float = 2.0
    delta: float = 0.1

    def __post_init__(self) -> None:
        if self.kind not in BETA_SCHEDULES:
            raise ValueError(
                f"unknown beta schedule {self.kind!r}; valid: {', '.join(BETA_SCHEDULES)}"
            )
        if self.scale <= 0 or self.value <= 0:
            raise ValueError("beta schedule: scale and value must be > 0")
        if not 0 < self.delta < 1:
            raise ValueError(f"beta schedule: delta must be in (0, 1), got {self.delta}")

    def __call__(self, d: int, n: int, k: int) -> float:
        if self.kind == "constant":
            return self.value
        if self.kind == "wdbo":
            return self.scale * d * math.log(2 * max(n, 1))
        k = max(k, 1)
        return 2 * math.log(k**2 * 2 * math.pi**2 / (3 * self.delta)) + 2 * d * math.log(
            k**2 * d * math.sqrt(math.log(4 * d / self.delta))
        )


def make_beta(spec: str | float | dict | BetaSchedule | None) -> BetaSchedule:
    """Build a schedule from a name, a constant number, or a mapping of its fields."""
    if spec is None:
        return BetaSchedule()
    if isinstance(spec, BetaSchedule):
        return spec
    if isinstance(spec, bool):
        raise ValueError(f"beta must be a schedule name, a number or a mapping, got {spec!r}")
    if isinstance(spec, int | float):
        return BetaSchedule(kind="constant", value=float(spec))
    if isinstance(spec, str):
        return BetaSchedule(kind=spec)
    if isinstance(spec, dict):
        allowed = {"kind", "scale", "value", "delta"}
        unknown = sorted(set(spec) - allowed)
        if unknown:
            raise ValueError(f"beta: unknown key(s) {unknown}; valid: {sorted(allowed)}")
        return BetaSchedule(**spec)
    raise ValueError(f"beta must be a schedule name, a number or a mapping, got {spec!r}")
