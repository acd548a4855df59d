# Validation of the configuration and every helper function of the workflow (the other .smk
# files hold only rules, since Snakemake's linter flags functions mixed with rules).
#
# Order matters: the configuration is validated (tvbo.config_check.check_config, which also fills
# in the schema defaults) when the workflow is parsed, i.e. BEFORE the DAG is built and any job runs.

import json
import re
import shlex
import sys
from pathlib import Path

# -- validation: ONE validator, shared with `tvbo check-config` (tvbo/config_check.py) ----------
# Schema (defaults filled in), finite numbers, seeds < 2**63, registry names, compute/profile/
# polynomial, paper aliases, the grid size (confirm_large) and every part's options, each error
# one line naming the config path. Runs at parse time: before the DAG is built, before any job.
try:
    from tvbo.config_check import apply_command_line_overrides, check_config
except ImportError as err:
    raise ImportError(
        f"the tvbo package is not importable ({err}); install it with 'pip install tvbo-lab' "
        "(or 'pip install -e .' in a clone) in the environment that runs snakemake"
    ) from err

# `--config confirm_large=true` reaches Snakemake's config as the STRING 'true': read every
# command-line value again as YAML, as `tvbo check-config --config` does (issue 24 item 4)
apply_command_line_overrides(
    config, getattr(getattr(workflow, "config_settings", None), "overwrite_config", None) or {}
)

# workflow.source_path: relative to THIS file, so the schema is found when the workflow is used as
# a module of a snakedeploy-ed folder too (workflow.basedir is then the deploying folder's).
try:  # the parts' options are built once, by the main process (not again in every cluster job)
    check_config(
        config,
        schema=Path(workflow.source_path("../schemas/config.schema.yaml")),
        options=getattr(workflow, "is_main_process", True),
    )
except ValueError as err:  # ConfigError: the one line alone, without a traceback
    print(err, file=sys.stderr)
    raise SystemExit(1) from None
# -- end of validation ------------------------------------------------------------------------

from tvbo.algorithms.labels import split_label_options  # noqa: E402 (after the checks)

# The `tvbo run` flags of every run option come from its ONE declaration (tvbo/runspec.py):
# workflow_values picks the options the workflow passes at a place, cli_args writes their flags.
from tvbo.runspec import cli_args, workflow_values  # noqa: E402 (after the checks)
from tvbo.config_check import compute_values  # noqa: E402 (after the checks)

# The rules call the `tvbo` console script. When snakemake is started as `.venv/bin/snakemake`
# without activating the venv, that script is not on PATH; APPEND the interpreter's bin
# directory so it is found there as a fallback (appended, not prepended, so that a conda env
# activated by --sdm conda, or an activated venv, still wins).
_INTERPRETER_BIN = shlex.quote(str(Path(sys.executable).parent))
shell.prefix(f'set -euo pipefail; export PATH="$PATH":{_INTERPRETER_BIN}; ')


def parallel_suffix(evaluators, overlap):
    """The run file's suffix: '' for the sequential loop (today's names), else '_k<k>' plus 'o'
    with overlap (e.g. seed0_speed1.0_k4o.nc)."""
    if int(evaluators) == 1 and not overlap:
        return ""
    return f"_k{int(evaluators)}" + ("o" if overlap else "")


PARALLEL = [parallel_suffix(k, o) for k in config["evaluators"] for o in config["overlap"]]


def parallel_options(wildcards):
    """`tvbo run` options of a run file's parallel suffix ('' -> none: today's command)."""
    match = re.fullmatch(r"_k(\d+)(o?)", wildcards.par)
    if match is None:
        return ""
    return shlex.join(
        cli_args(
            {
                "evaluators": int(match.group(1)),
                "overlap": bool(match.group(2)),
                "pending": config["pending"],
            }
        )
    )


def speed_label(speed):
    """The speed as it appears in file names and on the tvbo command line ('1.0', '0.5', '10.0')."""
    return repr(float(speed))


CAMPAIGN = config["campaign"]
SPEEDS = [speed_label(s) for s in config["speeds"]]


#: the published tables tvbo ships (tvbo/analysis/data/published_results.csv)
from tvbo.analysis.published import PAPERS as PUBLISHED_TABLES  # noqa: E402 (after the checks)


def _alternatives(values):
    return "|".join(re.escape(str(v)) for v in values)


