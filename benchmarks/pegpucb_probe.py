"""PE-GP-UCB on the toy problem (hills): why it loses to MLE and the Bayesian prior in tvbo
(issue 22 item 5, the "partly" verdict of Figure 2). Single-factor runs on the protocol of
config/pegpucb_paper.yaml (100 steps, free compute, 0 warm-up), one JSON line per run:

* ``cumulative_regret`` at the last step (the figure's measure);
* ``true_prior_selected``: share of steps whose selected prior is the true one (prior 2);
* ``priors_left``: candidate priors not eliminated at the end (PE-GP-UCB).

    nice python benchmarks/pegpucb_probe.py --seeds 0 1 2 3 4 5 --out DIR/pegpucb.jsonl
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from probe_lines import emit, probe_parser

_SPACE = {"step_seconds": 1.0, "exclude": [0.05, 0.17], "period": 2}
_FAMILY = {"priors": "hills", "beta": "paper", "delta": 0.1, "horizon_steps": 100,
           "search_space": _SPACE}
#: variant -> (registry name, algorithm options)
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "pe-gp-ucb": ("pe-gp-ucb", _FAMILY),
    "pe-gp-ucb-post": ("pe-gp-ucb", {**_FAMILY, "test_sigma": "post"}),
    "mle-prior": ("mle-prior", _FAMILY),
    "bayes-prior": ("bayes-prior", _FAMILY),
}
TRUE_PRIOR = 2


def run(variant: str, seed: int) -> dict[str, Any]:
    from tvbo.api import simulate

    name, options = VARIANTS[variant]
    ds = simulate("hills", name, seed=seed, compute="polynomial", polynomial=[0.0], warmup=0,
                  benchmark_options={"steps": 100, "step_seconds": 1.0, **{
                      k: _SPACE[k] for k in ("exclude", "period")}, "instance_seed": 0},
                  algorithm_options=options)
    regret = np.asarray(ds["regret"].values, float).ravel()
    out: dict[str, Any] = {"variant": variant, "seed": seed,
                           "cumulative_regret": float(np.nansum(regret))}
    if "state_selected_prior" in ds:
        sel = np.asarray(ds["state_selected_prior"].values, float).ravel()
        out["true_prior_selected"] = float(np.mean(sel == TRUE_PRIOR))
    if "state_n_priors" in ds:  # priors still in play at the end (PE-GP-UCB eliminates)
        out["priors_left"] = float(np.asarray(ds["state_n_priors"].values).ravel()[-1])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = probe_parser(__doc__.splitlines()[0], list(VARIANTS))
    args = parser.parse_args(argv)
    for variant in args.variants:
        for seed in args.seeds:
            emit(run(variant, seed), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
