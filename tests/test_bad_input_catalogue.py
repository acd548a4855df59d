"""The bad-input catalogue of issue 24: every case of the issue and many more, through the
command line, the API, the config validator and the workflow.

Each CLI case asserts exit status 2, ONE line on stderr (``tvbo: error: ...``) naming the field
or path and the fix (the fragments), no traceback, nothing written or left behind and no input
changed (a checksum of every file of the workspace before and after). Runs are refused BEFORE
any work: the benchmark is never built (``no_work``) except for the real-data cases, whose
benchmark factory is what reports the missing prepared file.
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import xarray as xr
import yaml

import tvbo.api
from tests.test_fault_injection import one_line_error
from tvbo import cli
from tvbo.config_check import ConfigError, apply_command_line_overrides, check_config

REPO = Path(__file__).resolve().parents[1]
BASE_CONFIG = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
RUN = ["run", "--benchmark", "eggholder", "--algorithm", "gp-ucb", "--horizon", "3",
       "--warmup", "2", "--max-iterations", "4", "--quiet"]
#: the same without horizon, warm-up and cap, for the cases that set them
RUN0 = ["run", "--benchmark", "eggholder", "--algorithm", "gp-ucb", "--quiet"]


# -- the workspace: a run file, a campaign, a few traps; checksummed around every case ----------
@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("catalogue")
    cwd = Path.cwd()
    os.chdir(root)
    try:
        assert cli.main([*RUN, "--out", "run.nc"]) == 0
        assert cli.main(["merge", "run.nc", "--out", "campaign.nc"]) == 0
    finally:
        os.chdir(cwd)
    os.link(root / "run.nc", root / "hardlink.nc")
    (root / "symlink.nc").symlink_to(root / "run.nc")
    (root / "plain.txt").write_text("a regular file\n")
    (root / "truncated.nc").write_bytes((root / "campaign.nc").read_bytes()[:3000])
    (root / "folder").mkdir()
    # the spec's BOLT [B] campaign runs on the offline Temperature day (its results folder)
    (root / "res" / "bolt_paper_offline-day").mkdir(parents=True)
    shutil.copy(root / "truncated.nc", root / "res" / "bolt_paper_offline-day" / "campaign.nc")
    coefficients = {"flop": 1e-9, "kernel": 0.0, "call": 1e-4, "step": 0.0}
    (root / "missing.yaml").write_text(yaml.safe_dump(
        {"name": "m", "coefficients": {"flop": 1e-9}}))
    (root / "wordy.yaml").write_text(yaml.safe_dump(
        {"name": "w", "coefficients": {**coefficients, "call": "fast"}}))
    xr.Dataset({"x": ("i", [1.0])}).to_netcdf(root / "noregret.nc")  # netCDF, no campaign
    (root / "yaml11.yaml").write_text(
        "name: y\ncoefficients: {flop: 1e-11, kernel: 0.0, call: 1.0e-4, step: 0.0}\n")
    return root


def _snapshot(root: Path) -> dict[str, str]:
    """Every path under ``root`` -> checksum of its bytes ('dir' for a folder)."""
    out = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink() or path.is_file():
            out[key] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            out[key] = "dir"
    return out


@pytest.fixture
def no_work(monkeypatch):
    """Fail if a run gets as far as building its benchmark (a check came after the work)."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("bad input reached the benchmark: no check before the work")

    monkeypatch.setattr(tvbo.api, "make_benchmark", refuse)


LONG = "a" * 300 + ".nc"

