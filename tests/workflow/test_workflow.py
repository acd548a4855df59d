"""Tests of the Snakemake workflow: the job grid, config validation before any job, lint.

Snakemake runs in a subprocess with ``-s <repo>/workflow/Snakefile --directory <tmp>`` so that
nothing is written into the repository. The configuration is written per test (from
``.test/config.yaml`` with edits), and ``--configfile`` points at it; since
``config/config.yaml`` does not exist in the scratch directory, the test configuration is the
whole configuration.

The end-to-end run needs the real engine. PATH holds only the system directories, as when
``.venv/bin/snakemake`` is run without activating the venv: the workflow itself must find the
``tvbo`` script beside its interpreter (a ``python -m tvbo`` shim stands in before installation).
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
TEST_CONFIG = REPO / ".test" / "config.yaml"
VENV_BIN = Path(sys.executable).parent


def load_test_config() -> dict[str, Any]:
    return yaml.safe_load(TEST_CONFIG.read_text())


def snakemake(
    workdir: Path, config: dict[str, Any] | None, *args: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run snakemake on the repository's workflow in ``workdir`` with ``config`` (a dict)."""
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "workflow" / "Snakefile")]
    cmd += ["--directory", str(workdir)]
    if config is not None:
        path = workdir / "test-config.yaml"
        path.write_text(yaml.safe_dump(config))
        cmd += ["--configfile", str(path)]
    env = {
        **os.environ,
        # the venv's bin is NOT added: the workflow must find `tvbo` beside its interpreter
        "PATH": os.pathsep.join([str(workdir / "bin"), "/usr/bin", "/bin"]),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        cmd + list(args), capture_output=True, text=True, env=env, cwd=workdir, timeout=timeout
    )


def planned_jobs(output: str) -> dict[str, int]:
    """Parse the 'Job stats' table of a dry run into {rule: count}."""
    table = output[output.index("Job stats:") :]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, flags=re.M)}


def test_dry_run_builds_one_job_per_combination(tmp_path: Path) -> None:
    config = load_test_config()
    config.update(seeds=[0, 1, 2], speeds=[1, 2.5], benchmarks=["ackley", "eggholder"])
    proc = snakemake(tmp_path, config, "-n", "--cores", "2", "--printshellcmds")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    out = proc.stdout + proc.stderr
    jobs = planned_jobs(out)
    n_runs = 2 * len(config["algorithms"]) * 3 * 2
    assert jobs["simulate_run"] == n_runs
    assert jobs["merge_runs"] == jobs["regret_tables"] == jobs["figures"] == 1
    assert jobs["all"] == 1
    for bench in ("ackley", "eggholder"):
        for seed in (0, 1, 2):
            for speed in ("1.0", "2.5"):
                path = f"results/test/runs/{bench}/gp-ucb/seed{seed}_speed{speed}.nc"
                assert path in out
                assert f"--seed {seed} --speed {speed} " in out
    assert "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 tvbo run" in out
    assert not (tmp_path / "results").exists()  # a dry run writes nothing


def test_options_reach_the_command_line(tmp_path: Path) -> None:
    config = load_test_config()
    config.update(
        seeds=[3],
        compute="polynomial",
        polynomial=[0.1, 0, 1e-6],
        lookahead=True,
        stamp="decide",
        benchmarks=["ackley", "temperature"],
        benchmark_options={"ackley": {"cost": 0.5, "noise_var": 0},
                           "temperature": {"options": {"path": "it's/t.nc"}}},
        # options are validated at parse time (tvbo.config_check): a real option of gp-ucb
        algorithm_options={"gp-ucb": {"beta": 2.0}},
    )
    # an apostrophe in an option value (a data path that exists: the data rules are satisfied)
    (tmp_path / "it's").mkdir()
    (tmp_path / "it's" / "t.nc").write_bytes(b"")
    proc = snakemake(tmp_path, config, "-n", "--cores", "1", "--printshellcmds")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    out = proc.stdout
    assert "--compute polynomial" in out and "--polynomial 0.1,0.0,1e-06" in out
    assert "--stamp decide" in out and "--lookahead" in out
    assert "--cost 0.5 --noise-var 0.0" in out
    # JSON survives the shell: single-quoted by shlex, the apostrophe escaped
    assert '--benchmark-options \'{"path": "it\'"\'"\'s/t.nc"}\'' in out
    assert '--algorithm-options \'{"beta": 2.0}\'' in out


