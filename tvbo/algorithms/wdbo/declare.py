"""W-DBO (Bardou, Thiran & Ranieri, NeurIPS 2024 [W]): removes stale data by W2 relevance.

This package holds the relevance maths (:mod:`.relevance`, which BOLT reuses) and the removal
rule and budget (:mod:`.parts`); the three names below differ only in the surrogate's fit and
the safeguards (see :mod:`.parts` for the evidence behind the robust preset).
"""

from __future__ import annotations

import math
from typing import Any

from tvbo.algorithms.declare import Declaration, Part

WDBO = "Bardou, Thiran & Ranieri, This too shall pass, NeurIPS 2024 [W]"

#: Weak log-normal priors ``(median, log_sd)`` of the robust ``w-dbo`` preset's MAP-II fit
#: (see tvbo.algorithms.wdbo.parts for the evidence). ``"elapsed"``: the temporal median is the
#: virtual time since the first observation (GPSurrogate), so a young run expects slow drift.
ROBUST_PRIOR: dict[str, tuple[Any, float]] = {
    "lengthscale_time": ("elapsed", 1.0),
    "noise_var": (math.exp(-4.0), 1.0),
    "lengthscale_space": (0.3, 1.5),
}
#: at most this many removals per cleaning in the robust preset
ROBUST_MAX_REMOVALS = 2

#: The W-DBO public code's fit (tvbo.gp.fit_modes "gpytorch-adam"), with time normalised to
#: [0, 1] over the paper's 600 s tasks (App. H); shared by ``w-dbo-paper`` and ``bolt-paper``.
PAPER_SURROGATE: dict[str, Any] = {
    "kind": "gp",
    "time_kernel": "problem",
    "fit_mode": "gpytorch-adam",
    "fit_mode_options": {"time_scale": 600.0},
}
#: W-DBO's public code (which BOLT builds on) fits with GPyTorch's Adam (tvbo.gp.fit_modes)
PUBLIC_FIT = "gpytorch-adam"

#: every W-DBO name shares the family's labels; the variant comes from its resolved options
_LABEL: dict[str, Any] = {
    "display": "W-DBO",
    "safeguards": {"surrogate.prior": (None, {}), "dataset.max_removals": (None,)},
    "robust_note": "weak log-normal hyperparameter priors (MAP-II) and at most 2 removals per "
    "cleaning",
    "paper_fit": PUBLIC_FIT,
}
_PARTS = {"acquisition": {"kind": "ucb"}, "removal": {"kind": "w2"}}

ALGORITHMS: tuple[Declaration, ...] = (
    Declaration(name="w-dbo", **_LABEL,
                description="W-DBO: removes stale data by W2 relevance (weak priors)",
                citation=WDBO,
                preset={**_PARTS,
                        "surrogate": {"kind": "gp", "time_kernel": "problem",
                                      "prior": ROBUST_PRIOR},
                        "dataset": {"kind": "wdbo-budget", "max_removals": ROBUST_MAX_REMOVALS}}),
    Declaration(name="w-dbo-reference", **_LABEL,
                description="W-DBO with the paper's rules and tvbo's plain ML fit (L-BFGS-B, no "
                "priors)", citation=WDBO,
                preset={**_PARTS, "surrogate": {"kind": "gp", "time_kernel": "problem"},
                        "dataset": {"kind": "wdbo-budget"}}),
    # W-DBO as published (paper + public code, reference_implementations.md §1.2): the GPyTorch
    # fit (Adam, lr 0.1, 150 steps, cold start, no priors, no bounds), a refit after every
    # removal, an unlimited number of removals per cleaning, and UCB's sigma including the noise
    # (the code's posterior() returns the likelihood's predictive). Time: the paper normalises it
    # to [0, 1] over each 600 s task; the library takes the caller's units (its README loop:
    # minutes) -- the unit sets how far 150 Adam steps can move l_T (fit_mode_options.time_scale).
    Declaration(name="w-dbo-paper", **_LABEL,
                description="W-DBO as its public code: GPyTorch Adam fit from defaults, refit "
                "after removals", citation=WDBO,
                preset={"surrogate": PAPER_SURROGATE,
                        "acquisition": {"kind": "ucb", "include_noise": True},
                        "dataset": {"kind": "wdbo-budget", "refit_after_removal": True},
                        "removal": {"kind": "w2"}}),
)

PARTS: tuple[Part, ...] = (
    Part("parts:WDBOBudget", "W-DBO removal budget", WDBO),
    Part("parts:W2Relevance", "remove the least W2-relevant", WDBO),
)
