"""The reproduction report's section on the published code (the spec's ``published_code``).

Why it is built this way: the published code's sides (the public W-DBO, BoTorch's GP-UCB) ran
with ``measured`` compute, which depends on the machine and cannot be rebuilt bit for bit, and
running them needs the reference extra (torch). So their per-run numbers come from the committed
runs table, while tvbo's sides are read from the spec's campaigns like every table of the report:
the section comes back byte-identical from one command on a clean clone without the extra. The
numbers, the agreement rule, the tests and the judging of the explanations are
:mod:`tvbo.analysis.reproduction.published_code`'s, the same as ``docs/side-by-side.md``'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import xarray as xr

from tvbo.analysis.reproduction.campaigns import Campaigns
from tvbo.analysis.reproduction.published_code import (
    Runs,
    RunValues,
    campaign_runs,
    comparison_lines,
    grouped,
    provenance_text,
    read_runs_table,
    same_price_lines,
    split_held_out,
)
from tvbo.analysis.reproduction.published_spec import PublishedCode, Side
from tvbo.analysis.reproduction.spec import Spec

TITLE = "## The published code"


def _sides(spec: Spec, section: PublishedCode, campaigns: Campaigns) -> tuple[Runs, list[str]]:
    """side -> benchmark -> runs on every seed, and the campaign keys of sides whose campaign is
    not yet run.

    A campaign side is read only on the benchmarks the measured sides hold (the comparison's):
    its campaign's runs and its held-out replicate's (the spec's ``replicate``) where built."""
    table = read_runs_table(section.runs)
    benchmarks = sorted({b for by in table.values() for b in by})
    runs: Runs = {}
    missing = []
    for name, side in section.sides.items():
        if side.measured is not None:
            runs[name] = table.get(side.measured, {})
            continue
        ds = campaigns.get(side.campaign)
        if ds is None:
            missing.append(side.campaign)
            runs[name] = {}
            continue
        replicate = spec.replicate(side.campaign)
        built = [ds, *([campaigns.get(replicate)] if replicate is not None else [])]
        found = [r for part in built if part is not None
                 for rs in _campaign_side(part, side, benchmarks).values() for r in rs]
        runs[name] = grouped(found).get(name, {})
    return runs, missing


def held_out_seeds(spec: Spec) -> tuple[int, ...]:
    """The held-out seeds of the published-code comparison: the seeds of the held-out
    replicates of its campaign sides' campaigns (the spec's ``replicate``), declared once there
    and read by the side-by-side page too."""
    section = spec.published_code
    if section is None:
        return ()
    keys = {spec.replicate(side.campaign) for side in section.sides.values()
            if side.campaign is not None}
    return tuple(sorted({int(seed) for key in keys if key is not None
                         for seed in spec.campaigns[key].merged.get("seeds") or []}))


def _campaign_side(ds: xr.Dataset, side: Side, benchmarks: list[str]
                   ) -> dict[str, list[RunValues]]:
    """benchmark -> one campaign's runs of a side's algorithm, on the comparison's benchmarks
    it ran."""
    present = [b for b in benchmarks if b in set(map(str, ds["benchmark"].values))]
    return campaign_runs(ds.sel(benchmark=present), str(side.algorithm), side.name)


def _side_text(side: Side, campaigns: Campaigns) -> str:
    if side.measured is not None:
        return f"`{side.name}`: {side.label}, measured runs (the runs table's `{side.measured}`)"
    name = campaigns.sources[side.campaign].spec.name
    return f"`{side.name}`: {side.label}, `{side.algorithm}` of campaign `{name}`"


def published_section(spec: Spec, campaigns: Campaigns) -> tuple[list[str], list[str]]:
    """The section's Markdown lines and its summary parts (one per comparison)."""
    section = spec.published_code
    if section is None:
        return [], []
    every, missing = _sides(spec, section, campaigns)
    runs, held = split_held_out(every, held_out_seeds(spec))
    labels = {name: side.label for name, side in section.sides.items()}
    root = spec.path.parent.parent
    measured = [n for n, s in section.sides.items() if s.measured is not None]
    measured_text = provenance_text(every, measured)
    lines = [
        TITLE, "",
        "tvbo's emulations beside the code they emulate, under the BOLT [B] protocol. The "
        f"published code's runs are the committed runs table `{_relative(section.runs, root)}` "
        "(written by `python examples/wdbo_public/report.py OUT --export-runs FILE` from their "
        "run files: their compute is measured, so they cannot be rebuilt bit for bit, and "
        "running them needs the `reference` extra); tvbo's sides are the campaigns' runs. "
        f"Measured runs: {measured_text or 'none'}. Sides: "
        + "; ".join(_side_text(s, campaigns) for s in section.sides.values()) + ". "
        f"The differences are judged by the predictions of "
        f"`{_relative(section.explanations, root)}`. Figures of queries and dataset size over "
        f"time, the public code's response time R(n) and its replay: [{section.page}]"
        f"({section.page}).", "",
    ]
    summary = []
    for comparison in section.comparisons:
        short = comparison.title.split(":")[0]
        lines += [f"### {comparison.title}", ""]
        tvbo_side = section.sides[comparison.tvbo]
        if tvbo_side.campaign in missing:
            lines += [campaigns.not_yet_run(tvbo_side.campaign), ""]
            summary.append(f"{short}: not yet run")
            continue
        body, result = comparison_lines(comparison, runs, labels, section.entries,
                                        section.explanations.name, held, level=4)
        lines += _split(body)
        price = section.sides.get(comparison.same_price or "")
        if price is not None and price.campaign in missing:
            lines += ["#### At one compute price", "", campaigns.not_yet_run(price.campaign), ""]
        else:
            lines += _split(same_price_lines(comparison, runs, labels, level=4))
        summary.append(result.summary(f"published code, {short}"))
    return lines, summary


def _split(lines: Iterable[str]) -> list[str]:
    """Lines with the tables' own line breaks split (the report joins lines with one)."""
    return [part for line in lines for part in str(line).split("\n")]


def _relative(path: Path, root: Path) -> str:
    """A path relative to the repository's root (the report names no machine path)."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name
