"""One validator for a campaign configuration, shared by the workflow and the command line.

``check_config(cfg)`` is what ``workflow/rules/common.smk`` calls when Snakemake parses the
workflow (before the DAG is built, so before any job) and what ``tvbo check-config FILE`` calls;
the run options it shares with ``tvbo run`` and :func:`tvbo.simulate` are checked by the ONE
function :func:`tvbo.runspec.check_run_options` (declared once in :data:`tvbo.runspec.RUN_SPEC`,
from which the schema's run-option properties are generated). A bad configuration raises
:class:`ConfigError` (a ``ValueError``) whose message is ONE line naming the field (its path in
the config, e.g. ``algorithm_options.bolt.surrogate.prior``), the value and what is valid.

The checks, in order (the first failure is reported):

1. empty grid keys (named before the schema's terser "should be non-empty");
2. every number finite (YAML ``.nan`` / ``.inf`` slip through JSON Schema's ``minimum``:
   NaN fails no comparison); the opaque option maps ``algorithm_options`` and
   ``benchmark_options.<name>.options`` are left to step 7, whose parts judge their own values;
3. JSON Schema (``workflow/schemas/config.schema.yaml``), filling in every default; an unknown
   key is reported with the closest valid names (difflib) and a pointer to config/README.md
   instead of the whole schema;
4. the run options (:func:`tvbo.runspec.check_run_options`): seeds below :data:`SEED_LIMIT`
   (the run file stores the seed as an int64 coordinate), compute vs polynomial vs profile, the
   profile exists and parses, time_grid_step <= horizon, a known pending strategy;
5. the ``plugins`` modules and installed plugin entry points are loaded (:mod:`tvbo.plugins`: a
   bad plugin is named with its cause), then names against the tvbo registries (benchmarks,
   algorithms -- plugins' included --, ablation presets), labels and
   variants, the noise protocols and ``paper_aliases``;
6. the size of the grid: more than :data:`LARGE_GRID_RUNS` runs needs ``confirm_large: true``
   (the message gives the number of runs and a rough wall-time estimate, :func:`estimate_wall`);
   checked right after step 1, since the schema's uniqueness check of 20,000 seeds alone takes
   seconds;
7. every entry of ``algorithm_options`` and ``benchmark_options`` is BUILT (``tvbo.algorithms.make``
   / ``tvbo.benchmarks.make`` with the options the runs will get): building takes milliseconds
   (measured: every algorithm preset < 0.03 s after its import, every synthetic and simulated
   benchmark < 0.02 s), and each part rejects unknown keys, wrong types and out-of-range values
   with a ``ValueError``/``TypeError``. The offending leaf is found by rebuilding without one
   leaf at a time and named by its config path. Real-data benchmarks (:data:`DATA_BENCHMARKS`)
   read a prepared file that may not exist yet at parse time (a data rule writes it): their
   factories check option NAMES (and number types) before touching the file, so only those
   errors (``TypeError``) reject the config; errors about the data themselves are left to the
   data checks of the workflow and to the run. Likewise a build that fails because a file
   named by the options does not exist yet (``OSError``, e.g. PE-GP-UCB's prior days) is not
   judged here: the names and values checked before the file is read still are. Last, with
   k > 1 evaluators or overlap in the grid, every algorithm is built once more and
   :func:`tvbo.runspec.check_run_options` checks it can run that way;
8. under ``compute: counted``, every plugin algorithm of the grid is run for a few iterations
   (:func:`tvbo.sim.work_probe.probe_work`): one that reports no work is refused (it would be
   charged 0 s), with the message naming ``measured`` and ``polynomial``; the compute model is
   the algorithm's own where ``compute_per_algorithm`` gives one (checked after step 5: valid,
   and a mix ``tvbo merge`` accepts -- counted beside replayed response-time models).

Layering: this module sits below ``tvbo.cli`` and the workflow; it imports ``tvbo.algorithms``,
``tvbo.benchmarks``, ``tvbo.sim`` and ``tvbo.analysis.published`` lazily and nothing below
imports it. The schema is located next to the package in a source checkout (the workflow passes
its own copy explicitly); it is not shipped inside a wheel, where ``check_config`` needs
``schema=``.
"""

from __future__ import annotations

