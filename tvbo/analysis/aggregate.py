"""How seeds are aggregated, in tables and in figure curves: one module, three estimators.

``aggregate:`` (config, ``--aggregate`` on the table and figure commands) chooses

* ``mean_se`` -- the mean and ± one standard error ``std(ddof=1) / sqrt(n)``: what the papers
  print, and the default;
* ``median_iqr`` -- the median and the interquartile range [Q1, Q3] (linear interpolation,
  numpy's default): robust to the one diverged seed that drags a mean;
* ``iqm_bootstrap`` -- the interquartile mean (the mean of the middle 50 %,
  ``scipy.stats.trim_mean(x, 0.25)``) and its 95 % percentile-bootstrap interval
  (``scipy.stats.bootstrap``, :data:`BOOTSTRAP_RESAMPLES` resamples, a fixed random seed so
  the same campaign gives the same interval): Agarwal et al. (2021)'s recommendation for few
  seeds.

Each gives a centre and an interval ``[low, high]``; :func:`band_label` says in words what a
band is and over how many seeds, for legends and captions.

:func:`mean_se` is the one mean ± s.e. of the package (numpy's mean and scipy's ``sem``, to the
bit): :func:`summarise_groups` applies it per group (summary, what-if and parallel tables, the
normalised Overall rows, so a table's ``mean`` is its ``centre``) and :func:`mean_se_columns`
per column of a curve matrix (figures and the paper figures' step curves).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

AGGREGATES: tuple[str, ...] = ("mean_se", "median_iqr", "iqm_bootstrap")
DEFAULT_AGGREGATE = "mean_se"
#: bootstrap resamples of ``iqm_bootstrap`` and its confidence level
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_LEVEL = 0.95
BOOTSTRAP_SEED = 20240601
#: what the centre and the band of each aggregate are (legends, captions, table headers)
CENTRE_NAMES: dict[str, str] = {
    "mean_se": "mean", "median_iqr": "median", "iqm_bootstrap": "IQM",
}
BAND_NAMES: dict[str, str] = {
    "mean_se": "± 1 s.e.", "median_iqr": "IQR (Q1-Q3)", "iqm_bootstrap": "95 % bootstrap CI",
}


class Summary(NamedTuple):
    """Centre, interval and the number of finite values behind them."""

    centre: float
    low: float
    high: float
    n: int


def check_aggregate(name: str) -> str:
    """``name`` if it is one of :data:`AGGREGATES`, else a ValueError listing them."""
    if name not in AGGREGATES:
        raise ValueError(f"unknown aggregate {name!r}; valid: {', '.join(AGGREGATES)}")
    return name


def mean_se(values: Sequence[float] | np.ndarray) -> tuple[float, float, int]:
    """Mean, standard error ``std(ddof=1)/sqrt(n)`` and n of the finite ``values``.

    NaN mean for no value, NaN s.e. for fewer than two.
    """
    x = np.asarray(values, dtype=float).ravel()
    x = x[np.isfinite(x)]
    n = int(x.size)
    if n == 0:
        return math.nan, math.nan, 0
    se = float(x.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    return float(x.mean()), se, n


def mean_se_columns(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Column-wise ``(mean, std, se, n)`` of the finite entries of a seeds x points matrix.

    :func:`mean_se` per column (curves over time or steps, ragged runs padded with NaN), summed
    over the rows in order in one vectorised pass: the same numbers as :func:`mean_se` of each
    column for fewer than 8 seeds, equal up to rounding in the last bits beyond (numpy sums a
    longer 1-D array pairwise). NaN mean without a value, NaN std and se with fewer than two.
    """
    matrix = np.atleast_2d(np.asarray(matrix, dtype=float))
    finite = np.isfinite(matrix)
    n = finite.sum(axis=0)
    filled = np.where(finite, matrix, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=0) / n
        squares = np.where(finite, (matrix - mean) ** 2, 0.0).sum(axis=0)
        std = np.sqrt(squares / (n - 1))
        se = std / np.sqrt(n)
    mean[n == 0] = np.nan
    std[n < 2] = np.nan
    se[n < 2] = np.nan
    return mean, std, se, n


