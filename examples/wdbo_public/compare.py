"""The side-by-side table: public W-DBO code vs ``w-dbo-paper``, from the run files alone.

Reads ``OUT/public/*.nc`` and ``OUT/paper/*.nc`` written by ``side_by_side.py`` and prints, per
benchmark and side: runs, average (query) regret and time-integrated regret as mean ± s.e.
(s.e. = sample std / sqrt(runs)), queries and dataset size at quarters of the horizon (means
over runs), the mean compute charged per post-warm-up iteration, runs collapsed to the 2-point
floor (dataset size <= 2 at any post-warm-up iteration), and two-sample tests of each regret
(Welch's t, Mann-Whitney U; p-values). "Agree" means the ±1 s.e. intervals of the two sides
overlap (|difference| <= s.e._public + s.e._paper).

    python examples/wdbo_public/compare.py OUT [--markdown FILE]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy import stats

SIDES = {"public": "W-DBO (public code, measured)", "paper": "w-dbo-paper (counted)"}
QUARTERS = (0.25, 0.5, 0.75, 1.0)


def load(folder: Path) -> dict[str, list[dict]]:
    """benchmark -> one summary dict per run file in ``folder``."""
    from tvbo.results.io import read_run

    out: dict[str, list[dict]] = {}
    for path in sorted(folder.glob("*.nc")):
        ds = read_run(path).squeeze(("algorithm", "speed"), drop=True)
        bench = str(ds["benchmark"].values[0])
        ds = ds.squeeze(("benchmark", "seed"))
        horizon = float(ds.attrs["horizon"])
        warm = ds["is_warmup"].values.astype(bool)
        size = ds["dataset_size"].values
        t_sample = ds["t_sample"].values
        grid = ds["time"].values
        held = ds["dataset_size_held"].values
        row = {
            "seed": int(ds["seed"]),
            "avg": float(ds.attrs["average_regret"]),
            "tir": float(ds.attrs["time_integrated_regret"]),
            "queries": int(ds.attrs["n_iterations"]),
            "collapsed": bool(np.any(size[~warm & np.isfinite(size)] <= 2)),
            "compute": float(np.nanmean(ds["compute_total"].values[~warm]))
            if np.any(~warm) else math.nan,
        }
        for q in QUARTERS:
            row[f"queries@{q}"] = int(np.sum(t_sample <= q * horizon))
            k = int(np.searchsorted(grid, q * horizon, side="right")) - 1
            row[f"size@{q}"] = float(held[max(k, 0)])
        out.setdefault(bench, []).append(row)
    return out


def mean_se(values: list[float]) -> tuple[float, float]:
    a = np.asarray(values, float)
    se = float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else math.nan
    return float(a.mean()), se


def _fmt(m: float, se: float) -> str:
    return f"{m:.3f} ± {se:.3f}" if math.isfinite(se) else f"{m:.3f}"


def table(runs: dict[str, dict[str, list[dict]]]) -> str:
    """The markdown table (and per-benchmark agreement lines) of both sides' runs."""
    lines = ["| benchmark | side | runs | avg regret | time-int. regret | queries "
             "(25/50/75/100 % of H) | dataset size (25/50/75/100 %) | compute/iter. (s) "
             "| collapsed |",
             "|---|---|---|---|---|---|---|---|---|"]
    verdicts = []
    benchmarks = sorted(set(runs["public"]) | set(runs["paper"]))
    for bench in benchmarks:
        summary = {}
        for side, label in SIDES.items():
            rows = runs[side].get(bench, [])
            if not rows:
                lines.append(f"| {bench} | {label} | 0 | | | | | | |")
                continue
            avg, tir = mean_se([r["avg"] for r in rows]), mean_se([r["tir"] for r in rows])
            summary[side] = (rows, avg, tir)
            q = "/".join(f"{np.mean([r[f'queries@{x}'] for r in rows]):.0f}" for x in QUARTERS)
            s = "/".join(f"{np.mean([r[f'size@{x}'] for r in rows]):.1f}" for x in QUARTERS)
            collapsed = sum(r["collapsed"] for r in rows)
            lines.append(f"| {bench} | {label} | {len(rows)} | {_fmt(*avg)} | {_fmt(*tir)} | "
                         f"{q} | {s} | {np.mean([r['compute'] for r in rows]):.2f} | "
                         f"{collapsed}/{len(rows)} |")
        if len(summary) == 2:
            verdicts.append(_verdict(bench, summary))
    return "\n".join(lines + [""] + verdicts) + "\n"


def _verdict(bench: str, summary: dict) -> str:
    parts = []
    for k, name in ((1, "avg regret"), (2, "time-int. regret")):
        a = [r["avg" if k == 1 else "tir"] for r in summary["public"][0]]
        b = [r["avg" if k == 1 else "tir"] for r in summary["paper"][0]]
        (ma, sa), (mb, sb) = summary["public"][k], summary["paper"][k]
        if len(a) > 1 and len(b) > 1:
            welch = stats.ttest_ind(a, b, equal_var=False).pvalue
            mw = stats.mannwhitneyu(a, b, alternative="two-sided").pvalue
            agree = "agree" if abs(ma - mb) <= sa + sb else "DISAGREE"
            parts.append(f"{name}: {agree} (diff {ma - mb:+.3f}; Welch p={welch:.3g}, "
                         f"Mann-Whitney p={mw:.3g})")
        else:
            parts.append(f"{name}: diff {ma - mb:+.3f}, too few runs for s.e. and tests "
                         f"({len(a)} public, {len(b)} paper)")
    return f"- **{bench}**: " + "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder side_by_side.py wrote")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args(argv)
    missing = [s for s in SIDES if not (args.out / s).is_dir()]
    if missing:
        print(f"compare: {args.out} has no {', '.join(missing)} folder of run files",
              file=sys.stderr)
        return 2
    text = table({side: load(args.out / side) for side in SIDES})
    print(text, end="")
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
