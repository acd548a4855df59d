"""The RunSpec (tvbo/runspec.py) is the ONE declaration of every run option (issue 11 item 5).

Every other place that names a run option is generated from it or checked against it here: the
``tvbo run`` / ``run-many`` / ``oracle`` flags, the keywords of :func:`tvbo.simulate`, the config
schema's properties, the Snakemake rule parameters (a real dry run) and ``EngineOptions``. The
agreement check (:func:`problems`) must report an option declared in only one place: shown by
adding a fake option to the spec, and a fake keyword to the API. The one cross-field check
(:func:`tvbo.runspec.check_run_options`) names the field as each caller spells it.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import os
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

import tvbo.api
from tvbo import cli, runspec
from tvbo.runspec import (
    API_ONLY,
    CLI_ONLY,
    KINDS,
    REQUIRED,
    SEED_LIMIT,
    WORKFLOW_PLACES,
    RunOption,
    check_run_options,
    cli_args,
    option,
)

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


# -- the agreement check --------------------------------------------------------------------------
def _subparser(name: str) -> Any:
    parser = cli.build_parser()
    (action,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    return action.choices[name]


def _flags(parser: Any) -> dict[str, Any]:
    """dest -> the argparse action of every optional flag (but --help)."""
    return {a.dest: a for a in parser._actions if a.option_strings and a.dest != "help"}


def problems() -> list[str]:
    """Every place that disagrees with the RunSpec, one line each ([] = all agree)."""
    from tvbo.sim.engine import EngineOptions

    spec = runspec.RUN_SPEC
    out: list[str] = []
    # the API: every option a keyword with the same default, every keyword an option
    params = inspect.signature(tvbo.api.simulate).parameters
    for opt in spec:
        if opt.name not in params:
            out.append(f"api: tvbo.simulate has no keyword {opt.name!r}")
            continue
        default = params[opt.name].default
        expected = inspect.Parameter.empty if opt.default is REQUIRED else opt.default
        if default != expected:
            out.append(f"api: {opt.name} defaults to {default!r}, the RunSpec to {expected!r}")
    out += [f"api: keyword {name!r} is not in the RunSpec" for name in params
            if name not in {o.name for o in spec} and name not in API_ONLY]
    # the CLI: every option with a flag is a flag of run and run-many, same default, and vice versa
    for command in ("run", "run-many"):
        flags = _flags(_subparser(command))
        for opt in spec:
            dest = "seeds" if (command, opt.name) == ("run-many", "seed") else opt.name
            if opt.cli_flag is None:
                continue
            if dest not in flags:
                out.append(f"cli: tvbo {command} has no flag {opt.cli_flag}")
            elif (dest == opt.name and opt.default is not REQUIRED
                  and flags[dest].default != opt.default):
                out.append(f"cli: tvbo {command} {opt.cli_flag} defaults to "
                           f"{flags[dest].default!r}, the RunSpec to {opt.default!r}")
        out += [f"cli: tvbo {command} flag {dest!r} is not in the RunSpec" for dest in flags
                if dest not in {o.name for o in spec} and dest not in CLI_ONLY]
    # the schema file: its run-option properties are the generated ones
    text = SCHEMA.read_text(encoding="utf-8")
    if runspec.render_schema_text(text) != text:
        out.append(f"schema: {SCHEMA.name} differs from the RunSpec "
                   "(run python scripts/write_config_schema.py)")
    # the workflow: every option in the config is passed to `tvbo run` somewhere
    for opt in spec:
        if opt.workflow not in WORKFLOW_PLACES:
            out.append(f"workflow: {opt.name} has unknown place {opt.workflow!r}")
        elif opt.config and opt.workflow == "none":
            out.append(f"workflow: config key {opt.config} never reaches tvbo run")
        elif opt.workflow == "none" and not opt.workflow_note:
            out.append(f"workflow: {opt.name} is not passed and says not why (workflow_note)")
    # EngineOptions: its fields are the options marked engine=True, with the same defaults
    fields = {f.name: f.default for f in dataclasses.fields(EngineOptions)}
    marked = {o.name: o.default for o in spec if o.engine}
    if fields != marked:
        out.append(f"engine: EngineOptions {fields} != the RunSpec's engine options {marked}")
    return out


def test_every_place_agrees_with_the_runspec() -> None:
    assert problems() == []


FAKE = RunOption("jitter_budget", "int", 3, "escalations of the GP jitter before a run fails",
                 minimum=0, config="jitter_budget", workflow="campaign", engine=True)


def test_an_option_added_only_to_the_spec_is_reported(monkeypatch) -> None:
    monkeypatch.setattr(runspec, "RUN_SPEC", (*runspec.RUN_SPEC, FAKE))
    found = problems()
    assert "api: tvbo.simulate has no keyword 'jitter_budget'" in found
    assert any(p.startswith("schema: config.schema.yaml differs") for p in found)
    assert any(p.startswith("engine: EngineOptions") for p in found)
    # generated: the CLI and the workflow take the option from the spec, without an edit
    assert "--jitter-budget" in _flags(_subparser("run"))["jitter_budget"].option_strings
    assert cli_args(runspec.workflow_values({"jitter_budget": 7}, "campaign")) == [
        "--jitter-budget", "7"]


def test_an_option_added_only_to_the_api_or_the_cli_is_reported(monkeypatch) -> None:
    def simulate(benchmark, algorithm, *, jitter_budget: int = 3, **kwargs):  # noqa: ARG001
        raise AssertionError

    original = inspect.signature(tvbo.api.simulate)
    params = [*original.parameters.values()]
    params.insert(2, inspect.Parameter("jitter_budget", inspect.Parameter.KEYWORD_ONLY,
                                       default=3))
    simulate.__signature__ = original.replace(parameters=params)
    monkeypatch.setattr(tvbo.api, "simulate", simulate)
    original_run_options = cli._run_options

    def run_options(p):
        original_run_options(p)
        p.add_argument("--jitter-budget", type=int, default=3)

    monkeypatch.setattr(cli, "_run_options", run_options)
    found = problems()
    assert "api: keyword 'jitter_budget' is not in the RunSpec" in found
    assert "cli: tvbo run flag 'jitter_budget' is not in the RunSpec" in found
    assert "cli: tvbo run-many flag 'jitter_budget' is not in the RunSpec" in found


def test_a_changed_default_is_reported(monkeypatch) -> None:
    changed = tuple(dataclasses.replace(o, default=20) if o.name == "warmup" else o
                    for o in runspec.RUN_SPEC)
    monkeypatch.setattr(runspec, "RUN_SPEC", changed)
    found = problems()
    assert "api: warmup defaults to 15, the RunSpec to 20" in found
    assert any(p.startswith("schema:") for p in found) and any(
        p.startswith("engine:") for p in found)


# -- the declaration itself -----------------------------------------------------------------------
def test_declarations_are_well_formed() -> None:
    names = [o.name for o in runspec.RUN_SPEC]
    assert len(names) == len(set(names))
    for opt in runspec.RUN_SPEC:
        assert opt.kind in KINDS and opt.help and opt.workflow in WORKFLOW_PLACES, opt.name
        if opt.default is not REQUIRED:  # every default is valid
            check_run_options({opt.name: opt.default})
        if opt.grid and isinstance(opt.config_default, list):
            check_run_options({opt.config: opt.config_default}, style="config")
    with pytest.raises(ValueError, match="unknown run option 'nope'; valid: benchmark"):
        option("nope")


def test_the_registries_agree_with_the_choices() -> None:
    """The choices that other layers own (compute models, cost tables, pending strategies); the
    engine's stamps, recommendations and bounds are declared only here (issue 25 item 3)."""
    from tvbo.acquisition.pending import pending_names
    from tvbo.benchmarks.tables import COST_TABLES
    from tvbo.sim.compute import COMPUTE_MODELS

    assert option("compute").choices == COMPUTE_MODELS
    assert set(option("cost_table").choices) == set(COST_TABLES)
    assert option("pending").valid_choices() == tuple(pending_names())
    # the built-ins accepted without reading the registry are registered names
    assert option("pending").known and set(option("pending").known) <= set(pending_names())