def validate_config(config: dict[str, Any]) -> dict[str, Any]:
    """Validate in-process with the schema the workflow uses (fills defaults into a copy)."""
    from snakemake.utils import validate

    config = copy.deepcopy(config)
    validate(config, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
    return config


def test_schema_fills_every_default() -> None:
    config = validate_config({"campaign": "x", "benchmarks": ["ackley"], "algorithms": ["gp-ucb"]})
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    assert set(config) == set(schema["properties"])  # every key has a default
    assert config["seeds"] == [0, 1, 2] and config["speeds"] == [1.0]
    assert (config["compute"], config["warmup"], config["horizon"]) == ("counted", 15, None)
    assert config["benchmark_options"] == {} and config["max_iterations"] is None


@pytest.mark.parametrize(
    ("edit", "fragments"),
    [
        ({"seedz": [0]}, ["Additional properties are not allowed", "'seedz' was unexpected"]),
        ({"speeds": [1.0, 0]}, ["0 is less than or equal to the minimum of 0", "speeds"]),
        ({"speeds": [-1.0]}, ["-1.0 is less than or equal to the minimum of 0"]),
        ({"speeds": "fast"}, ["'fast' is not of type 'array'"]),
        ({"horizon": 0}, ["0 is less than or equal to the minimum of 0", "horizon"]),
        ({"warmup": -1}, ["-1 is less than the minimum of 0", "warmup"]),
        ({"time_grid_step": 0}, ["time_grid_step"]),
        ({"compute": "quantum"}, ["'quantum' is not one of", "compute"]),
        ({"cost_table": "nature"}, ["'nature' is not one of ['metronome', 'icml']"]),
        ({"seeds": [0, 0]}, ["non-unique", "seeds"]),
        ({"seeds": [-1]}, ["-1 is less than the minimum of 0"]),
        ({"campaign": "a/b"}, ["'a/b' does not match", "campaign"]),
        ({"benchmark_options": {"ackley": {"costs": 1}}}, ["'costs' was unexpected"]),
        ({"benchmark_options": {"ackley": {"cost": -1}}}, ["-1 is less than the minimum of 0"]),
        ({"algorithm_options": {"gp-ucb": 3}}, ["3 is not of type 'object'"]),
        ({"max_iterations": 0}, ["0 is less than the minimum of 1"]),
        ({"polynomial": [0.1, -1]}, ["-1 is less than the minimum of 0"]),
    ],
)
def test_schema_rejects(edit: dict[str, Any], fragments: list[str]) -> None:
    from snakemake.exceptions import WorkflowError

    with pytest.raises(WorkflowError) as info:
        validate_config({**load_test_config(), **edit})
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)


@pytest.mark.parametrize(
    ("edit", "fragments"),
    [
        ({"seedz": [0]}, ["Additional properties are not allowed", "'seedz' was unexpected"]),
        ({"speeds": [1.0, 0]}, ["speeds", "0 is less than or equal to the minimum of 0"]),
        ({"algorithms": ["gp-ucb", "magic"]}, ["unknown algorithm", "'magic'", "gp-ucb"]),
        ({"algorithm_options": {"magic": {}}}, ["unknown algorithm", "'magic'"]),
        ({"compute": "polynomial"}, ["polynomial", "must be set exactly when"]),
        ({"compute": "measured", "profile": "laptop"}, ["profile", "only to compute 'counted'"]),
    ],
)
def test_bad_config_fails_before_any_job(tmp_path: Path, edit, fragments) -> None:
    config = {**load_test_config(), **edit}
    proc = snakemake(tmp_path, config, "--cores", "1")  # a REAL run: it must stop at parse time
    assert proc.returncode != 0
    err = proc.stderr + proc.stdout
    for fragment in fragments:
        assert fragment in err, (fragment, err[-3000:])
    assert "rule simulate_run" not in err and not (tmp_path / "results").exists()


def test_unknown_benchmark_lists_valid_names(tmp_path: Path) -> None:
    from tvbo.benchmarks import names

    config = {**load_test_config(), "benchmarks": ["eggholdr"]}
    proc = snakemake(tmp_path, config, "-n", "--cores", "1")
    assert proc.returncode != 0
    output = (proc.stdout + proc.stderr).splitlines()
    message = next(line for line in output if "unknown benchmark" in line)
    for name in names():
        assert name in message


def test_lint_is_clean(tmp_path: Path) -> None:
    proc = snakemake(tmp_path, load_test_config(), "--lint")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Congratulations, your workflow is in a good condition!" in proc.stdout + proc.stderr


