"""Fit health: per-fit records (gp.work -> engine -> run file), the campaign table, the CLI and
the workflow rule."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from tests.fake_runs import make_run, with_fit_records
from tvbo.analysis.fit_health import (
    FIT_HEALTH_FILES,
    degenerate_runs,
    fit_health_table,
    fit_records,
    write_fit_health,
)
from tvbo.gp.exact import ExactGP
from tvbo.gp.fit import at_bounds, fit_hyperparameters
from tvbo.gp.kernels import HyperparameterBounds, Hyperparameters, SeparableKernel
from tvbo.gp.lml import LogNormalPrior, log_marginal_likelihood_and_grad
from tvbo.results.campaign import merge_runs
from tvbo.results.io import write_run
from tvbo.sim.recorder import Recorder
from tvbo.work import NullWorkCounter, WorkCounter


# ------------------------------------------------------------------------------------------------
# recording
# ------------------------------------------------------------------------------------------------
def _static_gp(work: WorkCounter) -> ExactGP:
    """Noise-free data that do not change over 100 s: the LML drives l_T to its upper bound
    (nothing changes) and the noise to its lower bound (the data are interpolated)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(30, 1))
    gp = ExactGP(SeparableKernel("matern52", "matern32"), Hyperparameters(1.0, 0.2, 10.0, 0.01),
                 work=work)
    gp.set_data(X, np.linspace(0.0, 100.0, 30), np.sin(6.0 * X[:, 0]))
    return gp


def test_at_bounds_is_one_percent_of_the_log_width() -> None:
    lo, hi = 1.0, 1e4  # log-width 4 ln 10; 1% of it is a factor 10**0.04 = 1.0965
    assert at_bounds(1.09, (lo, hi)) == (True, False)
    assert at_bounds(1.10, (lo, hi)) == (False, False)
    assert at_bounds(1e4 / 1.09, (lo, hi)) == (False, True)
    assert at_bounds(1e4 / 1.10, (lo, hi)) == (False, False)
    assert at_bounds(2.0, (2.0, 2.0)) == (False, False)  # a fixed value is at no bound
    assert at_bounds(2.0, (0.5, 8.0), tolerance=0.5) == (True, True)


def test_fit_reports_a_record_with_bound_flags() -> None:
    work = WorkCounter()
    gp = _static_gp(work)
    result = fit_hyperparameters(gp, HyperparameterBounds(), source="test:static")
    assert result.at_upper == ("lengthscale_time",)
    assert result.at_lower == ("noise_var",)
    (record,) = work.drain_fits()
    assert record is result.record
    assert work.drain_fits() == []
    assert record["source"] == "test:static" and record["mode"] == "lbfgs"
    assert record["lengthscale_time_at_upper"] == 1 and record["lengthscale_time_at_lower"] == 0
    assert record["noise_var_at_lower"] == 1 and record["noise_var_at_upper"] == 0
    assert record["signal_var_at_lower"] == record["signal_var_at_upper"] == 0
    assert record["lengthscale_time"] == pytest.approx(1e4)
    assert record["n_data"] == 30 and record["time_unit"] == "s"
    assert math.isnan(record["log_posterior"])
    lml, _ = log_marginal_likelihood_and_grad(gp)
    assert record["lml"] == pytest.approx(lml, rel=1e-12)


def test_fit_record_separates_lml_and_log_posterior() -> None:
    work = WorkCounter()
    gp = _static_gp(work)
    prior = LogNormalPrior.from_mapping({"noise_var": (0.01, 1.0)})
    result = fit_hyperparameters(gp, HyperparameterBounds(), prior=prior)
    record = result.record
    noise = result.hyperparameters.noise_var
    log_prior = -0.5 * (math.log(noise) - math.log(0.01)) ** 2  # by hand, log_sd = 1
    assert record["log_posterior"] == pytest.approx(result.lml, rel=1e-12)
    assert record["log_posterior"] - record["lml"] == pytest.approx(log_prior, rel=1e-9)
    assert record["lml"] == pytest.approx(log_marginal_likelihood_and_grad(gp)[0], rel=1e-10)
    assert "noise_var" not in result.at_lower  # the prior pulls the noise off its floor


def test_fixed_noise_and_no_data() -> None:
    work = WorkCounter()
    gp = _static_gp(work)
    bounds = HyperparameterBounds(noise_var=(1e-3, 1.0))
    fit_hyperparameters(gp, bounds, init=Hyperparameters(1.0, 0.2, 10.0, 1e-3), fit_noise=False)
    (record,) = work.drain_fits()
    assert record["fitted"] == "signal_var,lengthscale_space,lengthscale_time"
    assert record["noise_var"] == 1e-3 and record["noise_var_at_lower"] == 0  # held fixed
    spatial = SeparableKernel("matern52", None)
    empty = ExactGP(spatial, Hyperparameters(1.0, 0.2, None, 0.01), work=work)
    assert fit_hyperparameters(empty).record is None and work.drain_fits() == []
    null = NullWorkCounter()
    null.record_fit({"source": "x"})
    assert null.drain_fits() == []


