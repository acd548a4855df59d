"""Resource guards: a run's memory and threads estimated BEFORE any work (issue 24 item 3).

``--horizon 1e12`` used to die after the run asking for 7.28 TiB, ``--time-grid-step 1e-9`` for
74.5 GiB, and ``--threads 100000`` started 127 BLAS threads on 2 cores. :func:`estimate_run`
estimates the peak resident memory of one run from the sizes it will allocate:

* the time grid (``horizon / time_grid_step + 1`` instants): the held and current regret,
  f* on the grid, the configuration in force (d coordinates) and the benchmark's evaluation of
  it, and the copies xarray and the netCDF writer make of them: :data:`BYTES_PER_GRID_TIME`
  (+ :data:`BYTES_PER_GRID_TIME_DIM` per input dimension, read from the static catalogue when
  known, else :data:`DEFAULT_DIMENSION`);
* the oracle's f*(t) grid (``horizon / oracle_grid_step + 1`` times, argmax and value):
  :data:`BYTES_PER_ORACLE_TIME`;
* the recorded iterations, at most ``max_iterations`` or ``horizon / cost`` (one per
  evaluation), :data:`BYTES_PER_ITERATION` each; unbounded (cost 0, no cap) they are not
  counted -- the compute time of each iteration then bounds them, which is not known before
  the run;
* the interpreter with numpy, scipy, xarray and simpy loaded: :data:`BASE_BYTES`.

The constants were fitted to peak RSS measured on this project's 2-core reference machine
(``benchmarks/memory_estimate.py`` prints estimate and measurement for three run sizes; the slow
test of ``tests/test_resources.py`` keeps the estimate within a factor of 2 of the measured peak).
The time grid term dominates only for fine grids, whose runs are slow for another reason (f* is
refined at many grid times); at the sizes a test can afford, the interpreter dominates.

A run whose estimate exceeds :data:`MEMORY_LIMIT` (4 GiB: a laptop runs several at once) is
refused before any work, with the estimate in the message, unless ``confirm_large`` is set
(``tvbo run --confirm-large``, ``simulate(confirm_large=True)``, config ``confirm_large:
true``). Threads beyond the machine's cores are refused the same way.

Layering: standard library only; the static catalogue gives the dimension.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tvbo import registry

__all__ = [
    "BASE_BYTES",
    "MEMORY_LIMIT",
    "RunEstimate",
    "check_resources",
    "cores",
    "estimate_run",
]

#: the refusal threshold of one run's estimated peak memory (docs/how-to/check-config.md)
MEMORY_LIMIT = 4 * 2**30
#: interpreter + numpy/scipy/xarray/simpy + tvbo's modules (measured peak RSS of a tiny run)
BASE_BYTES = 170 * 2**20
#: bytes per instant of the time grid, plus per input dimension (fitted, see the docstring)
BYTES_PER_GRID_TIME = 400
BYTES_PER_GRID_TIME_DIM = 48
#: bytes per time of the oracle's grid (times, f*, argmax in d coordinates, and its table)
BYTES_PER_ORACLE_TIME = 160
#: bytes per recorded iteration (its columns, work counts, fit records; a generous bound)
BYTES_PER_ITERATION = 4096
#: the dimension assumed when the benchmark's is not known without building it
DEFAULT_DIMENSION = 6
#: a benchmark's default horizon (the papers' 600 s) when none is given
DEFAULT_HORIZON = 600.0
#: the oracle's default grid step (s)
DEFAULT_ORACLE_STEP = 1.0


@dataclass(frozen=True)
class RunEstimate:
    """The estimated peak memory of one run and what it is made of."""

    bytes: int
    grid_times: float
    oracle_times: float
    iterations: float

    def describe(self) -> str:
        """'12.3 GiB (time grid of 6e+08 instants, oracle grid of 601 times, ...)'."""
        parts = [f"time grid of {self.grid_times:.3g} instants",
                 f"oracle grid of {self.oracle_times:.3g} times"]
        if self.iterations:
            parts.append(f"up to {self.iterations:.3g} iterations")
        return f"{_size(self.bytes)} ({', '.join(parts)})"


def _size(n: float) -> str:
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n / 2**10:.3g} KiB"


def cores() -> int:
    """The cores this process may use (its affinity mask, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _dimension(benchmark: Any) -> int:
    if not isinstance(benchmark, str):
        return int(getattr(benchmark, "d", DEFAULT_DIMENSION))
    entry = registry.entry("benchmarks", benchmark)
    d = getattr(entry, "dimension", None) if entry is not None else None
    return int(d) if isinstance(d, int) else DEFAULT_DIMENSION


def _number(value: Any, default: float) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    return float(value) if ok and math.isfinite(value) else default


def estimate_run(options: Mapping[str, Any]) -> RunEstimate:
    """The peak memory of one run with ``options`` (API names: horizon, time_grid_step,
    benchmark, benchmark_options, cost, max_iterations); absent values take their defaults."""
    horizon = _number(options.get("horizon"), DEFAULT_HORIZON)
    step = _number(options.get("time_grid_step"), 1.0)
    bench_options = options.get("benchmark_options") or {}
    oracle_step = _number(bench_options.get("oracle_grid_step")
                          if isinstance(bench_options, Mapping) else None, DEFAULT_ORACLE_STEP)
    d = _dimension(options.get("benchmark"))
    grid = horizon / step + 2
    oracle = horizon / oracle_step + 2
    cap = options.get("max_iterations")
    cost = options.get("cost")
    iterations = 0.0
    if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0:
        iterations = float(cap)
    elif isinstance(cost, int | float) and not isinstance(cost, bool) and cost > 0:
        iterations = horizon / float(cost)
    total = (BASE_BYTES + grid * (BYTES_PER_GRID_TIME + BYTES_PER_GRID_TIME_DIM * d)
             + oracle * BYTES_PER_ORACLE_TIME * (1 + d) / 3 + iterations * BYTES_PER_ITERATION)
    return RunEstimate(int(min(total, 2**62)), grid, oracle, iterations)


def check_resources(options: Mapping[str, Any], *, names: Mapping[str, str],
                    where: str = "") -> None:
    """Refuse a run beyond :data:`MEMORY_LIMIT` or with more threads than cores, unless
    ``options['confirm_large']``; ``names`` spells the fields as the caller does (``--flag``,
    keyword or config key). Raises ``ValueError`` with one line: the estimate and the flag."""
    if options.get("confirm_large"):
        return
    flag = names.get("confirm_large", "confirm_large")
    threads = options.get("threads")
    if isinstance(threads, int) and not isinstance(threads, bool) and threads > cores():
        raise ValueError(
            f"{names.get('threads', 'threads')} {threads} exceeds the {cores()} cores of this "
            f"machine: more BLAS threads than cores only slow a run down; give at most "
            f"{cores()} (or {flag} to start them anyway)")
    estimate = estimate_run(options)
    if estimate.bytes > MEMORY_LIMIT:
        sizes = ", ".join(f"{names.get(k, k)} {options[k]:g}" for k in ("horizon",
                          "time_grid_step") if isinstance(options.get(k), int | float))
        raise ValueError(
            f"{where}this run would need about {estimate.describe()} of memory, more than the "
            f"{_size(MEMORY_LIMIT)} limit of one run ({sizes}); choose a shorter horizon or a "
            f"coarser grid step, or give {flag} to run it anyway")