# -- generated CLI flags: every value the workflow can write parses back --------------------------
SAMPLES: dict[str, Any] = {
    "compute": "polynomial", "warmup": 4, "time_grid_step": 0.5, "stamp": "decide",
    "profile": "reference-2core", "polynomial": [0.1, 0.0, 1e-6], "lookahead": True,
    "max_iterations": 40, "expert_cost": 0.3, "expert_noise_var": 0.0,
    "recommendation": "posterior-mean", "cost_table": "icml", "horizon": 30.0, "cost": 0.0,
    "noise_var": 0.02, "benchmark_options": {"oracle_grid_step": 2, "path": "it's/x.nc"},
    "algorithm_options": {"beta": {"kind": "const", "value": 2}}, "evaluators": 4,
    "pending": "kriging-believer", "overlap": True, "oracle_table": "o.npz", "threads": 2,
    "seed": 7, "speed": 2.5, "cost_cv": 0.5, "confirm_large": True,
}


def test_cli_args_parse_back_to_the_same_values() -> None:
    flagged = [o for o in runspec.RUN_SPEC if o.cli_flag and o.kind != "name"]
    assert set(SAMPLES) == {o.name for o in flagged}  # a sample for every option
    argv = ["run", "--benchmark", "b", "--algorithm", "a", "--out", "x.nc"]
    args = cli.build_parser().parse_args([*argv, *shlex.split(shlex.join(cli_args(SAMPLES)))])
    for name, value in SAMPLES.items():
        assert getattr(args, name) == value, name
    with pytest.raises(ValueError, match="unknown run option 'colour'"):
        cli_args({"colour": 1})