import copy
import difflib
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from tvbo import plugins, runspec
from tvbo.algorithms import has_expert
from tvbo.algorithms import make as make_algorithm
from tvbo.algorithms import names as algorithm_names
from tvbo.algorithms.labels import split_label_options
from tvbo.benchmarks import make as make_benchmark
from tvbo.benchmarks import names as benchmark_names
from tvbo.runspec import SEED_LIMIT  # the run file's int64 seed (re-exported for the tests)

__all__ = [
    "DATA_BENCHMARKS",
    "GRID_KEYS",
    "LARGE_GRID_RUNS",
    "apply_command_line_overrides",
    "README",
    "SECONDS_PER_RUN",
    "SEED_LIMIT",
    "COMPUTE_KEYS",
    "ConfigError",
    "check_config",
    "compute_values",
    "estimate_wall",
    "exit_on_yaml_error",
    "grid_size",
    "load_config_files",
    "load_yaml_file",
    "schema_path",
]

#: the keys whose product is the run grid (benchmarks x algorithms x seeds x speeds)
GRID_KEYS: tuple[str, ...] = ("benchmarks", "algorithms", "seeds", "speeds")
#: the grid dimensions of k asynchronous evaluators (tvbo.sim.parallel; default [1] / [false])
PARALLEL_GRID_KEYS: tuple[str, ...] = ("evaluators", "overlap")
#: more runs than this need ``confirm_large: true``: a grid that size takes the DAG build
#: minutes and the campaign days; a typo (range(20000) seeds) should not start silently
LARGE_GRID_RUNS = 5000
#: rough wall time of one run, seconds per 120 virtual seconds of horizon: measured as 6.4 s
#: (bolt) and 9.6 s (gp-ucb) for the quickstart's eggholder (horizon 120 s, cost 0.5 s) with
#: `tvbo run` on a busy 2-core machine; the estimate scales it linearly with the horizon
SECONDS_PER_RUN = 10.0
#: the horizon at which SECONDS_PER_RUN was measured; a null horizon is the papers' 600 s
REFERENCE_HORIZON = 120.0
DEFAULT_HORIZON = 600.0
#: where every key is documented
README = "config/README.md"
#: benchmarks whose factory reads a prepared data file (workflow/rules/common.smk DATA_SOURCES)
DATA_BENCHMARKS: tuple[str, ...] = ("temperature", "temperature-sensors", "ozone", "ozone-sensors")
#: option keys that select or name a part rather than configure it: never removed when looking
#: for the offending option
_STRUCTURAL = frozenset({"preset", "kind", "label", "variant"})


class ConfigError(ValueError):
    """A configuration error: the message is one line starting with ``config:``."""


def _fail(message: str) -> ConfigError:
    return ConfigError("config: " + " ".join(message.split()))


def _show(value: Any) -> str:
    """A value as YAML spells it (.nan, .inf) or its repr."""
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ("-.inf" if value < 0 else ".inf")
    return repr(value)


def _path(parts: Sequence[Any]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


# -- YAML files -----------------------------------------------------------------------------------
def load_yaml_file(path: str | Path) -> dict[str, Any]:
    """Parse a YAML config file; a syntax error names the file, line and column (1-based)."""
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"config file {str(path)!r}: cannot be read ({err.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err)
        context = getattr(err, "context", None)
        start = getattr(err, "context_mark", None)
        if context and start is not None:
            context += f" started at line {start.line + 1}, column {start.column + 1}"
        detail = f"{problem} ({context})" if context else problem
        raise ConfigError(
            f"config file {str(path)!r}{where}: YAML syntax error: {' '.join(detail.split())}"
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"config file {str(path)!r}: must be a mapping of keys at the top level, got a "
            f"{type(data).__name__}; the keys are documented in {README}"
        )
    return data


def exit_on_yaml_error(path: str | Path) -> None:
    """For the Snakefile, before its ``configfile:``: if ``path`` exists and is not valid YAML,
    print the one line of :func:`load_yaml_file` (file, line, column) and exit with status 1.

    Snakemake's own message ("Config file is not valid JSON or YAML") names neither the file nor
    the line. A ``--configfile`` is parsed by Snakemake's command line before the Snakefile runs,
    so this cannot cover it: ``tvbo check-config FILE`` names the line there.
    """
    import sys

    if Path(path).is_file():
        try:
            load_yaml_file(path)
        except ConfigError as err:
            print(err, file=sys.stderr)
            raise SystemExit(1) from None


def _merge(base: dict[str, Any], update: Mapping[str, Any]) -> None:
    """Merge like Snakemake (nested maps key by key, anything else replaced)."""
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)