wildcard_constraints:
    campaign=_alternatives([CAMPAIGN]),
    paper=_alternatives(PUBLISHED_TABLES),
    benchmark=_alternatives(config["benchmarks"]),
    algorithm=_alternatives(config["algorithms"]),
    seed=r"\d+",
    speed=_alternatives(SPEEDS),
    # may be empty (the sequential setting keeps today's names): a group, never an empty pattern
    par=f"(?:{_alternatives(PARALLEL)})",


RUN_PATTERN = "results/{campaign}/runs/{benchmark}/{algorithm}/seed{seed}_speed{speed}{par}.nc"


def run_files(wildcards):
    """Every run file of the campaign: one per (benchmark, algorithm, seed, speed, evaluators,
    overlap); the sequential setting keeps today's names."""
    return expand(
        RUN_PATTERN,
        campaign=wildcards.campaign,
        benchmark=config["benchmarks"],
        algorithm=config["algorithms"],
        seed=config["seeds"],
        speed=SPEEDS,
        par=PARALLEL,
    )


def seed_groups():
    """The seeds of every (benchmark, algorithm, speed), in config order, in groups of
    runs_per_job: one simulation job per group (simulate.smk)."""
    seeds = [int(s) for s in config["seeds"]]
    size = int(config["runs_per_job"])
    return [seeds[i : i + size] for i in range(0, len(seeds), size)]


def group_run_files(seeds):
    """The run files of one group of seeds, with the other wildcards left to Snakemake."""
    return [RUN_PATTERN.replace("{seed}", str(seed)) for seed in seeds]


def group_label(seeds):
    """A group's name in its log and benchmark file names: 'seeds0-4' or 'seeds0,2,7'."""
    if seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"seeds{seeds[0]}-{seeds[-1]}" if len(seeds) > 1 else f"seeds{seeds[0]}"
    return "seeds" + ",".join(map(str, seeds))


def benchmark_configuration_args(benchmark):
    """The `tvbo run` / `tvbo oracle` flags that configure the benchmark itself (cost table,
    horizon, cost, noise, extra options): one list for both, so a run's configuration and its
    oracle table's can never drift apart (the run would reject the table)."""
    values = workflow_values(config, "benchmark", benchmark=benchmark)
    benchmark_options = dict(values["benchmark_options"] or {})
    data_file = data_file_for(benchmark)
    if data_file:
        benchmark_options.setdefault("path", data_file[0])
    values["benchmark_options"] = benchmark_options or None
    return cli_args(values)


ORACLE_PATTERN = "results/{campaign}/oracles/{benchmark}.npz"


def oracle_table_file(wildcards):
    """Input of a simulation: its benchmark's shared f*(t) table ([] when none is built).

    One table per benchmark configuration: within a campaign a benchmark has exactly one (the
    campaign-wide cost table and horizon plus its benchmark_options), so the benchmark name keys
    it. Benchmarks with closed-form or data maxima skip it (NO_TABLE_NEEDED: reading a table
    would cost more than their grid), as does every benchmark when oracle_tables is false.
    """
    from tvbo.benchmarks.oracle_table import NO_TABLE_NEEDED

    if not config["oracle_tables"] or wildcards.benchmark in NO_TABLE_NEEDED:
        return []
    return [ORACLE_PATTERN.format(campaign=wildcards.campaign, benchmark=wildcards.benchmark)]


def plugin_args():
    """`--plugin MODULE` for every config `plugins` module (tvbo.plugins): each job imports them,
    as the validator above did, so a plugin's names mean the same in every process."""
    return [arg for module in config.get("plugins") or [] for arg in ("--plugin", module)]


def oracle_options(wildcards):
    """The flags of `tvbo oracle` for one benchmark configuration, shell-quoted."""
    return shlex.join(plugin_args() + benchmark_configuration_args(wildcards.benchmark))


def simulate_options(wildcards):
    """The campaign-wide and per-name options of `tvbo run`, shell-quoted, as one string."""
    values = workflow_values(config, "campaign")
    # compute_per_algorithm: this algorithm's own compute model (e.g. a plugin's replay)
    values.update(compute_values(config, wildcards.algorithm))
    args = plugin_args() + cli_args(values)
    args += benchmark_configuration_args(wildcards.benchmark)
    for table in oracle_table_file(wildcards):  # the shared f*(t) grid (rule oracle_table)
        args += cli_args({"oracle_table": table})
    # label/variant only name the algorithm in tables and figures (label_options): kept out of
    # the run, so renaming a column never reruns a simulation
    algorithm_options, _ = split_label_options(config["algorithm_options"].get(wildcards.algorithm))
    args += cli_args({"algorithm_options": algorithm_options or None})
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


