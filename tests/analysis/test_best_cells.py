"""The marks of a results table: the papers' bold-and-underline rule and tvbo's separated-best
rule (tvbo/analysis/best_cells.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tvbo.analysis.best_cells import (
    best_and_overlapping,
    separated_best,
    separated_best_intervals,
)


def test_best_and_overlapping_crafted_row() -> None:
    means = [1.0, 1.5, 2.0, 1.2, np.nan]
    ses = [0.2, 0.31, 0.1, 0.0, 0.1]
    best, overlaps = best_and_overlapping(means, ses)  # best interval [0.8, 1.2]
    assert best.tolist() == [True, False, False, False, False]
    # 1.5 - 0.31 = 1.19 < 1.2 overlaps; 1.9 does not; 1.2 with s.e. 0 only touches; NaN neither
    assert overlaps.tolist() == [False, True, False, False, False]
    _, wide = best_and_overlapping(means, ses, ci=2.0)  # best interval [0.6, 1.4]
    assert wide.tolist() == [False, True, False, True, False]
    _, none = best_and_overlapping(means, ses, ci=0.0)
    assert not none.any()
    tied, tied_overlaps = best_and_overlapping([1.0, 1.0, 1.3], [0.0, 0.4, 0.1])
    assert tied.tolist() == [True, True, False] and tied_overlaps.tolist() == [False, False, True]
    # a missing s.e. is a point interval
    _, point = best_and_overlapping([1.0, 1.1], [np.nan, 0.2])
    assert point.tolist() == [False, True]
    with pytest.raises(ValueError, match="finite number >= 0"):
        best_and_overlapping(means, ses, ci=-1)
    with pytest.raises(ValueError, match="equal length"):
        best_and_overlapping([1.0], [0.1, 0.2])


def test_separated_best_bolds_only_beyond_the_standard_errors() -> None:
    # separated: 1 + 0.1 < 2 - 0.1 and < 3 - 0.1
    bold, tied = separated_best([3.0, 2.0, 1.0], [0.1, 0.1, 0.1])
    assert bold.tolist() == [False, False, True] and not tied.any()
    # overlapping: 1.0 + 0.1 >= 1.15 - 0.1 -> no bold, the tied set is underlined
    bold, tied = separated_best([5.0, 1.15, 1.0], [0.0, 0.1, 0.1])
    assert not bold.any() and tied.tolist() == [False, True, True]
    # touching counts as tied (not "more than" the s.e. apart); ci scales the intervals
    bold, tied = separated_best([1.0, 1.2], [0.1, 0.1])
    assert not bold.any() and tied.all()
    bold, _ = separated_best([1.0, 1.2], [0.1, 0.1], ci=0.5)
    assert bold.tolist() == [True, False]
    bold, tied = separated_best([1.0, 1.2], [0.1, 0.1], ci=3)
    assert not bold.any() and tied.all()
    # one finite cell: nothing to compare; NaN means never marked
    bold, tied = separated_best([1.0, np.nan], [0.1, 0.1])
    assert not bold.any() and not tied.any()
    with pytest.raises(ValueError, match="finite number >= 0"):
        separated_best([1.0, 2.0], [0.1, 0.1], ci=-1)


def test_interval_marks_equal_the_se_marks_on_mean_se_intervals() -> None:
    means, ses = np.array([1.0, 1.5, 3.0, np.nan]), np.array([0.3, 0.3, 0.1, 0.1])
    for ci in (0.0, 1.0, 2.0):
        got = separated_best_intervals(means, means - ci * ses, means + ci * ses)
        want = separated_best(means, ses, ci)
        assert all((g == w).all() for g, w in zip(got, want, strict=True))