def test_the_cli_passes_every_option_to_simulate(monkeypatch, tmp_path) -> None:
    calls: list[tuple[runspec.CheckedRun, dict]] = []

    def simulate_checked(run, **kwargs):
        calls.append((run, kwargs))
        raise ValueError("stop")

    monkeypatch.setattr(tvbo.api, "simulate_checked", simulate_checked)
    argv = ["run", "--benchmark", "ackley", "--algorithm", "gp-ucb",
            "--out", str(tmp_path / "r.nc")]
    with pytest.raises(SystemExit):
        cli.main([*argv, "--quiet"])
    ((run, kwargs),) = calls
    # the checked options of every run option, and the caller's keywords (progress)
    assert isinstance(run, runspec.CheckedRun)
    assert set(run) == {o.name for o in runspec.RUN_SPEC}
    assert run["benchmark"] == "ackley" and run["algorithm"] == "gp-ucb"
    assert set(kwargs) == set(API_ONLY)


# -- the Snakemake rule parameters: a real dry run ------------------------------------------------
def _dry_run_commands(tmp_path: Path, config: dict[str, Any]) -> list[list[str]]:
    from tests.workflow.test_workflow import snakemake

    proc = snakemake(tmp_path, config, "-n", "--cores", "1", "--printshellcmds")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    commands = []
    for line in proc.stdout.splitlines():
        if " tvbo run " in f" {line} ":
            words = shlex.split(line[line.index("tvbo run"):].split(" 2> ")[0])
            commands.append(words[2:])  # after "tvbo run"
    assert commands, proc.stdout
    return commands


