"""Paper figures (SparQ, PE-GP-UCB, BOKE): hand-computed numbers, files, CLI, real tiny runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from matplotlib.collections import PolyCollection

import tvbo
from tests.fake_runs import make_run
from tvbo.analysis.figure_output import FigureOptions
from tvbo.analysis.paper_figures import (
    PAPER_FILES,
    PAPERS,
    boke_curves,
    boke_figure,
    pegpucb_regret_figure,
    prior_selection,
    prior_selection_figure,
    sparq_figure,
    step_curves,
    write_paper_figures,
)
from tvbo.cli import main
from tvbo.results.campaign import merge_runs, write_campaign
from tvbo.results.io import write_run

# per (algorithm, seed): query regrets, warm-up flags, compute charges, selected priors
RUNS = {
    ("bolt", 0): ([3.0, 1.0, 2.0, 0.5], [1, 0, 0, 0], [0.0, 0.5, 1.0, 1.5], [-1, 0, 2, 2]),
    ("bolt", 1): ([1.0, 1.0, 4.0], [1, 0, 0], [0.0, 1.5, 0.5], [-1, 1, 2]),
    ("gp_ucb", 0): ([2.0, 2.0], [1, 0], [0.0, 2.0], [-1, -1]),
    ("gp_ucb", 1): ([4.0, 0.0], [1, 0], [0.0, 4.0], [-1, -1]),
}


def _run(algorithm: str, seed: int, *, with_priors: bool = True) -> xr.Dataset:
    regret, warm, compute, prior = (np.asarray(v, float) for v in RUNS[(algorithm, seed)])
    # make_run's own summary needs post-warm-up queries: build a longer run, keep the first ones
    ds = make_run("shekel", algorithm, seed, n_iterations=8).isel(iteration=slice(0, len(regret)))
    cell = {"benchmark": "shekel", "algorithm": algorithm, "seed": seed, "speed": 1.0}
    updates = {
        "regret": regret,
        "is_warmup": warm.astype(np.int8),
        "compute_total": compute,
    }
    if with_priors:
        updates["state_selected_prior"] = prior
    for name, values in updates.items():
        ds[name] = (("benchmark", "algorithm", "seed", "speed", "iteration"),
                    values.reshape(1, 1, 1, 1, -1))
    ds["f"] = ds["f_star"] - ds["regret"]
    assert ds["regret"].sel(cell).values.tolist() == regret.tolist()
    return ds


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> xr.Dataset:
    root = tmp_path_factory.mktemp("paper")
    paths = [write_run(_run(a, s), root / f"{a}_{s}.nc") for a, s in RUNS]
    return merge_runs(paths)


def _rows(frame: pd.DataFrame, algorithm: str, **match) -> pd.DataFrame:
    sel = frame["algorithm"] == algorithm
    for key, value in match.items():
        sel &= frame[key] == value
    return frame[sel].sort_values("step" if "step" in frame else "prior")


# -- the numbers ------------------------------------------------------------------------------
def test_average_regret_by_hand(campaign):
    frame = step_curves(campaign, "average")
    bolt = _rows(frame, "bolt")
    # seed 0: 3, 2, 2, 1.625; seed 1: 1, 1, 2 (ragged: no step 4)
    np.testing.assert_allclose(bolt["mean"], [2.0, 1.5, 2.0, 1.625])
    np.testing.assert_allclose(bolt["n"], [2, 2, 2, 1])
    std = np.array([np.sqrt(2.0), np.sqrt(0.5), 0.0])
    np.testing.assert_allclose(bolt["std"].iloc[:3], std)
    np.testing.assert_allclose(bolt["se"].iloc[:3], std / np.sqrt(2))
    assert np.isnan(bolt["std"].iloc[3]) and np.isnan(bolt["se"].iloc[3])
    gp = _rows(frame, "gp_ucb")
    np.testing.assert_allclose(gp["mean"], [3.0, 2.0])  # (2+4)/2, ((2+2)/2 + (4+0)/2)/2


def test_cumulative_and_simple_regret_by_hand(campaign):
    cum = _rows(step_curves(campaign, "cumulative"), "bolt")
    np.testing.assert_allclose(cum["mean"], [2.0, 3.0, 6.0, 6.5])
    simple = _rows(step_curves(campaign, "simple"), "bolt")
    np.testing.assert_allclose(simple["mean"], [2.0, 1.0, 1.0, 0.5])
    with pytest.raises(ValueError, match="valid curves: average, cumulative, simple"):
        step_curves(campaign, "median")


def test_prior_selection_counts_post_warmup_choices(campaign):
    frame = prior_selection(campaign)
    bolt = _rows(frame, "bolt")
    # post-warm-up choices: seed 0 -> 0, 2, 2; seed 1 -> 1, 2
    assert bolt["prior"].tolist() == [0, 1, 2]
    assert bolt["count"].tolist() == [1, 1, 3]
    np.testing.assert_allclose(bolt["proportion"], [0.2, 0.2, 0.6])
    assert "gp_ucb" not in set(frame["algorithm"])  # never selected a prior (all -1)


def test_prior_selection_needs_the_recorded_prior(tmp_path):
    paths = [write_run(_run(a, s, with_priors=False), tmp_path / f"{a}{s}.nc") for a, s in RUNS]
    with pytest.raises(ValueError, match="does not record 'state_selected_prior'"):
        prior_selection(merge_runs(paths))


def test_boke_cpu_time_is_the_mean_cumulative_compute(campaign):
    frame = boke_curves(campaign)
    bolt = _rows(frame, "bolt")
    # cumulative compute: seed 0 -> 0, .5, 1.5, 3; seed 1 -> 0, 1.5, 2
    np.testing.assert_allclose(bolt["cpu_time_mean"], [0.0, 1.0, 1.75, 3.0])
    np.testing.assert_allclose(bolt["mean"], [2.0, 1.0, 1.0, 0.5])
    assert set(bolt["warmup"]) == {1}


def test_missing_variables_are_named(campaign):
    with pytest.raises(ValueError, match="missing variables \\['compute_total'\\]"):
        boke_curves(campaign.drop_vars("compute_total"))


# -- the figures ------------------------------------------------------------------------------
def test_sparq_figure_plots_the_frame_with_std_bands(campaign):
    fig, frame = sparq_figure(campaign)
    ax = fig.axes[0]
    bolt = _rows(frame, "bolt")
    line = ax.lines[0]
    np.testing.assert_allclose(line.get_xdata(), bolt["step"])
    np.testing.assert_allclose(line.get_ydata(), bolt["mean"])
    band = [c for c in ax.collections if isinstance(c, PolyCollection)][0]
    top = band.get_paths()[0].vertices[:, 1].max()
    assert top == pytest.approx(float((bolt["mean"] + bolt["std"]).max()))
    assert ax.get_title() == "Shekel"


def test_pegpucb_figures(campaign):
    fig, frame = pegpucb_regret_figure(campaign)
    assert set(frame["curve"]) == {"cumulative", "average"}
    cumulative_ax, average_ax = fig.axes[:2]
    np.testing.assert_allclose(cumulative_ax.lines[0].get_ydata(), [2.0, 3.0, 6.0, 6.5])
    np.testing.assert_allclose(average_ax.lines[0].get_ydata(), [2.0, 1.5, 2.0, 1.625])
    fig, frame = prior_selection_figure(campaign)
    heights = sorted(round(p.get_height(), 6) for p in fig.axes[0].patches)
    assert heights == [0.2, 0.2, 0.6]


def test_boke_figure_has_iteration_and_cpu_rows(campaign):
    fig, frame = boke_figure(campaign)
    top, bottom = fig.axes[:2]
    np.testing.assert_allclose(bottom.lines[0].get_xdata(), [0.0, 1.0, 1.75, 3.0])
    assert top.get_yscale() == "log" and bottom.get_yscale() == "log"
    assert any(line.get_linestyle() == "--" for line in top.lines)  # end of the warm-up
    assert "CPU time" in bottom.get_xlabel()


def test_write_paper_figures_and_cli(campaign, tmp_path):
    for paper in PAPERS:
        written = write_paper_figures(campaign, tmp_path / paper, paper,
                                      options=FigureOptions(dpi=40))
        assert [p.name for p in written] == list(PAPER_FILES[paper])
        assert all(p.stat().st_size > 0 for p in written)
    back = pd.read_csv(tmp_path / "boke" / "boke_simple_regret.csv")
    np.testing.assert_allclose(back.loc[back["algorithm"] == "bolt", "cpu_time_mean"],
                               [0.0, 1.0, 1.75, 3.0])
    with pytest.raises(ValueError, match="valid papers: sparq, pegpucb, boke"):
        write_paper_figures(campaign, tmp_path, "bolt")

    # the command refuses a paper's figures without that paper's algorithm: call bolt pe-gp-ucb
    named = campaign.assign_coords(algorithm=[
        "pe-gp-ucb" if a == "bolt" else str(a) for a in campaign["algorithm"].values])
    path = write_campaign(named, tmp_path / "campaign.nc")
    out = tmp_path / "cli"
    assert main(["paper-figures", str(path), "--outdir", str(out), "--paper", "pegpucb",
                 "--dpi", "40"]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(PAPER_FILES["pegpucb"])
    with pytest.raises(SystemExit) as err:
        main(["paper-figures", str(path), "--outdir", str(out), "--paper", "nope"])
    assert err.value.code == 2


# -- tiny real runs ---------------------------------------------------------------------------
def test_real_pegpucb_runs_record_the_selected_prior_per_query(tmp_path):
    space = {"step_seconds": 1.0, "exclude": [0.05, 0.17], "period": 2}
    paths = []
    for algorithm in ("pe-gp-ucb", "mle-prior", "random-search"):
        options = {"search_space": space}
        if algorithm != "random-search":
            options["horizon_steps"] = 12
        ds = tvbo.simulate("hills", algorithm, seed=0, compute="polynomial", polynomial=[0.0],
                           warmup=2, benchmark_options={"steps": 12},
                           algorithm_options=options)
        if algorithm != "random-search":
            chosen = ds["state_selected_prior"].squeeze().values
            warm = ds["is_warmup"].squeeze().values == 1
            assert np.all(chosen[warm] == -1)  # no prior chose a warm-up query
            assert np.all((chosen[~warm] >= 0) & (chosen[~warm] <= 10))
        paths.append(write_run(ds, tmp_path / f"{algorithm}.nc"))
    campaign = merge_runs(paths)
    frame = prior_selection(campaign)
    assert set(frame["algorithm"]) == {"pe-gp-ucb", "mle-prior"}
    assert frame["prior"].max() <= 10
    for _, group in frame.groupby("algorithm"):
        assert group["prior"].tolist() == list(range(frame["prior"].max() + 1))
        assert group["proportion"].sum() == pytest.approx(1.0)
        assert group["count"].sum() == 10  # 12 steps - 2 warm-up
    regret = step_curves(campaign, "cumulative")
    assert (regret.groupby("algorithm")["step"].max() == 12).all()


def test_real_boke_runs_charge_cpu_time(tmp_path: Path):
    paths = []
    for algorithm in ("boke", "gp-ucb"):
        ds = tvbo.simulate("forrester", algorithm, seed=1, warmup=3, max_iterations=8)
        paths.append(write_run(ds, tmp_path / f"{algorithm}.nc"))
    frame = boke_curves(merge_runs(paths))
    for _, group in frame.groupby("algorithm"):
        assert np.all(np.diff(group["cpu_time_mean"]) >= 0)
        assert group["cpu_time_mean"].iloc[-1] > 0
        assert np.all(np.diff(group["mean"]) <= 0)  # simple regret never increases
        assert group["mean"].iloc[-1] >= 0
