"""Regression baseline for the f*(t) oracle: regrets and f* at query times of a fixed run grid.

Why: the oracle (``tvbo.benchmarks.oracle``) decides every regret number; speeding it up (shared
tables, cheaper refinement at query times) must not change results beyond the oracle's stated
tolerance. This script records, for a small fixed grid (the eight synthetic benchmarks x
{gp-ucb, w-dbo, bolt} x seed 0, horizon 90 s, warm-up 5, counted compute on the
``botorch-i9-laptop`` profile), each run's ``average_regret``, ``time_integrated_regret``, the
query times ``t_sample``, ``f_star`` at those times and ``f_star_grid``. The output
(``tests/fixtures/oracle_baseline.json``) was written BEFORE the oracle changes, from commit
18eda7e; ``tests/test_oracle_table.py`` replays the grid and compares.

Floats are stored with ``repr`` precision (JSON round-trips them exactly).

Usage: ``python benchmarks/oracle_baseline.py [--out tests/fixtures/oracle_baseline.json]
[--horizon 90] [--seeds 0]``
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="tests/fixtures/oracle_baseline.json")
    parser.add_argument("--horizon", type=float, default=90.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--benchmarks", nargs="+", default=list(BENCHMARKS))
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS))
    args = parser.parse_args(argv)
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
