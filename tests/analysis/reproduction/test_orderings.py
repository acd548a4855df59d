"""Pairwise orderings and their tie rule (tvbo/analysis/reproduction/orderings.py)."""

from __future__ import annotations

import math

import pandas as pd

from tvbo.analysis.reproduction.orderings import (
    NO_PAPER_SE,
    agreement_counts,
    ordering,
    pairwise_orderings,
)


def test_ordering_tie_rule() -> None:
    assert ordering(1.0, 0.1, 1.2, 0.1) == 0  # |0.2| <= 0.2: intervals touch -> tie
    assert ordering(1.0, 0.1, 1.25, 0.1) == -1
    assert ordering(2.0, math.nan, 1.0, math.nan) == 1  # no s.e.: only equal means tie


def test_a_paper_without_se_gives_no_strict_order() -> None:

    # W-DBO's table prints no s.e.: means 1.00 and 1.01 (a 1 % gap) are no strict order
    nan = math.nan
    comparison = pd.DataFrame({
        "benchmark": ["shekel"] * 2, "algorithm": ["gp-ucb", "bolt"],
        "paper_mean": [1.00, 1.01], "paper_se": [nan, nan],
        "tvbo_mean": [2.0, 1.0], "tvbo_se": [0.01, 0.01],
    })
    pairs = pairwise_orderings(comparison)
    assert pairs.iloc[0][["paper", "status", "tied_by"]].tolist() == [0, "tie", NO_PAPER_SE]
    counts = agreement_counts(pairs)
    assert counts.loc["Overall", NO_PAPER_SE] == 1 and counts.loc["Overall", "disagree"] == 0


def test_head_to_head_counts_both_sides(built) -> None:
    table = built.tables["bolt-metronome"].head_to_head.set_index("benchmark")
    # Shekel: paper bolt 2.51 ± 0.02 vs gp-ucb 2.57 ± 0.05 overlap (0.06 <= 0.07): tie;
    # tvbo bolt 3.0 vs gp-ucb 2.0 (s.e. 0.017 each): worse. Eggholder: paper 262 ± 7.1 vs
    # 517 ± 16.4 and tvbo 300 ± 17 vs 500 ± 1.7: better on both sides.
    assert table.loc["shekel"].to_dict() == {"paper": "tie", "tvbo": "worse",
                                             "paper_lower": True, "tvbo_lower": False}
    assert table.loc["eggholder"].to_dict() == {"paper": "better", "tvbo": "better",
                                                "paper_lower": True, "tvbo_lower": True}
    assert ("Head to head, bolt vs gp-ucb (better: a lower mean whose interval mean ± 1 s.e. "
            "does not overlap the other's): tvbo better beyond the s.e. on 1 of 2 benchmarks "
            "(tie 0, worse 1; lower mean on 1); paper better beyond the s.e. on 1 of 2 "
            "benchmarks (tie 1, worse 0; lower mean on 2).") in built.text