def load_config_files(paths: Sequence[str | Path],
                      overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The config Snakemake would see with ``--configfile PATHS --config OVERRIDES``.

    Files are merged in order (nested maps key by key); each ``KEY=VALUE`` override is parsed as
    YAML (``confirm_large=true`` is a boolean, ``seeds=[0,1]`` a list), as Snakemake does.
    """
    import yaml

    cfg: dict[str, Any] = {}
    for path in paths:
        _merge(cfg, load_yaml_file(path))
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--config {item!r}: expected KEY=VALUE")
        try:
            value = yaml.safe_load(text) if text else None
        except yaml.YAMLError as err:
            raise ConfigError(f"--config {item!r}: value is not valid YAML ({err})") from None
        _merge(cfg, {key.strip(): value})
    return cfg


def _reread(value: Any) -> Any:
    """A value of Snakemake's ``--config`` as YAML reads it: Snakemake tries int, float, its
    own booleans ('True'/'False' only) and then YAML's *base* loader, which leaves every scalar
    a string, so ``confirm_large=true`` arrived as the string 'true' and ``seeds=[0,1]`` as
    ['0', '1']. Each string leaf is read again with YAML's safe loader (``true`` -> True,
    ``0`` -> 0, ``null`` -> None), as ``tvbo check-config --config`` reads it."""
    import yaml

    if isinstance(value, dict):
        return {key: _reread(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_reread(item) for item in value]
    if not isinstance(value, str):
        return value
    try:
        parsed = yaml.safe_load(value)
    except yaml.YAMLError:
        return value
    return parsed if parsed is None or isinstance(parsed, bool | int | float) else value


def apply_command_line_overrides(cfg: dict[str, Any], overrides: Mapping[str, Any]) -> None:
    """Apply Snakemake's parsed ``--config KEY=VALUE`` values (``workflow.config_settings.
    overwrite_config``) to ``cfg`` again, every value read as YAML (:func:`_reread`), so the
    workflow's validator agrees with ``tvbo check-config`` (issue 24 item 4)."""
    _merge(cfg, {key: _reread(value) for key, value in overrides.items()})


# -- schema ---------------------------------------------------------------------------------------
def schema_path() -> Path:
    """``workflow/schemas/config.schema.yaml`` of the checkout this package lives in (an editable
    install, the workflow's case), else of the working directory (a repository checkout)."""
    relative = Path("workflow") / "schemas" / "config.schema.yaml"
    candidates = [Path(__file__).resolve().parents[1] / relative, Path.cwd() / relative]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"the config schema is in neither {candidates[0]} nor {candidates[1]} (tvbo is not a "
        "source checkout); give the path of workflow/schemas/config.schema.yaml (--schema)"
    )


def _load_schema(schema: str | Path | Mapping | None) -> Mapping[str, Any]:
    import yaml

    if isinstance(schema, Mapping):
        return schema
    return yaml.safe_load(Path(schema or schema_path()).read_text(encoding="utf-8"))


def _validator(schema: Mapping[str, Any]) -> Any:
    """A Draft 2020-12 validator that fills in ``default`` values, as Snakemake's validate."""
    from jsonschema import Draft202012Validator, validators

    base = Draft202012Validator.VALIDATORS["properties"]

    def properties(validator: Any, props: Mapping, instance: Any, sub: Mapping) -> Iterator:
        if isinstance(instance, dict):
            for name, spec in props.items():
                if isinstance(spec, Mapping) and "default" in spec and name not in instance:
                    instance[name] = copy.deepcopy(spec["default"])
        yield from base(validator, props, instance, sub)

    cls = validators.extend(Draft202012Validator, {"properties": properties})
    return cls(schema)


def _schema_at(schema: Mapping[str, Any], parts: Sequence[Any]) -> Mapping[str, Any]:
    """The sub-schema describing the object at ``parts`` (follows properties and $refs)."""
    node: Mapping[str, Any] = schema
    for part in parts:
        if "$ref" in node:
            node = _resolve(schema, node["$ref"])
        if isinstance(part, int):
            node = node.get("items", {})
        elif part in node.get("properties", {}):
            node = node["properties"][part]
        else:
            extra = node.get("additionalProperties", {})
            node = extra if isinstance(extra, Mapping) else {}
    if "$ref" in node:
        node = _resolve(schema, node["$ref"])
    return node


