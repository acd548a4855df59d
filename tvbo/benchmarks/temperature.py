"""Intel Berkeley lab temperature benchmarks: ``temperature`` (BOLT) and ``temperature-sensors``.

Both read a prepared ``(time, sensor)`` field (``tvbo.data.intel``: 10-minute bin means per mote,
gaps filled, coordinates ``x``, ``y`` in [0, 1]) and MAXIMISE temperature (degC); see
:mod:`tvbo.benchmarks.realdata` for the interpolation and why the oracles are exact.

``temperature`` (BOLT [A] Fig. 14 / [B] Fig. 12, "Temperature (3)": 2 spatial dims + time)
    The papers "interpolate the data in space-time" over "the first day of data" (2004-02-28)
    without saying how; here: linear in time between the 10-minute bins, inverse-distance
    weighting in space (power ``idw_power``, default 2). Time map: the window ``data_window``
    (fractions of the selected data's span, default (0, 1): from the first to the last bin, i.e.
    00:00 .. 23:50 of the day for a one-day file) is stretched linearly over [0, H], so t = 0
    reads the first bin and t = H the last; no extrapolation. Noise variance 0.16, cost
    1.00 s [A] / 0.01 s [B], horizon 600 s [A] / 1800 s [B] (``cost_table``). The table's
    temporal lengthscale (396 s at H = 1800 s) is rescaled with H and with the window width.
``temperature-sensors`` (ET-GP-UCB's and PE-GP-UCB's Intel task)
    Choose one of the field's sensors at each step; bin k of the data holds on
    ``[k, k + 1) * step_seconds`` virtual seconds; regret against the hottest sensor of the bin.
    Default ``step_seconds = H / n_bins`` (the data fill the horizon; 12.5 s for one day at the
    [B] horizon of 1800 s); ``step_seconds`` alone sets H = n_bins * step_seconds. Noise, cost
    and horizon come from the same ``temperature`` table rows; ``cost = step_seconds`` gives the
    papers' one-query-per-10-minute-step protocol. PE-GP-UCB targets 2004-03-14 (priors from
    03-01..03-13, built elsewhere), hence the default path.

Options (``make(name, **opts)``):

``path``             prepared netCDF (default ``data/intel/intel_2004-02-28.nc`` for
                     ``temperature``, ``data/intel/intel_2004-03-14.nc`` for
                     ``temperature-sensors``; relative to the working directory)
``date``             None (every time of the file), or a day ``yyyy-mm-dd`` or a list of
                     consecutive days to select from a multi-day file
``idw_power``        ``temperature`` only: IDW power p > 0 (default 2)
``data_window``      ``temperature`` only: (lo, hi) fractions of the data span, 0 <= lo < hi <= 1
``step_seconds``     ``temperature-sensors`` only: virtual seconds per 10-minute bin
``prior_paths``      ``temperature-sensors`` only: prepared previous days; each becomes one
                     candidate GP prior of PE-GP-UCB (:mod:`tvbo.benchmarks.intel_priors`),
                     declared as the benchmark's ``candidate_priors`` (algorithm option
                     ``priors: benchmark``); ``prior_noise_var`` (R^2, default 0.16) and
                     ``prior_epsilon_grid`` tune them
``horizon``, ``cost_table``, ``cost``, ``noise_var``, ``oracle_grid_step``: as for the
synthetic benchmarks.

``raw(z)``: ``z = (x_m, y_m, s)``: mote coordinates in metres (``mote_locs.txt``) and ``s``
seconds since the first bin of the selected data; ``raw = -temperature``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from tvbo.benchmarks.intel_priors import EPSILON_GRID, PRIOR_NOISE_VAR, day_prior
from tvbo.benchmarks.realdata import (
    InterpolatedField,
    SensorChoice,
    SensorField,
    check_options,
    json_safe,
    open_prepared,
    positive_float,
    resolve_path,
)
from tvbo.benchmarks.tables import DEFAULT_COST_TABLE, resolve_parameters, table_entry
from tvbo.data.download import sha256_file

__all__ = [
    "DEFAULT_INTEL_PATH",
    "DEFAULT_INTEL_SENSORS_PATH",
    "SENSORS_OPTIONS",
    "TEMPERATURE_OPTIONS",
    "intel_priors",
    "load_intel_field",
    "make_temperature",
    "make_temperature_sensors",
]

#: BOLT's day: the first day of the Intel data
DEFAULT_INTEL_PATH = "data/intel/intel_2004-02-28.nc"
#: PE-GP-UCB's target day
DEFAULT_INTEL_SENSORS_PATH = "data/intel/intel_2004-03-14.nc"
_COMMON = ("path", "date", "horizon", "cost_table", "cost", "noise_var", "oracle_grid_step")
TEMPERATURE_OPTIONS: tuple[str, ...] = _COMMON + ("idw_power", "data_window")
SENSORS_OPTIONS: tuple[str, ...] = _COMMON + (
    "step_seconds",
    "prior_paths",
    "prior_noise_var",
    "prior_epsilon_grid",
)


def _missing_file_message(path: str | os.PathLike[str]) -> str:
    match = re.search(r"intel_(\d{4}-\d{2}-\d{2})\.nc$", os.fspath(path))
    day = match.group(1) if match else "YYYY-MM-DD"
    return (
        f"prepared Intel temperature field {os.fspath(path)!r} not found (resolved to "
        f"{resolve_path(path)!r}). Produce it with the Snakemake data rules "
        f"(`snakemake --cores 1 data/intel/intel_{day}.nc`, with {day} in the config's "
        f"data.intel.dates) or directly with `python -m tvbo.data prepare-intel --data "
        f"data/raw/intel/data.txt.gz --locs data/raw/intel/mote_locs.txt --dates {day} --out "
        f"{os.fspath(path)}`, then pass its location as the benchmark option 'path' (see "
        f"data/README.md; the offline mirror covers 2004-03-04 .. 2004-03-08 only)"
    )


def _select_days(times: np.ndarray, date: str | Sequence[str] | None) -> np.ndarray:
    """Boolean mask of the times on the requested calendar day(s)."""
    if date is None:
        return np.ones(len(times), dtype=bool)
    wanted = [date] if isinstance(date, str) else list(date)
    if not wanted:
        raise ValueError("date must be None, a day 'yyyy-mm-dd' or a non-empty list of days")
    days = pd.DatetimeIndex(times).normalize()
    available = sorted({d.strftime("%Y-%m-%d") for d in days})
    mask = np.zeros(len(times), dtype=bool)
    for day in wanted:
        try:
            stamp = pd.Timestamp(day)
        except (TypeError, ValueError):
            raise ValueError(f"bad date {day!r}: use yyyy-mm-dd") from None
        hit = np.asarray(days == stamp.normalize())
        if not hit.any():
            raise ValueError(f"date {day!r} is not in the field; available days: {available}")
        mask |= hit
    return mask


def load_intel_field(
    path: str | os.PathLike[str], date: str | Sequence[str] | None = None
) -> SensorField:
    """The prepared Intel field at ``path`` (days ``date``) as a :class:`SensorField` in degC.

    The selected times must be equally spaced (consecutive days of one bin width).
    """
    ds = open_prepared(path, _missing_file_message(path), "Intel temperature field",
                       "prepare-intel")
    needed = ("temperature", "time", "x", "y", "x_m", "y_m", "mote_id")
    missing = [v for v in needed if v not in ds.variables]
    if missing or ds["temperature"].dims != ("time", "sensor"):
        raise ValueError(
            f"{os.fspath(path)!r} is not a prepared Intel field (python -m tvbo.data "
            f"prepare-intel): missing {missing}, temperature dims {ds['temperature'].dims}"
        )
    times = ds["time"].values
    mask = _select_days(times, date)
    times = times[mask]
    seconds = (times - times[0]) / np.timedelta64(1, "s")
    if len(times) > 1:
        gaps = np.diff(seconds)
        if not np.allclose(gaps, gaps[0], rtol=0, atol=1e-6):
            raise ValueError(
                f"the selected times of {os.fspath(path)!r} are not equally spaced (gaps "
                f"{sorted(set(gaps.tolist()))} s); select consecutive days with 'date'"
            )
        step = float(gaps[0])
    else:
        step = float(ds.attrs.get("bin_width_s", 600.0))
    provenance = {
        "path": os.fspath(path),
        "abspath": resolve_path(path),
        "sha256": sha256_file(path),
        "selected_dates": sorted({str(d)[:10] for d in pd.DatetimeIndex(times).normalize()}),
        "attrs": json_safe(dict(ds.attrs)),
    }
    return SensorField(
        values=ds["temperature"].values[mask],
        coords=np.c_[ds["x"].values, ds["y"].values],
        original=np.c_[ds["x_m"].values, ds["y_m"].values],
        times=times,
        time_step=step,
        time_unit="s",
        sensor_ids=tuple(f"mote {int(m)}" for m in ds["mote_id"].values),
        value_name="temperature",
        value_unit="degC",
        coord_names=("x_m", "y_m"),
        coord_units=("m", "m"),
        provenance=provenance,
    )


def _window(value: Any) -> tuple[float, float]:
    if value is None:
        return 0.0, 1.0
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"data_window must be (lo, hi) fractions, got {value!r}") from None
    if not (0.0 <= lo < hi <= 1.0):
        raise ValueError(f"data_window must satisfy 0 <= lo < hi <= 1, got {value!r}")
    return lo, hi


def _grid_step(opts: dict[str, Any]) -> float:
    step = opts.get("oracle_grid_step")
    return 1.0 if step is None else step


def make_temperature(**opts: Any) -> InterpolatedField:
    """BOLT's continuous Temperature benchmark (see the module docstring for the options)."""
    check_options("temperature", opts, TEMPERATURE_OPTIONS)
    data = load_intel_field(opts.get("path") or DEFAULT_INTEL_PATH, opts.get("date"))
    lo, hi = _window(opts.get("data_window"))
    params = resolve_parameters(
        "temperature",
        cost_table=opts.get("cost_table") or DEFAULT_COST_TABLE,
        horizon=opts.get("horizon"),
        cost=opts.get("cost"),
        noise_var=opts.get("noise_var"),
    )
    if params["lengthscale_time"] is not None:  # a narrower window stretches time
        params["lengthscale_time"] /= hi - lo
    last = data.n_times - 1
    power = opts.get("idw_power")
    return InterpolatedField(
        data,
        name="temperature",
        idw_power=2.0 if power is None else power,
        index_start=lo * last,
        index_rate=(hi - lo) * last / params["horizon"],
        oracle_grid_step=_grid_step(opts),
        **params,
    )


