# Validation of the configuration and every helper function of the workflow (the other .smk
# files hold only rules, since Snakemake's linter flags functions mixed with rules).
#
# Order matters: the schema check runs when the workflow is parsed, i.e. BEFORE any job runs, and
# fills in the schema defaults; then the names are checked against the tvbo registries.

import json
import re
import shlex
import sys
from pathlib import Path

from snakemake.utils import validate


validate(config, schema="../schemas/config.schema.yaml")

# The rules call the `tvbo` console script. When snakemake is started as `.venv/bin/snakemake`
# without activating the venv, that script is not on PATH; APPEND the interpreter's bin
# directory so it is found there as a fallback (appended, not prepended, so that a conda env
# activated by --sdm conda, or an activated venv, still wins).
_INTERPRETER_BIN = shlex.quote(str(Path(sys.executable).parent))
shell.prefix(f'set -euo pipefail; export PATH="$PATH":{_INTERPRETER_BIN}; ')


def _check_names(kind, requested, registry):
    """Reject names the registry does not know, listing the valid ones (one clear line)."""
    unknown = [name for name in requested if name not in registry]
    if unknown:
        raise ValueError(
            f"config: unknown {kind}(s) {', '.join(map(repr, unknown))}; "
            f"valid {kind}s: {', '.join(registry)}"
        )


def _check_config(cfg):
    """Cross-checks the JSON Schema cannot express with a readable message."""
    try:
        from tvbo.algorithms import names as algorithm_names
        from tvbo.benchmarks import names as benchmark_names
    except ImportError as err:
        raise ImportError(
            f"the tvbo package is not importable ({err}); install it with 'pip install -e .' "
            "in the environment that runs snakemake"
        ) from err
    benchmarks, algorithms = benchmark_names(), algorithm_names()
    # an ablation is a new name built from a preset: {bolt-fifo: {preset: bolt, removal: oldest}}
    ablations = [
        name for name, options in cfg["algorithm_options"].items() if "preset" in options
    ]
    _check_names("algorithm preset", [cfg["algorithm_options"][a]["preset"] for a in ablations],
                 algorithms)
    _check_names("benchmark", cfg["benchmarks"], benchmarks)
    _check_names("algorithm", cfg["algorithms"], algorithms + ablations)
    _check_names("benchmark", list(cfg["benchmark_options"]), benchmarks)
    _check_names("algorithm", list(cfg["algorithm_options"]), algorithms + ablations)
    if (cfg["compute"] == "polynomial") != (cfg["polynomial"] is not None):
        raise ValueError(
            "config: 'polynomial' (coefficients of R(n)) must be set exactly when compute is "
            f"'polynomial'; got compute={cfg['compute']!r}, polynomial={cfg['polynomial']!r}"
        )
    if cfg["profile"] is not None and cfg["compute"] != "counted":
        raise ValueError(
            f"config: 'profile' applies only to compute 'counted', got compute={cfg['compute']!r}"
        )
    horizon = cfg["horizon"]
    if horizon is not None and cfg["time_grid_step"] > horizon:
        raise ValueError(
            f"config: time_grid_step {cfg['time_grid_step']} exceeds horizon {horizon}"
        )


_check_config(config)


def speed_label(speed):
    """The speed as it appears in file names and on the tvbo command line ('1.0', '0.5', '10.0')."""
    return repr(float(speed))


CAMPAIGN = config["campaign"]
SPEEDS = [speed_label(s) for s in config["speeds"]]


def _alternatives(values):
    return "|".join(re.escape(str(v)) for v in values)


wildcard_constraints:
    campaign=_alternatives([CAMPAIGN]),
    benchmark=_alternatives(config["benchmarks"]),
    algorithm=_alternatives(config["algorithms"]),
    seed=r"\d+",
    speed=_alternatives(SPEEDS),


RUN_PATTERN = "results/{campaign}/runs/{benchmark}/{algorithm}/seed{seed}_speed{speed}.nc"


def run_files(wildcards):
    """Every run file of the campaign: one per (benchmark, algorithm, seed, speed)."""
    return expand(
        RUN_PATTERN,
        campaign=wildcards.campaign,
        benchmark=config["benchmarks"],
        algorithm=config["algorithms"],
        seed=config["seeds"],
        speed=SPEEDS,
    )