def test_quickstart_config_is_valid(tmp_path: Path) -> None:
    """The shipped quickstart validates and plans >= 3 benchmarks x algorithms x 3 seeds."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    proc = snakemake(tmp_path, config, "-n", "--cores", "2")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    jobs = planned_jobs(proc.stdout + proc.stderr)
    assert len(config["benchmarks"]) >= 3 and len(config["seeds"]) >= 3
    expected = len(config["benchmarks"]) * len(config["algorithms"]) * len(config["seeds"])
    assert jobs["simulate_run"] == expected * len(config["speeds"])


def _tvbo_on_path(workdir: Path) -> None:
    """Before `pip install -e .` there is no console script: a shim stands in for it."""
    if (VENV_BIN / "tvbo").exists():
        return
    shim = workdir / "bin" / "tvbo"
    shim.parent.mkdir(parents=True)
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tvbo "$@"\n')
    shim.chmod(0o755)


@pytest.mark.slow
def test_end_to_end_ci_campaign(tmp_path: Path) -> None:
    """The CI campaign runs to the end: every run, the campaign file, tables, figures, logs."""
    pytest.importorskip("tvbo.api")
    _tvbo_on_path(tmp_path)
    config = load_test_config()
    proc = snakemake(tmp_path, config, "--cores", "2", timeout=900)
    assert proc.returncode == 0, proc.stderr[-5000:]
    root = tmp_path / "results" / config["campaign"]
    import xarray as xr

    campaign = xr.load_dataset(root / "campaign.nc")
    assert sorted(map(str, campaign["benchmark"].values)) == sorted(config["benchmarks"])
    assert sorted(int(s) for s in campaign["seed"].values) == sorted(config["seeds"])
    table = (root / "tables" / "average_regret.csv").read_text()
    for bench in config["benchmarks"]:
        assert bench in table
        for seed in config["seeds"]:
            log = root / "logs" / "simulate" / bench / "gp-ucb" / f"seed{seed}_speed1.0.log"
            assert "wrote results/" in log.read_text()
    for name in ("regret_vs_time", "dataset_size_vs_time", "response_time_vs_dataset_size"):
        assert (root / "figures" / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    resolved = yaml.safe_load((root / "config.yaml").read_text())
    assert resolved["warmup"] == config["warmup"] and resolved["cost_table"] == "metronome"
    # a second invocation has nothing left to do
    again = snakemake(tmp_path, config, "-n", "--cores", "2")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
    shutil.rmtree(tmp_path / ".snakemake", ignore_errors=True)


def test_a_configfile_replaces_config_yaml_in_spawned_run_jobs(tmp_path: Path) -> None:
    """Snakemake spawns `run:` rules (here campaign_config) in a process that re-reads the
    workflow without --replace-workflow-config; the Snakefile reads config/config.yaml only when
    no --configfile is given, so that process sees the campaign's file alone (a default
    config.yaml whose paper_aliases name an algorithm the campaign lacks once failed the job)."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(
        {**load_test_config(), "campaign": "default", "paper_aliases": {"w-dbo": "w-dbo-reference"},
         "algorithms": ["w-dbo-reference"], "benchmark_options": {"eggholder": {"cost": 0.5}}}))
    config = load_test_config()
    config.update(campaign="study", algorithms=["gp-ucb"])
    config.pop("paper_aliases", None)
    config.pop("benchmark_options", None)
    proc = snakemake(tmp_path, config, "--cores", "1", "results/study/config.yaml")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    recorded = yaml.safe_load((tmp_path / "results" / "study" / "config.yaml").read_text())
    assert recorded["algorithms"] == ["gp-ucb"]
    assert "w-dbo" not in (recorded.get("paper_aliases") or {})
    assert not recorded.get("benchmark_options")


def test_the_prior_days_a_benchmark_declares_are_inputs_of_its_runs(tmp_path: Path) -> None:
    """temperature-sensors reads its candidate-prior days (`prior_paths`) besides its own day:
    each is prepared by a data rule before the runs (a campaign once failed on a missing day)."""
    config = load_test_config()
    days = ["2004-03-04", "2004-03-05"]
    config.update(
        benchmarks=["temperature-sensors"], algorithms=["pe-gp-ucb"], seeds=[0],
        benchmark_options={"temperature-sensors": {"options": {
            "path": "data/intel/intel_2004-03-08.nc",
            "prior_paths": [f"data/intel/intel_{d}.nc" for d in days]}}},
        algorithm_options={"pe-gp-ucb": {"priors": "benchmark"}},
        data={"mirror": None, "intel": {"dates": ["2004-03-08", *days]}},
    )
    config.pop("paper_aliases", None)
    proc = snakemake(tmp_path, config, "-n", "--cores", "1", "--printshellcmds")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    out = proc.stdout + proc.stderr
    assert planned_jobs(out)["data_prepare_intel"] == 3
    run_job = out[out.index("rule simulate_run"):]
    run_job = run_job[: run_job.index("\n\n")]
    for day in ("2004-03-08", *days):
        assert f"data/intel/intel_{day}.nc" in run_job.split("output:")[0]
