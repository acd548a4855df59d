"""Tests of the ``tvbo`` command line (argument handling, errors, progress, the campaign steps).

Simulation-free tests replace ``tvbo.simulate`` by a recorder that returns a tiny Dataset laid out
as :mod:`tvbo.results.schema` prescribes, so they test the CLI itself: how each option reaches the
engine, that bad input ends with exit status 2 and ONE line on stderr and leaves no output file.
Names come from the real registries when they are importable (stand-ins otherwise), so the tests
hold both before and after the engine is integrated. Tests needing the real engine or the real
results/analysis modules skip when those are absent.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import xarray as xr

from tvbo import cli
from tvbo.results import schema

REPO = Path(__file__).resolve().parents[1]


def _importable(module: str, attr: str | None = None) -> bool:
    try:
        mod = importlib.import_module(module)
        return attr is None or getattr(mod, attr, None) is not None
    except ImportError:  # a partially integrated package: a dependency is still missing
        return False


HAVE_ENGINE = _importable("tvbo", "simulate") and _importable("tvbo.benchmarks", "names")
HAVE_IO = _importable("tvbo.results.io", "write_run")
HAVE_CAMPAIGN = _importable("tvbo.results.campaign", "merge_runs")
HAVE_ANALYSIS = _importable("tvbo.analysis.tables", "write_tables") and _importable(
    "tvbo.analysis.figures", "write_figures"
)


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """The names the CLI validates against: the real registries, or stand-ins before integration."""
    names: dict[str, list[str]] = {}
    for key, getter, standin in (
        ("benchmarks", "benchmark_names", ["ackley", "eggholder", "hartmann3"]),
        ("algorithms", "algorithm_names", ["gp-ucb"]),
        ("compute", "compute_models", ["counted", "measured", "polynomial"]),
    ):
        try:
            names[key] = list(getattr(cli, getter)())
        except (ImportError, AttributeError):  # not integrated yet
            monkeypatch.setattr(cli, getter, lambda standin=standin: list(standin))
            names[key] = list(standin)
    return names


def fake_run(benchmark: str, algorithm: str, seed: int, speed: float, n: int = 6) -> xr.Dataset:
    """A tiny run Dataset with every variable and attribute of the schema (values are arbitrary)."""
    rng = np.random.default_rng(seed)
    d, horizon = 2, 10.0
    t = np.sort(rng.uniform(0.0, horizon, n))
    grid = np.arange(0.0, horizon + 1.0, 1.0)
    data: dict[str, Any] = {}
    for name, (dims, units, long_name) in schema.ITERATION_VARIABLES.items():
        shape = (n, d) if dims == ("iteration", "dim") else (n,)
        values = t if name.startswith("t_") else rng.uniform(0.0, 1.0, shape)
        data[name] = (dims, values, {"units": units, "long_name": long_name})
    for name, (dims, units, long_name) in schema.TIME_VARIABLES.items():
        data[name] = (
            dims,
            rng.uniform(0.0, 1.0, grid.size),
            {"units": units, "long_name": long_name},
        )
    for name in ("average_regret", "time_integrated_regret", "n_iterations", "final_dataset_size"):
        data[name] = ((), float(rng.uniform()))
    attrs: dict[str, Any] = {name: "0" for name in schema.REQUIRED_ATTRIBUTES}
    attrs.update(horizon=horizon, warmup=2, cost=0.1, noise_var=0.01, dimension=d, n_iterations=n)
    attrs.update(config_json=json.dumps({"benchmark": benchmark}), compute_model="counted")
    ds = xr.Dataset(
        data, coords={"iteration": np.arange(n), "dim": np.arange(d), "time": grid}, attrs=attrs
    )
    return ds.expand_dims(benchmark=[benchmark], algorithm=[algorithm], seed=[seed], speed=[speed])


def _replace_simulation(monkeypatch: pytest.MonkeyPatch, simulate: Callable[..., Any]) -> None:
    """Make ``tvbo run`` call ``simulate(benchmark, algorithm, **options, progress=...)``: the
    CLI hands its checked options to :func:`tvbo.api.simulate_checked` (one check per process),
    replaced here by a function that unpacks them as :func:`tvbo.simulate`'s keywords."""
    import tvbo.api

    def simulate_checked(run: Any, *, progress: Any = None, **_: Any) -> Any:
        values = dict(run)
        return simulate(values.pop("benchmark"), values.pop("algorithm"), progress=progress,
                        **values)

    monkeypatch.setattr(tvbo.api, "simulate_checked", simulate_checked)


