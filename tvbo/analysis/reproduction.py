"""The reproduction report: every published table and seed-paper claim against tvbo's run files.

A TVBO researcher must be able to trust a comparison, so a reader must see why each cell is what
it is, and no number in the report is typed by hand: :func:`build_report` reads the campaigns
named in the spec (:mod:`tvbo.analysis.reproduction_spec`, ``config/reproduction.yaml``) from
``<results>/<campaign>/campaign.nc`` and writes Markdown (``docs/reproduction.md``).

Per published table (BOLT [B] Table 2, BOLT [A] Table 3, W-DBO Table 2) the cell-by-cell
comparison is :func:`tvbo.analysis.compare.comparison_table` (reused, not redone): paper and tvbo
average regret (mean ± s.e.), their ratio tvbo / paper and each algorithm's rank on both sides,
plus tvbo's time-integrated regret (no paper number exists) and its number of queries. A
campaign with several speeds is compared at speed 1 (the papers' hardware).

**Pairwise orderings** (:func:`pairwise_orderings`): for every pair of algorithms of a benchmark,
each side's order is that of its means, except that the pair is a **tie** on that side when its
intervals mean ± 1 s.e. overlap (``|m_a - m_b| <= se_a + se_b``; the papers' own underline rule,
:func:`tvbo.analysis.tables.best_and_overlapping`): those seeds cannot order such a pair. The rule
is the same on both sides: a paper's order whose own intervals overlap is no more an order than
tvbo's (a pair with a paper cell printed without s.e., as in W-DBO's table, is no strict order
on the paper side: *paper without s.e.*, a tie). A pair *agrees* when both orders
are the same, *disagrees* when they are opposite strict orders, and is a *tie* when either side
ties (each pair's ``tied_by`` says which side; the counts' *paper tie* column counts the ties the
paper's own s.e. leave open). A benchmark's ranking *differs* when it has at least one
disagreeing pair; each disagreeing pair is either covered by an explanation of the spec (its
cause and computed evidence are printed) or listed as **unexplained**.

**Sensitivity to the emulated hardware** (:func:`speed_sensitivity`): the paper configs price
work with the ``botorch-i9-laptop`` profile, whose R(n) fit has ~32 % RMS error; a campaign run at
speeds 0.7, 1 and 1.3 (every compute time divided by the speed) shows, per benchmark, which
pairwise orderings hold at every speed (same strict order), which *flip* (a strict order reversed
between two speeds) and which tie at some speed.

**Claims** (:func:`claim_result`): each claim compares claimed algorithm(s) with baselines on the
seed paper's own measure, computed by :mod:`tvbo.analysis.paper_figures` (average, cumulative or
simple regret at the last step every run reached, or simple regret at a CPU-time budget). One
comparison is a *win* when the claimed mean is lower and the intervals mean ± 1 s.e. do not
overlap, a *tie* when they overlap, else a *loss*. With relation ``better`` a comparison succeeds
on a win, with ``not_worse`` ("competitive") on a win or a tie. **Verdict**: *reproduced* when
every comparison succeeds, *not reproduced* when none does, *partly* otherwise.

Display: the number format and the algorithm display names come from
:mod:`tvbo.analysis.tables` through :func:`~tvbo.analysis.reproduction_evidence.display_name` and
:func:`~tvbo.analysis.reproduction_evidence.fmt`, the report's only call sites. Campaign loading and
evidence live in :mod:`tvbo.analysis.reproduction_evidence`, the spec in
:mod:`tvbo.analysis.reproduction_spec`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import xarray as xr
import yaml

from tvbo.analysis import tables as _tables
from tvbo.analysis.compare import METRIC, comparison_table
from tvbo.analysis.metrics import OVERALL_LABEL
from tvbo.analysis.paper_figures import CURVES, boke_curves, step_curves
from tvbo.analysis.published import PAPERS, apply_aliases, paper_table
from tvbo.analysis.reproduction_evidence import (
    QUERIES,
    TIME_METRIC,
    Campaigns,
    at_reference_speed,
    campaign_facts,
    cell_stat,
    display_name,
    evaluate_evidence,
    fmt,
    metric_summary,
    select_runs,
)
from tvbo.analysis.reproduction_predict import (
    PAIR_STATUS,
    Measurements,
    Outcome,
    combine,
    evaluate,
)
from tvbo.analysis.reproduction_spec import (
    Claim,
    Explanation,
    Prediction,
    Spec,
    Term,
    load_spec,
)

__all__ = [
    "DEFAULT_SPEC",
    "VERDICTS",
    "Campaigns",
    "build_report",
    "claim_result",
    "display_name",
    "fmt",
    "ordering",
    "pairwise_orderings",
    "speed_sensitivity",
    "verdict",
    "write_report",
]

DEFAULT_SPEC = "config/reproduction.yaml"
try:  # the reference policies (floors) named by the algorithm registry (wt-repro-floors)
    from tvbo.algorithms.display import REFERENCE_POLICIES
except ImportError:  # until that branch is merged: the names it will expose
    REFERENCE_POLICIES: tuple[str, ...] = ("random-search", "centre", "best-static")
VERDICTS: tuple[str, ...] = ("reproduced", "partly", "not reproduced")


def _md(cells: Iterable[object]) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def _table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    return [_md(headers), "|" + "---|" * len(headers), *(_md(r) for r in rows)]


# -- orderings -------------------------------------------------------------------------------------
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


def _counts_table(counts: pd.DataFrame) -> list[str]:
    """The pairwise counts as a Markdown table (the no-s.e. column only where it counts)."""
    columns = ["agree", "tie", "paper tie", "disagree", "orderings"]
    if int(counts.loc[OVERALL_LABEL, NO_PAPER_SE]):
        columns.insert(3, NO_PAPER_SE)
    return _table(("benchmark", *columns),
                  [[b, *map(str, row)] for b, row in zip(counts.index,
                                                          counts[columns].to_numpy(),
                                                          strict=True)])


def _order_text(a: str, b: str, sign: int) -> str:
    if sign == 0:
        return f"{display_name(a)} ≈ {display_name(b)}"
    lo, hi = (a, b) if sign < 0 else (b, a)
    return f"{display_name(lo)} < {display_name(hi)}"


# -- the table sections --------------------------------------------------------------------------
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


@dataclass
class TableResult:
    """The numbers of one table section (also what the tests check)."""

    paper: str
    comparison: pd.DataFrame | None
    pairs: pd.DataFrame | None
    counts: pd.DataFrame | None
    unexplained: list[tuple[str, str, str]]
    explained: list[tuple[str, str, str]]
    #: disagreeing pairs whose explaining entry has a failing prediction
    contradicted: list[tuple[str, str, str]] = field(default_factory=list)
    #: unexplained pairs that only a broad entry (``all``) names: context, no explanation
    broad_only: int = 0
    #: (entry, prediction, failing measurements) of every failing prediction
    failing: list[tuple[str, str, list[str]]] = field(default_factory=list)
    #: :func:`tvbo.analysis.fit_health.horizon_table` per algorithm (None: campaign not run)
    fit_health: pd.DataFrame | None = None
    #: algorithms above the limit: attributed to their paper's setting, attributed to a setting
    #: that is not their paper's, and without a cause in the spec
    fit_paper_setting: list[str] = field(default_factory=list)
    fit_not_paper_setting: list[str] = field(default_factory=list)
    fit_unexplained: list[str] = field(default_factory=list)
    #: :func:`head_to_head` of the spec's pair (None: the table names none)
    head_to_head: pd.DataFrame | None = None

    @property
    def fit_exceeding(self) -> list[str]:
        """Every algorithm above the fit-health limit, in table order."""
        return [*self.fit_paper_setting, *self.fit_not_paper_setting, *self.fit_unexplained]


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
        *_table(CELL_HEADERS, _cell_rows(comparison, _extra_columns(ds))), "",
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
    lines += _difference_lines(table_spec.paper, comparison, pairs, spec, campaigns, result,
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
        *_table(("benchmark", "paper", "tvbo"), rows), "",
    ]


def _percent(share: float) -> str:
    return "" if not math.isfinite(share) else f"{100 * share:.0f} %"


def _per_run(value: float) -> str:
    return "" if not math.isfinite(value) else f"{value:.3g}"


def fit_health_lines(
    paper: str, ds: xr.Dataset, spec: Spec, campaigns: Campaigns, result: TableResult
) -> list[str]:
    """The table's fit-health subsection; fills ``result``'s ``fit_*`` fields.

    Per algorithm of the campaign (speed 1, every benchmark and seed pooled):
    :func:`tvbo.analysis.fit_health.horizon_table`. An algorithm whose share of fits with l_T
    beyond the horizon exceeds :data:`~tvbo.analysis.fit_health.HORIZON_SHARE_LIMIT` is marked,
    its per-benchmark shares are listed, and it is either covered by a ``fit_causes`` entry of the
    spec (cause, source and computed evidence; attributed to its paper's own setting or not) or
    reported as **unexplained**.
    """
    from tvbo.analysis.fit_health import HORIZON_SHARE_LIMIT, horizon_table

    limit = f"{100 * HORIZON_SHARE_LIMIT:.0f} %"
    lines = ["### Fit health", ""]
    table = horizon_table(ds)
    result.fit_health = table
    if table.empty or not (table["lT_fits"] > 0).any():
        return lines + ["No fit of a temporal lengthscale is recorded in these runs.", ""]
    lines += [
        "Per algorithm, over all benchmarks and seeds of the campaign: the share of fits of the "
        "temporal lengthscale l_T that end beyond the horizon (l_T in seconds against the run's "
        "horizon; a forgetting rate eps fitted on the iteration index, l_T = -2 / ln(1 - eps) "
        "steps, against the run's number of observations), the share of hyperparameter fits with "
        "a hyperparameter at a bound (within 1 % of the box's log-width), the runs with at least "
        f"one / a last l_T beyond the horizon, and resets and removals per run. **> {limit}**: "
        f"more than {limit} of the algorithm's l_T fits beyond the horizon.", "",
    ]
    rows = []
    for r in table.itertuples(index=False):
        share = _percent(r.share_fits_lT_above_horizon) or "no l_T fit"
        if r.above_limit:
            share += f" **> {limit}**"
        rows.append([display_name(r.algorithm), r.fit_modes, str(r.runs), str(r.fits),
                     str(r.lT_fits), share, _percent(r.share_fits_at_bound),
                     f"{r.runs_lT_above_horizon} / {r.runs_final_lT_above_horizon}",
                     _per_run(r.resets_per_run), _per_run(r.removals_per_run)])
    lines += _table(("algorithm", "fit mode", "runs", "fits", "l_T fits",
                     "l_T > horizon (fits)", "at a bound (fits)",
                     "runs: any / last l_T > horizon", "resets / run", "removals / run"), rows)
    lines.append("")
    above = [str(a) for a in table.loc[table["above_limit"], "algorithm"]]
    if not above:
        return lines + [f"No algorithm has l_T beyond the horizon in more than {limit} of its "
                        "fits.", ""]
    per_benchmark = horizon_table(ds, by=("benchmark", "algorithm"))
    benchmarks = list(dict.fromkeys(str(b) for b in per_benchmark["benchmark"]))
    indexed = per_benchmark.set_index(["benchmark", "algorithm"])
    rows = []
    for algorithm in above:
        cells = []
        for b in benchmarks:
            share = (indexed.loc[(b, algorithm), "share_fits_lT_above_horizon"]
                     if (b, algorithm) in indexed.index else math.nan)
            cells.append(_percent(float(share)))
        rows.append([display_name(algorithm), *cells])
    lines += [f"Per benchmark, the share of l_T fits beyond the horizon of the algorithms above "
              f"{limit}:", "", *_table(("algorithm", *benchmarks), rows), ""]
    causes = [c for c in spec.fit_causes if c.table == paper]
    used: list = []
    shares = table.set_index("algorithm")["share_fits_lT_above_horizon"]
    lines += [f"Algorithms above {limit} and why:", ""]
    for algorithm in above:
        covering = [c for c in causes if algorithm in c.algorithms]
        text = f"- {display_name(algorithm)} ({_percent(float(shares[algorithm]))})"
        if not covering:
            result.fit_unexplained.append(algorithm)
            lines.append(f"{text}: **unexplained**")
            continue
        for c in covering:
            if c not in used:
                used.append(c)
        refs = ", ".join(str(used.index(c) + 1) for c in covering)
        if any(c.paper_setting for c in covering):
            result.fit_paper_setting.append(algorithm)
            lines.append(f"{text}: produced by its paper's own setting ({refs})")
        else:
            result.fit_not_paper_setting.append(algorithm)
            lines.append(f"{text}: **not its paper's setting** (tvbo's; the criterion is not "
                         f"met) ({refs})")
    lines.append("")
    for i, cause in enumerate(used, start=1):
        verdict_text = ("its paper's own setting" if cause.paper_setting
                        else "not its paper's setting")
        lines.append(f"{i}. {cause.cause} ({verdict_text}; source: {cause.source})")
        names = [a for a in cause.algorithms if a in above]
        for ev in cause.evidence:
            for line in evaluate_evidence(ev, campaigns, [str(b) for b in ds["benchmark"].values],
                                          names):
                lines.append(f"   - {line}")
    return lines + [""]


def _direction_prediction(entry: Explanation, direction, campaign: str) -> Prediction:
    """The order an entry predicts for a pair, as a prediction on the table's regret."""
    return Prediction("order", "average_regret", Term(direction.lower, campaign),
                      Term(direction.higher, campaign), (direction.benchmark,), campaign,
                      f"average_regret: {direction.lower} < {direction.higher} (the pair)")


def _outcome_lines(prediction: Prediction, outcomes: Sequence[Outcome]) -> list[str]:
    """One line per prediction: its status and, per benchmark and replicate, the measurement."""
    status = combine(outcomes)
    parts = [f"{o.seeds}, {o.benchmark}: {o.status}: {o.detail}" for o in outcomes]
    return [f"   - predicts {prediction.text} — **{status}** ({'; '.join(parts)})"]


def _difference_lines(
    paper: str, comparison: pd.DataFrame, pairs: pd.DataFrame, spec: Spec,
    campaigns: Campaigns, result: TableResult, measured: Measurements,
) -> list[str]:
    """Every disagreeing pair: explained (an entry naming it with every prediction holding on
    every replicate), contradicted (a prediction of such an entry fails) or unexplained (no entry
    names it, or its evidence is missing). Broad entries are printed as context only."""
    lines = ["### Ranking differences and their explanations", ""]
    disagree = pairs[pairs["status"] == "disagree"]
    if disagree.empty:
        return lines + ["No pairwise ordering disagrees with the paper.", ""]
    body = comparison[comparison["benchmark"] != OVERALL_LABEL].set_index(
        ["benchmark", "algorithm"])
    cells = {k: float(v) for k, v in body["paper_mean"].items()}
    campaign = next(t.campaign for t in spec.tables if t.paper == paper)
    entries = [e for e in spec.explanations if e.table == paper]
    evaluated: dict[int, list[tuple[Prediction, list[Outcome]]]] = {}
    for benchmark, group in disagree.groupby("benchmark", sort=False):
        label = body.loc[benchmark].iloc[0]["paper_benchmark"]
        lines += [f"**{label}** (`{benchmark}`)", ""]
        used: list[Explanation] = []
        notes: dict[int, list[str]] = {}
        for r in group.itertuples(index=False):
            a_row, b_row = body.loc[(benchmark, r.a)], body.loc[(benchmark, r.b)]
            text = (
                f"{display_name(r.a)} vs {display_name(r.b)}: paper "
                f"{fmt(a_row.paper_mean, a_row.paper_se)} vs "
                f"{fmt(b_row.paper_mean, b_row.paper_se)} ({_order_text(r.a, r.b, r.paper)}), "
                f"tvbo {fmt(a_row.tvbo_mean, a_row.tvbo_se)} vs "
                f"{fmt(b_row.tvbo_mean, b_row.tvbo_se)} ({_order_text(r.a, r.b, r.tvbo)})"
            )
            statuses = []
            for entry in entries:
                direction = entry.direction(benchmark, r.a, r.b)
                if direction is None:
                    continue
                key = id(entry)
                if key not in evaluated:
                    evaluated[key] = [(p, evaluate(p, spec, measured, cells))
                                      for p in entry.predictions]
                pred = _direction_prediction(entry, direction, campaign)
                outs = evaluate(pred, spec, measured, cells)
                if entry not in used:
                    used.append(entry)
                notes.setdefault(used.index(entry), []).extend(_outcome_lines(pred, outs))
                every = [x for _, found in evaluated[key] for x in found] + outs
                if combine(outs) == "fails":
                    result.failing.append((entry.where, pred.text, [
                        f"{o.seeds}, {o.benchmark}: {o.detail}" for o in outs
                        if o.status == "fails"]))
                statuses.append((PAIR_STATUS[combine(every)], used.index(entry) + 1))
            context = [e for e in entries if e.broad and e.covers(paper, benchmark, r.a, r.b)]
            for e in context:
                if e not in used:
                    used.append(e)
            found = {s for s, _ in statuses}
            status = next((s for s in ("explained", "contradicted") if s in found),
                          "unexplained")
            record = (benchmark, r.a, r.b)
            getattr(result, status).append(record)
            refs = ", ".join(str(i) for s, i in statuses if s == status)
            if not statuses:
                why = "no specific entry names this pair"
                result.broad_only += 1 if context else 0
            elif status == "unexplained":
                why = f"evidence missing, {refs}"
            else:
                why = refs
            ctx = ", ".join(str(used.index(e) + 1) for e in context)
            mark = status if status == "explained" else f"**{status}**"
            lines.append(f"- {text}: {mark} ({why})" + (f"; context: {ctx}" if ctx else ""))
        lines.append("")
        for i, entry in enumerate(used, start=1):
            kind = "context only" if entry.broad else "explanation"
            lines.append(f"{i}. {entry.cause} ({kind}; spec {entry.where})")
            if not entry.broad:
                lines += notes.get(i - 1, [])
            predictions = evaluated.get(id(entry)) or [
                (p, evaluate(p, spec, measured, cells)) for p in entry.predictions]
            for prediction, outcomes in predictions:
                lines += _outcome_lines(prediction, outcomes)
                if combine(outcomes) == "fails" and not entry.broad:
                    result.failing.append((entry.where, prediction.text, [
                        f"{o.seeds}, {o.benchmark}: {o.detail}" for o in outcomes
                        if o.status == "fails"]))
            for ev in entry.evidence:
                names = sorted({x for d in entry.explains if d.benchmark == benchmark
                                for x in (d.lower, d.higher)}) or list(entry.algorithms)
                for line in evaluate_evidence(ev, campaigns, [benchmark], names):
                    lines.append(f"   - {line}")
        lines.append("")
    return lines


def contradicted_lines(result: TableResult) -> list[str]:
    """Every failing prediction of the table's entries, with its measured values."""
    if not result.failing:
        return []
    lines = ["#### Contradicted predictions", ""]
    seen = set()
    for where, text, details in result.failing:
        if (where, text) in seen:
            continue
        seen.add((where, text))
        lines.append(f"- spec {where}, {text}: " + "; ".join(details))
    return lines + [""]


# -- sensitivity -----------------------------------------------------------------------------------
def speed_sensitivity(summary: pd.DataFrame) -> pd.DataFrame:
    """Per benchmark and pair: the ordering at every speed and whether it holds, flips or ties.

    ``summary`` is a long table with a ``speed`` column (:func:`tables.summary_table`). Columns:
    benchmark, a, b, one ``speed <s>`` column per speed (-1/0/+1, :func:`ordering`), status:
    *holds* (the same strict order at every speed), *flips* (strict orders of both signs) or
    *tie* (a tie at some speed, no opposite strict orders).
    """
    if "speed" not in summary.columns:
        raise ValueError("speed sensitivity needs a campaign with a speed column")
    speeds = sorted(summary["speed"].unique())
    records = []
    for benchmark, group in summary.groupby("benchmark", sort=False):
        algorithms = list(pd.unique(group["algorithm"]))
        indexed = group.set_index(["speed", "algorithm"])
        for a, b in itertools.combinations(algorithms, 2):
            record: dict[str, object] = {"benchmark": benchmark, "a": a, "b": b}
            signs = []
            for s in speeds:
                if (s, a) in indexed.index and (s, b) in indexed.index:
                    ra, rb = indexed.loc[(s, a)], indexed.loc[(s, b)]
                    sign = ordering(ra["mean"], ra["se"], rb["mean"], rb["se"])
                else:
                    sign = math.nan
                record[f"speed {s:g}"] = sign
                signs.append(sign)
            strict = {x for x in signs if x in (-1, 1)}
            if len(strict) == 2:
                status = "flips"
            elif len(strict) == 1 and all(x in (-1, 1) for x in signs):
                status = "holds"
            else:
                status = "tie"
            record["status"] = status
            records.append(record)
    return pd.DataFrame.from_records(records)


def sensitivity_section(sens, campaigns: Campaigns) -> tuple[list[str], pd.DataFrame | None]:
    """The speed-sensitivity section: per benchmark, orderings that hold / tie / flip across
    speeds (the paper's benchmarks and algorithms only), and per speed the agreement with the
    paper (:func:`pairwise_orderings` at that speed)."""
    paper = PAPERS[sens.paper]
    lines = [f"## Sensitivity to the emulated hardware: {paper.citation}, {paper.table}", ""]
    ds = campaigns.get(sens.campaign)
    if ds is None:
        return lines + [f"Campaign {campaigns.not_yet_run(sens.campaign)}.", ""], None
    aliases = sens.aliases or None
    published = apply_aliases(paper_table(sens.paper), aliases, sens.paper)
    summary = _tables.summary_table(ds, METRIC)
    summary = summary[summary["algorithm"].isin(set(published["algorithm"]))
                      & summary["benchmark"].isin(set(published["benchmark"]))]
    if summary.empty:
        return lines + ["The campaign shares no benchmark and algorithm with the paper.", ""], None
    result = speed_sensitivity(summary)
    speeds = sorted(summary["speed"].unique())
    lines += [
        f"Campaign `{campaigns.sources[sens.campaign].spec.name}`, speeds "
        f"{', '.join(f'{s:g}' for s in speeds)} (every compute time of the profile divided by "
        "the speed). An ordering *holds* when tvbo orders the pair the same way at every speed, "
        "*flips* when it orders it both ways, *tie* when the intervals mean ± 1 s.e. overlap at "
        "some speed.", "",
    ]
    rows = []
    for benchmark, group in result.groupby("benchmark", sort=False):
        c = group["status"].value_counts()
        flips = group[group["status"] == "flips"]
        listed = "; ".join(
            f"{display_name(r.a)} vs {display_name(r.b)}" for r in flips.itertuples(index=False)
        )
        rows.append([benchmark, str(c.get("holds", 0)), str(c.get("tie", 0)),
                     str(c.get("flips", 0)), str(len(group)), listed or "none"])
    c = result["status"].value_counts()
    rows.append([OVERALL_LABEL, str(c.get("holds", 0)), str(c.get("tie", 0)),
                 str(c.get("flips", 0)), str(len(result)), ""])
    lines += _table(("benchmark", "holds", "tie", "flips", "orderings", "flipped pairs"), rows)
    agreement = []
    for speed in speeds:
        at_speed = summary[summary["speed"] == speed].drop(columns="speed")
        counts = agreement_counts(
            pairwise_orderings(comparison_table(at_speed, sens.paper, aliases)))
        total = counts.loc[OVERALL_LABEL]
        agreement.append([f"{speed:g}", *(str(total[k]) for k in
                                           ("agree", "tie", "disagree", "orderings"))])
    lines += ["", "Pairwise orderings against the paper at each speed (all benchmarks):", "",
              *_table(("speed", "agree", "tie", "disagree", "orderings"), agreement)]
    return lines + [""], result


# -- claims ----------------------------------------------------------------------------------------
def verdict(successes: int, comparisons: int) -> str:
    """reproduced (every comparison succeeds), not reproduced (none does), partly otherwise."""
    if comparisons <= 0:
        raise ValueError("a verdict needs at least one comparison")
    if successes == comparisons:
        return VERDICTS[0]
    return VERDICTS[2] if successes == 0 else VERDICTS[1]


def _claim_values(ds: xr.Dataset, claim: Claim) -> tuple[pd.DataFrame, list[str]]:
    """mean, se, n per (benchmark, algorithm) at the claim's measure point, plus ``where``;
    and the claim's benchmarks absent from the campaign (a stand-in's smaller grid).

    Raises LookupError when an algorithm, or every benchmark, is absent.
    """
    names = [*claim.algorithms, *claim.baselines]
    sub, absent = select_runs(ds, list(claim.benchmarks), names)
    missing = [b for b in claim.benchmarks if b in absent]
    if len(absent) > len(missing) or len(missing) == len(claim.benchmarks):
        raise LookupError(f"{', '.join(absent)} absent from the campaign's runs")
    sub = at_reference_speed(sub)
    records = []
    if claim.at == "final":
        curves = step_curves(sub, claim.curve)
        for benchmark, group in curves.groupby("benchmark", sort=False):
            # the last step that every run of every compared algorithm reached
            complete = group[group["n"] == group.groupby("algorithm")["n"].transform("max")]
            last = int(complete.groupby("algorithm")["step"].max().min())
            for r in group[group["step"] == last].itertuples(index=False):
                records.append({"benchmark": benchmark, "algorithm": r.algorithm, "mean": r.mean,
                                "se": r.se, "n": int(r.n), "where": f"step {last}"})
    else:
        curves = boke_curves(sub)
        for benchmark, group in curves.groupby("benchmark", sort=False):
            totals = group.groupby("algorithm")["cpu_time_mean"].max()
            budget = claim.cpu_time or float(totals.min())
            for algorithm, series in group.groupby("algorithm", sort=False):
                inside = series[series["cpu_time_mean"] <= budget * (1 + 1e-12)]
                if inside.empty:
                    records.append({"benchmark": benchmark, "algorithm": algorithm,
                                    "mean": math.nan, "se": math.nan, "n": 0,
                                    "where": f"CPU time {budget:.3g} s"})
                    continue
                r = inside.iloc[-1]
                records.append({"benchmark": benchmark, "algorithm": algorithm, "mean": r["mean"],
                                "se": r["se"], "n": int(r["n"]),
                                "where": f"CPU time {budget:.3g} s (step {int(r['step'])})"})
    return pd.DataFrame.from_records(records), missing


def claim_result(ds: xr.Dataset, claim: Claim) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """(values, comparisons, verdict) of a claim on a campaign.

    ``comparisons``: benchmark, algorithm, baseline, outcome (win / tie / loss, see the module
    docstring), success (per the claim's relation). A claimed algorithm without a value at the
    measure point (no step within a CPU budget) loses; a baseline without one loses to a claimed
    algorithm that has one. Benchmarks absent from the campaign are left out and named in the
    verdict ("reproduced (absent: ...)").
    """
    values, missing = _claim_values(ds, claim)
    indexed = values.set_index(["benchmark", "algorithm"])
    records = []
    for benchmark in [b for b in claim.benchmarks if b not in missing]:
        for algorithm in claim.algorithms:
            for baseline in claim.baselines:
                a, b = indexed.loc[(benchmark, algorithm)], indexed.loc[(benchmark, baseline)]
                if not math.isfinite(a["mean"]):
                    outcome = "loss"
                elif not math.isfinite(b["mean"]):
                    outcome = "win"
                else:
                    sign = ordering(a["mean"], a["se"], b["mean"], b["se"])
                    outcome = {-1: "win", 0: "tie", 1: "loss"}[sign]
                success = outcome == "win" or (claim.relation == "not_worse" and outcome == "tie")
                records.append({"benchmark": benchmark, "algorithm": algorithm,
                                "baseline": baseline, "outcome": outcome, "success": success})
    comparisons = pd.DataFrame.from_records(records)
    result = verdict(int(comparisons["success"].sum()), len(comparisons))
    if missing:
        result += f" (absent: {', '.join(missing)})"
    return values, comparisons, result


def claims_section(spec: Spec, campaigns: Campaigns) -> tuple[list[str], dict[str, str]]:
    lines = [
        "## The seed papers' headline claims", "",
        "Each claim is quoted from the paper. A comparison is a *win* when the claimed "
        "algorithm's mean is lower and the intervals mean ± 1 s.e. do not overlap, a *tie* when "
        "they overlap, a *loss* otherwise; *better* claims need wins, *not worse* "
        "(\"competitive\") claims wins or ties. Verdict: reproduced when every comparison "
        "succeeds, not reproduced when none does, partly otherwise.", "",
    ]
    verdicts: dict[str, str] = {}
    for claim in spec.claims:
        measure = CURVES[claim.curve] + (
            " at the last step every run reached" if claim.at == "final"
            else " at a CPU-time budget" + (f" of {claim.cpu_time:g} s" if claim.cpu_time
                                            else " (the smallest total CPU time of the "
                                                 "compared algorithms)")
        )
        lines += [f"### {claim.paper}: {claim.id}", "", f"> {claim.quote}", "",
                  f"Source: `{claim.source}`. Measure: {measure}; relation: "
                  f"{claim.relation.replace('_', ' ')}.", ""]
        values = comparisons = None
        ds = campaigns.get(claim.campaign)
        if ds is None:
            verdicts[claim.id] = "not yet run"
            lines += [
                f"Verdict: **not yet run**. Campaign {campaigns.not_yet_run(claim.campaign)}.", ""
            ]
        else:
            try:
                values, comparisons, result = claim_result(ds, claim)
            except LookupError as err:
                values, comparisons, result = None, None, "not computable"
                lines += [f"Verdict: **not computable**: {err}.", ""]
            verdicts[claim.id] = result
        if values is not None and comparisons is not None:
            rows = [
                [r.benchmark, display_name(r.algorithm), fmt(r.mean, r.se), str(r.n), r.where]
                for r in values.itertuples(index=False)
            ]
            lines += _table(("benchmark", "algorithm", "tvbo (mean ± s.e.)", "runs", "at"), rows)
            wins = comparisons.groupby("outcome").size().to_dict()
            lines += [
                "",
                f"Comparisons: {int(comparisons['success'].sum())} of {len(comparisons)} succeed "
                f"(win {wins.get('win', 0)}, tie {wins.get('tie', 0)}, loss "
                f"{wins.get('loss', 0)}). Verdict: **{result}**.", "",
            ]
        lines += [f"Reason: {claim.reason}"]
        for ev in claim.evidence:
            for line in evaluate_evidence(ev, campaigns, list(claim.benchmarks),
                                          [*claim.algorithms, *claim.baselines]):
                lines.append(f"- {line}")
        lines.append("")
    return lines, verdicts


# -- the report ------------------------------------------------------------------------------------
@dataclass
class Report:
    text: str
    tables: dict[str, TableResult]
    sensitivity: dict[str, pd.DataFrame | None]
    claims: dict[str, str]


#: the settings a stand-in campaign is compared on with the spec's campaign (everything that
#: decides a run; the campaign's name and how runs are grouped into jobs do not)
STAND_IN_KEYS: tuple[str, ...] = (
    "benchmarks", "algorithms", "seeds", "speeds", "compute", "profile", "polynomial", "horizon",
    "warmup", "cost_table", "benchmark_options", "algorithm_options", "data",
)


def stand_in_differences(expected: Mapping[str, Any], config_path: Path) -> list[str] | None:
    """How the stand-in's recorded ``config.yaml`` differs from the spec campaign's merged
    config, one ``key: value instead of expected`` entry per setting the spec's campaign states
    (None when the stand-in recorded no config). Nested maps (``data``) are compared key by key;
    a key the spec's campaign leaves to the schema's default is not compared."""
    if not config_path.is_file():
        return None
    actual = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}

    def flat(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in mapping.items():
            if isinstance(value, Mapping) and value:
                out.update(flat(value, f"{prefix}{key}."))
            else:
                out[f"{prefix}{key}"] = value
        return out

    want = flat({k: expected[k] for k in STAND_IN_KEYS if k in expected})
    got = flat({k: actual[k] for k in STAND_IN_KEYS if k in actual})
    differences = []
    # keys the spec's campaign leaves out take the schema's defaults, which the recorded config
    # spells out: only the settings the spec's campaign states are compared
    for key in sorted(want):
        a, b = got.get(key), want.get(key)
        if a in (None, {}, []) and b in (None, {}, []):
            continue
        if isinstance(a, list) and isinstance(b, list) and sorted(map(str, a)) == sorted(
            map(str, b)
        ):
            continue
        if a != b:
            differences.append(f"{key}: {a!r} instead of {b!r}")
    return differences


#: keys of a provenance file (``tvbo reproduce --provenance``): how the run files were made
PROVENANCE_KEYS: tuple[str, ...] = ("command", "commit", "wall_time_s", "machine")


def read_provenance(path: str | Path | None) -> dict[str, str] | None:
    """The provenance file's fields (None without one); one line naming a bad or missing key.

    Written by whoever ran the campaigns (the workflow's ``reproduction_provenance`` rule or
    ``scripts/reproduce.sh``): the command, the commit of the code that made the run files, the
    wall time of the whole regeneration and the machine. The report prints them as given, so
    rebuilding it from the same run files and the same file gives the same bytes.
    """
    if path is None:
        return None
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"--provenance: no such file {str(path)!r}")
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(raw, Mapping):
        raise ValueError(f"--provenance: {path.name}: expected a mapping of "
                         f"{', '.join(PROVENANCE_KEYS)}")
    bad = sorted(set(raw) ^ set(PROVENANCE_KEYS))
    if bad:
        raise ValueError(f"--provenance: {path.name}: keys must be exactly "
                         f"{', '.join(PROVENANCE_KEYS)}; differ in {', '.join(map(str, bad))}")
    seconds = float(raw["wall_time_s"])
    if not seconds > 0:
        raise ValueError(f"--provenance: {path.name}: wall_time_s must be positive, got "
                         f"{raw['wall_time_s']!r}")
    return {k: str(raw[k]) for k in PROVENANCE_KEYS}


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return (f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {rest:02d} s")


def _stand_in_text(spec: Spec, campaigns: Campaigns) -> str:
    """The stand-ins of the report, for its summary line ("" without any)."""
    parts = []
    if spec.overlay is not None:
        laid = [k for k in spec.overlay.campaigns if k in campaigns.sources]
        parts.append(f"{spec.overlay.note} (overlay `{spec.overlay.config.name}`, results "
                     f"`<campaign>_{spec.overlay.name}`) for {', '.join(laid)}")
    for source in campaigns.sources.values():
        if source.substituted:
            parts.append(f"a file given with `--campaign` for {source.spec.key}")
    return "; ".join(parts)


def _header(
    spec: Spec, campaigns: Campaigns, provenance: Mapping[str, str] | None = None
) -> list[str]:
    lines = [
        "# Reproduction report", "",
        "<!-- generated by `tvbo reproduce` from the run files; do not edit by hand -->", "",
        f"Generated by `tvbo reproduce` from the spec `{spec.path.name}` and the campaigns' run "
        "files (`results/<campaign>/campaign.nc`); every number below is computed, none typed.",
        "",
    ]
    if provenance is None:
        lines += ["Regeneration: not recorded (no `--provenance` file): run `snakemake --cores N "
                  "reproduction`, which builds every campaign below and records it.", ""]
    else:
        lines += [f"Regeneration: `{provenance['command']}` at commit `{provenance['commit']}`, "
                  f"{_duration(float(provenance['wall_time_s']))} wall time on "
                  f"{provenance['machine']} (campaigns and report, from a clean results "
                  "folder).", ""]
    substituted = [s for s in campaigns.sources.values() if s.substituted]
    if substituted:
        parts = []
        for s in substituted:
            differences = stand_in_differences(s.spec.merged, Path(s.path).parent / "config.yaml")
            text = f"a file given with `--campaign` stands in for `{s.spec.name}`"
            if differences is None:
                text += " (its config.yaml is absent: compare seeds, horizon and grid below)"
            elif differences:
                text += " and differs from it in " + "; ".join(differences)
            else:
                text += " with the same settings (only its name differs)"
            parts.append(text)
        lines += [
            "> **Stand-in campaigns.** " + "; ".join(parts) + ". Where a stand-in differs from "
            "the spec's campaign, its numbers are not the papers' protocol on that point.",
            "",
        ]
    rows = []
    for key, source in campaigns.sources.items():
        command = campaigns.command(key)
        if source.dataset is None:
            rows.append([key, "not yet run", command, *[""] * 7])
            continue
        facts = campaign_facts(source.dataset)
        status = ("stand-in (`--campaign`)" if source.substituted
                  else f"`results/{source.spec.name}`")
        rows.append([key, f"{status}: {command}", facts["benchmarks"], facts["algorithms"],
                     facts["seeds"], facts["speeds"], facts["horizon [s]"], facts["profile"],
                     facts["cost table"], facts["runs"]])
    lines += ["## Campaigns", ""]
    lines += _table(("campaign", "results and command", "benchmarks", "algorithms", "seeds",
                     "speeds", "horizon [s]", "profile", "cost table", "runs"), rows)
    lines += [
        "", "## How to read this report", "",
        "- Cells: average regret, mean ± s.e. over seeds (tvbo) and as printed (paper); tvbo / "
        "paper is the ratio of the means; ranks are 1 = lowest mean among the algorithms both "
        "sides have on that benchmark (paper → tvbo, bold when they differ). Time-integrated "
        "regret has no paper number; its rank is tvbo's. Queries: the number of queries per run "
        "(warm-up included). Overall: the papers' normalised regret recomputed on the shared grid.",
        "- Pairwise orderings: for each pair of algorithms on a benchmark, the paper's order "
        "against tvbo's; on each side the order is a *tie* when that side's intervals mean ± 1 "
        "s.e. overlap (|m_a − m_b| ≤ se_a + se_b, the papers' underline rule; a pair whose "
        "paper cells carry no s.e. is *paper without s.e.*, a tie). A pair *agrees*, "
        "*disagrees* (opposite "
        "strict orders) or is a tie (*paper tie* counts the ties the paper's own s.e. leave "
        "open). Each disagreeing pair is *explained* when an entry of the spec names it and "
        "every "
        "prediction of that entry holds on the campaign's seeds and on its held-out replicate "
        "(an order holds when the intervals mean ± 1 s.e. do not overlap), **contradicted** "
        "when one of them fails (the failing quantity and its values are listed), else "
        "**unexplained** (no entry names it, or evidence is missing). Entries that name whole "
        "tables (`all`) are context and explain nothing alone.",
        "",
    ]
    return lines


def _fit_summary(result: TableResult) -> str:
    """The table's fit-health count for the report's summary line."""
    from tvbo.analysis.fit_health import HORIZON_SHARE_LIMIT

    limit = f"{100 * HORIZON_SHARE_LIMIT:.0f} %"
    if result.fit_health is None or result.fit_health.empty:
        return "fit health: no fit recorded"
    n = len(result.fit_exceeding)
    return (f"fit health: {n} of {len(result.fit_health)} algorithms with l_T beyond the "
            f"horizon in > {limit} of their fits, {len(result.fit_paper_setting)} of them "
            f"attributed to their paper's own setting, {len(result.fit_not_paper_setting)} to "
            f"a setting that is not their paper's, {len(result.fit_unexplained)} unexplained")


def build_report(
    spec: Spec | str | Path = DEFAULT_SPEC,
    results: str | Path = "results",
    substitutes: Mapping[str, str | Path] | None = None,
    provenance: str | Path | None = None,
) -> Report:
    """The whole report (Markdown) and its numbers; validates the spec (and the provenance
    file) before reading results."""
    if not isinstance(spec, Spec):
        spec = load_spec(spec)
    recorded = read_provenance(provenance)
    campaigns = Campaigns(spec, results, substitutes, root=spec.path.parent.parent)
    try:
        return _build(spec, campaigns, recorded)
    finally:  # the files are opened lazily: close them (netCDF handles must not pile up)
        campaigns.close()


def _build(spec: Spec, campaigns: Campaigns, recorded: Mapping[str, str] | None) -> Report:
    lines = _header(spec, campaigns, recorded)
    tables: dict[str, TableResult] = {}
    summary = []
    for table_spec in spec.tables:
        section, result = table_section(table_spec, spec, campaigns)
        tables[table_spec.paper] = result
        lines += section
        name = f"{PAPERS[table_spec.paper].citation}, {PAPERS[table_spec.paper].table}"
        if result.pairs is not None:
            summary.append(
                f"{name}: {len(result.pairs)} orderings, "
                f"{len(result.explained) + len(result.contradicted) + len(result.unexplained)} "
                f"disagree: {len(result.explained)} explained, {len(result.contradicted)} "
                f"contradicted, {len(result.unexplained)} unexplained ({result.broad_only} of "
                f"them named only by a broad entry); " + _fit_summary(result)
            )
        else:
            summary.append(f"{name}: not yet run")
    sensitivity: dict[str, pd.DataFrame | None] = {}
    for sens in spec.sensitivity:
        section, result = sensitivity_section(sens, campaigns)
        sensitivity[sens.paper] = result
        lines += section
    claim_lines, verdicts = claims_section(spec, campaigns) if spec.claims else ([], {})
    lines += claim_lines
    head_end = lines.index("## Campaigns")
    stand_ins = _stand_in_text(spec, campaigns)
    if stand_ins:
        summary.append("stand-ins: " + stand_ins)
    lines[head_end:head_end] = ["Summary: " + "; ".join(summary) + ".", ""] if summary else []
    return Report("\n".join(lines).rstrip() + "\n", tables, sensitivity, verdicts)


def write_report(
    out: str | Path,
    spec: Spec | str | Path = DEFAULT_SPEC,
    results: str | Path = "results",
    substitutes: Mapping[str, str | Path] | None = None,
    provenance: str | Path | None = None,
) -> Path:
    """Build the report and write it to ``out`` (nothing is written when building fails)."""
    report = build_report(spec, results, substitutes, provenance)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report.text, encoding="utf-8")
    return out
