"""Pairwise orderings: how the report compares two algorithms, on each side.

For every pair of algorithms of a benchmark (:func:`pairwise_orderings`), each side's order is that
of its means, except that the pair is a **tie** on that side when its intervals mean ± 1 s.e.
overlap (``|m_a - m_b| <= se_a + se_b``, :func:`ordering`; the papers' own underline rule,
:func:`tvbo.analysis.best_cells.best_and_overlapping`): those seeds cannot order such a pair. The
rule is the same on both sides: a paper's order whose own intervals overlap is no more an order than
tvbo's (a pair with a paper cell printed without s.e., as in W-DBO's table, is no strict order on
the paper side: *paper without s.e.*, a tie). A pair *agrees* when both orders are the same,
*disagrees* when they are opposite strict orders, and is a *tie* when either side ties (each pair's
``tied_by`` says which side); :func:`agreement_counts` tallies them per benchmark, and
:func:`head_to_head` counts a paper's headline pair (e.g. BOLT vs W-DBO) on both sides.
"""

from __future__ import annotations

import itertools
import math

import pandas as pd

from tvbo.analysis.metrics import OVERALL_LABEL


def ordering(mean_a: float, se_a: float, mean_b: float, se_b: float) -> int:
    """-1 when a is lower (better), +1 when b is, 0 for a tie (intervals mean ± 1 s.e. overlap).

    A missing s.e. (one seed) counts as 0, so only equal means tie.
    """
    se_a = 0.0 if not math.isfinite(se_a) else se_a
    se_b = 0.0 if not math.isfinite(se_b) else se_b
    if abs(mean_a - mean_b) <= se_a + se_b:
        return 0
    return -1 if mean_a < mean_b else 1


#: ``tied_by`` of a pair whose paper cells carry no s.e.: never a strict order on the paper side
NO_PAPER_SE = "paper without s.e."


def pairwise_orderings(comparison: pd.DataFrame) -> pd.DataFrame:
    """Every pair of algorithms per benchmark of a comparison table, paper vs tvbo order.

    Columns: benchmark, a, b (paper order of the rows), paper and tvbo (:func:`ordering` of each
    side's means and s.e.: -1/0/+1), status (agree / tie / disagree) and tied_by (for a tie:
    ``tvbo``, ``paper`` or ``both``, the side(s) whose intervals overlap; else empty). The
    Overall rows are left out (they are no benchmark).
    """
    body = comparison[comparison["benchmark"] != OVERALL_LABEL]
    records = []
    for benchmark, group in body.groupby("benchmark", sort=False):
        rows = list(group.itertuples(index=False))
        for ra, rb in itertools.combinations(rows, 2):
            paper = ordering(ra.paper_mean, ra.paper_se, rb.paper_mean, rb.paper_se)
            tvbo = ordering(ra.tvbo_mean, ra.tvbo_se, rb.tvbo_mean, rb.tvbo_se)
            tied_by = {(True, True): "both", (True, False): "paper",
                       (False, True): "tvbo"}.get((paper == 0, tvbo == 0), "")
            if not (math.isfinite(ra.paper_se) and math.isfinite(rb.paper_se)):
                # the paper printed no s.e. (W-DBO's table): its order of two means is no
                # strict order, however small the gap (issue 22 item 6: the report's rule)
                paper, tied_by = 0, NO_PAPER_SE
            if tied_by:
                status = "tie"
            else:
                status = "agree" if paper == tvbo else "disagree"
            records.append(
                {"benchmark": benchmark, "a": ra.algorithm, "b": rb.algorithm, "paper": paper,
                 "tvbo": tvbo, "status": status, "tied_by": tied_by}
            )
    return pd.DataFrame.from_records(
        records, columns=["benchmark", "a", "b", "paper", "tvbo", "status", "tied_by"]
    )


def agreement_counts(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per benchmark and overall (last row, ``Overall``): agree, tie, disagree, orderings, and
    ``paper tie``: the ties in which the paper's own intervals overlap (its s.e. cannot order
    the pair, whatever tvbo finds)."""
    counts = (
        pairs.groupby("benchmark", sort=False)["status"].value_counts().unstack(fill_value=0)
        if not pairs.empty
        else pd.DataFrame()
    )
    counts = counts.reindex(columns=["agree", "tie", "disagree"], fill_value=0)
    counts["orderings"] = counts.sum(axis=1)
    for column, kinds in (("paper tie", ["paper", "both"]), (NO_PAPER_SE, [NO_PAPER_SE])):
        if pairs.empty:
            counts[column] = 0
            continue
        found = pairs["tied_by"].isin(kinds).groupby(pairs["benchmark"], sort=False).sum()
        counts[column] = found.reindex(counts.index, fill_value=0)
    counts.loc[OVERALL_LABEL] = counts.sum(axis=0)
    return counts.astype(int)


def head_to_head(comparison: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Per benchmark holding both: ``paper`` and ``tvbo`` outcome of ``a`` against ``b``, and
    whether a's mean alone is the lower (``paper_lower``, ``tvbo_lower``).

    *better*: a's mean is lower and the intervals mean ± 1 s.e. do not overlap (the orderings'
    tie rule, :func:`ordering`, on each side); *worse*: the reverse; *tie*: they overlap.
    """
    body = comparison[comparison["benchmark"] != OVERALL_LABEL]
    names = {-1: "better", 0: "tie", 1: "worse"}
    records = []
    for benchmark, group in body.groupby("benchmark", sort=False):
        rows = {r.algorithm: r for r in group.itertuples(index=False)}
        if a not in rows or b not in rows:
            continue
        ra, rb = rows[a], rows[b]
        records.append({
            "benchmark": benchmark,
            "paper": names[ordering(ra.paper_mean, ra.paper_se, rb.paper_mean, rb.paper_se)],
            "tvbo": names[ordering(ra.tvbo_mean, ra.tvbo_se, rb.tvbo_mean, rb.tvbo_se)],
            "paper_lower": bool(ra.paper_mean < rb.paper_mean),
            "tvbo_lower": bool(ra.tvbo_mean < rb.tvbo_mean),
        })
    return pd.DataFrame.from_records(
        records, columns=["benchmark", "paper", "tvbo", "paper_lower", "tvbo_lower"]
    )
