"""Side-by-side runs: the public W-DBO code (plugin ``w-dbo-public``) vs tvbo's ``w-dbo-paper``.

Both under the BOLT [B] settings of ``config/bolt_paper.yaml`` (cost table ``metronome``: the
papers' noise, evaluation cost and 600 s horizon; warm-up 15; speed 1). The public code reports
no work to tvbo, so it runs with ``compute="measured"`` (the CPU time of the calling thread on
this machine, torch pinned to one thread by the plugin); ``w-dbo-paper`` runs as in the
campaign, ``counted`` with the ``botorch-i9-laptop`` profile. One run file per (side,
benchmark, seed) is written under OUT; existing files are skipped, so the script resumes.

    python examples/wdbo_public/side_by_side.py OUT --side public --seeds 0 1 2
    python examples/wdbo_public/side_by_side.py OUT --side paper --seeds 0-9

The table: ``python examples/wdbo_public/compare.py OUT``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

#: the five benchmarks of issue 23's side-by-side comparison
BENCHMARKS: tuple[str, ...] = ("hartmann3", "eggholder", "ackley", "shekel", "powell")
#: the run options config/bolt_paper.yaml gives every run
BOLT_B = {"cost_table": "metronome", "warmup": 15, "speed": 1.0, "horizon": None}
SIDES = {
    "public": {"compute": "measured"},
    "paper": {"compute": "counted", "profile": "botorch-i9-laptop"},
}


def parse_seeds(items: list[str]) -> list[int]:
    """``0 1 5-9`` -> [0, 1, 5, 6, 7, 8, 9]."""
    seeds: list[int] = []
    for item in items:
        lo, _, hi = item.partition("-")
        seeds.extend(range(int(lo), int(hi or lo) + 1))
    return seeds


def run_file(out: Path, side: str, benchmark: str, seed: int) -> Path:
    return out / side / f"{benchmark}_s{seed}.nc"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder for the run files")
    parser.add_argument("--side", choices=sorted(SIDES), required=True)
    parser.add_argument("--seeds", nargs="+", default=["0-9"], help="seeds, e.g. 0 1 5-9")
    parser.add_argument("--benchmarks", nargs="+", default=list(BENCHMARKS),
                        choices=BENCHMARKS)
    args = parser.parse_args(argv)
    try:
        seeds = parse_seeds(args.seeds)
    except ValueError:
        print(f"side_by_side: bad --seeds {args.seeds!r} (integers or ranges a-b)",
              file=sys.stderr)
        return 2

    import tvbo
    from tvbo.results.io import write_run

    for seed in seeds:  # seed-major: an interrupted campaign has whole seeds
        for benchmark in args.benchmarks:
            path = run_file(args.out, args.side, benchmark, seed)
            if path.exists():
                continue
            if args.side == "public":
                from tvbo_wdbo_public import WDBOPublic

                algorithm = WDBOPublic()
            else:
                algorithm = "w-dbo-paper"
            start = time.perf_counter()
            ds = tvbo.simulate(benchmark, algorithm, seed=seed, **BOLT_B, **SIDES[args.side])
            path.parent.mkdir(parents=True, exist_ok=True)
            write_run(ds, path)
            print(f"{args.side} {benchmark} seed {seed}: {time.perf_counter() - start:.0f} s wall, "
                  f"{ds.attrs['n_iterations']} iterations, avg regret "
                  f"{ds.attrs['average_regret']:.4g}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