def _resolve(schema: Mapping[str, Any], ref: str) -> Mapping[str, Any]:
    node: Any = schema
    for key in ref.lstrip("#/").split("/"):
        node = node[key]
    return node


def _schema_error(error: Any, schema: Mapping[str, Any]) -> ConfigError:
    parts = list(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        props = _schema_at(schema, parts).get("properties", {})
        unknown = [key for key in error.instance if key not in props]
        key = unknown[0] if unknown else "?"
        where = f" in {_path(parts)}" if parts else ""
        close = difflib.get_close_matches(str(key), list(props), n=3, cutoff=0.6)
        hint = (f"did you mean {' or '.join(map(repr, close))}?" if close
                else f"valid keys{where}: {', '.join(props)}")
        return _fail(
            f"unknown key {key!r}{where} (Additional properties are not allowed "
            f"({key!r} was unexpected)); {hint} Every key is documented in {README}"
        )
    if error.validator == "propertyNames":
        parts = [*parts, error.instance]
    value = _show(error.instance)
    if len(value) > 80:
        value = value[:77] + "..."
    message = error.message if len(error.message) <= 200 else error.message[:197] + "..."
    hint = _string_number_hint(error.instance) if error.validator == "type" else ""
    return _fail(f"{_path(parts)}: {message} (got {value}{hint}; see {README})")


def _string_number_hint(value: Any) -> str:
    """YAML 1.1 (PyYAML, Snakemake) reads ``1e12`` or ``1.0e12`` -- an exponent without a dot
    or without a sign -- as a STRING: say so, and how to write the number (issue 24 item 10)."""
    if not isinstance(value, str):
        return ""
    try:
        number = float(value)
    except ValueError:
        return ""
    return (f": YAML read it as a string, not a number; write it with a dot and a signed "
            f"exponent, e.g. {number:.1e}".replace("e+0", "e+").replace("e-0", "e-"))


def _check_schema(cfg: dict[str, Any], schema: Mapping[str, Any]) -> None:
    from jsonschema.exceptions import best_match

    errors = list(_validator(schema).iter_errors(cfg))
    if errors:
        # an unknown key first: it explains most other errors (a misspelt key leaves a default)
        unknown = [e for e in errors if e.validator == "additionalProperties"]
        raise _schema_error(unknown[0] if unknown else best_match(errors), schema)


# -- individual checks ----------------------------------------------------------------------------
def _check_grid_not_empty(cfg: Mapping[str, Any]) -> None:
    """An empty grid key is named as such (runs = benchmarks x algorithms x seeds x speeds)."""
    empty = [key for key in GRID_KEYS if key in cfg and (cfg[key] is None or cfg[key] == [])]
    if empty:
        raise _fail(
            f"empty grid: {' and '.join(map(repr, empty))} "
            f"{'is' if len(empty) == 1 else 'are'} empty, so the campaign would have no run "
            "(runs = benchmarks x algorithms x seeds x speeds); give at least one benchmark "
            "(`tvbo list benchmarks`), algorithm (`tvbo list algorithms`), seed (integer >= 0) "
            "and speed (> 0)"
        )


def _non_finite(value: Any, parts: list[Any]) -> Iterator[tuple[list[Any], float]]:
    if isinstance(value, float) and not math.isfinite(value):
        yield parts, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if (not parts and key == "algorithm_options") or (
                    len(parts) == 2 and parts[0] == "benchmark_options" and key == "options"):
                continue  # opaque option maps: judged by the parts themselves (step 7)
            yield from _non_finite(item, [*parts, key])
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _non_finite(item, [*parts, i])


def _check_finite(cfg: Mapping[str, Any]) -> None:
    for parts, value in _non_finite(cfg, []):
        raise _fail(
            f"{_path(parts)}: {_show(value)} is not a finite number; give a finite value "
            f"(see {README})"
        )


def _check_names(kind: str, requested: Sequence[str], valid: Sequence[str]) -> None:
    """Reject names the registry does not know, listing the valid ones (one clear line)."""
    unknown = [name for name in requested if name not in valid]
    if unknown:
        raise _fail(f"unknown {kind}(s) {', '.join(map(repr, unknown))}; "
                    f"valid {kind}s: {', '.join(valid)}")


def _check_registry_names(cfg: Mapping[str, Any]) -> None:

    benchmarks, algorithms = benchmark_names(), algorithm_names()
    # an ablation is a new name built from a preset: {bolt-fifo: {preset: bolt, removal: oldest}}
    ablations = [name for name, opts in cfg["algorithm_options"].items() if "preset" in opts]
    _check_names("algorithm preset", [cfg["algorithm_options"][a]["preset"] for a in ablations],
                 algorithms)
    _check_names("benchmark", cfg["benchmarks"], benchmarks)
    _check_names("algorithm", cfg["algorithms"], algorithms + ablations)
    _check_names("benchmark", list(cfg["benchmark_options"]), benchmarks)
    _check_names("algorithm", list(cfg["algorithm_options"]), algorithms + ablations)
    for name, options in cfg["algorithm_options"].items():
        try:  # label / variant: a clear error (an unknown variant lists the valid ones)
            split_label_options(options)
        except ValueError as err:
            raise _fail(f"algorithm_options {name!r}: {err}") from None


def _load_plugins(cfg: Mapping[str, Any]) -> None:
    """Import the ``plugins`` modules and the installed plugin entry points (tvbo.plugins)."""

    try:
        plugins.load(cfg.get("plugins") or ())
    except plugins.PluginError as err:
        raise _fail(f"plugins: {err}") from None


#: the run options an entry of ``compute_per_algorithm`` sets (the others keep the campaign's)
COMPUTE_KEYS: tuple[str, ...] = ("compute", "profile", "polynomial")


def compute_values(cfg: Mapping[str, Any], algorithm: str) -> dict[str, Any]:
    """The compute options of ``algorithm``'s runs: its ``compute_per_algorithm`` entry (absent
    keys: counted's defaults) or, without one, the campaign's ``compute``/``profile``/
    ``polynomial`` (what the workflow passes to its jobs)."""
    entry = (cfg.get("compute_per_algorithm") or {}).get(algorithm)
    if entry is None:
        return {key: cfg.get(key, "counted" if key == "compute" else None)
                for key in COMPUTE_KEYS}
    return {"compute": entry.get("compute", "counted"), "profile": entry.get("profile"),
            "polynomial": entry.get("polynomial")}


def _check_compute_per_algorithm(cfg: Mapping[str, Any]) -> None:
    """Each entry names an algorithm of the grid and is a valid compute setting; with entries,
    the campaign's runs must be mergeable: ``counted`` (one profile) beside replays (``polynomial``
    with a response-time model), as ``tvbo merge`` accepts -- refused here, before any job,
    rather than by the merge after all of them."""
    entries = cfg.get("compute_per_algorithm") or {}
    if not entries:
        return

    for name in entries:
        if name not in cfg["algorithms"]:
            raise _fail(f"compute_per_algorithm: {name!r} is not an algorithm of the grid; "
                        f"algorithms: {', '.join(cfg['algorithms'])}")
    kinds: dict[str, str] = {}
    for name in cfg["algorithms"]:
        values = compute_values(cfg, name)
        try:
            runspec.check_run_options(values, style="api")
        except ValueError as err:
            where = f"compute_per_algorithm.{name}" if name in entries else "compute"
            raise _fail(f"{where}: {err}") from None
        replay = values["compute"] == "polynomial" and values["polynomial"] is None
        if replay:
            # lazy: numpy; only a config that replays a response-time model reads one
            from tvbo.sim.calibrate_runs import load_response_model

            modelled = load_response_model(values["profile"]).get("algorithm")
            if modelled != name:
                raise _fail(f"compute_per_algorithm.{name}.profile {values['profile']!r} is the "
                            f"response-time model of {modelled!r}, not of {name!r}")
        kinds[name] = ("replay" if replay else
                       f"counted with profile {values['profile'] or 'default'}"
                       if values["compute"] == "counted" else values["compute"])
    others = sorted({k for k in kinds.values() if k != "replay"})
    if len(others) > 1 or (len(others) == 1 and "replay" in kinds.values()
                           and not others[0].startswith("counted")):
        shown = ", ".join(f"{a}: {k}" for a, k in kinds.items())
        raise _fail(f"compute_per_algorithm: the runs could not be merged ({shown}); a campaign "
                    "mixes only counted runs (one profile) with replayed response-time models "
                    "(compute: polynomial, profile: R.yaml from tvbo calibrate --from-runs)")


def _check_plugins_report_work(cfg: Mapping[str, Any]) -> None:
    """Under ``compute: counted``, every plugin algorithm of the grid must report its work (or
    declare ``compute_free``): probed for a few iterations on the grid's first benchmark that
    needs no data file (tvbo.sim.work_probe), so a campaign is refused before any job rather
    than at each job's first iteration. Built-in algorithms are checked by the test suite."""

    grid_plugins = [name for name in cfg["algorithms"]
                    if compute_values(cfg, name)["compute"] == "counted"
                    and plugins.find("algorithms", name) is not None]
    benchmark = next((b for b in cfg["benchmarks"] if b not in DATA_BENCHMARKS), None)
    if not grid_plugins or benchmark is None:
        return
    # lazy: numpy, scipy, xarray, pandas, simpy (~1.5 s idle); every Snakemake job process
    # imports this module but checks with options=False, which probes nothing
    from tvbo.sim.work_probe import probe_work

    overrides = cfg["benchmark_options"].get(benchmark, {})
    for name in grid_plugins:
        bench = make_benchmark(benchmark, horizon=cfg["horizon"], cost_table=cfg["cost_table"],
                               cost=overrides.get("cost"), noise_var=overrides.get("noise_var"),
                               **dict(overrides.get("options", {})))
        algorithm = make_algorithm(
            name, **split_label_options(cfg["algorithm_options"].get(name))[0])
        try:
            probe_work(bench, algorithm)
        except ValueError as err:
            raise _fail(f"algorithms: {err}") from None


def _check_noise_protocols(cfg: Mapping[str, Any]) -> None:
    """A known protocol, and never beside an explicit noise_var (two sources for one number)."""
    # lazy: numpy and scipy (~0.6 s idle), only for a config naming a noise protocol
    from tvbo.benchmarks.noise import NOISE_PROTOCOLS

    for name, overrides in cfg["benchmark_options"].items():
        protocol = overrides.get("options", {}).get("noise_protocol")
        if protocol is None:
            continue
        if protocol not in NOISE_PROTOCOLS:
            raise _fail(
                f"benchmark_options.{name}.options.noise_protocol {protocol!r} is "
                f"unknown; valid noise protocols: {', '.join(NOISE_PROTOCOLS)}"
            )
        if protocol != "table" and overrides.get("noise_var") is not None:
            raise _fail(f"benchmark_options.{name} sets both noise_var and noise_protocol "
                        f"{protocol!r}; give one of them")


def _check_paper_aliases(cfg: Mapping[str, Any]) -> None:
    """paper_aliases maps an algorithm of a published table onto an algorithm of the campaign."""
    # lazy: pandas (~1 s idle), only for a config with paper aliases
    from tvbo.analysis.published import PAPERS, paper_table

    published = sorted({a for p in PAPERS for a in paper_table(p)["algorithm"]})
    for name, target in cfg["paper_aliases"].items():
        if name not in published:
            raise _fail(f"paper_aliases key {name!r} is no algorithm of a published table; "
                        f"valid keys: {', '.join(published)}")
        if target not in cfg["algorithms"]:
            raise _fail(f"paper_aliases {name!r} -> {target!r}, but {target!r} is not in the "
                        f"campaign's algorithms: {', '.join(cfg['algorithms'])}")


def _check_paper_figures(cfg: Mapping[str, Any]) -> None:
    """A paper's figures need that paper's algorithm in the grid (by name or preset)."""
    if not cfg.get("paper_figures"):
        return
    # lazy: matplotlib, xarray, pandas (~2 s idle), only for a config with paper figures
    from tvbo.analysis.paper_figures import check_paper_algorithms

    presets = [o.get("preset") for o in cfg["algorithm_options"].values() if isinstance(o, dict)]
    for paper in cfg["paper_figures"]:
        try:
            check_paper_algorithms(paper, [*cfg["algorithms"], *presets], "the config")
        except ValueError as err:
            raise _fail(f"paper_figures: {err}") from None


def _check_run_options(cfg: Mapping[str, Any], *, build: bool) -> None:
    """The run options (compute, profile, polynomial, horizon, time_grid_step, seeds, speeds,
    evaluators, overlap, pending, ...): the ONE check of :func:`tvbo.runspec.check_run_options`
    that ``tvbo run`` and :func:`tvbo.simulate` use too, on the config's keys. With ``build``,
    every algorithm of the grid is built to check that it can run with k > 1 evaluators or
    overlap (abo, sparq-gp-ucb cannot; model-free ones need pending: none)."""

    algorithms = None
    if build:

        def builder(name: str) -> Callable[[], Any]:
            return lambda: make_algorithm(name, **split_label_options(
                cfg["algorithm_options"].get(name, {}))[0])

        algorithms = {name: builder(name) for name in cfg["algorithms"]}
    if build and any(cfg.get(k) is not None for k in ("expert_cost", "expert_noise_var")):

        if not any(has_expert(algorithms[name]()) for name in cfg["algorithms"]):
            keys = [k for k in ("expert_cost", "expert_noise_var") if cfg.get(k) is not None]
            raise _fail(f"{' and '.join(keys)} set the expert that answers side queries, but no "
                        f"algorithm of the campaign asks any (only sparq-gp-ucb does); remove "
                        f"{' and '.join(keys)}")
    try:
        if build:  # the values passed the first pass: only the algorithms are judged now
            parallel = {k: cfg[k] for k in ("evaluators", "overlap", "pending")}
            runspec.check_parallel_options(parallel, style="config", algorithms=algorithms or {})
        else:
            runspec.check_run_options(cfg, style="config")
    except ValueError as err:
        raise _fail(str(err)) from None


# -- grid size ------------------------------------------------------------------------------------
def grid_size(cfg: Mapping[str, Any]) -> int:
    """Number of runs: benchmarks x algorithms x seeds x speeds (x evaluators x overlap)."""
    extra = [cfg[key] for key in PARALLEL_GRID_KEYS if isinstance(cfg.get(key), list)]
    return math.prod(len(cfg[key]) for key in GRID_KEYS) * math.prod(len(v) for v in extra)


def estimate_wall(cfg: Mapping[str, Any]) -> float:
    """A rough wall time of the grid in CPU-seconds: runs x :data:`SECONDS_PER_RUN` scaled by
    horizon / :data:`REFERENCE_HORIZON` (null horizon: the papers' 600 s). Real runs differ by
    benchmark and algorithm (``benchmarks/throughput.py`` measures a study); this is the order
    of magnitude a user needs before starting a grid this size."""
    horizon = cfg.get("horizon")
    if not isinstance(horizon, int | float) or not math.isfinite(horizon) or horizon <= 0:
        horizon = DEFAULT_HORIZON  # null (or not yet validated): the papers' horizon
    return grid_size(cfg) * SECONDS_PER_RUN * horizon / REFERENCE_HORIZON


def _check_grid_size(cfg: Mapping[str, Any]) -> None:
    runs = grid_size(cfg)
    if runs <= LARGE_GRID_RUNS or cfg.get("confirm_large") is True:
        return
    shape = " x ".join(f"{len(cfg[k])} {k}" for k in GRID_KEYS)
    hours = estimate_wall(cfg) / 3600
    horizon = estimate_wall(cfg) / runs / SECONDS_PER_RUN * REFERENCE_HORIZON
    raise _fail(
        f"the grid has {runs:,} runs ({shape}), more than {LARGE_GRID_RUNS:,}: about "
        f"{hours:,.0f} CPU-hours at ~{SECONDS_PER_RUN:g} s per {REFERENCE_HORIZON:g} s of "
        f"horizon per run (a rough constant, see tvbo/config_check.py; horizon "
        f"{horizon:g} s); if this is intended, add --config "
        "confirm_large=true (or confirm_large: true in the config file)"
    )


# -- options of the parts -------------------------------------------------------------------------
def _leaves(options: Mapping[str, Any], parts: tuple = ()) -> Iterator[tuple]:
    for key, value in options.items():
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, (*parts, key))
        elif key not in _STRUCTURAL:
            yield (*parts, key)