#: (argv, fragments of the one line); the issue's cases first, then ours
CLI_CASES: list[tuple[list[str], list[str]]] = [
    # -- item 1: output paths, before any work --
    ([*RUN, "--out", "plain.txt/run.nc"], ["plain.txt", "is a file, not a folder"]),
    ([*RUN, "--out", "folder"], ["--out 'folder'", "existing folder", "folder/out.nc"]),
    ([*RUN, "--out", ""], ["--out is empty", "file name"]),
    ([*RUN, "--out", LONG], ["--out", "303 bytes", "shorter name"]),
    ([*RUN, "--out", "/proc/run.nc"], ["--out '/proc/run.nc'", "cannot write", "/proc"]),
    ([*RUN, "--out", "/proc/new/deeper/run.nc"], ["cannot write", "writable folder"]),
    (["run-many", *RUN[1:], "--seeds", "0", "1", "--out", "a.nc", "plain.txt/b.nc"],
     ["plain.txt", "not a folder"]),
    (["run-many", *RUN[1:], "--seeds", "0", "1", "--out", "a.nc", "./a.nc"],
     ["--out repeats a.nc"]),
    (["run-many", *RUN[1:], "--seeds", "0", "1", "--out", "a.nc", "folder/../a.nc"],
     ["same file twice", "a.nc"]),
    (["run-many", *RUN[1:], "--seeds", "0", "1", "--out", "a.nc", "b.txt"], ["b.txt", ".nc"]),
    (["run-many", *RUN[1:], "--seeds", "0", "1", "--out", "a.nc"], ["one file per seed"]),
    (["merge", "run.nc", "--out", "plain.txt/c.nc"], ["plain.txt", "not a folder"]),
    (["merge", "run.nc", "--out", "folder"], ["existing folder"]),
    (["merge", "run.nc", "--out", ""], ["--out is empty"]),
    (["merge", "run.nc", "--out", LONG], ["shorter name"]),
    (["figures", "campaign.nc", "--outdir", "plain.txt"], ["--outdir", "existing file"]),
    (["figures", "campaign.nc", "--outdir", "plain.txt/figs"], ["plain.txt", "not a folder"]),
    (["figures", "campaign.nc", "--outdir", "/proc/figs"], ["cannot write"]),
    (["figures", "campaign.nc", "--outdir", ""], ["--outdir is empty"]),
    (["table", "campaign.nc", "--outdir", "plain.txt"], ["existing file"]),
    (["compare", "campaign.nc", "--outdir", "plain.txt/x"], ["not a folder"]),
    (["fit-health", "campaign.nc", "--outdir", "plain.txt"], ["existing file"]),
    (["whatif", "campaign.nc", "--outdir", "plain.txt"], ["existing file"]),
    (["parallel-whatif", "campaign.nc", "--outdir", "plain.txt"], ["existing file"]),
    (["paper-figures", "campaign.nc", "--paper", "boke", "--outdir", "plain.txt"],
     ["existing file"]),
    (["theory", "--outdir", "plain.txt"], ["existing file"]),
    # -- items 10, 11: a paper's figures without its algorithm; a file that is no campaign --
    (["paper-figures", "campaign.nc", "--paper", "sparq", "--outdir", "sp"],
     ["campaign.nc", "the sparq figures", "sparq-gp-ucb", "no run of it"]),
    (["paper-figures", "campaign.nc", "--paper", "boke", "--outdir", "bk"],
     ["boke or boke-plus", "gp-ucb"]),
    (["table", "noregret.nc", "--outdir", "t"],
     ["noregret.nc", "no 'average_regret'", "tvbo merge"]),
    (["runs", "campaign.nc", "--out", "folder"], ["existing folder"]),
    (["runs", "campaign.nc", "--out", "plain.txt/runs.csv"], ["not a folder"]),
    (["runs", "campaign.nc", "--out", ""], ["--out is empty"]),
    (["calibrate", "--out", "profile.txt", "--emulate", "64=1.0"], ["profile.txt", ".yaml"]),
    (["calibrate", "--out", "folder", "--emulate", "64=1.0"], ["existing folder"]),
    (["oracle", "--benchmark", "eggholder", "--out", "plain.txt/o.npz"], ["not a folder"]),
    (["reproduce", "--out", "plain.txt/r.md"], ["not a folder"]),
    # -- item 2: an output that is an input --
    (["merge", "run.nc", "--out", "run.nc"], ["--out 'run.nc'", "is the input", "destroy"]),
    (["merge", "run.nc", "--out", "./run.nc"], ["is the input"]),
    (["merge", "run.nc", "--out", "hardlink.nc"], ["is the input"]),
    (["merge", "run.nc", "--out", "symlink.nc"], ["is the input"]),
    (["merge", "symlink.nc", "--out", "run.nc"], ["is the input"]),
    # -- item 3: resources --
    ([*RUN0, "--horizon", "1e12", "--out", "x.nc"], ["memory", "TiB", "--confirm-large"]),
    ([*RUN0, "--horizon", "1e7", "--out", "x.nc"], ["memory", "GiB", "--confirm-large"]),
    ([*RUN, "--time-grid-step", "1e-9", "--out", "x.nc"],
     ["memory", "--time-grid-step 1e-09", "--confirm-large"]),
    ([*RUN, "--benchmark-options", '{"oracle_grid_step": 1e-9}', "--out", "x.nc"],
     ["oracle grid", "--confirm-large"]),
    ([*RUN, "--threads", "100000", "--out", "x.nc"], ["--threads 100000", "cores", "at most"]),
    (["run-many", *RUN0[1:], "--seeds", "0", "--horizon", "1e12", "--out", "x.nc"],
     ["memory", "--confirm-large"]),
    # -- item 5: non-finite algorithm options --
    ([*RUN, "--algorithm-options", '{"beta": NaN}', "--out", "x.nc"], ["beta", "finite"]),
    ([*RUN, "--algorithm-options", '{"beta": 1e999}', "--out", "x.nc"], ["beta", "finite"]),
    ([*RUN, "--algorithm-options", '{"beta": -Infinity}', "--out", "x.nc"], ["beta", "finite"]),
    ([*RUN, "--algorithm-options", '{"beta": {"kind": "log", "c1": NaN}}', "--out", "x.nc"],
     ["c1", "finite"]),
    # -- item 6: hardware profiles --
    ([*RUN, "--profile", "missing.yaml", "--out", "x.nc"],
     ["--profile", "kernel, call, step missing"]),
    ([*RUN, "--profile", "wordy.yaml", "--out", "x.nc"], ["'call'", "YAML read it as the string"]),
    # -- item 8: untyped errors --
    ([*RUN, "--algorithm-options", '{"surrogate": 5}', "--out", "x.nc"],
     ["surrogate", "part name or a mapping", "5"]),
    ([*RUN, "--algorithm-options", '{"acquisition": [1]}', "--out", "x.nc"],
     ["acquisition", "part name or a mapping"]),
    (["reproduce", "--spec", str(REPO / "config" / "reproduction.yaml"), "--results", "res",
      "--out", "report.md"], ["campaign.nc", "truncated or corrupt", "write it again"]),
    (["figures", "truncated.nc", "--outdir", "figs"], ["truncated.nc", "truncated or corrupt"]),
    (["table", "truncated.nc", "--outdir", "tables"], ["truncated.nc", "truncated or corrupt"]),
    # -- item 10: silent nonsense --
    ([*RUN0, "--warmup", "5", "--max-iterations", "3", "--out", "x.nc"],
     ["--warmup 5 >= --max-iterations 3", "first query"]),
    ([*RUN0, "--warmup", "4", "--max-iterations", "4", "--out", "x.nc"], ["--warmup 4"]),
    ([*RUN, "--speed", "1e-300", "--out", "x.nc"], ["--speed 1e-300", "outside"]),
    ([*RUN, "--speed", "1e300", "--out", "x.nc"], ["--speed 1e+300", "outside"]),
    ([*RUN, "--out", "o.txt"], ["o.txt", "netCDF", ".nc", "o.nc"]),
    (["merge", "run.nc", "--out", "campaign.csv"], ["campaign.csv", ".nc"]),
    ([*RUN, "--seed", "1", "--seed", "2", "--out", "x.nc"], ["--seed is given twice"]),
    ([*RUN, "--out", "x.nc", "--out", "y.nc"], ["--out is given twice"]),
    ([*RUN, "--horizon", "5", "--out", "x.nc"], ["--horizon is given twice"]),
    ([*RUN, "--quiet", "--out", "x.nc"], ["--quiet is given twice"]),
    ([*RUN, "--algorithm-options", '{"beta": 1, "beta": 2}', "--out", "x.nc"],
     ["JSON key 'beta' is given twice"]),
    ([*RUN, "--benchmark-options", '{"a": {"b": 1, "b": 2}}', "--out", "x.nc"],
     ["JSON key 'b' is given twice"]),
    # -- more of our own --
    ([*RUN0, "--horizon", "nan", "--out", "x.nc"], ["--horizon", "finite"]),
    ([*RUN0, "--horizon", "-1", "--out", "x.nc"], ["--horizon", "> 0"]),
    ([*RUN, "--threads", "0", "--out", "x.nc"], ["--threads", ">= 1"]),
    ([*RUN, "--algorithm-options", "{beta: 2}", "--out", "x.nc"], ["malformed JSON"]),
    ([*RUN, "--algorithm-options", "[1, 2]", "--out", "x.nc"], ["JSON object"]),
    (["merge", "nothere.nc", "--out", "c.nc"], ["no such file", "nothere.nc"]),
    (["figures", "nothere.nc", "--outdir", "figs"], ["no such file"]),
]


