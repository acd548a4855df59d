"""Why does BoTorch's GP-UCB differ from tvbo's at one compute price? (issue 23)

The side-by-side comparison (examples/wdbo_public/side_by_side.py, docs/side-by-side.md) finds
BoTorch's GP-UCB (plugin ``botorch-gp-ucb``, BoTorch 0.18.1's ``SingleTaskGP`` defaults) and
tvbo's ``gp-ucb`` apart on Eggholder, Ackley and Powell. Side ``gp-ucb-r`` charges tvbo's
``gp-ucb`` BoTorch's calibrated response time R(n) (examples/botorch_gpucb/botorch-gp-ucb.R.yaml),
so the two make about as many queries; what still differs is the model. This probe changes that
one factor: side ``gp-ucb-rp`` is ``gp-ucb-r`` with the stock model of that BoTorch release where
tvbo can state it (side_by_side.py ``botorch_stock_priors``: an RBF spatial kernel and its
dimension-scaled log-normal priors; what tvbo cannot state is listed there).

Per variant and benchmark, over the seeds: average and time-integrated regret (mean ± s.e.),
queries, and the runs *trapped* at one point (at least a tenth of the post-warm-up queries at
one point, to four decimals: on Ackley a corner of the box). One run file per side, benchmark
and seed, OUT/SIDE/BENCHMARK_sSEED.nc, the side-by-side layout: the probe runs the missing ones
of ``gp-ucb-r`` and ``gp-ucb-rp`` (existing files are reused: they are those sides' own, bit for
bit) and reads ``botorch`` and ``gp-ucb`` (the laptop profile's price) when side_by_side.py has
run them into OUT.

    nice python benchmarks/botorch_prior_probe.py OUT --benchmarks eggholder ackley --seeds 0-9
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from tvbo.blas_kernel import pin_kernel

# before numpy loads: OpenBLAS's pinned kernel, so the runs are the side's own bits
pin_kernel()

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
MODEL = REPO / "examples" / "botorch_gpucb" / "botorch-gp-ucb.R.yaml"
#: the share of post-warm-up queries at one point that makes a run trapped
TRAPPED = 0.1
#: the variants this probe runs; it only reads the sides ``botorch`` (the plugin, measured) and
#: ``gp-ucb`` (the laptop profile's price) when side_by_side.py has run them into OUT
RUN = ("gp-ucb-r", "gp-ucb-rp")


def summary(path: Path) -> tuple[float, float, int, bool]:
    """(average regret, time-integrated regret, queries, trapped) of one run file."""
    import xarray as xr

    with xr.open_dataset(path) as ds:
        x = ds["x"].values.reshape(-1, ds["x"].shape[-1])
        x = x[np.isfinite(x).all(axis=1)][int(ds.attrs["warmup"]):]
        _, counts = np.unique(np.round(x, 4), axis=0, return_counts=True)
        return (float(ds.attrs["average_regret"]), float(ds.attrs["time_integrated_regret"]),
                int(ds.attrs["n_iterations"]), bool(counts.max() >= TRAPPED * len(x)))


def mean_se(values: list[float]) -> str:
    v = np.asarray(values, float)
    se = v.std(ddof=1) / math.sqrt(len(v)) if len(v) > 1 else math.nan
    return f"{v.mean():.4g} ± {se:.2g}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder of the run files (side-by-side layout)")
    parser.add_argument("--benchmarks", nargs="+", default=["eggholder", "ackley"])
    parser.add_argument("--seeds", default="0-9", help="a-b")
    args = parser.parse_args(argv)
    lo, _, hi = args.seeds.partition("-")
    seeds = range(int(lo), int(hi or lo) + 1)

    sys.path.insert(0, str(REPO / "examples" / "wdbo_public"))
    import side_by_side

    print("| benchmark | variant | runs | average regret | time-int. regret | queries | trapped |")
    print("|---|---|---|---|---|---|---|")
    for benchmark in args.benchmarks:
        for variant in ("botorch", "gp-ucb", "gp-ucb-r", "gp-ucb-rp"):
            rows = []
            for seed in seeds:
                path = side_by_side.run_file(args.out, variant, benchmark, seed)
                if not path.exists() and variant in RUN:
                    side_by_side.make_run(args.out, variant, benchmark, seed, MODEL)
                if path.exists():
                    rows.append(summary(path))
            if rows:
                print(f"| {benchmark} | {variant} | {len(rows)} | {mean_se([r[0] for r in rows])}"
                      f" | {mean_se([r[1] for r in rows])} | {np.mean([r[2] for r in rows]):.0f}"
                      f" | {sum(r[3] for r in rows)} of {len(rows)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