def _without(options: Mapping[str, Any], leaf: tuple) -> dict[str, Any]:
    out = copy.deepcopy(dict(options))
    node = out
    for key in leaf[:-1]:
        node = node[key]
    del node[leaf[-1]]
    return out


def _build_error(build: Callable[[dict], Any], options: Mapping[str, Any],
                 judged: tuple[type[BaseException], ...]) -> BaseException | None:
    try:
        build(copy.deepcopy(dict(options)))
    except judged as err:
        return err
    return None


def _culprit(build: Callable[[dict], Any], options: Mapping[str, Any],
             judged: tuple[type[BaseException], ...]) -> tuple:
    """The leaf whose removal makes the build succeed (the option at fault), or ()."""
    for leaf in _leaves(options):
        try:
            if _build_error(build, _without(options, leaf), judged) is None:
                return leaf
        except Exception:  # noqa: BLE001 - another failure without it: not this leaf
            continue
    return ()


def _get(options: Mapping[str, Any], leaf: tuple) -> Any:
    node: Any = options
    for key in leaf:
        node = node[key]
    return node


def _reject(prefix: str, options: Mapping[str, Any], build: Callable[[dict], Any],
            err: BaseException, judged: tuple[type[BaseException], ...]) -> ConfigError:
    leaf = _culprit(build, options, judged)
    where = ".".join([prefix, *map(str, leaf)])
    value = f" = {_show(_get(options, leaf))}" if leaf else ""
    return _fail(f"{where}{value}: {' '.join(str(err).split())}")


