"""One published table against its campaign: the cells, the orderings and their tallies.

Per published table (BOLT [B] Table 2, BOLT [A] Table 3, W-DBO Table 2) the cell-by-cell comparison
is :func:`tvbo.analysis.compare.comparison_table` (reused, not redone): paper and tvbo average
regret (mean ± s.e.), their ratio tvbo / paper and each algorithm's rank on both sides, plus tvbo's
time-integrated regret (no paper number exists) and its number of queries; the reference policies
the campaign ran are floor rows, outside every ordering and tally. A campaign with several speeds is
compared at speed 1 (the papers' hardware). Then the pairwise orderings
(:mod:`~tvbo.analysis.reproduction.orderings`) on the campaign and on its held-out replicate, the
head-to-head count, the differences (:mod:`~tvbo.analysis.reproduction.differences`) and the fit
health (:mod:`~tvbo.analysis.reproduction.fit_section`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd
import xarray as xr

from tvbo.algorithms.display import REFERENCE_POLICIES
from tvbo.analysis.compare import METRIC, comparison_table
from tvbo.analysis.metrics import OVERALL_LABEL
from tvbo.analysis.published import PAPERS, paper_table
from tvbo.analysis.reproduction.campaigns import (
    QUERIES,
    TIME_METRIC,
    Campaigns,
    at_reference_speed,
    cell_stat,
    metric_summary,
)
from tvbo.analysis.reproduction.differences import contradicted_lines, difference_lines
from tvbo.analysis.reproduction.fit_section import fit_health_lines
from tvbo.analysis.reproduction.markdown import display_name, fmt, md_table
from tvbo.analysis.reproduction.orderings import (
    NO_PAPER_SE,
    agreement_counts,
    head_to_head,
    pairwise_orderings,
)
from tvbo.analysis.reproduction.predict import Measurements
from tvbo.analysis.reproduction.spec import Spec
from tvbo.analysis.reproduction.table_result import TableResult


def _counts_table(counts: pd.DataFrame) -> list[str]:
    """The pairwise counts as a Markdown table (the no-s.e. column only where it counts)."""
    columns = ["agree", "tie", "paper tie", "disagree", "orderings"]
    if int(counts.loc[OVERALL_LABEL, NO_PAPER_SE]):
        columns.insert(3, NO_PAPER_SE)
    return md_table(("benchmark", *columns),
                  [[b, *map(str, row)] for b, row in zip(counts.index,
                                                          counts[columns].to_numpy(),
                                                          strict=True)])


def _paper_benchmarks(paper: str) -> set[str]:
    return {str(b) for b in paper_table(paper)["benchmark"] if str(b)}


def _extra_columns(ds: xr.Dataset) -> dict[str, pd.DataFrame]:
    return {m: metric_summary(ds, m) for m in (METRIC, TIME_METRIC, QUERIES)}


def _floor_rows(
    benchmark: str, label: str, extra: Mapping[str, pd.DataFrame]
) -> list[list[str]]:
    """The reference policies the campaign ran on ``benchmark``: floors, not competitors (no
    paper cell, no rank, left out of every ordering and tally)."""
    rows = []
    for policy in REFERENCE_POLICIES:
        m, se, n = cell_stat(extra[METRIC], benchmark, policy)
        if not n:
            continue
        tm, ts, _ = cell_stat(extra[TIME_METRIC], benchmark, policy)
        qm, qs, _ = cell_stat(extra[QUERIES], benchmark, policy)
        rows.append([f"{label} (`{benchmark}`)", f"{display_name(policy)} (reference policy)",
                     "—", f"{fmt(m, se)} (n = {n})", "", "reference", fmt(tm, ts),
                     fmt(qm, qs)])
    return rows


def _cell_rows(comparison: pd.DataFrame, extra: Mapping[str, pd.DataFrame]) -> list[list[str]]:
    ranks_tir = {}
    tir = extra[TIME_METRIC]
    shared = tir[tir["algorithm"].isin(set(comparison["algorithm"]))].copy()
    shared["rank"] = shared.groupby("benchmark")["mean"].rank(method="min")
    for r in shared.itertuples(index=False):
        ranks_tir[(r.benchmark, r.algorithm)] = int(r.rank)
    rows = []
    records = list(comparison.itertuples(index=False))
    for i, r in enumerate(records):
        overall = r.benchmark == OVERALL_LABEL
        paper = r.printed if isinstance(r.printed, str) and r.printed else fmt(r.paper_mean,
                                                                                r.paper_se)
        ranks = ("n/a" if pd.isna(r.paper_rank) or pd.isna(r.tvbo_rank)
                 else f"{int(r.paper_rank)} → {int(r.tvbo_rank)}")
        if not pd.isna(r.rank_change) and r.rank_change != 0:
            ranks = f"**{ranks}**"
        if overall:
            tir_text = queries = ""
        else:
            m, s, _ = cell_stat(tir, r.benchmark, r.algorithm)
            rank = ranks_tir.get((r.benchmark, r.algorithm))
            tir_text = fmt(m, s) + (f" (rank {rank})" if rank else "")
            qm, qs, _ = cell_stat(extra[QUERIES], r.benchmark, r.algorithm)
            queries = fmt(qm, qs)
        ratio = f"{r.ratio:.2f}" if math.isfinite(r.ratio) else "n/a"
        rows.append([
            r.paper_benchmark if overall else f"{r.paper_benchmark} (`{r.benchmark}`)",
            display_name(r.algorithm), paper,
            fmt(r.tvbo_mean, r.tvbo_se) + ("" if pd.isna(r.tvbo_n) else f" (n = {int(r.tvbo_n)})"),
            ratio, ranks, tir_text, queries,
        ])
        if not overall and (i + 1 == len(records) or records[i + 1].benchmark != r.benchmark):
            rows += _floor_rows(r.benchmark, r.paper_benchmark, extra)
    return rows


CELL_HEADERS = (
    "benchmark", "algorithm", "paper: average regret", "tvbo: average regret", "tvbo / paper",
    "rank paper → tvbo", "tvbo: time-integrated regret", "tvbo: queries",
)


def table_section(
    table_spec, spec: Spec, campaigns: Campaigns
) -> tuple[list[str], TableResult]:
    """Markdown lines and numbers of one published table against its campaign."""
    paper = PAPERS[table_spec.paper]
    lines = [f"## {paper.citation}, {paper.table}", ""]
    source = campaigns.sources[table_spec.campaign]
    ds = source.dataset
    result = TableResult(table_spec.paper, None, None, None, [], [])
    if ds is None:
        lines += [f"Campaign {campaigns.not_yet_run(table_spec.campaign)}.", ""]
        return lines, result
    ds = at_reference_speed(ds)
    comparison = comparison_table(metric_summary(ds, METRIC), table_spec.paper,
                                  table_spec.aliases or None)
    pairs = pairwise_orderings(comparison)
    counts = agreement_counts(pairs)
    result.comparison, result.pairs, result.counts = comparison, pairs, counts
    compared = set(comparison["benchmark"])
    lacking = [
        str(b) for b in ds["benchmark"].values
        if str(b) not in compared and str(b) in _paper_benchmarks(table_spec.paper)
    ]
    lines += [
        f"Campaign `{table_spec.campaign}` (`results/{source.spec.name}`). {paper.note}.", "",
        *([f"No tvbo value (no run with a query after the warm-up) for: {', '.join(lacking)}.",
           ""] if lacking else []),
        *md_table(CELL_HEADERS, _cell_rows(comparison, _extra_columns(ds))), "",
        "Pairwise orderings per benchmark (a tie: the intervals mean ± 1 s.e. overlap on either "
        "side; paper tie: of the ties, those where the paper's own intervals overlap):", "",
        *_counts_table(counts),
        "",
    ]
    if int(counts.loc[OVERALL_LABEL, NO_PAPER_SE]):
        lines += [f"The paper prints no standard errors: every pair is counted as *{NO_PAPER_SE}*"
                  " (a tie), never as a strict order, however far apart its means are. The "
                  "report's rule (issue 22): no s.e. is borrowed from another table, since no "
                  "other table has these cells; tvbo's own orders of these pairs are in the "
                  "cells above.", ""]
    lines += _replicate_lines(table_spec, spec, campaigns, pairs)
    if table_spec.head_to_head is not None:
        result.head_to_head = head_to_head(comparison, *table_spec.head_to_head)
        lines += head_to_head_lines(result.head_to_head, *table_spec.head_to_head)
    lines += difference_lines(table_spec.paper, comparison, pairs, spec, campaigns, result,
                               Measurements(campaigns))
    lines += contradicted_lines(result)
    lines += fit_health_lines(table_spec.paper, ds, spec, campaigns, result)
    return lines, result


def _replicate_lines(
    table_spec, spec: Spec, campaigns: Campaigns, pairs: pd.DataFrame
) -> list[str]:
    """The table's pairwise orderings on the held-out replicate, beside the campaign's."""
    key = spec.replicate(table_spec.campaign)
    if key is None:
        return ["No held-out replicate of this table's campaign in the spec.", ""]
    ds = campaigns.get(key)
    if ds is None:
        return [f"Held-out replicate {campaigns.not_yet_run(key)}.", ""]
    held = pairwise_orderings(comparison_table(metric_summary(at_reference_speed(ds), METRIC),
                                               table_spec.paper, table_spec.aliases or None))
    total = agreement_counts(held).loc[OVERALL_LABEL]
    merged = pairs.merge(held, on=["benchmark", "a", "b"], suffixes=("", "_held"))
    disagree = merged[merged["status"] == "disagree"]
    again = int((disagree["status_held"] == "disagree").sum())
    seeds = sorted(int(s) for s in ds["seed"].values)
    return [f"Held-out replicate `{key}` (seeds {seeds[0]}-{seeds[-1]}): {total['agree']} agree, "
            f"{total['tie']} tie, {total['disagree']} disagree of {total['orderings']} "
            f"orderings; of this campaign's {len(disagree)} disagreements, {again} disagree "
            "there too.", ""]


def head_to_head_lines(table: pd.DataFrame, a: str, b: str) -> list[str]:
    """The head-to-head count of a table (:func:`head_to_head`) as report lines."""
    n = len(table)
    head = f"{display_name(a)} vs {display_name(b)}"
    if n == 0:
        return [f"Head to head, {head}: no benchmark has both.", ""]

    def count(side: str) -> str:
        c = table[side].value_counts()
        return (f"better beyond the s.e. on {c.get('better', 0)} of {n} benchmarks (tie "
                f"{c.get('tie', 0)}, worse {c.get('worse', 0)}; lower mean on "
                f"{int(table[side + '_lower'].sum())})")

    rows = [[str(r.benchmark), r.paper, r.tvbo] for r in table.itertuples(index=False)]
    return [
        f"Head to head, {head} (better: a lower mean whose interval mean ± 1 s.e. does not "
        f"overlap the other's): tvbo {count('tvbo')}; paper {count('paper')}.", "",
        *md_table(("benchmark", "paper", "tvbo"), rows), "",
    ]
