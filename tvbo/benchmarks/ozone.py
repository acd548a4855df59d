"""Daily ozone benchmarks: ``ozone-sensors`` (SparQ-GP-UCB's task) and ``ozone`` (interpolated).

Both read a prepared ``(site, day)`` field (``tvbo.data.ozone``: daily maximum 8-hour average,
ppm; site coordinates ``x`` (longitude) and ``y`` (latitude) min-max normalised to [0, 1]) and
MAXIMISE ozone: SparQ-GP-UCB looks for the most polluted site of each day (spec A.8.2: "the
location of the maximum ozone level might be approximately stationary"). See
:mod:`tvbo.benchmarks.realdata` for the interpolation and why the oracles are exact.

``ozone-sensors``
    Choose one of the sites each day; day k holds on ``[k, k + 1) * step_seconds`` virtual
    seconds; regret against the highest reading of the day.
``ozone``
    The continuous variant: linear in time between days (day k sits at ``t = k * step_seconds``),
    inverse-distance weighting over the sites in space (``idw_power``, default 2).

Documented choices (the SparQ paper gives none of them, spec A.8.2):

Units
    ``units="ppb"`` (default: values O(10-100), noise variances O(1)) or ``"ppm"`` (the file's).
Time
    ``step_seconds`` virtual seconds per day, default 10 s, so H = n_days * 10 s
    (``ozone-sensors``) or (n_days - 1) * 10 s (``ozone``: the last day sits at t = H): 620 s or
    610 s for the 62 days of the offline mirror, 7300 s for two years. ``horizon`` alone sets
    ``step_seconds`` so that the data fill the horizon; both together need H within the data.
Cost
    Default ``cost = step_seconds``: a day's maximum 8-hour average is known only once the day is
    over, and SparQ-GP-UCB makes one query per day. With negligible compute time this reproduces
    the paper's one-query-per-day protocol; a larger compute time skips days.
Noise
    Default variance 1 ppb^2 (1e-6 ppm^2): a standard deviation of 1 ppb, the reporting
    resolution of EPA's daily values (0.001 ppm). SparQ's only stated noise (sigma^2 = 0.01) is
    for its synthetic function.
Missing days
    The pipeline fills gaps by default (``fill: true``). A field prepared with ``fill: false``
    keeps NaN; they are filled here by the same rule (linear interpolation in time per site,
    constant at the edges) and counted in ``describe()['data']['n_filled_on_load']``. A site
    without any value is an error.
Cost table
    Ozone has no row in the BOLT tables: ``cost_table`` is validated (so a shared config key
    works) but not used; the benchmark's ``table`` is None.

Options: ``path`` (default ``data/ozone/ozone_nyc-2022-2023.nc``, the workflow's default tag,
relative to the working directory), ``units``, ``step_seconds``, ``horizon``, ``cost``,
``noise_var``, ``cost_table``, ``oracle_grid_step`` (default 1 s) and, for ``ozone``,
``idw_power``.

``raw(z)``: ``z = (longitude, latitude, s)`` in degrees and days since the first day;
``raw = -ozone`` in ``units``.
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np

from tvbo.benchmarks.realdata import (
    InterpolatedField,
    SensorChoice,
    SensorField,
    check_cost_table,
    check_options,
    json_safe,
    open_prepared,
    positive_float,
    resolve_path,
)
from tvbo.benchmarks.tables import DEFAULT_COST_TABLE
from tvbo.data.download import sha256_file

__all__ = [
    "DEFAULT_NOISE_PPB2",
    "DEFAULT_OZONE_PATH",
    "DEFAULT_STEP_SECONDS",
    "OZONE_OPTIONS",
    "OZONE_SENSORS_OPTIONS",
    "UNITS",
    "fill_missing",
    "load_ozone_field",
    "make_ozone",
    "make_ozone_sensors",
]

DEFAULT_OZONE_PATH = "data/ozone/ozone_nyc-2022-2023.nc"
DEFAULT_STEP_SECONDS = 10.0
DEFAULT_NOISE_PPB2 = 1.0
#: unit -> multiplier from the file's ppm
UNITS: dict[str, float] = {"ppb": 1000.0, "ppm": 1.0}
OZONE_SENSORS_OPTIONS: tuple[str, ...] = (
    "path",
    "units",
    "step_seconds",
    "horizon",
    "cost_table",
    "cost",
    "noise_var",
    "oracle_grid_step",
)
OZONE_OPTIONS: tuple[str, ...] = OZONE_SENSORS_OPTIONS + ("idw_power",)


def _missing_file_message(path: str | os.PathLike[str]) -> str:
    match = re.search(r"ozone_([A-Za-z0-9_-]+)\.nc$", os.fspath(path))
    tag = match.group(1) if match else "TAG"
    return (
        f"prepared ozone field {os.fspath(path)!r} not found (resolved to "
        f"{resolve_path(path)!r}). Produce it with the Snakemake data rules "
        f"(`snakemake --cores 1 data/ozone/ozone_{tag}.nc`, with data.ozone.tag: {tag} in the "
        f"config) or directly with `python -m tvbo.data prepare-ozone --inputs "
        f"data/raw/ozone/daily_44201_YEAR.zip ... --years YEAR ... --out {os.fspath(path)}`, "
        f"then pass its location as the benchmark option 'path' (see data/README.md)"
    )


def fill_missing(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Fill NaN of ``values`` (days, sites) per site: linear in time, constant at the edges.

    The rule of ``tvbo.data.ozone.prepare_ozone(fill=True)``. Returns (filled copy, count).
    """
    out = np.array(values, dtype=float)
    ok = np.isfinite(out)
    empty = np.flatnonzero(~ok.any(axis=0))
    if len(empty):
        raise ValueError(f"site(s) {empty.tolist()} have no ozone value at all")
    days = np.arange(out.shape[0], dtype=float)
    for j in np.flatnonzero(~ok.all(axis=0)):
        out[~ok[:, j], j] = np.interp(days[~ok[:, j]], days[ok[:, j]], out[ok[:, j], j])
    return out, int((~ok).sum())


