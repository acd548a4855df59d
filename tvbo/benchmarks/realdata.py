"""Real sensor data as time-varying benchmarks: a continuous interpolant and a discrete choice.

A :class:`SensorField` holds the readings of ``n`` sensors at ``m`` equally spaced data times
(Intel lab temperature in 10-minute bins, daily ozone per site), the sensors' coordinates in
[0, 1]^2 and in their original units, and the provenance of the file they came from. Two
benchmark shapes are built on it (the data-specific loaders and factories live in
:mod:`tvbo.benchmarks.temperature` and :mod:`tvbo.benchmarks.ozone`):

:class:`InterpolatedField` (continuous, d = 2; BOLT's "Temperature")
    In time, each sensor's series is interpolated LINEARLY between consecutive data times. In
    space, the sensor values at that time are blended by inverse-distance weighting (Shepard's
    global method) with power ``p > 0``:

        f(x, t) = sum_i w_i(x) v_i(t) / sum_i w_i(x),   w_i(x) = ||x - x_i||^(-p),

    and f(x_i, t) = v_i(t) at a sensor. Why the oracle is EXACT: away from the sensors every
    weight is positive, so f(x, t) is a convex combination of the v_i(t) and
    f(x, t) <= max_i v_i(t); at the best sensor the bound is attained. Hence

        f*(t) = max_i v_i(t),   argmax_x f(x, t) = x_{i*},  i* = argmax_i v_i(t),

    computed from the data alone (no optimisation, no grid resolution to bias regret).
    (A radial-basis or thin-plate interpolant, as in the public W-DBO reproduction, overshoots
    the data between sensors; its maximum has to be searched for, and an under-resolved search
    gives negative regret.) ``p = 2`` (default) makes f differentiable at the sensors (flat
    there); ``p <= 1`` gives cusps at the sensors. f is evaluated stably: weights are computed
    relative to the nearest sensor, ``w_i = (d_min / d_i)^p`` (no overflow near a sensor), and a
    query exactly on a sensor returns that sensor's value exactly.

:class:`SensorChoice` (discrete; ET-/PE-GP-UCB's Intel task, SparQ-GP-UCB's ozone task)
    The decision is one of the ``n`` sensors, exposed as :attr:`SensorChoice.candidates` (their
    coordinates in [0, 1]^2). Data time step k (a 10-minute bin, a day) occupies the virtual
    interval ``[k * step_seconds, (k + 1) * step_seconds)`` (the last step also owns t = H), and
    f(x, t) is the reading of the chosen sensor in the step containing t: piecewise constant in
    t. ``x`` is matched to the NEAREST candidate in Euclidean distance (ties: the lower sensor
    index), so an ``x`` equal to a candidate selects exactly that sensor and any other ``x`` the
    sensor of its Voronoi cell. The oracle is exact: f*(t) = max_i v_i(step(t)).

Both benchmarks set ``oracle_exact = True`` and answer :meth:`exact_argmax` from the data, so the
shared :class:`~tvbo.benchmarks.oracle.TimeGridOracle` never polishes.

``raw(z)`` (minimisation form, time last): ``z = (c_1, c_2, s)`` with the sensor coordinates in
their ORIGINAL units (metres for Intel, degrees longitude/latitude for ozone) and ``s`` the data
time since the field's first data time in the field's time unit (seconds for Intel, days for
ozone); ``raw(z) = -f``. The original coordinates map to [0, 1]^2 by the affine map of the
prepared file (recovered from the sensors' two coordinate systems).
"""

from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from tvbo.benchmarks.base import _DOMAIN_TOL, Benchmark
from tvbo.benchmarks.tables import COST_TABLES

__all__ = [
    "InterpolatedField",
    "SensorChoice",
    "SensorField",
    "check_cost_table",
    "check_options",
    "json_safe",
    "positive_float",
    "resolve_path",
]


