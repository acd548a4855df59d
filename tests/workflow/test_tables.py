"""The workflow side of the tables: which outputs are requested (decided at DAG time), the
report grouped by campaign, and the bad-input checks that stop a study before any job runs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.workflow.test_workflow import _tvbo_on_path, load_test_config, planned_jobs, snakemake


def dry_run(tmp_path: Path, edit: dict[str, Any]) -> tuple[int, str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    config = {**load_test_config(), **edit}
    proc = snakemake(tmp_path, config, "-n", "--cores", "1", "--printshellcmds")
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("edit", "fragments"),
    [
        ({"benchmarks": []}, ["config: empty grid: 'benchmarks' is empty", "tvbo list benchmarks"]),
        ({"seeds": None, "speeds": []}, ["config: empty grid: 'seeds' and 'speeds' are empty"]),
        (
            {"benchmarks": ["temperature"],
             "benchmark_options": {"temperature": {"options": {"path": "mine/t.nc"}}}},
            ["benchmark 'temperature' reads its data from 'mine/t.nc'",
             "no data rule produces", "data/intel/intel_<yyyy-mm-dd>.nc"],
        ),
        (
            {"benchmarks": ["ozone-sensors"], "data": {"mirror": "no/such/mirror"}},
            ["benchmark 'ozone-sensors' needs data/ozone/ozone_nyc-2022-2023.nc",
             "mirror folder", "does not exist"],
        ),
        (
            {"paper_aliases": {"blot": "gp-ucb"}},
            ["paper_aliases key 'blot' is no algorithm of a published table", "bolt-icml"],
        ),
        (
            {"paper_aliases": {"bolt-icml": "bolt"}},
            ["'bolt' is not in the campaign's algorithms: gp-ucb"],
        ),
        ({"paper_tables": ["nature"]}, ["'nature' is not one of"]),
        (
            {"algorithm_options": {"gp-ucb": {"variant": "faithful"}}},
            ["config: algorithm_options 'gp-ucb': variant: unknown variant 'faithful'; "
             "valid variants: paper, paper-ml, robust"],
        ),
    ],
)
def test_bad_study_fails_before_any_job(tmp_path: Path, edit, fragments) -> None:
    code, out = dry_run(tmp_path, edit)
    assert code != 0
    for fragment in fragments:
        assert fragment in out, (fragment, out[-3000:])
    assert "rule simulate_run" not in out and not (tmp_path / "results").exists()


def test_missing_mirror_file_is_named(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    (mirror / "intel").mkdir(parents=True)
    (mirror / "intel" / "other.txt").write_text("x")
    code, out = dry_run(tmp_path, {"benchmarks": ["temperature"], "data": {"mirror": str(mirror)}})
    assert code != 0
    assert "has no file 'data.txt.gz'" in out and "intel/other.txt" in out


def test_existing_prepared_field_needs_no_mirror(tmp_path: Path) -> None:
    field = tmp_path / "mine" / "t.nc"
    field.parent.mkdir()
    field.write_bytes(b"")  # exists: the data check is satisfied, the simulation reads it
    code, out = dry_run(
        tmp_path,
        {"benchmarks": ["temperature"], "data": {"mirror": "no/such/mirror"},
         "benchmark_options": {"temperature": {"options": {"path": "mine/t.nc"}}}},
    )
    assert code == 0, out[-3000:]
    assert planned_jobs(out)["simulate_run"] == 2


def test_comparison_requested_only_when_a_pair_is_shared(tmp_path: Path) -> None:
    # .test: ackley, eggholder x gp-ucb under the metronome table -> BOLT [B] shares 2 pairs
    code, out = dry_run(tmp_path / "a", {})
    assert code == 0, out[-3000:]
    jobs = planned_jobs(out)
    assert jobs["paper_comparison"] == 1 and "normalised_regret_figure" not in jobs
    assert "results/test/comparison/bolt-metronome/paper_vs_tvbo.tex" in out
    assert "tvbo compare results/test/campaign.nc --paper bolt-metronome" in out
    for name in ("average_regret.tex", "time_integrated_regret_normalised.csv"):
        assert f"results/test/tables/{name}" in out

    code, out = dry_run(tmp_path / "b", {"benchmarks": ["sphere6"]})  # in no paper table
    assert code == 0 and "paper_comparison" not in planned_jobs(out)
    code, out = dry_run(tmp_path / "c", {"paper_tables": []})
    assert code == 0 and "paper_comparison" not in planned_jobs(out)

    code, out = dry_run(
        tmp_path / "d",
        {"algorithms": ["gp-ucb", "bolt"], "cost_table": "icml",
         "paper_tables": ["auto", "wdbo", "bolt-icml"], "paper_aliases": {"bolt-icml": "bolt"}},
    )
    assert code == 0, out[-3000:]
    jobs = planned_jobs(out)
    assert jobs["paper_comparison"] == 2 and jobs["normalised_regret_figure"] == 1
    assert re.search(r"--paper bolt-icml --alias bolt-icml=bolt --outdir", out)
    assert re.search(r"--paper wdbo\s+--outdir", out)  # the alias is not W-DBO's
    assert "tvbo compare results/test/campaign.nc --paper none" in out


@pytest.mark.slow
def test_report_groups_every_output_by_campaign(tmp_path: Path) -> None:
    """A tiny campaign to the end, then `snakemake --report`: everything under the campaign."""
    pytest.importorskip("tvbo.api")
    _tvbo_on_path(tmp_path)
    config = {**load_test_config(), "algorithms": ["gp-ucb", "random-search"],
              "max_iterations": 25, "seeds": [0, 1]}
    proc = snakemake(tmp_path, config, "--cores", "1", timeout=900)
    assert proc.returncode == 0, proc.stderr[-5000:]
    root = tmp_path / "results" / "test"
    table = (root / "comparison" / "bolt-metronome" / "paper_vs_tvbo.md").read_text()
    assert "| ackley | GP-UCB | 4.26 ± 0.50 |" in table  # the display name
    assert "| eggholder | GP-UCB | 517 ± 16.4 |" in table
    assert (root / "figures" / "normalised_regret.png").read_bytes()[:4] == b"\x89PNG"
    assert r"\begin{tabular}" in (root / "tables" / "average_regret.tex").read_text()
    report = tmp_path / "report.html"
    proc = snakemake(tmp_path, config, "--report", str(report), timeout=300)
    assert proc.returncode == 0, proc.stderr[-5000:]
    html = report.read_text()
    match = re.search(r"var categories = (\{.*?\});", html)
    assert match, "no categories in the report"
    categories = json.loads(match.group(1))
    assert list(categories) == ["test"]
    # other analyses (theory, what-if) add their own subcategories under the same campaign
    assert set(categories["test"]) >= {"Tables", "Figures", "Paper comparison", "Runs",
                                       "Configuration"}
    assert len(categories["test"]["Tables"]) == 8
    assert "results/test/figures/normalised_regret.png" in categories["test"]["Figures"]
    assert len(categories["test"]["Paper comparison"]) == 4


def test_labels_reach_the_analyses_but_not_the_runs(tmp_path: Path) -> None:
    """label/variant only name an algorithm: `tvbo run` never sees them (renaming a column
    reruns nothing), every table / figure / comparison command gets them as --labels."""
    code, out = dry_run(
        tmp_path, {"algorithm_options": {"gp-ucb": {"label": "GP-UCB, β = 2", "beta": 2.0}}}
    )
    assert code == 0, out[-3000:]
    runs = [ln for ln in out.splitlines() if "tvbo run " in ln]
    assert runs and all('"beta": 2.0' in ln and "label" not in ln for ln in runs)
    labels = "--labels '{\"gp-ucb\": {\"label\": \"GP-UCB, \\u03b2 = 2\"}}'"
    for command in ("tvbo table", "tvbo figures", "tvbo compare"):
        assert any(command in ln and labels in ln for ln in out.splitlines()), command
