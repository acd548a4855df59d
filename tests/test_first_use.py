"""A first hour without surprises (issue 12 items 9-11, 13): the figures read at a glance, the
paper comparison says when its settings differ, the workflow says how long and what came out,
``tvbo run`` says how the run went."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from matplotlib.collections import PolyCollection

from tests.fake_runs import ALGORITHMS, BENCHMARKS, make_run
from tvbo import cli
from tvbo.analysis.compare import write_comparison
from tvbo.analysis.figures import (
    CampaignStyle,
    choose_log_scale,
    compute_time_table,
    dominance_note,
    regret_vs_time,
    response_time_vs_dataset_size,
)
from tvbo.analysis.settings_caveat import CAVEAT_PREFIX, config_caveat
from tvbo.results.campaign import merge_runs
from tvbo.results.io import write_run
from tvbo.workflow_messages import best_per_benchmark, start_message, summary_message

SEEDS = (0, 1, 2)


def _campaign(tmp_path: Path, scale: dict[str, float] | None = None) -> xr.Dataset:
    """The fake campaign; ``scale`` multiplies one algorithm's regret (to span decades)."""
    paths = []
    for benchmark in BENCHMARKS:
        for algorithm in ALGORITHMS:
            for seed in SEEDS:
                run = make_run(benchmark, algorithm, seed)
                factor = (scale or {}).get(algorithm, 1.0)
                for name in ("regret_held", "regret"):
                    run[name] = run[name] * factor
                paths.append(write_run(run, tmp_path / f"{benchmark}_{algorithm}_{seed}.nc"))
    return merge_runs(paths)


def test_summary_never_names_a_floor_row_the_best(tmp_path: Path, monkeypatch) -> None:
    from tvbo.algorithms import display

    campaign = _campaign(tmp_path, scale={"bolt": 1e-3})  # bolt far below gp_ucb
    before = best_per_benchmark(campaign)
    assert "bolt" in {r["algorithm"] for r in before}
    # declared a floor row (a reference policy), it is never named the best
    monkeypatch.setattr(display, "REFERENCE_POLICIES", ("bolt",))
    after = best_per_benchmark(campaign)
    assert len(after) == len(before) and {r["algorithm"] for r in after} == {"gp_ucb"}


# -- item 13: the regret figure ------------------------------------------------------------------
def test_log_scale_is_chosen_only_when_the_data_span_decades() -> None:
    assert choose_log_scale(np.array([0.01, 0.1, 1.0, 10.0]))
    assert not choose_log_scale(np.array([350.0, 500.0, 650.0]))
    # zeros, negatives and NaN are ignored; one positive value is no span
    assert not choose_log_scale(np.array([0.0, -1.0, np.nan, 5.0]))


def test_regret_figure_log_axis_per_panel_bands_and_distinct_styles(tmp_path: Path) -> None:
    narrow = regret_vs_time(_campaign(tmp_path / "a"))
    assert all(ax.get_yscale() == "linear" for ax in narrow.axes)
    wide = regret_vs_time(_campaign(tmp_path / "b", scale={"bolt": 1e-4}))
    for ax in wide.axes:  # bolt's regret is 10^4 times smaller: every panel spans decades
        assert ax.get_yscale() == "log" and ax.get_ylabel().endswith("(log)")
        lines = ax.lines
        assert len(lines) == len(ALGORITHMS)
        # one ± s.e. band per algorithm, and each algorithm its own line style and marker
        assert sum(isinstance(c, PolyCollection) for c in ax.collections) == len(ALGORITHMS)
        assert len({str(ln.get_linestyle()) for ln in lines}) == len(lines)
        assert len({ln.get_marker() for ln in lines}) == len(lines)
    # the two rows of a benchmark share the time axis; the fake benchmarks' horizons differ
    # (60 s, 40 s), so the benchmarks do not share it with each other
    tops, bottoms = wide.axes[: len(BENCHMARKS)], wide.axes[len(BENCHMARKS):]
    for top, bottom in zip(tops, bottoms, strict=True):
        assert top.get_shared_x_axes().joined(top, bottom)
    assert not tops[0].get_shared_x_axes().joined(tops[0], tops[1])


