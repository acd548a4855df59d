"""A catalogue of bad campaign configs: each is rejected by the ONE shared validator
(:func:`tvbo.config_check.check_config`) with one line naming the field; every shipped config
passes. A few go through the real ``snakemake -n`` (the workflow uses the same validator and stops
before any job) and through ``tvbo check-config`` (exit status 2, one line on stderr).
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tvbo import cli
from tvbo.config_check import (
    LARGE_GRID_RUNS,
    SEED_LIMIT,
    ConfigError,
    check_config,
    estimate_wall,
    load_config_files,
    load_yaml_file,
)

REPO = Path(__file__).resolve().parents[1]
BASE = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
NAN, INF = float("nan"), float("inf")


def merged(edit: dict[str, Any]) -> dict[str, Any]:
    cfg = copy.deepcopy(BASE)
    cfg.update(copy.deepcopy(edit))
    return cfg


#: (edit of .test/config.yaml, fragments the one-line message must contain)
BAD: list[tuple[dict[str, Any], list[str]]] = [
    # -- item 1: values YAML lets through --
    ({"horizon": NAN}, ["horizon", ".nan", "finite"]),
    ({"horizon": INF}, ["horizon", ".inf", "finite"]),
    ({"horizon": -INF}, ["horizon", "-.inf"]),
    ({"speeds": [1.0, NAN]}, ["speeds[1]", ".nan", "finite"]),
    ({"speeds": [INF]}, ["speeds[0]", ".inf"]),
    ({"time_grid_step": NAN}, ["time_grid_step", ".nan"]),
    ({"benchmark_options": {"ackley": {"cost": INF}}}, ["benchmark_options.ackley.cost", ".inf"]),
    ({"expert_cost": NAN}, ["expert_cost", ".nan"]),
    ({"polynomial": [0.1, INF], "compute": "polynomial"}, ["polynomial[1]", ".inf"]),
    ({"data": {"timeout": INF}}, ["data.timeout", ".inf"]),
    ({"profile": "pi5"}, ["profile 'pi5'", "unknown hardware profile", "reference-2core"]),
    ({"profile": "no/such/profile.yaml"}, ["profile 'no/such/profile.yaml'", "not found"]),
    ({"profile": ""}, ["profile", "non-empty"]),
    ({"seeds": [2**70]}, ["seeds[0]", str(2**70), "2**63"]),
    ({"seeds": [0, SEED_LIMIT]}, ["seeds[1]", str(SEED_LIMIT), "int64"]),
    # -- options of the parts, built at parse time --
    ({"algorithm_options": {"gp-ucb": {"betta": 2}}},
     ["algorithm_options.gp-ucb.betta", "unknown option 'betta'"]),
    ({"algorithm_options": {"gp-ucb": {"beta": "a"}}},
     ["algorithm_options.gp-ucb.beta = 'a'", "unknown beta schedule", "constant"]),
    ({"algorithm_options": {"gp-ucb": {"beta": -1}}},
     ["algorithm_options.gp-ucb.beta = -1", "> 0"]),
    ({"algorithms": ["bolt"], "algorithm_options": {"bolt": {"surrogate": {"prior": "x"}}}},
     ["algorithm_options.bolt.surrogate.prior = 'x'"]),
    ({"algorithm_options": {"gp-ucb": {"surrogate": {"kind": "nope"}}}},
     ["algorithm_options.gp-ucb", "unknown surrogate 'nope'", "weighted-gp"]),
    ({"algorithms": ["gp-ucb", "bolt-fifo"],
      "algorithm_options": {"bolt-fifo": {"preset": "bolt", "removal": "newest-first"}}},
     ["algorithm_options.bolt-fifo", "newest-first"]),
    ({"benchmark_options": {"ackley": {"options": {"oracle_grid_stp": 2}}}},
     ["benchmark_options.ackley.options.oracle_grid_stp", "unknown option", "oracle_grid_step"]),
    ({"benchmark_options": {"ackley": {"options": {"oracle_grid_step": -1}}}},
     ["benchmark_options.ackley.options.oracle_grid_step = -1", "> 0"]),
    ({"benchmarks": ["wlan"], "benchmark_options": {"wlan": {"options": {"scenario_sed": 1}}}},
     ["benchmark_options.wlan.options.scenario_sed", "scenario_seed"]),
    ({"benchmarks": ["temperature"],
      "benchmark_options": {"temperature": {"options": {"idw_pwr": 2}}}},
     ["benchmark_options.temperature.options.idw_pwr", "idw_power"]),
    ({"benchmark_options": {"ackley": {"options": {"noise_protocol": "loud"}}}},
     ["benchmark_options.ackley.options.noise_protocol", "'loud'", "table"]),
    # -- unknown keys: the key, the closest names, the README --
    ({"seedz": [0]}, ["unknown key 'seedz'", "did you mean 'seeds'", "config/README.md"]),
    ({"horizont": 5}, ["unknown key 'horizont'", "'horizon'"]),
    ({"benchmark_options": {"ackley": {"costs": 1}}},
     ["unknown key 'costs' in benchmark_options.ackley", "'cost'"]),
    ({"data": {"intel": {"bin_minute": 5}}}, ["unknown key 'bin_minute' in data.intel",
                                              "'bin_minutes'"]),
    ({"zzzz": 1}, ["unknown key 'zzzz'", "valid keys", "campaign", "config/README.md"]),
    # -- schema: types and ranges, one line naming the path --
    ({"speeds": [1.0, 0]}, ["speeds[1]", "less than or equal to the minimum of 0"]),
    ({"warmup": -1}, ["warmup", "-1 is less than the minimum of 0"]),
    ({"warmup": "many"}, ["warmup", "not of type 'integer'"]),
    ({"compute": "quantum"}, ["compute", "'quantum' is not one of"]),
    ({"seeds": [0, 0]}, ["seeds", "non-unique"]),
    ({"seeds": [1.5]}, ["seeds[0]", "not of type 'integer'"]),
    ({"campaign": "a/b"}, ["campaign", "does not match"]),
    ({"algorithm_options": {"gp-ucb": 3}}, ["algorithm_options.gp-ucb", "not of type 'object'"]),
    ({"max_iterations": 0}, ["max_iterations", "minimum of 1"]),
    ({"confirm_large": "yes"}, ["confirm_large", "not of type 'boolean'"]),
    ({"data": {"intel": {"bin_minutes": 0}}}, ["data.intel.bin_minutes", "minimum of 1"]),
    # -- cross-field checks (moved from common.smk and cli.py: they exist once) --
    ({"benchmarks": []}, ["empty grid", "'benchmarks'"]),
    ({"seeds": None}, ["empty grid", "'seeds'"]),
    ({"benchmarks": ["eggholdr"]}, ["unknown benchmark(s) 'eggholdr'", "eggholder"]),
    ({"algorithms": ["gp-ucb", "magic"]}, ["unknown algorithm(s) 'magic'", "gp-ucb"]),
    ({"algorithm_options": {"magic": {}}}, ["unknown algorithm(s) 'magic'"]),
    ({"algorithm_options": {"x": {"preset": "blot"}}}, ["unknown algorithm preset(s) 'blot'"]),
    ({"algorithm_options": {"gp-ucb": {"variant": "faithful"}}},
     ["algorithm_options 'gp-ucb'", "unknown variant 'faithful'", "paper, paper-ml, robust"]),
    ({"compute": "polynomial"}, ["polynomial", "must be set exactly when"]),
    ({"polynomial": [0.1]}, ["polynomial", "must be set exactly when", "counted"]),
    ({"compute": "measured", "profile": "reference-2core"},
     ["profile", "only to compute 'counted'", "measured"]),
    ({"time_grid_step": 50}, ["time_grid_step 50 exceeds horizon 20"]),
    ({"benchmark_options": {"ackley": {"noise_var": 0.1, "options": {"noise_protocol": "wdbo"}}}},
     ["benchmark_options.ackley sets both noise_var and noise_protocol"]),
    ({"paper_aliases": {"blot": "gp-ucb"}}, ["paper_aliases key 'blot'", "bolt-icml"]),
    ({"paper_aliases": {"bolt-icml": "bolt"}}, ["'bolt' is not in the campaign's algorithms"]),
    # -- item 2: a huge grid --
    ({"seeds": list(range(20_000))}, ["40,000 runs", "20000 seeds", "CPU-hours",
                                      "confirm_large=true"]),
]


def test_the_catalogue_is_large() -> None:
    assert len(BAD) >= 40


@pytest.mark.parametrize(("edit", "fragments"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_config_is_rejected_with_one_line(edit, fragments) -> None:
    with pytest.raises(ConfigError) as info:
        check_config(merged(edit))
    message = str(info.value)
    assert message.startswith("config: ") and "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def shipped_configs() -> list[Any]:
    """Every campaign config of config/, the overlay on the config it documents, and every
    campaign of the reproduction spec with its overrides."""
    out = []
    for path in sorted((REPO / "config").glob("*.yaml")):
        if path.name.endswith("_provenance.yaml"):  # a spec's regeneration record, no config
            continue
        data = yaml.safe_load(path.read_text())
        if path.name == "reproduction.yaml":  # a spec of campaigns, not a workflow config
            for name, entry in data["campaigns"].items():
                files = entry["config"] if isinstance(entry["config"], list) else [entry["config"]]
                out.append(pytest.param(f"reproduction:{name}", [f"config/{f}" for f in files],
                                        entry.get("overrides", {}),
                                        id=f"reproduction:{name}"))
                continue
        elif "campaign" not in data:  # an overlay: put after the config its header names
            out.append(pytest.param(path.name, ["config/wdbo_paper.yaml", f"config/{path.name}"],
                                    {"campaign": "overlay"}, id=path.name))
        else:
            out.append(pytest.param(path.name, [f"config/{path.name}"], {}, id=path.name))
    return out


@pytest.mark.parametrize(("name", "files", "overrides"), shipped_configs())
def test_every_shipped_config_passes(name, files, overrides, monkeypatch) -> None:
    monkeypatch.chdir(REPO)  # profile paths and data files are relative to the working directory
    cfg = load_config_files(files)
    cfg.update(overrides)
    checked = check_config(cfg)
    assert checked["benchmarks"] and checked["seeds"]


def test_defaults_are_those_snakemake_fills() -> None:
    """The validator fills the schema defaults exactly like snakemake.utils.validate did."""
    from snakemake.utils import validate

    for path in ("config/config.yaml", "config/bolt_paper.yaml", ".test/config.yaml"):
        raw = yaml.safe_load((REPO / path).read_text())
        theirs = copy.deepcopy(raw)
        validate(theirs, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
        assert check_config(copy.deepcopy(raw)) == theirs, path


def test_large_grid_is_accepted_when_confirmed() -> None:
    cfg = check_config(merged({"seeds": list(range(20_000)), "confirm_large": True}))
    assert len(cfg["seeds"]) == 20_000
    # at the threshold nothing is asked; the estimate scales with the horizon
    at = merged({"seeds": list(range(LARGE_GRID_RUNS // 2))})
    assert check_config(at)["confirm_large"] is False
    assert estimate_wall({**at, "horizon": 40}) == pytest.approx(2 * estimate_wall(at))


def test_yaml_syntax_error_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("campaign: x\nbenchmarks: [ackley\nalgorithms: [gp-ucb]\n")
    with pytest.raises(ConfigError) as info:
        load_yaml_file(path)
    message = str(info.value)
    assert str(path) in message and "line 3, column 11" in message and "line 2" in message
    assert "\n" not in message


def test_yaml_nan_and_overrides_are_parsed_like_snakemake(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(BASE) + "horizon: .nan\n")
    cfg = load_config_files([path], ["horizon=30", "seeds=[3, 4]", "confirm_large=true"])
    assert cfg["horizon"] == 30 and cfg["seeds"] == [3, 4] and cfg["confirm_large"] is True
    with pytest.raises(ConfigError, match=r"config: horizon: \.nan is not a finite number"):
        check_config(load_config_files([path]))


# -- the command line: tvbo check-config, tvbo run ------------------------------------------------
def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        status = cli.main(argv)
    except SystemExit as exc:
        status = exc.code
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize(
    ("text", "extra", "fragments"),
    [
        ("seeds: [0, .nan]\n", [], ["seeds[1]", ".nan"]),
        ("seedz: [0]\n", [], ["unknown key 'seedz'", "'seeds'"]),
        ("", ["seeds=[18446744073709551616]"], ["seeds[0]", "2**63"]),
        ("benchmarks: [ackley\n", [], ["line 2", "column 1", "YAML syntax error"]),
        ("", ["profile=pi5"], ["profile 'pi5'", "reference-2core"]),
        ("", [f"seeds={list(range(2600))}"], ["5,200 runs", "confirm_large=true"]),
    ],
)
def test_check_config_command_rejects(tmp_path, capsys, text, extra, fragments) -> None:
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(BASE) + text)
    before = sorted(tmp_path.iterdir())
    status, out, err = run_cli(["check-config", str(path), *(["--config", *extra] if extra
                                                              else [])], capsys)
    assert status == 2 and out == ""
    assert err.startswith("tvbo: error: ") and err.count("\n") == 1, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    assert sorted(tmp_path.iterdir()) == before  # nothing written


def test_check_config_command_accepts(capsys) -> None:
    status, out, err = run_cli(["check-config", str(REPO / "config" / "config.yaml")], capsys)
    assert status == 0 and err == ""
    assert "valid; campaign 'quickstart'" in out and "runs (3 benchmarks x" in out


def test_check_config_command_in_a_real_process(tmp_path) -> None:
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(BASE) + "horizon: .inf\n")
    proc = subprocess.run([sys.executable, "-m", "tvbo", "check-config", str(path)],
                          capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == ("tvbo: error: config: horizon: .inf is not a finite number; give a "
                           "finite value (see config/README.md)\n")


@pytest.mark.parametrize(
    ("extra", "fragments"),
    [
        (["--seed", str(2**63)], ["--seed", str(2**63), "2**63"]),
        (["--profile", "pi5"], ["--profile 'pi5'", "unknown hardware profile"]),
    ],
)
def test_run_shares_the_run_level_checks(tmp_path, capsys, extra, fragments) -> None:
    out = tmp_path / "run.nc"
    status, _, err = run_cli(["run", "--benchmark", "ackley", "--algorithm", "gp-ucb",
                              "--out", str(out), *extra], capsys)
    assert status == 2 and err.count("\n") == 1
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    assert not out.exists()


# -- the workflow uses the same validator and stops before any job (slow: real snakemake) --------
def snakemake_dry_run(workdir: Path, config_text: str, *args: str):
    path = workdir / "study.yaml"
    path.write_text(config_text)
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "workflow/Snakefile"), "--directory",
           str(workdir), "--configfile", str(path), "-n", "--cores", "1", *args]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO),
                                                        os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=workdir, timeout=300)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (yaml.safe_dump(BASE) + "horizon: .nan\n",
         "config: horizon: .nan is not a finite number; give a finite value "
         "(see config/README.md)"),
        (yaml.safe_dump(merged({"algorithm_options": {"gp-ucb": {"betta": 2}}})),
         "config: algorithm_options.gp-ucb.betta = 2: algorithm 'gp-ucb': unknown option "
         "'betta'; the options of its parts are surrogate 'gp': ['bounds', 'fit_max_iter', "
         "'fit_mode', 'fit_mode_options', 'fit_restarts', 'hyperparameters', 'initial', "
         "'min_fit_size', 'prior', "
         "'space_kernel', 'standardize', 'time_kernel']; acquisition 'ucb': ['beta', "
         "'include_noise', 'maxiter', 'n_restarts', 'raw_samples']; dataset 'keep-all': [] "
         "(or give a role: surrogate, acquisition, dataset, removal)"),
        (yaml.safe_dump(merged({"seeds": list(range(20_000))})), None),
    ],
    ids=["nan", "option", "large-grid"],
)
def test_workflow_rejects_with_the_same_line(tmp_path, text, expected) -> None:
    proc = snakemake_dry_run(tmp_path, text)
    assert proc.returncode != 0
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert len(lines) == 1, lines  # the one line alone: no traceback, no schema dump
    if expected is None:  # the same message as the validator's
        with pytest.raises(ConfigError) as info:
            check_config(yaml.safe_load(text))
        expected = str(info.value)
    assert lines[0] == expected
    assert "simulate_run" not in proc.stdout and not (tmp_path / "results").exists()


def test_workflow_names_the_yaml_error_of_config_yaml(tmp_path) -> None:
    """config/config.yaml is parsed by the Snakefile: its YAML error names file and line."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text("campaign: x\nbenchmarks: [ackley\n")
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "workflow/Snakefile"), "--directory",
           str(tmp_path), "-n", "--cores", "1"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode != 0
    assert ("config file 'config/config.yaml', line 3, column 1: YAML syntax error"
            in proc.stderr), proc.stderr
