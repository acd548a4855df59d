"""The fit-health subsection of a table: do fitted temporal lengthscales stay inside the horizon?

Per algorithm of the table's campaign, :func:`tvbo.analysis.fit_health.horizon_table`; an algorithm
above :data:`~tvbo.analysis.fit_health.HORIZON_SHARE_LIMIT` is listed per benchmark and either
attributed by a ``fit_causes`` entry of the spec (to its paper's own setting or not) or reported
**unexplained** (:func:`fit_health_lines`, :func:`fit_summary` for the report's summary line).
"""

from __future__ import annotations

import math

import xarray as xr

from tvbo.analysis.fit_health import HORIZON_SHARE_LIMIT, horizon_table
from tvbo.analysis.reproduction.campaigns import Campaigns
from tvbo.analysis.reproduction.evidence import evaluate_evidence
from tvbo.analysis.reproduction.markdown import display_name, md_table
from tvbo.analysis.reproduction.spec import Spec
from tvbo.analysis.reproduction.table_result import TableResult


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
    lines += md_table(("algorithm", "fit mode", "runs", "fits", "l_T fits",
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
              f"{limit}:", "", *md_table(("algorithm", *benchmarks), rows), ""]
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


def fit_summary(result: TableResult) -> str:
    """The table's fit-health count for the report's summary line."""
    limit = f"{100 * HORIZON_SHARE_LIMIT:.0f} %"
    if result.fit_health is None or result.fit_health.empty:
        return "fit health: no fit recorded"
    n = len(result.fit_exceeding)
    return (f"fit health: {n} of {len(result.fit_health)} algorithms with l_T beyond the "
            f"horizon in > {limit} of their fits, {len(result.fit_paper_setting)} of them "
            f"attributed to their paper's own setting, {len(result.fit_not_paper_setting)} to "
            f"a setting that is not their paper's, {len(result.fit_unexplained)} unexplained")
