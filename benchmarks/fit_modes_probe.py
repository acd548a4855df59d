"""Do the papers' own hyperparameter fits avoid the absorbing states tvbo's fit runs into?

Each named configuration is an algorithm plus options (a preset and a ``fit_mode``, see
:mod:`tvbo.gp.fit_modes`). Every (configuration, benchmark, seed) runs with the counted compute
model (deterministic) over the horizon and prints one row: average regret (the W-DBO paper's
metric), time-integrated regret, iterations, the dataset size after warm-up (min / median /
final), the temporal lengthscale l_T (median / final, seconds), the noise variance (median /
final, standardised units) and, for reset baselines, the number of resets and the fitted
forgetting rate eps (median / final). The absorbing states probed:

* BOLT / W-DBO on Ackley: l_T collapsing to a few seconds (n* and the budget then shrink the
  dataset for the rest of the run);
* R-GP-UCB on Powell: the fitted forgetting rate eps and the reset period N(eps) it sets;
* ET-GP-UCB on Powell: the ML noise absorbing the drift so that the trigger never fires.

Run (this is how the report's numbers were made):
    python benchmarks/fit_modes_probe.py --group wdbo --seeds 0-2 --jobs 2
    python benchmarks/fit_modes_probe.py --group resets --seeds 0-2 --jobs 2
"""

from __future__ import annotations

import argparse
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

#: label -> (algorithm name, algorithm options)
CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "w-dbo-reference": ("w-dbo-reference", {}),
    "w-dbo-ref+adam-s": ("w-dbo-reference", {"fit_mode": "gpytorch-adam"}),
    "w-dbo-ref+adam-600": (
        "w-dbo-reference",
        {"fit_mode": "gpytorch-adam", "fit_mode_options": {"time_scale": 600.0}},
    ),
    "w-dbo-ref+adam-60": (
        "w-dbo-reference",
        {"fit_mode": "gpytorch-adam", "fit_mode_options": {"time_scale": 60.0}},
    ),
    "w-dbo-paper": ("w-dbo-paper", {}),
    "w-dbo": ("w-dbo", {}),
    "bolt-reference": ("bolt-reference", {}),
    "bolt-ref+adam-s": ("bolt-reference", {"fit_mode": "gpytorch-adam"}),
    "bolt-ref+adam-600": (
        "bolt-reference",
        {"fit_mode": "gpytorch-adam", "fit_mode_options": {"time_scale": 600.0}},
    ),
    "bolt-ref+adam-60": (
        "bolt-reference",
        {"fit_mode": "gpytorch-adam", "fit_mode_options": {"time_scale": 60.0}},
    ),
    "bolt-paper": ("bolt-paper", {}),
    "bolt": ("bolt", {}),
    "r-gp-ucb": ("r-gp-ucb", {}),
    "r-gp-ucb+botorch": ("r-gp-ucb", {"fit_mode": "botorch-map"}),
    "r-gp-ucb+adam": ("r-gp-ucb", {"fit_mode": "gpytorch-adam"}),
    "et-gp-ucb": ("et-gp-ucb", {}),
    "et-gp-ucb+uitvbo": ("et-gp-ucb", {"fit_mode": "uitvbo-map"}),
    "et-gp-ucb+uitvbo-fitnoise": (
        "et-gp-ucb",
        {"fit_mode": "uitvbo-map", "fit_mode_options": {"noise_var": "fit"}},
    ),
    "et-gp-ucb+botorch": ("et-gp-ucb", {"fit_mode": "botorch-map"}),
    "et-gp-ucb+adam": ("et-gp-ucb", {"fit_mode": "gpytorch-adam"}),
}

GROUPS: dict[str, tuple[list[str], list[str]]] = {
    "wdbo": (
        ["w-dbo-reference", "w-dbo-ref+adam-s", "w-dbo-ref+adam-600", "w-dbo-paper",
         "bolt-reference", "bolt-ref+adam-s", "bolt-ref+adam-600", "bolt-paper"],
        ["ackley", "hartmann3"],
    ),
    "resets": (
        ["r-gp-ucb", "r-gp-ucb+botorch", "r-gp-ucb+adam", "et-gp-ucb", "et-gp-ucb+uitvbo",
         "et-gp-ucb+uitvbo-fitnoise", "et-gp-ucb+botorch", "et-gp-ucb+adam"],
        ["powell"],
    ),
}