def test_recorder_lays_out_fits_including_per_dimension_fields() -> None:
    recorder = Recorder(d=2)
    assert recorder.fit_dataset().sizes["fit"] == 0
    recorder.add_fits([{"source": "a", "noise_var": 0.1, "noise_var_at_lower": 1,
                        "lengthscale_space": np.array([0.1, 0.2])}],
                      iteration=3, call="ingest", time=1.5)
    recorder.add_fits([{"source": "b", "epsilon": 0.2}], iteration=4, call="propose", time=2.0)
    ds = recorder.fit_dataset()
    assert list(ds["fit_source"].values) == ["a", "b"]
    assert list(ds["fit_iteration"].values) == [3, 4] and ds["fit_iteration"].dtype == np.int64
    assert list(ds["fit_call"].values) == ["ingest", "propose"]
    assert ds["fit_noise_var_at_lower"].values.tolist() == [1, 0]
    assert ds["fit_noise_var_at_lower"].dtype == np.int8
    assert ds["fit_lengthscale_space"].dims == ("fit", "dim")
    np.testing.assert_array_equal(ds["fit_lengthscale_space"].values[0], [0.1, 0.2])
    assert np.isnan(ds["fit_lengthscale_space"].values[1]).all()
    assert np.isnan(ds["fit_epsilon"].values[0]) and ds["fit_epsilon"].values[1] == 0.2


@pytest.fixture(scope="module")
def short_runs() -> dict[str, xr.Dataset]:
    from tvbo import simulate

    return {
        name: simulate("ackley", name, seed=0, horizon=20.0, warmup=5, max_iterations=12)
        for name in ("w-dbo", "bolt", "r-gp-ucb", "et-gp-ucb", "abo", "gp-ucb", "boke")
    }


@pytest.mark.parametrize("name", ["w-dbo", "bolt", "r-gp-ucb", "et-gp-ucb", "abo", "gp-ucb"])
def test_run_files_hold_the_fits(name: str, short_runs: dict[str, xr.Dataset],
                                 tmp_path: Path) -> None:
    ds = short_runs[name]
    write_run(ds, tmp_path / "run.nc")  # a valid run file
    ds = xr.load_dataset(tmp_path / "run.nc").squeeze(["benchmark", "algorithm", "seed", "speed"])
    n = ds.sizes["fit"]
    assert n > 0
    for var in ("fit_iteration", "fit_time", "fit_source", "fit_mode", "fit_lml",
                "fit_lengthscale_space", "fit_noise_var_at_lower", "fit_noise_var_at_upper"):
        assert ds[var].dims == ("fit",), var
    iteration = ds["fit_iteration"].values
    assert (np.diff(iteration) >= 0).all() and (np.diff(ds["fit_time"].values) >= 0).all()
    assert iteration.min() >= 5  # no fit during warm-up (ingest fits only after it)
    # the hyperparameters in force after each iteration are those of its last surrogate fit
    surrogate = ds["fit_source"].values == "surrogate:gp"
    ingest = ds["fit_call"].values == "ingest"
    for k in np.unique(iteration[surrogate & ingest]):
        last = np.flatnonzero(surrogate & (iteration == k))[-1]
        assert ds["state_noise_var"].values[k] == ds["fit_noise_var"].values[last]
        assert ds["state_lengthscale_space"].values[k] == ds["fit_lengthscale_space"].values[last]
    if name in ("w-dbo", "bolt", "abo"):
        assert (ds["fit_time_unit"].values[surrogate] == "s").all()
        assert np.isfinite(ds["fit_lengthscale_time"].values[surrogate]).all()
    if name == "bolt":  # BOLT's NNLS model of R(n) goes through the same channel
        rt = ds["fit_source"].values == "dataset:bolt-nstar:response-time"
        assert rt.any() and (ds["fit_mode"].values[rt] == "nnls").all()
        for i in range(4):
            c = ds[f"fit_response_c{i}"].values[rt]
            assert (c >= 0).all()
            np.testing.assert_array_equal(ds[f"fit_response_c{i}_at_lower"].values[rt], c == 0)
    if name == "r-gp-ucb":  # the forgetting rate is fitted through l_T (in steps)
        eps = ds["fit_source"].values == "dataset:periodic-reset:eps"
        assert eps.any() and (ds["fit_time_unit"].values[eps] == "step").all()
        k = iteration[eps][-1]
        assert ds["fit_epsilon"].values[np.flatnonzero(eps)[-1]] == ds["state_reset_eps"].values[k]


