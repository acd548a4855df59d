"""Small synthetic run Datasets that follow :mod:`tvbo.results.schema`, for tests.

The numbers are random (seeded) but internally consistent: times follow the engine's order
(decide <= query <= sample <= available <= ingested), regret = f_star - f >= 0, and the time
variables are the held (step-function) values of the per-iteration ones. Summary variables are
computed by hand here (numpy), not with tvbo.analysis, so tests can compare the two.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import xarray as xr

from tvbo.results.io import write_run

#: benchmark -> (spatial dimension d, horizon H): different d and H on purpose
BENCHMARKS: dict[str, tuple[int, float]] = {"shekel": (4, 60.0), "eggholder": (2, 40.0)}
ALGORITHMS: tuple[str, ...] = ("bolt", "gp_ucb")
SEEDS: tuple[int, ...] = (0, 1, 2)
N_TIME = 41
WARMUP = 4


def make_run(
    benchmark: str = "shekel",
    algorithm: str = "bolt",
    seed: int = 0,
    speed: float = 1.0,
    *,
    n_iterations: int | None = None,
) -> xr.Dataset:
    """One run with ragged length (``n_iterations`` drawn from the seed unless given)."""
    d, horizon = BENCHMARKS[benchmark]
    key = (sorted(BENCHMARKS).index(benchmark), ALGORITHMS.index(algorithm), seed, int(speed * 10))
    rng = np.random.default_rng(key)
    n = int(n_iterations if n_iterations is not None else rng.integers(12, 20))
    cost = 1.0
    compute_fit = rng.uniform(0.05, 0.4, n) / speed
    compute_acq = rng.uniform(0.05, 0.3, n) / speed
    compute_total = compute_fit + compute_acq
    response = cost + compute_total
    t_decide = np.concatenate([[0.0], np.cumsum(response)[:-1]]) + 0.5
    t_query = t_decide + compute_acq
    t_sample = t_query
    t_available = t_sample + cost
    t_ingested = t_available + compute_fit
    f_star = 2.0 + np.sin(t_sample / 10.0)
    regret = rng.exponential(1.0, n) * (1.0 + (algorithm == "gp_ucb"))
    f = f_star - regret
    y = f + rng.normal(0.0, 0.1, n)
    is_warmup = (np.arange(n) < WARMUP).astype(np.int8)
    dataset_size = np.minimum(np.arange(1, n + 1), 10 if algorithm == "bolt" else n)

    time = np.linspace(0.0, horizon, N_TIME)
    index = np.searchsorted(t_sample, time, side="right") - 1
    held = index >= 0
    f_star_grid = 2.0 + np.sin(time / 10.0)
    f_held = np.where(held, f_star_grid - regret[np.maximum(index, 0)], np.nan)
    size_index = np.searchsorted(t_ingested, time, side="right") - 1
    size_held = np.where(size_index >= 0, dataset_size[np.maximum(size_index, 0)], np.nan)
    regret_held = f_star_grid - f_held

    post = is_warmup == 0
    finite = np.isfinite(regret_held)
    tir = np.trapezoid(regret_held[finite], time[finite]) / (time[finite][-1] - time[finite][0])

    ds = xr.Dataset(
        {
            "t_decide": ("iteration", t_decide),
            "t_query": ("iteration", t_query),
            "t_sample": ("iteration", t_sample),
            "t_available": ("iteration", t_available),
            "t_ingested": ("iteration", t_ingested),
            "response_time": ("iteration", response),
            "x": (("iteration", "dim"), rng.uniform(0.0, 1.0, (n, d))),
            "y": ("iteration", y),
            "f": ("iteration", f),
            "f_star": ("iteration", f_star),
            "regret": ("iteration", regret),
            "is_warmup": ("iteration", is_warmup),
            "dataset_size": ("iteration", dataset_size.astype(np.int64)),
            "compute_total": ("iteration", compute_total),
            "compute_fit": ("iteration", compute_fit),
            "compute_acquisition": ("iteration", compute_acq),
            "state_lengthscale": ("iteration", rng.uniform(0.1, 1.0, n)),
            "f_star_grid": ("time", f_star_grid),
            "f_held": ("time", f_held),
            "regret_held": ("time", regret_held),
            "dataset_size_held": ("time", size_held),
            "average_regret": ((), float(np.mean(regret[post]))),
            "time_integrated_regret": ((), float(tir)),
            "n_iterations": ((), n),
            "final_dataset_size": ((), int(dataset_size[-1])),
        },
        coords={"iteration": np.arange(n), "dim": np.arange(d), "time": time},
    )
    if algorithm == "bolt":  # algorithm-specific state: absent from the other algorithm's runs
        ds["state_n_star"] = ("iteration", rng.integers(5, 15, n).astype(np.int64))
    ds["time"].attrs["units"] = "s"
    ds["regret"].attrs.update(units="1", long_name="query regret f_star - f (noiseless)")
    config = {"benchmark": benchmark, "algorithm": algorithm, "seed": seed, "speed": speed}
    ds.attrs = {
        "tvbo_version": "0.1.0",
        "config_json": json.dumps(config, sort_keys=True),
        "compute_model": "counted",
        "compute_model_json": json.dumps({"profile": "reference"}),
        "versions_json": json.dumps({"numpy": np.__version__}),
        "horizon": horizon,
        "warmup": WARMUP,
        "cost": cost,
        "noise_var": 0.01,
        "dimension": d,
        "average_regret": float(np.mean(regret[post])),
        "time_integrated_regret": float(tir),
        "n_iterations": n,
        "jitter_events": 0,
    }
    return ds.expand_dims(benchmark=[benchmark], algorithm=[algorithm], seed=[seed], speed=[speed])


def write_fake_campaign(
    directory: Path,
    *,
    skip: set[tuple[str, str, int]] | frozenset = frozenset(),
    speeds: tuple[float, ...] = (1.0,),
) -> list[Path]:
    """Write every (benchmark, algorithm, seed, speed) run except those in ``skip``."""
    paths = []
    for benchmark in BENCHMARKS:
        for algorithm in ALGORITHMS:
            for seed in SEEDS:
                for speed in speeds:
                    if (benchmark, algorithm, seed) in skip:
                        continue
                    name = f"{benchmark}_{algorithm}_{seed}_{speed:g}.nc"
                    paths.append(
                        write_run(make_run(benchmark, algorithm, seed, speed), directory / name)
                    )
    return paths


def with_fit_records(run: xr.Dataset, fits: list[dict], *, every: float = 1.0) -> xr.Dataset:
    """``run`` plus the fit records ``fits`` as the recorder writes them: one fit per iteration
    from iteration 4 on, at virtual times ``every``, ``2 every``, ... (fit-health tests)."""
    from tvbo.sim.recorder import Recorder

    recorder = Recorder(d=run.sizes["dim"])
    for i, record in enumerate(fits):
        recorder.add_fits([record], iteration=4 + i, call="ingest", time=every * (i + 1))
    keys = {k: run[k].values for k in ("benchmark", "algorithm", "seed", "speed")}
    return xr.merge([run, recorder.fit_dataset().expand_dims(keys)])
