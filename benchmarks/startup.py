"""Start-up time of the command line against the imports a run cannot avoid (issue 14).

Runs each command ``--runs`` times, interleaved round-robin so that a busy machine slows every
command alike, and prints the median wall time of each and its ratio to the reference
``python -c "import numpy, scipy.optimize, xarray, simpy"`` (what any simulation needs). The
issue's target: ``tvbo list`` and ``tvbo run --help`` at most 1.2x the reference.

Usage: ``python benchmarks/startup.py [--runs 15] [--repo PATH]`` (``--repo`` times another
checkout, e.g. the main branch, by putting it first on PYTHONPATH).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REFERENCE = "import numpy, scipy.optimize, xarray, simpy"
COMMANDS: dict[str, list[str]] = {
    "reference imports": ["-c", REFERENCE],
    "tvbo list": ["-m", "tvbo", "list"],
    "tvbo run --help": ["-m", "tvbo", "run", "--help"],
    "tvbo --help": ["-m", "tvbo", "--help"],
    "import tvbo.cli": ["-c", "import tvbo.cli"],
    # what `tvbo run --benchmark hartmann3 --algorithm bolt` imports and builds before simulating
    "run start-up": ["-c", "import tvbo.api, tvbo.results.io, tvbo.benchmarks as b, "
                     "tvbo.algorithms as a; b.make('hartmann3'); a.make('bolt')"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]))
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": args.repo}
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.runs):
        for name, argv in COMMANDS.items():
            start = time.perf_counter()
            subprocess.run([sys.executable, *argv], env=env, check=True, cwd=args.repo,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - start)
    ref = statistics.median(times["reference imports"])
    print(f"{args.repo}: median of {args.runs} interleaved runs")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"  {name:<18} {1000 * med:7.0f} ms   {med / ref:5.2f}x reference")


if __name__ == "__main__":
    main()
