"""Cluster execution: the smoke study through SLURM equals the same study run locally.

``test_slurm_run_equals_local_run`` needs a running SLURM cluster with a ``debug`` partition,
e.g. the single-node one of ``scripts/slurm_local.sh`` (``scripts/ci_slurm.sh`` installs SLURM,
starts it, runs this file and stops it). Where ``sinfo`` is missing or no cluster answers the
test is SKIPPED with the reason -- never passed; with ``TVBO_REQUIRE_SLURM=1`` (set by
ci_slurm.sh) it FAILS instead, so CI cannot go green on a skipped cluster test.

The study is ``config/smoke.yaml`` shrunk to 4 runs (1 benchmark x 2 algorithms x 2 seeds, one
speed) so that it takes well under a minute. It runs through ``--profile profiles/slurm-local``
in one scratch directory and with ``--cores 2`` in another; under the ``counted`` compute model a
run is a deterministic function of its configuration, so every variable of every run file (and
of the merged campaign) must be bit-identical, along with the run attributes the schema requires
(tvbo.results.schema.REQUIRED_ATTRIBUTES). Other global attributes are descriptive and not
compared. The SLURM side is checked for real: one SLURM log per job under
``.snakemake/slurm_logs`` and, for each logged job id, a COMPLETED state in ``squeue``.

``test_slurm_profile_without_slurm_fails_fast`` runs in the default suite on any machine: it hides
the SLURM commands from PATH and checks the workflow's clear error (workflow/rules/cluster.smk).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import xarray as xr
import yaml

from tvbo.results.schema import REQUIRED_ATTRIBUTES

REPO = Path(__file__).resolve().parents[2]
CAMPAIGN = "smoke"
TARGET = f"results/{CAMPAIGN}/campaign.nc"
#: the user commands of Debian's slurm-client package
SLURM_COMMANDS = frozenset(
    "sacct sacctmgr salloc sattach sbatch sbcast scancel scontrol sdiag sinfo sprio squeue "
    "sreport srun sshare sstat strigger".split()
)


def smoke_config() -> dict[str, Any]:
    config = yaml.safe_load((REPO / "config" / "smoke.yaml").read_text())
    assert config["campaign"] == CAMPAIGN and config["compute"] == "counted"
    config.update(benchmarks=["hartmann3"], algorithms=["gp-ucb", "bolt"], seeds=[0, 1],
                  speeds=[1.0])  # fmt: skip
    return config


def snakemake(
    workdir: Path, config: dict[str, Any], *args: str, env: dict[str, str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """Run the repository's workflow in ``workdir``; on timeout interrupt it (cancels its jobs)."""
    path = workdir / "study.yaml"
    path.write_text(yaml.safe_dump(config))
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "workflow" / "Snakefile"),
           "--directory", str(workdir), "--configfile", str(path), "--replace-workflow-config",
           *args]  # fmt: skip
    proc = subprocess.Popen(
        cmd, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGINT)  # the SLURM executor cancels its jobs on SIGINT
        try:
            out, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
        pytest.fail(f"snakemake {' '.join(args)} did not finish in {timeout} s:\n{out[-3000:]}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, "")


# --- the cluster ----------------------------------------------------------------------------------


def cluster_problem() -> str | None:
    """Why the SLURM test cannot run here, or None when a usable cluster answers."""
    if shutil.which("sinfo") is None:
        return "`sinfo` is not on PATH: SLURM is not installed (see scripts/ci_slurm.sh)"
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "snakemake-executor-plugin-slurm is not installed (pip install -e '.[test]')"
    try:  # a live controller answers in milliseconds; a dead one makes sinfo retry for ~10 s
        proc = subprocess.run(["sinfo", "-h", "-p", "debug", "-N", "-o", "%T"],
                              capture_output=True, text=True, timeout=5)  # fmt: skip
    except subprocess.TimeoutExpired:
        return (
            "no SLURM controller answered `sinfo` within 5 s; start the local one with "
            "`sudo bash scripts/slurm_local.sh start`"
        )
    if proc.returncode != 0:
        return (
            f"no SLURM cluster answers (sinfo: {proc.stderr.strip()[:200]}); start the local one "
            "with `sudo bash scripts/slurm_local.sh start`"
        )
    states = proc.stdout.split()
    if not any(re.match(r"(idle|mixed|allocated|completing)", s) for s in states):
        return f"partition `debug` has no usable node (node states: {states or 'none'})"
    return None


def require_cluster() -> None:
    problem = cluster_problem()
    if problem is None:
        return
    if os.environ.get("TVBO_REQUIRE_SLURM") == "1":
        pytest.fail(f"TVBO_REQUIRE_SLURM=1 but {problem}")
    pytest.skip(f"SLURM test skipped: {problem}")


def slurm_job_logs(workdir: Path) -> dict[str, list[Path]]:
    """{rule: [SLURM log files]} from the executor's log directory (one `<jobid>.log` per job)."""
    logs: dict[str, list[Path]] = {}
    for log in sorted((workdir / ".snakemake" / "slurm_logs").glob("rule_*/*/*.log")):
        logs.setdefault(log.parent.parent.name.removeprefix("rule_"), []).append(log)
    return logs


def slurm_states(job_ids: list[str]) -> dict[str, str]:
    """Job id -> state, from squeue (finished jobs stay listed for MinJobAge seconds)."""
    proc = subprocess.run(
        ["squeue", "-h", "--states=all", "-j", ",".join(job_ids), "-o", "%i %T"],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    return dict(line.split() for line in proc.stdout.splitlines() if line.strip())


# --- comparing results ----------------------------------------------------------------------------


def same_bits(a: Any, b: Any) -> bool:
    """Equal values with equal bits (NaN == NaN; 0.0 != -0.0); strings and objects by value."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "biufcmM":
        return a.tobytes() == b.tobytes()
    return a.tolist() == b.tolist()


def assert_same_dataset(a: xr.Dataset, b: xr.Dataset, where: str, attrs: tuple[str, ...]) -> None:
    assert set(a.variables) == set(b.variables), where
    for name in a.variables:
        va, vb = a.variables[name], b.variables[name]
        assert va.dims == vb.dims, f"{where}: {name} dims {va.dims} != {vb.dims}"
        assert same_bits(va.values, vb.values), f"{where}: {name} differs"
        assert va.attrs.keys() == vb.attrs.keys(), f"{where}: {name} attributes"
        for key in va.attrs:
            assert same_bits(va.attrs[key], vb.attrs[key]), f"{where}: {name}.{key}"
    for key in attrs:
        assert key in a.attrs and key in b.attrs, f"{where}: attribute {key} missing"
        assert same_bits(a.attrs[key], b.attrs[key]), f"{where}: attribute {key} differs"


def load(path: Path) -> xr.Dataset:
    return xr.load_dataset(path, engine="netcdf4", decode_timedelta=False)


# --- tests ----------------------------------------------------------------------------------------


@pytest.mark.slurm
def test_slurm_run_equals_local_run(tmp_path: Path) -> None:
    require_cluster()
    config = smoke_config()
    n_runs = len(config["benchmarks"]) * len(config["algorithms"]) * len(config["seeds"])
    cluster_dir, local_dir = tmp_path / "slurm", tmp_path / "local"
    cluster_dir.mkdir()
    local_dir.mkdir()

    cluster = snakemake(cluster_dir, config, "--profile", str(REPO / "profiles" / "slurm-local"),
                        TARGET)  # fmt: skip
    assert cluster.returncode == 0, cluster.stdout[-4000:]
    local = snakemake(local_dir, config, "--cores", "2", TARGET)
    assert local.returncode == 0, local.stdout[-4000:]

    # the jobs went through SLURM: one log per job, named by its SLURM job id, COMPLETED
    logs = slurm_job_logs(cluster_dir)
    assert len(logs.get("simulate_run", [])) == n_runs, logs
    assert len(logs.get("merge_runs", [])) == 1, logs
    job_ids = [log.stem for rule_logs in logs.values() for log in rule_logs]
    assert all(job_id.isdigit() for job_id in job_ids), job_ids
    assert set(slurm_states(job_ids).values()) == {"COMPLETED"}, slurm_states(job_ids)
    # each SLURM job's log is a one-job Snakemake run of the rule, finished
    for log in logs["simulate_run"]:
        text = log.read_text()
        assert "simulate_run" in text and "1 of 1 steps (100%) done" in text, text[-2000:]

    runs = sorted(p.relative_to(local_dir) for p in (local_dir / "results").rglob("runs/**/*.nc"))
    assert len(runs) == n_runs
    assert runs == sorted(
        p.relative_to(cluster_dir) for p in (cluster_dir / "results").rglob("runs/**/*.nc")
    )
    for run in runs:
        assert_same_dataset(load(cluster_dir / run), load(local_dir / run), str(run),
                            REQUIRED_ATTRIBUTES)  # fmt: skip
    assert_same_dataset(load(cluster_dir / TARGET), load(local_dir / TARGET), TARGET, ())


def test_slurm_profile_without_slurm_fails_fast(tmp_path: Path) -> None:
    """`--profile profiles/slurm` where SLURM is not installed stops before any job, saying why."""
    # PATH without the SLURM commands: links to everything else on PATH (the executor plugin
    # itself shells out to `which`, so an empty PATH would fail for another reason)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not directory or not Path(directory).is_dir():
            continue
        for tool in Path(directory).iterdir():
            target = bin_dir / tool.name
            if tool.name in SLURM_COMMANDS or target.exists() or not os.access(tool, os.X_OK):
                continue
            target.symlink_to(tool)
    path = os.pathsep.join([str(Path(sys.executable).parent), str(bin_dir)])
    assert shutil.which("sbatch", path=path) is None
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        pytest.skip("snakemake-executor-plugin-slurm is not installed (pip install -e '.[test]')")

    work = tmp_path / "work"
    work.mkdir()
    config = smoke_config()
    proc = snakemake(work, config, "--profile", str(REPO / "profiles" / "slurm"),
                     env={**os.environ, "PATH": path}, timeout=120)  # fmt: skip
    assert proc.returncode != 0
    assert "the slurm executor was requested but `sbatch`" in proc.stdout, proc.stdout[-3000:]
    assert "not on PATH: install SLURM or run locally with --cores N" in proc.stdout
    assert not (work / "results").exists()  # stopped before the first (even local) job