def make_temperature_sensors(**opts: Any) -> SensorChoice:
    """The discrete hottest-sensor task (see the module docstring for the options)."""
    check_options("temperature-sensors", opts, SENSORS_OPTIONS)
    data = load_intel_field(opts.get("path") or DEFAULT_INTEL_SENSORS_PATH, opts.get("date"))
    table = opts.get("cost_table") or DEFAULT_COST_TABLE
    horizon, step = opts.get("horizon"), opts.get("step_seconds")
    n = data.n_times
    if step is not None:
        step = positive_float("step_seconds", step)
    if horizon is None and step is not None:
        horizon = n * step  # the data fill the horizon
    elif horizon is None:
        horizon = float(table_entry(table, "temperature")["horizon"])
    horizon = positive_float("horizon", horizon)
    if step is None:
        step = horizon / n
    params = resolve_parameters(
        "temperature",
        cost_table=table,
        horizon=horizon,
        cost=opts.get("cost"),
        noise_var=opts.get("noise_var"),
    )
    bench = SensorChoice(
        data,
        name="temperature-sensors",
        step_seconds=step,
        oracle_grid_step=_grid_step(opts),
        **params,
    )
    if opts.get("prior_paths") is not None:  # PE-GP-UCB's previous-day priors (hook, issue 11)
        noise = opts.get("prior_noise_var")
        grid = opts.get("prior_epsilon_grid")
        bench.candidate_priors = tuple(
            intel_priors(
                list(opts["prior_paths"]),
                step_seconds=bench.step_seconds,
                noise_var=PRIOR_NOISE_VAR if noise is None else float(noise),
                epsilon_grid=EPSILON_GRID if grid is None else grid,
            )
        )
    return bench


