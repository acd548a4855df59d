"""The public entry point: ``tvbo.simulate(benchmark, algorithm, seed=..., ...) -> Dataset``.

Names and meanings are those of the ``tvbo run`` command-line flags: both come from ONE
declaration, :data:`tvbo.runspec.RUN_SPEC` (``tests/test_runspec.py`` checks that every run option
is a keyword of :func:`simulate` with the declared default, and every keyword a run option), and
both check their values with :func:`tvbo.runspec.check_run_options`.
"""

from __future__ import annotations

import json
import platform
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import scipy
import scipy.linalg  # noqa: F401  (loads scipy's BLAS, so that threads= pins it too)
import simpy
import xarray as xr

from tvbo import plugins, registry
from tvbo.algorithms import Algorithm, has_expert
from tvbo.algorithms import make as make_algorithm
from tvbo.analysis.metrics import average_regret, time_integrated_regret
from tvbo.benchmarks import make as make_benchmark
from tvbo.benchmarks import normalise_name
from tvbo.benchmarks.oracle_table import (
    build_oracle_table,
    load_oracle_table,
    write_oracle_table,
)
from tvbo.blas_kernel import pinned_kernel, unpinned_message
from tvbo.results.code_record import code_of
from tvbo.results.schema import CODE_ATTRIBUTE, RUN_KEYS
from tvbo.runspec import RUN_SPEC, CheckedRun, check_run_options
from tvbo.sim.compute import make_compute_model
from tvbo.sim.engine import Engine
from tvbo.sim.parallel import parallel_label
from tvbo.sim.threads import limit_threads
from tvbo.version import __version__


def _versions() -> dict[str, str]:
    return {
        "tvbo": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "simpy": simpy.__version__,
        "xarray": xr.__version__,
        # the OpenBLAS kernel variable (tvbo.blas_kernel): results are bit-identical across
        # machines only under the same kernel
        "openblas_coretype": pinned_kernel(),
    }


def _make_benchmark(name: str, *, horizon: float | None, cost_table: str, cost: float | None,
                    noise_var: float | None, benchmark_options: dict | None):
    try:
        return make_benchmark(name, horizon=horizon, cost_table=cost_table, cost=cost,
                              noise_var=noise_var, **(benchmark_options or {}))
    except TypeError as err:  # an unknown option: the message names it
        raise ValueError(str(err)) from None


def write_oracle(
    benchmark: str,
    out: str | Path,
    *,
    horizon: float | None = None,
    cost_table: str = "metronome",
    cost: float | None = None,
    noise_var: float | None = None,
    benchmark_options: dict | None = None,
) -> Path:
    """Build the f*(t) table of one benchmark configuration and write it atomically to ``out``.

    The options are those of :func:`simulate` (same names, same meaning); a run with the same
    benchmark options accepts the table (``simulate(..., oracle_table=out)``). Returns ``out``.
    """
    _load_plugins_for(benchmark, None)
    check_run_options({"horizon": horizon, "cost_table": cost_table, "cost": cost,
                       "noise_var": noise_var, "benchmark_options": benchmark_options})
    bench = _make_benchmark(benchmark, horizon=horizon, cost_table=cost_table, cost=cost,
                            noise_var=noise_var, benchmark_options=benchmark_options)
    table = build_oracle_table(bench)
    # the code that built it, as a run records its own (informational, never checked on load;
    # `tvbo stale` compares it with the source)
    table.header[CODE_ATTRIBUTE] = code_of(bench)
    return write_oracle_table(table, out)


def _load_plugins_for(benchmark: object, algorithm: object) -> None:
    """A name that is not a built-in may be an installed plugin's: load the entry points."""
    builtin = {normalise_name(e.name) for e in registry.BENCHMARKS}
    if (isinstance(algorithm, str) and registry.entry("algorithms", algorithm) is None) or (
            isinstance(benchmark, str) and normalise_name(benchmark) not in builtin):
        plugins.load()