def _check_algorithm_options(cfg: Mapping[str, Any]) -> None:

    judged = (ValueError, TypeError, KeyError)
    for name, options in cfg["algorithm_options"].items():
        def build(opts: dict, name: str = name) -> Any:
            try:
                return make_algorithm(name, **opts)
            except OSError:  # a data file the options name (e.g. priors) is not there yet
                return None

        err = _build_error(build, options, judged)
        if err is not None:
            raise _reject(f"algorithm_options.{name}", options, build, err, judged)


def _check_benchmark_options(cfg: Mapping[str, Any]) -> None:

    for name, overrides in cfg["benchmark_options"].items():
        options = dict(overrides.get("options", {}))
        data = name in DATA_BENCHMARKS
        judged: tuple[type[BaseException], ...] = (
            (TypeError,) if data else (ValueError, TypeError, KeyError))

        def build(opts: dict, name: str = name, overrides: Mapping = overrides,
                  data: bool = data) -> Any:
            try:
                return make_benchmark(name, horizon=cfg["horizon"],
                                      cost_table=cfg["cost_table"], cost=overrides.get("cost"),
                                      noise_var=overrides.get("noise_var"), **opts)
            except TypeError:
                raise
            except OSError:  # a data file the options name is not there yet (a data rule)
                return None
            except Exception:
                if data:  # the data's own error: left to the data checks and the run
                    return None
                raise

        err = _build_error(build, options, judged)
        if err is not None:
            raise _reject(f"benchmark_options.{name}.options", options, build, err, judged)