@pytest.fixture
def fake_simulate(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Replace ``tvbo.simulate`` by a recorder; returns the list of recorded calls."""
    calls: list[dict[str, Any]] = []

    def simulate(benchmark: str, algorithm: str, **kwargs: Any) -> xr.Dataset:
        calls.append({"benchmark": benchmark, "algorithm": algorithm, **kwargs})
        horizon = kwargs["horizon"] or 10.0
        if kwargs["progress"] is not None:
            for k, now in enumerate(np.linspace(0.0, horizon, 25)[1:], start=1):
                kwargs["progress"](float(now), horizon, k)
        return fake_run(benchmark, algorithm, kwargs["seed"], kwargs["speed"])

    _replace_simulation(monkeypatch, simulate)
    if not HAVE_IO:  # before integration: a plain netCDF writer stands in for the atomic one
        stand_in = type(sys)("tvbo.results.io")
        stand_in.write_run = lambda ds, path: (ds.to_netcdf(path), Path(path))[1]
        monkeypatch.setitem(sys.modules, "tvbo.results.io", stand_in)
    return calls


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Call ``cli.main`` in-process; returns (exit status, stdout, stderr)."""
    try:
        status = cli.main(argv)
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def base_args(registry: dict[str, list[str]], out: Path) -> list[str]:
    return [
        "run",
        "--benchmark",
        registry["benchmarks"][0],
        "--algorithm",
        registry["algorithms"][0],
        "--out",
        str(out),
    ]


# -- help -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ([], ["run", "list", "calibrate", "merge", "table", "figures"]),
        (["run"], ["--benchmark", "--speed", "--horizon", "--polynomial", "--algorithm-options"]),
        (["list"], ["benchmarks", "algorithms", "compute"]),
        (["calibrate"], ["--out", "--sizes", "--repeats"]),
        (["merge"], ["--out", "RUN.nc"]),
        (["table"], ["--outdir"]),
        (["figures"], ["--outdir"]),
        (["runs"], ["--out"]),
    ],
)
def test_help_lists_options(command: list[str], expected: list[str], capsys) -> None:
    status, out, _ = run_cli([*command, "--help"], capsys)
    assert status == 0
    for word in expected:
        assert word in out


# -- bad input: exit 2, one line, names the problem, no file, engine never called -----------------
@pytest.mark.parametrize(
    ("extra", "fragments"),
    [
        (["--speed", "0"], ["--speed", "> 0"]),
        (["--speed", "-2"], ["--speed", "-2"]),
        (["--speed", "nan"], ["--speed", "finite"]),
        (["--speed", "fast"], ["--speed", "fast"]),
        (["--horizon", "0"], ["--horizon", "> 0"]),
        (["--horizon", "-5"], ["--horizon"]),
        (["--cost", "-1"], ["--cost", ">= 0"]),
        (["--noise-var", "-0.5"], ["--noise-var", ">= 0"]),
        (["--warmup", "-1"], ["--warmup"]),
        (["--warmup", "1.5"], ["--warmup", "integer"]),
        (["--seed", "-3"], ["--seed"]),
        (["--time-grid-step", "0"], ["--time-grid-step"]),
        (["--max-iterations", "0"], ["--max-iterations", ">= 1"]),
        (["--stamp", "later"], ["--stamp", "sample", "decide"]),
        (["--cost-table", "nature"], ["--cost-table", "metronome", "icml"]),
        (["--algorithm-options", '{"beta": 2,'], ["--algorithm-options", "malformed JSON"]),
        (["--benchmark-options", "[1, 2]"], ["--benchmark-options", "JSON object"]),
        (["--compute", "polynomial", "--polynomial", "1,,2"], ["--polynomial"]),
        (["--compute", "polynomial", "--polynomial", "0.1,-2"], ["--polynomial", ">= 0"]),
        (["--polynomial", "0.1,1e-6"], ["--compute polynomial"]),
        (["--compute", "polynomial"], ["--polynomial A0,A1,..."]),
        (["--compute", "quantum"], ["quantum", "counted", "measured", "polynomial"]),
        (["--compute", "measured", "--profile", "laptop"], ["--profile", "--compute counted"]),
        (["--horizon", "5", "--time-grid-step", "10"], ["--time-grid-step", "--horizon"]),
    ],
)
def test_bad_run_arguments(extra, fragments, registry, fake_simulate, tmp_path, capsys) -> None:
    out = tmp_path / "run.nc"
    status, stdout, stderr = run_cli([*base_args(registry, out), *extra], capsys)
    assert status == 2
    assert stderr.count("\n") == 1 and stderr.startswith("tvbo: error: "), stderr
    assert "Traceback" not in stderr
    for fragment in fragments:
        assert fragment in stderr, (fragment, stderr)
    assert not out.exists() and list(tmp_path.iterdir()) == []
    assert fake_simulate == []


