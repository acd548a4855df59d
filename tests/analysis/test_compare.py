"""Paper vs tvbo: the comparison table against hand computations, paper choice, files, CLI.

Campaigns are built directly as xarray Datasets with chosen per-seed average regrets (only the
per-run variables the tables read), so every expected number is computed by hand here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from tvbo import cli
from tvbo.analysis.compare import (
    COMPARISON_FILES,
    FIGURE_FILE,
    PAPER_CHOICES,
    campaign_cost_tables,
    comparison_table,
    normalised_regret_figure,
    normalised_series,
    resolve_paper,
    to_latex,
    to_markdown,
    write_comparison,
)
from tvbo.analysis.metrics import OVERALL_LABEL
from tvbo.analysis.tables import summary_table

RUN_DIMS = ("benchmark", "algorithm", "seed", "speed")


def make_campaign(
    values: Mapping[tuple[str, str], Sequence[float]],
    cost_table: str | Sequence[str] | None = "metronome",
    speeds: Sequence[float] = (1.0,),
) -> xr.Dataset:
    """A campaign whose (benchmark, algorithm) runs have the given per-seed average regrets.

    Speed s multiplies the values by s (a distinguishable second speed). ``cost_table`` may be
    one name for every run, a sequence cycled over the runs, or None (not recorded).
    """
    benches = sorted({b for b, _ in values})
    algos = sorted({a for _, a in values})
    n_seeds = max(len(v) for v in values.values())
    shape = (len(benches), len(algos), n_seeds, len(speeds))
    regret = np.full(shape, np.nan)
    present = np.zeros(shape, np.int8)
    config = np.full(shape, "", dtype=object)
    tables = [cost_table] if isinstance(cost_table, str) or cost_table is None else cost_table
    count = 0
    for (bench, algo), seeds in values.items():
        for s, value in enumerate(seeds):
            for k, speed in enumerate(speeds):
                cell = (benches.index(bench), algos.index(algo), s, k)
                regret[cell] = value * speed
                present[cell] = 1
                record = {"seed": s}
                if tables[count % len(tables)] is not None:
                    record["cost_table"] = tables[count % len(tables)]
                config[cell] = json.dumps(record)
                count += 1
    return xr.Dataset(
        {
            "average_regret": (RUN_DIMS, regret),
            "time_integrated_regret": (RUN_DIMS, 2 * regret),
            "run_present": (RUN_DIMS, present),
            "attr_config_json": (RUN_DIMS, config),
        },
        coords={"benchmark": benches, "algorithm": algos, "seed": np.arange(n_seeds),
                "speed": list(speeds)},
    )


# [B] Table 2: shekel GPUCB 2.57 ± 0.05, W-DBO 2.64 ± 0.04, BOLT 2.51 ± 0.02;
#              ackley GPUCB 4.26 ± 0.50, W-DBO 3.42 ± 0.46, BOLT 2.92 ± 0.35
VALUES = {
    ("shekel", "gp-ucb"): [2.5, 2.6, 2.7],
    ("shekel", "w-dbo"): [2.7, 2.8, 2.6],
    ("shekel", "bolt"): [2.4, 2.5, 2.5],
    ("ackley", "gp-ucb"): [4.0, 4.5, 5.0],
    ("ackley", "w-dbo"): [2.0, 2.5, 3.0],
    ("ackley", "bolt"): [3.0, 3.2, 2.8],
    ("ackley", "random-search"): [9.0, 9.0, 9.0],  # not in the paper: left out
    ("sphere6", "bolt"): [1.0, 1.0, 1.0],  # not in the paper: left out
}


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return comparison_table(summary_table(make_campaign(VALUES)), "bolt-metronome")


def test_comparison_numbers_by_hand(table: pd.DataFrame) -> None:
    body = table[table["benchmark"] != OVERALL_LABEL].set_index(["benchmark", "algorithm"])
    assert list(body.index) == [
        ("shekel", "gp-ucb"), ("shekel", "w-dbo"), ("shekel", "bolt"),
        ("ackley", "gp-ucb"), ("ackley", "w-dbo"), ("ackley", "bolt"),
    ]  # the paper's order; random-search and sphere6 are not in the paper
    row = body.loc[("ackley", "w-dbo")]
    se = np.std([2.0, 2.5, 3.0], ddof=1) / np.sqrt(3)
    assert row["paper_mean"] == 3.42 and row["paper_se"] == 0.46 and row["tvbo_n"] == 3
    assert row["tvbo_mean"] == pytest.approx(2.5) and row["tvbo_se"] == pytest.approx(se)
    assert row["difference"] == pytest.approx(2.5 - 3.42)
    assert row["ratio"] == pytest.approx(2.5 / 3.42)
    assert row["combined_se"] == pytest.approx(np.hypot(se, 0.46))
    assert row["z"] == pytest.approx((2.5 - 3.42) / np.hypot(se, 0.46))
    assert not row["differs"]  # |z| = 1.69 < 2
    # ackley ranks: paper BOLT 2.92 < W-DBO 3.42 < GPUCB 4.26; tvbo W-DBO 2.5 < BOLT 3.0 < 4.5
    assert body.loc[("ackley", "bolt"), ["paper_rank", "tvbo_rank", "rank_change"]].tolist() == [
        1, 2, 1]
    assert body.loc[("ackley", "w-dbo"), ["paper_rank", "tvbo_rank"]].tolist() == [2, 1]
    assert body.loc[("shekel", "bolt"), ["paper_rank", "tvbo_rank"]].tolist() == [1, 1]


def test_flag_fires_beyond_two_combined_standard_errors() -> None:
    values = dict(VALUES)
    values[("shekel", "gp-ucb")] = [3.0, 3.1, 2.9]  # 0.43 above 2.57, combined s.e. ~0.07
    table = comparison_table(summary_table(make_campaign(values)), "bolt-metronome")
    row = table.set_index(["benchmark", "algorithm"]).loc[("shekel", "gp-ucb")]
    combined = np.hypot(0.1 / np.sqrt(3), 0.05)
    assert row["combined_se"] == pytest.approx(combined)
    assert row["differs"] and row["z"] == pytest.approx((3.0 - 2.57) / combined)


def test_overall_rows_recomputed_on_the_shared_grid(table: pd.DataFrame) -> None:
    overall = table[table["benchmark"] == OVERALL_LABEL].set_index("algorithm")
    # paper: shekel (2.57, 2.64, 2.51) -> (0.4615, 1, 0); ackley (4.26, 3.42, 2.92) -> (1, .3731, 0)
    paper_gp = np.mean([(2.57 - 2.51) / 0.13, 1.0])
    paper_wdbo = np.mean([1.0, (3.42 - 2.92) / 1.34])
    assert overall.at["gp-ucb", "paper_mean"] == pytest.approx(paper_gp)
    assert overall.at["w-dbo", "paper_mean"] == pytest.approx(paper_wdbo)
    assert overall.at["w-dbo", "paper_se"] == pytest.approx(
        np.std([1.0, 0.5 / 1.34], ddof=1) / np.sqrt(2)
    )
    # tvbo means: shekel (2.6, 2.7, 2.4667) -> (0.5714, 1, 0); ackley (4.5, 2.5, 3.0) -> (1, 0, .25)
    bolt = 7.4 / 3
    assert overall.at["gp-ucb", "tvbo_mean"] == pytest.approx(
        np.mean([(2.6 - bolt) / (2.7 - bolt), 1])
    )
    assert overall.at["bolt", "tvbo_mean"] == pytest.approx(0.125)
    assert overall.at["bolt", "tvbo_n"] == 2  # benchmarks, not seeds
    assert list(overall["tvbo_rank"]) == [3, 2, 1] and list(overall["paper_rank"]) == [3, 2, 1]


def test_speeds_are_compared_separately() -> None:
    table = comparison_table(
        summary_table(make_campaign(VALUES, speeds=(1.0, 10.0))), "bolt-metronome"
    )
    assert list(table["speed"].drop_duplicates()) == [1.0, 10.0]  # one block per speed
    fast = table[(table["speed"] == 10.0) & (table["benchmark"] == "shekel")]
    assert fast.set_index("algorithm").at["bolt", "tvbo_mean"] == pytest.approx(10 * 7.4 / 3)
    assert (table["benchmark"] == OVERALL_LABEL).sum() == 6
    assert "shekel (speed 10)" in to_markdown(table)


def test_paper_choice_follows_the_cost_table() -> None:
    assert campaign_cost_tables(make_campaign(VALUES, "icml")) == ["icml"]
    assert resolve_paper(make_campaign(VALUES, "icml")) == "bolt-icml"
    assert resolve_paper(make_campaign(VALUES, "metronome")) == "bolt-metronome"
    assert resolve_paper(make_campaign(VALUES, "icml"), "wdbo") == "wdbo"
    assert resolve_paper(make_campaign(VALUES), "none") is None
    with pytest.raises(ValueError, match=r"found \['icml', 'metronome'\]"):
        resolve_paper(make_campaign(VALUES, ["icml", "metronome"]))
    with pytest.raises(ValueError, match="no run records one"):
        resolve_paper(make_campaign(VALUES, None))
    with pytest.raises(ValueError, match="valid paper tables"):
        resolve_paper(make_campaign(VALUES), "nature")
    assert list(PAPER_CHOICES) == list(cli.COMPARE_PAPERS)


def test_aliases_and_nothing_shared() -> None:
    tvbo = summary_table(make_campaign(VALUES, "icml"))
    plain = comparison_table(tvbo, "bolt-icml")
    assert "bolt" not in set(plain["algorithm"])  # [A]'s BOLT is bolt-icml
    aliased = comparison_table(tvbo, "bolt-icml", {"bolt-icml": "bolt"})
    row = aliased.set_index(["benchmark", "algorithm"]).loc[("ackley", "bolt")]
    assert row["paper_mean"] == 2.92 and row["paper_algorithm"] == "BOLT"
    assert "bolt-icml → bolt" in to_markdown(aliased)
    lonely = summary_table(make_campaign({("sphere6", "bolt"): [1.0, 2.0]}))
    with pytest.raises(ValueError, match=r"shares no .* campaign has benchmarks \['sphere6'\]"):
        comparison_table(lonely, "bolt-metronome")


def test_wdbo_has_no_standard_errors() -> None:
    table = comparison_table(summary_table(make_campaign(VALUES)), "wdbo")
    row = table.set_index(["benchmark", "algorithm"]).loc[("ackley", "w-dbo")]
    assert row["paper_mean"] == 2.24 and np.isnan(row["paper_se"])
    assert row["combined_se"] == pytest.approx(row["tvbo_se"])  # the paper's counts as 0
    assert "printed no s.e." in to_markdown(table)


def test_markdown_and_latex(table: pd.DataFrame) -> None:
    text = to_markdown(table)
    row = "| ackley | bolt | 2.92 ± 0.35 | 3.00 ± 0.12 (n = 3) | +0.08 | 1.03 |  | **1 → 2** |"
    assert row in text
    assert "| shekel | bolt | 2.51 ± 0.02 | 2.47 ± 0.03 (n = 3) | −0.04 | 0.98 |  | 1 → 1 |" in text
    latex = to_latex(table)
    assert latex.count(r"\midrule") == 3  # shekel, ackley, Overall
    assert latex.count(r"\textbf{") == 2  # the two changed ranks
    assert r"1 $\to$ 2" in latex and "±" not in latex and "→" not in latex
    assert r"$-$0.04" in latex and r"\begin{tabular}{llllrrcc}" in latex


def test_figure_shows_the_overall_means(table: pd.DataFrame) -> None:
    body = table[table["benchmark"] != OVERALL_LABEL]
    paper = body[["benchmark", "algorithm", "paper_mean", "paper_se"]].rename(
        columns={"paper_mean": "mean", "paper_se": "se"}
    )
    series = {"paper": normalised_series(paper)}
    fig = normalised_regret_figure(series, ["gp-ucb", "w-dbo", "bolt"])
    (ax,) = fig.axes
    line = ax.lines[0]  # the errorbar markers
    overall = table[table["benchmark"] == OVERALL_LABEL].set_index("algorithm")
    expected = overall.loc[["gp-ucb", "w-dbo", "bolt"], "paper_mean"].to_numpy(dtype=float)
    np.testing.assert_allclose(np.asarray(line.get_ydata(), dtype=float), expected)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["gp-ucb", "w-dbo", "bolt"]
    with pytest.raises(ValueError, match="at least one series"):
        normalised_regret_figure({})


def test_write_comparison_files(tmp_path: Path) -> None:
    campaign = make_campaign(VALUES)
    written = write_comparison(campaign, tmp_path / "cmp")
    assert [p.name for p in written] == list(COMPARISON_FILES)
    back = pd.read_csv(written[0])
    assert len(back) == 6 + 3 and set(back["benchmark"]) == {"shekel", "ackley", OVERALL_LABEL}
    assert written[-1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    only = write_comparison(campaign, tmp_path / "fig", paper="none")
    assert [p.name for p in only] == [FIGURE_FILE]
    with pytest.raises(ValueError, match="aliases need a paper"):
        write_comparison(campaign, tmp_path / "x", paper="none", aliases={"bolt": "bolt"})


def test_cli_compare(tmp_path: Path, capsys) -> None:
    path = tmp_path / "campaign.nc"
    make_campaign(VALUES, "icml").to_netcdf(path)
    out = tmp_path / "out"
    status = cli.main(["compare", str(path), "--outdir", str(out), "--alias", "bolt-icml=bolt"])
    assert status == 0
    text = (out / "paper_vs_tvbo.md").read_text()
    assert "Table 3" in text and "| ackley | BOLT (robust) | 2.92 ± 0.35 |" in text
    assert "BOLT (robust) = bolt" in text  # the caption names the config key and variant
    printed = capsys.readouterr().out.split()
    assert [Path(p).name for p in printed] == list(COMPARISON_FILES)
    for argv, fragment in [
        (["--alias", "bolt"], "expected PAPER_NAME=CAMPAIGN_NAME"),
        (["--alias", "blot=bolt"], "alias for ['blot']"),
        (["--paper", "nature"], "invalid choice: 'nature'"),
    ]:
        with pytest.raises(SystemExit) as info:
            cli.main(["compare", str(path), "--outdir", str(tmp_path / "bad"), *argv])
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and fragment in err, err
    assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").iterdir())