def intel_priors(
    paths: Sequence[str | os.PathLike[str]],
    *,
    step_seconds: float,
    noise_var: float = PRIOR_NOISE_VAR,
    epsilon_grid: Sequence[float] = EPSILON_GRID,
) -> list[dict[str, Any]]:
    """One PE-GP-UCB candidate prior per prepared Intel day in ``paths``
    (:func:`tvbo.benchmarks.intel_priors.day_prior` of each day's field)."""
    if not paths:
        raise ValueError("prior_paths is empty: the Intel priors need at least one prepared day")
    if not (math.isfinite(step_seconds) and step_seconds > 0):
        raise ValueError(f"intel priors: step_seconds must be > 0, got {step_seconds!r}")
    if not (math.isfinite(noise_var) and noise_var > 0):
        raise ValueError(f"intel priors: prior_noise_var must be > 0, got {noise_var!r}")
    grid = [float(e) for e in epsilon_grid]
    if not grid or not all(0.0 <= e < 1.0 for e in grid):
        raise ValueError(f"intel priors: prior_epsilon_grid values must lie in [0, 1), got {grid}")
    out = []
    for path in paths:
        field = load_intel_field(path)
        out.append(
            day_prior(
                field.values,
                field.coords,
                step_seconds=step_seconds,
                noise_var=noise_var,
                epsilon_grid=grid,
            )
        )
    return out
