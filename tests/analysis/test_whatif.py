"""What-if figures on a synthetic three-speed campaign with known values per run."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.fake_runs import ALGORITHMS, BENCHMARKS, SEEDS, WARMUP, make_run
from tvbo import cli
from tvbo.algorithms.display import benchmark_display_name
from tvbo.analysis.figure_output import FigureOptions
from tvbo.analysis.whatif import (
    DATA_FILE,
    FIGURE_FILES,
    NSTAR_SUMMARIES,
    QUANTITIES,
    check_speeds,
    evaluations_vs_speed,
    nstar_vs_speed,
    regret_vs_speed,
    run_summaries,
    summarise_nstar,
    write_whatif,
)
from tvbo.results.campaign import merge_runs, write_campaign
from tvbo.results.io import write_run

SPEEDS = (0.5, 2.0, 8.0)
MISSING = ("eggholder", "gp_ucb", 2, 8.0)  # one run never finished: n drops to 2 there
OUTLIER = 1000.0  # BOLT's last n* of every run


def regret(benchmark: str, algorithm: str, seed: int, speed: float) -> float:
    return (1 + ALGORITHMS.index(algorithm)) * (1 + 1 / speed) + 0.1 * seed + 5 * (
        benchmark == "shekel"
    )


def evaluations(seed: int, speed: float) -> int:
    return 10 + int(4 * speed) + seed


def nstar_values(n: int, seed: int, speed: float) -> np.ndarray:
    values = np.full(n, np.nan)
    values[WARMUP:] = 10 * speed + seed
    values[-1] = OUTLIER
    return values


def synthetic_run(benchmark: str, algorithm: str, seed: int, speed: float):
    n = evaluations(seed, speed)
    ds = make_run(benchmark, algorithm, seed, speed, n_iterations=n)
    value = regret(benchmark, algorithm, seed, speed)
    ds["average_regret"][...] = value
    ds["time_integrated_regret"][...] = 2 * value
    ds.attrs.update(average_regret=value, time_integrated_regret=2 * value)
    ds["dataset_size_held"][...] = 3 * speed + seed  # constant, so its time average is exact
    if algorithm == "bolt":
        nstar = ds["regret"].copy(data=nstar_values(n, seed, speed).reshape(ds["regret"].shape))
        ds["state_bolt_nstar"] = nstar
    return ds


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    directory = tmp_path_factory.mktemp("whatif")
    paths = [
        write_run(synthetic_run(b, a, s, v), directory / f"{b}_{a}_{s}_{v}.nc")
        for b in BENCHMARKS for a in ALGORITHMS for s in SEEDS for v in SPEEDS
        if (b, a, s, v) != MISSING
    ]
    return merge_runs(paths)


def expected(quantity_of_run, benchmark, algorithm, speed) -> tuple[float, float, int]:
    seeds = [s for s in SEEDS if (benchmark, algorithm, s, speed) != MISSING]
    values = np.array([quantity_of_run(benchmark, algorithm, s, speed) for s in seeds])
    return values.mean(), values.std(ddof=1) / np.sqrt(len(values)), len(values)


def check_table(table: pd.DataFrame, quantity: str, quantity_of_run, algorithms=ALGORITHMS):
    rows = table[table["quantity"] == quantity]
    assert len(rows) == len(BENCHMARKS) * len(algorithms) * len(SPEEDS)
    for row in rows.itertuples():
        mean, se, n = expected(quantity_of_run, row.benchmark, row.algorithm, row.speed)
        assert (row.mean, row.se, row.n) == (pytest.approx(mean), pytest.approx(se), n)


def test_run_summaries(campaign):
    runs = run_summaries(campaign)
    assert len(runs) == len(BENCHMARKS) * len(ALGORITHMS) * len(SEEDS) * len(SPEEDS) - 1
    assert list(runs.columns) == ["benchmark", "algorithm", "seed", "speed", *QUANTITIES]
    for row in runs.itertuples():
        assert row.average_regret == pytest.approx(
            regret(row.benchmark, row.algorithm, row.seed, row.speed)
        )
        assert row.evaluations == evaluations(row.seed, row.speed)
        assert row.dataset_size == pytest.approx(3 * row.speed + row.seed)
        if row.algorithm == "bolt":
            assert row.nstar == 10 * row.speed + row.seed  # the median ignores the outlier
        else:
            assert np.isnan(row.nstar)


def test_regret_vs_speed_plots_mean_and_standard_error(campaign):
    fig, table = regret_vs_speed(campaign)
    check_table(table, "average_regret", regret)
    check_table(table, "time_integrated_regret", lambda *key: 2 * regret(*key))
    # what is drawn: top-left panel = first benchmark's average regret, one line per algorithm
    benchmark = str(campaign["benchmark"].values[0])
    top_left, bottom_left = fig.axes[0], fig.axes[len(BENCHMARKS)]
    assert top_left.get_title() == benchmark_display_name(benchmark)
    assert top_left.get_xscale() == "log"
    for line, algorithm in zip(top_left.lines, campaign["algorithm"].values, strict=True):
        np.testing.assert_allclose(line.get_xdata(), SPEEDS)
        means = [expected(regret, benchmark, str(algorithm), v)[0] for v in SPEEDS]
        np.testing.assert_allclose(line.get_ydata(), means)
    assert bottom_left.get_ylabel() == QUANTITIES["time_integrated_regret"]
    # the band spans mean - se .. mean + se
    band = top_left.collections[0].get_paths()[0].vertices[:, 1]
    stats = [expected(regret, benchmark, str(campaign["algorithm"].values[0]), v) for v in SPEEDS]
    assert band.min() == pytest.approx(min(m - se for m, se, _ in stats))
    assert band.max() == pytest.approx(max(m + se for m, se, _ in stats))


@pytest.mark.parametrize("how", NSTAR_SUMMARIES)
def test_nstar_and_dataset_size_vs_speed(campaign, how):
    fig, table = nstar_vs_speed(campaign, nstar_summary=how)
    check_table(table, "dataset_size", lambda b, a, s, v: 3 * v + s)

    def nstar(benchmark, algorithm, seed, speed):
        values = nstar_values(evaluations(seed, speed), seed, speed)
        if how == "median":
            return 10 * speed + seed
        if how == "final":
            return OUTLIER
        run = campaign.sel(benchmark=benchmark, algorithm=algorithm, seed=seed, speed=speed)
        weights = run["response_time"].values[: len(values)]
        keep = np.isfinite(values) & np.isfinite(weights)
        return float(np.sum(values[keep] * weights[keep]) / np.sum(weights[keep]))

    check_table(table, "nstar", nstar, algorithms=("bolt",))  # only BOLT has an n*
    assert fig.axes[0].get_yscale() == "log"
    assert f"n* ({how})" in [t.get_text() for t in fig.legends[0].get_texts()]


def test_evaluations_vs_speed(campaign):
    fig, table = evaluations_vs_speed(campaign)
    check_table(table, "evaluations", lambda b, a, s, v: evaluations(s, v))
    assert len(fig.axes) == len(BENCHMARKS)


def test_summarise_nstar_edge_cases():
    warm = np.array([1, 0, 0, 0])
    response = np.array([1.0, 1.0, 3.0, np.nan])
    values = np.array([50.0, 10.0, 20.0, 30.0])
    assert summarise_nstar(values, warm, response, "median") == 20.0
    assert summarise_nstar(values, warm, response, "final") == 30.0
    assert summarise_nstar(values, warm, response, "time-average") == pytest.approx(17.5)
    assert np.isnan(summarise_nstar(np.full(4, np.nan), warm, response, "median"))
    with pytest.raises(ValueError, match="valid choices: median, final, time-average"):
        summarise_nstar(values, warm, response, "mean")


def test_single_or_empty_speed_grid_is_a_clear_error(campaign):
    with pytest.raises(ValueError, match="single speed \\[0.5\\]"):
        check_speeds(campaign.isel(speed=[0]))
    with pytest.raises(ValueError, match="speed grid is empty"):
        regret_vs_speed(campaign.isel(speed=[]))
    assert check_speeds(campaign) == list(SPEEDS)
    with pytest.raises(ValueError, match="unknown n\\* summary"):
        run_summaries(campaign, nstar_summary="mode")


def test_write_whatif_and_cli(campaign, tmp_path, capsys):
    path = write_campaign(campaign, tmp_path / "campaign.nc")
    out = tmp_path / "out"
    assert cli.main(["whatif", str(path), "--outdir", str(out), "--dpi", "40"]) == 0
    names = [*FIGURE_FILES.values(), DATA_FILE]
    assert capsys.readouterr().out.split() == [str(out / n) for n in names]
    assert all((out / n).stat().st_size > 1000 for n in names)
    table = pd.read_csv(out / DATA_FILE)
    assert set(table["quantity"]) == set(QUANTITIES)
    check_table(table, "average_regret", regret)
    # the same numbers through the library call
    written = write_whatif(campaign, tmp_path / "lib", options=FigureOptions(dpi=40))
    assert [p.name for p in written] == names

    single = write_campaign(campaign.isel(speed=[1]), tmp_path / "single.nc")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["whatif", str(single), "--outdir", str(tmp_path / "x")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("tvbo: error: what-if figures compare hardware speeds")
    assert "single speed [2.0]" in err and not (tmp_path / "x").exists()
    with pytest.raises(SystemExit):
        cli.main(["whatif", str(path), "--outdir", str(out), "--nstar-summary", "mean"])
    assert "invalid choice: 'mean'" in capsys.readouterr().err


def test_cli_choices_mirror_the_library():
    assert cli.NSTAR_SUMMARIES == NSTAR_SUMMARIES


def test_workflow_plans_whatif_only_with_several_speeds(tmp_path):
    """rule all asks for the theory figures always, the what-if figures from 2 speeds on."""
    from tests.workflow.test_workflow import load_test_config, planned_jobs, snakemake

    config = load_test_config()
    for speeds, whatif_jobs in (([1.0], 0), ([1.0, 4.0], 1)):
        config["speeds"] = speeds
        proc = snakemake(tmp_path, config, "-n", "--cores", "1", "--printshellcmds")
        assert proc.returncode == 0, proc.stderr + proc.stdout
        jobs = planned_jobs(proc.stdout + proc.stderr)
        assert jobs["theory_figures"] == 1
        assert jobs.get("whatif_figures", 0) == whatif_jobs
    out = proc.stdout + proc.stderr
    assert "tvbo whatif results/test/campaign.nc --outdir" in out
    assert "results/test/whatif/regret_vs_speed.png" in out
    assert "tvbo theory --outdir" in out
