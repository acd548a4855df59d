"""The fixed small grid that guards refactorings: every algorithm x 3 benchmarks x 2 seeds.

A refactoring of the model, acquisition or algorithm layers must not change results. This module
declares one small grid and digests every run's data variables (dimensions, dtype and bytes), so
``tests/testing/test_preset_digests.py`` can compare today's run files with the digests recorded in
``tests/fixtures/preset_digests.json`` before the refactoring started. A deliberate change (a bug
fixed) is re-recorded with ``python scripts/record_preset_digests.py`` and listed in the commit.

The grid is small so the test takes seconds: the ``counted`` compute model (deterministic on any
machine) priced with the ``botorch-i9-laptop`` profile, 4 warm-up queries and at most 25
iterations. The three benchmarks cover the three kinds of objective the algorithms meet: a
continuous spatio-temporal function on the clock (Hartmann-3, cost shortened so that 15 s hold
about 25 queries), the candidate-prior problem of PE-GP-UCB's paper (``hills``) and SparQ-GP-UCB's
moving bump, on which the expert answers side queries.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from tvbo.api import simulate
from tvbo.registry import names

#: the benchmarks of the grid and the settings that keep each run short
BENCHMARKS: dict[str, dict[str, Any]] = {
    "hartmann3": {"horizon": 15.0, "cost": 0.5},
    "hills": {"horizon": 20.0},
    "moving-bump": {"horizon": 20.0},
}
SEEDS: tuple[int, ...] = (0, 1)
WARMUP = 4
MAX_ITERATIONS = 25
PROFILE = "botorch-i9-laptop"


@dataclass(frozen=True)
class GridRun:
    """One run of the grid, named ``benchmark/algorithm/seed`` in the digest file."""

    benchmark: str
    algorithm: str
    seed: int

    @property
    def key(self) -> str:
        return f"{self.benchmark}/{self.algorithm}/{self.seed}"


def grid(algorithms: list[str] | None = None) -> list[GridRun]:
    """Every run of the grid; ``algorithms`` defaults to every registered algorithm."""
    if algorithms is None:
        algorithms = names("algorithms")
    return [
        GridRun(benchmark, algorithm, seed)
        for algorithm in algorithms
        for benchmark in BENCHMARKS
        for seed in SEEDS
    ]


def digest_dataset(ds) -> dict[str, str]:
    """sha256 (first 16 hex digits) of each data variable's dims, dtype and bytes."""
    out: dict[str, str] = {}
    for name in sorted(ds.data_vars):
        values = ds[name]
        h = hashlib.sha256(
            str(values.dims).encode()
            + str(values.dtype).encode()
            + np.ascontiguousarray(values.values).tobytes()
        )
        out[name] = h.hexdigest()[:16]
    return out


def run(entry: GridRun):
    """The run file (an xarray Dataset) of one grid entry."""
    return simulate(
        entry.benchmark,
        entry.algorithm,
        seed=entry.seed,
        warmup=WARMUP,
        profile=PROFILE,
        max_iterations=MAX_ITERATIONS,
        **BENCHMARKS[entry.benchmark],
    )
