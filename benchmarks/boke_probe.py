"""Why is BOKE worse than random search on sphere6? Single-factor runs (issue 22 item 5).

The BOKE campaign's protocol (config/boke_paper.yaml: 10 uniform warm-up points, 110 queries,
noise-free, cost 0), one JSON line per run on stdout (and in ``--out``) with

* ``simple_regret``: f* - max f over the queries (the paper's metric);
* ``boundary_share``: share of the post-warm-up queries with a coordinate within 0.01 of the
  box's faces;
* ``centre_distance``: mean max-norm distance of those queries from the box's centre (where
  sphere6's optimum is), 0.5 = on a face;
* ``bandwidth`` and ``beta`` at the last step (BOKE's state);
* ``improved_after_warmup``: whether any post-warm-up query beat the best warm-up point.

The variants change one of the two constants the paper does not give (spec_boke.md §2.7-§2.8):
the bandwidth constant c of Scott's rule and the sub-Gaussian scale of Theorem 4.13's beta.

    nice python benchmarks/boke_probe.py --seeds 0 1 2 3 4 5 --out DIR/boke.jsonl
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np
from probe_lines import emit, probe_parser

#: variant name -> (registry name, algorithm options)
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "boke": ("boke", {}),
    "random-search": ("random-search", {}),
    "centre": ("centre", {}),
    "boke-noise-scale-0.01": ("boke", {"acquisition": {"noise_scale": 0.01}}),
    "boke-bandwidth-x0.3": ("boke", {"surrogate": {"bandwidth_scale": 0.3 * np.sqrt(1 / 12)}}),
    "boke-plus": ("boke-plus", {}),
    # the constant under which the density design matches the GP design in 2-D, as the paper's
    # Figure 3 says it does (tests/algorithms/boke/test_density_design.py; investigations page)
    "boke-bandwidth-0.1": ("boke", {"surrogate": {"bandwidth_scale": 0.1}}),
    "boke-plus-bandwidth-0.1": ("boke-plus", {"surrogate": {"bandwidth_scale": 0.1}}),
    # Theorem 4.13's beta with the true sub-Gaussian scale of a noise-free problem: 0
    "boke-beta-0": ("boke", {"acquisition": {"beta": 0.0}}),
    "gp-ucb": ("gp-ucb", {}),
}


def run(variant: str, benchmark: str, seed: int) -> dict[str, Any]:
    from tvbo.api import simulate

    name, options = VARIANTS[variant]
    start = time.perf_counter()
    ds = simulate(benchmark, name, seed=seed, warmup=10, max_iterations=110, horizon=600.0,
                  algorithm_options=options)
    f = np.asarray(ds["f"].values, float).ravel()
    f_star = np.asarray(ds["f_star"].values, float).ravel()
    warm = np.asarray(ds["is_warmup"].values).ravel().astype(bool)
    X = np.asarray(ds["x"].values, float).reshape(len(f), -1)[~warm]
    state = {k[len("state_"):]: float(np.asarray(ds[k].values).ravel()[-1])
             for k in ds.data_vars if k in ("state_bandwidth", "state_beta")}
    return {
        "benchmark": benchmark, "variant": variant, "seed": seed,
        "simple_regret": float(np.max(f_star) - np.max(f)),
        "improved_after_warmup": bool(np.max(f[~warm]) > np.max(f[warm])),
        "boundary_share": float(np.mean(np.any((X < 0.01) | (X > 0.99), axis=1))),
        "centre_distance": float(np.mean(np.abs(X - 0.5).max(axis=1))),
        **state, "wall_s": round(time.perf_counter() - start, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = probe_parser(__doc__.splitlines()[0], list(VARIANTS))
    parser.add_argument("--benchmarks", nargs="+", default=["sphere6"])
    args = parser.parse_args(argv)
    for benchmark in args.benchmarks:
        for variant in args.variants:
            for seed in args.seeds:
                emit(run(variant, benchmark, seed), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
