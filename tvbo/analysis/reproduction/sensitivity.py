"""Sensitivity to the emulated hardware: do tvbo's orderings hold at every speed?

The paper configs price work with the ``botorch-i9-laptop`` profile, whose R(n) fit has ~32 % RMS
error; a campaign run at speeds 0.7, 1 and 1.3 (every compute time divided by the speed) shows, per
benchmark, which pairwise orderings hold at every speed (same strict order), which *flip* (a strict
order reversed between two speeds) and which tie at some speed (:func:`speed_sensitivity`), and per
speed the agreement with the paper (:func:`sensitivity_section`).
"""

from __future__ import annotations

import itertools
import math

import pandas as pd

from tvbo.analysis import tables as _tables
from tvbo.analysis.compare import METRIC, comparison_table
from tvbo.analysis.metrics import OVERALL_LABEL
from tvbo.analysis.published import PAPERS, apply_aliases, paper_table
from tvbo.analysis.reproduction.campaigns import Campaigns
from tvbo.analysis.reproduction.markdown import display_name, md_table
from tvbo.analysis.reproduction.orderings import agreement_counts, ordering, pairwise_orderings


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
    base = campaigns.get(sens.base) if sens.base is not None else None
    if sens.base is not None and base is None:
        return lines + [f"Campaign {campaigns.not_yet_run(sens.base)}.", ""], None
    aliases = sens.aliases or None
    published = apply_aliases(paper_table(sens.paper), aliases, sens.paper)
    summary = _tables.summary_table(ds, METRIC)
    own_speeds = set(summary["speed"])
    if base is not None:
        # the base campaign's runs at the speeds the campaign does not run (spec: same settings)
        extra = _tables.summary_table(base, METRIC)
        extra = extra[~extra["speed"].isin(own_speeds)]
        summary = pd.concat([summary, extra], ignore_index=True)
    summary = summary[summary["algorithm"].isin(set(published["algorithm"]))
                      & summary["benchmark"].isin(set(published["benchmark"]))]
    if summary.empty:
        return lines + ["The campaign shares no benchmark and algorithm with the paper.", ""], None
    result = speed_sensitivity(summary)
    speeds = sorted(summary["speed"].unique())
    source = f"Campaign `{campaigns.sources[sens.campaign].spec.name}`"
    if base is not None:
        base_speeds = sorted(set(summary["speed"]) - own_speeds)
        source += (f" with speed {', '.join(f'{s:g}' for s in base_speeds)} from campaign "
                   f"`{campaigns.sources[sens.base].spec.name}` (the same settings: those runs "
                   "are not made twice)")
    lines += [
        f"{source}, speeds "
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
    lines += md_table(("benchmark", "holds", "tie", "flips", "orderings", "flipped pairs"), rows)
    agreement = []
    for speed in speeds:
        at_speed = summary[summary["speed"] == speed].drop(columns="speed")
        counts = agreement_counts(
            pairwise_orderings(comparison_table(at_speed, sens.paper, aliases)))
        total = counts.loc[OVERALL_LABEL]
        agreement.append([f"{speed:g}", *(str(total[k]) for k in
                                           ("agree", "tie", "disagree", "orderings"))])
    lines += ["", "Pairwise orderings against the paper at each speed (all benchmarks):", "",
              *md_table(("speed", "agree", "tie", "disagree", "orderings"), agreement)]
    return lines + [""], result
