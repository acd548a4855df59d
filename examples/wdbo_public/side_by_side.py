"""Side-by-side runs: the published code (plugins) vs the tvbo emulation of it.

Two comparisons of issue 23, each under the BOLT [B] settings of ``config/bolt_paper.yaml``
(cost table ``metronome``: the papers' noise, evaluation cost and 600 s horizon; warm-up 15;
speed 1):

* W-DBO: the public code (plugin ``w-dbo-public``, side ``public``) vs tvbo's ``w-dbo-paper``
  (side ``paper``); side ``replay`` is the public code again, its compute charged by a
  response-time model of ``tvbo calibrate --from-runs`` (``--model R.yaml``) instead of measured,
  and side ``paper-r`` is ``w-dbo-paper`` charged the same R(n) (one compute price for both);
* GP-UCB: BoTorch's ``SingleTaskGP`` + ``UpperConfidenceBound`` + ``optimize_acqf`` (plugin
  ``botorch-gp-ucb``, side ``botorch``) vs tvbo's ``gp-ucb`` (side ``gp-ucb``); side
  ``gp-ucb-r`` is ``gp-ucb`` charged BoTorch's calibrated R(n)
  (``examples/botorch_gpucb/botorch-gp-ucb.R.yaml``, ``--model``), as ``paper-r`` is for W-DBO,
  and ``gp-ucb-rp`` the same with BoTorch's stock priors (:func:`botorch_stock_priors`).

The plugins (``pip install -e examples/wdbo_public -e examples/botorch_gpucb``, found
through their entry points) report no work to tvbo, so they run ``measured`` (the CPU time of
every thread of the process on this machine; torch pinned to one thread by the plugins); tvbo's
algorithms run as in the campaign, ``counted`` with the ``botorch-i9-laptop`` profile. One run
file per (side, benchmark, seed) is written to ``OUT/SIDE/BENCHMARK_sSEED.nc``; existing files
are skipped, so the script resumes. The report: ``python examples/wdbo_public/report.py OUT``.

    python examples/wdbo_public/side_by_side.py OUT --side public --seeds 0 1 2
    python examples/wdbo_public/side_by_side.py OUT --side paper --seeds 0-9
    python examples/wdbo_public/side_by_side.py OUT --side replay --model R.yaml --seeds 0-3 \\
        --benchmarks hartmann3
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

#: the five benchmarks of issue 23's side-by-side comparison
BENCHMARKS: tuple[str, ...] = ("hartmann3", "eggholder", "ackley", "shekel", "powell")
#: the run options config/bolt_paper.yaml gives every run
BOLT_B: dict[str, Any] = {"cost_table": "metronome", "warmup": 15, "speed": 1.0,
                          "horizon": None}
#: the campaign's price list of tvbo's own algorithms
PAPER_COMPUTE: dict[str, Any] = {"compute": "counted", "profile": "botorch-i9-laptop"}


def botorch_stock_priors(d: int) -> dict[str, Any]:
    """BoTorch 0.18.1's ``SingleTaskGP`` model where tvbo can state it, as ``gp-ucb``'s surrogate
    options: an RBF spatial kernel and the release's dimension-scaled log-normal priors as
    tvbo's (median, log-sd) pairs, lengthscale median exp(sqrt(2) + ln(d) / 2) and log-sd
    sqrt(3), noise variance (standardised units) median exp(-4) and log-sd 1. Not stated: its
    lengthscales are per dimension (tvbo's one for all, equal when d = 1) and unbounded above
    (tvbo's at most 10, the unit box's widths); it has no signal variance (tvbo fits one)."""
    return {"surrogate": {
        "space_kernel": "rbf",
        "prior": {"lengthscale_space": [math.exp(math.sqrt(2.0) + math.log(d) / 2.0),
                                        math.sqrt(3.0)],
                  "noise_var": [math.exp(-4.0), 1.0]}}}


@dataclass(frozen=True)
class Side:
    """One side of a comparison: what runs, how its compute is charged, its label."""

    pair: str  #: the comparison it belongs to
    label: str  #: its name in the report
    #: tvbo name; a plugin's is found through its package's entry point, so the run file
    #: records the plugin and its display name ("W-DBO (public code)") for tables and caveats
    algorithm: str
    compute: dict[str, Any] = field(default_factory=dict)
    #: run with BoTorch's stock model (:func:`botorch_stock_priors`, for the benchmark's d)
    stock_priors: bool = False

    @property
    def priced(self) -> bool:
        """Charged a calibrated response-time model (``--model R.yaml``), not its own compute."""
        return self.compute.get("compute") == "polynomial"


SIDES: dict[str, Side] = {
    "public": Side("w-dbo", "W-DBO (public code, measured)", "w-dbo-public",
                   {"compute": "measured"}),
    "paper": Side("w-dbo", "w-dbo-paper (counted)", "w-dbo-paper", PAPER_COMPUTE),
    "replay": Side("w-dbo", "W-DBO (public code, replayed R(n))", "w-dbo-public",
                   {"compute": "polynomial"}),
    # tvbo's emulation charged the public code's R(n) instead of the laptop profile's prices:
    # the two sides at one compute price, so what differs is the algorithm's code alone
    "paper-r": Side("w-dbo", "w-dbo-paper (public code's R(n))", "w-dbo-paper",
                    {"compute": "polynomial"}),
    "botorch": Side("gp-ucb", "GP-UCB (BoTorch, measured)", "botorch-gp-ucb",
                    {"compute": "measured"}),
    "gp-ucb": Side("gp-ucb", "gp-ucb (counted)", "gp-ucb", PAPER_COMPUTE),
    # tvbo's gp-ucb charged BoTorch's R(n): BoTorch's price per iteration is a fraction of the
    # laptop profile's at these dataset sizes, so it queried about three times as often
    "gp-ucb-r": Side("gp-ucb", "gp-ucb (BoTorch's R(n))", "gp-ucb", {"compute": "polynomial"}),
    # and with BoTorch's stock priors: what is left of BoTorch's model once the price is equal
    # (docs/investigations.md, GP-UCB beside BoTorch's)
    "gp-ucb-rp": Side("gp-ucb", "gp-ucb (BoTorch's R(n) and priors)", "gp-ucb",
                      {"compute": "polynomial"}, stock_priors=True),
}
#: per comparison: (the published code's side, tvbo's side)
PAIRS: dict[str, tuple[str, str]] = {"w-dbo": ("public", "paper"), "gp-ucb": ("botorch", "gp-ucb")}


def parse_seeds(items: list[str]) -> list[int]:
    """``0 1 5-9`` -> [0, 1, 5, 6, 7, 8, 9]."""
    seeds: list[int] = []
    for item in items:
        lo, _, hi = item.partition("-")
        seeds.extend(range(int(lo), int(hi or lo) + 1))
    return seeds


def run_file(out: Path, side: str, benchmark: str, seed: int) -> Path:
    """Where the run of ``side`` on ``benchmark`` with ``seed`` is written."""
    return out / side / f"{benchmark}_s{seed}.nc"


def run_options(side: Side, model: Path | None, d: int | None = None) -> dict[str, Any]:
    """The ``tvbo.simulate`` options of ``side`` (the polynomial sides need ``model``; a side
    with BoTorch's stock priors the benchmark's spatial dimension ``d``).

    The public code's own runs replay the model file; tvbo's algorithms (``w-dbo-paper`` under
    the public W-DBO code's model, ``gp-ucb`` under BoTorch's: a model describes one algorithm)
    get its iteration's R(n) as explicit coefficients, the sum of every phase's:
    charged once per post-warm-up proposal, where the replay also charges the warm-up's
    ingestions (the model's update a_0 each)."""
    options = {**BOLT_B, **side.compute}
    if side.priced:
        if side.algorithm == "w-dbo-public":
            options["profile"] = str(model)
        else:
            phases = yaml.safe_load(Path(model).read_text())["phases"]
            degree = max(len(c) for c in phases.values())
            options["polynomial"] = [sum(c[i] for c in phases.values() if i < len(c))
                                     for i in range(degree)]
    if side.stock_priors:
        if d is None:
            raise ValueError("a side with BoTorch's stock priors needs the benchmark's d")
        options["algorithm_options"] = botorch_stock_priors(d)
    return options


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder for the run files")
    parser.add_argument("--side", choices=sorted(SIDES), required=True)
    parser.add_argument("--seeds", nargs="+", default=["0-9"], help="seeds, e.g. 0 1 5-9")
    parser.add_argument("--benchmarks", nargs="+", default=list(BENCHMARKS),
                        choices=BENCHMARKS)
    parser.add_argument("--model", type=Path,
                        help="response-time model (tvbo calibrate --from-runs) of side replay")
    args = parser.parse_args(argv)
    try:
        seeds = parse_seeds(args.seeds)
    except ValueError:
        print(f"side_by_side: bad --seeds {args.seeds!r} (integers or ranges a-b)",
              file=sys.stderr)
        return 2
    if SIDES[args.side].priced != (args.model is not None):
        priced = ", ".join(name for name, side in SIDES.items() if side.priced)
        print(f"side_by_side: --model R.yaml goes with the sides {priced}, and only with them",
              file=sys.stderr)
        return 2
    if args.model is not None and not args.model.is_file():
        print(f"side_by_side: --model {str(args.model)!r}: no such file", file=sys.stderr)
        return 2

    for seed in seeds:  # seed-major: an interrupted campaign has whole seeds
        for benchmark in args.benchmarks:
            if run_file(args.out, args.side, benchmark, seed).exists():
                continue
            start = time.perf_counter()
            ds = make_run(args.out, args.side, benchmark, seed, args.model)
            print(f"{args.side} {benchmark} seed {seed}: {time.perf_counter() - start:.0f} s wall, "
                  f"{ds.attrs['n_iterations']} iterations, avg regret "
                  f"{ds.attrs['average_regret']:.4g}", flush=True)
    return 0


def make_run(out: Path, side: str, benchmark: str, seed: int, model: Path | None):
    """Simulate the run of ``side`` on ``benchmark`` with ``seed`` and write it to its
    :func:`run_file`; returns its dataset."""
    # lazy: the --help and bad-argument paths load no numpy
    import tvbo
    from tvbo import registry
    from tvbo.results.io import write_run

    d = int(registry.resolve(registry.entry("benchmarks", benchmark)).d)  # spatial dimension
    ds = tvbo.simulate(benchmark, SIDES[side].algorithm, seed=seed,
                       **run_options(SIDES[side], model, d))
    path = run_file(out, side, benchmark, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_run(ds, path)
    return ds


if __name__ == "__main__":
    sys.exit(main())
