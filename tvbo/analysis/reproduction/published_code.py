"""The published code beside tvbo's emulation of it: the numbers, the verdicts, the section.

One implementation for both places that show the comparison: the reproduction report's section
(``tvbo reproduce``: the published code's measured runs from the committed runs table, tvbo's
sides from the spec's campaigns) and the side-by-side page (``examples/wdbo_public/report.py``:
every side from run files). The spec section and the explanations file are read by
:mod:`tvbo.analysis.reproduction.published_spec`.

Per run (:func:`run_values`): average and time-integrated regret (the run's own summaries),
queries, the mean compute charged per post-warm-up iteration, queries and dataset size at the
quarters of the horizon, the time-averaged dataset size, and whether the run collapsed to the
2-point floor (dataset size <= 2 at a post-warm-up iteration). Across runs: mean ± s.e. (sample
standard deviation / sqrt(runs)); two sides *agree* on a quantity when their ±1 s.e. intervals
overlap (the reproduction report's tie rule); the two-sample tests are Welch's unequal-variance
t-test and the Mann-Whitney U test (two-sided). A benchmark where the sides differ is
*explained* when an entry names it and every prediction of the entry holds (the predicted
order's ±1 s.e. intervals do not overlap) on the comparison's seeds and on the held-out seeds
(those of the held-out replicate of tvbo's side's campaign: the explanations are written from
the first and must hold on the second), *contradicted* when one fails on either, *unexplained*
when no entry names it or evidence is missing. Each regret that differs is judged on its own (an
entry may name only some of them), and the benchmark is explained when every one is. Tables,
agreement and tests are the comparison's seeds'.
"""

from __future__ import annotations

import csv
import json
import math
import warnings
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xarray as xr
from scipy import stats

from tvbo.analysis.reproduction.markdown import md_table
from tvbo.analysis.reproduction.published_spec import (
    PROVENANCE,
    QUANTITIES,
    QUARTERS,
    REGRETS,
    RUN_COLUMNS,
    Comparison,
    SideExplanation,
    SidePrediction,
)


@dataclass(frozen=True)
class RunValues:
    """One run's numbers (the runs table's row)."""

    side: str
    benchmark: str
    seed: int
    values: dict[str, float]  #: QUANTITIES' keys (collapsed as 0/1)
    queries_at: tuple[float, ...]  #: queries sampled by each quarter of the horizon
    size_at: tuple[float, ...]  #: dataset size in force at each quarter
    horizon: float
    provenance: dict[str, str]


#: side -> benchmark -> runs (seed order)
Runs = dict[str, dict[str, list[RunValues]]]


def held_at(ds: xr.Dataset, times: np.ndarray) -> np.ndarray:
    """The dataset size in force at ``times`` (seconds) of a one-run dataset."""
    grid = ds["time"].values
    held = ds["dataset_size_held"].values
    k = np.searchsorted(grid, times, side="right") - 1
    return held[np.clip(k, 0, len(held) - 1)]


def run_values(ds: xr.Dataset, side: str, horizon: float,
               provenance: Mapping[str, str] | None = None) -> RunValues:
    """The numbers of one run: ``ds`` without run dimensions (a run file squeezed, or one run
    selected from a campaign; padded iterations are NaN)."""
    warm = ds["is_warmup"].values
    size = ds["dataset_size"].values.astype(float)
    t_sample = ds["t_sample"].values.astype(float)
    t_sample = t_sample[np.isfinite(t_sample)]
    post = (warm == 0) & np.isfinite(size)
    compute = ds["compute_total"].values.astype(float)[post]
    held = ds["dataset_size_held"].values.astype(float)
    values = {
        "avg": float(ds["average_regret"]),
        "tir": float(ds["time_integrated_regret"]),
        "queries": float(ds["n_iterations"]),
        "compute": float(np.nanmean(compute)) if np.isfinite(compute).any() else math.nan,
        "mean_size": float(np.nanmean(held)),
        "collapsed": float(np.any(size[post] <= 2)),
    }
    quarters = np.asarray(QUARTERS) * horizon
    return RunValues(side, str(ds["benchmark"].values), int(ds["seed"].values), values,
                     tuple(float(np.sum(t_sample <= q)) for q in quarters),
                     tuple(float(v) for v in held_at(ds, quarters)), horizon,
                     dict(provenance or {}))


def grouped(runs: Iterable[RunValues]) -> Runs:
    """side -> benchmark -> runs, benchmarks and seeds sorted."""
    out: Runs = {}
    for run in runs:
        out.setdefault(run.side, {}).setdefault(run.benchmark, []).append(run)
    return {side: {b: sorted(rs, key=lambda r: r.seed) for b, rs in sorted(by.items())}
            for side, by in out.items()}


