"""The measured campaign-time model behind the workflow's start-of-campaign estimate
(tvbo.campaign_time, tvbo/campaign_time.yaml, scripts/fit_campaign_time.py)."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import tvbo
from tvbo import campaign_time as ct
from tvbo.workflow_messages import start_message

REPO = Path(__file__).resolve().parents[1]

MODEL = {
    "format": ct.FORMAT, "format_version": ct.FORMAT_VERSION,
    "overheads": {"job_seconds": 1.5, "run_seconds": 0.1, "analysis_seconds": 20.0,
                  "analysis_seconds_per_run": 0.5},
    "oracle_tables": {"default_seconds": 40.0, "seconds": {"eggholder": 8.0}},
    "cells": {"counted:reference-2core": {
        "gp-ucb": {"eggholder": [{"seconds": 10.0, "iterations": 200.0, "compute": 0.02,
                                  "cost": 0.5, "horizon": 120.0}],
                   "ackley": [{"seconds": 30.0, "iterations": 200.0, "compute": 0.06,
                               "cost": 0.5, "horizon": 120.0}]},
        "bolt": {"eggholder": [{"seconds": 4.0, "iterations": 100.0, "compute": 0.01,
                                "cost": 0.5, "horizon": 120.0}]},
    }},
}
CONFIG = {"campaign": "c", "benchmarks": ["eggholder"], "algorithms": ["gp-ucb", "bolt"],
          "seeds": [0, 1, 2], "speeds": [1.0], "horizon": 120, "warmup": 15,
          "benchmark_options": {"eggholder": {"cost": 0.5}}, "compute": "counted"}


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "model.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_packaged_model_is_read_and_prices_the_quickstart() -> None:
    model = ct.load_model()
    assert model.cells, "tvbo/campaign_time.yaml holds no sampled cells"
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    bases = set()
    for benchmark in config["benchmarks"]:
        for algorithm in config["algorithms"]:
            price = ct.price_run(model, config, benchmark, algorithm)
            bases.add(price.basis)
            # every algorithm of the quickstart is sampled (on this benchmark or others)
            assert price.basis in ("measured", "algorithm"), (benchmark, algorithm)
            assert price.seconds > 0
    assert "measured" in bases


def test_a_sampled_cell_is_priced_from_its_own_runs() -> None:
    model = ct.parse_model(MODEL)
    price = ct.price_run(model, CONFIG, "eggholder", "gp-ucb")
    iterations = 15 + (120 - 15 * 0.5) / (0.5 + 0.02)
    assert price.basis == "measured" and price.iterations == pytest.approx(iterations)
    assert price.seconds == pytest.approx(10.0 / 200.0 * iterations + 0.1)
    # twice the speed: less compute per iteration, more iterations, proportionally more CPU
    fast = ct.price_run(model, CONFIG, "eggholder", "gp-ucb", speed=2.0)
    assert fast.iterations == pytest.approx(15 + 112.5 / 0.51)
    assert fast.seconds > price.seconds


def test_unknown_algorithm_and_benchmark_get_stated_fallbacks(tmp_path: Path) -> None:
    model = ct.parse_model(MODEL)
    other_benchmark = ct.price_run(model, CONFIG, "shekel", "bolt")
    assert other_benchmark.basis == "algorithm"
    unknown = ct.price_run(model, CONFIG, "eggholder", "my-plugin-algorithm")
    assert unknown.basis == "class"
    # the median seconds per iteration of every sampled cell of the class: 0.05, 0.15, 0.04
    assert unknown.seconds == pytest.approx(0.05 * unknown.iterations + 0.1)
    other_class = ct.price_run(model, {**CONFIG, "compute": "measured"}, "eggholder", "bolt")
    assert other_class.basis == "any"
    config = {**CONFIG, "algorithms": ["bolt", "my-plugin-algorithm"]}
    text = start_message(config, cores=2, root=tmp_path, model_path=_write(tmp_path, MODEL))
    assert "fallback for my-plugin-algorithm/eggholder: " + ct.FALLBACKS["class"] in text
    assert "fallback for bolt" not in text


def test_the_estimate_schedules_jobs_tables_and_analysis_on_the_cores(tmp_path: Path) -> None:
    model = ct.parse_model(MODEL)
    config = {**CONFIG, "runs_per_job": 2}
    est = ct.estimate(model, config, {("eggholder", "gp-ucb", 1.0): 3,
                                      ("eggholder", "bolt", 1.0): 3}, 2, ["eggholder"])
    gp = ct.price_run(model, config, "eggholder", "gp-ucb").seconds
    bolt = ct.price_run(model, config, "eggholder", "bolt").seconds
    jobs = [1.5 + 2 * gp, 1.5 + gp, 1.5 + 2 * bolt, 1.5 + bolt]
    assert (est.runs, est.jobs, est.tables) == (6, 4, 1)
    assert est.cpu == pytest.approx(sum(jobs) + 8.0 + 20.0 + 0.5 * 6)
    assert est.wall == pytest.approx(ct.lpt_makespan([*jobs, 8.0], 2) + 20.0 + 3.0)
    # the message counts only missing run files and tables
    done = tmp_path / "results/c/runs/eggholder/bolt/seed0_speed1.0.nc"
    done.parent.mkdir(parents=True)
    done.write_bytes(b"")
    (tmp_path / "results/c/oracles").mkdir(parents=True)
    (tmp_path / "results/c/oracles/eggholder.npz").write_bytes(b"")
    text = start_message(config, cores=2, root=tmp_path, model_path=_write(tmp_path, MODEL))
    assert "5 of 6 runs to do" in text and "0 f* table(s)" in text


def test_lpt_makespan() -> None:
    assert ct.lpt_makespan([3, 3, 2, 2, 2], 2) == 7
    assert ct.lpt_makespan([], 4) == 0
    assert ct.lpt_makespan([5, 1], 1) == 6


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.update(format="other"), "format expected"),
    (lambda d: d["overheads"].pop("job_seconds"), "overheads.job_seconds"),
    (lambda d: d["cells"]["counted:reference-2core"]["bolt"]["eggholder"][0].update(seconds=-1),
     "cells.counted:reference-2core.bolt.eggholder[0].seconds"),
    (lambda d: d["cells"]["counted:reference-2core"]["bolt"]["eggholder"][0].pop("cost"),
     "cells.counted:reference-2core.bolt.eggholder[0].cost"),
    (lambda d: d["cells"]["counted:reference-2core"]["bolt"].update(
        eggholder={"seconds": 4.0, "iterations": 100.0, "cost": 0.5, "horizon": 120.0}),
     "cells.counted:reference-2core.bolt.eggholder: expected a non-empty list of regimes"),
    (lambda d: d["cells"]["counted:reference-2core"]["bolt"]["eggholder"].append(
        dict(d["cells"]["counted:reference-2core"]["bolt"]["eggholder"][0])),
     "cells.counted:reference-2core.bolt.eggholder: a regime (cost, horizon) is listed twice"),
    (lambda d: d["oracle_tables"]["seconds"].update(eggholder="slow"),
     "oracle_tables.eggholder"),
])
def test_a_bad_model_file_is_named(tmp_path: Path, edit, message: str) -> None:
    data = copy.deepcopy(MODEL)
    edit(data)
    with pytest.raises(ct.CampaignTimeModelError, match=re.escape(message)):
        ct.load_model(_write(tmp_path, data))


def test_a_missing_model_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ct.CampaignTimeModelError, match="no such file"):
        ct.load_model(tmp_path / "absent.yaml")


def test_an_algorithms_own_compute_model_prices_its_runs() -> None:
    """``compute_per_algorithm`` gives bolt ``polynomial`` (as the price campaign does for
    w-dbo-paper): its runs are priced from the polynomial class's cells (the class its run
    files record), not the campaign's counted class; gp-ucb keeps the campaign's."""
    data = copy.deepcopy(MODEL)
    data["cells"]["polynomial"] = {
        "bolt": {"eggholder": [{"seconds": 40.0, "iterations": 100.0, "compute": 0.5,
                                "cost": 0.5, "horizon": 120.0}]}}
    model = ct.parse_model(data)
    config = {**CONFIG, "compute_per_algorithm": {
        "bolt": {"compute": "polynomial", "polynomial": [0.5]}}}
    own = ct.price_run(model, config, "eggholder", "bolt")
    assert own.basis == "measured"
    assert own.iterations == pytest.approx(15 + (120 - 15 * 0.5) / (0.5 + 0.5))
    assert own.seconds == pytest.approx(40.0 / 100.0 * own.iterations + 0.1)
    campaign = ct.price_run(model, CONFIG, "eggholder", "bolt")
    assert campaign.seconds == pytest.approx(4.0 / 100.0 * campaign.iterations + 0.1)
    assert ct.price_run(model, config, "eggholder", "gp-ucb") == ct.price_run(
        model, CONFIG, "eggholder", "gp-ucb")


def test_a_benchmark_outside_the_cost_tables_is_priced_at_its_own_cost_and_horizon() -> None:
    """The PE-GP-UCB toy sets its horizon (steps x step_seconds) and cost (one step) itself:
    25 one-second steps are 25 iterations, not 600 s / 0.1 s; a benchmark that cannot be built
    keeps the stated defaults."""
    config = {"campaign": "toy", "warmup": 0, "benchmark_options": {
        "hills": {"options": {"steps": 25, "step_seconds": 1.0}}}}
    assert ct.cost_and_horizon(config, "hills") == (1.0, 25.0)
    assert ct.iterations(config, "hills", compute=0.0) == pytest.approx(25.0)
    assert ct.cost_and_horizon({"campaign": "x"}, "no-such-benchmark") == (0.1, 600.0)
    # a listed benchmark keeps its cost table's row
    assert ct.cost_and_horizon({"campaign": "x"}, "eggholder") == (0.05, 600.0)


def test_compute_class() -> None:
    assert ct.compute_class({}) == "counted:reference-2core"
    assert ct.compute_class({"profile": "profiles/botorch-i9-laptop.yaml"}) == (
        "counted:botorch-i9-laptop")
    assert ct.compute_class({"compute": "polynomial"}) == "polynomial"


def test_run_files_record_their_cost_outside_the_digests() -> None:
    from tvbo.results.schema import COST_ATTRIBUTES
    from tvbo.testing.preset_grid import digest_dataset

    ds = tvbo.simulate("shekel", "gp-ucb", horizon=10.0, warmup=3, max_iterations=5)
    for name in COST_ATTRIBUTES:
        assert ds.attrs[name] >= 0.0
        assert name not in ds.data_vars and name not in digest_dataset(ds)


def test_the_fit_script_refits_cells_from_run_files(tmp_path: Path) -> None:
    runs = tmp_path / "runs" / "eggholder" / "gp-ucb"
    runs.mkdir(parents=True)
    for seed in (0, 1):
        tvbo.simulate("eggholder", "gp-ucb", seed=seed, horizon=12.0, warmup=3, cost=0.5,
                      ).to_netcdf(runs / f"seed{seed}_speed1.0.nc")
    model = _write(tmp_path, MODEL)
    out = tmp_path / "refit.yaml"
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "fit_campaign_time.py"),
                           "--runs", str(tmp_path / "runs"), "--model", str(model),
                           "--out", str(out)], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert "runs: 2 sampled" in proc.stdout
    fitted = ct.load_model(out)
    cell, old = fitted.cells["counted:reference-2core"]["gp-ucb"]["eggholder"]  # by horizon
    # the runs' regime (0.5 s, 12 s) is added beside the model's (0.5 s, 120 s), not over it
    assert old == ct.parse_model(MODEL).cells["counted:reference-2core"]["gp-ucb"]["eggholder"][0]
    assert (cell.cost, cell.horizon) == (0.5, 12.0)
    assert cell.runs == 2 and cell.seconds > 0 and cell.iterations > 3
    # the cell's wait brings the sampled runs' mean iteration count back at their own settings
    sampled = {"horizon": 12.0, "warmup": 3, "compute": "counted",
               "benchmark_options": {"eggholder": {"cost": 0.5}}}
    priced = ct.price_run(fitted, sampled, "eggholder", "gp-ucb")
    assert priced.iterations == pytest.approx(cell.iterations, rel=1e-4)
    assert fitted.cells["counted:reference-2core"]["bolt"] == (
        ct.parse_model(MODEL).cells["counted:reference-2core"]["bolt"])  # kept
    bad = subprocess.run([sys.executable, str(REPO / "scripts" / "fit_campaign_time.py"),
                          "--runs", str(tmp_path / "absent"), "--model", str(model)],
                         capture_output=True, text=True, cwd=REPO)
    assert bad.returncode == 2 and "no such folder" in bad.stderr


def test_the_fit_script_fits_job_and_run_overheads_on_whole_campaigns(tmp_path: Path) -> None:
    """Two campaigns of the same two runs, one job against two: the remainders of their CPU
    seconds (beyond runs and analysis) solve for the per-job and per-run overheads."""
    import xarray as xr

    folders = []
    for name, jobs in (("one_job", 1), ("two_jobs", 2)):
        folder = tmp_path / name
        runs = folder / "runs" / "eggholder" / "gp-ucb"
        runs.mkdir(parents=True)
        for seed in (0, 1):
            path = runs / f"seed{seed}_speed1.0.nc"
            tvbo.simulate("eggholder", "gp-ucb", seed=seed, horizon=12.0, warmup=3, cost=0.5,
                          ).to_netcdf(path)
        benchmarks = folder / "benchmarks" / "simulate" / "eggholder" / "gp-ucb"
        benchmarks.mkdir(parents=True)
        for job in range(jobs):
            (benchmarks / f"job{job}.tsv").write_text("s\n1.0\n")
        folders.append(folder)
    runs_cpu = sum(xr.open_dataset(p).attrs["run_cpu_seconds"]
                   for p in (folders[0] / "runs").rglob("*.nc"))
    runs_cpu_two = sum(xr.open_dataset(p).attrs["run_cpu_seconds"]
                       for p in (folders[1] / "runs").rglob("*.nc"))
    analysis = 20.0 + 0.5 * 2  # MODEL's analysis overheads for two runs
    # true overheads 3 s per job and 0.25 s per run
    cpu_one = runs_cpu + analysis + 3.0 * 1 + 0.25 * 2
    cpu_two = runs_cpu_two + analysis + 3.0 * 2 + 0.25 * 2
    out = tmp_path / "refit.yaml"
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "fit_campaign_time.py"),
         "--campaign", f"{folders[0]}={cpu_one}", "--campaign", f"{folders[1]}={cpu_two}",
         "--model", str(_write(tmp_path, MODEL)), "--out", str(out)],
        capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    fitted = ct.load_model(out)
    assert fitted.job_seconds == pytest.approx(3.0, abs=2e-3)
    assert fitted.run_seconds == pytest.approx(0.25, abs=2e-3)
    assert fitted.cells["counted:reference-2core"]["gp-ucb"]["eggholder"][0].runs == 4
    bad = subprocess.run([sys.executable, str(REPO / "scripts" / "fit_campaign_time.py"),
                          "--campaign", f"{folders[0]}=lots", "--model", str(out)],
                         capture_output=True, text=True, cwd=REPO)
    assert bad.returncode == 2 and "expected DIR=CPU_SECONDS" in bad.stderr


def test_a_cells_wait_lengthens_its_iterations() -> None:
    """ABO's look-ahead waits: an iteration lasts cost + compute + wait (120 s horizon, 15
    warm-up queries at 0.5 s, then 112.5 s of 1 s iterations)."""
    assert ct.iterations(CONFIG, "eggholder", 0.02, wait=0.48) == pytest.approx(15 + 112.5)
    assert ct.iterations(CONFIG, "eggholder", 0.02) == pytest.approx(15 + 112.5 / 0.52)
    # a negative wait (compute that varies) never makes an iteration free
    assert ct.iterations(CONFIG, "eggholder", 0.02, wait=-5.0) == pytest.approx(15 + 112.5 / 0.52)


def test_a_run_is_priced_from_the_cell_of_its_own_regime() -> None:
    """Two regimes of one algorithm and benchmark (W-DBO's table runs at other costs than BOLT
    [B]'s): each config takes its own; an unsampled regime the nearest, named as a fallback."""
    data = copy.deepcopy(MODEL)
    data["cells"]["counted:reference-2core"]["gp-ucb"]["eggholder"].append(
        {"seconds": 90.0, "iterations": 300.0, "compute": 0.3, "cost": 0.01, "horizon": 120.0})
    model = ct.parse_model(data)
    dear = {**CONFIG, "benchmark_options": {"eggholder": {"cost": 0.5}}}
    cheap = {**CONFIG, "benchmark_options": {"eggholder": {"cost": 0.01}}}
    assert ct.price_run(model, dear, "eggholder", "gp-ucb").basis == "measured"
    at_cheap = ct.price_run(model, cheap, "eggholder", "gp-ucb")
    assert at_cheap.basis == "measured"
    iterations = 15 + (120 - 15 * 0.01) / (0.01 + 0.3)
    assert at_cheap.seconds == pytest.approx(90.0 / 300.0 * iterations + 0.1)
    # 0.02 s is nearer 0.01 s than 0.5 s (in log cost): the cheap cell, scaled by iterations
    near = ct.price_run(model, {**CONFIG, "benchmark_options": {"eggholder": {"cost": 0.02}}},
                        "eggholder", "gp-ucb")
    assert near.basis == "regime"
    assert near.seconds == pytest.approx(
        90.0 / 300.0 * (15 + (120 - 15 * 0.02) / (0.02 + 0.3)) + 0.1)
    # another horizon is another regime too
    longer = ct.price_run(model, {**dear, "horizon": 600}, "eggholder", "gp-ucb")
    assert longer.basis == "regime" and longer.seconds > ct.price_run(
        model, dear, "eggholder", "gp-ucb").seconds


def test_a_jobs_start_up_grows_with_the_campaigns_jobs() -> None:
    """Snakemake's bookkeeping per job scales with its DAG: each of J jobs costs
    job_seconds + job_seconds_per_job * J."""
    data = copy.deepcopy(MODEL)
    data["overheads"]["job_seconds_per_job"] = 0.25
    model = ct.parse_model(data)
    config = {**CONFIG, "runs_per_job": 1}
    est = ct.estimate(model, config, {("eggholder", "gp-ucb", 1.0): 4}, 1)
    assert est.jobs == 4 and est.job_cpu == pytest.approx(4 * (1.5 + 0.25 * 4))
    gp = ct.price_run(model, config, "eggholder", "gp-ucb").seconds
    assert est.wall == pytest.approx(4 * (1.5 + 1.0 + gp) + 20.0 + 0.5 * 4)
    # absent from a model file: 0 (a start-up that does not grow)
    assert ct.parse_model(MODEL).job_seconds_per_job == 0.0


def test_a_benchmark_whose_data_is_not_prepared_is_priced_at_its_sampled_regime() -> None:
    """Ozone's cost and horizon follow its days; before the data rules ran, the model cannot
    know them. The sampled runs' regime stands in (the algorithm's own, else any algorithm's on
    that benchmark), not 0.1 s over 600 s (5,000 iterations where ozone's runs make ~60)."""
    data = copy.deepcopy(MODEL)
    data["cells"]["counted:reference-2core"]["gp-ucb"]["no-data-yet"] = [
        {"seconds": 6.0, "iterations": 60.0, "compute": 0.5, "cost": 10.0, "horizon": 610.0,
         "runs": 4}]
    model = ct.parse_model(data)
    config = {"campaign": "c", "warmup": 1, "compute": "counted"}
    assert ct.known_cost_and_horizon(config, "no-data-yet") == (None, None)
    own = ct.price_run(model, config, "no-data-yet", "gp-ucb")
    assert own.basis == "data"
    assert own.iterations == pytest.approx(1 + (610 - 10) / 10.5)
    # another algorithm, never sampled there: its median cost per iteration, at that regime
    other = ct.price_run(model, config, "no-data-yet", "bolt")
    assert other.basis == "algorithm" and other.iterations < 100
    # nothing sampled on the benchmark: the stated defaults
    assert ct.cost_and_horizon(config, "no-data-yet-either") == (0.1, 600.0)


def test_the_whole_reproduction_is_estimated_campaign_by_campaign() -> None:
    """scripts/estimate_reproduction.py prices every campaign of the repository's spec from a
    clean folder; its total is the sum of the campaigns' walls."""
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "estimate_reproduction.py"),
                           "--cores", "2"], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    rows = [line.split() for line in lines[1:-1]]
    from tvbo.analysis.reproduction.spec_yaml import load_spec

    names = [c.name for c in load_spec(REPO / "config" / "reproduction.yaml").campaigns.values()]
    assert [r[0] for r in rows] == names
    assert all(float(r[2]) > 0 and float(r[3]) >= float(r[2]) for r in rows)
    total = lines[-1].split(")", 1)[1].split()  # after "total (one campaign after another)"
    assert float(total[1]) == pytest.approx(sum(float(r[2]) for r in rows), abs=len(rows))
    bad = subprocess.run([sys.executable, str(REPO / "scripts" / "estimate_reproduction.py"),
                          "--spec", "absent.yaml"], capture_output=True, text=True, cwd=REPO)
    assert bad.returncode == 2 and "no such spec" in bad.stderr