def data_file_for(benchmark):
    """The prepared data a benchmark reads ([] for benchmarks without real data).

    A `path` in benchmark_options.<name>.options wins (a file the user prepared); otherwise the
    default prepared field, which the data rules download and build on demand. The days a
    benchmark declares as candidate priors (`prior_paths`, PE-GP-UCB's previous days) are read
    too, so they are inputs as well.
    """
    source = DATA_SOURCES.get(benchmark)
    if source is None:
        return []
    options = config["benchmark_options"].get(benchmark, {}).get("options", {})
    return [options.get("path", prepared_data_path(source)), *options.get("prior_paths", [])]


def benchmark_data_file(wildcards):
    """Input of a simulation: the prepared data of its real-data benchmark ([] for others)."""
    return data_file_for(wildcards.benchmark)


def _is_local_mirror(mirror):
    return bool(mirror) and (mirror.startswith("file:") or "://" not in mirror)


def _check_data(cfg):
    """Every real-data benchmark of the grid must have its data configured: checked at parse time.

    Its prepared field must exist already, or be a file the data rules produce (an Intel day
    data/intel/intel_<date>.nc, or data/ozone/ozone_<data.ozone.tag>.nc); otherwise Snakemake
    would only say 'Missing input files for rule simulate_run' once the DAG is built. When the
    field must be built from a download through a LOCAL mirror (data.mirror), the mirror must
    hold the files (a missing folder or file is reported now, not after the first jobs ran).
    """
    from tvbo.data.download import MirrorError, resolve_source

    for benchmark in cfg["benchmarks"]:
        source = DATA_SOURCES.get(benchmark)
        if source is None:
            continue
        missing = [p for p in data_file_for(benchmark) if not Path(p).is_file()]
        if not missing:
            continue
        for path in missing:
            if source == "intel":
                producible = re.fullmatch(r"data/intel/intel_\d{4}-\d{2}-\d{2}\.nc", path)
                rule_output = "data/intel/intel_<yyyy-mm-dd>.nc"
            else:
                producible = path == prepared_data_path("ozone")
                rule_output = f"{prepared_data_path('ozone')} (data.ozone.tag)"
            if not producible:
                raise ValueError(
                    f"config: benchmark {benchmark!r} reads its data from {path!r} "
                    f"(benchmark_options.{benchmark}.options.path), which does not exist and "
                    f"which no data rule produces (they build {rule_output}); prepare that file "
                    f"('tvbo data --help'), or drop the path to use the {source} data configured "
                    "under data:"
                )
        mirror = cfg["data"]["mirror"]
        if not _is_local_mirror(mirror):
            continue  # official URLs or an http(s) mirror: reachable only at run time
        if source == "intel":
            intel = cfg["data"]["intel"]
            raw = [
                ("data/raw/intel/data.txt.gz", intel["url"]),
                ("data/raw/intel/mote_locs.txt", intel["locs_url"]),
            ]
        else:
            template = cfg["data"]["ozone"]["url_template"]
            raw = [
                (f"data/raw/ozone/daily_44201_{year}.zip", template.format(year=year))
                for year in cfg["data"]["ozone"]["years"]
            ]
        for local, url in raw:
            if Path(local).is_file():
                continue
            try:
                resolve_source(url, mirror=mirror, mirror_files=cfg["data"]["mirror_files"])
            except (MirrorError, ValueError) as err:
                raise ValueError(
                    f"config: benchmark {benchmark!r} needs {path}, built from {url}, but the "
                    f"data mirror cannot provide it: {err} (set data.mirror to a folder holding "
                    "the files, or to null to download the official URLs)"
                ) from None


_check_data(config)


def data_targets():
    """Every prepared field the data section configures (for `snakemake data_all`)."""
    return expand("data/intel/intel_{date}.nc", date=config["data"]["intel"]["dates"]) + expand(
        "data/ozone/ozone_{tag}.nc", tag=config["data"]["ozone"]["tag"]
    )


def campaign_config_yaml(wildcards):
    """The validated configuration (schema defaults filled in), for the record of the campaign."""
    import yaml

    return yaml.safe_dump(dict(config), sort_keys=False)


def paper_comparisons():
    """The paper tables to compare with: config paper_tables ('auto' -> the cost table's), kept
    only when they share a (benchmark, algorithm) with the grid. Decided here, at DAG time, so
    a campaign without a shared pair requests no comparison at all."""
    from tvbo.analysis.published import paper_for_cost_table, shared_pairs

    chosen = []
    for paper in config["paper_tables"]:
        if paper == "auto":
            paper = paper_for_cost_table(config["cost_table"])
        if paper in chosen:
            continue
        pairs = shared_pairs(
            paper, config["benchmarks"], config["algorithms"], config["paper_aliases"]
        )
        if pairs:
            chosen.append(paper)
    return chosen