@pytest.mark.parametrize(("argv", "words"), CLI_CASES,
                         ids=[" ".join(a[:1] + a[-3:])[:70] for a, _ in CLI_CASES])
def test_cli_refuses_with_one_line(argv, words, workspace, monkeypatch, capsys, no_work) -> None:
    monkeypatch.chdir(workspace)
    before = _snapshot(workspace)
    line = one_line_error(capsys, argv)  # exit 2, one line, no traceback
    for word in words:
        assert word in line, (word, line)
    assert _snapshot(workspace) == before  # nothing written, nothing left, no input changed


@pytest.mark.parametrize(("name", "options", "words"), [
    ("temperature", [], ["prepare-intel", "snakemake"]),
    ("ozone-sensors", [], ["prepare-ozone", "snakemake"]),
    # item 11: a corrupt prepared field names the file and the command, not xarray's text
    ("temperature", ["--benchmark-options", '{"path": "plain.txt"}'],
     ["'plain.txt' is not a readable prepared Intel", "prepare-intel"]),
    ("ozone", ["--benchmark-options", '{"path": "truncated.nc"}'],
     ["'truncated.nc' is not a readable prepared ozone", "prepare-ozone"]),
])
def test_real_data_without_prepared_data_names_the_command(name, options, words, workspace,
                                                           monkeypatch, capsys) -> None:
    """Item 7: a new user's first real-data run says which command prepares the data."""
    monkeypatch.chdir(workspace)
    before = _snapshot(workspace)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run", "--benchmark", name, "--algorithm", "gp-ucb", "--quiet", *options,
                  "--out", "x.nc"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert all(word in err for word in words), err
    assert _snapshot(workspace) == before