def _iqm(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return stats.trim_mean(x, 0.25, axis=axis)


def summarise(values: Sequence[float] | np.ndarray, aggregate: str = DEFAULT_AGGREGATE
              ) -> Summary:
    """The :class:`Summary` of the finite ``values`` under ``aggregate``.

    With one value the interval is NaN (no spread to show); with none everything is NaN.
    """
    check_aggregate(aggregate)
    x = np.asarray(values, dtype=float).ravel()
    x = x[np.isfinite(x)]
    n = int(x.size)
    if n == 0:
        return Summary(math.nan, math.nan, math.nan, 0)
    if aggregate == "mean_se":
        mean, se, _ = mean_se(x)
        return Summary(mean, mean - se, mean + se, n)
    if aggregate == "median_iqr":
        q1, median, q3 = np.percentile(x, [25.0, 50.0, 75.0])
        if n < 2:
            return Summary(float(median), math.nan, math.nan, n)
        return Summary(float(median), float(q1), float(q3), n)
    centre = float(_iqm(x))
    if n < 2 or np.all(x == x[0]):
        spread = 0.0 if n >= 2 else math.nan
        return Summary(centre, centre - spread, centre + spread, n)
    result = stats.bootstrap(
        (x,), _iqm, n_resamples=BOOTSTRAP_RESAMPLES, confidence_level=BOOTSTRAP_LEVEL,
        method="percentile", vectorized=True, rng=np.random.default_rng(BOOTSTRAP_SEED),
    )
    return Summary(centre, float(result.confidence_interval.low),
                   float(result.confidence_interval.high), n)


def summarise_columns(matrix: np.ndarray, aggregate: str = DEFAULT_AGGREGATE
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Column-wise ``(centre, low, high, n)`` of a seeds x points matrix (curves over time).

    ``mean_se`` and ``median_iqr`` are vectorised (NaN-aware); ``iqm_bootstrap`` groups the
    columns by which seeds have a value and bootstraps each group at once.
    """
    check_aggregate(aggregate)
    matrix = np.atleast_2d(np.asarray(matrix, dtype=float))
    finite = np.isfinite(matrix)
    n = finite.sum(axis=0)
    centre = np.full(matrix.shape[1], np.nan)
    low = np.full(matrix.shape[1], np.nan)
    high = np.full(matrix.shape[1], np.nan)
    if aggregate == "mean_se":
        centre, _, se, n = mean_se_columns(matrix)
        return centre, centre - se, centre + se, n
    if aggregate == "median_iqr":
        some = n > 0
        if some.any():
            q1, median, q3 = np.nanpercentile(matrix[:, some], [25.0, 50.0, 75.0], axis=0)
            centre[some] = median
            spread = n[some] > 1
            low[np.flatnonzero(some)[spread]] = q1[spread]
            high[np.flatnonzero(some)[spread]] = q3[spread]
        return centre, low, high, n
    patterns: dict[bytes, list[int]] = {}
    for column in np.flatnonzero(n > 0):
        patterns.setdefault(finite[:, column].tobytes(), []).append(int(column))
    for key, columns in patterns.items():
        rows = np.frombuffer(key, dtype=bool)
        block = matrix[np.ix_(rows, columns)]  # seeds x columns, all finite
        centre[columns] = _iqm(block, axis=0)
        if block.shape[0] < 2:
            continue
        varies = np.ptp(block, axis=0) > 0
        low[columns] = high[columns] = centre[columns]
        if varies.any():
            cols = np.asarray(columns)[varies]
            result = stats.bootstrap(
                (block[:, varies].T,), _iqm, n_resamples=BOOTSTRAP_RESAMPLES,
                confidence_level=BOOTSTRAP_LEVEL, method="percentile", vectorized=True,
                axis=-1, rng=np.random.default_rng(BOOTSTRAP_SEED),
            )
            low[cols] = result.confidence_interval.low
            high[cols] = result.confidence_interval.high
    return centre, low, high, n


def summarise_groups(frame: pd.DataFrame, keys: Sequence[str], value: str,
                     aggregate: str | None = DEFAULT_AGGREGATE, *, sort: bool = True,
                     dropna: bool = True) -> pd.DataFrame:
    """One row per group of ``keys`` (pandas ``groupby(keys, sort=sort, dropna=dropna)``):
    ``mean``, ``se`` and ``n`` of ``value`` (:func:`mean_se`: the papers' numbers, kept whatever
    the aggregate), then ``centre``, ``low`` and ``high`` of ``aggregate`` (none for ``None``).

    The one grouped mean ± s.e. of the package: summary tables, what-if tables and the
    normalised Overall rows call it, so a cell's ``mean`` is its ``centre`` under ``mean_se``.
    """
    if aggregate is not None:
        check_aggregate(aggregate)
    spread = ("centre", "low", "high") if aggregate is not None else ()
    rows = []
    for group, part in frame.groupby(list(keys), sort=sort, dropna=dropna):
        group = group if isinstance(group, tuple) else (group,)
        values = part[value].to_numpy()
        row = dict(zip(keys, group, strict=True))
        row["mean"], row["se"], row["n"] = mean_se(values)
        if aggregate is not None:
            row.update(zip(spread, summarise(values, aggregate)[:3], strict=True))
        rows.append(row)
    table = pd.DataFrame(rows, columns=[*keys, "mean", "se", "n", *spread])
    return table.astype({"n": int, **dict.fromkeys(("mean", "se", *spread), float)})


def band_label(aggregate: str, seeds: int | Sequence[int]) -> str:
    """"mean ± 1 s.e. over 5 seeds" (or "3-5 seeds" when curves differ)."""
    check_aggregate(aggregate)
    counts = sorted({int(s) for s in np.ravel(seeds) if int(s) > 0}) if not isinstance(
        seeds, int) else [seeds]
    if not counts:
        span = "0 seeds"
    elif counts[0] == counts[-1]:
        span = f"{counts[0]} seed{'s' if counts[0] != 1 else ''}"
    else:
        span = f"{counts[0]}-{counts[-1]} seeds"
    return f"line: {CENTRE_NAMES[aggregate]}, band: {BAND_NAMES[aggregate]}, over {span}"
