"""Exploration schedules beta for GP-UCB, ``alpha = mu + sqrt(beta) * sigma``.

None of the BOLT papers states the schedule used in its experiments; the public W-DBO reference
uses ``beta = 0.2 * d * log(2 n)`` with ``n`` the *current dataset size* (so beta shrinks when
observations are removed). That is our default. The theoretical schedule of Srinivas et al. (2012,
Thm. 2) is offered for study; it is far more exploratory in practice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

BETA_SCHEDULES: tuple[str, ...] = ("wdbo", "constant", "srinivas", "log")


@dataclass(frozen=True)
class BetaSchedule:
    """beta as a function of the spatial dimension d, dataset size n and iteration count k.

    ``kind``:
      * ``"wdbo"``: ``scale * d * log(2 n)`` (default scale 0.2, the W-DBO reference);
      * ``"constant"``: ``value``;
      * ``"log"``: ``c1 log(c2 k)`` floored at ``floor`` -- Bogunovic et al. (2016, Sec. 5)
        practical schedule (0.8 log(4k) on synthetic data, 0.8 log(0.4k) on temperature; the
        floor keeps it positive for small k);
      * ``"srinivas"``: Srinivas et al. (2012), Theorem 2, with ``a = b = r = 1`` on [0,1]^d:
        ``2 log(k^2 2 pi^2 / (3 delta)) + 2 d log(k^2 d b r sqrt(log(4 d a / delta)))``.
    """

    kind: str = "wdbo"
    scale: float = 0.2
    value: float = 2.0
    delta: float = 0.1
    c1: float = 0.8
    c2: float = 4.0
    floor: float = 1e-3

    def __post_init__(self) -> None:
        if self.kind not in BETA_SCHEDULES:
            raise ValueError(
                f"unknown beta schedule {self.kind!r}; valid: {', '.join(BETA_SCHEDULES)}"
            )
        if min(self.scale, self.value, self.c1, self.c2, self.floor) <= 0:
            raise ValueError("beta schedule: scale, value, c1, c2 and floor must be > 0")
        if not 0 < self.delta < 1:
            raise ValueError(f"beta schedule: delta must be in (0, 1), got {self.delta}")

    def __call__(self, d: int, n: int, k: int) -> float:
        if self.kind == "constant":
            return self.value
        if self.kind == "wdbo":
            return self.scale * d * math.log(2 * max(n, 1))
        if self.kind == "log":
            return max(self.floor, self.c1 * math.log(self.c2 * max(k, 1)))
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
        allowed = {"kind", "scale", "value", "delta", "c1", "c2", "floor"}
        unknown = sorted(set(spec) - allowed)
        if unknown:
            raise ValueError(f"beta: unknown key(s) {unknown}; valid: {sorted(allowed)}")
        return BetaSchedule(**spec)
    raise ValueError(f"beta must be a schedule name, a number or a mapping, got {spec!r}")
