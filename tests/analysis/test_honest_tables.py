"""Honest tables: both regrets and the query count as mean ± s.e., bold only when separated by
the standard errors, captions that say what is shown, and names that say which variant.

The campaign is built by hand (per-seed values chosen so that every mean and s.e. is known in
closed form), with each run recording its resolved algorithm options as real run files do.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from tvbo import cli
from tvbo.algorithms import display_name, make
from tvbo.algorithms.display import ALGORITHM_INFO, algorithm_labels, register_display
from tvbo.algorithms.labels import split_label_options
from tvbo.analysis.compare import write_comparison
from tvbo.analysis.context import campaign_labels, parse_label_overrides, with_label_overrides
from tvbo.analysis.figures import CampaignStyle
from tvbo.analysis.tables import format_mean_se, write_tables

RUN_DIMS = ("benchmark", "algorithm", "seed", "speed")
ALGORITHMS = ("gp-ucb", "w-dbo-reference", "w-dbo")
# (benchmark, algorithm) -> per-seed average regret; time-integrated = 3 x, queries below
REGRET = {
    # s.e. of three values d apart: d / sqrt(3) (0.058 for d = 0.1)
    # shekel: w-dbo 1.0 ± 0.058 is separated from 2.0 ± 0.058 and 3.0 ± 0.058 -> bold
    ("shekel", "gp-ucb"): [3.1, 3.0, 2.9],
    ("shekel", "w-dbo-reference"): [2.1, 2.0, 1.9],
    ("shekel", "w-dbo"): [1.1, 1.0, 0.9],
    # ackley: 1.0 + 0.058 >= 1.1 - 0.058 -> no bold, both underlined; 5.0 ± 0 is apart
    ("ackley", "gp-ucb"): [5.0, 5.0, 5.0],
    ("ackley", "w-dbo-reference"): [1.2, 1.1, 1.0],
    ("ackley", "w-dbo"): [1.1, 1.0, 0.9],
}
QUERIES = {"gp-ucb": [100, 110, 120], "w-dbo-reference": [40, 50, 60], "w-dbo": [10, 20, 30]}


def build_campaign() -> xr.Dataset:
    """Three seeds of every (benchmark, algorithm); config_json as `tvbo run` records it."""
    benches = ["ackley", "shekel"]
    shape = (len(benches), len(ALGORITHMS), 3, 1)
    regret = np.full(shape, np.nan)
    queries = np.zeros(shape)
    config = np.full(shape, "", dtype=object)
    horizon = np.full(shape, 600.0)
    for (bench, algo), seeds in REGRET.items():
        options = make(algo).options()
        for s, value in enumerate(seeds):
            cell = (benches.index(bench), ALGORITHMS.index(algo), s, 0)
            regret[cell] = value
            queries[cell] = QUERIES[algo][s]
            record = {
                "seed": s, "cost_table": "metronome",
                "algorithm": {"name": algo, "options": options},
                "compute": {"model": "counted", "speed": 1.0,
                            "profile": {"name": "botorch-i9-laptop"}},
            }
            config[cell] = json.dumps(record, default=float)
    return xr.Dataset(
        {
            "average_regret": (RUN_DIMS, regret),
            "time_integrated_regret": (RUN_DIMS, 3 * regret),
            "n_iterations": (RUN_DIMS, queries),
            "run_present": (RUN_DIMS, np.ones(shape, np.int8)),
            "attr_config_json": (RUN_DIMS, config),
            "attr_horizon": (RUN_DIMS, horizon),
        },
        coords={"benchmark": benches, "algorithm": list(ALGORITHMS), "seed": [0, 1, 2],
                "speed": [1.0]},
    )


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tables")
    write_tables(build_campaign(), out, formats=["csv", "md", "tex", "normalised"])
    return out


# -- the bold rule ------------------------------------------------------------------------------


def test_format_mean_se() -> None:
    assert format_mean_se(1.0, 0.1) == "1.00 ± 0.10"
    assert format_mean_se(110.0, 10.0) == "110 ± 10"
    assert format_mean_se(2.51, float("nan")) == "2.51"
    assert format_mean_se(1.0, 0.0001) == "1.00 ± 0.0001"
    # ten equal values (a reference policy's score in every seed): the round-off is no spread
    values = np.full(10, 2 / np.pi)
    mean, se = float(np.mean(values)), float(np.std(values, ddof=1) / np.sqrt(10))
    assert format_mean_se(mean, se) == "0.637 ± 0.000"
    assert format_mean_se(0.636, 4e-17) == "0.636 ± 0.000"
    assert format_mean_se(0.636, 4e-9) == "0.636 ± 0.000000004"  # a real spread, however small


# -- the files ----------------------------------------------------------------------------------
def test_csv_has_separate_mean_and_se_columns_of_every_metric(written: Path) -> None:
    csv = pd.read_csv(written / "average_regret.csv").set_index(["benchmark", "algorithm"])
    row = csv.loc[("shekel", "w-dbo")]
    assert row["label"] == "W-DBO (robust)"
    assert row["mean"] == pytest.approx(1.0) and row["se"] == pytest.approx(0.1 / np.sqrt(3))
    assert row["n"] == 3 and bool(row["best"]) and not bool(row["tied"])
    assert row["time_integrated_regret_mean"] == pytest.approx(3.0)
    assert row["time_integrated_regret_se"] == pytest.approx(0.3 / np.sqrt(3))
    assert row["n_iterations_mean"] == pytest.approx(20.0)
    assert row["n_iterations_se"] == pytest.approx(10.0 / np.sqrt(3))
    assert csv.loc[("shekel", "w-dbo-reference"), "label"] == "W-DBO (paper, ML fit)"
    ackley = csv.loc["ackley"]
    assert not ackley["best"].any()
    assert ackley["tied"].to_dict() == {"gp-ucb": False, "w-dbo-reference": True, "w-dbo": True}


def test_markdown_shows_both_regrets_and_queries_as_mean_se(written: Path) -> None:
    text = (written / "average_regret.md").read_text()
    lines = text.splitlines()
    assert lines[2] == "| benchmark | metric | GP-UCB | W-DBO (paper, ML fit) | W-DBO (robust) |"
    # ackley first (sorted); columns in the campaign's algorithm order
    assert ("| ackley | avg. query regret | 5.00 ± 0.00 | <u>1.10 ± 0.06</u> | "
            "<u>1.00 ± 0.06</u> |") in lines
    assert ("|  | time-integrated regret | 15.0 ± 0.0 | <u>3.30 ± 0.17</u> | "
            "<u>3.00 ± 0.17</u> |") in lines
    assert "|  | queries | 110 ± 6 | 50.0 ± 5.8 | 20.0 ± 5.8 |" in lines
    assert "| shekel | avg. query regret | 3.00 ± 0.06 | 2.00 ± 0.06 | **1.00 ± 0.06** |" in lines
    assert any(ln.startswith("| Overall | avg. query regret |") for ln in lines)
    assert any(ln.startswith("|  | time-integrated regret |") for ln in lines
               if "0.00" in ln)  # the Overall time-integrated row follows


def test_caption_says_what_is_shown(written: Path) -> None:
    caption = (written / "average_regret.md").read_text().splitlines()[-1]
    for fragment in [
        "Average query regret", "time-integrated regret", "number of queries",
        "mean ± s.e. over 3 seeds",
        "best mean + 1 s.e. < other mean − 1 s.e. for all others",
        "underlined", "Not marked: queries",
        "per benchmark the best algorithm gets 0 and the worst 1",
        "horizon 600 s", "cost table metronome", "profile botorch-i9-laptop",
        "W-DBO (paper, ML fit) = w-dbo-reference", "W-DBO (robust) = w-dbo",
        "(paper, ML fit) = the paper's algorithm, but its hyperparameters fitted by tvbo",
        "(robust) = tvbo's version with documented safeguards",
        "at most 2 removals per cleaning",
    ]:
        assert fragment in caption, fragment


def test_latex_has_the_same_marks_and_escaped_caption(written: Path) -> None:
    tex = (written / "average_regret.tex").read_text()
    assert r"GP-UCB & W-DBO (paper, ML fit) & W-DBO (robust) \\" in tex
    assert r"shekel & avg. query regret & 3.00 $\pm$ 0.06 & 2.00 $\pm$ 0.06 & " \
           r"\textbf{1.00 $\pm$ 0.06} \\" in tex
    assert r"\underline{1.10 $\pm$ 0.06}" in tex
    assert r" & queries & 110 $\pm$ 6 & 50.0 $\pm$ 5.8 & 20.0 $\pm$ 5.8 \\" in tex
    assert "mean $\\pm$ s.e. over 3 seeds" in tex and "±" not in tex


def test_time_integrated_file_leads_with_its_metric(written: Path) -> None:
    lines = (written / "time_integrated_regret.md").read_text().splitlines()
    assert lines[4].startswith("| ackley | time-integrated regret |")
    assert lines[5].startswith("|  | avg. query regret |")
    csv = pd.read_csv(written / "time_integrated_regret.csv")
    assert {"average_regret_mean", "average_regret_se", "n_iterations_mean"} <= set(csv.columns)
    normalised = pd.read_csv(written / "time_integrated_regret_normalised.csv")
    assert set(normalised["label"]) == {"GP-UCB", "W-DBO (paper, ML fit)", "W-DBO (robust)"}


# -- names --------------------------------------------------------------------------------------
def test_display_names_of_faithful_and_robust_presets() -> None:
    assert display_name("w-dbo") == "W-DBO (robust)"
    assert display_name("w-dbo-reference") == "W-DBO (paper, ML fit)"
    assert display_name("bolt") == "BOLT (robust)"
    assert display_name("bolt-reference") == "BOLT (paper, ML fit)"
    assert display_name("gp-ucb") == "GP-UCB"  # one form only: no variant
    assert display_name("sparq-gp-ucb") == "SparQ-GP-UCB (robust)"
    assert display_name("sparq-gp-ucb", {"fit_cold_start": False}) == "SparQ-GP-UCB (paper)"
    assert display_name("pe-gp-ucb", {"test_sigma": "post"}) == "PE-GP-UCB (paper)"
    # a later faithful preset is labelled by its name: no metadata needed
    assert display_name("bolt-paper", resolved={}) == "BOLT (paper)"
    assert display_name("unknown-thing", resolved={}) == "unknown-thing"
    # a run file that predates a safeguard option: the preset as built today decides
    assert display_name("w-dbo", resolved={"preset": "w-dbo"}) == "W-DBO (robust)"


def test_display_names_of_config_aliases() -> None:
    # an alias of the robust preset without its safeguards is the paper's algorithm
    faithful = {"preset": "w-dbo", "surrogate": {"prior": None}, "max_removals": None}
    assert display_name("my-wdbo", faithful) == "W-DBO (paper, ML fit)"
    # in a campaign an alias with its own options also names its config entry; a rename does not
    assert algorithm_labels(["my-wdbo", "mine"], {"my-wdbo": faithful,
                                                  "mine": {"preset": "bolt"}}) == {
        "my-wdbo": "W-DBO (paper, ML fit) [my-wdbo]", "mine": "BOLT (robust)"}
    assert display_name("my-wdbo", {"preset": "w-dbo"}) == "W-DBO (robust)"
    assert display_name("w-dbo", {"variant": "paper"}) == "W-DBO (paper)"
    assert display_name("w-dbo", {"variant": None}) == "W-DBO"
    assert display_name("w-dbo", {"label": "W-DBO, ours"}) == "W-DBO, ours"
    labels = algorithm_labels(
        ["bolt", "bolt-fifo", "w-dbo"], {"bolt-fifo": {"preset": "bolt", "removal": "oldest"}}
    )
    assert labels == {"bolt": "BOLT (robust)", "bolt-fifo": "BOLT (robust) [bolt-fifo]",
                      "w-dbo": "W-DBO (robust)"}
    with pytest.raises(ValueError, match="same label 'X'"):
        algorithm_labels(["a", "b"], {"a": {"label": "X"}, "b": {"label": "X"}})


def test_unknown_variant_is_an_error_listing_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown variant 'faithful'; valid variants: paper, "
                                         r"paper-ml, robust"):
        display_name("w-dbo", {"variant": "faithful"})
    with pytest.raises(ValueError, match="unknown variant"):
        make("w-dbo", variant="faithful")
    with pytest.raises(ValueError, match=r"labels\['w-dbo'\]: unknown variant"):
        parse_label_overrides('{"w-dbo": {"variant": "faithful"}}')
    with pytest.raises(ValueError, match="unknown key"):
        parse_label_overrides('{"w-dbo": {"colour": "red"}}')
    with pytest.raises(ValueError, match="label must be a non-empty string"):
        split_label_options({"label": ""})


def test_label_keys_never_reach_the_algorithm() -> None:
    options, labels = split_label_options({"label": "x", "variant": "paper", "beta": 2.0})
    assert options == {"beta": 2.0} and labels == {"label": "x", "variant": "paper"}
    assert make("w-dbo", label="x", variant="paper").options() == make("w-dbo").options()


def test_register_display_for_a_new_preset() -> None:
    try:
        register_display("toy-faithful", "Toy", variant="paper")
        assert display_name("toy-faithful", resolved={}) == "Toy (paper)"
        with pytest.raises(ValueError, match="already exists"):
            register_display("toy-faithful", "Toy")
        with pytest.raises(ValueError, match="unknown variant"):
            register_display("toy-2", "Toy", variant="exact")
    finally:
        ALGORITHM_INFO.pop("toy-faithful", None)


def test_campaign_labels_come_from_the_recorded_options() -> None:
    campaign = build_campaign()
    assert campaign_labels(campaign) == {
        "gp-ucb": "GP-UCB", "w-dbo-reference": "W-DBO (paper, ML fit)", "w-dbo": "W-DBO (robust)"}
    renamed = with_label_overrides(campaign, {"w-dbo": {"label": "ours"}})
    assert campaign_labels(renamed)["w-dbo"] == "ours"
    style = CampaignStyle(renamed)
    assert style.label("w-dbo-reference", 1.0) == "W-DBO (paper, ML fit)"
    assert style.label("w-dbo", 1.0) == "ours"


def test_comparison_names_the_variant(tmp_path: Path) -> None:
    campaign = build_campaign()
    write_comparison(campaign, tmp_path, paper="bolt-metronome",
                     aliases={"w-dbo": "w-dbo-reference"})
    text = (tmp_path / "paper_vs_tvbo.md").read_text()
    # the paper's W-DBO beside the faithful variant, with both sides' ± s.e.
    assert "| shekel | W-DBO (paper, ML fit) | 2.64 ± 0.04 | 2.00 ± 0.06 (n = 3) |" in text
    assert "tvbo time-integrated regret | tvbo queries |" in text
    assert "W-DBO (paper, ML fit) = w-dbo-reference" in text
    assert "Aliases (paper → campaign)" in text
    csv = pd.read_csv(tmp_path / "paper_vs_tvbo.csv")
    assert {"label", "tvbo_time_integrated_regret_mean", "tvbo_n_iterations_se"} <= set(
        csv.columns)


def test_cli_labels_option(tmp_path: Path, capsys) -> None:
    path = tmp_path / "campaign.nc"
    build_campaign().to_netcdf(path)
    out = tmp_path / "t"
    assert cli.main(["table", str(path), "--outdir", str(out), "--format", "md",
                     "--labels", '{"w-dbo": "W-DBO, ours"}']) == 0
    header = "| GP-UCB | W-DBO (paper, ML fit) | W-DBO, ours |"
    assert header in (out / "average_regret.md").read_text()
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        cli.main(["table", str(path), "--outdir", str(out), "--labels",
                  '{"w-dbo": {"variant": "faithful"}}'])
    assert info.value.code == 2
    assert "valid variants: paper, paper-ml, robust" in capsys.readouterr().err


def test_normalised_figure_ticks_use_the_labels() -> None:
    from tvbo.analysis.compare import normalised_regret_figure, normalised_series
    from tvbo.analysis.tables import summary_table

    campaign = build_campaign()
    series = {"tvbo": normalised_series(summary_table(campaign))}
    figure = normalised_regret_figure(series, labels=campaign_labels(campaign))
    ticks = [t.get_text() for t in figure.axes[0].get_xticklabels()]
    # the table's (sorted) order
    assert ticks == ["GP-UCB", "W-DBO (robust)", "W-DBO (paper, ML fit)"]


def test_cli_runs_a_config_alias(tmp_path: Path, capsys) -> None:
    """`tvbo run --algorithm <alias> --algorithm-options '{"preset": ...}'` (what the workflow
    runs for an ablation) builds the alias; its run records the preset, so it is labelled."""
    out = tmp_path / "run.nc"
    argv = ["run", "--benchmark", "ackley", "--algorithm", "my-wdbo", "--algorithm-options",
            '{"preset": "w-dbo", "surrogate": {"prior": null}, "max_removals": null}',
            "--horizon", "3", "--cost", "0.5", "--warmup", "3", "--max-iterations", "5",
            "--out", str(out), "--quiet"]
    assert cli.main(argv) == 0
    run = xr.load_dataset(out)
    assert campaign_labels(run) == {"my-wdbo": "W-DBO (paper, ML fit) [my-wdbo]"}
    capsys.readouterr()
    bad = [*argv[:6], '{"preset": "w-dbx"}', *argv[7:]]
    with pytest.raises(SystemExit):
        cli.main(bad)
    assert "unknown algorithm preset 'w-dbx'" in capsys.readouterr().err