def load_ozone_field(path: str | os.PathLike[str], units: str = "ppb") -> SensorField:
    """The prepared ozone field at ``path`` as a :class:`SensorField` in ``units`` per day."""
    if units not in UNITS:
        raise ValueError(f"unknown units {units!r}; valid units: {', '.join(UNITS)}")
    ds = open_prepared(path, _missing_file_message(path), "ozone field", "prepare-ozone")
    needed = ("ozone", "day", "x", "y", "longitude", "latitude", "site_id")
    missing = [v for v in needed if v not in ds.variables]
    if missing or ds["ozone"].dims != ("site", "day"):
        raise ValueError(
            f"{os.fspath(path)!r} is not a prepared ozone field (python -m tvbo.data "
            f"prepare-ozone): missing {missing}, ozone dims {ds['ozone'].dims}"
        )
    file_units = ds["ozone"].attrs.get("units", "ppm")
    if file_units != "ppm":
        raise ValueError(f"{os.fspath(path)!r}: expected ozone in ppm, found {file_units!r}")
    days = ds["day"].values
    if len(days) > 1:
        gaps = np.diff(days) / np.timedelta64(1, "D")
        if not np.all(gaps == 1.0):
            raise ValueError(f"{os.fspath(path)!r}: days are not consecutive calendar days")
    values, n_filled = fill_missing(ds["ozone"].values.T * UNITS[units])
    provenance = {
        "path": os.fspath(path),
        "abspath": resolve_path(path),
        "sha256": sha256_file(path),
        "n_filled_on_load": n_filled,
        "attrs": json_safe(dict(ds.attrs)),
    }
    return SensorField(
        values=values,
        coords=np.c_[ds["x"].values, ds["y"].values],
        original=np.c_[ds["longitude"].values, ds["latitude"].values],
        times=days,
        time_step=1.0,
        time_unit="day",
        sensor_ids=tuple(str(s) for s in ds["site_id"].values),
        value_name="daily maximum 8-hour ozone",
        value_unit=units,
        coord_names=("longitude", "latitude"),
        coord_units=("degrees_east", "degrees_north"),
        provenance=provenance,
    )


def _timing(intervals: int, horizon: Any, step: Any) -> tuple[float, float]:
    """(horizon, step_seconds) from the options; ``intervals`` days fill the default horizon."""
    if step is not None:
        step = positive_float("step_seconds", step)
    if horizon is not None:
        horizon = positive_float("horizon", horizon)
    if step is None:
        step = DEFAULT_STEP_SECONDS if horizon is None else horizon / intervals
    if horizon is None:
        horizon = intervals * step
    return horizon, step


def _parameters(name: str, data: SensorField, opts: dict[str, Any], intervals: int) -> dict:
    check_cost_table(opts.get("cost_table") or DEFAULT_COST_TABLE)
    if intervals < 1:
        raise ValueError(f"{name}: the field has {data.n_times} day(s); too few for this benchmark")
    horizon, step = _timing(intervals, opts.get("horizon"), opts.get("step_seconds"))
    scale = UNITS[data.value_unit] / UNITS["ppb"]
    noise = opts.get("noise_var")
    cost = opts.get("cost")
    grid = opts.get("oracle_grid_step")
    return {
        "horizon": horizon,
        "step": step,
        "noise_var": DEFAULT_NOISE_PPB2 * scale**2 if noise is None else noise,
        "cost": step if cost is None else cost,
        "table": None,
        "lengthscale_time": None,
        "oracle_grid_step": 1.0 if grid is None else grid,
    }


def make_ozone_sensors(**opts: Any) -> SensorChoice:
    """SparQ-GP-UCB's discrete daily most-polluted-site task (options: module docstring)."""
    check_options("ozone-sensors", opts, OZONE_SENSORS_OPTIONS)
    data = load_ozone_field(opts.get("path") or DEFAULT_OZONE_PATH, opts.get("units") or "ppb")
    params = _parameters("ozone-sensors", data, opts, data.n_times)
    step = params.pop("step")
    return SensorChoice(data, name="ozone-sensors", step_seconds=step, **params)


def make_ozone(**opts: Any) -> InterpolatedField:
    """Continuous ozone: linear in time, IDW in space (options: module docstring)."""
    check_options("ozone", opts, OZONE_OPTIONS)
    data = load_ozone_field(opts.get("path") or DEFAULT_OZONE_PATH, opts.get("units") or "ppb")
    params = _parameters("ozone", data, opts, data.n_times - 1)
    step = params.pop("step")
    power = opts.get("idw_power")
    return InterpolatedField(
        data,
        name="ozone",
        idw_power=2.0 if power is None else power,
        index_start=0.0,
        index_rate=1.0 / step,
        **params,
    )