def test_benchmarks_with_one_horizon_share_the_time_axis(tmp_path: Path) -> None:
    campaign = _campaign(tmp_path).isel(benchmark=[0])
    twin = xr.concat([campaign, campaign.assign_coords(benchmark=["copy"])], dim="benchmark")
    fig = regret_vs_time(twin)
    assert all(fig.axes[0].get_shared_x_axes().joined(fig.axes[0], ax) for ax in fig.axes)


def test_ten_algorithms_get_ten_distinct_styles() -> None:
    algorithms = [f"a{i}" for i in range(10)]
    dims = ("benchmark", "algorithm", "seed", "speed")
    campaign = xr.Dataset(
        {"average_regret": (dims, np.ones((1, 10, 1, 1)))},
        coords={"benchmark": ["b"], "algorithm": algorithms, "seed": [0], "speed": [1.0]},
    )
    style = CampaignStyle(campaign)
    kwargs = [style.kwargs(a, 1.0) for a in algorithms]
    assert len({str(k["linestyle"]) for k in kwargs}) == 10
    assert len({k["marker"] for k in kwargs}) == 10
    assert len({tuple(k["color"]) for k in kwargs}) == 10


# -- item 9: the compute figure ------------------------------------------------------------------
def test_compute_table_by_hand_and_the_figure_is_log_log_with_the_cost(tmp_path: Path) -> None:
    campaign = _campaign(tmp_path)
    table = compute_time_table(campaign)
    assert list(dict.fromkeys(table["phase"])) == ["total", "fit", "acquisition"]
    runs = [make_run("eggholder", "bolt", s) for s in SEEDS]
    size, fit, warm = (
        np.concatenate([r[v].values.ravel() for r in runs])
        for v in ("dataset_size", "compute_fit", "is_warmup")
    )
    keep = warm == 0
    rows = table[(table["benchmark"] == "eggholder") & (table["algorithm"] == "bolt")
                 & (table["phase"] == "fit")]
    np.testing.assert_array_equal(rows["dataset_size"], np.unique(size[keep]))
    for n, mean in zip(rows["dataset_size"], rows["mean"], strict=True):
        assert mean == pytest.approx(fit[keep & (size == n)].mean(), rel=1e-12)

    fig = response_time_vs_dataset_size(campaign)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == len(BENCHMARKS) * 3  # total, fit, acquisition per benchmark
    for ax in axes:
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        dashed = [ln for ln in ax.lines if ln.get_linestyle() == "--" and ln.get_color() == "black"]
        assert len(dashed) == 1 and dashed[0].get_ydata()[0] == pytest.approx(1.0)  # c = 1 s
    # the fake runs' compute (< 0.7 s per iteration) never exceeds c = 1 s
    notes = [t.get_text() for ax in axes for t in ax.texts]
    assert notes and all("dominates at every n" in t for t in notes)


def test_log_bins_weight_by_iterations() -> None:
    import pandas as pd

    from tvbo.analysis.figures import log_binned

    keys = {"benchmark": "b", "algorithm": "a", "speed": 1.0, "phase": "fit"}
    # 100 and 110 share a bin at 8 bins per decade (log10: 2.0, 2.04); 200 is apart
    table = pd.DataFrame([{**keys, "dataset_size": n, "mean": m, "n": k}
                          for n, m, k in ((100, 1.0, 1), (110, 4.0, 3), (200, 9.0, 2))])
    binned = log_binned(table)
    assert list(binned["mean"]) == pytest.approx([(1.0 + 12.0) / 4, 9.0])
    assert list(binned["dataset_size"]) == pytest.approx([(100 + 330) / 4, 200.0])
    assert list(binned["n"]) == [4, 2]


def test_dominance_note_names_the_first_size_above_the_cost() -> None:
    import pandas as pd

    table = pd.DataFrame({"phase": "total", "dataset_size": [10, 20, 40],
                          "mean": [0.1, 0.6, 2.0]})
    assert dominance_note(table, 0.5) == "compute > c = 0.5 s from n = 20"
    assert "dominates at every n" in dominance_note(table, 5.0)


