"""Robustness of dataset-cleaning algorithms: do they ever collapse to a tiny dataset?

Runs each (algorithm, benchmark, seed) with the counted compute model over the full horizon and
prints, per run, the smallest dataset size after warm-up, the final size and the regrets; then a
summary line per (algorithm, benchmark). The public W-DBO reference collapsed to 2 points in 2 of
5 runs under the same protocol (its unconstrained temporal-lengthscale fit makes the removal
budget explode).

Run:  .venv/bin/python benchmarks/robustness.py --algorithms w-dbo bolt \
          --benchmarks hartmann3 eggholder --seeds 0-9 [--jobs 2] [--horizon 600] \
          [--profile botorch-i9-laptop]
"""

from __future__ import annotations

import argparse
import os
from concurrent.futures import ProcessPoolExecutor

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


def seeds(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def one(job: tuple[str, str, int, float | None, str | None]) -> dict:
    import numpy as np

    import tvbo

    algorithm, benchmark, seed, horizon, profile = job
    ds = tvbo.simulate(benchmark, algorithm, seed=seed, horizon=horizon, profile=profile).squeeze()
    post = ds["is_warmup"].values == 0
    sizes = ds["dataset_size"].values[post]
    return {
        "algorithm": algorithm,
        "benchmark": benchmark,
        "seed": seed,
        "min_size": int(sizes.min()) if sizes.size else -1,
        "final_size": int(ds["final_dataset_size"]),
        "iterations": int(ds["n_iterations"]),
        "average_regret": float(ds["average_regret"]),
        "time_integrated_regret": float(ds["time_integrated_regret"]),
        "collapsed": bool(sizes.size and np.any(sizes <= 2)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithms", nargs="+", default=["w-dbo", "bolt"])
    parser.add_argument("--benchmarks", nargs="+", default=["hartmann3", "eggholder"])
    parser.add_argument("--seeds", type=seeds, default=list(range(10)))
    parser.add_argument("--horizon", type=float, default=None, help="default: the table's")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--profile", default=None,
                        help="hardware profile of the counted model (default: reference-2core)")
    args = parser.parse_args()
    jobs = [(a, b, s, args.horizon, args.profile) for a in args.algorithms for b in args.benchmarks
            for s in args.seeds]
    rows = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for row in pool.map(one, jobs):
            rows.append(row)
            print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    print("\nsummary")
    for a in args.algorithms:
        for b in args.benchmarks:
            group = [r for r in rows if r["algorithm"] == a and r["benchmark"] == b]
            collapsed = sum(r["collapsed"] for r in group)
            mins = [r["min_size"] for r in group]
            avg = sum(r["average_regret"] for r in group) / len(group)
            tir = sum(r["time_integrated_regret"] for r in group) / len(group)
            print(f"{a:8s} {b:10s} runs={len(group)} collapsed={collapsed} min_sizes={mins} "
                  f"avg_regret={avg:.4g} time_integrated={tir:.4g}")


if __name__ == "__main__":
    main()
