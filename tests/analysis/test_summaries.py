"""Metrics, tables and figures: hand computations, edge cases, layout of the figures.

Complements tests/analysis/test_tables.py (which checks the Overall row against the BOLT paper).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from matplotlib.collections import PolyCollection

from tests.fake_runs import ALGORITHMS, BENCHMARKS, SEEDS, make_run, write_fake_campaign
from tvbo.algorithms.display import benchmark_display_name
from tvbo.analysis.figure_output import FigureOptions
from tvbo.analysis.figures import (
    FIGURE_FILES,
    dataset_size_vs_time,
    regret_vs_time,
    response_time_table,
    response_time_vs_dataset_size,
    write_figures,
)
from tvbo.analysis.metrics import (
    OVERALL_LABEL,
    average_regret,
    held_on_grid,
    normalised_regret,
    running_time_average,
    time_integrated_regret,
)
from tvbo.analysis.tables import (
    format_mean_se,
    pivot_summary,
    summary_table,
    to_csv,
    to_markdown,
    with_overall,
    write_tables,
)
from tvbo.results.campaign import merge_runs

# ---------------------------------------------------------------------------------- metrics ----


def test_average_regret_ignores_padding_but_not_nan_regret() -> None:
    regret = np.array([9.0, 1.0, 3.0, np.nan])
    warmup = np.array([1.0, 0.0, 0.0, np.nan])  # last entry: campaign padding
    assert average_regret(regret, warmup) == 2.0
    assert np.isnan(average_regret(np.array([1.0, np.nan]), np.array([0, 0])))
    with pytest.raises(ValueError, match="same shape"):
        average_regret(np.zeros(3), np.zeros(2))


def test_held_on_grid_is_right_continuous() -> None:
    grid = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    held = held_on_grid(np.array([1.0, 3.0]), np.array([10.0, 20.0]), grid)
    np.testing.assert_array_equal(held, [np.nan, 10.0, 10.0, 20.0, 20.0])
    # simultaneous events: the later one wins; trailing dims are carried along
    x = held_on_grid(np.array([1.0, 1.0]), np.array([[1.0, 2.0], [3.0, 4.0]]), grid, before=-1.0)
    np.testing.assert_array_equal(x, [[-1, -1], [3, 4], [3, 4], [3, 4], [3, 4]])
    with pytest.raises(ValueError, match="non-decreasing"):
        held_on_grid(np.array([2.0, 1.0]), np.array([1.0, 2.0]), grid)
    with pytest.raises(ValueError, match="one entry per event"):
        held_on_grid(np.array([1.0, 2.0]), np.array([1.0]), grid)


def test_time_integrated_regret_trapezoid_by_hand() -> None:
    # events: regret 1 from t=2.5, 3 from t=6; grid step 0.5 on [0, 10]
    grid = np.arange(0.0, 10.0 + 1e-12, 0.5)
    held = held_on_grid(np.array([2.5, 6.0]), np.array([1.0, 3.0]), grid)
    # covered span [2.5, 10] = 7.5 s; exact step integral 1*3.5 + 3*4 = 15.5; the trapezoid
    # rule adds half a cell times the jump on [5.5, 6]: 0.5 * 0.5 * (3 - 1) = 0.5
    assert time_integrated_regret(grid, held, 10.0) == pytest.approx(16.0 / 7.5, rel=1e-12)
    fine = np.linspace(0.0, 10.0, 200_001)
    fine_held = held_on_grid(np.array([2.5, 6.0]), np.array([1.0, 3.0]), fine)
    assert time_integrated_regret(fine, fine_held, 10.0) == pytest.approx(15.5 / 7.5, abs=1e-4)


def test_time_integrated_regret_exact_for_linear_and_clipped_at_horizon() -> None:
    grid = np.linspace(0.0, 20.0, 41)
    # r(t) = t on [0, 10]: integral 50, average 5 (trapezoid is exact); points after H ignored
    assert time_integrated_regret(grid, grid.copy(), 10.0) == pytest.approx(5.0, rel=1e-12)
    # a union grid with NaN at the other benchmark's points gives the same answer
    union = np.union1d(grid, grid + 0.25)
    values = np.where(np.isin(union, grid), union, np.nan)
    assert time_integrated_regret(union, values, 10.0) == pytest.approx(5.0, rel=1e-12)
    assert np.isnan(time_integrated_regret(grid, np.full(41, np.nan), 10.0))
    with pytest.raises(ValueError, match="horizon"):
        time_integrated_regret(grid, grid, 0.0)


def test_running_time_average_against_closed_form() -> None:
    t = np.linspace(0.0, 4.0, 81)
    values = np.where(t >= 1.0, 2.0 * t, np.nan)  # first value at t0 = 1
    running = running_time_average(t, values)
    later = t > 1.0
    # (1/(t - 1)) * integral_1^t 2s ds = (t^2 - 1)/(t - 1) = t + 1 (trapezoid exact for linear)
    np.testing.assert_allclose(running[later], t[later] + 1.0, rtol=1e-12)
    assert np.isnan(running[~later]).all()
    assert running[-1] == pytest.approx(time_integrated_regret(t, values, 4.0))


def test_normalised_regret_ties_and_speeds() -> None:
    table = pd.DataFrame(
        {
            "benchmark": ["a", "a", "b", "b", "a", "a", "b", "b"],
            "speed": [1.0, 1.0, 1.0, 1.0, 10.0, 10.0, 10.0, 10.0],
            "algorithm": ["x", "y"] * 4,
            "mean": [1.0, 3.0, 5.0, 5.0, 4.0, 2.0, 10.0, 20.0],
            "se": [0.2, 0.4, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0],
            "n": [3] * 8,
        }
    )
    out = normalised_regret(table).set_index(["benchmark", "speed", "algorithm"])
    assert out.loc[("a", 1.0, "y"), "mean"] == 1.0
    assert out.loc[("a", 1.0, "y"), "se"] == pytest.approx(0.4 / 2.0)
    assert out.loc[("b", 1.0, "x"), "mean"] == 0.0 and out.loc[("b", 1.0, "y"), "mean"] == 0.0
    # Overall per speed: speed 1 -> x: (0+0)/2, y: (1+0)/2; speed 10 -> x: (1+0)/2, y: (0+1)/2
    assert out.loc[(OVERALL_LABEL, 1.0, "x"), "mean"] == 0.0
    assert out.loc[(OVERALL_LABEL, 1.0, "y"), "mean"] == 0.5
    assert out.loc[(OVERALL_LABEL, 1.0, "y"), "se"] == pytest.approx(
        np.std([1, 0], ddof=1) / 2**0.5
    )
    assert out.loc[(OVERALL_LABEL, 10.0, "x"), "n"] == 2
    with pytest.raises(ValueError, match="missing"):
        normalised_regret(table.drop(columns="mean"))


# ----------------------------------------------------------------------------------- tables ----


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> xr.Dataset:
    paths = write_fake_campaign(tmp_path_factory.mktemp("runs"), skip={("shekel", "bolt", 2)})
    return merge_runs(paths)


@pytest.fixture(scope="module")
def speeds_campaign(tmp_path_factory) -> xr.Dataset:
    return merge_runs(write_fake_campaign(tmp_path_factory.mktemp("speeds"), speeds=(1.0, 10.0)))


def test_summary_table_against_the_runs_themselves(campaign: xr.Dataset) -> None:
    table = summary_table(campaign, "time_integrated_regret").set_index(["benchmark", "algorithm"])
    for benchmark in BENCHMARKS:
        for algorithm in ALGORITHMS:
            seeds = [s for s in SEEDS if (benchmark, algorithm, s) != ("shekel", "bolt", 2)]
            values = np.array(
                [make_run(benchmark, algorithm, s).attrs["time_integrated_regret"] for s in seeds]
            )
            row = table.loc[(benchmark, algorithm)]
            assert row["n"] == len(seeds)
            assert row["mean"] == pytest.approx(values.mean(), rel=1e-12)
            se = np.sqrt(np.sum((values - values.mean()) ** 2) / (len(values) - 1) / len(values))
            assert row["se"] == pytest.approx(se, rel=1e-12)
    wide = pivot_summary(summary_table(campaign), "n")
    assert wide.loc[("shekel", 1.0), "bolt"] == 2
    with pytest.raises(ValueError, match="valid choices"):
        pivot_summary(summary_table(campaign), "median")


@pytest.mark.parametrize(
    ("mean", "se", "text"),
    [
        (2.514, 0.0612, "2.51 ± 0.06"),
        (516.2, 16.61, "516 ± 17"),
        (0.0123, 0.0004, "0.0123 ± 0.0004"),
        (3.0, 0.0001, "3.00 ± 0.0001"),
        (1.5, float("nan"), "1.50"),
        (float("nan"), 1.0, "n/a"),
        (1.234e9, 1e7, "1.23e+09 ± 1.0e+07"),
    ],
)
def test_format_mean_se(mean: float, se: float, text: str) -> None:
    assert format_mean_se(mean, se, 3) == text


def test_markdown_layout_bold_and_missing_cells() -> None:
    table = pd.DataFrame(
        {
            "benchmark": ["shekel", "shekel", "shekel", "ackley", "ackley"],
            "speed": [1.0] * 5,
            "algorithm": ["a", "b", "c", "a", "b"],
            "mean": [2.0, 1.0, 1.0, 5.0, 4.0],
            "se": [0.1, 0.2, 0.3, 0.5, 0.5],
            "n": [3, 3, 3, 3, 2],
        }
    )
    lines = to_markdown(table, digits=2).splitlines()
    assert lines[0] == "| benchmark | a | b | c |"
    # equal lowest means are a tie: never bold, both underlined
    assert lines[2] == "| shekel | 2.0 ± 0.1 | <u>1.0 ± 0.2</u> | <u>1.0 ± 0.3</u> |"
    # intervals [4.5, 5.5] and [3.5, 4.5] touch: not separated, so tied
    assert lines[3] == "| ackley | <u>5.0 ± 0.5</u> | <u>4.0 ± 0.5</u> | n/a |"
    assert "over 2–3 seeds" in lines[-1]
    separated = to_markdown(table, digits=2, ci=0.5).splitlines()
    assert separated[3] == "| ackley | 5.0 ± 0.5 | **4.0 ± 0.5** | n/a |"
    reordered = to_markdown(table, algorithms=["c", "b", "a"], caption=False).splitlines()
    assert reordered[0] == "| benchmark | c | b | a |" and len(reordered) == 4
    with pytest.raises(ValueError, match="not in table"):
        to_markdown(table, algorithms=["z"])


def test_markdown_labels_speeds_and_overall(speeds_campaign: xr.Dataset) -> None:
    text = to_markdown(with_overall(summary_table(speeds_campaign)))
    for label in ("eggholder (speed 1)", "shekel (speed 10)", "Overall (speed 10)"):
        assert f"| {label} |" in text
    assert "normalised" in text.splitlines()[-1]


def test_write_tables_csv_round_trip(campaign: xr.Dataset, tmp_path: Path) -> None:
    paths = write_tables(campaign, tmp_path, metrics=("average_regret",))
    assert [p.name for p in paths] == ["average_regret.csv", "average_regret.md"]
    back = pd.read_csv(paths[0])
    expected = summary_table(campaign, "average_regret")
    np.testing.assert_allclose(back["mean"], expected["mean"], rtol=1e-12)
    assert "| Overall |" in paths[1].read_text(encoding="utf-8")
    assert OVERALL_LABEL not in set(back["benchmark"])  # CSV: one row per experiment x algorithm
    assert to_csv(expected, tmp_path / "deep" / "t.csv").exists()


# ---------------------------------------------------------------------------------- figures ----


def _visible_axes(fig) -> list:
    return [ax for ax in fig.axes if ax.get_visible()]


def test_regret_vs_time_layout(campaign: xr.Dataset) -> None:
    fig = regret_vs_time(campaign)
    axes = _visible_axes(fig)
    assert len(axes) == 2 * len(BENCHMARKS)  # held regret + running average per benchmark
    for ax in axes:
        assert len(ax.lines) == len(ALGORITHMS)
        assert sum(isinstance(c, PolyCollection) for c in ax.collections) == len(ALGORITHMS)
    titles = {ax.get_title() for ax in axes} - {""}
    assert titles == {benchmark_display_name(b) for b in BENCHMARKS}  # not registry keys
    assert {ax.get_xlabel() for ax in axes} == {"", "virtual time [s]"}
    assert len(fig.legends) == 1 and len(fig.legends[0].get_texts()) == len(ALGORITHMS)


def test_regret_curve_is_the_mean_over_seeds(campaign: xr.Dataset) -> None:
    fig = regret_vs_time(campaign)
    ax = next(a for a in fig.axes if a.get_title() == "Eggholder")
    line = next(ln for ln in ax.lines if ln.get_label() == "gp_ucb")
    runs = [make_run("eggholder", "gp_ucb", s) for s in SEEDS]
    time = runs[0]["time"].values
    held = np.vstack([r["regret_held"].values.ravel() for r in runs])
    t_plot, y_plot = line.get_data()
    np.testing.assert_allclose(t_plot, time[np.isfinite(held).any(axis=0)])
    with np.errstate(invalid="ignore"):
        expected = np.nanmean(held[:, np.isfinite(held).any(axis=0)], axis=0)
    np.testing.assert_allclose(y_plot, expected, rtol=1e-12)


def test_figures_with_several_speeds(speeds_campaign: xr.Dataset) -> None:
    campaign = speeds_campaign
    for fig, rows in ((dataset_size_vs_time(campaign), 1), (regret_vs_time(campaign), 2)):
        assert len(_visible_axes(fig)) == rows * len(BENCHMARKS)
        for ax in _visible_axes(fig):
            assert len(ax.lines) == 2 * len(ALGORITHMS)
            assert {ln.get_linestyle() for ln in ax.lines} == {"-", "--"}
    fig = response_time_vs_dataset_size(campaign)
    # one line per (algorithm, speed) in every phase panel, plus the dashed evaluation cost c
    assert all(len(ax.lines) == 2 * len(ALGORITHMS) + 1 for ax in _visible_axes(fig))


def test_response_time_table_by_hand(campaign: xr.Dataset) -> None:
    table = response_time_table(campaign)
    runs = [make_run("eggholder", "bolt", s) for s in SEEDS]
    size, response, warm = (
        np.concatenate([r[v].values.ravel() for r in runs])
        for v in ("dataset_size", "response_time", "is_warmup")
    )
    keep = warm == 0
    rows = table[(table["benchmark"] == "eggholder") & (table["algorithm"] == "bolt")]
    np.testing.assert_array_equal(rows["dataset_size"], np.unique(size[keep]))
    for n, mean in zip(rows["dataset_size"], rows["mean"], strict=True):
        assert mean == pytest.approx(response[keep & (size == n)].mean(), rel=1e-12)


def test_write_figures_png(campaign: xr.Dataset, tmp_path: Path) -> None:
    paths = write_figures(campaign, tmp_path / "figures", options=FigureOptions(dpi=60))
    assert [p.name for p in paths] == list(FIGURE_FILES.values())
    for path in paths:
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5_000


def test_figures_reject_a_dataset_without_the_variables(campaign: xr.Dataset) -> None:
    with pytest.raises(ValueError, match="regret_held"):
        regret_vs_time(campaign.drop_vars("regret_held"))