def seeds_of(runs: Runs, seeds: Collection[int], keep: bool = True) -> Runs:
    """The runs whose seed is in ``seeds`` (``keep=False``: is not); a benchmark left without
    runs is dropped, a side is kept."""
    chosen = set(seeds)
    out: Runs = {}
    for side, by in runs.items():
        kept = {b: [r for r in rs if (r.seed in chosen) == keep] for b, rs in by.items()}
        out[side] = {b: rs for b, rs in kept.items() if rs}
    return out


def campaign_runs(ds: xr.Dataset, algorithm: str, side: str) -> dict[str, list[RunValues]]:
    """benchmark -> the present runs of ``algorithm`` in a campaign (at its one speed, or 1)."""
    speeds = [float(s) for s in ds["speed"].values]
    speed = speeds[0] if len(speeds) == 1 else 1.0
    out: list[RunValues] = []
    for bench in ds["benchmark"].values:
        for seed in ds["seed"].values:
            one = ds.sel(benchmark=bench, algorithm=algorithm, seed=seed, speed=speed)
            if "run_present" in one and int(one["run_present"]) != 1:
                continue
            horizon = (float(one["attr_horizon"]) if "attr_horizon" in one
                       else float(ds.attrs["horizon"]))
            out.append(run_values(one, side, horizon))
    return grouped(out).get(side, {})


# -- the committed runs table ----------------------------------------------------------------------
def write_runs_table(runs: Iterable[RunValues], path: Path) -> Path:
    """The runs table (CSV, numbers at full precision: read back, they give the same report)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(RUN_COLUMNS)
        for r in sorted(runs, key=lambda r: (r.side, r.benchmark, r.seed)):
            writer.writerow(_row(r))
    return path


def merged_runs(kept: Runs, new: Iterable[RunValues]) -> list[RunValues]:
    """The rows of a runs table ``kept`` plus the runs ``new``: one row per (side, benchmark,
    seed). Measured runs cannot be made again bit for bit, and their run files need not outlive
    the machine that made them, so a table grows by merging: a run already in the table must
    come back with the same numbers (ValueError names the runs that differ), a new one is added.
    """
    rows = {(r.side, r.benchmark, r.seed): r for by in kept.values() for rs in by.values()
            for r in rs}
    clashes = []
    for run in new:
        key = (run.side, run.benchmark, run.seed)
        old = rows.get(key)
        if old is not None and _row(old) != _row(run):
            clashes.append(f"{run.side} {run.benchmark} seed {run.seed}")
            continue
        rows[key] = run
    if clashes:
        raise ValueError(f"{len(clashes)} run(s) already in the table with other numbers: "
                         + ", ".join(clashes) + " (a measured run is not made twice; remove its "
                         "row first to replace it)")
    return list(rows.values())


def _row(r: RunValues) -> list[str]:
    """A run's row of the table, as written (what a read back compares)."""
    return [r.side, r.benchmark, str(r.seed), *(repr(r.values[q]) for q in QUANTITIES),
            repr(r.horizon), *map(repr, r.queries_at), *map(repr, r.size_at),
            *(r.provenance.get(k, "") for k in PROVENANCE)]


def read_runs_table(path: Path) -> Runs:
    """The runs table: side -> benchmark -> runs (ValueError names a missing column)."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in RUN_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path.name}: missing column(s) {missing}")
        rows = list(reader)
    runs = [RunValues(row["side"], row["benchmark"], int(row["seed"]),
                      {q: float(row[q]) for q in QUANTITIES},
                      tuple(float(row[f"queries_at_{round(q * 100)}"]) for q in QUARTERS),
                      tuple(float(row[f"size_at_{round(q * 100)}"]) for q in QUARTERS),
                      float(row["horizon"]), {k: row[k] for k in PROVENANCE})
            for row in rows]
    return grouped(runs)


def versions_text(versions_json: str) -> str:
    """A run file's ``versions_json`` as ``name version`` pairs (the runs table's column)."""
    try:
        versions = json.loads(versions_json)
    except (TypeError, ValueError):
        return ""
    return ", ".join(f"{k} {v}" for k, v in versions.items())


# -- aggregation and verdicts ----------------------------------------------------------------------
def mean_se(values: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error (NaN s.e. with one value)."""
    a = np.asarray(values, float)
    se = float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else math.nan
    return float(a.mean()), se


def fmt(m: float, se: float, spec: str = ".3f") -> str:
    """``m ± se`` (``m`` alone without an s.e.)."""
    return f"{m:{spec}} ± {se:{spec}}" if math.isfinite(se) else f"{m:{spec}}"


