"""The side-by-side numbers, from the run files alone (``side_by_side.py`` wrote them).

The per-run numbers (average and time-integrated regret, queries, compute per post-warm-up
iteration, queries and dataset size at quarters of the horizon, the time-averaged dataset size,
collapse to the 2-point floor), their mean ± s.e., the agreement rule and the two-sample tests
are ``tvbo.analysis.reproduction.published_code``'s, the one implementation the reproduction
report's section also uses; this script reads them from the run files, with each run's curves on
a common time grid (cumulative queries, dataset size in force) for the page's figure.

    python examples/wdbo_public/compare.py OUT [--pair w-dbo|gp-ucb] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tvbo.analysis.reproduction.published_code import (
    Runs,
    RunValues,
    grouped,
    held_at,
    run_values,
    runs_table,
    versions_text,
)
from tvbo.results.io import read_run

sys.path.insert(0, str(Path(__file__).resolve().parent))
from side_by_side import PAIRS, SIDES  # noqa: E402  (the sibling script, not a package)

#: the time grid (fraction of the horizon) of the figures' curves
CURVE_POINTS = 121
#: each side's label in the tables
LABELS: dict[str, str] = {name: side.label for name, side in SIDES.items()}


@dataclass(frozen=True)
class Curves:
    """One run's curves on CURVE_POINTS times over [0, horizon] (the page's figure)."""

    horizon: float
    queries: np.ndarray  #: cumulative queries
    size: np.ndarray  #: dataset size in force


def read_one(path: Path, side: str, machine: str = "") -> tuple[RunValues, Curves]:
    """The numbers (tvbo.analysis.reproduction.published_code.run_values) and curves of one run
    file; ``machine``: where it ran (the runs table's provenance)."""
    ds = read_run(path).squeeze(("algorithm", "speed"), drop=False)
    ds = ds.squeeze(("benchmark", "seed"))
    horizon = float(ds.attrs["horizon"])
    provenance = {"algorithm": str(ds["algorithm"].values),
                  "compute_model": str(ds.attrs.get("compute_model", "")),
                  "machine": machine,
                  "versions": versions_text(ds.attrs.get("versions_json", ""))}
    values = run_values(ds, side, horizon, provenance)
    t_sample = ds["t_sample"].values
    times = np.linspace(0.0, horizon, CURVE_POINTS)
    curves = Curves(horizon,
                    np.searchsorted(np.sort(t_sample[np.isfinite(t_sample)]), times,
                                    side="right").astype(float),
                    held_at(ds, times).astype(float))
    return values, curves


def read_sides(out: Path, sides: tuple[str, ...], machine: str = ""
               ) -> tuple[Runs, dict[tuple[str, str, int], Curves]]:
    """side -> benchmark -> runs, for the sides whose folder exists under ``out``, and each
    run's curves by (side, benchmark, seed)."""
    runs, curves = [], {}
    for side in sides:
        for path in sorted((out / side).glob("*.nc")) if (out / side).is_dir() else []:
            values, curve = read_one(path, side, machine)
            runs.append(values)
            curves[(side, values.benchmark, values.seed)] = curve
    found = grouped(runs)
    return {side: found.get(side, {}) for side in sides}, curves


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
    text = runs_table(read_sides(args.out, sides)[0], sides, LABELS) + "\n"
    print(text, end="")
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
