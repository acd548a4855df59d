"""Several runs per process: `tvbo run-many` writes the files separate `tvbo run` calls write, and
the workflow's runs_per_job groups seeds into jobs without changing the run files' names.

The reference files come from separate `tvbo run` processes (not from calls in this process), so
state a previous run could leave behind in the interpreter would show as a difference.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import xarray as xr

from tests.workflow.test_workflow import load_test_config, planned_jobs, snakemake, validate_config
from tvbo.cli import main
from tvbo.results.schema import CODE_ATTRIBUTE, COST_ATTRIBUTES

REPO = Path(__file__).resolve().parents[1]
#: a short run with fits, removals and an oracle table (hartmann3 gets one in the workflow)
RUN = ["--benchmark", "hartmann3", "--algorithm", "bolt-reference", "--horizon", "30",
       "--cost", "0.5", "--warmup", "5", "--max-iterations", "25", "--quiet"]


def tvbo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tvbo.cli", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=300)


def test_run_many_writes_the_files_of_separate_runs(tmp_path: Path) -> None:
    table = tmp_path / "hartmann3.npz"
    made = tvbo("oracle", "--benchmark", "hartmann3", "--horizon", "30", "--cost", "0.5",
                "--out", str(table))
    assert made.returncode == 0, made.stderr
    seeds = ("3", "0")  # not sorted: the files follow --seeds, not the order of the seeds
    outs = [str(tmp_path / f"many{s}.nc") for s in seeds]
    many = tvbo("run-many", *RUN, "--oracle-table", str(table), "--seeds", *seeds, "--out", *outs)
    assert many.returncode == 0, many.stderr
    for seed, out in zip(seeds, outs, strict=True):
        single = tmp_path / f"single{seed}.nc"
        one = tvbo("run", *RUN, "--oracle-table", str(table), "--seed", seed, "--out", str(single))
        assert one.returncode == 0, one.stderr
        a, b = xr.load_dataset(out), xr.load_dataset(single)
        for ds in (a, b):  # the run's own CPU and wall seconds differ from process to process
            for name in COST_ATTRIBUTES:
                assert ds.attrs.pop(name) >= 0.0
            # the code record holds what the process had loaded: more after a first run
            assert "tvbo.algorithms.bolt.parts" in json.loads(ds.attrs.pop(CODE_ATTRIBUTE))
        assert a.identical(b), seed  # every other variable, coordinate and attribute
        assert a["seed"].values.tolist() == [int(seed)]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--seeds", "0", "1", "--out", "a.nc"],
         "--out needs one file per seed: got 2 seeds (0 1) and 1 files"),
        (["--seeds", "1", "1", "--out", "a.nc", "b.nc"], "--seeds repeats 1; give each once"),
        (["--seeds", "0", "1", "--out", "a.nc", "./a.nc"], "--out repeats a.nc; give each once"),
        (["--seeds", "0", "--out", "a.nc", "--compute", "quantum"], "unknown compute model"),
    ],
)
def test_run_many_rejects_bad_input_before_any_run(tmp_path: Path, capsys, extra, message,
                                                   monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(["run-many", "--benchmark", "shekel", "--algorithm", "gp-ucb", *extra])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing written


# -- workflow --------------------------------------------------------------------------------
def _dry(tmp_path: Path, **edit) -> str:
    tmp_path.mkdir(parents=True, exist_ok=True)
    config = {**load_test_config(), "benchmarks": ["ackley"], "seeds": [0, 1, 2, 3, 4], **edit}
    proc = snakemake(tmp_path, config, "-n", "--cores", "1", "--printshellcmds",
                     "results/test/campaign.nc")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return proc.stdout + proc.stderr


def test_schema_default_and_range() -> None:
    assert validate_config({"campaign": "x", "benchmarks": ["ackley"],
                            "algorithms": ["gp-ucb"]})["runs_per_job"] == 1
    with pytest.raises(Exception, match="0 is less than the minimum of 1"):
        validate_config({"campaign": "x", "benchmarks": ["ackley"], "algorithms": ["gp-ucb"],
                         "runs_per_job": 0})


def test_seeds_are_grouped_into_jobs_with_unchanged_file_names(tmp_path: Path) -> None:
    out = _dry(tmp_path, runs_per_job=2)
    jobs = planned_jobs(out)
    # seeds [0, 1], [2, 3], [4]: one rule per group, one job per (benchmark, algorithm, speed)
    assert {k: v for k, v in jobs.items() if k.startswith("simulate")} == {
        "simulate_runs_0": 1, "simulate_runs_1": 1, "simulate_runs_2": 1}
    runs = "results/test/runs/ackley/gp-ucb"
    assert ("tvbo run-many --benchmark ackley --algorithm gp-ucb --seeds 2 3 --speed 1.0 "
            in out)
    assert f"--out {runs}/seed2_speed1.0.nc {runs}/seed3_speed1.0.nc 2> " in out
    assert "results/test/logs/simulate/ackley/gp-ucb/seeds2-3_speed1.0.log" in out
    assert "--seeds 4 " in out and f"--out {runs}/seed4_speed1.0.nc 2>" in out
    # the default: one job per run, as before
    jobs = planned_jobs(_dry(tmp_path / "one"))
    assert jobs["simulate_run"] == 5 and not any(k.startswith("simulate_runs") for k in jobs)


def test_a_group_reruns_only_when_one_of_its_runs_is_missing(tmp_path: Path) -> None:
    runs = tmp_path / "results" / "test" / "runs" / "ackley" / "gp-ucb"
    runs.mkdir(parents=True)
    for seed in (0, 1, 2):  # group [0, 1] complete, group [2, 3] half done, group [4] missing
        (runs / f"seed{seed}_speed1.0.nc").write_bytes(b"")
    jobs = planned_jobs(_dry(tmp_path, runs_per_job=2))
    assert {k: v for k, v in jobs.items() if k.startswith("simulate")} == {
        "simulate_runs_1": 1, "simulate_runs_2": 1}