def test_workflow_passes_every_config_option(tmp_path) -> None:
    config = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    # profile needs compute counted; one evaluator: SparQ-GP-UCB (below) asks its expert inside
    # each iteration, a sequential protocol (the CLI round trip above covers evaluators)
    values = {**SAMPLES, "profile": None, "overlap": False, "evaluators": 1,
              "pending": "hallucinate"}  # pending: passed only with k > 1 or overlap
    config.update(
        benchmarks=["ackley"], seeds=[values["seed"]], speeds=[values["speed"]],
        evaluators=[values["evaluators"]], overlap=[values["overlap"]],
        benchmark_options={"ackley": {"cost": values["cost"], "noise_var": values["noise_var"],
                                      "options": {"oracle_grid_step": 2}}},
        # SparQ-GP-UCB: the expert options (expert_cost, expert_noise_var) need an algorithm that
        # asks the expert, or the config check refuses them
        algorithms=["sparq-gp-ucb"],
        algorithm_options={"sparq-gp-ucb": {"beta": 2.0, "label": "SparQ (beta 2)"}},
        **{o.config: values[o.name] for o in runspec.RUN_SPEC
           if o.config and not o.grid and "." not in o.config},
    )
    values.update(benchmark_options={"oracle_grid_step": 2}, algorithm_options={"beta": 2.0})
    (command,) = _dry_run_commands(tmp_path, config)
    args = cli.build_parser().parse_args(["run", *command])
    for opt in runspec.RUN_SPEC:
        if opt.config and opt.kind != "name":
            assert getattr(args, opt.name) == values[opt.name], (opt.name, command)
    assert (args.benchmark, args.algorithm) == ("ackley", "sparq-gp-ucb")


# -- the one check: messages name the field as the caller spells it -------------------------------
CASES = [
    # (options by name, fragments: API style; the CLI/config names are derived below)
    ({"compute": "polynomial"}, ["polynomial", "must be set exactly when compute is"]),
    ({"polynomial": [0.1]}, ["polynomial", "got", "counted"]),
    ({"compute": "measured", "profile": "reference-2core"}, ["applies only to compute 'counted'"]),
    ({"profile": "pi5"}, ["'pi5'", "unknown hardware profile"]),
    ({"horizon": 5.0, "time_grid_step": 10.0}, ["time_grid_step", "10 exceeds", "horizon 5"]),
    ({"seed": SEED_LIMIT}, ["seed", str(SEED_LIMIT), "2**63", "int64"]),
    ({"seed": -1}, ["seed must be an integer >= 0, got -1"]),
    ({"speed": 0.0}, ["speed must be a finite number > 0, got 0.0"]),
    ({"speed": math.inf}, ["speed", "inf"]),
    ({"horizon": math.nan}, ["horizon must be a finite number > 0 or None, got nan"]),
    ({"evaluators": 65}, ["evaluators must be an integer in [1, 64], got 65"]),
    ({"evaluators": True}, ["evaluators", "True"]),
    ({"pending": "x"}, ["pending: unknown pending strategy 'x'; valid: ", "hallucinate"]),
    ({"stamp": "later"}, ["unknown stamp 'later'; valid: sample, decide"]),
    ({"recommendation": "best"}, ["latest, posterior-mean (or None)"]),
    ({"lookahead": "yes"}, ["lookahead must be true or false, got 'yes'"]),
    ({"compute": "polynomial", "polynomial": [0.1, -1.0]}, ["polynomial a1", "-1.0"]),
    ({"threads": 0}, ["threads must be an integer >= 1 or None, got 0"]),
    ({"algorithm_options": [1]}, ["algorithm_options must be a mapping"]),
    ({"warmup": None}, ["warmup must be given"]),
]


