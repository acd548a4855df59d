"""Metrics, tables and figures against hand computations and the papers' own numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.fake_runs import write_fake_campaign
from tvbo.analysis.figures import write_figures
from tvbo.analysis.metrics import (
    OVERALL_LABEL,
    average_regret,
    held_on_grid,
    normalised_regret,
    time_integrated_regret,
)
from tvbo.analysis.tables import summary_table, to_markdown, write_tables
from tvbo.results.campaign import merge_runs, runs_table


def test_average_regret_excludes_warmup():
    regret = np.array([10.0, 10.0, 1.0, 2.0, 3.0])
    warm = np.array([1, 1, 0, 0, 0])
    assert average_regret(regret, warm) == pytest.approx(2.0)
    assert np.isnan(average_regret(regret, np.ones(5)))


def test_time_integrated_regret_of_a_step_function():
    # regret 2 on [0, 4), then 0 on [4, 10]: on a fine grid the integral is 8 => 8 / 10
    grid = np.linspace(0.0, 10.0, 10001)
    held = held_on_grid(np.array([0.0, 4.0]), np.array([2.0, 0.0]), grid)
    assert time_integrated_regret(grid, held, 10.0) == pytest.approx(0.8, abs=1e-3)
    # before the first event there is no configuration: NaN, excluded from the integral
    late = held_on_grid(np.array([5.0]), np.array([1.0]), grid)
    assert np.isnan(late[grid < 5.0]).all() and (late[grid >= 5.0] == 1.0).all()
    assert time_integrated_regret(grid, late, 10.0) == pytest.approx(1.0)


def test_normalised_regret_reproduces_the_papers_overall_row():
    # BOLT [B] Table 2 means (spec_bolt.md 9.2) and the Overall row recomputed in 9.3
    algorithms = ["GPUCB", "ET", "R", "TV", "ABO", "W-DBO", "BOLT"]
    means = {
        "shekel": [2.57, 2.57, 2.58, 2.62, 2.67, 2.64, 2.51],
        "hartmann3": [1.58, 1.43, 0.70, 0.77, 0.91, 0.63, 0.60],
        "ackley": [4.26, 4.39, 4.28, 3.83, 4.75, 3.42, 2.92],
        "griewank": [0.59, 0.61, 0.61, 0.66, 0.69, 0.57, 0.58],
        "eggholder": [517, 522, 298, 305, 546, 277, 262],
        "schwefel": [590, 589, 1024, 726, 792, 615, 523],
        "hartmann6": [1.67, 1.75, 1.44, 0.96, 1.32, 0.70, 0.72],
        "powell": [3429, 3283, 1422, 1301, 6721, 1066, 547],
        "temperature": [1.12, 1.29, 0.70, 1.25, 1.41, 0.98, 0.72],
        "wlan": [20.2, 21.2, 10.4, 7.8, 17.3, 8.9, 7.7],
    }
    rows = [{"benchmark": b, "algorithm": a, "mean": m, "se": 0.0, "n": 10}
            for b, ms in means.items() for a, m in zip(algorithms, ms, strict=True)]
    out = normalised_regret(pd.DataFrame(rows))
    overall = out[out["benchmark"] == OVERALL_LABEL].set_index("algorithm")
    expected = [0.621, 0.668, 0.379, 0.382, 0.815, 0.192, 0.013]
    expected_se = [0.103, 0.100, 0.106, 0.089, 0.081, 0.080, 0.008]
    np.testing.assert_allclose(overall.loc[algorithms, "mean"], expected, atol=6e-4)
    np.testing.assert_allclose(overall.loc[algorithms, "se"], expected_se, atol=6e-4)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    return merge_runs(write_fake_campaign(folder))


def test_summary_table_matches_numpy(campaign):
    table = summary_table(campaign, "average_regret")
    runs = runs_table(campaign)
    for _, row in table.iterrows():
        values = runs[(runs.benchmark == row.benchmark) & (runs.algorithm == row.algorithm)][
            "average_regret"].to_numpy()
        assert row["mean"] == pytest.approx(values.mean())
        assert row["se"] == pytest.approx(values.std(ddof=1) / np.sqrt(len(values)))
        assert row["n"] == len(values)
    with pytest.raises(ValueError, match="unknown metric"):
        summary_table(campaign, "happiness")


def test_markdown_bolds_only_a_separated_lowest_mean(campaign):
    table = summary_table(campaign, "average_regret")
    text = to_markdown(table)
    header = [c.strip() for c in text.splitlines()[0].strip("|").split("|")]
    for benchmark, group in table.groupby("benchmark"):
        group = group.set_index("algorithm")
        best = group["mean"].idxmin()
        others = group.drop(index=best)
        separated = bool(
            (group.at[best, "mean"] + group.at[best, "se"] < others["mean"] - others["se"]).all()
        )
        line = next(ln for ln in text.splitlines() if ln.startswith(f"| {benchmark} "))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[header.index(best)].startswith("**" if separated else "<u>")
        assert sum(c.startswith("**") for c in cells) == int(separated)


def test_tables_and_figures_are_written(campaign, tmp_path):
    tables = write_tables(campaign, tmp_path / "tables")
    assert {p.name for p in tables} == {"average_regret.csv", "average_regret.md",
                                        "time_integrated_regret.csv",
                                        "time_integrated_regret.md"}
    figures = write_figures(campaign, tmp_path / "figures")
    assert len(figures) == 4  # regret, dataset size, compute per phase, ECDF
    for path in figures:
        assert path.suffix == ".png" and path.stat().st_size > 10_000