def simulate(
    benchmark,
    algorithm: str | Algorithm,
    *,
    seed: int = 0,
    compute: str = "counted",
    speed: float = 1.0,
    horizon: float | None = None,
    warmup: int = 15,
    profile: str | None = None,
    polynomial: Sequence[float] | None = None,
    cost_table: str = "metronome",
    cost: float | None = None,
    noise_var: float | None = None,
    time_grid_step: float = 1.0,
    stamp: str = "sample",
    lookahead: bool = False,
    benchmark_options: dict | None = None,
    algorithm_options: dict | None = None,
    max_iterations: int | None = None,
    expert_cost: float | None = None,
    expert_noise_var: float | None = None,
    evaluators: int = 1,
    overlap: bool = False,
    pending: str = "hallucinate",
    recommendation: str | None = None,
    cost_cv: float | None = None,
    progress: Callable[[float, float, int], None] | None = None,
    oracle_table: str | Path | None = None,
    threads: int | None = 1,
    confirm_large: bool = False,
) -> xr.Dataset:
    """Run one algorithm on one benchmark on the virtual clock and return the run Dataset.

    ``benchmark`` and ``algorithm`` are registry names (see ``tvbo list``) or instances.
    ``compute`` is ``counted`` (deterministic; ``profile`` names the hardware profile),
    ``measured`` or ``polynomial`` (``polynomial`` = coefficients ``a0, a1, ...`` of the compute
    part of R(n)); ``speed`` divides every compute time (what-if studies). ``horizon``, ``cost``
    and ``noise_var`` override the benchmark's table (``cost_table``: metronome | icml).
    ``expert_cost`` / ``expert_noise_var`` set the expert that answers side queries (SparQ-GP-UCB;
    default: the benchmark's cost and noise). ``oracle_table`` is a shared f*(t) table written by
    :func:`write_oracle` / ``tvbo oracle`` for this very benchmark configuration; it replaces the
    run's own (identical) build of the oracle grid, and a table built for anything else is
    rejected (``ValueError`` naming the field). ``threads`` limits the BLAS thread pools of numpy
    and scipy, and any loaded OpenMP runtime, for the duration of the call (default 1: many
    small dense problems run fastest, and never oversubscribe shared cores, with one thread;
    ``None`` leaves them alone); the previous counts are restored afterwards and ``os.environ``
    is never changed (see :mod:`tvbo.sim.threads`). A run whose estimated peak memory exceeds
    4 GiB, or with more ``threads`` than cores, is refused before any work unless
    ``confirm_large`` (:mod:`tvbo.resources`).
    ``evaluators`` (k asynchronous evaluators),
    ``overlap`` (compute the next query while evaluations run), ``pending`` (strategy for queries
    still running) and ``recommendation`` (``latest`` | ``posterior-mean``: record the regret of
    the recommendation current at each instant) are those of :mod:`tvbo.sim.parallel`; with
    k > 1 or overlap the run's ``algorithm`` key is labelled ``<name>@k<k>[+overlap]``
    (:func:`tvbo.sim.parallel.parallel_label`). ``cost_cv`` spreads the evaluation times (Gamma,
    mean c; :meth:`tvbo.sim.engine.Engine.evaluation_time`), so evaluations finish out of order.
    Bad input raises ``ValueError`` naming the problem.
    """
    arguments = dict(locals())  # first: exactly the keywords, every run option among them
    if not isinstance(benchmark, str) and not callable(getattr(benchmark, "describe", None)):
        raise ValueError(f"benchmark must be a benchmark name (see `tvbo list benchmarks`) or a "
                         f"benchmark instance, got {benchmark!r}")
    if not isinstance(algorithm, str | Algorithm):
        raise ValueError(f"algorithm must be an algorithm name (see `tvbo list algorithms`) or "
                         f"an Algorithm instance, got {algorithm!r}")
    run_options = {o.name: arguments[o.name] for o in RUN_SPEC}
    _load_plugins_for(benchmark, algorithm)
    built: list[Algorithm] = []

    def build_algorithm() -> Algorithm:
        """The algorithm, built once: by the parallel check (k > 1 or overlap) or below."""
        if not built:
            built.append(make_algorithm(algorithm, **(algorithm_options or {}))
                         if isinstance(algorithm, str) else algorithm)
        return built[0]

    # ONE check of every run option, shared with the CLI and the config validator: bad input
    # raises ValueError naming the keyword before any work (the benchmark is not built)
    run = check_run_options(run_options, algorithms={"algorithm": build_algorithm})
    return simulate_checked(run, progress=progress, algorithm=build_algorithm(), stacklevel=3)


