"""The whole report: ``tvbo reproduce``, the workflow target, byte-identical rebuilds
(tvbo/analysis/reproduction/report.py)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from tests.analysis.reproduction.fakes import (
    REPO,
    _spec,
    _table_campaign,
)
from tvbo.analysis.reproduction.report import write_report
from tvbo.cli import main


def test_cli_writes_report_and_rejects_unknown_stand_in(tmp_path: Path, capsys) -> None:
    results = tmp_path / "results"
    campaign = _table_campaign(results)
    spec = _spec(tmp_path)
    out = tmp_path / "docs" / "reproduction.md"
    with pytest.raises(SystemExit) as exit_:
        main(["reproduce", "--spec", str(spec), "--results", str(results), "--out", str(out),
              "--campaign", f"nope={campaign}"])
    assert exit_.value.code == 2 and not out.exists()
    assert "valid keys: bolt_fake, heldout, claims_fake, missing" in capsys.readouterr().err
    assert main(["reproduce", "--spec", str(spec), "--results", str(tmp_path / "none"),
                 "--out", str(out), "--campaign", f"bolt_fake={campaign}"]) == 0
    text = out.read_text()
    assert "**Stand-in campaigns.**" in text and "stands in for `bolt_fake`" in text
    assert "| Overall | 2 | 3 | 2 | 1 | 6 |" in text


def test_workflow_plans_the_reproduction_target(tmp_path: Path) -> None:
    from tests.workflow.test_workflow import load_test_config, snakemake

    proc = snakemake(tmp_path, load_test_config(), "-n", "--cores", "1", "reproduction")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert re.search(r"^reproduction\s+1$", proc.stdout, flags=re.M), proc.stdout[-3000:]


def test_workflow_rejects_a_bad_spec_before_any_job(tmp_path: Path) -> None:
    """A prediction naming an unknown quantity stops `snakemake reproduction` while it builds
    the DAG, before any job, with the spec's one line naming the entry."""
    from tests.workflow.test_workflow import load_test_config, snakemake

    spec = _spec(tmp_path, **{"explanations.0.predictions": [
        {"quantity": "vibes", "order": "r-gp-ucb < bolt"}]})
    config = {**load_test_config(), "reproduction_spec": str(spec)}
    proc = snakemake(tmp_path, config, "--cores", "1", "reproduction")
    assert proc.returncode != 0
    lines = [x for x in proc.stderr.splitlines() if x.startswith("reproduction spec:")]
    assert len(lines) == 1 and "explanations[0].predictions[0].quantity" in lines[0]
    assert "'vibes'" in lines[0] and "Traceback" not in proc.stderr
    assert not (tmp_path / "results").exists()  # no job ran


@pytest.mark.slow
def test_workflow_builds_every_campaign_and_the_same_bytes_twice(tmp_path: Path) -> None:
    """`snakemake reproduction` with the tiny spec of .test/ from a clean results folder builds
    both of its campaigns (the workflow's own and, by the driver rule, its held-out replicate),
    then the report; forced again, the report's bytes are the same, and name no machine path."""
    from tests.workflow.test_workflow import _tvbo_on_path, load_test_config, snakemake

    _tvbo_on_path(tmp_path)
    config = {**load_test_config(), "reproduction_spec": ".test/reproduction.yaml"}
    proc = snakemake(tmp_path, config, "--cores", "2", "reproduction", timeout=900)
    assert proc.returncode == 0, proc.stderr[-5000:]
    for name in ("test", "test_heldout"):
        assert (tmp_path / "results" / name / "campaign.nc").is_file()
    first = (tmp_path / "docs" / "reproduction.md").read_bytes()
    recorded = yaml.safe_load((tmp_path / "results" / "reproduction_provenance.yaml").read_text())
    assert recorded["command"] == "snakemake --cores N reproduction"
    assert recorded["wall_time_s"] > 0
    proc = snakemake(tmp_path, config, "--cores", "2", "--forcerun", "reproduction",
                     "reproduction", timeout=900)
    assert proc.returncode == 0, proc.stderr[-5000:]
    assert (tmp_path / "docs" / "reproduction.md").read_bytes() == first
    text = first.decode()
    assert str(tmp_path) not in text and str(REPO) not in text
    assert "Campaign `tiny` (`results/test`)" in text
    assert ("| tiny_heldout | `results/test_heldout`: `snakemake --cores N "
            "results/test_heldout/campaign.nc` (config: `.test/config.yaml with campaign: "
            "test_heldout, seeds: [2, 3]`)") in text
    assert "| 2 (2, 3) |" in text  # the held-out replicate was read
    # a campaign built before its config was last edited is built again (the config is an
    # input): made older than the config, without the job's metadata (which records the build)
    held_out = tmp_path / "results" / "test_heldout"
    proc = snakemake(tmp_path, config, "--cleanup-metadata", "results/test_heldout/campaign.nc")
    assert proc.returncode == 0, proc.stderr[-3000:]
    os.utime(held_out / "reproduction_overrides.yaml", (1000, 1000))
    os.utime(held_out / "campaign.nc", (2000, 2000))
    proc = snakemake(tmp_path, config, "-n", "--cores", "2", "reproduction")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert re.search(r"^reproduction_campaign\s+1$", proc.stdout, flags=re.M), proc.stdout[-3000:]


