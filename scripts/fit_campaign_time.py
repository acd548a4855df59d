"""Re-fit the campaign-time model (tvbo/campaign_time.yaml) from run files and a measured campaign.

    python scripts/fit_campaign_time.py --runs results/quickstart/runs
    python scripts/fit_campaign_time.py --runs results/bolt_paper_B/runs \
        --tables results/bolt_paper_B/oracles \
        --campaign-cpu 2194 --config config/bolt_paper.yaml

``--runs``: every run file below the folders (``tvbo run`` / the workflow's files) that records
its cost (``run_cpu_seconds``, tvbo.results.schema.COST_ATTRIBUTES; older files do not and are
skipped, counted in the output) gives one sample of its cell (compute class, algorithm,
benchmark): CPU seconds, iterations and mean virtual compute per post-warm-up iteration. A
cell's entry is the mean over its samples and REPLACES the model's entry for that cell; cells
without samples keep their entries.

``--tables``: the shared f*(t) tables (``tvbo oracle``) record their build's CPU seconds in their
header (``build_cpu_seconds``); each benchmark's entry becomes the mean of its tables.

``--campaign-cpu`` with ``--config``: the CPU seconds (user + system, e.g. from
``/usr/bin/time snakemake ...``) of a whole campaign of that config, from a clean results
folder, whose run files are the ``--runs`` given. What the runs, the tables and the analysis do
not explain is the jobs' own overhead (interpreter, imports, Snakemake's job, writing):
``overheads.job_seconds`` becomes that remainder divided by the number of jobs.

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


def run_sample(path: Path) -> tuple[tuple[str, str, str], dict[str, float]] | None:
    """``((class, algorithm, benchmark), sample)`` of one run file, or None without its cost."""
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
            benchmark, algorithm = str(ds["benchmark"].values), str(ds["algorithm"].values)
    described = json.loads(attrs.get("compute_model_json") or "{}")
    profile = described.get("profile")
    config = {"compute": attrs.get("compute_model"),
              "profile": profile.get("name") if isinstance(profile, dict) else profile}
    mean_compute = float(statistics.fmean(compute)) * speed if len(compute) else 0.0
    return (compute_class(config), algorithm, benchmark), {
        "seconds": float(attrs["run_cpu_seconds"]),
        "iterations": float(attrs["n_iterations"]),
        "compute": mean_compute if math.isfinite(mean_compute) else 0.0,
    }


def fit_cells(folders: list[Path]) -> tuple[dict, int, int]:
    samples: dict[tuple[str, str, str], list[dict[str, float]]] = {}
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
    for (key, algorithm, benchmark), rows in sorted(samples.items()):
        cells.setdefault(key, {}).setdefault(algorithm, {})[benchmark] = {
            name: round(statistics.fmean(r[name] for r in rows), 6)
            for name in ("seconds", "iterations", "compute")
        } | {"runs": len(rows)}
    return cells, used, skipped


def fit_tables(folders: list[Path]) -> dict[str, float]:
    from tvbo.benchmarks.oracle_table import read_oracle_table

    seconds: dict[str, list[float]] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*.npz")):
            header = read_oracle_table(path).header
            if "build_cpu_seconds" in header:
                seconds.setdefault(header["benchmark"], []).append(header["build_cpu_seconds"])
    return {b: round(statistics.fmean(v), 3) for b, v in sorted(seconds.items())}


def job_overhead(data: dict, config_path: Path, campaign_cpu: float, folders: list[Path]) -> float:
    """The jobs' own CPU seconds: the campaign's CPU minus what its runs, tables and analysis
    explain, per job (module docstring)."""
    model = parse_model(data, "model being fitted")
    config = yaml.safe_load(config_path.read_text())
    per_job = max(int(config.get("runs_per_job") or 1), 1)
    cells: dict[tuple[str, str, float], int] = {}
    run_cpu = 0.0
    for folder in folders:
        for path in folder.rglob("*.nc"):
            found = run_sample(path)
            if found is not None:
                run_cpu += found[1]["seconds"]
            b, a = path.parent.parent.name, path.parent.name
            speed = float(path.stem.split("_speed", 1)[1])
            cells[(b, a, speed)] = cells.get((b, a, speed), 0) + 1
    runs = sum(cells.values())
    jobs = sum(math.ceil(n / per_job) for n in cells.values())
    from tvbo.benchmarks.oracle_table import NO_TABLE_NEEDED

    tables = sum(model.table_seconds.get(b, model.default_table_seconds)
                 for b in config["benchmarks"] if b not in NO_TABLE_NEEDED
                 and config.get("oracle_tables", True) is not False)
    analysis = model.analysis_seconds + model.analysis_seconds_per_run * runs
    rest = campaign_cpu - run_cpu - runs * model.run_seconds - tables - analysis
    print(f"campaign {config_path}: {campaign_cpu:.0f} s CPU = runs {run_cpu:.0f} s + per-run "
          f"{runs * model.run_seconds:.0f} s + tables {tables:.0f} s + analysis {analysis:.0f} s "
          f"+ {jobs} jobs x {rest / max(jobs, 1):.2f} s")
    if rest < 0:
        raise SystemExit("the runs, tables and analysis already exceed the campaign's CPU: were "
                         "--runs the runs of that campaign (from a clean results folder)?")
    return rest / max(jobs, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", type=Path, default=[], help="folders of run files")
    parser.add_argument("--tables", nargs="+", type=Path, default=[],
                        help="folders of shared f*(t) tables (tvbo oracle)")
    parser.add_argument("--campaign-cpu", type=float, help="CPU seconds of the whole campaign")
    parser.add_argument("--config", type=Path, help="its config (with --campaign-cpu)")
    parser.add_argument("--model", type=Path, default=MODEL_FILE, help="model file to update")
    parser.add_argument("--out", type=Path, help="where to write (default: --model)")
    args = parser.parse_args(argv)
    if (args.campaign_cpu is None) != (args.config is None):
        parser.error("--campaign-cpu and --config go together")
    for folder in [*args.runs, *args.tables]:
        if not folder.is_dir():
            print(f"fit_campaign_time: {folder}: no such folder", file=sys.stderr)
            return 2
    data = yaml.safe_load(args.model.read_text())
    parse_model(data, str(args.model))  # the file being updated must be valid
    cells, used, skipped = fit_cells(args.runs)
    for key, algorithms in cells.items():
        for algorithm, benchmarks in algorithms.items():
            data["cells"].setdefault(key, {}).setdefault(algorithm, {}).update(benchmarks)
    print(f"runs: {used} sampled, {skipped} without run_cpu_seconds (older files) skipped; "
          f"{sum(len(b) for a in cells.values() for b in a.values())} cells updated")
    tables = fit_tables(args.tables)
    data["oracle_tables"].setdefault("seconds", {}).update(tables)
    if tables:
        print("tables: " + ", ".join(f"{b} {s:.1f} s" for b, s in tables.items()))
    if args.campaign_cpu is not None:
        data["overheads"]["job_seconds"] = round(
            job_overhead(data, args.config, args.campaign_cpu, args.runs), 3)
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
# per run of each (compute class, algorithm, benchmark) sampled on one machine, the jobs' and the
# analysis' overheads and the f*(t) tables' builds. Written by scripts/fit_campaign_time.py;
# re-fit it after a change that makes runs faster or slower (see the script's docstring).
"""


if __name__ == "__main__":
    raise SystemExit(main())
