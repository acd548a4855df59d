"""Which cells of a results table are marked, and why: the papers' rule and tvbo's.

A reader of a table asks first why a cell is bold. Two rules answer it, both on one table row
(one experiment: benchmark and the other experiment keys) of means and standard errors, with the
interval of a cell ``[mean - ci * se, mean + ci * se]`` (``ci`` = :data:`DEFAULT_CI` = 1 by
default, the interval the papers print):

* the papers' caption (:func:`best_and_overlapping`): the lowest mean is bold, and the cells
  whose intervals overlap the best one's are underlined -- used to check the published tables
  (:mod:`tvbo.analysis.published`) and the reproduction report's tie rule;
* tvbo's own tables (:func:`separated_best`, :func:`separated_best_intervals` for the median's
  IQR or the IQM's bootstrap interval): the lowest centre is bold only when it is separated from
  every other cell, else the cells tied for best are underlined -- a bold cell is a finding.

:func:`tvbo.analysis.tables.mark_best` applies the second rule to every row of a long table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

#: half-width of the confidence interval in standard errors (the papers print mean ± 1 s.e.)
DEFAULT_CI = 1.0


def check_ci(ci: float) -> float:
    """The interval half-width in standard errors, validated (a finite number >= 0)."""
    try:
        value = float(ci)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(
            f"ci (interval half-width in standard errors) must be a finite number >= 0, got {ci!r}"
        )
    return value


def best_and_overlapping(
    means: Sequence[float], ses: Sequence[float], ci: float = DEFAULT_CI
) -> tuple[np.ndarray, np.ndarray]:
    """Which cells of one table row are bold (best) and which are underlined.

    The papers' caption: "the performance of the best algorithm is written in bold, and the
    performance of algorithms whose confidence intervals overlap the confidence interval of the
    best performing algorithm are underlined". The caption gives no level, and the tables print
    mean ± s.e., so the interval of a cell is ``[mean - ci * se, mean + ci * se]`` with
    ``ci = 1`` by default (``ci = 1.96`` gives normal 95 % intervals; ``ci = 0`` turns the
    underlines off). Best = the lowest finite mean (every tied one). A non-best cell is
    underlined when its interval and a best cell's interval share more than one point
    (``mean - ci * se < best + ci * se_best``; intervals that merely touch are not underlined). A
    missing s.e. (one seed, or a paper that printed none) counts as 0: a point interval. Cells
    with a NaN mean are neither.
    """
    ci, means, ses, finite = _row(means, ses, ci)
    best = np.zeros(means.shape, dtype=bool)
    overlaps = np.zeros(means.shape, dtype=bool)
    if not finite.any():
        return best, overlaps
    best = finite & (means == means[finite].min())
    best_upper = (means[best] + ci * ses[best]).max()
    overlaps = finite & ~best & (means - ci * ses < best_upper)
    return best, overlaps


def _row(means: Sequence[float], ses: Sequence[float], ci: float
         ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """A table row's ``(ci, means, ses, finite)``, checked: 1-d, equal lengths, s.e. NaN -> 0."""
    ci = check_ci(ci)
    means = np.asarray(means, dtype=float)
    ses = np.nan_to_num(np.asarray(ses, dtype=float), nan=0.0)
    if means.shape != ses.shape or means.ndim != 1:
        raise ValueError(
            f"means and ses must be 1-d and of equal length, got {means.shape} and {ses.shape}"
        )
    return ci, means, ses, np.isfinite(means)


def separated_best(
    means: Sequence[float], ses: Sequence[float], ci: float = DEFAULT_CI
) -> tuple[np.ndarray, np.ndarray]:
    """tvbo's marks of one table row: ``(bold, tied)``, decided by the standard errors.

    The lowest mean is **bold** only when it is separated from every other cell: with
    ``ci`` standard errors (default 1), ``best_mean + ci * best_se < other_mean - ci *
    other_se`` for every other finite cell (for minimisation), i.e. the intervals ``mean ±
    ci * se`` do not meet. Otherwise nothing is bold and the cells *tied* for best are
    underlined: the lowest mean(s) and every cell with ``mean - ci * se <= best_mean + ci *
    best_se`` (its interval reaches the best one's; touching counts as tied, since it is not
    "more than the standard errors" apart). Why not the papers' rule (always bold the lowest
    mean, :func:`best_and_overlapping`): a bold cell should be a finding, and with 3-10 seeds
    the lowest mean often is not one. Missing s.e. (one seed) counts as 0; NaN means are never
    marked; a row with fewer than two finite cells is not marked (nothing to compare).
    """
    ci, means, ses, _ = _row(means, ses, ci)
    return separated_best_intervals(means, means - ci * ses, means + ci * ses)


def separated_best_intervals(
    centres: Sequence[float], lows: Sequence[float], highs: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`separated_best` on explicit intervals ``[low, high]`` around each centre (the
    median's IQR, the IQM's bootstrap interval): the lowest centre is bold when its interval
    is below every other; else the cells whose interval reaches it are tied. A NaN bound
    (one seed) makes a point interval at the centre."""
    centres = np.asarray(centres, dtype=float)
    finite = np.isfinite(centres)
    lows = np.where(np.isfinite(lows), np.asarray(lows, dtype=float), centres)
    highs = np.where(np.isfinite(highs), np.asarray(highs, dtype=float), centres)
    bold = np.zeros(centres.shape, dtype=bool)
    tied = np.zeros(centres.shape, dtype=bool)
    if finite.sum() < 2:
        return bold, tied
    lowest = finite & (centres == centres[finite].min())
    best_upper = highs[lowest].max()
    reach = finite & (lowest | (lows <= best_upper))
    if reach.sum() == 1:
        return reach, tied
    return bold, reach