@dataclass(frozen=True)
class Verdict:
    """Two sides on one quantity of one benchmark."""

    quantity: str
    a: tuple[float, float]
    b: tuple[float, float]
    welch_p: float
    mann_whitney_p: float

    @property
    def difference(self) -> float:
        return self.a[0] - self.b[0]

    @property
    def agree(self) -> bool | None:
        """Whether the ±1 s.e. intervals overlap (None: a side has no s.e.)."""
        if not (math.isfinite(self.a[1]) and math.isfinite(self.b[1])):
            return None
        return abs(self.difference) <= self.a[1] + self.b[1]


def verdict(quantity: str, a: Sequence[RunValues], b: Sequence[RunValues]) -> Verdict:
    """Compare ``quantity`` of the runs ``a`` and ``b``."""
    x = [r.values[quantity] for r in a]
    y = [r.values[quantity] for r in b]
    welch = mw = math.nan
    if len(x) > 1 and len(y) > 1:
        with warnings.catch_warnings():  # near-equal samples (query counts): p is still defined
            warnings.simplefilter("ignore", RuntimeWarning)
            if np.ptp(x) > 0 or np.ptp(y) > 0:
                welch = float(stats.ttest_ind(x, y, equal_var=False).pvalue)
            mw = float(stats.mannwhitneyu(x, y, alternative="two-sided").pvalue)
    return Verdict(quantity, mean_se(x), mean_se(y), welch, mw)


@dataclass(frozen=True)
class HeldOut:
    """The held-out seeds' runs (every side) and the seeds, which the explanations were not
    written from."""

    runs: Runs
    seeds: tuple[int, ...]

    @property
    def text(self) -> str:
        return f"held-out seeds {seed_text(sorted(self.seeds))}" if self.seeds else "held-out seeds"


def split_held_out(runs: Runs, seeds: Sequence[int]) -> tuple[Runs, HeldOut]:
    """Every seed's runs split into the comparison's seeds and the held-out ``seeds``."""
    return seeds_of(runs, seeds, keep=False), HeldOut(seeds_of(runs, seeds), tuple(seeds))


def judge_both(prediction: SidePrediction, runs: Runs, held: HeldOut, bench: str
               ) -> tuple[str, str]:
    """A prediction on the comparison's seeds and on the held-out seeds: holds when it holds on
    both, fails when it fails on either, no evidence otherwise; and the values shown."""
    first, shown = judge(prediction, runs, bench)
    again, shown_held = judge(prediction, held.runs, bench)
    status = ("fails" if "fails" in (first, again) else
              "holds" if first == again == "holds" else "no evidence")
    return status, f"{first}, {shown}; {held.text}: {again}, {shown_held}"


def judge(prediction: SidePrediction, runs: Runs, bench: str) -> tuple[str, str]:
    """(holds | fails | no evidence, the values shown)."""
    a = [r.values[prediction.quantity] for r in runs.get(prediction.a, {}).get(bench, [])]
    b = [r.values[prediction.quantity] for r in runs.get(prediction.b, {}).get(bench, [])]
    if len(a) < 2 or len(b) < 2:
        return "no evidence", f"{len(a)} and {len(b)} runs"
    (ma, sa), (mb, sb) = mean_se(a), mean_se(b)
    spec = QUANTITIES[prediction.quantity][1]
    shown = f"{prediction.a} {fmt(ma, sa, spec)} vs {prediction.b} {fmt(mb, sb, spec)}"
    low, high = ((ma, sa), (mb, sb)) if prediction.op == "<" else ((mb, sb), (ma, sa))
    return ("holds" if low[0] + low[1] < high[0] - high[1] else "fails"), shown