_UNPINNED_CHECKED = False


def _warn_unpinned(stacklevel: int) -> None:
    """Warn once per process when OpenBLAS's kernel is not the pinned one (tvbo.blas_kernel).

    Checked once per process, warning or not: the answer cannot change after numpy has loaded
    OpenBLAS, and the check reads the CPU's flags (``/proc/cpuinfo``), which a job of many runs
    need not read again for each."""
    global _UNPINNED_CHECKED
    if _UNPINNED_CHECKED:
        return
    _UNPINNED_CHECKED = True
    message = unpinned_message()
    if message is not None:
        warnings.warn(message, RuntimeWarning, stacklevel=stacklevel)


def simulate_checked(run: CheckedRun, *, progress: Callable[[float, float, int], None] | None
                     = None, algorithm: Algorithm | None = None,
                     stacklevel: int = 2) -> xr.Dataset:
    """:func:`simulate` of options already checked in this process (``tvbo run`` checks its
    flags first, to refuse bad input before the output path is touched): nothing is judged
    again. ``algorithm``: the algorithm the check built (k > 1 or overlap), else it is built
    here from ``run["algorithm"]`` and ``run["algorithm_options"]``."""
    if not isinstance(run, CheckedRun):
        raise TypeError("simulate_checked takes the CheckedRun of tvbo.runspec."
                        "check_run_options; call tvbo.simulate with keywords instead")
    _warn_unpinned(stacklevel + 1)
    benchmark, seed, profile = run["benchmark"], run["seed"], run["profile"]
    horizon, cost_table, cost, noise_var = (run["horizon"], run["cost_table"], run["cost"],
                                            run["noise_var"])
    oracle_table, threads = run["oracle_table"], run["threads"]
    if algorithm is None:
        _load_plugins_for(benchmark, run["algorithm"])
        name = run["algorithm"]
        algorithm = (make_algorithm(name, **(run["algorithm_options"] or {}))
                     if isinstance(name, str) else name)
    # the algorithm's options were judged above, before the benchmark is built (milliseconds)
    expert = [k for k in ("expert_cost", "expert_noise_var") if run[k] is not None]
    if expert and not has_expert(algorithm):
        # a warning, not an error: a SparQ campaign passes its expert options to every algorithm
        # it compares (the config validator refuses them when no algorithm asks the expert)
        warnings.warn(f"{' and '.join(expert)} set the expert that answers side queries, but "
                      f"{algorithm.name!r} asks none (only SparQ-GP-UCB does): ignored",
                      UserWarning, stacklevel=stacklevel)
    model = make_compute_model(run["compute"], speed=run["speed"], profile=profile,
                               polynomial=run["polynomial"])
    options = run.engine_options()
    if isinstance(benchmark, str):
        benchmark_options = run["benchmark_options"]
        bench = _make_benchmark(benchmark, horizon=horizon, cost_table=cost_table, cost=cost,
                                noise_var=noise_var, benchmark_options=benchmark_options)
    else:
        bench = benchmark
    table_record = None
    if oracle_table is not None:
        header = load_oracle_table(bench, oracle_table).header
        table_record = {k: header[k] for k in ("settings_sha256", "data_sha256")}
    algo = algorithm
    replayed = getattr(model, "algorithm", "")  # a response-time model describes ONE algorithm
    if replayed and algo.name and replayed != algo.name:
        raise ValueError(f"profile {str(profile)!r} is the response-time model of {replayed!r}, "
                         f"not of {algo.name!r}: calibrate {algo.name!r} from its own measured "
                         "runs (tvbo calibrate --from-runs)")

    engine = Engine(bench, algo, model, seed=int(seed), options=options, progress=progress)
    with limit_threads(threads):  # after the imports above: their BLAS is loaded
        recorder = engine.run()
        grid = engine.time_grid()
        ds = xr.merge([recorder.iteration_dataset(), recorder.time_dataset(bench, grid),
                       recorder.fit_dataset()], compat="no_conflicts", join="outer")

    avg = average_regret(ds["regret"].values, ds["is_warmup"].values)
    tir = time_integrated_regret(grid, ds["regret_held"].values, engine.horizon)
    ds["average_regret"] = ((), avg, {"long_name": "mean query regret after warm-up"})
    ds["time_integrated_regret"] = ((), tir, {"long_name": "(1/H) * integral of held regret"})
    if "regret_current" in ds:
        tir_current = time_integrated_regret(grid, ds["regret_current"].values, engine.horizon)
        ds["time_integrated_regret_current"] = (
            (), tir_current,
            {"long_name": "(1/H) * integral of the regret of the current recommendation"})
    if "hidden_compute" in ds:
        total = float(ds["compute_total"].sum())
        hidden = float(ds["hidden_compute"].sum()) / total if total > 0 else 0.0
        ds["hidden_compute_fraction"] = (
            (), hidden, {"long_name": "share of all compute hidden behind evaluation"})
    ds["n_iterations"] = ((), len(recorder))
    ds["final_dataset_size"] = ((), recorder.dataset_size[-1] if len(recorder) else 0)

    config = {
        "benchmark": bench.describe(),
        "algorithm": {"name": algo.name, "options": algo.options()},
        "seed": int(seed),
        "compute": model.describe(),
        "engine": options.__dict__,
        "cost_table": cost_table,
    }
    if table_record is not None:  # provenance; the values are those the run would have built
        config["oracle_table"] = table_record
    plugin = plugins.record(algo.name)
    if plugin is not None:  # provenance, and the label reports show without loading the plugin
        config["algorithm"]["plugin"] = plugin
    ds.attrs.update(
        title=f"tvbo run: {algo.name} on {bench.name}, seed {seed}",
        Conventions="CF-1.11",
        tvbo_version=__version__,
        config_json=json.dumps(config, default=float),
        compute_model=model.name,
        compute_model_json=json.dumps(model.describe(), default=float),
        versions_json=json.dumps(_versions()),
        horizon=float(engine.horizon),
        warmup=int(options.warmup),
        cost=float(bench.cost),
        noise_var=float(bench.noise_var),
        dimension=int(bench.d),
        average_regret=float(avg),
        time_integrated_regret=float(tir),
        n_iterations=int(len(recorder)),
        # the GP's escalation count, as the algorithm reported it in its last recorded state
        jitter_events=int(recorder.state[-1].get("jitter_events", 0)) if len(recorder) else 0,
    )
    # the code the run executed: tvbo's modules and those of a plugin's own package, as loaded
    # now (tvbo.results.code_record; `tvbo stale` compares it with the source later)
    ds.attrs[CODE_ATTRIBUTE] = json.dumps(code_of(algo, bench), separators=(",", ":"))
    label = parallel_label(algo.name, options.evaluators, options.overlap)
    keys = {"benchmark": [bench.name], "algorithm": [label], "seed": [int(seed)],
            "speed": [float(model.speed)]}
    assert tuple(keys) == RUN_KEYS
    return ds.expand_dims(keys)
