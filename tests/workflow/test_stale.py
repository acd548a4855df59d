"""After a change of the code, `tvbo stale --delete` and a forced merge rebuild exactly the runs
whose recorded code changed, and nothing else (docs/how-to/paper-tables.md, "After a change of
the code").

The change is simulated in the run file, not in tvbo's source (a test must not edit the
package): one run's record claims an older digest of a module it loaded, as a run made before an
edit of that module would. The other runs must keep their files (same inode and mtime)."""

from __future__ import annotations

import json
from pathlib import Path

import netCDF4

from tests.workflow.test_workflow import load_test_config, planned_jobs, snakemake
from tvbo import cli
from tvbo.results.schema import CODE_ATTRIBUTE


def test_a_stale_run_alone_is_rebuilt(tmp_path: Path, capsys) -> None:
    config = load_test_config()
    config.update(campaign="stale", benchmarks=["ackley"], seeds=[0, 1])
    built = snakemake(tmp_path, config, "--cores", "2")
    assert built.returncode == 0, built.stderr + built.stdout
    runs = sorted((tmp_path / "results" / "stale" / "runs").rglob("*.nc"))
    assert len(runs) == 2
    stale, others = runs[0], runs[1:]
    with netCDF4.Dataset(stale, "a") as ds:
        record = json.loads(ds.getncattr(CODE_ATTRIBUTE))
        record["tvbo.gp.exact"] = "0" * 16  # made before an edit of the exact GP
        ds.setncattr(CODE_ATTRIBUTE, json.dumps(record))
    before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in others}

    assert cli.main(["stale", str(tmp_path / "results"), "--delete"]) == 0
    out = capsys.readouterr().out
    assert ": 1 stale," in out and "gp-ucb, 1 stale (changed: tvbo.gp.exact)" in out
    assert not stale.exists()
    planned = snakemake(tmp_path, config, "-n", "--cores", "2", "--forcerun", "merge_runs")
    assert planned.returncode == 0, planned.stderr + planned.stdout
    jobs = planned_jobs(planned.stdout + planned.stderr)
    assert jobs.get("simulate_run") == 1 and jobs.get("merge_runs") == 1
    rebuilt = snakemake(tmp_path, config, "--cores", "2", "--forcerun", "merge_runs")
    assert rebuilt.returncode == 0, rebuilt.stderr + rebuilt.stdout
    assert stale.is_file()
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in others} == before
    assert cli.main(["stale", str(tmp_path / "results")]) == 0
    assert " 0 stale" in capsys.readouterr().out
