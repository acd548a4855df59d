"""Does a campaign run under the published table's settings? The "settings differ" caveat.

A quickstart campaign (120 s horizon, 3 seeds, 0.5 s evaluations, tvbo's own fast numerics) set
beside a paper's 600 s, 10-run table invites a wrong reading of the differences. This module
compares the settings that shape the regret with the ones the paper used and says, in one line,
which differ:

* **horizon** H: 600 s for every benchmark, except BOLT [B]'s Temperature (1800 s)
  (:data:`tvbo.benchmarks.tables.COST_TABLES`);
* **seeds**: 10 runs in every published table;
* **evaluation cost** c: the paper's cost table (BOLT [B] = ``metronome``, [A] = ``icml``);
  W-DBO publishes no evaluation cost (its code samples as soon as the algorithm answers), so
  the cost is not compared for ``wdbo``;
* **compute**: the papers measured BoTorch on the authors' Intel i9 laptop; tvbo's emulation
  of it is the counted model with the ``botorch-i9-laptop`` profile
  (:data:`PAPER_PROFILE`). Anything else (another profile, ``measured``, ``polynomial``, a
  speed other than 1) prices compute differently, so the number of iterations and the dataset
  sizes differ from the paper's.

The settings come either from a merged campaign (the runs' recorded ``config_json``:
:func:`campaign_settings`) or from a workflow configuration before any run
(:func:`config_settings`, for the report's captions); :func:`settings_differences` compares
them with :func:`paper_settings` and :func:`caveat_line` renders the one line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from tvbo.analysis.published import check_paper
from tvbo.benchmarks.tables import COST_TABLES
from tvbo.results.campaign import run_configs
from tvbo.results.schema import PRESENT_VARIABLE
from tvbo.sim.profiles import DEFAULT_PROFILE

#: runs per published table (BOLT [A], [B] and W-DBO all average 10 runs)
PAPER_SEEDS = 10
#: tvbo's emulation of the papers' hardware and implementation (tvbo/sim/profiles/)
PAPER_PROFILE = "botorch-i9-laptop"
#: the cost table each paper's costs and horizons come from (None: W-DBO gives no cost; 600 s)
PAPER_COST_TABLE: dict[str, str | None] = {
    "bolt-metronome": "metronome",
    "bolt-icml": "icml",
    "wdbo": None,
}
DEFAULT_HORIZON = 600.0
CAVEAT_PREFIX = "settings differ:"


@dataclass
class Settings:
    """The settings of one side, per benchmark where they can vary."""

    horizon: dict[str, float] = field(default_factory=dict)
    cost: dict[str, float] = field(default_factory=dict)
    seeds: tuple[int, int] | None = None  # (fewest, most) runs per (benchmark, algorithm)
    compute: str | None = None  # "counted/<profile>", "measured", "polynomial"; speed appended


def paper_settings(paper: str, benchmarks: Iterable[str]) -> Settings:
    """What the paper's table was run with, for the given (shared) benchmarks."""
    check_paper(paper)
    table = PAPER_COST_TABLE.get(paper)
    out = Settings(seeds=(PAPER_SEEDS, PAPER_SEEDS), compute=f"counted/{PAPER_PROFILE}")
    for name in benchmarks:
        row = COST_TABLES[table].get(name) if table else None
        out.horizon[name] = float(row["horizon"]) if row else DEFAULT_HORIZON
        if row is not None:
            out.cost[name] = float(row["cost"])
    return out


def _compute_label(model: str | None, profile: str | None, speed: float | None) -> str | None:
    if model is None:
        return None
    label = f"counted/{profile}" if model == "counted" else str(model)
    if speed is not None and float(speed) != 1.0:
        label += f" at speed {float(speed):g}"
    return label


def campaign_settings(campaign: xr.Dataset, benchmarks: Iterable[str] | None = None) -> Settings:
    """The settings a merged campaign recorded (horizon, cost, compute per run; seed counts)."""
    wanted = None if benchmarks is None else {str(b) for b in benchmarks}
    out = Settings()
    computes = set()
    for config in run_configs(campaign):
        bench = config.get("benchmark") or {}
        name = str(bench.get("name", ""))
        if wanted is not None and name not in wanted:
            continue
        if bench.get("horizon") is not None:
            out.horizon[name] = max(out.horizon.get(name, 0.0), float(bench["horizon"]))
        if bench.get("cost") is not None:
            out.cost[name] = max(out.cost.get(name, 0.0), float(bench["cost"]))
        compute = config.get("compute") or {}
        profile = compute.get("profile")
        profile = profile.get("name") if isinstance(profile, dict) else profile
        computes.add(_compute_label(compute.get("model"), profile, compute.get("speed")))
    computes.discard(None)
    out.compute = ", ".join(sorted(computes)) or None
    if "seed" in campaign.dims:
        present = (
            campaign[PRESENT_VARIABLE] == 1 if PRESENT_VARIABLE in campaign.data_vars
            else xr.ones_like(campaign["seed"], dtype=bool)
        )
        if wanted is not None:
            keep = [b for b in campaign["benchmark"].values if str(b) in wanted]
            present = present.sel(benchmark=keep)
        counts = present.sum("seed").values
        counts = counts[counts > 0]
        if counts.size:
            out.seeds = (int(counts.min()), int(counts.max()))
    return out


