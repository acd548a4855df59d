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


#: the keys whose product is the run grid (benchmarks x algorithms x seeds x speeds)
GRID_KEYS = ("benchmarks", "algorithms", "seeds", "speeds")


def _check_grid(cfg):
    """An empty grid is named as such before the schema's terser 'should be non-empty'.

    A key given as an empty list (or left empty in YAML, i.e. null) would plan zero runs, and
    merging zero runs has no meaning; say which key is empty and what it must hold.
    """
    empty = [key for key in GRID_KEYS if key in cfg and (cfg[key] is None or cfg[key] == [])]
    if empty:
        raise ValueError(
            f"config: empty grid: {' and '.join(map(repr, empty))} "
            f"{'is' if len(empty) == 1 else 'are'} empty, so the campaign would have no run "
            "(runs = benchmarks x algorithms x seeds x speeds); give at least one benchmark "
            "(`tvbo list benchmarks`), algorithm (`tvbo list algorithms`), seed (integer >= 0) "
            "and speed (> 0)"
        )


_check_grid(config)
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
    _check_paper_aliases(cfg)


def _check_paper_aliases(cfg):
    """paper_aliases maps an algorithm of a published table onto an algorithm of the campaign."""
    from tvbo.analysis.published import PAPERS, paper_table

    published = sorted({a for p in PAPERS for a in paper_table(p)["algorithm"]})
    for name, target in cfg["paper_aliases"].items():
        if name not in published:
            raise ValueError(
                f"config: paper_aliases key {name!r} is no algorithm of a published table; "
                f"valid keys: {', '.join(published)}"
            )
        if target not in cfg["algorithms"]:
            raise ValueError(
                f"config: paper_aliases {name!r} -> {target!r}, but {target!r} is not in the "
                f"campaign's algorithms: {', '.join(cfg['algorithms'])}"
            )


_check_config(config)


def _check_noise_protocols(cfg):
    """benchmark_options.<name>.options.noise_protocol: a known protocol, and never beside an
    explicit noise_var (two sources for one number); checked at parse time, before any job."""
    from tvbo.benchmarks.noise import NOISE_PROTOCOLS

    for name, overrides in cfg["benchmark_options"].items():
        protocol = overrides.get("options", {}).get("noise_protocol")
        if protocol is None:
            continue
        if protocol not in NOISE_PROTOCOLS:
            raise ValueError(
                f"config: benchmark_options.{name}.options.noise_protocol {protocol!r} is "
                f"unknown; valid noise protocols: {', '.join(NOISE_PROTOCOLS)}"
            )
        if protocol != "table" and overrides.get("noise_var") is not None:
            raise ValueError(
                f"config: benchmark_options.{name} sets both noise_var and noise_protocol "
                f"{protocol!r}; give one of them"
            )


_check_noise_protocols(config)


def _check_parallel(cfg):
    """evaluators / overlap / pending: a known strategy, and every algorithm of the grid able to
    run with k > 1 or overlap (abo, sparq-gp-ucb cannot; model-free ones need pending: none);
    checked at parse time, before any job (tvbo.sim.parallel.check_parallel names the reason)."""
    from tvbo.acquisition.pending import make_pending

    try:
        make_pending(cfg["pending"])
    except ValueError as err:
        raise ValueError(f"config: pending: {err}") from None
    settings = [(k, o) for k in cfg["evaluators"] for o in cfg["overlap"] if k > 1 or o]
    if not settings:
        return
    from tvbo.algorithms import make
    from tvbo.sim.engine import EngineOptions
    from tvbo.sim.parallel import check_parallel

    for name in cfg["algorithms"]:
        options = dict(cfg["algorithm_options"].get(name, {}))
        algorithm = make(name, **options)
        for k, overlap in settings:
            try:
                check_parallel(algorithm, EngineOptions(evaluators=k, overlap=overlap,
                                                        pending=cfg["pending"]))
            except ValueError as err:
                raise ValueError(f"config: {err}") from None


_check_parallel(config)


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
    args = ["--evaluators", match.group(1), "--pending", config["pending"]]
    if match.group(2):
        args.append("--overlap")
    return shlex.join(args)


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
    if config["recommendation"] is not None:
        args += ["--recommendation", config["recommendation"]]
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


def data_file_for(benchmark):
    """The prepared data a benchmark reads ([] for benchmarks without real data).

    A `path` in benchmark_options.<name>.options wins (a file the user prepared); otherwise the
    default prepared field, which the data rules download and build on demand.
    """
    source = DATA_SOURCES.get(benchmark)
    if source is None:
        return []
    options = config["benchmark_options"].get(benchmark, {}).get("options", {})
    return [options.get("path", prepared_data_path(source))]


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
        (path,) = data_file_for(benchmark)
        if Path(path).is_file():
            continue
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
            raw = [("data/raw/intel/data.txt.gz", intel["url"]),
                   ("data/raw/intel/mote_locs.txt", intel["locs_url"])]
        else:
            template = cfg["data"]["ozone"]["url_template"]
            raw = [(f"data/raw/ozone/daily_44201_{year}.zip", template.format(year=year))
                   for year in cfg["data"]["ozone"]["years"]]
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
    return expand(
        "data/intel/intel_{date}.nc", date=config["data"]["intel"]["dates"]
    ) + expand("data/ozone/ozone_{tag}.nc", tag=config["data"]["ozone"]["tag"])


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
        pairs = shared_pairs(paper, config["benchmarks"], config["algorithms"],
                             config["paper_aliases"])
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
        "results/{campaign}/figures/{figure}.png",
        campaign=CAMPAIGN,
        figure=["regret_vs_time", "dataset_size_vs_time", "response_time_vs_dataset_size"],
    )
    if len(config["algorithms"]) >= 2:
        figures += expand("results/{campaign}/figures/normalised_regret.png", campaign=CAMPAIGN)
    comparisons = expand(
        "results/{campaign}/comparison/{paper}/{name}",
        campaign=CAMPAIGN,
        paper=PAPER_COMPARISONS,
        name=["paper_vs_tvbo.csv", "paper_vs_tvbo.md", "paper_vs_tvbo.tex",
              "normalised_regret.png"],
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
        (path,) = data_file_for(benchmark)
        match = re.search(r"(\d{4}-\d{2}-\d{2})", Path(path).name)
        used = match.group(1) if match else "unknown (a user-prepared file)"
        paper = PAPER_INTEL_DAYS.get(benchmark, "")
        rows.append({"benchmark": benchmark, "paper_day": paper, "day_used": used,
                     "substitute": "yes" if used != paper else "no", "data_file": path})
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
