"""The ``aggregate`` option: one module, three estimators, used by tables and curves."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tests.analysis.test_compare import make_campaign
from tvbo.analysis.aggregate import (
    AGGREGATES,
    band_label,
    check_aggregate,
    mean_se,
    mean_se_columns,
    summarise,
    summarise_columns,
    summarise_groups,
)
from tvbo.analysis.tables import write_tables

#: one diverged seed (40.0) drags algorithm a's mean above b's; its median stays below
VALUES = {("b1", "a"): [1.0, 1.1, 1.2, 1.3, 40.0], ("b1", "b"): [2.0, 2.1, 2.2, 2.3, 2.4],
          ("b2", "a"): [3.0, 3.0, 3.5, 4.0, 4.5], ("b2", "b"): [5.0, 5.5, 6.0, 6.5, 7.0]}


def test_each_estimator_against_numpy_and_scipy() -> None:
    x = np.array([1.0, 1.1, 1.2, 1.3, 40.0, np.nan])
    finite = x[np.isfinite(x)]
    mean, se, n = mean_se(x)
    assert (mean, n) == (pytest.approx(finite.mean()), 5)
    assert se == pytest.approx(finite.std(ddof=1) / math.sqrt(5))
    assert summarise(x, "mean_se") == pytest.approx((mean, mean - se, mean + se, 5))
    assert summarise(x, "median_iqr") == pytest.approx((1.2, 1.1, 1.3, 5))
    iqm = summarise(x, "iqm_bootstrap")
    assert iqm.centre == pytest.approx(stats.trim_mean(finite, 0.25))
    assert iqm.low <= iqm.centre <= iqm.high and iqm.n == 5
    assert summarise(x, "iqm_bootstrap") == iqm  # fixed seed: reproducible interval
    assert math.isnan(summarise([3.0], "median_iqr").low)
    with pytest.raises(ValueError, match="unknown aggregate 'mode'; valid: mean_se, "
                                         "median_iqr, iqm_bootstrap"):
        check_aggregate("mode")


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13, 40])
def test_mean_se_is_numpy_mean_and_scipy_sem_bit_for_bit(size: int) -> None:
    """The one mean ± s.e. of the package is numpy's mean and scipy's ``sem`` (ddof 1) of the
    finite values, to the last bit (a NaN or an infinite value is no seed's value)."""
    rng = np.random.default_rng(size)
    values = rng.lognormal(size=size) * 10.0 ** rng.integers(-3, 4, size=size)
    with_gaps = np.concatenate([values, [np.nan, np.inf]])
    mean, se, n = mean_se(with_gaps)
    assert n == size
    assert mean == np.mean(values)
    if size > 1:
        assert se == stats.sem(values, ddof=1)
    else:
        assert math.isnan(se)
    assert mean_se([]) == (pytest.approx(math.nan, nan_ok=True),
                           pytest.approx(math.nan, nan_ok=True), 0)


def test_mean_se_columns_is_mean_se_of_each_column() -> None:
    """Curves' mean ± s.e. (figures, paper figures) is :func:`mean_se` per column: bit for bit
    below 8 seeds, to rounding beyond; std is numpy's with ddof 1."""
    rng = np.random.default_rng(5)
    for seeds in (1, 2, 5, 7, 12):
        matrix = rng.lognormal(size=(seeds, 30))
        matrix[rng.random(matrix.shape) < 0.25] = np.nan  # ragged runs
        matrix[:, 0] = np.nan  # a step no run reached
        mean, std, se, n = mean_se_columns(matrix)
        assert math.isnan(mean[0]) and n[0] == 0
        for j in range(1, matrix.shape[1]):
            column = matrix[:, j][np.isfinite(matrix[:, j])]
            expected = mean_se(column)
            assert n[j] == expected[2] == column.size
            if seeds < 8:
                assert (mean[j], se[j]) == pytest.approx(expected[:2], rel=0, abs=0,
                                                         nan_ok=True)
            assert (mean[j], se[j]) == pytest.approx(expected[:2], rel=1e-14, nan_ok=True)
            if column.size > 1:
                assert std[j] == pytest.approx(np.std(column, ddof=1), rel=1e-14)
            else:
                assert math.isnan(std[j]) and math.isnan(se[j])


def test_summarise_groups_is_mean_se_per_group() -> None:
    """One row per group, in groupby's order: mean, se (scipy ``sem``) and n, and the
    aggregate's interval; ``mean`` is ``centre`` under ``mean_se``; NaN keys kept on request."""
    frame = pd.DataFrame([
        {"benchmark": b, "algorithm": a, "value": v}
        for (b, a), values in VALUES.items() for v in values
    ] + [{"benchmark": "b2", "algorithm": "b", "value": np.nan},  # a run without a value
         {"benchmark": None, "algorithm": "a", "value": 1.0}])
    table = summarise_groups(frame, ["benchmark", "algorithm"], "value")
    assert list(table.columns) == ["benchmark", "algorithm", "mean", "se", "n", "centre", "low",
                                   "high"]
    assert list(zip(table["benchmark"], table["algorithm"], strict=True)) == list(VALUES)
    for row in table.itertuples(index=False):
        values = np.array(VALUES[(row.benchmark, row.algorithm)])
        assert (row.mean, row.se, row.n) == (np.mean(values), stats.sem(values), values.size)
        assert (row.centre, row.low, row.high) == (row.mean, row.mean - row.se,
                                                   row.mean + row.se)
    median = summarise_groups(frame, ["benchmark", "algorithm"], "value", "median_iqr")
    assert median["centre"].tolist() == [1.2, 2.2, 3.5, 6.0]
    assert median["mean"].tolist() == table["mean"].tolist()  # the papers' numbers stay
    bare = summarise_groups(frame, ["algorithm", "benchmark"], "value", None, sort=False,
                            dropna=False)
    assert list(bare.columns) == ["algorithm", "benchmark", "mean", "se", "n"]
    assert bare["algorithm"].tolist() == ["a", "b", "a", "b", "a"]  # order of appearance
    assert bare["benchmark"].isna().tolist() == [False] * 4 + [True]
    assert bare["n"].tolist() == [5, 5, 5, 5, 1]
    empty = summarise_groups(frame.iloc[:0], ["benchmark"], "value")
    assert empty.empty and list(empty.columns) == ["benchmark", "mean", "se", "n", "centre",
                                                   "low", "high"]


@pytest.mark.parametrize("aggregate", AGGREGATES)
def test_columns_equal_the_scalar_summary(aggregate: str) -> None:
    rng = np.random.default_rng(3)
    matrix = rng.lognormal(size=(5, 7))
    matrix[0, 2] = matrix[3, 5] = np.nan  # seeds missing at some points
    centre, low, high, n = summarise_columns(matrix, aggregate)
    for j in range(matrix.shape[1]):
        expected = summarise(matrix[:, j], aggregate)
        assert (centre[j], low[j], high[j]) == pytest.approx(expected[:3])
        assert n[j] == expected.n


def test_band_label_says_what_and_how_many_seeds() -> None:
    assert band_label("mean_se", [5, 5]) == "line: mean, band: ± 1 s.e., over 5 seeds"
    assert band_label("median_iqr", [3, 5]) == "line: median, band: IQR (Q1-Q3), over 3-5 seeds"


def test_median_iqr_changes_the_table_values_not_only_the_labels(tmp_path: Path) -> None:
    campaign = make_campaign(VALUES)
    mean_dir, median_dir = tmp_path / "mean", tmp_path / "median"
    write_tables(campaign, mean_dir, formats=("csv", "md"))
    write_tables(campaign, median_dir, formats=("csv", "md"), aggregate="median_iqr")
    by_mean = pd.read_csv(mean_dir / "average_regret.csv").set_index(["benchmark", "algorithm"])
    by_median = pd.read_csv(median_dir / "average_regret.csv").set_index(
        ["benchmark", "algorithm"])
    assert by_median.loc[("b1", "a"), "centre"] == pytest.approx(1.2)
    assert by_median.loc[("b1", "a"), ["low", "high"]].tolist() == pytest.approx([1.1, 1.3])
    # the diverged seed: by the mean a is worse than b on b1, by the median a is best (bold)
    assert not by_mean.loc[("b1", "a"), "best"] and by_median.loc[("b1", "a"), "best"]
    mean_md = (mean_dir / "average_regret.md").read_text()
    median_md = (median_dir / "average_regret.md").read_text()
    assert "8.92 ± 7.77" in mean_md and "1.20 [1.10, 1.30]" in median_md
    assert "8.92" not in median_md.split("Overall")[0]
    assert "Every cell: median [IQR (Q1-Q3)] over 5 seeds" in median_md