def config_settings(config: Mapping[str, Any], benchmarks: Iterable[str] | None = None) -> Settings:
    """The settings a workflow configuration (config/*.yaml, defaults filled) will run with."""
    table = str(config.get("cost_table") or "metronome")
    options = config.get("benchmark_options") or {}
    names = [str(b) for b in (benchmarks if benchmarks is not None else config["benchmarks"])]
    out = Settings()
    for name in names:
        row = COST_TABLES.get(table, {}).get(name, {})
        override = options.get(name) or {}
        horizon = config.get("horizon") or row.get("horizon")
        if horizon is not None:
            out.horizon[name] = float(horizon)
        cost = override.get("cost", row.get("cost"))
        if cost is not None:
            out.cost[name] = float(cost)
    n_seeds = len(config.get("seeds") or [])
    out.seeds = (n_seeds, n_seeds)
    speeds = [float(s) for s in (config.get("speeds") or [1.0])]
    model = str(config.get("compute") or "counted")
    labels = {_compute_label(model, config.get("profile") or DEFAULT_PROFILE, s) for s in speeds}
    out.compute = ", ".join(sorted(label for label in labels if label))
    return out


def _per_benchmark(name: str, ours: dict[str, float], theirs: dict[str, float]) -> str | None:
    shared = [b for b in ours if b in theirs and not np.isclose(ours[b], theirs[b])]
    if not shared:
        return None
    values = {ours[b] for b in shared}
    paper_values = {theirs[b] for b in shared}
    if len(values) == 1 and len(paper_values) == 1:
        return f"{name} {values.pop():g} s vs the paper's {paper_values.pop():g} s"
    return f"{name} " + ", ".join(f"{b} {ours[b]:g} s vs {theirs[b]:g} s" for b in shared)


def settings_differences(ours: Settings, paper: Settings) -> list[str]:
    """One phrase per setting that differs (empty: the campaign matches the paper)."""
    out = []
    horizon = _per_benchmark("horizon", ours.horizon, paper.horizon)
    if horizon:
        out.append(horizon)
    if ours.seeds is not None and paper.seeds is not None and ours.seeds != paper.seeds:
        low, high = ours.seeds
        count = f"{low}" if low == high else f"{low}-{high}"
        out.append(f"{count} seeds vs the paper's {paper.seeds[0]} runs")
    cost = _per_benchmark("evaluation cost", ours.cost, paper.cost)
    if cost:
        out.append(cost)
    if ours.compute is not None and ours.compute != paper.compute:
        out.append(
            f"compute {ours.compute} vs the paper's i9 laptop ({paper.compute} emulates it)"
        )
    return out


def caveat_line(differences: list[str]) -> str:
    """``"settings differ: ...; read ranks, not absolute regrets"`` or ``""`` when none."""
    if not differences:
        return ""
    return (
        f"{CAVEAT_PREFIX} " + "; ".join(differences)
        + " — absolute regrets are not comparable; compare ranks with care"
    )


def campaign_caveat(campaign: xr.Dataset, paper: str, benchmarks: Iterable[str]) -> str:
    """The caveat line for a merged campaign against ``paper`` on the shared benchmarks."""
    names = [str(b) for b in benchmarks]
    return caveat_line(
        settings_differences(campaign_settings(campaign, names), paper_settings(paper, names))
    )


def config_caveat(config: Mapping[str, Any], paper: str) -> str:
    """The caveat line for a workflow configuration against ``paper`` (all its benchmarks that
    the paper's cost table knows)."""
    table = PAPER_COST_TABLE.get(paper)
    names = [str(b) for b in config.get("benchmarks") or []]
    if table:
        names = [b for b in names if b in COST_TABLES[table]]
    return caveat_line(
        settings_differences(config_settings(config, names), paper_settings(paper, names))
    )