def json_safe(value: Any) -> Any:
    """``value`` with numpy scalars/arrays turned into Python objects (for ``describe()``)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def check_options(name: str, opts: Mapping[str, Any], valid: Sequence[str]) -> None:
    """Raise TypeError naming unknown options of benchmark ``name`` and listing the valid ones."""
    unknown = sorted(set(opts) - set(valid))
    if unknown:
        raise TypeError(
            f"unknown option(s) {', '.join(unknown)} for benchmark {name!r}; "
            f"valid options: {', '.join(valid)}"
        )


def check_cost_table(cost_table: str) -> str:
    """Validate a cost-table name for benchmarks that have no row in the BOLT tables."""
    if cost_table not in COST_TABLES:
        valid = ", ".join(sorted(COST_TABLES))
        raise ValueError(f"unknown cost_table {cost_table!r}; valid cost tables: {valid}")
    return cost_table


def positive_float(option: str, value: Any) -> float:
    """``value`` as a finite float > 0, or an error naming ``option``."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{option} must be a number, got {value!r}")
    v = float(value)
    if not (np.isfinite(v) and v > 0):
        raise ValueError(f"{option} must be finite and > 0, got {value!r}")
    return v


@dataclass(frozen=True)
class SensorField:
    """Readings of ``n`` fixed sensors at ``m`` equally spaced data times.

    ``values[k, i]`` is sensor i's reading at data time ``k * time_step`` (in ``time_unit``)
    after ``times[0]``; ``coords`` are the sensors' positions in [0, 1]^2 and ``original`` the
    same positions in the units ``coord_units`` of ``coord_names``.
    """

    values: np.ndarray
    coords: np.ndarray
    original: np.ndarray
    times: np.ndarray
    time_step: float
    time_unit: str
    sensor_ids: tuple[str, ...]
    value_name: str
    value_unit: str
    coord_names: tuple[str, str]
    coord_units: tuple[str, str]
    provenance: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        values = np.array(self.values, dtype=float)
        coords = np.array(self.coords, dtype=float)
        original = np.array(self.original, dtype=float)
        if values.ndim != 2 or values.shape[0] < 1 or values.shape[1] < 1:
            raise ValueError(f"values must be (n_times, n_sensors) >= (1, 1), got {values.shape}")
        m, n = values.shape
        if coords.shape != (n, 2) or original.shape != (n, 2):
            raise ValueError(
                f"coords and original must be ({n}, 2) for {n} sensors, got "
                f"{coords.shape} and {original.shape}"
            )
        if len(self.sensor_ids) != n or len(self.times) != m:
            raise ValueError(
                f"need {n} sensor ids and {m} times, got {len(self.sensor_ids)} and "
                f"{len(self.times)}"
            )
        if not np.all(np.isfinite(values)):
            bad = np.argwhere(~np.isfinite(values))[:5].tolist()
            raise ValueError(f"values must be finite; first non-finite (time, sensor): {bad}")
        if not (np.all(np.isfinite(coords)) and coords.min() >= 0.0 and coords.max() <= 1.0):
            raise ValueError("sensor coordinates must be finite and lie in [0, 1]^2")
        uniq, counts = np.unique(coords, axis=0, return_counts=True)
        if np.any(counts > 1):
            dup = [
                [self.sensor_ids[i] for i in np.flatnonzero(np.all(coords == u, axis=1))]
                for u in uniq[counts > 1]
            ]
            raise ValueError(
                f"sensors share a location, so f there would be ambiguous: {dup}; "
                "drop or merge them when preparing the field"
            )
        positive_float("time_step", self.time_step)
        for name, arr in (("values", values), ("coords", coords), ("original", original)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def n_sensors(self) -> int:
        return int(self.values.shape[1])

    @property
    def n_times(self) -> int:
        return int(self.values.shape[0])

    def affine(self) -> tuple[np.ndarray, np.ndarray]:
        """``(offset, scale)`` per axis with ``normalised = offset + scale * original``.

        Recovered from the two sensors with the smallest and largest original coordinate and
        checked on every sensor (the prepared files normalise by min-max, an affine map).
        """
        offset, scale = np.empty(2), np.empty(2)
        for a in range(2):
            o, c = self.original[:, a], self.coords[:, a]
            lo, hi = int(np.argmin(o)), int(np.argmax(o))
            if o[hi] == o[lo]:
                raise ValueError(
                    f"all sensors share {self.coord_names[a]} = {o[lo]:g}; the map from original "
                    "to normalised coordinates is undetermined"
                )
            scale[a] = (c[hi] - c[lo]) / (o[hi] - o[lo])
            offset[a] = c[lo] - scale[a] * o[lo]
            if np.max(np.abs(offset[a] + scale[a] * o - c)) > 1e-9:
                raise ValueError(
                    f"the field's {self.coord_names[a]} coordinates are not an affine map of the "
                    "normalised ones"
                )
        return offset, scale

    def to_normalised(self, original: Any) -> np.ndarray:
        """Map original coordinates ``(..., 2)`` to the normalised frame of ``coords``."""
        offset, scale = self.affine()
        return offset + scale * np.asarray(original, float)

    def original_bounds(self) -> list[list[float]]:
        """Original coordinates of the normalised domain's edges, per axis ``[at 0, at 1]``."""
        offset, scale = self.affine()
        return [[float(-offset[a] / scale[a]), float((1 - offset[a]) / scale[a])] for a in (0, 1)]

    def bounds_or_none(self) -> list[list[float]] | None:
        """:meth:`original_bounds`, or None when the map is undetermined (metadata only)."""
        try:
            return self.original_bounds()
        except ValueError:
            return None

    def describe(self) -> dict[str, Any]:
        """Provenance and layout, JSON-serialisable."""
        return json_safe(
            {
                **self.provenance,
                "n_sensors": self.n_sensors,
                "n_times": self.n_times,
                "first_time": str(self.times[0]),
                "last_time": str(self.times[-1]),
                "time_step": self.time_step,
                "time_unit": self.time_unit,
                "value": f"{self.value_name} ({self.value_unit})",
                "sensor_ids": list(self.sensor_ids),
                "coordinates": {
                    "original": [
                        f"{n} ({u})"
                        for n, u in zip(self.coord_names, self.coord_units, strict=True)
                    ],
                    "normalised_domain_in_original_units": self.bounds_or_none(),
                },
            }
        )


class _FieldBenchmark(Benchmark):
    """What both real-data benchmarks share: the field, ``raw``, metadata."""

    d = 2
    oracle_exact = True
    #: _evaluate's batch rows are oracle_value's floats (tests/benchmarks/test_realdata.py)
    batch_rows_exact = True

    def __init__(self, data: SensorField, *, name: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.name = name
        self.field = data

    # -- time maps (implemented by subclasses) ----------------------------------------------------
    @abstractmethod
    def _t_of_data_time(self, s: np.ndarray) -> np.ndarray:
        """Virtual time (s) of data time ``s`` (field units since the first data time)."""

    @abstractmethod
    def data_time(self, t: Any) -> np.ndarray | float:
        """Data time (field units since the first data time) that virtual time ``t`` reads."""

    @abstractmethod
    def _sensor_values(self, t: np.ndarray) -> np.ndarray:
        """Every sensor's value at virtual times ``t``: shape ``t.shape + (n,)``."""

    def sensor_values(self, t: Any) -> np.ndarray:
        """v_i(t) of all sensors at (validated) virtual times ``t``: ``t.shape + (n,)``."""
        return self._sensor_values(self._check_times(t))

    def exact_argmax(self, t: float) -> np.ndarray:
        """The best sensor's coordinates: exact for both shapes (see the module docstring)."""
        return self.exact_argmax_many(np.array([float(t)]))[0]

    def exact_argmax_many(self, ts: np.ndarray) -> np.ndarray:
        """The best sensor's coordinates at every time of ``ts`` (first sensor on ties)."""
        v = self._sensor_values(np.asarray(ts, float).reshape(-1))
        return self.field.coords[np.argmax(v, axis=-1)].copy()

    def raw(self, z: Any) -> np.ndarray:
        """``-f`` at ``z = (c_1, c_2, s)``: original coordinates and data time (module doc)."""
        z = np.asarray(z, float)
        if z.ndim == 0 or z.shape[-1] != 3:
            raise ValueError(f"{self.name}: z must have last dimension 3, got shape {z.shape}")
        if not np.all(np.isfinite(z)):
            raise ValueError(f"{self.name}: z must be finite")
        x = self.field.to_normalised(z[..., :2])
        if x.size and (x.min() < -_DOMAIN_TOL or x.max() > 1 + _DOMAIN_TOL):
            raise ValueError(
                f"{self.name}: coordinates outside the field's domain "
                f"{self.field.coord_names} in {self.field.original_bounds()}"
            )
        t = self._t_of_data_time(z[..., 2])
        tol = _DOMAIN_TOL * self.horizon
        if t.size and (t.min() < -tol or t.max() > self.horizon + tol):
            raise ValueError(
                f"{self.name}: data time outside the benchmark's window "
                f"[{self.data_time(0.0):.6g}, {self.data_time(self.horizon):.6g}] "
                f"{self.field.time_unit}"
            )
        return -np.asarray(self._evaluate(np.clip(x, 0.0, 1.0), np.clip(t, 0.0, self.horizon)))

    def domain(self) -> dict[str, Any]:
        f = self.field
        bounds = f.bounds_or_none() or [None, None]
        return {
            "spatial": [[0.0, 1.0]] * 2,
            "time": [0.0, self.horizon],
            "original": {
                f"{n} ({u})": b
                for n, u, b in zip(f.coord_names, f.coord_units, bounds, strict=True)
            },
            "data_time": [float(self.data_time(0.0)), float(self.data_time(self.horizon))],
            "data_time_unit": f.time_unit,
        }

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["data"] = self.field.describe()
        out["units"] = f"f in {self.field.value_unit} ({self.field.value_name})"
        out["raw"] = (
            f"raw(z) = -f at z = ({', '.join(self.field.coord_names)}, data time in "
            f"{self.field.time_unit} since {self.field.times[0]})"
        )
        return json_safe(out)


class InterpolatedField(_FieldBenchmark):
    """Continuous space-time interpolant: linear in time, inverse-distance weighting in space.

    Virtual time ``t`` reads the data at fractional sample index
    ``u(t) = index_start + index_rate * t`` (sample k sits at u = k; clipped to [0, m - 1]).
    """

    is_discrete = False

    def __init__(
        self,
        data: SensorField,
        *,
        name: str,
        idw_power: float = 2.0,
        index_start: float = 0.0,
        index_rate: float,
        **kwargs: Any,
    ) -> None:
        super().__init__(data, name=name, **kwargs)
        if data.n_times < 2:
            raise ValueError(
                f"{name}: linear interpolation in time needs >= 2 data times, got {data.n_times}"
            )
        self.idw_power = positive_float("idw_power", idw_power)
        self.index_start = float(index_start)
        self.index_rate = positive_float("index_rate", index_rate)
        last = self.index_start + self.index_rate * self.horizon
        if self.index_start < 0 or last > data.n_times - 1 + 1e-9:
            raise ValueError(
                f"{name}: the horizon reads data samples [{self.index_start:g}, {last:g}] but "
                f"the field has samples 0 .. {data.n_times - 1}"
            )

    def data_time(self, t: Any) -> np.ndarray | float:
        u = self.index_start + self.index_rate * np.asarray(t, float)
        s = u * self.field.time_step
        return float(s) if s.ndim == 0 else s

    def _t_of_data_time(self, s: np.ndarray) -> np.ndarray:
        return (np.asarray(s, float) / self.field.time_step - self.index_start) / self.index_rate

    def _sensor_values(self, t: np.ndarray) -> np.ndarray:
        V = self.field.values
        m = V.shape[0]
        u = np.clip(self.index_start + self.index_rate * np.asarray(t, float), 0.0, m - 1.0)
        k = np.minimum(np.floor(u).astype(np.intp), m - 2)
        lam = (u - k)[..., None]
        # (1 - lam) a + lam b is exact at both ends (lam = 0 gives a, lam = 1 gives b)
        return (1.0 - lam) * V[k] + lam * V[k + 1]

    def _evaluate(self, x: np.ndarray, t: np.ndarray) -> np.ndarray:
        x = np.asarray(x, float)
        v = self._sensor_values(np.asarray(t, float))  # t.shape + (n,)
        d2 = np.sum((x[..., None, :] - self.field.coords) ** 2, axis=-1)  # x batch + (n,)
        d2min = np.min(d2, axis=-1, keepdims=True)
        hit = d2min == 0.0
        with np.errstate(divide="ignore"):
            w = (d2 / np.where(hit, 1.0, d2min)) ** (-0.5 * self.idw_power)
        # exactly on a sensor: that sensor's value (locations are distinct, so one weight)
        w = np.where(hit, (d2 == 0.0).astype(float), w)
        batch = np.broadcast_shapes(w.shape, v.shape)
        w = np.broadcast_to(w, batch)
        return np.sum(w * np.broadcast_to(v, batch), axis=-1) / np.sum(w, axis=-1)

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["interpolation"] = {
            "time": "linear between consecutive data times",
            "space": f"inverse-distance weighting (Shepard), power {self.idw_power:g}",
            "oracle": "exact: f*(t) = max over sensors of the time-interpolated values",
            "index_start": self.index_start,
            "index_rate_per_s": self.index_rate,
        }
        return out


class SensorChoice(_FieldBenchmark):
    """Discrete choice of one sensor; data step k fills ``[k, k + 1) * step_seconds``."""

    is_discrete = True

    def __init__(self, data: SensorField, *, name: str, step_seconds: float, **kwargs: Any):
        super().__init__(data, name=name, **kwargs)
        self.step_seconds = positive_float("step_seconds", step_seconds)
        covered = data.n_times * self.step_seconds
        if self.horizon > covered * (1 + 1e-12):
            raise ValueError(
                f"{name}: horizon {self.horizon:g} s exceeds the {data.n_times} data steps x "
                f"step_seconds {self.step_seconds:g} s = {covered:g} s the field covers"
            )
        cands = data.coords.copy()
        cands.setflags(write=False)
        #: the finite decision set (sensor coordinates in [0, 1]^2), one row per sensor
        self.candidates: np.ndarray = cands

    def step_index(self, t: Any) -> np.ndarray:
        """Index of the data step containing virtual time ``t`` (t = H: the last step)."""
        t = np.asarray(t, float)
        k = np.floor(t / self.step_seconds).astype(np.intp)
        # step k owns [k * step, (k + 1) * step) with boundaries as computed in floating point
        k = np.where((k + 1) * self.step_seconds <= t, k + 1, k)
        k = np.where(k * self.step_seconds > t, k - 1, k)
        return np.clip(k, 0, self.field.n_times - 1)

    def nearest(self, x: Any) -> np.ndarray:
        """Index of the candidate nearest to ``x`` (..., 2) (ties: the lower index)."""
        x = np.asarray(x, float)
        d2 = np.sum((x[..., None, :] - self.candidates) ** 2, axis=-1)
        return np.argmin(d2, axis=-1)

    def data_time(self, t: Any) -> np.ndarray | float:
        s = np.asarray(t, float) / self.step_seconds * self.field.time_step
        return float(s) if s.ndim == 0 else s

    def _t_of_data_time(self, s: np.ndarray) -> np.ndarray:
        return np.asarray(s, float) / self.field.time_step * self.step_seconds

    def _sensor_values(self, t: np.ndarray) -> np.ndarray:
        return self.field.values[self.step_index(t)]

    def _evaluate(self, x: np.ndarray, t: np.ndarray) -> np.ndarray:
        i = self.nearest(x)
        k = self.step_index(t)
        i, k = np.broadcast_arrays(i, k)
        return self.field.values[k, i]

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["step_seconds"] = self.step_seconds
        out["choice"] = (
            "x is matched to the nearest candidate sensor; data step k holds on "
            "[k, k + 1) * step_seconds"
        )
        out["n_candidates"] = int(len(self.candidates))
        return out


def resolve_path(path: str | os.PathLike[str]) -> str:
    """Absolute form of ``path`` (relative paths are relative to the working directory)."""
    return os.path.abspath(os.fspath(path))


def open_prepared(path: str | os.PathLike[str], missing: str, field: str,
                  command: str) -> Any:
    """The prepared field at ``path``, loaded into memory as an xarray Dataset.

    A missing file raises ``FileNotFoundError(missing)`` (the message that says how to prepare
    it); a file that is not readable netCDF (truncated, corrupt) raises one ``ValueError`` naming
    the file and ``python -m tvbo.data <command>``, instead of xarray's backend text, which helps
    nobody. The Intel and ozone loaders share it.
    """
    if not Path(path).is_file():
        raise FileNotFoundError(missing)
    try:
        with xr.open_dataset(path) as opened:
            return opened.load()
    except (OSError, ValueError):
        raise ValueError(
            f"{os.fspath(path)!r} is not a readable prepared {field} "
            f"(truncated, corrupt or not netCDF); prepare it again with "
            f"`python -m tvbo.data {command}` (data/README.md)"
        ) from None
