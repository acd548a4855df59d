"""Why do tvbo's algorithms stay far from Griewank's bowl? Controlled single-factor runs (issue 22
item 4), kept so anyone can re-run them.

Two experiments, one JSON line per run on stdout (and in ``--out``):

``floors``   the reference policies (``centre``, ``best-static``, ``random-search``) under each
             reading of the benchmark (:data:`READINGS`: which box the spatial coordinates and
             the time coordinate sweep). The policies' expected average regret is a time average,
             so they run with cost 1 s (600 queries) instead of 0.05 s (12 000) to keep f* cheap.
``factors``  algorithms (default ``gp-ucb``, ``w-dbo-paper``) on the BOLT [B] protocol
             (metronome costs, counted / botorch-i9-laptop, 15 warm-up queries), changing ONE
             factor at a time (:data:`FACTORS`): the time drift (time_range [0, 1]), the
             output standardisation, beta, the acquisition optimiser, the hyperparameter fit,
             and the reading (spatial_range).

Each record splits the average regret of the post-warm-up queries into the bowl term
``sum z_s^2 / 4000`` of the queried points (distance from the bowl's centre) and the rest, and
gives the median bowl term and the share of queries farther than 0.25 (normalised) from the
centre in some coordinate (exploration outliers).

    nice python benchmarks/griewank_probe.py factors --seeds 0 1 2 --out DIR/factors.jsonl
    nice python benchmarks/griewank_probe.py floors --out DIR/floors.jsonl
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from probe_lines import emit

#: benchmark readings: name -> Griewank options (None = the published box on all six axes)
READINGS: dict[str, dict[str, Any]] = {
    "box": {},
    "time-unit": {"time_range": [0.0, 1.0]},
    "time-seconds": {"time_range": [0.0, 600.0]},
    "space-10": {"spatial_range": [-10.0, 10.0]},
    "space-5": {"spatial_range": [-5.0, 5.0]},
    "space-10-time-unit": {"spatial_range": [-10.0, 10.0], "time_range": [0.0, 1.0]},
    "space-5-time-unit": {"spatial_range": [-5.0, 5.0], "time_range": [0.0, 1.0]},
}

#: factor name -> (benchmark options, algorithm options); one change from the baseline each
FACTORS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "baseline": ({}, {}),
    "no-drift": ({"time_range": [0.0, 1.0]}, {}),
    "no-standardize": ({}, {"surrogate": {"standardize": False}}),
    "beta-0.1": ({}, {"acquisition": {"beta": {"kind": "constant", "value": 0.1}}}),
    "beta-srinivas": ({}, {"acquisition": {"beta": {"kind": "srinivas"}}}),
    "optimiser-x4": ({}, {"acquisition": {"n_restarts": 80, "raw_samples": 2048}}),
    "lengthscale-min-0.1": ({}, {"surrogate": {"bounds": {"lengthscale_space": [0.1, 10.0]}}}),
    "space-10": ({"spatial_range": [-10.0, 10.0]}, {}),
    "space-5": ({"spatial_range": [-5.0, 5.0]}, {}),
}


def _record(ds: Any, bench: Any) -> dict[str, float]:
    regret = np.asarray(ds["regret"].values, float).ravel()
    warm = np.asarray(ds["is_warmup"].values).ravel().astype(bool)
    X = np.asarray(ds["x"].values, float).reshape(len(regret), -1)
    t = np.asarray(ds["t_sample"].values, float).ravel()
    z = bench.to_original(X, t)[:, : bench.d]
    bowl = (z**2).sum(axis=1) / 4000.0
    far = np.abs(X - 0.5).max(axis=1) > 0.25  # every reading here is centred on z_s = 0
    keep = ~warm
    return {
        "queries": int(keep.sum()),
        "average_regret": float(regret[keep].mean()),
        "bowl_mean": float(bowl[keep].mean()),
        "bowl_median": float(np.median(bowl[keep])),
        "rest_mean": float((regret - bowl)[keep].mean()),
        "far_share": float(np.mean(far[keep])),
        "time_integrated_regret": float(np.ravel(ds["time_integrated_regret"].values)[0]),
    }


def _bench(options: dict[str, Any], **overrides: Any) -> Any:
    from tvbo.benchmarks import make

    return make("griewank", **options, **overrides)


def floors(args: argparse.Namespace) -> list[dict[str, Any]]:
    from tvbo.api import simulate

    rows = []
    for reading, options in READINGS.items():
        for policy in args.policies:
            for seed in args.seeds:
                bench = _bench(options, cost=1.0)
                start = time.perf_counter()
                ds = simulate(bench, policy, seed=seed, warmup=15)
                rows.append({"experiment": "floors", "reading": reading, "options": options,
                             "algorithm": policy, "seed": seed, **_record(ds, bench),
                             "wall_s": round(time.perf_counter() - start, 1)})
                emit(rows[-1], args.out)
    return rows


def factors(args: argparse.Namespace) -> list[dict[str, Any]]:
    from tvbo.algorithms import make
    from tvbo.api import simulate

    rows = []
    for name in args.factors:
        bench_options, algorithm_options = FACTORS[name]
        for algorithm in args.algorithms:
            try:  # a factor may not apply (w-dbo-paper's GPyTorch fit has no bounds to move)
                make(algorithm, **algorithm_options)
            except ValueError as err:
                emit({"experiment": "factors", "factor": name, "algorithm": algorithm,
                       "skipped": str(err)}, args.out)
                continue
            for seed in args.seeds:
                bench = _bench(bench_options)
                start = time.perf_counter()
                ds = simulate(bench, algorithm, seed=seed, warmup=15,
                              profile="botorch-i9-laptop", algorithm_options=algorithm_options)
                rows.append({"experiment": "factors", "factor": name, "algorithm": algorithm,
                             "seed": seed, **_record(ds, bench),
                             "wall_s": round(time.perf_counter() - start, 1)})
                emit(rows[-1], args.out)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment", choices=["floors", "factors"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--algorithms", nargs="+", default=["gp-ucb", "w-dbo-paper"])
    parser.add_argument("--policies", nargs="+",
                        default=["centre", "best-static", "random-search"])
    parser.add_argument("--factors", nargs="+", default=list(FACTORS), choices=list(FACTORS))
    parser.add_argument("--out", type=Path, default=None, help="append JSON lines here")
    args = parser.parse_args(argv)
    (floors if args.experiment == "floors" else factors)(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