@pytest.mark.parametrize(("options", "fragments"), CASES, ids=lambda v: str(v)[:40])
def test_check_run_options_names_field_value_and_choices(options, fragments) -> None:
    with pytest.raises(ValueError) as info:
        check_run_options(options)
    message = str(info.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_cli_and_config_styles_name_flags_and_config_paths() -> None:
    with pytest.raises(ValueError, match=r"^--time-grid-step 10 exceeds --horizon 5$"):
        check_run_options({"horizon": 5.0, "time_grid_step": 10.0}, style="cli")
    with pytest.raises(ValueError, match=r"--profile applies only .* --compute counted"):
        check_run_options({"compute": "measured", "profile": "reference-2core"}, style="cli")
    with pytest.raises(ValueError, match=r"^seeds\[1\]: 9223372036854775808 is out of range"):
        check_run_options({"seeds": [0, SEED_LIMIT]}, style="config")
    with pytest.raises(ValueError, match=r"^speeds\[0\] must be a finite number > 0"):
        check_run_options({"speeds": [0.0]}, style="config")
    with pytest.raises(ValueError, match=r"^--pending: unknown pending strategy 'x'; valid: "):
        check_run_options({"pending": "x"}, style="cli")


def test_a_checked_profile_is_parsed_once_unless_its_file_changes(tmp_path, monkeypatch) -> None:
    import tvbo.sim.profiles as profiles

    loads = []
    real = profiles.load_profile
    monkeypatch.setattr(profiles, "load_profile", lambda p: loads.append(p) or real(p))
    monkeypatch.setattr(runspec, "_CHECKED_PROFILES", set())
    good = yaml.safe_dump({"name": "x", "coefficients": {"flop": 1e-9, "kernel": 0.0,
                                                         "call": 0.0, "step": 0.0}})
    path = tmp_path / "hw.yaml"
    path.write_text(good)
    for _ in range(3):
        check_run_options({"profile": str(path)})
        check_run_options({"profile": "reference-2core"})
    assert len(loads) == 2
    path.write_text("coefficients: [1, 2]\n# changed size and contents\n")
    os.utime(path, ns=(1, 1))
    with pytest.raises(ValueError, match="coefficients"):
        check_run_options({"profile": str(path)})
    with pytest.raises(ValueError, match="'pi5'.*unknown hardware profile"):  # never cached
        check_run_options({"profile": "pi5"})
    with pytest.raises(ValueError, match="'pi5'.*unknown hardware profile"):
        check_run_options({"profile": "pi5"})


def test_parallel_settings_are_checked_against_every_algorithm() -> None:
    from tvbo.algorithms import make

    built: list[str] = []

    def build(name):
        def make_it():
            built.append(name)
            return make(name)
        return make_it

    algorithms = {"gp-ucb": build("gp-ucb"), "abo": build("abo")}
    check_run_options({"overlap": False}, algorithms=algorithms)
    assert built == []  # sequential: nothing is built
    with pytest.raises(ValueError, match="abo.*cannot run with overlap"):
        check_run_options({"overlap": True}, algorithms=algorithms)
    with pytest.raises(ValueError, match="boke.*cannot condition on pending"):
        check_run_options({"evaluators": [1, 2], "overlap": [False]}, style="config",
                          algorithms={"boke": lambda: make("boke")})
    check_run_options({"evaluators": 2, "pending": "none"},
                      algorithms={"boke": lambda: make("boke")})  # allowed


def test_the_api_cli_and_config_use_the_one_check(monkeypatch, tmp_path, capsys) -> None:
    """Each caller reaches check_run_options (replaced here by a recorder that refuses)."""
    import tvbo.config_check

    seen: list[str] = []

    def refuse(options, *, style="api", algorithms=None):
        seen.append(style)
        raise ValueError(f"refused ({style})")

    monkeypatch.setattr(tvbo.api, "check_run_options", refuse)
    monkeypatch.setattr(runspec, "check_run_options", refuse)
    with pytest.raises(ValueError, match=r"refused \(api\)"):
        tvbo.api.simulate("ackley", "gp-ucb")
    with pytest.raises(SystemExit):
        cli.main(["run", "--benchmark", "ackley", "--algorithm", "gp-ucb", "--out",
                  str(tmp_path / "r.nc")])
    assert "refused (cli)" in capsys.readouterr().err
    cfg = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    with pytest.raises(tvbo.config_check.ConfigError, match=r"refused \(config\)"):
        tvbo.config_check.check_config(cfg, options=False)
    assert seen == ["api", "cli", "config"]


# -- issue 25 item 3: one check per process; the engine trusts a CheckedRun ----------------------
def test_only_the_check_makes_a_checked_run() -> None:
    run = check_run_options({"warmup": 4, "cost_cv": 1})
    assert isinstance(run, runspec.CheckedRun)
    assert set(run) == {o.name for o in runspec.RUN_SPEC}  # absent options: their defaults
    assert run["warmup"] == 4 and run["stamp"] == option("stamp").default
    assert check_run_options(run) is run  # checked in this process: not judged again
    with pytest.raises(TypeError, match="made by tvbo.runspec.check_run_options only"):
        runspec.CheckedRun(object(), {"warmup": -1})
    assert check_run_options({"seeds": [0]}, style="config") is None
    with pytest.raises(TypeError, match="CheckedRun"):
        tvbo.api.simulate_checked({"benchmark": "ackley"})


def test_engine_options_come_from_the_checked_run_as_plain_values() -> None:
    import numpy as np

    run = check_run_options({"warmup": np.int64(4), "time_grid_step": 2, "cost_cv": np.float64(0.5),
                             "lookahead": np.bool_(True), "evaluators": 2})
    options = run.engine_options()
    assert options.warmup == 4 and type(options.warmup) is int
    assert type(options.time_grid_step) is float and type(options.cost_cv) is float
    assert options.lookahead is True and options.evaluators == 2
    assert json.dumps(options.__dict__)  # the run file's configuration is plain JSON


def test_a_new_seed_is_judged_alone() -> None:
    run = check_run_options({"warmup": 4, "seed": 1})
    assert run.with_seed(7)["seed"] == 7 and run.with_seed(7)["warmup"] == 4
    with pytest.raises(ValueError, match=r"--seed must be an integer >= 0, got -1"):
        run.with_seed(-1, style="cli")
    with pytest.raises(ValueError, match="out of range"):
        run.with_seed(2**63)


def _count_checks(monkeypatch) -> Counter:
    counts: Counter = Counter()
    original = runspec._check_field

    def counted(opt, where, value):
        counts[opt.name] += 1
        return original(opt, where, value)

    monkeypatch.setattr(runspec, "_check_field", counted)
    return counts


SHORT_RUN = {"horizon": 6.0, "cost": 0.5, "warmup": 3, "max_iterations": 5, "cost_cv": 0.5}


def test_simulate_checks_every_option_once(monkeypatch) -> None:
    counts = _count_checks(monkeypatch)
    tvbo.api.simulate("eggholder", "gp-ucb", seed=0, **SHORT_RUN)
    assert counts == Counter({o.name: 1 for o in runspec.RUN_SPEC}), counts


def test_tvbo_run_checks_every_option_once(monkeypatch, tmp_path, capsys) -> None:
    counts = _count_checks(monkeypatch)
    argv = ["run", "--benchmark", "eggholder", "--algorithm", "gp-ucb", "--quiet",
            "--out", str(tmp_path / "r.nc")]
    for key, value in SHORT_RUN.items():
        argv += [option(key).cli_flag, str(value)]
    assert cli.main(argv) == 0
    # every flag's value (given or default) once: the API trusts what the CLI checked
    assert counts == Counter({o.name: 1 for o in runspec.RUN_SPEC if o.cli_flag}), counts
    assert {"warmup", "cost_cv", "horizon", "seed"} <= set(counts)


def test_run_many_judges_each_seed_once_and_the_rest_once(monkeypatch, tmp_path, capsys) -> None:
    counts = _count_checks(monkeypatch)
    outs = [str(tmp_path / f"r{i}.nc") for i in range(2)]
    argv = ["run-many", "--benchmark", "eggholder", "--algorithm", "gp-ucb", "--quiet",
            "--seeds", "0", "1", "--out", *outs]
    for key, value in SHORT_RUN.items():
        argv += [option(key).cli_flag, str(value)]
    assert cli.main(argv) == 0
    assert counts["seed"] == 2 and counts["warmup"] == 1 and counts["cost_cv"] == 1, counts


# -- item 6: no import-time side effects ----------------------------------------------------------
def test_importing_the_cli_changes_no_environment_variable() -> None:
    code = ("import json, os; before = dict(os.environ); import tvbo.cli, tvbo.runspec, "
            "tvbo.api; print(json.dumps(dict(os.environ) == before))")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) is True