def test_report_bytes_are_identical_when_built_twice(fake: Path, tmp_path: Path) -> None:

    spec = fake / "config" / "reproduction.yaml"
    first = write_report(tmp_path / "a.md", spec, fake / "results").read_bytes()
    second = write_report(tmp_path / "b.md", spec, fake / "results").read_bytes()
    assert first == second and str(tmp_path) not in first.decode()


def test_provenance_with_timed_builds_goes_into_the_header_and_the_campaigns_table(
        fake: Path, tmp_path: Path) -> None:
    """scripts/time_reproduction.py's record: each campaign's build time in its row, builds of
    no spec campaign (the workflow's own, the report) in one line, the untimed ones named."""
    spec = fake / "config" / "reproduction.yaml"
    provenance = tmp_path / "provenance.yaml"
    provenance.write_text(yaml.safe_dump({
        "command": "snakemake --cores 2 reproduction", "commit": "abc1234",
        "wall_time_s": 3725, "machine": "2 cores, x86_64",
        "campaigns": {"bolt_fake": {"wall_s": 3600.0, "cpu_s": 7100.0},
                      "quickstart": {"wall_s": 100.0, "cpu_s": 190.0},
                      "report": {"wall_s": 25.0, "cpu_s": 24.0}},
        "untimed": ["heldout_fake"]}))
    text = write_report(tmp_path / "a.md", spec, fake / "results",
                        provenance=provenance).read_text()
    assert ("at commit `abc1234`, 1 h 02 min wall time (2 h 01 min CPU) on 2 cores, x86_64 "
            "(campaigns and report, from a clean results "
            "folder; the sum of the builds below, each timed on its own; not counted, built "
            "without timing: heldout_fake)") in text
    assert ("`quickstart` 1 min 40 s wall / 3 min 10 s CPU; `report` 0 min 25 s wall / "
            "0 min 24 s CPU.") in text
    assert "| build: wall / CPU |" in text
    row = next(line for line in text.splitlines() if line.startswith("| bolt_fake |"))
    assert row.endswith("| 1 h 00 min / 1 h 58 min |")
    # builds resumed at later commits: every commit named, as commits
    record = yaml.safe_load(provenance.read_text())
    provenance.write_text(yaml.safe_dump({**record, "commit": "abc1234, def5678"}))
    text = write_report(tmp_path / "b.md", spec, fake / "results",
                        provenance=provenance).read_text()
    assert "at commits `abc1234, def5678`, 1 h 02 min wall time" in text


@pytest.mark.parametrize(("extra", "message"), [
    ({"campaigns": {"x": {"wall_s": 1.0}}}, "campaigns must map each campaign to {wall_s, cpu_s}"),
    ({"sittings": 3}, "differ in sittings"),
])
def test_provenance_rejects_bad_builds_and_unknown_keys(tmp_path: Path, extra, message) -> None:
    from tvbo.analysis.reproduction.campaigns import read_provenance

    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump({"command": "c", "commit": "x", "wall_time_s": 1,
                                    "machine": "m", **extra}))
    with pytest.raises(ValueError, match=re.escape(message)):
        read_provenance(path)


def test_a_report_built_from_some_campaigns_says_how_many(built) -> None:
    """The fake spec names four campaigns, one never run: the header says so."""
    assert ("records it. This report reads 3 of the 4 campaigns below (the others: not yet "
            "run).") in built.text