def test_profile_yaml11_exponent_is_a_number(workspace) -> None:
    """Item 6: ``flop: 1e-11`` is a string to YAML 1.1; it is read as the number it spells."""
    from tvbo.sim.profiles import load_profile

    profile = load_profile(workspace / "yaml11.yaml")
    assert profile.coefficients["flop"] == 1e-11


def test_broken_pipe_is_not_a_traceback() -> None:
    """Item 8: ``tvbo list | head -1`` ends quietly (no BrokenPipeError traceback)."""
    script = (f"{sys.executable} -c 'import sys; from tvbo.cli import main; "
              "sys.exit(main([\"list\"] * 1))' | head -c 1 >/dev/null; "
              f"for i in 1 2 3; do {sys.executable} -m tvbo list; done | head -c 1 >/dev/null")
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


# -- the API ---------------------------------------------------------------------------------------
NAN, INF = math.nan, math.inf
API_CASES: list[tuple[tuple, dict[str, Any], list[str]]] = [
    ((123, "gp-ucb"), {}, ["benchmark must be a benchmark name", "123"]),
    (("eggholder", 7), {}, ["algorithm must be an algorithm name", "7"]),
    (("eggholder", "gp-ucb"), {"horizon": 1e12}, ["memory", "confirm_large"]),
    (("eggholder", "gp-ucb"), {"time_grid_step": 1e-9}, ["memory", "time_grid_step"]),
    (("eggholder", "gp-ucb"), {"threads": 100000}, ["threads 100000", "cores"]),
    (("eggholder", "gp-ucb"), {"algorithm_options": {"surrogate": 5}}, ["surrogate"]),
    (("eggholder", "gp-ucb"), {"algorithm_options": {"beta": NAN}}, ["beta", "finite"]),
    (("eggholder", "gp-ucb"), {"algorithm_options": {"beta": INF}}, ["beta", "finite"]),
    (("eggholder", "gp-ucb"), {"speed": 1e-300}, ["speed", "outside"]),
    (("eggholder", "gp-ucb"), {"warmup": 5, "max_iterations": 3}, ["warmup 5", "max_iterations"]),
    (("eggholder", "gp-ucb"), {"confirm_large": "yes"}, ["confirm_large", "true or false"]),
]


@pytest.mark.parametrize(("args", "kwargs", "words"), API_CASES,
                         ids=[f"{a}-{k}"[:60] for a, k, _ in API_CASES])
def test_api_raises_value_error_before_work(args, kwargs, words, no_work) -> None:
    with pytest.raises(ValueError) as info:
        tvbo.api.simulate(*args, **kwargs)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message, (word, message)


@pytest.mark.parametrize("options", [{"expert_cost": 0.5}, {"expert_noise_var": 0.1}])
def test_api_warns_of_expert_options_no_part_uses(options, no_work) -> None:
    """Item 10: expert options given to an algorithm without an expert are no longer silently
    ignored (a warning: a SparQ campaign passes them to every algorithm it compares; the config
    validator refuses them when no algorithm of the campaign asks the expert)."""
    with pytest.warns(UserWarning, match="asks none"), pytest.raises(AssertionError):
        tvbo.api.simulate("eggholder", "gp-ucb", **options)


def test_api_allows_a_large_run_when_confirmed(no_work) -> None:
    """The refusal's flag works: with confirm_large the checks pass and the work starts."""
    with pytest.raises(AssertionError, match="reached the benchmark"):
        tvbo.api.simulate("eggholder", "gp-ucb", time_grid_step=1e-9, confirm_large=True)


