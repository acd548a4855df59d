"""BOKE (Zhu et al.): BO by kernel regression and density, and its variants.

This package holds the kernel-regression model (:mod:`.kernel_regression`), its two acquisitions
(:mod:`.kr_ucb`, :mod:`.ikr_ucb`) and the parts that wrap them (:mod:`.parts`). TV-BOKE's sliding
window is SW-GP-UCB's policy (:mod:`tvbo.algorithms.weighted.sliding_window`).
"""

from __future__ import annotations

from tvbo.algorithms.declare import Declaration, Part

BOKE = "Zhu et al., BO by kernel regression and density (BOKE)"

_KR = {"kind": "kernel-regression"}

ALGORITHMS: tuple[Declaration, ...] = (
    Declaration("boke", "BOKE", "kernel regression surrogate, IKR-UCB", BOKE,
                preset={"surrogate": _KR, "acquisition": {"kind": "ikr-ucb"},
                        "dataset": {"kind": "keep-all"}}),
    # p is not reported (spec §2.6); 0.5 = spec §8.11's example
    Declaration("boke-plus", "BOKE+", "BOKE+ (exploits with probability 1 - p)", BOKE,
                preset={"surrogate": _KR, "acquisition": {"kind": "ikr-ucb", "p": 0.5},
                        "dataset": {"kind": "keep-all"}}),
    Declaration("kr-ucb", "KR-UCB", "kernel regression, KR-UCB (Appendix A)", BOKE,
                preset={"surrogate": _KR, "acquisition": {"kind": "kr-ucb"},
                        "dataset": {"kind": "keep-all"}}),
    # sliding window of the last 100 observations (SW-GP-UCB's policy and default); the
    # discounted variant: surrogate={"forgetting": "discount"}, dataset="keep-all"
    Declaration("tv-boke", "TV-BOKE", "kernel regression, IKR-UCB, sliding window", BOKE,
                preset={"surrogate": _KR, "acquisition": {"kind": "ikr-ucb"},
                        "dataset": {"kind": "sliding-window", "window": 100}}),
)

PARTS: tuple[Part, ...] = (
    Part("parts:KernelRegressionSurrogate", "Nadaraya-Watson kernel regression", BOKE),
    Part("parts:IKRUCBAcquisition", "IKR-UCB", BOKE),
    Part("parts:KRUCBAcquisition", "KR-UCB", BOKE),
)
