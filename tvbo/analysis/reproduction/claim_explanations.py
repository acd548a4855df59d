"""Why a seed paper's claim fails on some comparisons: the spec's claim entries, judged.

A claim (:mod:`tvbo.analysis.reproduction.claims`) compares claimed algorithms with baselines;
every comparison that does not succeed is listed here as the tables' disagreements are
(:mod:`tvbo.analysis.reproduction.differences`): *explained* when an entry of the spec naming the
claim (``claim: ID``) names the comparison, tvbo's order on the claim's measure is the one the
entry states (a strict order: a loss of the claimed algorithm) and every prediction of the entry
holds; **contradicted** when the order or a prediction fails; else **unexplained** (no entry, or
missing evidence). The claims' campaigns have no held-out replicate in the spec unless it names
one, so their predictions are judged on the campaign's own seeds (and on the replicate where
there is one).
"""

from __future__ import annotations

import pandas as pd

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
from tvbo.analysis.reproduction.spec import Claim, Direction, Explanation, Spec


def _direction_outcome(direction: Direction, comparison, values: pd.DataFrame,
                       seeds: str) -> Outcome:
    """The entry's stated order against the claim's comparison: it holds on a loss of the
    claimed algorithm to the baseline the entry puts lower."""
    held = direction.lower == comparison.baseline and comparison.outcome == "loss"
    cells = values.set_index(["benchmark", "algorithm"])
    parts = []
    for name in (direction.lower, direction.higher):
        row = cells.loc[(comparison.benchmark, name)]
        parts.append(f"{display_name(name)} {fmt(row['mean'], row['se'])}")
    return Outcome("holds" if held else "fails", seeds, comparison.benchmark,
                   f"{parts[0]} vs {parts[1]} ({comparison.outcome} of "
                   f"{display_name(comparison.algorithm)})")


def claim_explanation_lines(
    claim: Claim, values: pd.DataFrame, comparisons: pd.DataFrame, spec: Spec,
    campaigns: Campaigns, measured: Measurements,
) -> tuple[list[str], dict[str, int]]:
    """The claim's comparisons that do not succeed, each explained, contradicted or unexplained,
    then the entries with their predictions (report lines) and the tallies."""
    tallies = {"explained": 0, "contradicted": 0, "unexplained": 0}
    failing = comparisons[~comparisons["success"].astype(bool)]
    entries = [e for e in spec.explanations if e.claim == claim.id]
    if failing.empty:
        return [], tallies
    seeds = measured.seeds(claim.campaign)
    evaluated: dict[int, list] = {}
    used: list[Explanation] = []
    notes: dict[int, list[str]] = {}
    rows = []
    for c in failing.itertuples(index=False):
        statuses = []
        for entry in entries:
            direction = entry.direction(c.benchmark, c.algorithm, c.baseline)
            if direction is None:
                continue
            if id(entry) not in evaluated:
                evaluated[id(entry)] = [(p, evaluate(p, spec, measured, held_out=False))
                                        for p in entry.predictions]
            if entry not in used:
                used.append(entry)
            outcome = _direction_outcome(direction, c, values, seeds)
            notes.setdefault(used.index(entry), []).append(
                f"   - states {c.benchmark}: {direction.lower} < {direction.higher} — "
                f"**{outcome.status}** ({outcome.detail})")
            every = [o for _, found in evaluated[id(entry)] for o in found] + [outcome]
            statuses.append((PAIR_STATUS[combine(every)], used.index(entry) + 1))
        status, why = pair_status(statuses, "no entry names this comparison")
        tallies[status] += 1
        mark = status if status == "explained" else f"**{status}**"
        rows.append(f"- {c.benchmark}, {display_name(c.algorithm)} vs "
                    f"{display_name(c.baseline)} ({c.outcome}): {mark} ({why})")
    lines = [
        f"Comparisons that do not succeed: {len(failing)}: {tallies['explained']} explained, "
        f"{tallies['contradicted']} contradicted, {tallies['unexplained']} unexplained.", "",
        *rows, "",
    ]
    for i, entry in enumerate(used, start=1):
        replicate = spec.replicate(claim.campaign)
        judged = (f"judged on {seeds} and on the held-out replicate {replicate}" if replicate
                  else f"judged on {seeds}; the spec gives this campaign no held-out replicate")
        lines.append(f"{i}. {entry.cause} (spec {entry.where}; {judged})")
        lines += notes.get(i - 1, [])
        for prediction, outcomes in evaluated[id(entry)]:
            lines += outcome_lines(prediction, outcomes)
        for ev in entry.evidence:
            for line in evaluate_evidence(ev, campaigns, list(entry.benchmarks),
                                          list(entry.algorithms)):
                lines.append(f"   - {line}")
    return lines + ([""] if used else []), tallies