def test_estimate_reproduction_compares_with_a_measured_regeneration(tmp_path):
    """--timing sets each campaign's measurement beside its estimate: ratios, totals over the
    campaigns both have, the count within the tolerance, and the campaigns only one side has;
    a timing file without wall_s/cpu_s is refused with its campaign named."""
    from tests.scripts import load_script

    script = load_script("scripts/estimate_reproduction.py")
    rows = [("a", 10, 100.0, 200.0, 0), ("b", 10, 100.0, 200.0, 0), ("c", 5, 50.0, 90.0, 0)]
    timing = tmp_path / "timing.yaml"
    timing.write_text(yaml.safe_dump({"a": {"wall_s": 120.0, "cpu_s": 200.0},
                                      "b": {"wall_s": 200.0, "cpu_s": 100.0},
                                      "quickstart": {"wall_s": 1.0, "cpu_s": 1.0}}))
    lines = script.compare(rows, script.read_timing(timing), 0.3)
    a = lines[1].split()
    assert a[0] == "a" and float(a[3]) == pytest.approx(1.2) and float(a[6]) == pytest.approx(1.0)
    total = lines[3].split()
    assert total[0] == "total" and float(total[2]) == 320.0 and float(total[5]) == 300.0
    # a: wall 100 vs 120 within 30%; b: 100 vs 200 not; CPU a yes, b (200 vs 100) no
    assert "wall 1 of 2 campaigns (total: no)" in lines[4]
    assert "CPU 1 of 2 (total: no)" in lines[4]  # 400 predicted vs 300 measured
    wide = script.compare(rows, script.read_timing(timing), 0.5)
    assert "within 50% of the measurement: wall 2 of 2 campaigns (total: yes)" in wide[4]
    assert "CPU 1 of 2 (total: yes)" in wide[4]
    assert lines[5].endswith("left out): c") and lines[6].endswith("left out): quickstart")
    timing.write_text(yaml.safe_dump({"a": {"wall_s": 1.0}}))
    with pytest.raises(ValueError, match="campaign 'a' lacks wall_s or cpu_s"):
        script.read_timing(timing)
