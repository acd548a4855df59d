"""Where a regeneration of the reproduction report spent its CPU: by campaign and by algorithm.

Reads what a regeneration left behind, measured while it ran, nothing re-run:

- ``results/reproduction_timing.yaml`` (``scripts/time_reproduction.py``): each campaign's build,
  wall seconds and the CPU seconds of every process Snakemake started;
- every run file of those campaigns (``results/<campaign>/runs/**.nc``): its
  ``run_cpu_seconds``, the CPU of the simulation itself (the algorithm, the oracle, the engine;
  tvbo.results.schema.COST_ATTRIBUTES).

Per campaign it prints the build's wall and CPU seconds, its runs, their CPU and the rest of the
build's CPU (the jobs' interpreter start-up and imports, writing the run files, the shared f*(t)
tables, merging, tables and figures); then, over all campaigns, the runs' CPU by algorithm, the
split the question "which algorithm makes the report slow?" needs. The split of a run into fit,
acquisition, cleaning, oracle and engine is ``benchmarks/throughput.py --split``'s (sampled
runs, profiled): it needs runs made again under timers, this script none.

    python benchmarks/regeneration_profile.py            # in the repository's root
    python benchmarks/regeneration_profile.py --results /path/to/results --top 15
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections import defaultdict
from pathlib import Path

import yaml


def run_costs(folder: Path) -> list[tuple[str, str, float]]:
    """``(algorithm, benchmark, run CPU seconds)`` of every run file below ``folder``."""
    import netCDF4

    rows = []
    for path in sorted(folder.rglob("*.nc")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with netCDF4.Dataset(path) as ds:  # attributes only: no variable is read
                cpu = float(getattr(ds, "run_cpu_seconds", float("nan")))
        rows.append((path.parent.name, path.parent.parent.name, cpu))
    return rows


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:7.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--top", type=int, default=12, help="algorithms listed (the costliest)")
    args = parser.parse_args(argv)
    timing_file = args.results / "reproduction_timing.yaml"
    if not timing_file.is_file():
        print(f"regeneration_profile: no {timing_file} (run scripts/time_reproduction.py)",
              file=sys.stderr)
        return 2
    timing = yaml.safe_load(timing_file.read_text(encoding="utf-8")) or {}
    by_algorithm: dict[str, float] = defaultdict(float)
    runs_by_algorithm: dict[str, int] = defaultdict(int)
    total = {"wall": 0.0, "cpu": 0.0, "runs": 0, "run_cpu": 0.0}
    print(f"{'campaign':40s} {'wall min':>8s} {'CPU min':>8s} {'runs':>6s} {'run CPU':>8s} "
          f"{'rest':>7s}  per run (s)")
    for name, build in timing.items():
        wall, cpu = float(build["wall_s"]), float(build["cpu_s"])
        rows = run_costs(args.results / name / "runs") if name != "report" else []
        run_cpu = sum(c for _, _, c in rows if c == c)
        for algorithm, _, c in rows:
            if c == c:
                by_algorithm[algorithm] += c
                runs_by_algorithm[algorithm] += 1
        per_run = f"{run_cpu / len(rows):6.2f}" if rows else ""
        print(f"{name:40s} {_minutes(wall):>8s} {_minutes(cpu):>8s} {len(rows):6d} "
              f"{_minutes(run_cpu):>8s} {_minutes(cpu - run_cpu):>7s}  {per_run}")
        total["wall"] += wall
        total["cpu"] += cpu
        total["runs"] += len(rows)
        total["run_cpu"] += run_cpu
    print(f"{'total':40s} {_minutes(total['wall']):>8s} {_minutes(total['cpu']):>8s} "
          f"{total['runs']:6d} {_minutes(total['run_cpu']):>8s} "
          f"{_minutes(total['cpu'] - total['run_cpu']):>7s}")
    print(f"\nruns' CPU by algorithm (minutes; share of all runs' CPU; mean per run), "
          f"the {args.top} costliest:")
    ranked = sorted(by_algorithm.items(), key=lambda kv: -kv[1])
    for algorithm, cpu in ranked[: args.top]:
        share = cpu / total["run_cpu"] if total["run_cpu"] else float("nan")
        print(f"  {algorithm:28s} {_minutes(cpu)} {share:6.1%} "
              f"{cpu / runs_by_algorithm[algorithm]:7.2f} s x {runs_by_algorithm[algorithm]}")
    rest = sum(cpu for _, cpu in ranked[args.top:])
    if rest:
        print(f"  {'(the others)':28s} {_minutes(rest)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
