"""Resumability: a campaign interrupted midway resumes without recomputing finished runs.

A tiny campaign (2 benchmarks x 1 algorithm x 2 seeds, 10 s of virtual time) runs with
``--cores 1`` in a new session; as soon as two run files exist the whole process group is
interrupted -- SIGKILL (a crash, an OOM kill, a lost node) or SIGINT (Ctrl-C). Then:

* every netCDF file under ``results/`` opens and every run file passes the run-schema validator
  (:func:`tvbo.results.io.read_run`): run files are written atomically, so an interruption never
  leaves a truncated one;
* no temporary file of :func:`tvbo.results.io.write_netcdf_atomic` (``.<name>.<random>.tmp``)
  is left behind;
* the re-run schedules exactly the runs that are missing or that Snakemake marked incomplete
  (a job killed after it wrote its output but before Snakemake recorded it), leaves every other
  finished run file untouched (same inode and mtime), and completes the campaign.

The documented recovery (docs/how-to/slurm.md, "Resuming an interrupted campaign") is a re-run with
``--rerun-incomplete``, preceded by ``snakemake --unlock`` after a SIGKILL, which leaves
Snakemake's lock behind. Even after SIGINT, which releases the lock, the re-run needs
``--rerun-incomplete``: a job interrupted between writing its output and Snakemake recording it
keeps its incomplete marker (and its output), and a plain re-run refuses to go on.
"""

from __future__ import annotations

import base64
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import xarray as xr
import yaml

from tvbo.results.io import read_run

REPO = Path(__file__).resolve().parents[2]
CAMPAIGN = "resume"
BENCHMARKS = ("ackley", "eggholder")
SEEDS = (0, 1)
TARGET = f"results/{CAMPAIGN}/campaign.nc"
RUN_FILES = {
    f"results/{CAMPAIGN}/runs/{benchmark}/gp-ucb/seed{seed}_speed1.0.nc"
    for benchmark in BENCHMARKS
    for seed in SEEDS
}
#: temporary files of tvbo.results.io.write_netcdf_atomic (tempfile.mkstemp prefix/suffix)
TEMP_FILE = re.compile(r"^\..+\.tmp$")


def write_config(workdir: Path) -> Path:
    """The CI test config, shrunk to 4 short runs (each a separate job)."""
    config = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    config.update(
        campaign=CAMPAIGN,
        benchmarks=list(BENCHMARKS),
        algorithms=["gp-ucb"],
        seeds=list(SEEDS),
        speeds=[1.0],
        horizon=10,
        warmup=3,
    )
    path = workdir / "resume-config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def snakemake_cmd(workdir: Path, *args: str) -> list[str]:
    return [
        sys.executable, "-m", "snakemake", "-s", str(REPO / "workflow" / "Snakefile"),
        "--directory", str(workdir), "--configfile", str(write_config(workdir)),
        "--replace-workflow-config", *args,
    ]  # fmt: skip


def existing_runs(workdir: Path) -> set[str]:
    return {run for run in RUN_FILES if (workdir / run).exists()}


def interrupt_midway(workdir: Path, sig: signal.Signals) -> None:
    """Start the campaign and send ``sig`` to its whole process group once 2 runs are written."""
    log = (workdir / "interrupted.log").open("w")
    # restore the default SIGINT disposition in the child: a test process started in the
    # background (`cmd &`) inherits SIGINT ignored, and snakemake would never see the Ctrl-C
    proc = subprocess.Popen(
        snakemake_cmd(workdir, "--cores", "1", TARGET),
        cwd=workdir, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while len(existing_runs(workdir)) < 2:
            if proc.poll() is not None:
                pytest.fail(
                    f"snakemake exited ({proc.returncode}) before 2 runs were written:\n"
                    + (workdir / "interrupted.log").read_text()[-3000:]
                )
            if time.monotonic() > deadline:
                pytest.fail("no 2 run files after 120 s")
            time.sleep(0.02)
        os.killpg(proc.pid, sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:  # never leave our own process group behind
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
    assert len(existing_runs(workdir)) < len(RUN_FILES), "the campaign finished before the kill"


def incomplete_outputs(workdir: Path) -> set[str]:
    """Outputs Snakemake marked incomplete: a marker per file, named by its urlsafe base64 path."""
    markers = workdir / ".snakemake" / "incomplete"
    if not markers.is_dir():
        return set()
    return {
        base64.urlsafe_b64decode(marker.name).decode()
        for marker in markers.iterdir()
        if marker.is_file()
    }


def check_results_intact(workdir: Path) -> None:
    """Every .nc under results/ is readable (runs pass the schema); no temp file is left."""
    results = workdir / "results"
    for path in results.rglob("*.nc"):
        if "runs" in path.relative_to(results).parts:
            read_run(path)  # raises on a truncated or malformed run
        else:
            xr.load_dataset(path).close()
    stray = [str(p.relative_to(workdir)) for p in results.rglob("*") if TEMP_FILE.match(p.name)]
    assert not stray, f"temporary files left behind: {stray}"


def scheduled_runs(output: str) -> set[str]:
    """Run files the re-run computed: the `output:` line of every simulate_run job it printed."""
    blocks = re.split(r"^\s*(?:local)?rule ", output, flags=re.M)
    return {
        match[1]
        for block in blocks
        if block.startswith("simulate_run:")
        for match in re.finditer(r"^\s+output: (\S+\.nc)$", block, flags=re.M)
    }


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_interrupted_campaign_resumes_without_recomputing(
    tmp_path: Path, sig: signal.Signals
) -> None:
    interrupt_midway(tmp_path, sig)
    check_results_intact(tmp_path)

    written = existing_runs(tmp_path)
    incomplete = incomplete_outputs(tmp_path) & RUN_FILES
    finished = written - incomplete
    assert finished, f"no run was recorded as finished before the kill: {written=} {incomplete=}"
    before = {run: os.stat(tmp_path / run) for run in finished}

    locks = tmp_path / ".snakemake" / "locks"
    if sig == signal.SIGKILL:
        # a killed Snakemake cannot release its lock
        unlock = subprocess.run(
            snakemake_cmd(tmp_path, "--unlock"), cwd=tmp_path, capture_output=True, text=True
        )
        assert unlock.returncode == 0, unlock.stdout + unlock.stderr
    else:
        assert not locks.is_dir() or not any(locks.iterdir()), "lock left behind after SIGINT"
    rerun = subprocess.run(
        snakemake_cmd(tmp_path, "--rerun-incomplete", "--cores", "1", TARGET),
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    output = rerun.stdout + rerun.stderr
    assert rerun.returncode == 0, output[-3000:]

    assert scheduled_runs(output) == RUN_FILES - finished, output[-3000:]
    for run, stat in before.items():
        now = os.stat(tmp_path / run)
        assert (now.st_ino, now.st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns), f"{run} rewritten"
    assert existing_runs(tmp_path) == RUN_FILES
    assert (tmp_path / TARGET).exists()
    check_results_intact(tmp_path)
    campaign = xr.load_dataset(tmp_path / TARGET)
    assert campaign.sizes["seed"] == len(SEEDS) and campaign.sizes["benchmark"] == len(BENCHMARKS)
