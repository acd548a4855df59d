"""Re-fit the campaign-time model (tvbo/campaign_time.yaml) from run files and measured campaigns.

    python scripts/fit_campaign_time.py --runs results/quickstart/runs
    python scripts/fit_campaign_time.py --campaign results/quickstart=300 \
        --campaign results/bolt_paper_offline-day=5400

``--runs``: every run file below the folders (``tvbo run`` / the workflow's files) that records
its cost (``run_cpu_seconds``, tvbo.results.schema.COST_ATTRIBUTES; older files do not and are
skipped, counted in the output) gives one sample of its cell (compute class, algorithm,
benchmark and regime: the run's evaluation cost and horizon): CPU seconds, iterations and mean
virtual compute per post-warm-up iteration. A cell's entry is the mean over its samples and
REPLACES the model's entry for that cell; cells without samples keep their entries, so runs at
another cost (another paper's table) add a regime beside BOLT [B]'s instead of overwriting it.

``--tables``: the shared f*(t) tables (``tvbo oracle``) record their build's CPU seconds in their
header (``build_cpu_seconds``); each benchmark's entry becomes the mean of its tables.

``--campaign DIR=CPU`` (repeatable): a whole campaign built from a clean results folder
(``DIR`` = ``results/<campaign>``) and the CPU seconds (user + system of every process, e.g.
from ``scripts/time_reproduction.py`` or ``/usr/bin/time snakemake ...``) it took. Its runs and
tables are sampled as with ``--runs`` and ``--tables``. What its runs, tables and analysis do not
explain is the overhead of its jobs (interpreter, imports, Snakemake's job) and of its runs
outside the recorder's span (metrics, writing the file): with its ``J`` jobs (one Snakemake
benchmark file each, ``DIR/benchmarks/simulate``) and ``N`` runs, the remainder is
``J * (job_seconds + job_seconds_per_job * J) + N * run_seconds``: a job's start-up grows with
the campaign's jobs (Snakemake's bookkeeping per job scales with its DAG; on the project's VM a
job of a 90-job campaign cost ~0.8 s, of a 1,320-job one ~2.8 s). Three or more campaigns fit
the three overheads (non-negative least squares), two fit ``job_seconds`` and ``run_seconds``
(keeping ``job_seconds_per_job``), one fits ``job_seconds`` alone.

Why a script: the model is measured on one machine with one version of the code; after a change
that makes runs faster or slower, re-run a sample and re-fit, and commit the file.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import statistics
import sys
import warnings
from pathlib import Path

import yaml

from tvbo.campaign_time import FORMAT, FORMAT_VERSION, MODEL_FILE, compute_class, parse_model

#: what names a cell: compute class, algorithm, benchmark, cost (s), horizon (s)
CellKey = tuple[str, str, str, float, float]


def run_sample(path: Path) -> tuple[CellKey, dict[str, float]] | None:
    """``((class, algorithm, benchmark, cost, horizon), sample)`` of one run file, or None
    without its cost."""
    import xarray as xr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with xr.open_dataset(path) as ds:
            attrs = dict(ds.attrs)
            if "run_cpu_seconds" not in attrs:
                return None
            ds = ds.squeeze()
            warm = ds["is_warmup"].values.astype(bool)
            compute = ds["compute_total"].values[~warm] if "compute_total" in ds else []
            speed = float(ds["speed"].values)
            queried = ds["t_query"].values[~warm] if "t_query" in ds else []
            benchmark, algorithm = str(ds["benchmark"].values), str(ds["algorithm"].values)
    described = json.loads(attrs.get("compute_model_json") or "{}")
    profile = described.get("profile")
    config = {"compute": attrs.get("compute_model"),
              "profile": profile.get("name") if isinstance(profile, dict) else profile}
    mean_compute = float(statistics.fmean(compute)) * speed if len(compute) else 0.0
    mean_compute = mean_compute if math.isfinite(mean_compute) else 0.0
    # the virtual time after the warm-up and the iterations in it (fit_cells: the wait)
    span = float(attrs["horizon"]) - float(queried[0]) if len(queried) else 0.0
    key = (compute_class(config), algorithm, benchmark, float(attrs["cost"]),
           float(attrs["horizon"]))
    return key, {
        "seconds": float(attrs["run_cpu_seconds"]),
        "iterations": float(attrs["n_iterations"]),
        "compute": mean_compute,
        "span": span if math.isfinite(span) else 0.0,
        "post": float(len(queried)),
        "step": float(attrs["cost"]) + mean_compute / speed,
    }


def fit_cells(folders: list[Path]) -> tuple[dict, int, int]:
    samples: dict[CellKey, list[dict[str, float]]] = {}
    used = skipped = 0
    for folder in folders:
        for path in sorted(folder.rglob("*.nc")):
            found = run_sample(path)
            if found is None:
                skipped += 1
                continue
            samples.setdefault(found[0], []).append(found[1])
            used += 1
    cells: dict = {}
    for (key, algorithm, benchmark, cost, horizon), rows in sorted(samples.items()):
        cell = {name: round(statistics.fmean(r[name] for r in rows), 6)
                for name in ("seconds", "iterations", "compute")}
        cell |= {"cost": cost, "horizon": horizon}
        # the wait: the mean period of a post-warm-up iteration (total time over total
        # iterations, so the cell's mean iteration count comes back) beyond cost and compute
        post = sum(r["post"] for r in rows)
        if post:
            period = sum(r["span"] for r in rows) / post
            cell["wait"] = round(period - statistics.fmean(r["step"] for r in rows), 6)
        cells.setdefault(key, {}).setdefault(algorithm, {}).setdefault(benchmark, []).append(
            cell | {"runs": len(rows)})
    return cells, used, skipped


def merge_regimes(old: list[dict], new: list[dict]) -> list[dict]:
    """``old`` cells with those of ``new``'s regimes replaced by ``new``'s, ordered by cost and
    horizon."""
    fresh = {(c["cost"], c["horizon"]) for c in new}
    kept = [c for c in old if (float(c["cost"]), float(c["horizon"])) not in fresh]
    return sorted(kept + new, key=lambda c: (float(c["cost"]), float(c["horizon"])))


def fit_tables(folders: list[Path]) -> dict[str, float]:
    from tvbo.benchmarks.oracle_table import read_oracle_table

    seconds: dict[str, list[float]] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*.npz")):
            header = read_oracle_table(path).header
            if "build_cpu_seconds" in header:
                seconds.setdefault(header["benchmark"], []).append(header["build_cpu_seconds"])
    return {b: round(statistics.fmean(v), 3) for b, v in sorted(seconds.items())}


def campaign_remainder(data: dict, folder: Path, campaign_cpu: float) -> tuple[int, int, float]:
    """``(jobs, runs, remainder)`` of a campaign: its CPU seconds minus what its runs, tables
    and analysis explain (module docstring)."""
    from tvbo.benchmarks.oracle_table import read_oracle_table

    model = parse_model(data, "model being fitted")
    samples = [run_sample(p) for p in sorted((folder / "runs").rglob("*.nc"))]
    run_cpu = sum(found[1]["seconds"] for found in samples if found is not None)
    runs = len(samples)
    jobs = len(list((folder / "benchmarks" / "simulate").rglob("*.tsv")))
    tables = sum(read_oracle_table(p).header.get("build_cpu_seconds", 0.0)
                 for p in sorted((folder / "oracles").glob("*.npz")))
    analysis = model.analysis_seconds + model.analysis_seconds_per_run * runs
    rest = campaign_cpu - run_cpu - tables - analysis
    print(f"campaign {folder.name}: {campaign_cpu:.0f} s CPU = runs {run_cpu:.0f} s + tables "
          f"{tables:.0f} s + analysis {analysis:.0f} s + {rest:.0f} s for {jobs} jobs and "
          f"{runs} runs")
    if not runs or not jobs:
        raise SystemExit(f"fit_campaign_time: {folder}: no runs or no job benchmark files "
                         "(was it built by the workflow?)")
    if rest < 0:
        raise SystemExit(f"fit_campaign_time: {folder}: the runs, tables and analysis already "
                         "exceed the campaign's CPU (was it built from a clean results folder?)")
    return jobs, runs, rest


def fit_overheads(data: dict, campaigns: list[tuple[Path, float]]) -> dict[str, float]:
    """``job_seconds``, ``job_seconds_per_job`` and ``run_seconds`` fitted on the campaigns'
    remainders (module docstring)."""
    import numpy as np
    from scipy.optimize import nnls

    rows = [campaign_remainder(data, folder, cpu) for folder, cpu in campaigns]
    old = data["overheads"]
    fitted = {"job_seconds": float(old["job_seconds"]),
              "job_seconds_per_job": float(old.get("job_seconds_per_job", 0.0)),
              "run_seconds": float(old["run_seconds"])}
    names = ["job_seconds", "job_seconds_per_job", "run_seconds"]
    free = names if len(rows) >= 3 else ["job_seconds", "run_seconds"][:len(rows)]
    columns = {"job_seconds": lambda j, n: j, "job_seconds_per_job": lambda j, n: j * j,
               "run_seconds": lambda j, n: n}
    a = np.array([[columns[k](jobs, runs) for k in free] for jobs, runs, _ in rows], float)
    b = np.array([rest - sum(columns[k](jobs, runs) * fitted[k] for k in names if k not in free)
                  for jobs, runs, rest in rows], float)
    solution, _ = nnls(a, b)
    fitted |= {k: float(v) for k, v in zip(free, solution, strict=True)}
    for (jobs, runs, rest), (folder, _) in zip(rows, campaigns, strict=True):
        print(f"  {folder.name}: remainder {rest:.0f} s, fitted "
              f"{sum(columns[k](jobs, runs) * fitted[k] for k in names):.0f} s")
    return fitted


def _campaign_argument(text: str) -> tuple[Path, float]:
    folder, sep, cpu = text.rpartition("=")
    try:
        seconds = float(cpu)
    except ValueError:
        seconds = -1.0
    if not sep or not seconds > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected DIR=CPU_SECONDS")
    return Path(folder), seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", type=Path, default=[], help="folders of run files")
    parser.add_argument("--tables", nargs="+", type=Path, default=[],
                        help="folders of shared f*(t) tables (tvbo oracle)")
    parser.add_argument("--campaign", type=_campaign_argument, action="append", default=[],
                        metavar="DIR=CPU", help="a whole campaign's results folder and its CPU "
                        "seconds (repeatable): fits the jobs' and runs' overheads")
    parser.add_argument("--model", type=Path, default=MODEL_FILE, help="model file to update")
    parser.add_argument("--out", type=Path, help="where to write (default: --model)")
    args = parser.parse_args(argv)
    args.runs += [folder / "runs" for folder, _ in args.campaign]
    args.tables += [folder / "oracles" for folder, _ in args.campaign
                    if (folder / "oracles").is_dir()]
    for folder in [*args.runs, *args.tables]:
        if not folder.is_dir():
            print(f"fit_campaign_time: {folder}: no such folder", file=sys.stderr)
            return 2
    data = yaml.safe_load(args.model.read_text())
    parse_model(data, str(args.model))  # the file being updated must be valid
    cells, used, skipped = fit_cells(args.runs)
    for key, algorithms in cells.items():
        for algorithm, benchmarks in algorithms.items():
            row = data["cells"].setdefault(key, {}).setdefault(algorithm, {})
            for benchmark, regimes in benchmarks.items():
                row[benchmark] = merge_regimes(row.get(benchmark) or [], regimes)
    updated = sum(len(r) for a in cells.values() for b in a.values() for r in b.values())
    print(f"runs: {used} sampled, {skipped} without run_cpu_seconds (older files) skipped; "
          f"{updated} cells updated")
    tables = fit_tables(args.tables)
    data["oracle_tables"].setdefault("seconds", {}).update(tables)
    if tables:
        print("tables: " + ", ".join(f"{b} {s:.1f} s" for b, s in tables.items()))
    if args.campaign:
        fitted = fit_overheads(data, args.campaign)
        data["overheads"] |= {k: round(v, 6) for k, v in fitted.items()}
        print(f"overheads: {fitted['job_seconds']:.3f} s per job + "
              f"{fitted['job_seconds_per_job']:.6f} s per job and job of the campaign, "
              f"{fitted['run_seconds']:.3f} s per run")
    data["format"], data["format_version"] = FORMAT, FORMAT_VERSION
    data.setdefault("measured", {})["refitted"] = datetime.date.today().isoformat()
    parse_model(data, "refitted model")  # never write a file the workflow cannot read
    out = args.out or args.model
    text = yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100)
    out.write_text(HEADER + text)
    print(f"wrote {out}")
    return 0


HEADER = """\
# The campaign-time model of the workflow's start message (tvbo/campaign_time.py): CPU seconds
# per run of each (compute class, algorithm, benchmark, regime: cost and horizon) sampled on one
# machine, the jobs' and the analysis' overheads and the f*(t) tables' builds. Written by
# scripts/fit_campaign_time.py;
# re-fit it after a change that makes runs faster or slower (see the script's docstring).
"""


if __name__ == "__main__":
    raise SystemExit(main())
