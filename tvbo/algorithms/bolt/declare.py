"""BOLT (Bardou & Thiran): W-DBO's model with the dataset size n* of the response time.

[A] = "Optimizing through change" (ICML), [B] = "TVBO without a metronome". This package holds
the n* policy (:mod:`.parts`), the n* maths (:mod:`.nstar`) and the response-time fit
(:mod:`.response_time`); the W2 removal rule and relevance are W-DBO's
(:mod:`tvbo.algorithms.wdbo`).
"""

from __future__ import annotations

from typing import Any

from tvbo.algorithms.declare import Declaration, Part
from tvbo.algorithms.wdbo.declare import PAPER_SURROGATE, PUBLIC_FIT, ROBUST_PRIOR

BOLT_B = "Bardou & Thiran, TVBO without a metronome [B]"
BOLT_A = "Bardou & Thiran, Optimizing through change, ICML [A]"
BOLT_AB = "Bardou & Thiran [A]/[B]"

_SAFEGUARDS: dict[str, Any] = {
    "safeguards": {"surrogate.prior": (None, {})},
    "robust_note": "W-DBO's weak log-normal hyperparameter priors (MAP-II)",
    "paper_fit": PUBLIC_FIT,
}
_ROBUST = {"surrogate": {"kind": "gp", "time_kernel": "problem", "prior": ROBUST_PRIOR},
           "acquisition": {"kind": "ucb"}, "removal": {"kind": "w2"}}
#: BOLT has no public code; "based on W-DBO" ([A] §4): the W-DBO public code's model and fit
#: (gpytorch-adam, time normalised over 600 s) and its noisy-sigma UCB, with BOLT's n* policy
_PAPER = {"surrogate": PAPER_SURROGATE, "acquisition": {"kind": "ucb", "include_noise": True},
          "removal": {"kind": "w2"}}
_METRONOME = {"kind": "bolt-nstar", "version": "metronome"}
_ICML = {"kind": "bolt-nstar", "version": "icml"}

ALGORITHMS: tuple[Declaration, ...] = (
    Declaration(name="bolt", display="BOLT", **_SAFEGUARDS,
                description="BOLT: dataset size n* from the online response-time fit",
                citation=BOLT_B, preset={**_ROBUST, "dataset": _METRONOME}),
    Declaration(name="bolt-icml", display="BOLT-ICML", **_SAFEGUARDS,
                description="BOLT: n* computed once from a given R(n)", citation=BOLT_A,
                preset={**_ROBUST, "dataset": _ICML}),
    Declaration(name="bolt-reference", display="BOLT", **_SAFEGUARDS,
                description="BOLT without W-DBO's weak priors (plain ML fit)", citation=BOLT_B,
                preset={**_ROBUST, "surrogate": {"kind": "gp", "time_kernel": "problem"},
                        "dataset": _METRONOME}),
    Declaration(name="bolt-paper", display="BOLT", **_SAFEGUARDS,
                description="BOLT on W-DBO's public code's surrogate (GPyTorch Adam fit, time "
                "over 600 s)", citation=BOLT_B, preset={**_PAPER, "dataset": _METRONOME}),
    # [A]'s BOLT (ICML: n* from the ICML objective) on the same faithful surrogate, for [A]'s table
    Declaration(name="bolt-icml-paper", display="BOLT-ICML", **_SAFEGUARDS,
                description="BOLT-ICML ([A]'s n*) on W-DBO's public code's surrogate (GPyTorch "
                "Adam fit)", citation=BOLT_A, preset={**_PAPER, "dataset": _ICML}),
)

PARTS: tuple[Part, ...] = (
    Part("parts:BoltNStar", "BOLT's optimal dataset size n*", BOLT_AB),
)