# -- the config validator (what the workflow runs at parse time) ----------------------------------
def _config(**edit: Any) -> dict[str, Any]:
    cfg = yaml.safe_load(yaml.safe_dump(BASE_CONFIG))
    cfg.update(edit)
    return cfg


CONFIG_CASES: list[tuple[dict[str, Any], list[str]]] = [
    ({"algorithm_options": {"gp-ucb": {"beta": NAN}}},
     ["algorithm_options.gp-ucb.beta = .nan", "finite"]),
    ({"algorithm_options": {"gp-ucb": {"beta": INF}}},
     ["algorithm_options.gp-ucb.beta = .inf", "finite"]),
    ({"algorithm_options": {"gp-ucb": {"surrogate": 5}}},
     ["algorithm_options.gp-ucb.surrogate = 5", "part name or a mapping"]),
    ({"horizon": "1.0e12"}, ["horizon", "YAML read it as a string", "1.0e+12"]),
    ({"paper_figures": ["sparq"]}, ["paper_figures", "sparq-gp-ucb", "gp-ucb"]),
    ({"time_grid_step": "5e-3"}, ["time_grid_step", "YAML read it as a string"]),
    ({"horizon": 1e12}, ["memory", "confirm_large"]),
    ({"time_grid_step": 1e-9}, ["memory", "time_grid_step"]),
    ({"benchmark_options": {"ackley": {"options": {"oracle_grid_step": 1e-9}}}},
     ["benchmark 'ackley'", "oracle grid", "confirm_large"]),
    ({"warmup": 100, "max_iterations": 100}, ["warmup 100 >= max_iterations 100"]),
    ({"speeds": [1.0, 1e-300]}, ["speeds[1]", "outside"]),
    ({"profile": "missing.yaml"}, ["profile", "missing"]),
    ({"lookahead": "true"}, ["lookahead", "'true' is not of type 'boolean'"]),
    ({"expert_cost": 0.5}, ["expert_cost", "no algorithm of the campaign", "sparq-gp-ucb"]),
]


@pytest.mark.parametrize(("edit", "words"), CONFIG_CASES, ids=[str(e)[:60] for e, _ in
                                                                CONFIG_CASES])
def test_config_validator_names_the_field(edit, words, workspace, monkeypatch) -> None:
    monkeypatch.chdir(workspace)
    with pytest.raises(ConfigError) as info:
        check_config(_config(**edit))
    message = str(info.value)
    assert "\n" not in message and message.startswith("config: ")
    for word in words:
        assert word in message, (word, message)


def test_snakemake_command_line_booleans_read_as_yaml() -> None:
    """Item 4: the values of ``snakemake --config`` pass Snakemake's own parser (which leaves
    'true' a string) and are then read as YAML by the workflow's validator, as by ``tvbo
    check-config``; the printed fix of a large grid works as printed."""
    from snakemake.cli import parse_config

    cfg = _config(seeds=list(range(6000)))
    with pytest.raises(ConfigError) as info:
        check_config(yaml.safe_load(yaml.safe_dump(cfg)), options=False)
    printed = str(info.value).split("--config ")[1].split()[0]
    assert printed == "confirm_large=true"
    overrides = parse_config([printed, "lookahead=true", "max_iterations=50", "profile=null"])
    assert overrides["confirm_large"] == "true"  # Snakemake's reading: a string
    apply_command_line_overrides(cfg, overrides)
    assert cfg["confirm_large"] is True and cfg["lookahead"] is True
    assert cfg["max_iterations"] == 50 and cfg["profile"] is None
    check_config(cfg, options=False)  # the printed fix works


def test_workflow_validator_reads_command_line_booleans(tmp_path) -> None:
    """Item 4 through the real workflow: `--config lookahead=true` is accepted (it was refused
    as the string 'true'), and a bad value stops Snakemake (its own status 1) with one line."""
    from tests.workflow.test_workflow import snakemake

    good = snakemake(tmp_path, BASE_CONFIG, "-n", "--cores", "1", "--config", "lookahead=true",
                     "confirm_large=true")
    assert good.returncode == 0, good.stderr[-2000:]
    bad = snakemake(tmp_path, BASE_CONFIG, "-n", "--cores", "1", "--config",
                    "time_grid_step=1e-9")
    assert bad.returncode == 1
    assert "Traceback" not in bad.stderr
    assert "time_grid_step" in bad.stderr and "confirm_large" in bad.stderr, bad.stderr[-2000:]