@pytest.mark.parametrize("kind", ["benchmark", "algorithm"])
def test_unknown_name_lists_valid_names(kind, registry, fake_simulate, tmp_path, capsys) -> None:
    out = tmp_path / "run.nc"
    argv = base_args(registry, out)
    argv[argv.index(f"--{kind}") + 1] = "no-such-thing"
    status, _, stderr = run_cli(argv, capsys)
    assert status == 2 and stderr.count("\n") == 1
    assert f"unknown {kind} 'no-such-thing'" in stderr
    for name in registry[f"{kind}s"]:
        assert name in stderr
    assert not out.exists() and fake_simulate == []


def test_engine_value_error_is_one_line(registry, monkeypatch, tmp_path, capsys) -> None:
    def simulate(*args: Any, **kwargs: Any) -> None:
        raise ValueError("profile 'pi5' not found\nvalid profiles: laptop, server")

    _replace_simulation(monkeypatch, simulate)
    out = tmp_path / "run.nc"
    status, _, stderr = run_cli([*base_args(registry, out), "--horizon", "9"], capsys)
    assert status == 2
    assert stderr == "tvbo: error: profile 'pi5' not found; valid profiles: laptop, server\n"
    assert not out.exists()


def test_missing_required_argument(capsys) -> None:
    status, _, stderr = run_cli(["run", "--benchmark", "ackley"], capsys)
    assert status == 2 and stderr.count("\n") == 1
    assert "--algorithm" in stderr and "--out" in stderr


