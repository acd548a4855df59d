"""Peak memory of merging a full BOLT-comparison campaign (700 runs) and computing its tables.

Builds ``--runs`` run files from real template runs (any run files of a finished campaign, e.g.
``results/eggholder_powell/runs/**/*.nc``): each copy keeps the template's arrays (its ragged
iteration count, its time grid) and gets a new (benchmark, algorithm, seed) key from the
``bolt_paper.yaml`` grid (10 benchmarks x 7 algorithms x 10 seeds). Then it runs ``tvbo merge``
and ``tvbo table`` as separate processes under ``/usr/bin/time`` and reports their peak resident
memory (the judged limit is 2 GB) and wall time.

Usage: ``python benchmarks/merge_memory.py TEMPLATE.nc [TEMPLATE.nc ...] [--runs 700]
[--workdir DIR]``
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import xarray as xr

from tvbo.results.io import write_run

BENCHMARKS = ["shekel", "hartmann3", "ackley", "griewank", "eggholder", "schwefel", "hartmann6",
              "powell", "temperature", "wlan"]
ALGORITHMS = ["gp-ucb", "et-gp-ucb", "r-gp-ucb", "tv-gp-ucb", "abo", "w-dbo", "bolt"]
SEEDS = list(range(10))


def rekeyed(template: xr.Dataset, benchmark: str, algorithm: str, seed: int) -> xr.Dataset:
    """The template run under another (benchmark, algorithm, seed) key."""
    return template.assign_coords(
        benchmark=("benchmark", np.array([benchmark], dtype=object)),
        algorithm=("algorithm", np.array([algorithm], dtype=object)),
        seed=("seed", np.array([seed], dtype=template["seed"].dtype)),
    )


def peak(command: list[str]) -> tuple[float, float]:
    """(peak RSS in MB, wall seconds) of one command, measured by GNU time."""
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *command], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
    return int(done.stderr.strip().splitlines()[-1]) / 1024.0, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("templates", nargs="+", help="real run files to replicate")
    parser.add_argument("--runs", type=int, default=700)
    parser.add_argument("--workdir", default=None, help="default: a temporary directory")
    args = parser.parse_args()
    if not Path("/usr/bin/time").exists():
        sys.exit("needs GNU time at /usr/bin/time (Debian package 'time')")

    templates = [xr.load_dataset(p) for p in args.templates]
    work = Path(args.workdir or tempfile.mkdtemp(prefix="tvbo-merge-"))
    runs_dir = work / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    grid = itertools.product(BENCHMARKS, ALGORITHMS, SEEDS)
    paths = []
    for i, (benchmark, algorithm, seed) in enumerate(itertools.islice(grid, args.runs)):
        path = runs_dir / f"{benchmark}_{algorithm}_seed{seed}.nc"
        write_run(rekeyed(templates[i % len(templates)], benchmark, algorithm, seed), path)
        paths.append(str(path))
    size = sum(Path(p).stat().st_size for p in paths) / 2**20
    iterations = [t.sizes["iteration"] for t in templates]
    print(f"{len(paths)} run files, {size:.0f} MB on disk, iterations per run "
          f"{min(iterations)}-{max(iterations)} (from {len(templates)} templates)")

    tvbo = str(Path(sys.executable).with_name("tvbo"))
    campaign = work / "campaign.nc"
    rss, wall = peak([tvbo, "merge", *paths, "--out", str(campaign)])
    print(f"tvbo merge: peak RSS {rss:.0f} MB, {wall:.1f} s wall, "
          f"campaign {campaign.stat().st_size / 2**20:.0f} MB")
    rss, wall = peak([tvbo, "table", str(campaign), "--outdir", str(work / "tables")])
    print(f"tvbo table: peak RSS {rss:.0f} MB, {wall:.1f} s wall")
    if args.workdir is None:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