# -- item 10: the settings caveat of the paper comparison ----------------------------------------
def _recorded_campaign(horizon: float, seeds: int, cost: float, profile: str) -> xr.Dataset:
    """Runs of GP-UCB and BOLT on Eggholder with config_json as `tvbo run` records it."""
    algorithms = ["gp-ucb", "bolt"]
    dims = ("benchmark", "algorithm", "seed", "speed")
    shape = (1, 2, seeds, 1)
    config = np.full(shape, "", dtype=object)
    for a in range(2):
        for s in range(seeds):
            config[0, a, s, 0] = json.dumps({
                "benchmark": {"name": "eggholder", "horizon": horizon, "cost": cost},
                "cost_table": "metronome",
                "compute": {"model": "counted", "speed": 1.0, "profile": {"name": profile}},
            })
    rng = np.random.default_rng(0)
    return xr.Dataset(
        {
            "average_regret": (dims, rng.uniform(200, 300, shape)),
            "run_present": (dims, np.ones(shape, np.int8)),
            "attr_config_json": (dims, config),
        },
        coords={"benchmark": ["eggholder"], "algorithm": algorithms,
                "seed": list(range(seeds)), "speed": [1.0]},
    )


def test_comparison_warns_when_the_settings_differ(tmp_path: Path, capsys) -> None:
    quick = _recorded_campaign(120.0, 3, 0.5, "reference-2core")
    write_comparison(quick, tmp_path / "quick", paper="bolt-metronome")
    text = (tmp_path / "quick" / "paper_vs_tvbo.md").read_text()
    lines = [ln for ln in text.splitlines() if CAVEAT_PREFIX in ln.lower()]
    assert len(lines) == 2  # the header line and the caption
    header = lines[0]
    assert "horizon 120 s vs the paper's 600 s" in header
    assert "3 seeds vs the paper's 10 runs" in header
    assert "evaluation cost 0.5 s vs the paper's 0.05 s" in header
    assert "reference-2core" in header
    assert CAVEAT_PREFIX in capsys.readouterr().err
    assert "Settings differ" in (tmp_path / "quick" / "paper_vs_tvbo.tex").read_text()


def test_comparison_has_no_warning_when_the_settings_match(tmp_path: Path) -> None:
    paper_like = _recorded_campaign(600.0, 10, 0.05, "botorch-i9-laptop")
    write_comparison(paper_like, tmp_path, paper="bolt-metronome")
    assert CAVEAT_PREFIX not in (tmp_path / "paper_vs_tvbo.md").read_text().lower()


def test_config_caveat_of_the_shipped_configs() -> None:
    import yaml

    root = Path(__file__).resolve().parents[1] / "config"
    quick = yaml.safe_load((root / "config.yaml").read_text())
    assert config_caveat(quick, "bolt-metronome").startswith(CAVEAT_PREFIX + " horizon 120 s")
    paper = yaml.safe_load((root / "bolt_paper.yaml").read_text())
    paper.setdefault("speeds", [1.0])
    assert config_caveat(paper, "bolt-metronome") == ""  # 600 s, Temperature 1800 s, 10 seeds


# -- item 11: the workflow's start and end messages ----------------------------------------------
def test_summary_names_the_best_per_benchmark_on_both_metrics(tmp_path: Path) -> None:
    campaign = _campaign(tmp_path)
    best = best_per_benchmark(campaign)
    assert {(r["benchmark"], r["metric"]) for r in best} == {
        (b, m) for b in BENCHMARKS for m in ("average_regret", "time_integrated_regret")}
    for row in best:  # the lowest mean over seeds, checked against the run attributes
        means = {
            a: np.mean([make_run(row["benchmark"], a, s).attrs[row["metric"]] for s in SEEDS])
            for a in ALGORITHMS
        }
        assert row["algorithm"] == min(means, key=means.get)
        assert row["mean"] == pytest.approx(means[row["algorithm"]], rel=1e-9)
        assert np.isfinite(row["se"]) and row["n"] == len(SEEDS)
    config = {"campaign": "fake"}
    text = summary_message(config, root=tmp_path, campaign=campaign,
                           configfiles=["config/other.yaml"])
    for row in best:
        assert any(row["benchmark"] in ln and row["label"] in ln and "±" in ln
                   for ln in text.splitlines())
    assert "average query regret" in text and "time-integrated regret" in text
    assert str(tmp_path / "results" / "fake" / "tables") in text
    assert "snakemake --report report.html --configfile config/other.yaml" in text


