"""SparQ-GP-UCB (Mauduit, Berthier & Simonetto): TV-GP bandits with an expert.

This package holds its three parts (:mod:`.parts`), the expert's query rule and beta
(:mod:`.expert`) and the M-DPP sampler of the expert's locations (:mod:`.dpp`).
"""

from __future__ import annotations

from tvbo.algorithms.declare import Declaration, Part

SPARQ = "Mauduit, Berthier & Simonetto, TV-GP bandits with experts"

ALGORITHMS: tuple[Declaration, ...] = (
    # Algorithm 1 of the paper, every open question resolved as an option of its part. The cold
    # start is tvbo's fix for a fit trapped in the "all noise" optimum (tvbo.algorithms.sparq.parts)
    Declaration("sparq-gp-ucb", "SparQ-GP-UCB",
                "heteroscedastic GP, UCB after expert side queries at M-DPP locations", SPARQ,
                preset={"surrogate": {"kind": "sparq-gp"}, "acquisition": {"kind": "expert-ucb"},
                        "dataset": {"kind": "uncertainty-injection"}},
                safeguards={"surrogate.fit_cold_start": (False,)},
                robust_note="every hyperparameter fit also starts from the initial values"),
)

PARTS: tuple[Part, ...] = (
    Part("parts:SparQGPSurrogate",
         "exact GP with per-point noise on the kept observations and the expert answers", SPARQ),
    Part("parts:ExpertUCB",
         "expert side queries at M-DPP locations, then UCB (Theorem 3.1's beta)", SPARQ),
    Part("parts:UncertaintyInjection",
         "injected noise sigma^2 (a^2 + 1) by age; discard above g(t)", SPARQ),
)
