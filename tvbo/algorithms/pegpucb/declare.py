"""PE-GP-UCB and its competitors (Ziomek, Adachi & Osborne): TV-GP bandits with an unknown prior.

This package holds the candidate-priors surrogate and the prior-set acquisitions (:mod:`.parts`).
The candidate priors themselves live in :mod:`tvbo.models.candidate_prior`: the paper's
benchmarks (hills, Intel) declare them too. Random search, the family's floor row, is declared
with the other reference policies (:mod:`tvbo.algorithms.reference`).
"""

from __future__ import annotations

from typing import Any

from tvbo.algorithms.declare import Declaration, Part

PEGPUCB = "Ziomek, Adachi & Osborne, TV-GP bandits with unknown prior"


def prior_set(acquisition: str, **surrogate: Any) -> dict[str, Any]:
    """The preset of the family: candidate priors on the shared data, ``acquisition`` over them."""
    return {"surrogate": {"kind": "candidate-priors", **surrogate},
            "acquisition": {"kind": acquisition}, "dataset": {"kind": "keep-all"},
            "removal": None}


ALGORITHMS: tuple[Declaration, ...] = (
    # "pre": the pre-update sigma the proof needs; Algorithm 1 as printed uses the posterior one
    Declaration("pe-gp-ucb", "PE-GP-UCB", "prior elimination over candidate GP priors", PEGPUCB,
                preset=prior_set("prior-elimination"),
                safeguards={"acquisition.test_sigma": ("post",)},
                robust_note="the elimination test uses the pre-update sigma (as the proof needs)"),
    Declaration("mle-prior", "MLE prior", "prior chosen by type-II maximum likelihood", PEGPUCB,
                preset=prior_set("mle-prior")),
    Declaration("bayes-prior", "Bayes prior", "posterior mixture over candidate priors", PEGPUCB,
                preset=prior_set("bayes-prior")),
    Declaration("regret-balancing", "Regret balancing", "regret balancing over candidate priors",
                PEGPUCB, preset=prior_set("regret-balancing")),
)

PARTS: tuple[Part, ...] = (
    Part("parts:CandidatePriorsSurrogate",
         "one fixed exact GP per candidate prior, on the shared data", PEGPUCB),
    Part("parts:PriorEliminationAcquisition",
         "PE-GP-UCB: optimistic argmax over (x, prior), eliminates failing priors", PEGPUCB),
    Part("parts:MLEPriorAcquisition", "UCB of the maximum-evidence prior", PEGPUCB),
    Part("parts:BayesPriorAcquisition", "posterior-weighted UCB over the priors", PEGPUCB),
    Part("parts:RegretBalancingAcquisition", "plays the least-played prior, drops dominated ones",
         PEGPUCB),
    Part("parts:RandomSearchAcquisition", "uniform on the search space X_t", PEGPUCB),
)
