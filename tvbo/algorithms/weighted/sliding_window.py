"""SW-GP-UCB's dataset policy (Zhou & Shroff 2021): keep the last W observations.

SW-GP-UCB runs plain GP-UCB on a *spatial* GP (no temporal kernel) and handles staleness purely
by which observations it keeps (spec_baselines.md §5; W-DBO's protocol §7.8). TV-BOKE reuses the
window on its kernel regression (:mod:`tvbo.algorithms.boke`). The policy never acts during
warm-up: the engine's random initial design is kept.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tvbo.algorithms.components import DatasetPolicy, register_component

__all__ = ["SlidingWindow"]


class SlidingWindow(DatasetPolicy):
    """SW-GP-UCB: after each post-warm-up fit, drop observations until at most W remain (§5.3).

    The dropped observation is the oldest (by position in the dataset, i.e. arrival order) --
    exactly "the last W observations". If the algorithm has a removal rule (an ablation such as
    a fixed-size budget with W2 relevance), that rule chooses instead.

    ``window`` default 100: Zhou & Shroff's W ~ gamma_T^{1/4} T^{1/2} P_T^{-1/2} needs the
    variation budget P_T, which is unknown here (spec §5.4, a tuning parameter); 100 is the
    R-GP-UCB block length N(eps) of Bogunovic's Matérn rule at eps ~ 7e-3 in d = 2 (about a
    sixth of a 600 s Eggholder run), so the two forgetting baselines hold comparable data.
    During warm-up the window is not applied; the first post-warm-up step trims to W.
    """

    kind = "sliding-window"

    def __init__(self, *, window: int = 100) -> None:
        if isinstance(window, bool) or not isinstance(window, int | np.integer) or window < 1:
            raise ValueError(f"window must be an integer >= 1, got {window!r}")
        self.window = int(window)

    def after_fit(self, *, now: float, warmup: bool) -> None:
        if warmup:
            return
        while self.surrogate.n > self.window:
            if self.removal is None:
                index = 0
            else:
                index, _ = self.removal.choose(self.surrogate, now)
            self.editor.remove(index)

    def state(self) -> dict[str, float]:
        return {"window": float(self.window)}

    def options(self) -> dict[str, Any]:
        return {"window": self.window}


register_component("dataset", SlidingWindow)
