"""What a floor row costs: the engine's open-loop path against its event loop.

The reference policies ``centre`` and ``best-static`` (issue 22's floor rows) compute nothing,
yet they make H / c queries a run: 180,001 on BOLT [B]'s Temperature (c = 0.01 s over 1,800 s),
60,001 on Powell, 12,000 on Ackley. In the BOLT [B] campaign of 2026-11-28 the three floor rows
took 44% of the runs' CPU. :meth:`tvbo.sim.engine.Engine._run_open_loop` runs the three floor
rows (``centre``, ``best-static``, ``random-search``: algorithms that never look at what they
observe) without the event loop; this script times one run of each given cell both ways, in one
process (CPU seconds, ``time.process_time``; the best of ``--repeats``), checks that the two run
files are identical (cost attributes aside), and prints the ratio.

Each run starts cold: the process's polish memo (f* refinements shared by the runs of a job)
and best-static's kept choices are cleared before it, so neither way of running reuses the
other's work; a campaign job of ten seeds shares both across its runs and pays less per run.

Usage (from the repository's root; Temperature needs a prepared Intel day)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/floor_rows.py --cells powell:centre \\
        ackley:best-static --temperature data/intel/intel_2004-03-06.nc
"""

from __future__ import annotations

import argparse
import time

import xarray as xr

from tvbo.algorithms.reference import policies
from tvbo.api import simulate
from tvbo.benchmarks.oracle import clear_polish_memos
from tvbo.results.schema import RUN_FILE_ONLY_ATTRIBUTES
from tvbo.sim.engine import Engine

DEFAULT_CELLS = ("powell:centre", "powell:best-static", "powell:random-search", "ackley:centre")


def _run(benchmark: str, algorithm: str, options: dict, *, loop: bool
         ) -> tuple[float, xr.Dataset]:
    saved = Engine.open_loop
    if loop:
        Engine.open_loop = property(lambda self: False)  # type: ignore[method-assign]
    clear_polish_memos()
    policies._CHOICES.clear()
    try:
        start = time.process_time()
        ds = simulate(benchmark, algorithm, **options)
        seconds = time.process_time() - start
    finally:
        Engine.open_loop = saved  # type: ignore[method-assign]
    for key in RUN_FILE_ONLY_ATTRIBUTES:
        ds.attrs.pop(key, None)
    return seconds, ds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", nargs="+", default=list(DEFAULT_CELLS),
                        help="benchmark:algorithm pairs (default: %(default)s)")
    parser.add_argument("--temperature", metavar="NC",
                        help="a prepared Intel day: adds temperature:centre, "
                             "temperature:best-static and temperature:random-search")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    cells = [tuple(c.split(":", 1)) for c in args.cells]
    if args.temperature:
        cells += [("temperature", a) for a in ("centre", "best-static", "random-search")]
    print(f"{'cell':32s} {'queries':>8s} {'loop s':>8s} {'open s':>8s} {'ratio':>6s}  same")
    for benchmark, algorithm in cells:
        options: dict = {"seed": args.seed, "cost_table": "metronome"}
        if benchmark == "temperature":
            options["benchmark_options"] = {"path": args.temperature}
        loop_s, fixed_s, same, n = [], [], True, 0
        for _ in range(args.repeats):
            s_loop, ds_loop = _run(benchmark, algorithm, options, loop=True)
            s_fixed, ds_fixed = _run(benchmark, algorithm, options, loop=False)
            loop_s.append(s_loop)
            fixed_s.append(s_fixed)
            same = same and ds_loop.identical(ds_fixed)
            n = ds_fixed.sizes["iteration"]
        print(f"{benchmark + ':' + algorithm:32s} {n:8d} {min(loop_s):8.2f} {min(fixed_s):8.2f} "
              f"{min(loop_s) / min(fixed_s):6.1f}  {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