# -- rendering -------------------------------------------------------------------------------------
def seed_text(seeds: Sequence[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``0-2, 5``."""
    parts, start = [], None
    for i, s in enumerate(seeds):
        if start is None:
            start = s
        if i + 1 == len(seeds) or seeds[i + 1] != s + 1:
            parts.append(f"{start}" if start == s else f"{start}-{s}")
            start = None
    return ", ".join(parts)


def runs_table(runs: Runs, sides: Sequence[str], labels: Mapping[str, str],
               benchmarks: Sequence[str] | None = None) -> str:
    """Markdown: one row per benchmark (default: any side's) and side."""
    if benchmarks is None:
        benchmarks = sorted(set().union(*(runs.get(s, {}) for s in sides)))
    rows = []
    for bench in benchmarks:
        for side in sides:
            rs = runs.get(side, {}).get(bench, [])
            if not rs:
                rows.append([bench, labels[side], 0, *[""] * 6])
                continue
            q = "/".join(f"{np.mean([r.queries_at[i] for r in rs]):.0f}"
                         for i in range(len(QUARTERS)))
            s = "/".join(f"{np.mean([r.size_at[i] for r in rs]):.1f}"
                         for i in range(len(QUARTERS)))
            rows.append([bench, labels[side], f"{len(rs)} ({seed_text([r.seed for r in rs])})",
                         fmt(*mean_se([r.values["avg"] for r in rs])),
                         fmt(*mean_se([r.values["tir"] for r in rs])), q, s,
                         f"{np.mean([r.values['compute'] for r in rs]):.2f}",
                         f"{int(sum(r.values['collapsed'] for r in rs))}/{len(rs)}"])
    quarters = "/".join(f"{round(q * 100)}" for q in QUARTERS)
    return "\n".join(md_table(
        ("benchmark", "side", "runs (seeds)", "average regret", "time-int. regret",
         f"queries at {quarters} % of H", f"dataset size at {quarters} %",
         "compute/iter. (s)", "collapsed"), rows))


@dataclass
class ComparisonResult:
    """One comparison's verdicts: benchmarks judged, agreeing, and the differing ones' status."""

    judged: int = 0
    agreeing: int = 0
    explained: int = 0
    contradicted: int = 0
    unexplained: int = 0

    def summary(self, name: str) -> str:
        text = (f"{name}: agree within the s.e. on both regrets on {self.agreeing} of "
                f"{self.judged} benchmarks with 2 or more runs a side")
        differ = self.judged - self.agreeing
        if differ:
            text += (f" ({differ} differ: {self.explained} explained, {self.contradicted} "
                     f"contradicted, {self.unexplained} unexplained)")
        return text


def comparison_lines(comparison: Comparison, runs: Runs, labels: Mapping[str, str],
                     entries: Sequence[SideExplanation], explanations_name: str,
                     held: HeldOut, level: int = 3) -> tuple[list[str], ComparisonResult]:
    """The runs table, the agreement per benchmark and, where the sides differ, each
    explanation judged on ``runs`` (the comparison's seeds) and on ``held`` (Markdown lines;
    ``level``: of the sub-headings) and the tallies."""
    a, b = comparison.published, comparison.tvbo
    # the published side's benchmarks (a campaign runs more), else either side's
    benchmarks = sorted(runs.get(a) or set(runs.get(a, {})) | set(runs.get(b, {})))
    lines = [runs_table(runs, (a, b), labels, benchmarks)]
    result = ComparisonResult()
    verdict_lines, open_lines = [], []
    for bench in benchmarks:
        ra, rb = runs.get(a, {}).get(bench, []), runs.get(b, {}).get(bench, [])
        if len(ra) < 2 or len(rb) < 2:
            verdict_lines.append(f"- **{bench}**: {len(ra)} {a} and {len(rb)} {b} runs: no "
                                 "s.e. on a side with fewer than 2 runs, not judged")
            continue
        parts, disagree = [], []
        for q in REGRETS:
            v = verdict(q, ra, rb)
            if not v.agree:
                disagree.append(q)
            parts.append(f"{QUANTITIES[q][0]} {'agree' if v.agree else '**differ**'} "
                         f"(difference {v.difference:+.3f}; Welch p = {v.welch_p:.2g}, "
                         f"Mann-Whitney p = {v.mann_whitney_p:.2g})")
        result.judged += 1
        result.agreeing += not disagree
        verdict_lines.append(f"- **{bench}** ({len(ra)} vs {len(rb)} runs): " + "; ".join(parts))
        if disagree:
            status, text = explain(comparison.name, bench, disagree, runs, held, entries,
                                   explanations_name)
            setattr(result, status, getattr(result, status) + 1)
            open_lines += text
    lines += ["", "Agreement (±1 s.e. intervals overlap), two-sample tests on the runs' "
              "values:", "", *verdict_lines, ""]
    if open_lines:
        lines += [f"{'#' * level} Where they differ", "",
                  "Each prediction is judged on the comparison's seeds (those above) and on "
                  f"the {held.text} (the table below), which the explanations were not "
                  "written from; it holds only when it holds on both.", "",
                  *open_lines, "", *held_out_lines(comparison, held, labels, benchmarks)]
    return lines, result


def held_out_lines(comparison: Comparison, held: HeldOut, labels: Mapping[str, str],
                   benchmarks: Sequence[str]) -> list[str]:
    """The held-out seeds' runs of the comparison's sides, on the benchmarks that have any."""
    sides = [s for s in (comparison.published, comparison.tvbo, comparison.same_price)
             if s is not None]
    present = [b for b in benchmarks if any(held.runs.get(s, {}).get(b) for s in sides)]
    if not present:
        return [f"No runs on the {held.text} yet: every prediction's held-out evidence is "
                "missing.", ""]
    return [f"The {held.text}:", "", runs_table(held.runs, sides, labels, present), ""]


def explain(pair: str, bench: str, disagree: Sequence[str], runs: Runs, held: HeldOut,
            entries: Sequence[SideExplanation], explanations_name: str
            ) -> tuple[str, list[str]]:
    """The status of one difference (explained | contradicted | unexplained) and its lines.

    Each regret that differs (``disagree``) is judged on its own: explained when an entry naming
    it has every prediction holding (on ``runs``, the comparison's seeds, and on ``held``, the
    held-out seeds), contradicted when none does and one fails, unexplained otherwise (an entry
    with evidence missing, or no entry). An entry may name only some of the regrets that differ
    (the price can explain time-integrated regret and leave average regret open); the
    difference is explained when every regret is, contradicted when one is."""
    covering = [e for e in entries if e.pair == pair and bench in e.benchmarks
                and set(disagree) & set(e.explains)]
    out: list[str] = []
    per_metric: dict[str, set[str]] = {q: set() for q in disagree}
    for entry in covering:
        named = [q for q in disagree if q in entry.explains]
        judged = [(p, *judge_both(p, runs, held, bench)) for p in entry.predictions]
        status = ("explained" if all(s == "holds" for _, s, _ in judged) else
                  "contradicted" if any(s == "fails" for _, s, _ in judged) else "unexplained")
        for q in named:
            per_metric[q].add(status)
        shown = {"explained": "explained", "contradicted": "**contradicted**",
                 "unexplained": "unexplained (evidence missing)"}[status]
        names = ", ".join(QUANTITIES[q][0] for q in named)
        out.append(f"- **{bench}**, {names}: {shown} ({entry.where}). {entry.cause}")
        out += [f"    - prediction {p}: {s} ({values})" for p, s, values in judged]
    bare = [q for q in disagree if not per_metric[q]]
    if bare:
        names = ", ".join(QUANTITIES[q][0] for q in bare)
        out.append(f"- **{bench}**, {names}: **unexplained** (no entry of {explanations_name})")
    metric_status = [next((s for s in ("explained", "contradicted") if s in found), "unexplained")
                     for found in per_metric.values()]
    overall = ("explained" if all(s == "explained" for s in metric_status) else
               "contradicted" if "contradicted" in metric_status else "unexplained")
    return overall, out


def same_price_lines(comparison: Comparison, runs: Runs, labels: Mapping[str, str],
                     level: int = 3) -> list[str]:
    """The published code beside tvbo's emulation charged the published code's own R(n): one
    compute price for both, so what still differs is the algorithms' code."""
    side = comparison.same_price
    if side is None or not runs.get(side):
        return []
    a = comparison.published
    benches = sorted(runs[side])
    lines = [f"{'#' * level} At one compute price", "",
             f"`{labels[side]}`: tvbo's emulation charged the published code's calibrated "
             "R(n) (every phase summed, once per post-warm-up proposal) instead of the laptop "
             "profile's prices.", "", runs_table(runs, (a, side), labels, benches), ""]
    for bench in benches:
        ra, rb = runs.get(a, {}).get(bench, []), runs[side][bench]
        if len(ra) < 2 or len(rb) < 2:
            continue
        parts = []
        for q in (*REGRETS, "queries"):
            v = verdict(q, ra, rb)
            parts.append(f"{QUANTITIES[q][0]} {'agree' if v.agree else '**differ**'} "
                         f"(difference {v.difference:+.3f}; Welch p = {v.welch_p:.2g})")
        lines.append(f"- **{bench}** ({len(ra)} vs {len(rb)} runs): " + "; ".join(parts))
    return [*lines, ""]


def provenance_text(runs: Runs, sides: Iterable[str]) -> str:
    """Where the measured runs ran: each distinct machine and versions, with its run count."""
    counts: dict[tuple[str, str], int] = {}
    for side in sides:
        for rs in runs.get(side, {}).values():
            for r in rs:
                key = (r.provenance.get("machine", ""), r.provenance.get("versions", ""))
                counts[key] = counts.get(key, 0) + 1
    return "; ".join(f"{n} runs on {machine or 'an unrecorded machine'}"
                     + (f" ({versions})" if versions else "")
                     for (machine, versions), n in counts.items())