def test_start_message_counts_the_runs_to_do(tmp_path: Path) -> None:
    config = {"campaign": "c", "benchmarks": ["eggholder"], "algorithms": ["gp-ucb", "bolt"],
              "seeds": [0, 1], "speeds": [1.0], "horizon": 120, "warmup": 15,
              "benchmark_options": {"eggholder": {"cost": 0.5}}, "compute": "counted"}
    done = tmp_path / "results/c/runs/eggholder/bolt/seed0_speed1.0.nc"
    done.parent.mkdir(parents=True)
    done.write_bytes(b"")
    text = start_message(config, cores=2, root=tmp_path)
    assert "3 of 4 runs to do" in text and "on 2 core(s)" in text
    # the measured model (tvbo/campaign_time.yaml) prices the 3 pending runs, their jobs and
    # eggholder's f* table; the message prints its wall-time estimate
    from tvbo.campaign_time import estimate, load_model

    est = estimate(load_model(), config, {("eggholder", "gp-ucb", 1.0): 2,
                                          ("eggholder", "bolt", 1.0): 1}, 2, ["eggholder"])
    assert est.runs == 3 and est.jobs == 3 and est.tables == 1
    wall = est.wall
    assert (f"~{wall:.0f} s" if wall < 90 else f"~{wall / 60:.0f} min") in text


# -- item 11: tvbo run's closing line ------------------------------------------------------------
def test_tvbo_run_prints_the_final_regrets(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run.nc"
    argv = ["run", "--benchmark", "ackley", "--algorithm", "gp-ucb", "--horizon", "10",
            "--warmup", "3", "--max-iterations", "6", "--out", str(out)]
    assert cli.main(argv) == 0
    err = capsys.readouterr().err
    ds = xr.load_dataset(out)
    final = err.strip().splitlines()[-1]
    assert final == (
        f"final: average regret {ds.attrs['average_regret']:.6g}, time-integrated regret "
        f"{ds.attrs['time_integrated_regret']:.6g} ({ds.attrs['n_iterations']} queries)"
    )
    assert cli.main([*argv, "--quiet"]) == 0
    assert "final:" not in capsys.readouterr().err


class _Job:
    def __init__(self, *outputs: str) -> None:
        self.output = list(outputs)


class _Workflow:
    """What on_start / on_success read of Snakemake's workflow: its cores and its DAG's jobs."""

    def __init__(self, *jobs: _Job) -> None:
        self.cores = 2
        self.dag = type("Dag", (), {"jobs": list(jobs)})()


def test_start_and_end_messages_only_for_the_campaign_the_run_builds(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`snakemake results/OTHER/campaign.nc` loads the default config too; its messages must not
    announce (or summarise) the default campaign, which that run never builds."""
    from tvbo.workflow_messages import builds_campaign, on_start, on_success

    monkeypatch.chdir(tmp_path)
    config = {"campaign": "demo", "benchmarks": ["hartmann3"], "algorithms": ["gp-ucb"],
              "seeds": [0], "speeds": [1.0], "horizon": 600.0}
    own = _Workflow(_Job("results/demo/runs/hartmann3/gp-ucb/seed0_speed1.0.nc"))
    other = _Workflow(_Job("results/other/reproduction_overrides.yaml"),
                      _Job("results/other/campaign.nc"))
    assert builds_campaign(config, own)
    assert not builds_campaign(config, other)
    assert builds_campaign(config, object())  # no DAG to read: say what the config would build
    on_start(config, other)
    on_success(config, other)
    assert capsys.readouterr().err == ""
    on_start(config, own)
    assert "tvbo: campaign demo: 1 of 1 runs to do" in capsys.readouterr().err
    on_success(config, own)
    assert "tvbo: campaign demo finished." in capsys.readouterr().err
