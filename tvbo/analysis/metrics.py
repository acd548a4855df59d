"""Regret metrics: the papers' average regret, time-integrated regret and normalised regret.

Two regrets are reported side by side (DESIGN.md, "Regret"):

* **average regret** -- the mean query regret ``r_k = f*(t_k) - f(x_k, t_k)`` over the
  post-warm-up queries. This is the metric of the seed papers' tables. It can be gamed by an
  algorithm that queries rarely, because only the query instants count.
* **time-integrated regret** -- the time average of the regret of the configuration *in force*
  (the last sampled query) over the horizon. Slow algorithms pay for every second they hold a
  stale configuration, so it cannot be gamed that way.

Both functions take plain numpy arrays so that the engine (per run) and the analysis (per
campaign) compute them with the same code.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tvbo.results.schema import RUN_KEYS

#: run keys that identify an *experiment* (one row of a results table): all run keys except the
#: algorithm (table columns) and the seed (aggregated over).
EXPERIMENT_KEYS: tuple[str, ...] = tuple(k for k in RUN_KEYS if k not in ("algorithm", "seed"))

OVERALL_LABEL = "Overall"


def average_regret(regret: np.ndarray, is_warmup: np.ndarray) -> float:
    """Mean query regret over the post-warm-up queries (the papers' "average regret").

    Queries with ``is_warmup == 0`` count. Entries where ``is_warmup`` is NaN (the padding of a
    ragged run inside a campaign) are neither warm-up nor real queries and are ignored. A NaN
    regret at a real query is *not* hidden: it propagates, because it signals a bug upstream.
    Returns NaN if there is no post-warm-up query (a run that ended during its warm-up).
    """
    regret = np.asarray(regret, dtype=float)
    is_warmup = np.asarray(is_warmup, dtype=float)
    if regret.shape != is_warmup.shape:
        raise ValueError(
            f"regret and is_warmup must have the same shape, got {regret.shape} and "
            f"{is_warmup.shape}"
        )
    selected = regret[is_warmup == 0]
    if selected.size == 0:
        return float("nan")
    return float(np.mean(selected))


def held_on_grid(
    t_events: np.ndarray,
    values: np.ndarray,
    grid: np.ndarray,
    before: float = np.nan,
) -> np.ndarray:
    """Sample a right-continuous step function on a grid.

    The value at grid time ``t`` is ``values[j]`` of the last event with ``t_events[j] <= t``
    (an event takes effect at its own instant); grid times before the first event get
    ``before``. ``values`` may have trailing dimensions (e.g. the held query ``x`` of shape
    ``(n_events, d)``); the result then has shape ``(len(grid),) + values.shape[1:]``.
    Vectorised with :func:`numpy.searchsorted`: O((n + m) log n).
    """
    t_events = np.asarray(t_events, dtype=float)
    values = np.asarray(values)
    grid = np.asarray(grid, dtype=float)
    if t_events.ndim != 1:
        raise ValueError(f"t_events must be one-dimensional, got shape {t_events.shape}")
    if values.shape[:1] != t_events.shape:
        raise ValueError(
            f"values must have one entry per event along axis 0: t_events has "
            f"{t_events.shape[0]} events, values has shape {values.shape}"
        )
    if np.any(np.isnan(t_events)):
        raise ValueError("t_events contains NaN; drop padding entries before calling")
    if np.any(np.diff(t_events) < 0):
        raise ValueError("t_events must be non-decreasing (events in chronological order)")
    index = np.searchsorted(t_events, grid, side="right") - 1
    dtype = np.result_type(values.dtype, np.asarray(before).dtype)
    out = np.full((grid.shape[0],) + values.shape[1:], before, dtype=dtype)
    valid = index >= 0
    out[valid] = values[index[valid]]
    return out


def _finite_span(
    time: np.ndarray, values: np.ndarray, horizon: float | None
) -> tuple[np.ndarray, np.ndarray]:
    """The finite samples at or before the horizon, in time order."""
    time = np.asarray(time, dtype=float)
    values = np.asarray(values, dtype=float)
    if time.shape != values.shape or time.ndim != 1:
        raise ValueError(
            f"time and values must be 1-d arrays of equal length, got shapes {time.shape} and "
            f"{values.shape}"
        )
    keep = np.isfinite(values) & np.isfinite(time)
    if horizon is not None:
        keep &= time <= horizon
    order = np.argsort(time[keep], kind="stable")
    return time[keep][order], values[keep][order]


def time_integrated_regret(time: np.ndarray, regret_held: np.ndarray, horizon: float) -> float:
    """Time average of the regret of the configuration in force, by the trapezoid rule.

    DESIGN.md defines ``(1/H) * integral_0^H regret_held(t) dt``. Before the first query there
    is no configuration in force, so ``regret_held`` is NaN there and assigning it any regret
    would be arbitrary. NaN samples are therefore excluded, and the integral is divided by the
    *covered span* ``min(t_last, H) - t_first`` of the finite samples instead of ``H``. When
    the grid covers ``[0, H]`` entirely this is exactly ``(1/H) * integral``. Excluding NaN
    anywhere (not only leading ones) also makes the function work on a campaign whose time
    coordinate is the union of several benchmarks' grids (NaN at the other grids' points).
    Grid points after ``horizon`` are ignored. Returns NaN if fewer than two finite samples.
    """
    if not np.isfinite(horizon) or horizon <= 0:
        raise ValueError(f"horizon must be a positive finite number, got {horizon!r}")
    t, r = _finite_span(time, regret_held, horizon)
    if t.size < 2 or t[-1] <= t[0]:
        return float("nan")
    return float(np.trapezoid(r, t) / (t[-1] - t[0]))


def running_time_average(time: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Running time average ``A(t) = (1/(t - t0)) * integral_{t0}^{t} v`` (trapezoid rule).

    ``t0`` is the first finite sample (the first query for a held regret); the result is NaN
    where ``values`` is NaN and at ``t0`` itself (an average over an empty interval). Its last
    entry equals :func:`time_integrated_regret` over the same samples. ``time`` must be sorted.
    """
    time = np.asarray(time, dtype=float)
    values = np.asarray(values, dtype=float)
    if time.shape != values.shape or time.ndim != 1:
        raise ValueError(
            f"time and values must be 1-d arrays of equal length, got shapes {time.shape} and "
            f"{values.shape}"
        )
    if np.any(np.diff(time) < 0):
        raise ValueError("time must be sorted in increasing order")
    out = np.full(values.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(values))
    if finite.size < 2:
        return out
    t, v = time[finite], values[finite]
    increments = 0.5 * (v[1:] + v[:-1]) * np.diff(t)
    span = t[1:] - t[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        out[finite[1:]] = np.cumsum(increments) / span
    return out


def normalised_regret(
    table: pd.DataFrame,
    *,
    value: str = "mean",
    experiment_keys: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Min-max normalised regret per experiment and the papers' "Overall" row (spec_bolt §9.3).

    ``table`` is the long form of :func:`tvbo.analysis.tables.summary_table` (columns
    ``benchmark``, ``algorithm``, ``mean``, ``se``, ``n`` and any other experiment keys such as
    ``speed``). Per experiment (benchmark, and speed if present) the best algorithm gets 0 and
    the worst 1: ``N = (mean - min) / (max - min)``; the standard error is mapped by the same
    affine map (``se / (max - min)``). If all algorithms tie (``max == min``) every ``N`` is 0:
    all are equally best. The Overall rows (``benchmark == "Overall"``, one per algorithm and
    per value of the other experiment keys, e.g. per speed) hold ``mean_b N``, ``std_b(N,
    ddof=1) / sqrt(B)`` and ``n = B``, the number of benchmarks with a value. Spec §9.3 checked
    this against the BOLT paper's Table 2.
    """
    keys = list(EXPERIMENT_KEYS if experiment_keys is None else experiment_keys)
    keys = [k for k in keys if k in table.columns]
    required = ["benchmark", "algorithm", value]
    missing = [c for c in required if c not in table.columns]
    if missing:
        raise ValueError(
            f"normalised_regret needs columns {required}; missing {missing} "
            f"(got {list(table.columns)})"
        )
    if "benchmark" not in keys:
        keys = ["benchmark", *keys]
    data = table[table["benchmark"] != OVERALL_LABEL].copy()
    grouped = data.groupby(keys, sort=False, dropna=False)[value]
    low = grouped.transform("min")
    width = grouped.transform("max") - low
    safe_width = width.where(width > 0, np.inf)  # ties -> N = 0
    normalised = pd.DataFrame({k: data[k] for k in [*keys, "algorithm"]})
    normalised["mean"] = (data[value] - low) / safe_width
    normalised["se"] = data["se"] / safe_width if "se" in data.columns else np.nan
    normalised["n"] = data["n"] if "n" in data.columns else 1

    # lazy: aggregate loads scipy.stats (1.3 s measured on the 2-core box), and
    # `tvbo run` imports this module (api) but never summarises (tests/test_startup.py)
    from tvbo.analysis.aggregate import summarise_groups

    outer = [k for k in keys if k != "benchmark"]
    overall = summarise_groups(normalised, [*outer, "algorithm"], "mean", None, sort=False,
                               dropna=False)
    overall["benchmark"] = OVERALL_LABEL
    overall = overall[[*keys, "algorithm", "mean", "se", "n"]]
    return pd.concat([normalised, overall], ignore_index=True)