def simulate_options(wildcards):
    """The campaign-wide and per-name options of `tvbo run`, shell-quoted, as one string."""
    args = [
        "--compute", config["compute"],
        "--warmup", str(config["warmup"]),
        "--cost-table", config["cost_table"],
        "--time-grid-step", repr(float(config["time_grid_step"])),
        "--stamp", config["stamp"],
    ]
    if config["horizon"] is not None:
        args += ["--horizon", repr(float(config["horizon"]))]
    if config["profile"] is not None:
        args += ["--profile", config["profile"]]
    if config["polynomial"] is not None:
        args += ["--polynomial", ",".join(repr(float(a)) for a in config["polynomial"])]
    if config["lookahead"]:
        args.append("--lookahead")
    if config["max_iterations"] is not None:
        args += ["--max-iterations", str(config["max_iterations"])]
    if config["expert_cost"] is not None:
        args += ["--expert-cost", repr(float(config["expert_cost"]))]
    if config["expert_noise_var"] is not None:
        args += ["--expert-noise-var", repr(float(config["expert_noise_var"]))]
    overrides = config["benchmark_options"].get(wildcards.benchmark, {})
    if overrides.get("cost") is not None:
        args += ["--cost", repr(float(overrides["cost"]))]
    if overrides.get("noise_var") is not None:
        args += ["--noise-var", repr(float(overrides["noise_var"]))]
    benchmark_options = dict(overrides.get("options", {}))
    data_file = benchmark_data_file(wildcards)
    if data_file:
        benchmark_options.setdefault("path", data_file[0])
    if benchmark_options:
        args += ["--benchmark-options", json.dumps(benchmark_options, sort_keys=True)]
    algorithm_options = config["algorithm_options"].get(wildcards.algorithm)
    if algorithm_options:
        args += ["--algorithm-options", json.dumps(algorithm_options, sort_keys=True)]
    return shlex.join(args)


#: real-data benchmarks -> the prepared field they read (produced by workflow/rules/data.smk)
DATA_SOURCES = {
    "temperature": "intel",
    "temperature-sensors": "intel",
    "ozone": "ozone",
    "ozone-sensors": "ozone",
}


def prepared_data_path(source):
    """The prepared field of a data source under the configured dates/tag (data.smk's outputs)."""
    if source == "intel":
        return f"data/intel/intel_{config['data']['intel']['dates'][0]}.nc"
    return f"data/ozone/ozone_{config['data']['ozone']['tag']}.nc"


def benchmark_data_file(wildcards):
    """Input of a simulation: the prepared data of a real-data benchmark ([] for the others).

    A `path` in benchmark_options.<name>.options wins (a file the user prepared); otherwise the
    default prepared field, which the data rules download and build on demand.
    """
    source = DATA_SOURCES.get(wildcards.benchmark)
    if source is None:
        return []
    options = config["benchmark_options"].get(wildcards.benchmark, {}).get("options", {})
    return [options.get("path", prepared_data_path(source))]


def data_targets():
    """Every prepared field the data section configures (for `snakemake data_all`)."""
    return expand(
        "data/intel/intel_{date}.nc", date=config["data"]["intel"]["dates"]
    ) + expand("data/ozone/ozone_{tag}.nc", tag=config["data"]["ozone"]["tag"])


def campaign_config_yaml(wildcards):
    """The validated configuration (schema defaults filled in), for the record of the campaign."""
    import yaml

    return yaml.safe_dump(dict(config), sort_keys=False)


def final_outputs():
    """The default targets: tables, figures, the per-run table and the resolved config."""
    tables = expand(
        "results/{campaign}/tables/{metric}.{ext}",
        campaign=CAMPAIGN,
        metric=["average_regret", "time_integrated_regret"],
        ext=["csv", "md"],
    )
    figures = expand(
        "results/{campaign}/figures/{figure}.png",
        campaign=CAMPAIGN,
        figure=["regret_vs_time", "dataset_size_vs_time", "response_time_vs_dataset_size"],
    )
    extra = expand(
        ["results/{campaign}/tables/runs.csv", "results/{campaign}/config.yaml"],
        campaign=CAMPAIGN,
    )
    return tables + figures + extra