def test_bad_input_in_a_real_process(tmp_path) -> None:
    """The console path: no traceback and one line even through ``python -m tvbo``."""
    out = tmp_path / "run.nc"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "tvbo", "run", "--benchmark", "x", "--algorithm", "y"]
        + ["--speed", "-1", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("tvbo: error: argument --speed: must be > 0, got -1")
    assert proc.stderr.count("\n") == 1 and proc.stdout == ""
    assert not out.exists()


# -- a good run: every option reaches the engine --------------------------------------------------
def test_run_passes_every_option(registry, fake_simulate, tmp_path, capsys) -> None:
    out = tmp_path / "sub" / "run.nc"
    argv = base_args(registry, out) + [
        "--seed", "7", "--compute", "polynomial", "--speed", "2.5", "--horizon", "30",
        "--warmup", "4", "--polynomial", "0.5,0,1e-6", "--cost-table", "icml", "--cost", "0",
        "--noise-var", "0.02", "--time-grid-step", "0.5", "--stamp", "decide", "--lookahead",
        "--benchmark-options", '{"oracle_grid_step": 2}',
        "--algorithm-options", '{"beta": {"kind": "const", "value": 2}}',
        "--max-iterations", "40", "--expert-cost", "0.3", "--expert-noise-var", "0.05",
        "--threads", "2", "--cost-cv", "0.25",
    ]  # fmt: skip
    status, _, stderr = run_cli(argv, capsys)
    assert status == 0, stderr
    (call,) = fake_simulate
    progress = call.pop("progress")
    assert callable(progress)
    assert call == {
        "benchmark": registry["benchmarks"][0],
        "algorithm": registry["algorithms"][0],
        "seed": 7,
        "compute": "polynomial",
        "speed": 2.5,
        "horizon": 30.0,
        "warmup": 4,
        "profile": None,
        "polynomial": [0.5, 0.0, 1e-6],
        "cost_table": "icml",
        "cost": 0.0,
        "noise_var": 0.02,
        "cost_cv": 0.25,
        "time_grid_step": 0.5,
        "stamp": "decide",
        "lookahead": True,
        "benchmark_options": {"oracle_grid_step": 2},
        "algorithm_options": {"beta": {"kind": "const", "value": 2}},
        "max_iterations": 40,
        "expert_cost": 0.3,
        "expert_noise_var": 0.05,
        "oracle_table": None,
        "threads": 2,
        # sequential defaults of the parallel options (tvbo.sim.parallel)
        "evaluators": 1,
        "overlap": False,
        "pending": "hallucinate",
        "recommendation": None,
        "confirm_large": False,
    }
    ds = xr.load_dataset(out)
    assert int(ds["seed"].item()) == 7 and float(ds["speed"].item()) == 2.5
    # progress: a log (not a terminal) gets one line per 10 % of the horizon plus a summary
    # and, last, the run's final regrets (tvbo.cli._print_final_regrets)
    lines = stderr.splitlines()
    assert 3 <= len(lines) <= 13
    assert lines[-3] == f"{registry['benchmarks'][0]}/{registry['algorithms'][0]} seed 7: " + (
        "t = 30.0 / 30 s, 24 queries"
    )
    assert str(out) in lines[-2]
    assert lines[-1].startswith("final: average regret ")


def test_run_defaults_and_quiet(registry, fake_simulate, tmp_path, capsys) -> None:
    out = tmp_path / "run.nc"
    status, stdout, stderr = run_cli([*base_args(registry, out), "--quiet"], capsys)
    assert status == 0 and stderr == "" and stdout == ""
    (call,) = fake_simulate
    assert call["progress"] is None
    assert (call["seed"], call["compute"], call["speed"], call["horizon"]) == (
        0,
        "counted",
        1.0,
        None,
    )
    assert (call["warmup"], call["cost_table"], call["stamp"], call["lookahead"]) == (
        15, "metronome", "sample", False
    )  # fmt: skip
    assert call["algorithm_options"] is None and call["max_iterations"] is None
    assert out.is_file()


def test_progress_on_a_terminal_rewrites_one_line() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    progress = cli.Progress("ackley/gp-ucb seed 0", stream, interval=0.0)
    for k in range(1, 58):
        progress(k * 2.0, 600.0)
    progress.close("done")
    text = stream.getvalue()
    assert text.count("\n") == 2  # the final state and the summary
    assert text.count("\r") == 58
    assert "ackley/gp-ucb seed 0: t = 114.0 / 600 s, 57 queries\n" in text
    assert text.endswith("ackley/gp-ucb seed 0: done\n")


def test_progress_in_a_log_is_sparse() -> None:
    stream = io.StringIO()
    progress = cli.Progress("b/a seed 1", stream)
    for k in range(1, 1001):
        progress(k * 0.125, 125.0)
    progress.close("done")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 11  # one per tenth of the horizon, then the summary
    assert lines[0] == "b/a seed 1: t = 12.5 / 125 s, 100 queries"
    assert lines[-2] == "b/a seed 1: t = 125.0 / 125 s, 1000 queries"
    assert lines[-1] == "b/a seed 1: done"


def test_progress_in_a_log_ends_with_the_final_state() -> None:
    """A run that stops before the horizon (iteration cap) still logs where it stopped."""
    stream = io.StringIO()
    progress = cli.Progress("b/a seed 1", stream)
    for k in range(1, 8):
        progress(k * 1.0, 100.0, k)
    progress.close("done")
    assert stream.getvalue().splitlines() == [
        "b/a seed 1: t = 7.0 / 100 s, 7 queries",
        "b/a seed 1: done",
    ]


# -- list -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("what", ["benchmarks", "algorithms", "compute"])
def test_list_one_kind(what, registry, capsys) -> None:
    status, out, _ = run_cli(["list", what, "--names"], capsys)
    assert status == 0
    assert out.splitlines() == registry[what]
    status, out, _ = run_cli(["list", what], capsys)  # with description and [citation]
    assert status == 0
    assert [line.split()[0] for line in out.splitlines()] == registry[what]
    assert all(line.rstrip().endswith("]") for line in out.splitlines())


def test_list_all(registry, capsys) -> None:
    status, out, _ = run_cli(["list"], capsys)
    assert status == 0
    lines = out.splitlines()
    for kind in ("benchmarks", "algorithms", "compute"):
        start = lines.index(f"{kind}:")
        block = lines[start + 1 : start + 1 + len(registry[kind])]
        assert [line[:2] + line.split()[0] for line in block] == [
            f"  {n}" for n in registry[kind]
        ]


def test_list_unknown_kind(capsys) -> None:
    status, _, stderr = run_cli(["list", "datasets"], capsys)
    assert status == 2 and stderr.count("\n") == 1
    assert "datasets" in stderr and "benchmarks" in stderr


# -- calibrate and the campaign steps -------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["calibrate", "--out", "p.yaml", "--sizes", "32", "0"], "--sizes"),
        (["calibrate", "--out", "p.yaml", "--repeats", "0"], "--repeats"),
        (["merge", "missing.nc", "--out", "c.nc"], "no such file: missing.nc"),
        (["table", "missing.nc", "--outdir", "t"], "no such file: missing.nc"),
        (["figures", "missing.nc", "--outdir", "f"], "no such file: missing.nc"),
        (["runs", "missing.nc", "--out", "r.csv"], "no such file: missing.nc"),
    ],
)
def test_step_errors(argv, fragment, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    status, _, stderr = run_cli(argv, capsys)
    assert status == 2 and stderr.count("\n") == 1
    assert fragment in stderr
    assert list(tmp_path.iterdir()) == []


def test_calibrate_passes_arguments(monkeypatch, tmp_path, capsys) -> None:
    calls: list[tuple[Path, dict[str, Any]]] = []

    def calibrate(out: Path, **kwargs: Any) -> Path:
        calls.append((out, kwargs))
        out.write_text("flop: 1e-9\n")
        return out

    stand_in = type(sys)("tvbo.sim.calibrate")
    stand_in.calibrate = calibrate
    monkeypatch.setitem(sys.modules, "tvbo.sim.calibrate", stand_in)
    out = tmp_path / "profiles" / "here.yaml"
    status, stdout, _ = run_cli(
        ["calibrate", "--out", str(out), "--sizes", "16", "48", "--repeats", "2"], capsys
    )
    assert status == 0 and stdout.strip() == str(out)
    assert calls == [(out, {"sizes": (16, 48), "repeats": 2, "name": None})]


@pytest.mark.parametrize("target", ["64", "64=", "n=1.0", "64:1.0"])
def test_calibrate_emulate_rejects_malformed_targets(target, tmp_path, capsys) -> None:
    out = tmp_path / "p.yaml"
    status, _, stderr = run_cli(["calibrate", "--out", str(out), "--emulate", target], capsys)
    assert status == 2 and "N=SECONDS" in stderr and not out.exists()


@pytest.mark.skipif(
    not (HAVE_IO and HAVE_CAMPAIGN and HAVE_ANALYSIS), reason="results/analysis not integrated"
)
def test_merge_table_figures_chain(registry, fake_simulate, tmp_path, capsys) -> None:
    bench, algo = registry["benchmarks"][0], registry["algorithms"][0]
    runs = []
    for seed in (0, 1, 2):
        out = tmp_path / f"seed{seed}.nc"
        argv = [*base_args(registry, out), "--seed", str(seed), "--quiet"]
        assert run_cli(argv, capsys)[0] == 0
        runs.append(str(out))
    campaign = tmp_path / "campaign.nc"
    assert run_cli(["merge", *runs, "--out", str(campaign)], capsys)[0] == 0
    merged = xr.load_dataset(campaign)
    assert sorted(int(s) for s in merged["seed"].values) == [0, 1, 2]
    status, out, _ = run_cli(["table", str(campaign), "--outdir", str(tmp_path / "t")], capsys)
    assert status == 0
    for name in ("average_regret.csv", "average_regret.md", "time_integrated_regret.csv"):
        assert (tmp_path / "t" / name).stat().st_size > 0
    assert bench in (tmp_path / "t" / "average_regret.md").read_text()
    status, out, _ = run_cli(["figures", str(campaign), "--outdir", str(tmp_path / "f")], capsys)
    assert status == 0
    for name in ("regret_vs_time.png", "dataset_size_vs_time.png"):
        assert (tmp_path / "f" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    status, out, _ = run_cli(["runs", str(campaign), "--out", str(tmp_path / "runs.csv")], capsys)
    assert status == 0
    rows = (tmp_path / "runs.csv").read_text().splitlines()
    assert len(rows) == 4 and algo in rows[1]


@pytest.mark.skipif(not HAVE_ENGINE, reason="the simulation engine is not integrated yet")
def test_real_engine_short_run(tmp_path, capsys) -> None:
    out = tmp_path / "run.nc"
    bench = "ackley" if "ackley" in cli.benchmark_names() else cli.benchmark_names()[0]
    argv = ["run", "--benchmark", bench, "--algorithm", cli.algorithm_names()[0], "--seed", "1"]
    argv += ["--horizon", "20", "--warmup", "3", "--max-iterations", "8", "--out", str(out)]
    status, _, stderr = run_cli(argv, capsys)
    assert status == 0, stderr
    ds = xr.load_dataset(out)
    assert ds.sizes["iteration"] <= 8
    for key in schema.RUN_KEYS:
        assert key in ds.coords
    assert str(ds["benchmark"].values[0]) == bench
    assert list(tmp_path.iterdir()) == [out]  # no temporary file left behind
