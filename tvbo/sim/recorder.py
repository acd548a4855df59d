"""Collects every instant and quantity of a run, then lays it out as the run Dataset.

The layout is the one of :mod:`tvbo.results.schema`; this module is its only writer.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np
import xarray as xr

from tvbo.results.schema import (
    COMPUTE_PREFIX,
    FIT_DIMENSION,
    FIT_PREFIX,
    FIT_VARIABLES,
    ITERATION_VARIABLES,
    STATE_PREFIX,
    TIME_VARIABLES,
)

#: attributes of the parallel loop's per-iteration extras (tvbo.sim.parallel)
_EXTRA_ATTRS: dict[str, tuple[str, str]] = {
    "hidden_compute": ("s", "compute of this query (proposal + ingestion) done while an "
                            "evaluator was busy: hidden behind evaluation"),
    "pending_at_decide": ("1", "queries outstanding when this query was proposed"),
    "evaluators_busy": ("1", "evaluators busy at this query's sample time (itself included)"),
    "x_recommended": ("1", "recommendation current after this iteration"),
    "t_recommended": ("s", "virtual time from which the recommendation is current"),
}
_SCALARS = ("t_decide", "t_query", "t_sample", "t_available", "t_ingested", "y", "f", "f_star")


class Recorder:
    """Per-iteration records of one run."""

    def __init__(self, d: int) -> None:
        self.d = d
        self.columns: dict[str, list[float]] = {name: [] for name in _SCALARS}
        self.x: list[np.ndarray] = []
        self.is_warmup: list[int] = []
        self.dataset_size: list[int] = []
        self.compute: list[dict[str, float]] = []
        self.state: list[dict[str, float]] = []
        self.expert_queries: list[int] = []
        self.expert_time: list[float] = []
        #: hyperparameter-fit records (flat dicts), stamped with iteration, call and time
        self.fits: list[dict[str, object]] = []
        #: per-iteration extras of the parallel loop (hidden_compute, pending, ...)
        self.extra: list[dict[str, float]] = []
        #: (x, since) of the recommendation current after each iteration, when recorded
        self.recommended: list[tuple[np.ndarray, float]] = []
        self._cpu_start = time.process_time()
        self._wall_start = time.perf_counter()

    def add(self, *, x: np.ndarray, is_warmup: bool, dataset_size: int,
            compute: Mapping[str, float], state: Mapping[str, float], expert_queries: int = 0,
            expert_time: float = 0.0, extra: Mapping[str, float] | None = None,
            recommendation: tuple[np.ndarray, float] | None = None,
            **scalars: float) -> None:
        for name in _SCALARS:
            self.columns[name].append(float(scalars[name]))
        self.x.append(np.asarray(x, float).copy())
        self.is_warmup.append(int(is_warmup))
        self.dataset_size.append(int(dataset_size))
        self.compute.append({k: float(v) for k, v in compute.items()})
        self.state.append({k: float(v) for k, v in state.items()})
        self.expert_queries.append(int(expert_queries))
        self.expert_time.append(float(expert_time))
        if extra is not None:
            self.extra.append({k: float(v) for k, v in extra.items()})
        if recommendation is not None:
            self.recommended.append((np.asarray(recommendation[0], float).copy(),
                                     float(recommendation[1])))

    def add_many(self, *, x: np.ndarray, is_warmup: np.ndarray, dataset_size: list[int],
                 compute: Mapping[str, float], state: list[Mapping[str, float]],
                 recommendation: list[tuple[np.ndarray, float] | None] | None = None,
                 **scalars: np.ndarray) -> None:
        """Several iterations at once, the records :meth:`add` keeps for each (one ``compute``
        for all; no expert queries, no parallel extras). Why: the open-loop path of the floor
        rows records up to 180,001 iterations a run, where a call per iteration cost a tenth of
        the run."""
        n = len(x)
        for name in _SCALARS:
            self.columns[name].extend(np.asarray(scalars[name], float).tolist())
        self.x.extend(np.array(x, float).reshape(n, self.d))
        self.is_warmup.extend(np.asarray(is_warmup, int).tolist())
        self.dataset_size.extend(int(v) for v in dataset_size)
        charges = {k: float(v) for k, v in compute.items()}
        self.compute.extend(dict(charges) for _ in range(n))
        self.state.extend({k: float(v) for k, v in s.items()} for s in state)
        self.expert_queries.extend([0] * n)
        self.expert_time.extend([0.0] * n)
        if recommendation is not None:
            self.recommended.extend((np.asarray(r[0], float).copy(), float(r[1]))
                                    for r in recommendation if r is not None)

    def add_fits(self, records: list[dict[str, object]], *, iteration: int, call: str,
                 time: float) -> None:
        """Keep the fit records of one algorithm call (see :meth:`fit_dataset`)."""
        for record in records:
            self.fits.append({**record, "iteration": int(iteration), "call": str(call),
                              "time": float(time)})

    def __len__(self) -> int:
        return len(self.x)

    # -- layout ----------------------------------------------------------------------------------
    def iteration_dataset(self) -> xr.Dataset:
        """Variables along ``iteration`` (and ``dim``)."""
        n = len(self)
        data: dict[str, tuple] = {}
        for name in _SCALARS:
            data[name] = (("iteration",), np.asarray(self.columns[name], float))
        data["x"] = (("iteration", "dim"), np.asarray(self.x, float).reshape(n, self.d))
        data["is_warmup"] = (("iteration",), np.asarray(self.is_warmup, np.int8))
        data["dataset_size"] = (("iteration",), np.asarray(self.dataset_size, np.int64))
        data["regret"] = (("iteration",), data["f_star"][1] - data["f"][1])
        data["response_time"] = (("iteration",), data["t_ingested"][1] - data["t_decide"][1])
        phases = sorted({p for c in self.compute for p in c})
        total = np.zeros(n)
        for p in phases:
            values = np.asarray([c.get(p, 0.0) for c in self.compute], float)
            data[f"{COMPUTE_PREFIX}{p}"] = (("iteration",), values)
            total += values
        data["compute_total"] = (("iteration",), total)
        if any(self.expert_queries):
            data["expert_queries"] = (("iteration",), np.asarray(self.expert_queries, np.int64))
            data["expert_time"] = (("iteration",), np.asarray(self.expert_time, float))
        for key in sorted({k for e in self.extra for k in e}):
            values = np.asarray([e.get(key, np.nan) for e in self.extra], float)
            data[key] = (("iteration",), values)
        if self.recommended:
            data["x_recommended"] = (("iteration", "dim"), np.asarray(
                [r[0] for r in self.recommended], float).reshape(n, self.d))
            data["t_recommended"] = (("iteration",), np.asarray(
                [r[1] for r in self.recommended], float))
        for key in sorted({k for s in self.state for k in s}):
            values = np.asarray([s.get(key, np.nan) for s in self.state], float)
            data[f"{STATE_PREFIX}{key}"] = (("iteration",), values)
        ds = xr.Dataset(data, coords={"iteration": np.arange(n), "dim": np.arange(self.d)})
        for name, (_, units, long_name) in ITERATION_VARIABLES.items():
            ds[name].attrs.update(units=units, long_name=long_name)
        for name in ds.data_vars:
            if name.startswith(COMPUTE_PREFIX) and name != "compute_total":
                ds[name].attrs.update(units="s", long_name=f"virtual compute time of phase "
                                      f"'{name[len(COMPUTE_PREFIX):]}'")
            elif name in _EXTRA_ATTRS:
                ds[name].attrs.update(zip(("units", "long_name"), _EXTRA_ATTRS[name], strict=True))
            elif name.startswith(STATE_PREFIX):
                ds[name].attrs.update(long_name=f"algorithm state '{name[len(STATE_PREFIX):]}'")
        # the first Dataset of the run's merge: its attributes become the run file's
        # the run's own cost on this machine: attributes only (tvbo.results.schema.COST_ATTRIBUTES)
        ds.attrs.update(run_cpu_seconds=float(time.process_time() - self._cpu_start),
                        run_wall_seconds=float(time.perf_counter() - self._wall_start))
        return ds

    def fit_dataset(self) -> xr.Dataset:
        """Variables along ``fit``: one entry per hyperparameter fit, in the order they ran.

        Every field of the records becomes ``fit_<field>``; the fields of
        :data:`~tvbo.results.schema.FIT_VARIABLES` always exist (length 0 without fits), others
        (algorithm-specific, e.g. ``fit_epsilon``) only when some record has them. A field a
        record lacks is NaN (numbers), "" (strings) or 0 (``*_at_lower``/``*_at_upper`` flags).
        A field holding a 1-d array (per-dimension lengthscales) is laid out along ``(fit, dim)``.
        """
        n = len(self.fits)
        core = [name[len(FIT_PREFIX):] for name in FIT_VARIABLES]
        fields = list(core)
        for record in self.fits:
            fields += [k for k in record if k not in fields]
        data: dict[str, tuple] = {}
        for field in fields:
            values = [record.get(field) for record in self.fits]
            present = [v for v in values if v is not None]
            spec = FIT_VARIABLES.get(FIT_PREFIX + field)
            kind = spec[1] if spec else None
            if kind is None:
                if present and all(isinstance(v, str) for v in present):
                    kind = "str"
                elif field.endswith(("_at_lower", "_at_upper")):
                    kind = "flag"
                elif present and all(isinstance(v, int | np.integer) for v in present) and \
                        len(present) == n:
                    kind = "int"
                else:
                    kind = "float"
            if any(np.ndim(v) > 0 for v in present):
                data[FIT_PREFIX + field] = ((FIT_DIMENSION, "dim"), np.array(
                    [np.broadcast_to(np.nan if v is None else np.asarray(v, float), (self.d,))
                     for v in values], float).reshape(n, self.d))
                continue
            if kind == "str":
                array = np.array(["" if v is None else str(v) for v in values], dtype=str)
            elif kind == "flag":
                array = np.array([0 if v is None else int(v) for v in values], np.int8)
            elif kind == "int" and len(present) == n:
                array = np.array(values, np.int64)
            else:
                array = np.array([np.nan if v is None else float(v) for v in values], float)
            data[FIT_PREFIX + field] = ((FIT_DIMENSION,), array)
        ds = xr.Dataset(data, coords={FIT_DIMENSION: np.arange(n)})
        for name in ds.data_vars:
            spec = FIT_VARIABLES.get(name)
            if spec is not None:
                ds[name].attrs.update(units=spec[2], long_name=spec[3])
            else:
                ds[name].attrs.update(long_name=f"fit-health field '{name[len(FIT_PREFIX):]}'")
        return ds

    def _current_regret(self, benchmark, grid: np.ndarray, f_star: np.ndarray) -> xr.Dataset:
        """Regret of the recommendation current at each grid time (k evaluators vs one, fairly).

        The recommendation after iteration i is current from ``t_recommended[i]`` until the next
        one (iterations are in completion order, so these times never decrease). Before the first
        there is none (NaN). ``f_star`` is refined where the recommendation beats it.
        """
        since = np.asarray([r[1] for r in self.recommended], float)
        X = np.asarray([r[0] for r in self.recommended], float).reshape(-1, self.d)
        idx = np.searchsorted(since, grid, side="right") - 1
        f_rec = np.full(len(grid), np.nan)
        f_star = np.array(f_star, float)
        ok = idx >= 0
        if ok.any():
            f_rec[ok] = np.asarray(benchmark(X[idx[ok]], grid[ok]), float).reshape(-1)
            for j in np.flatnonzero(ok & (f_rec > f_star)):
                f_star[j] = benchmark.refine_f_star(grid[j], X[idx[j]])
        ds = xr.Dataset({"f_current": (("time",), f_rec),
                         "regret_current": (("time",), f_star - f_rec)}, coords={"time": grid})
        ds["regret_current"].attrs.update(
            long_name="regret of the recommendation current at each time", units="1")
        return ds

    def time_dataset(self, benchmark, grid: np.ndarray) -> xr.Dataset:
        """Variables on the time grid: the configuration in force and its regret.

        The configuration in force at time t is the last query sampled at or before t; before
        the first sample there is none (NaN). Where the configuration in force beats the cached
        oracle, the oracle is refined from it, so held regret is never spuriously negative.
        """
        t_sample = np.asarray(self.columns["t_sample"], float)
        t_ingested = np.asarray(self.columns["t_ingested"], float)
        X = np.asarray(self.x, float).reshape(len(self), self.d)
        f_star = np.asarray(benchmark.f_star(grid), float).reshape(len(grid))
        held = np.searchsorted(t_sample, grid, side="right") - 1
        f_held = np.full(len(grid), np.nan)
        ok = held >= 0
        if ok.any():
            f_held[ok] = np.asarray(benchmark(X[held[ok]], grid[ok]), float).reshape(-1)
            better = ok & (f_held > f_star)
            for j in np.flatnonzero(better):
                f_star[j] = benchmark.refine_f_star(grid[j], X[held[j]])
        size_idx = np.searchsorted(t_ingested, grid, side="right") - 1
        sizes = np.asarray(self.dataset_size, float)
        size_held = np.where(size_idx >= 0, sizes[np.maximum(size_idx, 0)] if len(sizes) else 0, 0)
        ds = xr.Dataset(
            {
                "f_star_grid": (("time",), f_star),
                "f_held": (("time",), f_held),
                "regret_held": (("time",), f_star - f_held),
                "dataset_size_held": (("time",), size_held.astype(float)),
            },
            coords={"time": grid},
        )
        if self.recommended:
            ds = ds.merge(self._current_regret(benchmark, grid, ds["f_star_grid"].values))
        ds["time"].attrs.update(units="s", long_name="virtual time")
        for name, (_, units, long_name) in TIME_VARIABLES.items():
            ds[name].attrs.update(units=units, long_name=long_name)
        return ds
