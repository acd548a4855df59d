"""The replay check: the public W-DBO code run twice on one seed with ``compute: polynomial``
through its response-time model (``tvbo calibrate --from-runs``).

Why: ``measured`` runs of code tvbo cannot count are realistic but not reproducible; a replay
through R(n) must be (the same seed gives the same run file, bit for bit) and must merge with
``counted`` runs. Each call writes the first missing of ``OUT/replay_check/BENCHMARK_sSEED_a.nc``
and ``..._b.nc`` (run it twice: two processes, nothing shared but the files); the report
(``report.py``) compares their digests and merges the first with ``OUT/paper``'s counted run of
the same seed.

    python examples/wdbo_public/replay_check.py OUT --model examples/wdbo_public/w-dbo-public.R.yaml
    python examples/wdbo_public/replay_check.py OUT --model examples/wdbo_public/w-dbo-public.R.yaml
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from side_by_side import BENCHMARKS, SIDES, run_options  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the side-by-side folder")
    parser.add_argument("--model", type=Path, required=True,
                        help="the response-time model (tvbo calibrate --from-runs)")
    parser.add_argument("--benchmark", default="hartmann3", choices=BENCHMARKS)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not args.model.is_file():
        print(f"replay_check: --model {str(args.model)!r}: no such file", file=sys.stderr)
        return 2
    # lazy: the --help and bad-argument paths load no numpy
    import tvbo
    from tvbo.results.io import write_run

    side = SIDES["replay"]
    for copy in ("a", "b"):
        path = args.out / "replay_check" / f"{args.benchmark}_s{args.seed}_{copy}.nc"
        if path.exists():
            continue
        start = time.process_time()
        ds = tvbo.simulate(args.benchmark, side.algorithm, seed=args.seed,
                           **run_options(side, args.model))
        path.parent.mkdir(parents=True, exist_ok=True)
        write_run(ds, path)
        print(f"{path}: {time.process_time() - start:.0f} CPU s, {ds.attrs['n_iterations']} "
              f"iterations", flush=True)
        return 0
    print(f"replay_check: both copies exist in {args.out / 'replay_check'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