def test_a_run_without_fits_has_an_empty_fit_dimension(short_runs, tmp_path: Path) -> None:
    ds = short_runs["boke"]
    assert ds.sizes["fit"] == 0 and "fit_source" in ds
    write_run(ds, tmp_path / "boke.nc")
    paths = [tmp_path / "boke.nc"]
    write_run(short_runs["gp-ucb"], tmp_path / "gp.nc")
    campaign = merge_runs([*paths, tmp_path / "gp.nc"])
    records = fit_records(campaign)
    assert set(records["algorithm"]) == {"gp-ucb"}
    assert len(records) == short_runs["gp-ucb"].sizes["fit"]
    # strings are int16 codes into one category list in a campaign (memory), decoded on read
    source = campaign["fit_source"]
    assert source.dtype.kind == "f" and "categories_json" in source.attrs
    gp = short_runs["gp-ucb"].squeeze(["benchmark", "algorithm", "seed", "speed"])
    assert list(records["source"]) == list(gp["fit_source"].values)
    assert list(records["call"]) == list(gp["fit_call"].values)
    np.testing.assert_array_equal(records["lml"], gp["fit_lml"].values)


# ------------------------------------------------------------------------------------------------
# the campaign table on a hand-built campaign
# ------------------------------------------------------------------------------------------------
def _temporal_fit(l_t: float, noise_low: int = 0) -> dict:
    return {"source": "surrogate:gp", "mode": "lbfgs", "time_unit": "s",
            "fitted": "signal_var,lengthscale_space,lengthscale_time,noise_var",
            "signal_var": 1.0, "lengthscale_space": 0.2, "lengthscale_time": l_t,
            "noise_var": 1e-6 if noise_low else 0.01, "noise_var_at_lower": noise_low}


def _spatial_fit(noise_high: int) -> dict:
    return {"source": "surrogate:gp", "mode": "lbfgs", "time_unit": "",
            "fitted": "signal_var,lengthscale_space,noise_var", "signal_var": 1.0,
            "lengthscale_space": 0.2, "noise_var": 1.0, "noise_var_at_upper": noise_high}


@pytest.fixture()
def hand_campaign(tmp_path: Path) -> xr.Dataset:
    """shekel (horizon 60 s): bolt with three l_T histories, gp_ucb with noise at its upper
    bound (seed 0), no fits (seed 1) and a run file from before fit recording (seed 2)."""
    bolt = {
        0: [_temporal_fit(5.0) for _ in range(6)]
        + [{"source": "dataset:bolt-nstar:response-time", "mode": "nnls", "response_c0": 0.0,
            "response_c0_at_lower": 1, "fitted": "response_c0"}],  # not a hyperparameter fit
        1: [_temporal_fit(5.0)] + [_temporal_fit(100.0) for _ in range(5)],
        2: [_temporal_fit(5.0, 1), _temporal_fit(5.0, 1), _temporal_fit(5.0),
            _temporal_fit(5.0), _temporal_fit(70.0), _temporal_fit(5.0)],
    }
    paths = []
    for seed, fits in bolt.items():
        run = make_run("shekel", "bolt", seed, n_iterations=12)
        run["state_removed_total"] = run["is_warmup"] * 0 + run["iteration"]  # final 11
        paths.append(write_run(with_fit_records(run, fits, every=10.0),
                               tmp_path / f"bolt{seed}.nc"))
    gp0 = with_fit_records(make_run("shekel", "gp_ucb", 0, n_iterations=12),
                           [_spatial_fit(1) for _ in range(6)], every=10.0)
    paths.append(write_run(gp0, tmp_path / "gp0.nc"))
    gp1 = with_fit_records(make_run("shekel", "gp_ucb", 1, n_iterations=12), [], every=10.0)
    paths.append(write_run(gp1, tmp_path / "gp1.nc"))
    paths.append(write_run(make_run("shekel", "gp_ucb", 2, n_iterations=12), tmp_path / "gp2.nc"))
    return merge_runs(paths)


