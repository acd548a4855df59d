"""Why tvbo orders a pair differently from the paper: the spec's explanations, judged.

Every disagreeing pair of a table (:func:`difference_lines`) is *explained* when an entry of the
spec names it and every prediction of that entry holds on every replicate
(:mod:`tvbo.analysis.reproduction.predict`), **contradicted** when one of them fails (the failing
quantity and its measured values are listed, :func:`contradicted_lines`), else **unexplained** (no
entry names it, or its evidence is missing). Broad entries (``all``) are printed as context only.
"""

from __future__ import annotations

import pandas as pd

from tvbo.analysis.metrics import OVERALL_LABEL
from tvbo.analysis.reproduction.campaigns import Campaigns
from tvbo.analysis.reproduction.evidence import evaluate_evidence
from tvbo.analysis.reproduction.markdown import display_name, fmt
from tvbo.analysis.reproduction.predict import (
    PAIR_STATUS,
    Measurements,
    Outcome,
    combine,
    evaluate,
    outcome_lines,
    pair_status,
)
from tvbo.analysis.reproduction.spec import Explanation, Prediction, Spec, Term
from tvbo.analysis.reproduction.table_result import TableResult


def _order_text(a: str, b: str, sign: int) -> str:
    if sign == 0:
        return f"{display_name(a)} ≈ {display_name(b)}"
    lo, hi = (a, b) if sign < 0 else (b, a)
    return f"{display_name(lo)} < {display_name(hi)}"


def _direction_prediction(entry: Explanation, direction, campaign: str) -> Prediction:
    """The order an entry predicts for a pair, as a prediction on the table's regret."""
    return Prediction("order", "average_regret", Term(direction.lower, campaign),
                      Term(direction.higher, campaign), (direction.benchmark,), campaign,
                      f"average_regret: {direction.lower} < {direction.higher} (the pair)")


def difference_lines(
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
                notes.setdefault(used.index(entry), []).extend(outcome_lines(pred, outs))
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
            status, why = pair_status(statuses, "no specific entry names this pair")
            getattr(result, status).append((benchmark, r.a, r.b))
            if not statuses:
                result.broad_only += 1 if context else 0
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
                lines += outcome_lines(prediction, outcomes)
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
