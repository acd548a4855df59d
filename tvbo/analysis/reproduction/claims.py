"""The seed papers' headline claims, tested on tvbo's runs.

Each claim (:func:`claim_result`) compares claimed algorithm(s) with baselines on the seed paper's
own measure, computed by :mod:`tvbo.analysis.paper_figures` (average, cumulative or simple regret at
the last step every run reached, or simple regret at a CPU-time budget). One comparison is a *win*
when the claimed mean is lower and the intervals mean ± 1 s.e. do not overlap, a *tie* when they
overlap, else a *loss*. With relation ``better`` a comparison succeeds on a win, with
``not_worse`` ("competitive") on a win or a tie. **Verdict** (:func:`verdict`): *reproduced* when
every comparison succeeds, *not reproduced* when none does, *partly* otherwise. The comparisons
that do not succeed are judged against the spec's claim entries
(:mod:`tvbo.analysis.reproduction.claim_explanations`).
"""

from __future__ import annotations

import math

import pandas as pd
import xarray as xr

from tvbo.analysis.paper_figures import CURVES, boke_curves, step_curves
from tvbo.analysis.reproduction.campaigns import Campaigns, at_reference_speed, select_runs
from tvbo.analysis.reproduction.claim_explanations import claim_explanation_lines
from tvbo.analysis.reproduction.evidence import evaluate_evidence
from tvbo.analysis.reproduction.markdown import display_name, fmt, md_table
from tvbo.analysis.reproduction.orderings import ordering
from tvbo.analysis.reproduction.predict import Measurements
from tvbo.analysis.reproduction.spec import Claim, Spec

VERDICTS: tuple[str, ...] = ("reproduced", "partly", "not reproduced")


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
    names = [*claim.algorithms, *claim.baselines]
    holes = [f"{a} on {b}" for b in claim.benchmarks if b not in missing for a in names
             if (b, a) not in indexed.index]
    if holes:  # a campaign whose grid has holes (a run never made)
        raise LookupError(f"no run of {', '.join(holes)} in the campaign")
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
        "succeeds, not reproduced when none does, partly otherwise. A comparison that does not "
        "succeed is *explained* when an entry of the spec naming the claim states tvbo's order "
        "for it and every prediction of that entry holds, **contradicted** when the order or a "
        "prediction fails, else **unexplained**; the predictions are judged on the claim "
        "campaign's seeds (and on its held-out replicate where the spec names one).", "",
    ]
    verdicts: dict[str, str] = {}
    measured = Measurements(campaigns)
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
            lines += md_table(("benchmark", "algorithm", "tvbo (mean ± s.e.)", "runs", "at"), rows)
            wins = comparisons.groupby("outcome").size().to_dict()
            lines += [
                "",
                f"Comparisons: {int(comparisons['success'].sum())} of {len(comparisons)} succeed "
                f"(win {wins.get('win', 0)}, tie {wins.get('tie', 0)}, loss "
                f"{wins.get('loss', 0)}). Verdict: **{result}**.", "",
            ]
            lines += claim_explanation_lines(claim, values, comparisons, spec, campaigns,
                                             measured)[0]
        lines += [f"Reason: {claim.reason}"]
        for ev in claim.evidence:
            for line in evaluate_evidence(ev, campaigns, list(claim.benchmarks),
                                          [*claim.algorithms, *claim.baselines]):
                lines.append(f"- {line}")
        lines.append("")
    return lines, verdicts