def test_fit_health_table_on_a_hand_built_campaign(hand_campaign: xr.Dataset) -> None:
    table = fit_health_table(hand_campaign).set_index("algorithm")
    bolt, gp = table.loc["bolt"], table.loc["gp_ucb"]
    assert bolt["runs"] == 3 and bolt["fits"] == 18
    assert bolt["share_noise_var_at_lower"] == pytest.approx(2 / 18)
    assert bolt["share_any_at_bound"] == pytest.approx(2 / 18)
    assert bolt["share_lengthscale_time_at_upper"] == 0.0
    assert bolt["share_runs_final_lT_above_horizon"] == pytest.approx(1 / 3)
    assert bolt["share_runs_max_lT_above_horizon"] == pytest.approx(2 / 3)
    assert bolt["median_lT"] == 5.0
    assert bolt["removals_per_run"] == 11.0 and math.isnan(bolt["resets_per_run"])
    assert bolt["degenerate_runs"] == 1
    assert gp["runs"] == 3 and gp["fits"] == 6 and gp["fits_per_run"] == 2.0
    assert gp["share_noise_var_at_upper"] == 1.0 and gp["share_any_at_bound"] == 1.0
    assert math.isnan(gp["share_lengthscale_time_at_upper"])  # never fitted
    assert math.isnan(gp["share_runs_final_lT_above_horizon"]) and math.isnan(gp["median_lT"])
    assert gp["degenerate_runs"] == 1


def test_degenerate_runs_say_when_a_run_got_stuck(hand_campaign: xr.Dataset) -> None:
    stuck = degenerate_runs(hand_campaign)
    rows = {(r.algorithm, r.seed, r.parameter, r.condition): r for r in stuck.itertuples()}
    assert set(rows) == {("bolt", 1, "lengthscale_time", "above_horizon"),
                         ("gp_ucb", 0, "noise_var", "at_upper")}
    bolt = rows[("bolt", 1, "lengthscale_time", "above_horizon")]
    assert (bolt.since_iteration, bolt.since_time, bolt.streak_fits) == (5, 20.0, 5)
    assert (bolt.until_iteration, bolt.until_time, bolt.to_end) == (9, 60.0, 1)
    assert bolt.final_value == 100.0 and bolt.share_of_fits == pytest.approx(5 / 6)
    # a stricter rule drops the 5-fit streak; the loosest one adds bolt seed 2's episodes that
    # ended before the run did: noise at its floor for fits 0-1, l_T above H at fit 4
    assert len(degenerate_runs(hand_campaign, min_streak=6)) == 1
    loose = degenerate_runs(hand_campaign, min_streak=1, min_share=0.0)
    episodes = loose[(loose["algorithm"] == "bolt") & (loose["seed"] == 2)]
    assert sorted(zip(episodes["parameter"], episodes["since_iteration"],
                      episodes["until_iteration"], episodes["to_end"], strict=True)) == [
        ("lengthscale_time", 8, 8, 0), ("noise_var", 4, 5, 0)]
    assert len(loose) == 4
    with pytest.raises(ValueError, match="min_share"):
        degenerate_runs(hand_campaign, min_share=1.5)


def test_write_fit_health_and_cli(hand_campaign: xr.Dataset, tmp_path: Path) -> None:
    from tvbo.cli import main
    from tvbo.results.campaign import write_campaign

    paths = write_fit_health(hand_campaign, tmp_path / "direct")
    assert sorted(p.name for p in paths) == sorted(FIT_HEALTH_FILES.values())
    campaign_path = write_campaign(hand_campaign, tmp_path / "campaign.nc")
    assert main(["fit-health", str(campaign_path), "--outdir", str(tmp_path / "cli")]) == 0
    out = tmp_path / "cli"
    assert (out / "lengthscale_time.png").read_bytes()[:4] == b"\x89PNG"
    table = pd.read_csv(out / "fit_health.csv")
    assert set(table["algorithm"]) == {"bolt", "gp_ucb"}
    text = (out / "fit_health.md").read_text()
    assert "# Fit health" in text and "above_horizon" in text
    with pytest.raises(SystemExit) as err:
        main(["fit-health", str(campaign_path), "--outdir", str(out), "--min-share", "2"])
    assert err.value.code == 2


# ------------------------------------------------------------------------------------------------
# workflow
# ------------------------------------------------------------------------------------------------
def test_workflow_plans_fit_health(tmp_path: Path) -> None:
    from tests.workflow.test_workflow import load_test_config, planned_jobs, snakemake

    proc = snakemake(tmp_path, load_test_config(), "-n", "--cores", "1")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert planned_jobs(proc.stdout + proc.stderr)["fit_health"] == 1


@pytest.mark.slow
def test_workflow_writes_fit_health(tmp_path: Path) -> None:
    from tests.workflow.test_workflow import _tvbo_on_path, load_test_config, snakemake

    _tvbo_on_path(tmp_path)
    config = load_test_config()
    proc = snakemake(tmp_path, config, "--cores", "1", timeout=900)
    assert proc.returncode == 0, proc.stderr[-5000:]
    root = tmp_path / "results" / config["campaign"] / "fit_health"
    for name in FIT_HEALTH_FILES.values():
        assert (root / name).stat().st_size > 0, name
    table = pd.read_csv(root / "fit_health.csv")
    assert sorted(table["benchmark"]) == sorted(config["benchmarks"])
    assert (table["fits"] > 0).all()