def seeds(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def _median_final(ds, name: str) -> tuple[float, float]:
    import numpy as np

    if name not in ds:
        return float("nan"), float("nan")
    values = ds[name].values[ds["is_warmup"].values == 0].astype(float)
    values = values[np.isfinite(values)]
    if not values.size:
        return float("nan"), float("nan")
    return float(np.median(values)), float(values[-1])


def one(job: tuple[str, str, int, float, str]) -> dict[str, Any]:
    import numpy as np

    import tvbo

    label, benchmark, seed, horizon, profile = job
    algorithm, options = CONFIGS[label]
    ds = tvbo.simulate(benchmark, algorithm, seed=seed, horizon=horizon, profile=profile,
                       algorithm_options=options).squeeze()
    post = ds["is_warmup"].values == 0
    sizes = ds["dataset_size"].values[post]
    lt_med, lt_fin = _median_final(ds, "state_lengthscale_time")
    nv_med, nv_fin = _median_final(ds, "state_noise_var")
    eps_med, eps_fin = _median_final(ds, "state_reset_eps")
    _, resets = _median_final(ds, "state_resets")
    noise = ds["state_noise_var"].values[post].astype(float) if "state_noise_var" in ds else []
    noise = np.asarray(noise)[np.isfinite(noise)] if len(noise) else np.array([np.nan])
    last_reset = float("nan")
    if "state_resets" in ds:
        count = ds["state_resets"].values.astype(float)
        jumps = np.flatnonzero(np.diff(count) > 0) + 1
        if jumps.size:
            last_reset = float(ds["t_decide"].values[jumps[-1]])
    return {
        "config": label,
        "benchmark": benchmark,
        "seed": seed,
        "avg_regret": round(float(ds["average_regret"]), 4),
        "time_int_regret": round(float(ds["time_integrated_regret"]), 4),
        "iters": int(ds["n_iterations"]),
        "size_min": int(sizes.min()) if sizes.size else -1,
        "size_med": float(np.median(sizes)) if sizes.size else -1,
        "size_final": int(ds["final_dataset_size"]),
        "lT_med": round(lt_med, 3),
        "lT_final": round(lt_fin, 3),
        "noise_med": round(nv_med, 4),
        "noise_final": round(nv_fin, 4),
        "noise_p10": round(float(np.quantile(noise, 0.1)), 6),
        "noise_p90": round(float(np.quantile(noise, 0.9)), 4),
        "resets": resets,
        "last_reset_t": round(last_reset, 1),
        "eps_med": round(eps_med, 5),
        "eps_final": round(eps_fin, 5),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", choices=sorted(GROUPS), default=None,
                        help="a predefined set of configurations and benchmarks")
    parser.add_argument("--configs", nargs="+", default=None, choices=sorted(CONFIGS))
    parser.add_argument("--benchmarks", nargs="+", default=None)
    parser.add_argument("--seeds", type=seeds, default=[0, 1, 2])
    parser.add_argument("--horizon", type=float, default=600.0)
    parser.add_argument("--profile", default="botorch-i9-laptop")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    configs, benchmarks = GROUPS[args.group] if args.group else ([], [])
    configs = args.configs or configs
    benchmarks = args.benchmarks or benchmarks
    if not configs or not benchmarks:
        parser.error("give --group or both --configs and --benchmarks")
    jobs = [(c, b, s, args.horizon, args.profile) for b in benchmarks for c in configs
            for s in args.seeds]
    rows = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for row in pool.map(one, jobs):
            rows.append(row)
            print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    print("\nsummary (means over seeds)")
    for b in benchmarks:
        for c in configs:
            group = [r for r in rows if r["config"] == c and r["benchmark"] == b]
            mean = {k: sum(r[k] for r in group) / len(group)
                    for k in ("avg_regret", "time_int_regret", "size_med")}
            print(f"{b:10s} {c:26s} avg_regret={mean['avg_regret']:.4g} "
                  f"time_int={mean['time_int_regret']:.4g} size_med={mean['size_med']:.1f} "
                  f"lT_final={[r['lT_final'] for r in group]} "
                  f"size_final={[r['size_final'] for r in group]}")


if __name__ == "__main__":
    main()