# -- the validator --------------------------------------------------------------------------------
def check_config(cfg: dict[str, Any], *, schema: str | Path | Mapping | None = None,
                 options: bool = True) -> dict[str, Any]:
    """Validate ``cfg`` IN PLACE (schema defaults are filled in) and return it.

    ``schema``: the JSON Schema (a path or the parsed mapping; default :func:`schema_path`).
    ``options=False`` skips building the parts (steps 7 and 8 of the module docstring).
    Raises :class:`ConfigError` with one line naming the field, the value and what is valid.
    """
    if not isinstance(cfg, dict):
        raise _fail(f"must be a mapping of keys, got {type(cfg).__name__}; see {README}")
    _check_grid_not_empty(cfg)
    if all(isinstance(cfg.get(key), list) for key in GRID_KEYS):
        _check_grid_size(cfg)  # first: a huge grid costs the later checks seconds
    _check_finite(cfg)
    schema = _load_schema(schema)
    _check_schema(cfg, schema)
    _load_plugins(cfg)  # before any name is checked: plugin names are valid names
    _check_run_options(cfg, build=False)  # seeds < 2**63 before the names, as before
    _check_registry_names(cfg)
    _check_compute_per_algorithm(cfg)
    _check_noise_protocols(cfg)
    _check_paper_aliases(cfg)
    _check_paper_figures(cfg)
    if options:
        _check_algorithm_options(cfg)
        _check_benchmark_options(cfg)
        _check_run_options(cfg, build=True)  # evaluators/overlap vs the algorithms built
        _check_plugins_report_work(cfg)
    return cfg