PAPER_COMPARISONS = paper_comparisons()


def paper_alias_options(wildcards):
    """`--alias PAPER=CAMPAIGN` options of `tvbo compare` for the aliases this paper knows."""
    from tvbo.analysis.published import paper_table

    names = set(paper_table(wildcards.paper)["algorithm"])
    pairs = [f"{k}={v}" for k, v in sorted(config["paper_aliases"].items()) if k in names]
    return shlex.join([arg for pair in pairs for arg in ("--alias", pair)])


def label_options(wildcards):
    """`--labels JSON` of the analysis commands: the label/variant of config algorithm_options
    (empty when none is set: every algorithm is then named by its preset's display name)."""
    from tvbo.analysis.context import label_overrides

    overrides = label_overrides(config["algorithm_options"])
    return shlex.join(["--labels", json.dumps(overrides, sort_keys=True)]) if overrides else ""


def final_outputs():
    """The default targets: the papers' tables (CSV, Markdown, LaTeX, normalised), figures
    (the normalised-regret figure when >= 2 algorithms), the per-run table, the resolved config
    and one paper-vs-tvbo comparison per paper table sharing a pair with the grid."""
    tables = expand(
        "results/{campaign}/tables/{metric}{suffix}",
        campaign=CAMPAIGN,
        metric=["average_regret", "time_integrated_regret"],
        suffix=[".csv", ".md", ".tex", "_normalised.csv"],
    )
    figures = expand(
        "results/{campaign}/figures/{figure}.{ext}",
        campaign=CAMPAIGN,
        ext=FIGURE_EXT,
        figure=[
            "regret_vs_time",
            "dataset_size_vs_time",
            "response_time_vs_dataset_size",
            "regret_target_ecdf",
        ],
    )
    if len(config["algorithms"]) >= 2:
        figures += expand(
            "results/{campaign}/figures/normalised_regret.{ext}", campaign=CAMPAIGN, ext=FIGURE_EXT
        )
    comparisons = expand(
        "results/{campaign}/comparison/{paper}/{name}",
        campaign=CAMPAIGN,
        paper=PAPER_COMPARISONS,
        name=[
            "paper_vs_tvbo.csv",
            "paper_vs_tvbo.md",
            "paper_vs_tvbo.tex",
            ".".join(["normalised_regret", FIGURE_EXT]),
        ],
    )
    extra = expand(
        ["results/{campaign}/tables/runs.csv", "results/{campaign}/config.yaml"],
        campaign=CAMPAIGN,
    )
    return tables + figures + comparisons + extra + temperature_day_outputs()


# -- the Intel day of the Temperature benchmarks (rule temperature_day) ---------------------------
#: the day each Intel benchmark's paper used: BOLT [A]/[B] and W-DBO "the first day of data";
#: PE-GP-UCB's target day for the sensor-choice task
PAPER_INTEL_DAYS = {"temperature": "2004-02-28", "temperature-sensors": "2004-03-14"}


def temperature_day_rows():
    """One row per Intel benchmark of the grid: the paper's day, the day read, and the file."""
    rows = []
    for benchmark in config["benchmarks"]:
        if DATA_SOURCES.get(benchmark) != "intel":
            continue
        path = data_file_for(benchmark)[0]  # the field read (prior days follow it)
        match = re.search(r"(\d{4}-\d{2}-\d{2})", Path(path).name)
        used = match.group(1) if match else "unknown (a user-prepared file)"
        paper = PAPER_INTEL_DAYS.get(benchmark, "")
        rows.append(
            {
                "benchmark": benchmark,
                "paper_day": paper,
                "day_used": used,
                "substitute": "yes" if used != paper else "no",
                "data_file": path,
            }
        )
    return rows


def write_temperature_day(table, log, rows):
    """The rule's CSV (one row per Intel benchmark) and a one-line log."""
    import csv

    with open(table, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with open(log, "w") as out:
        out.write(f"{len(rows)} row(s) written to {table}\n")


def temperature_day_outputs():
    """results/<campaign>/tables/temperature_day.csv when the grid has an Intel benchmark."""
    if not temperature_day_rows():
        return []
    return [f"results/{CAMPAIGN}/tables/temperature_day.csv"]
