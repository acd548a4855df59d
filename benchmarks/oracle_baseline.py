"""Regression baseline for the f*(t) oracle: regrets and f* at query times of a fixed run grid.

Why: the oracle (``tvbo.benchmarks.oracle``) decides every regret number; speeding it up (shared
tables, cheaper refinement at query times) must not change results beyond the oracle's stated
tolerance. This script records, for a small fixed grid (the eight synthetic benchmarks x
{gp-ucb, w-dbo, bolt} x seed 0, horizon 90 s, warm-up 5, counted compute on the
``botorch-i9-laptop`` profile), each run's ``average_regret``, ``time_integrated_regret``, the
query times ``t_sample``, ``f_star`` at those times and ``f_star_grid``. The output
(``tests/fixtures/oracle_baseline.json``) was written BEFORE the oracle changes, from commit
18eda7e; ``tests/benchmarks/test_oracle_table.py`` replays the grid and compares.

Floats are stored with ``repr`` precision (JSON round-trips them exactly).

Usage: ``python benchmarks/oracle_baseline.py [--out tests/fixtures/oracle_baseline.json]
[--horizon 90] [--seeds 0]`` records; ``python benchmarks/oracle_baseline.py --check
tests/fixtures/oracle_baseline.json [--tables]`` replays every run of a recorded baseline (with
``--tables``: each benchmark's oracle from a shared table, as the workflow does) and reports the
largest relative differences of f* at query times, ``f_star_grid`` and the two regrets (exit 1
beyond ``REFINE_RTOL`` for f* or 1e-9 for regrets).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

BENCHMARKS = (
    "shekel", "hartmann3", "ackley", "griewank", "eggholder", "schwefel", "hartmann6", "powell",
)
ALGORITHMS = ("gp-ucb", "w-dbo", "bolt")
PROFILE = "botorch-i9-laptop"
#: short warm-up so that Shekel and Hartmann-3 (8 s per evaluation) leave it within the horizon
WARMUP = 5


def run_record(benchmark: str, algorithm: str, seed: int, horizon: float, **kwargs) -> dict:
    """One run of the grid, reduced to the numbers the oracle decides."""
    import tvbo

    ds = tvbo.simulate(benchmark, algorithm, seed=seed, horizon=horizon, profile=PROFILE,
                       compute="counted", warmup=WARMUP, **kwargs).squeeze()
    return {
        "benchmark": benchmark,
        "algorithm": algorithm,
        "seed": seed,
        "average_regret": float(ds["average_regret"]),
        "time_integrated_regret": float(ds["time_integrated_regret"]),
        "t_sample": [float(v) for v in ds["t_sample"].values],
        "f_star": [float(v) for v in ds["f_star"].values],
        "f_star_grid": [float(v) for v in ds["f_star_grid"].values],
    }


def _rel(new: list[float], old: list[float]) -> float:
    import numpy as np

    a, b = np.asarray(new, float), np.asarray(old, float)
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b) / (1.0 + np.abs(b)))) if len(b) else 0.0


def check(path: str, tables: bool) -> int:
    """Replay a recorded baseline; 0 when everything matches to tolerance."""
    import tempfile

    import tvbo
    from tvbo.benchmarks.oracle import REFINE_RTOL

    base = json.loads(Path(path).read_text())
    worst = {"f_star": 0.0, "f_star_grid": 0.0, "average_regret": 0.0,
             "time_integrated_regret": 0.0}
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for rec in base["runs"]:
            kwargs = {}
            if tables:
                out = Path(tmp) / f"{rec['benchmark']}.npz"
                if not out.exists():
                    tvbo.write_oracle(rec["benchmark"], out, horizon=base["horizon"])
                kwargs["oracle_table"] = out
            new = run_record(rec["benchmark"], rec["algorithm"], rec["seed"], base["horizon"],
                             **kwargs)
            same_times = new["t_sample"] == rec["t_sample"]
            diff = {k: _rel(new[k], rec[k]) for k in ("f_star", "f_star_grid")}
            for k in ("average_regret", "time_integrated_regret"):
                diff[k] = abs(new[k] - rec[k]) / max(abs(rec[k]), 1e-300)
            good = same_times and max(diff["f_star"], diff["f_star_grid"]) <= REFINE_RTOL and (
                max(diff["average_regret"], diff["time_integrated_regret"]) <= 1e-9)
            ok &= good
            for k, v in diff.items():
                worst[k] = max(worst[k], v)
            print(f"{rec['benchmark']}/{rec['algorithm']} seed {rec['seed']}: "
                  + " ".join(f"{k} {v:.1e}" for k, v in diff.items())
                  + ("" if same_times else " QUERY TIMES DIFFER") + ("" if good else "  FAIL"),
                  flush=True)
    print("largest relative differences: " + ", ".join(f"{k} {v:.2e}" for k, v in worst.items()))
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", metavar="FIXTURE", help="replay a recorded baseline")
    parser.add_argument("--tables", action="store_true", help="with --check: shared tables")
    parser.add_argument("--out", default="tests/fixtures/oracle_baseline.json")
    parser.add_argument("--horizon", type=float, default=90.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--benchmarks", nargs="+", default=list(BENCHMARKS))
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS))
    args = parser.parse_args(argv)
    if args.check:
        return check(args.check, args.tables)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    runs = []
    for benchmark in args.benchmarks:
        for algorithm in args.algorithms:
            for seed in args.seeds:
                start = time.perf_counter()
                runs.append(run_record(benchmark, algorithm, seed, args.horizon))
                print(f"{benchmark}/{algorithm} seed {seed}: "
                      f"{time.perf_counter() - start:.1f} s wall", flush=True)
    out = {
        "description": "oracle regression baseline (benchmarks/oracle_baseline.py)",
        "commit": commit,
        "horizon": args.horizon,
        "profile": PROFILE,
        "compute": "counted",
        "runs": runs,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {args.out} ({len(runs)} runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
