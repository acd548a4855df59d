"""Simulation throughput with k asynchronous evaluators (issue 13): CPU per virtual second and
per query at each k, so "k = 8 costs no more than k = 1 per virtual second plus the extra
queries" can be read off. (benchmarks/throughput.py is the campaign-throughput benchmark of
issue 14: per-run split of wall time, runs per process, shared oracle tables.)

For one seed of each benchmark of a study config (default ``config/bolt_paper.yaml``) and each
algorithm (default W-DBO and BOLT), runs the full horizon with the study's compute model, hardware
profile, cost table and horizon, and reports the process CPU time, the virtual horizon and their
ratio. BLAS is pinned to one thread, so CPU time is what one core of a campaign spends.

Then it extrapolates the wall time of the whole study on ``--cores`` cores: for each benchmark,
the mean CPU time of the measured runs times (algorithms x seeds x speeds) of the study, divided by
the cores. Algorithms that never remove observations (GP-UCB, TV-GP-UCB, ET-GP-UCB, ABO) grow larger
datasets than W-DBO and BOLT, so give ``--algorithms`` all of them for an honest estimate (the
default measures the two the issue asks for and says so).

Real-data benchmarks read their prepared field from ``--data-dir`` (``data/`` after a workflow
run; the offline mirror covers other days than the papers' first Intel day, which changes the
landscape but not the cost of a run).

k asynchronous evaluators (issue 13): ``--evaluators 1 8`` measures each run at every k (and
``--overlap`` with overlap); the table then shows the CPU per virtual second and per query, so
"k = 8 costs no more than k = 1 per virtual second plus the extra queries" can be read off.
``--horizon`` shortens every run (a quick measurement).

Usage: ``python benchmarks/parallel_throughput.py [--config config/bolt_paper.yaml]
[--algorithms w-dbo bolt] [--benchmarks ...] [--seed 0] [--cores 2] [--jobs 1]
[--evaluators 1 8] [--overlap] [--horizon SECONDS]``
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# the real-data file lookup is the campaign benchmark's (same folder: run as a script)
from throughput import _data_path  # noqa: E402


def one(job: dict) -> dict:
    """Run one simulation and time it (process CPU time of this worker)."""
    import tvbo

    options = dict(job["benchmark_options"])
    start_cpu, start_wall = time.process_time(), time.perf_counter()
    ds = tvbo.simulate(
        job["benchmark"],
        job["algorithm"],
        seed=job["seed"],
        compute=job["compute"],
        profile=job["profile"],
        horizon=job["horizon"],
        cost_table=job["cost_table"],
        warmup=job["warmup"],
        cost=options.pop("cost", None),
        noise_var=options.pop("noise_var", None),
        benchmark_options=options.get("options") or None,
        evaluators=job.get("evaluators", 1),
        overlap=job.get("overlap", False),
    ).squeeze()
    cpu = time.process_time() - start_cpu
    wall = time.perf_counter() - start_wall
    horizon = float(ds.attrs.get("horizon", job["horizon"] or 0.0))
    return {
        **{k: job[k] for k in ("benchmark", "algorithm", "seed")},
        "evaluators": job.get("evaluators", 1),
        "horizon": horizon,
        "cpu": cpu,
        "wall": wall,
        "iterations": int(ds["n_iterations"]),
        "final_size": int(ds["final_dataset_size"]),
        "throughput": horizon / cpu if cpu > 0 else float("inf"),
    }


def main() -> None:
    import yaml

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config/bolt_paper.yaml")
    parser.add_argument("--algorithms", nargs="+", default=["w-dbo", "bolt"])
    parser.add_argument("--benchmarks", nargs="+", default=None, help="default: the study's")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cores", type=int, default=2, help="cores of the extrapolation")
    parser.add_argument("--jobs", type=int, default=1, help="parallel measurements")
    parser.add_argument("--data-dir", default="data")
    parser.add_argument("--evaluators", type=int, nargs="+", default=[1],
                        help="asynchronous evaluators k of each run (default 1)")
    parser.add_argument("--overlap", action="store_true", help="runs with overlap")
    parser.add_argument("--horizon", type=float, default=None, help="override the horizon")
    args = parser.parse_args()

    study = yaml.safe_load(Path(args.config).read_text())
    benchmarks = args.benchmarks or study["benchmarks"]
    jobs = []
    for benchmark in benchmarks:
        options = dict(study.get("benchmark_options", {}).get(benchmark, {}))
        path = _data_path(benchmark, Path(args.data_dir))
        if path is not None:
            options["options"] = {**options.get("options", {}), "path": path}
        for algorithm in args.algorithms:
            for k in args.evaluators:
                jobs.append({
                    "benchmark": benchmark,
                    "algorithm": algorithm,
                    "seed": args.seed,
                    "compute": study.get("compute", "counted"),
                    "profile": study.get("profile"),
                    "horizon": args.horizon if args.horizon else study.get("horizon"),
                    "cost_table": study.get("cost_table", "metronome"),
                    "warmup": study.get("warmup", 15),
                    "benchmark_options": options,
                    "evaluators": k,
                    "overlap": args.overlap,
                })

    print(f"study {args.config}: compute={study.get('compute', 'counted')} "
          f"profile={study.get('profile') or 'reference-2core'}")
    print(f"{'benchmark':>20} {'algorithm':>8} {'k':>3} {'horizon':>8} {'cpu [s]':>8} "
          f"{'iters':>6} {'|D|':>5} {'virtual s / cpu s':>18} {'cpu ms / query':>14}")
    rows = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for row in pool.map(one, jobs):
            rows.append(row)
            per_query = 1000.0 * row["cpu"] / max(row["iterations"], 1)
            print(f"{row['benchmark']:>20} {row['algorithm']:>8} {row['evaluators']:>3d} "
                  f"{row['horizon']:>8.0f} {row['cpu']:>8.2f} {row['iterations']:>6d} "
                  f"{row['final_size']:>5d} {row['throughput']:>18.1f} {per_query:>14.1f}",
                  flush=True)

    total_virtual = sum(r["horizon"] for r in rows)
    total_cpu = sum(r["cpu"] for r in rows)
    worst = min(rows, key=lambda r: r["throughput"])
    print(f"\noverall throughput: {total_virtual / total_cpu:.1f} virtual s per CPU s "
          f"(slowest run: {worst['benchmark']}/{worst['algorithm']} {worst['throughput']:.1f})")
    per_run = {b: sum(r["cpu"] for r in rows if r["benchmark"] == b)
               / sum(r["benchmark"] == b for r in rows) for b in benchmarks}
    n_runs_per_benchmark = (
        len(study["algorithms"]) * len(study["seeds"]) * len(study.get("speeds", [1.0]))
        * len(study.get("evaluators", [1])) * len(study.get("overlap", [False]))
    )
    campaign_cpu = sum(per_run.values()) * n_runs_per_benchmark
    print(f"extrapolated {args.config}: {n_runs_per_benchmark * len(benchmarks)} runs, "
          f"{campaign_cpu / 3600:.2f} CPU hours, {campaign_cpu / 3600 / args.cores:.2f} h wall "
          f"on {args.cores} cores (assuming every algorithm costs like the mean of "
          f"{', '.join(args.algorithms)})")


if __name__ == "__main__":
    main()
