"""The forgetting-by-weight names: SW-GP-UCB (Zhou & Shroff 2021, a sliding window) and W-GP-UCB
(Deng et al. 2022, a weighted GP). This package holds the weighted GP (:mod:`.weighted_gp`), its
surrogate (:mod:`.parts`) and the sliding window (:mod:`.sliding_window`, also TV-BOKE's policy).
"""

from __future__ import annotations

from tvbo.algorithms.declare import Declaration, Part

ZHOU_SHROFF = "Zhou & Shroff 2021"
DENG = "Deng et al. 2022"

ALGORITHMS: tuple[Declaration, ...] = (
    Declaration("sw-gp-ucb", "SW-GP-UCB", "spatial GP, UCB, sliding window of the last W points",
                ZHOU_SHROFF,
                preset={"surrogate": {"kind": "gp", "time_kernel": None},
                        "acquisition": {"kind": "ucb"}, "dataset": {"kind": "sliding-window"}}),
    # the weighted GP under the shared UCB (beta = W-DBO's 0.2 d log 2n), keeping all data
    Declaration("w-gp-ucb", "W-GP-UCB", "weighted GP (discounted observations), UCB", DENG,
                preset={"surrogate": {"kind": "weighted-gp"}, "acquisition": {"kind": "ucb"},
                        "dataset": {"kind": "keep-all"}}),
)

PARTS: tuple[Part, ...] = (
    Part("parts:WeightedGPSurrogate", "weighted GP", DENG),
    Part("sliding_window:SlidingWindow", "last W observations", ZHOU_SHROFF),
)
