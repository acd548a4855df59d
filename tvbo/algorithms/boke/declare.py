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
    # the paper's GP-UCB baseline (App. A.1): "a fixed bandwidth" and "a fixed beta > 0", a
    # Gaussian kernel, no values given. tvbo's choices: GP-UCB's own starting hyperparameters
    # (tvbo.algorithms.components.GPSurrogate: l = 0.2 on the unit cube, signal 1 on standardised
    # y, noise 0.01), never refitted; beta the constant rule's 2 (as tv-gp-ucb-constant-beta)
    Declaration("gp-ucb-fixed", "GP-UCB (fixed)",
                "spatial GP, Gaussian kernel with fixed hyperparameters, constant-beta UCB", BOKE,
                preset={"surrogate": {"kind": "gp", "time_kernel": None, "space_kernel": "rbf",
                                      "hyperparameters": "fixed",
                                      "initial": {"signal_var": 1.0, "lengthscale_space": 0.2,
                                                  "noise_var": 0.01}},
                        "acquisition": {"kind": "ucb", "beta": {"kind": "constant", "value": 2.0}},
                        "dataset": {"kind": "keep-all"}, "removal": None}),
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
