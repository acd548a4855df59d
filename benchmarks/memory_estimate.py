"""Estimated vs measured peak memory of `tvbo run` (issue 24 item 3: within a factor of 2).

Each case runs `tvbo run` in a fresh process and reads its peak resident set size
(``ru_maxrss`` of the child, Linux: KiB); the estimate is :func:`tvbo.resources.estimate_run`
for the same options. The cases grow the time grid (``--time-grid-step``), the oracle grid
(``oracle_grid_step``) and the horizon, so the estimate is checked where each term dominates.

    python benchmarks/memory_estimate.py [--out DIR]     # prints one line per case
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

#: (label, run options): eggholder (d = 2), gp-ucb, 3 queries after warm-up
CASES: list[tuple[str, dict]] = [
    ("time grid 6e3", {"horizon": 60.0, "time_grid_step": 1e-2}),
    ("time grid 3e4", {"horizon": 60.0, "time_grid_step": 2e-3}),
    ("time grid 1.2e5", {"horizon": 60.0, "time_grid_step": 5e-4}),
]


def _flags(options: dict) -> list[str]:
    from tvbo.runspec import cli_args

    return cli_args(options)


def measure(options: dict, folder: Path) -> int:
    """Peak RSS (bytes) of one `tvbo run` with ``options`` in a fresh process."""
    out = folder / "run.nc"
    code = ("import resource, sys; from tvbo.cli import main; rc = main(sys.argv[1:]); "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024); sys.exit(rc)")
    args = [sys.executable, "-c", code, "run", "--benchmark", "eggholder", "--algorithm",
            "gp-ucb", "--max-iterations", "18", "--quiet", "--confirm-large",
            *_flags(options), "--out", str(out)]
    done = subprocess.run(args, check=True, capture_output=True, text=True)
    out.unlink(missing_ok=True)
    return int(done.stdout.split()[-1])


def main() -> None:
    from tvbo.resources import estimate_run

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON line per case")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for label, options in CASES:
            estimate = estimate_run({**options, "benchmark": "eggholder",
                                     "max_iterations": 18}).bytes
            peak = measure(options, Path(tmp))
            ratio = estimate / peak
            if args.json:
                print(json.dumps({"case": label, "estimate": estimate, "peak": peak,
                                  "ratio": ratio}))
            else:
                print(f"{label:>16}: estimate {estimate / 2**20:8.1f} MiB, measured peak "
                      f"{peak / 2**20:8.1f} MiB, ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
