"""The k-evaluators what-if: config grid, parse-time checks, figures, and the .test campaign."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.workflow.test_workflow import REPO, _tvbo_on_path, planned_jobs, snakemake

PARALLEL_TEST_CONFIG = REPO / ".test" / "parallel_whatif.yaml"


def _config() -> dict:
    return yaml.safe_load(PARALLEL_TEST_CONFIG.read_text())


def test_grid_has_evaluators_and_overlap_and_keeps_sequential_names(tmp_path: Path) -> None:
    proc = snakemake(tmp_path, _config(), "-n", "-p", "--cores", "1")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    jobs = planned_jobs(out)
    assert jobs["simulate_run"] == 2 * 2 * 2  # algorithms x evaluators x overlap
    assert jobs["parallel_whatif_figures"] == 1
    for name in ("seed0_speed1.0.nc", "seed0_speed1.0_k1o.nc", "seed0_speed1.0_k2.nc",
                 "seed0_speed1.0_k2o.nc"):
        assert f"runs/hartmann3/gp-ucb/{name}" in out
    commands = [line for line in out.splitlines() if "tvbo run --benchmark" in line]
    assert len(commands) == 8
    parallel = [c for c in commands if "--evaluators" in c]
    assert len(parallel) == 6  # the sequential runs' command line is today's
    assert any("--evaluators 2 --pending hallucinate --overlap" in c and "_k2o.nc" in c
               for c in parallel)
    assert all("--recommendation latest" in c for c in commands)


def test_sequential_grid_plans_no_parallel_figures(tmp_path: Path) -> None:
    config = {**_config(), "evaluators": [1], "overlap": [False]}
    proc = snakemake(tmp_path, config, "-n", "--cores", "1")
    jobs = planned_jobs(proc.stdout + proc.stderr)
    assert jobs["simulate_run"] == 2 and "parallel_whatif_figures" not in jobs


@pytest.mark.parametrize(
    ("edit", "fragments"),
    [
        ({"evaluators": [0]}, ["0 is less than the minimum of 1", "evaluators"]),
        ({"evaluators": [65]}, ["65 is greater than the maximum of 64"]),
        ({"evaluators": [1.5]}, ["1.5 is not of type 'integer'"]),
        ({"pending": "bogus"}, ["unknown pending strategy 'bogus'", "hallucinate"]),
        ({"algorithms": ["abo"]}, ["'abo' cannot run with", "look-ahead"]),
        ({"algorithms": ["boke"]}, ["cannot condition on pending", "pending: none"]),
    ],
)
def test_bad_parallel_config_fails_before_any_job(tmp_path: Path, edit, fragments) -> None:
    proc = snakemake(tmp_path, {**_config(), **edit}, "--cores", "1")
    assert proc.returncode != 0
    err = proc.stderr + proc.stdout
    for fragment in fragments:
        assert fragment in err, (fragment, err[-3000:])
    assert "rule simulate_run" not in err and not (tmp_path / "results").exists()


def test_figures_and_table_from_merged_runs(tmp_path: Path) -> None:
    from tvbo import simulate
    from tvbo.analysis.parallel_whatif import (
        recorded_recommendation,
        regret_vs_k,
        run_table,
        summary,
        write_parallel_whatif,
    )
    from tvbo.results.campaign import merge_runs
    from tvbo.results.io import write_run

    paths = []
    for seed in (0, 1):
        for k, overlap in ((1, False), (2, False), (2, True)):
            ds = simulate("hartmann3", "gp-ucb", seed=seed, horizon=16.0, cost=2.0, warmup=2,
                          evaluators=k, overlap=overlap, recommendation="latest",
                          profile="botorch-i9-laptop")
            path = tmp_path / f"r{seed}_{k}{overlap:d}.nc"
            write_run(ds, path)
            paths.append(path)
    campaign = merge_runs(paths)
    runs = run_table(campaign)
    assert sorted(set(zip(runs["evaluators"], runs["overlap"], strict=True))) == [
        (1, False), (2, False), (2, True)]
    assert set(runs["algorithm"]) == {"gp-ucb"}
    table = summary(runs)
    row = table[(table["evaluators"] == 2) & (~table["overlap"])
                & (table["metric"] == "time_integrated_regret_current")]
    values = runs[(runs["evaluators"] == 2) & (~runs["overlap"])][
        "time_integrated_regret_current"].to_numpy()
    assert row["mean"].item() == pytest.approx(values.mean())
    assert row["se"].item() == pytest.approx(values.std(ddof=1) / np.sqrt(2))
    # the title says which recommendation "current" is (the runs recorded `latest`)
    assert recorded_recommendation(campaign) == "latest"
    title = regret_vs_k(runs, "time_integrated_regret_current",
                        recommendation="latest").get_suptitle()
    assert "current recommendation (the latest completed query)" in title
    assert "latest" not in regret_vs_k(runs, "time_integrated_regret_current").get_suptitle()
    written = write_parallel_whatif(campaign, tmp_path / "out")
    assert [p.name for p in written] == ["parallel_average_regret_vs_k.png",
                                         "parallel_time_integrated_regret_vs_k.png",
                                         "parallel_whatif_summary.csv"]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in written[:2])


@pytest.mark.slow
def test_parallel_report_builds_from_the_tiny_grid(tmp_path: Path) -> None:
    _tvbo_on_path(tmp_path)
    config = _config()
    target = "results/test_parallel/parallel/parallel_whatif_summary.csv"
    proc = snakemake(tmp_path, config, "--cores", "2", target, timeout=900)
    assert proc.returncode == 0, proc.stderr[-5000:]
    report = snakemake(tmp_path, config, "--report", "report.html", target, timeout=300)
    assert report.returncode == 0, report.stderr[-5000:]
    html = (tmp_path / "report.html").read_text(errors="replace")
    assert "Parallel evaluators" in html
