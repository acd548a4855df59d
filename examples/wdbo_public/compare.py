"""The side-by-side numbers, from the run files alone (``side_by_side.py`` wrote them).

Per side, benchmark and run (:func:`load`): average (query) regret and time-integrated regret
(the run's own attributes), queries, the mean compute charged per post-warm-up iteration,
queries and dataset size at quarters of the horizon, the time-averaged dataset size, whether
the run collapsed to the 2-point floor (dataset size <= 2 at a post-warm-up iteration), and
the run's curves on a common time grid (cumulative queries, dataset size in force).

Across runs: mean ± s.e. (s.e. = sample standard deviation / sqrt(runs)); two sides *agree*
on a quantity when their ±1 s.e. intervals overlap (|m_a - m_b| <= se_a + se_b: the rule of
the reproduction report's ties, docs/reproduction.md); the two-sample tests are Welch's
unequal-variance t-test (the primary one: the sides' variances differ) and the Mann-Whitney U
test (no normality assumed), two-sided p-values.

    python examples/wdbo_public/compare.py OUT [--pair w-dbo|gp-ucb] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

from tvbo.results.io import read_run

sys.path.insert(0, str(Path(__file__).resolve().parent))
from side_by_side import PAIRS, SIDES  # noqa: E402  (the sibling script, not a package)

QUARTERS: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)
#: the per-run quantities a comparison (and a prediction) can name: key -> (label, format)
QUANTITIES: dict[str, tuple[str, str]] = {
    "avg": ("average regret", ".3f"),
    "tir": ("time-integrated regret", ".3f"),
    "queries": ("queries", ".1f"),
    "compute": ("compute per iteration (s)", ".3f"),
    "mean_size": ("time-averaged dataset size", ".1f"),
    "collapsed": ("collapsed to the 2-point floor (fraction of runs)", ".2f"),
}
#: the time grid (fraction of the horizon) of the curves
CURVE_POINTS = 121


@dataclass(frozen=True)
class Run:
    """One run file's numbers."""

    benchmark: str
    seed: int
    values: dict[str, float]  #: QUANTITIES' keys (collapsed as 0/1)
    queries_at: tuple[float, ...]  #: queries sampled by each quarter of the horizon
    size_at: tuple[float, ...]  #: dataset size in force at each quarter
    horizon: float
    queries_curve: np.ndarray  #: cumulative queries on CURVE_POINTS times over [0, H]
    size_curve: np.ndarray  #: dataset size in force on the same times


def read_one(path: Path) -> Run:
    """The numbers of one run file."""
    ds = read_run(path).squeeze(("algorithm", "speed"), drop=True)
    bench = str(ds["benchmark"].values[0])
    ds = ds.squeeze(("benchmark", "seed"))
    horizon = float(ds.attrs["horizon"])
    warm = ds["is_warmup"].values.astype(bool)
    size = ds["dataset_size"].values
    t_sample = ds["t_sample"].values
    t_sample = t_sample[np.isfinite(t_sample)]
    grid = ds["time"].values
    held = ds["dataset_size_held"].values
    post = ~warm & np.isfinite(size)
    compute = ds["compute_total"].values[~warm]

    def held_at(times: np.ndarray) -> np.ndarray:
        k = np.searchsorted(grid, times, side="right") - 1
        return held[np.clip(k, 0, len(held) - 1)]

    times = np.linspace(0.0, horizon, CURVE_POINTS)
    values = {
        "avg": float(ds.attrs["average_regret"]),
        "tir": float(ds.attrs["time_integrated_regret"]),
        "queries": float(ds.attrs["n_iterations"]),
        "compute": float(np.nanmean(compute)) if compute.size else math.nan,
        "mean_size": float(np.nanmean(held)),
        "collapsed": float(np.any(size[post] <= 2)),
    }
    quarters = np.asarray(QUARTERS) * horizon
    return Run(bench, int(ds["seed"]), values,
               tuple(float(np.sum(t_sample <= q)) for q in quarters),
               tuple(float(v) for v in held_at(quarters)), horizon,
               np.searchsorted(np.sort(t_sample), times, side="right").astype(float),
               held_at(times).astype(float))


def load(folder: Path) -> dict[str, list[Run]]:
    """benchmark -> the runs of one side's folder (seed order)."""
    out: dict[str, list[Run]] = {}
    for path in sorted(folder.glob("*.nc")):
        run = read_one(path)
        out.setdefault(run.benchmark, []).append(run)
    return {b: sorted(r, key=lambda run: run.seed) for b, r in sorted(out.items())}


def mean_se(values: list[float]) -> tuple[float, float]:
    """Mean and standard error (NaN with one value)."""
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


def verdict(quantity: str, a: list[Run], b: list[Run]) -> Verdict:
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


def table(runs: dict[str, dict[str, list[Run]]], sides: tuple[str, ...],
          benchmarks: list[str] | None = None) -> str:
    """Markdown: one row per benchmark (default: any side's) and side."""
    lines = ["| benchmark | side | runs (seeds) | average regret | time-int. regret | "
             "queries at 25/50/75/100 % of H | dataset size at 25/50/75/100 % | "
             "compute/iter. (s) | collapsed |",
             "|---|---|---|---|---|---|---|---|---|"]
    if benchmarks is None:
        benchmarks = sorted(set().union(*(runs[s] for s in sides)))
    for bench in benchmarks:
        for side in sides:
            rows = runs[side].get(bench, [])
            label = SIDES[side].label
            if not rows:
                lines.append(f"| {bench} | {label} | 0 | | | | | | |")
                continue
            seeds = _seed_text([r.seed for r in rows])
            q = "/".join(f"{np.mean([r.queries_at[i] for r in rows]):.0f}"
                         for i in range(len(QUARTERS)))
            s = "/".join(f"{np.mean([r.size_at[i] for r in rows]):.1f}"
                         for i in range(len(QUARTERS)))
            collapsed = int(sum(r.values["collapsed"] for r in rows))
            lines.append(
                f"| {bench} | {label} | {len(rows)} ({seeds}) | "
                f"{fmt(*mean_se([r.values['avg'] for r in rows]))} | "
                f"{fmt(*mean_se([r.values['tir'] for r in rows]))} | {q} | {s} | "
                f"{np.mean([r.values['compute'] for r in rows]):.2f} | "
                f"{collapsed}/{len(rows)} |")
    return "\n".join(lines) + "\n"


def _seed_text(seeds: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``0-2, 5``."""
    parts, start = [], None
    for i, s in enumerate(seeds):
        if start is None:
            start = s
        if i + 1 == len(seeds) or seeds[i + 1] != s + 1:
            parts.append(f"{start}" if start == s else f"{start}-{s}")
            start = None
    return ", ".join(parts)


def read_sides(out: Path, sides: tuple[str, ...]) -> dict[str, dict[str, list[Run]]]:
    """side -> benchmark -> runs, for the sides whose folder exists under ``out``."""
    return {side: load(out / side) if (out / side).is_dir() else {} for side in sides}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder side_by_side.py wrote")
    parser.add_argument("--pair", choices=sorted(PAIRS), default="w-dbo")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args(argv)
    sides = PAIRS[args.pair]
    if not args.out.is_dir():
        print(f"compare: {args.out}: no such folder", file=sys.stderr)
        return 2
    text = table(read_sides(args.out, sides), sides)
    print(text, end="")
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
