"""The RunSpec: ONE declaration of every option of a simulation run (issue 11 item 5).

A run option (``compute``, ``warmup``, ``expert_cost``, ...) used to be written in five or six
places: the config JSON schema, ``workflow/rules/common.smk``, the ``tvbo run`` and ``tvbo
run-many`` flags, the keywords of :func:`tvbo.simulate` and :class:`tvbo.sim.engine.
EngineOptions`. Here each option is declared once -- name, type, default, bounds or choices,
help, and where it applies (config key, CLI flag, API keyword, how the workflow passes it) -- and
every other place is GENERATED from, or CHECKED against, this declaration:

* ``tvbo run`` / ``tvbo run-many`` flags: generated (:func:`tvbo.cli._run_options` loops over
  :data:`RUN_SPEC`; their values reach :func:`tvbo.simulate` by name);
* :func:`tvbo.simulate` keywords and defaults: checked (``tests/test_runspec.py``: every option
  is a keyword with the same default, and every keyword is an option or in :data:`API_ONLY`);
* the config schema's run-option properties: generated (``python scripts/write_config_schema.py``
  rewrites ``workflow/schemas/config.schema.yaml`` from :func:`schema_properties`; a test checks
  the committed file equals the generated one);
* the Snakemake rule parameters: generated (``common.smk`` calls :func:`workflow_values` and
  :func:`cli_args`);
* :class:`~tvbo.sim.engine.EngineOptions`: built from the checked options
  (:meth:`CheckedRun.engine_options`); its fields and defaults are checked against the options
  marked ``engine=True``, and it judges no value itself (the bounds are typed here only).

Adding an option: declare it below, regenerate the schema, give :func:`tvbo.simulate` (and, if
the engine needs it, ``EngineOptions``) the keyword; the tests name every place still missing.

:func:`check_run_options` is the ONE function of the per-field and cross-field checks (compute vs
polynomial vs profile, time-grid step vs horizon, seed range, pending strategy, evaluators /
overlap vs the algorithm), used by the API, the CLI and the config validator
(:mod:`tvbo.config_check`, which the workflow runs at parse time). Its errors are one line naming
the field as the caller spells it (API keyword, ``--flag`` or config key), the value and what is
valid. It returns a :class:`CheckedRun`, which only it can make: ``tvbo run`` hands its checked
flags to :func:`tvbo.api.simulate_checked` and the API builds the engine's options from them, so
each value is judged once per process (issue 25 item 3; ``tests/test_runspec.py`` counts).

Layering: this module sits with ``cli``/``api``/``config_check`` at the top; at import it uses the
standard library, the static catalogue :mod:`tvbo.registry` and the run-size guard
:mod:`tvbo.resources` (standard library only), so ``tvbo --help`` stays lean, and
:func:`check_run_options` imports ``tvbo.sim`` and ``tvbo.acquisition`` lazily, only for the
checks that need them: a built-in name (``RunOption.known``) is accepted without
importing its registry, which is read only to judge another name or to list the valid ones.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import import_module
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, Literal

from tvbo.registry import PENDING_STRATEGIES
from tvbo.resources import check_resources

if TYPE_CHECKING:  # pragma: no cover - the engine (numpy, simpy) loads only when a run starts
    from tvbo.sim.engine import EngineOptions

__all__ = [
    "API_ONLY",
    "CLI_ONLY",
    "KINDS",
    "REQUIRED",
    "RUN_SPEC",
    "SEED_LIMIT",
    "WORKFLOW_PLACES",
    "CheckedRun",
    "RunOption",
    "check_parallel_options",
    "check_run_options",
    "cli_args",
    "option",
    "render_schema",
    "render_schema_text",
    "schema_properties",
    "workflow_values",
]


class _Required:
    """The default of an option the caller must give (benchmark, algorithm)."""

    def __repr__(self) -> str:
        return "REQUIRED"


#: the default of an option without one (API positional argument, CLI ``required=True``)
REQUIRED: Any = _Required()
#: the config schema gets no ``default`` for this option (per-benchmark overrides: absent = none)
NO_CONFIG_DEFAULT: Any = _Required()

#: seeds are written as the int64 ``seed`` coordinate of the run file: 2**63 and above cannot be
#: stored (numpy's SeedSequence takes any non-negative integer, so the run would fail only when
#: it is written)
SEED_LIMIT = 2**63

Kind = Literal["name", "int", "float", "floats", "bool", "str", "path", "object"]
#: value types: a registry name, an integer, a finite real, a non-empty list of finite reals, a
#: boolean, a non-empty string (choices or a registry), a file name, a JSON object
KINDS: tuple[str, ...] = ("name", "int", "float", "floats", "bool", "str", "path", "object")

#: how the workflow passes an option to ``tvbo run`` (common.smk):
#: wildcard -- a grid dimension in the run file's name (benchmark, algorithm, seed, speed);
#: campaign -- a campaign-wide config key, rendered by simulate_options;
#: benchmark -- a flag of benchmark_configuration_args, shared with ``tvbo oracle`` (one
#: configuration of the benchmark, so a run and its oracle table never drift apart);
#: algorithm -- algorithm_options.<name>, without its label/variant;
#: parallel -- the run file's parallel suffix (parallel_options);
#: input -- an input file of the rule (the shared oracle table);
#: none -- not set by the workflow (the CLI default applies; the reason is in ``workflow_note``)
WORKFLOW_PLACES: tuple[str, ...] = ("wildcard", "campaign", "benchmark", "algorithm", "parallel",
                                    "input", "none")

Style = Literal["api", "cli", "config"]


@dataclass(frozen=True)
class RunOption:
    """One run option, declared once.

    ``name`` is the :func:`tvbo.simulate` keyword and the key :func:`check_run_options` reads in
    API style. ``flag`` is the ``tvbo run`` flag ("" = derived: ``--`` + name with dashes; None =
    none). ``config`` is the config path ("" = none): a top-level key (``compute``), a grid key
    whose list gives one run per value (``grid=True``: seeds, speeds, ...), or a path through
    per-name maps where ``*`` stands for the benchmark / algorithm (``benchmark_options.*.cost``).
    """

    name: str
    kind: Kind
    default: Any
    help: str
    nullable: bool = False
    #: lower bound; ``exclusive`` makes it strict (> instead of >=)
    minimum: float | None = None
    exclusive: bool = False
    maximum: float | None = None
    #: the valid values (static); ``registry`` names a function ``module:function`` returning
    #: them at check time (a registry that plug-ins extend, e.g. the pending strategies)
    choices: tuple[str, ...] | None = None
    registry: str | None = None
    #: names of a ``registry`` option valid without reading the registry (its built-ins, from the
    #: static catalogue :mod:`tvbo.registry`): a run's check of a built-in name then imports
    #: nothing; any other value (a plug-in's name, or a typo to report with the valid list) reads
    #: the registry. ``tests/test_runspec.py`` checks they are registered names.
    known: tuple[str, ...] = ()
    #: what a value is, in "<field>: unknown <noun> 'x'; valid: ..." (default: "unknown
    #: <field> 'x'"); the CLI then leaves the choices to check_run_options, not to argparse
    noun: str = ""
    metavar: str | None = None
    flag: str | None = ""
    config: str = ""
    grid: bool = False
    #: the config's default when it differs from the API's (a grid's list; NO_CONFIG_DEFAULT)
    config_default: Any = None
    #: the schema's description (default: ``help``)
    config_help: str | None = None
    workflow: str = "none"
    workflow_note: str = ""
    #: how one element of a list value is named in messages ({i} = its index)
    item_label: str = "[{i}]"
    #: the EngineOptions field of the same name (checked by tests/test_runspec.py)
    engine: bool = False
    #: may the config hold null (None = as ``nullable``; a config writes {} for no options)
    config_null: bool | None = None

    @property
    def cli_flag(self) -> str | None:
        """The ``tvbo run`` flag (None: the CLI has none)."""
        if self.flag is None:
            return None
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def config_key(self) -> str | None:
        """The top-level config key (None: not in the config)."""
        return self.config.split(".")[0] if self.config else None

    def field_name(self, style: Style) -> str:
        """The option as the caller spells it: API keyword, ``--flag`` or config key."""
        if style == "cli" and self.cli_flag:
            return self.cli_flag
        if style == "config" and self.config:
            return self.config
        return self.name

    def valid_choices(self) -> tuple[str, ...] | None:
        """The static choices, or the registry's current names (imported lazily)."""
        if self.registry is None:
            return self.choices
        module, _, function = self.registry.partition(":")
        return tuple(getattr(import_module(module), function)())


_NAME_OPTIONS = dict(kind="name", default=REQUIRED, metavar="NAME", workflow="wildcard")

#: every run option, in the order the workflow writes its flags (kept: a reordered flag changes
#: the rules' shell commands, which makes Snakemake rerun finished jobs)
RUN_SPEC: tuple[RunOption, ...] = (
    RunOption("benchmark", help="benchmark name (see `tvbo list benchmarks`)",
              config="benchmarks", grid=True, config_default=NO_CONFIG_DEFAULT,
              config_help="Benchmark names (see `tvbo list benchmarks`), each simulated with "
              "every algorithm.", **_NAME_OPTIONS),
    RunOption("algorithm", help="algorithm name (see `tvbo list algorithms`)",
              config="algorithms", grid=True, config_default=NO_CONFIG_DEFAULT,
              config_help="Algorithm names (see `tvbo list algorithms`).", **_NAME_OPTIONS),
    RunOption("seed", "int", 0, "random seed", minimum=0, config="seeds", grid=True,
              config_default=[0, 1, 2], workflow="wildcard",
              config_help="Random seeds; one run per seed (the papers use 10 replicates)."),
    RunOption("speed", "float", 1.0, "hardware speed factor: every compute time is divided by it",
              minimum=0, exclusive=True, config="speeds", grid=True, config_default=[1.0],
              workflow="wildcard",
              config_help="Hardware speed factors (> 0): every compute time is divided by the "
              "speed. 1 = the reference hardware; 10 = \"what if the hardware were 10x "
              "faster\"."),
    RunOption("compute", "str", "counted",
              "compute-time model: counted (deterministic work x hardware profile), measured "
              "(CPU time) or polynomial (explicit R(n))",
              choices=("counted", "measured", "polynomial"), noun="compute model",
              metavar="MODEL", config="compute",
              workflow="campaign",
              config_help="Compute-time model. counted = deterministic work counts x hardware "
              "profile (bit-identical on every machine); measured = CPU time of each "
              "phase; polynomial = explicit R(n)."),
    RunOption("warmup", "int", 15, "random warm-up queries before the algorithm takes over",
              minimum=0, config="warmup", workflow="campaign", engine=True,
              config_help="Number of uniform random warm-up queries before the algorithm takes "
              "over."),
    RunOption("time_grid_step", "float", 1.0,
              "step (s) of the time grid on which the time-integrated regret is computed",
              minimum=0, exclusive=True, metavar="SECONDS", config="time_grid_step",
              workflow="campaign", engine=True,
              config_help="Step (s) of the time grid on which the time-integrated regret is "
              "computed."),
    RunOption("stamp", "str", "sample",
              "time stamp stored with an observation: sample = its true sample time, decide = "
              "the time the algorithm read the clock (what the W-DBO reference code does)",
              choices=("sample", "decide"), config="stamp", workflow="campaign", engine=True,
              config_help="Time stamp stored with an observation: sample = its true sample time "
              "(default), decide = the time the algorithm read the clock (what the "
              "W-DBO reference code does)."),
    RunOption("profile", "path", None,
              "hardware profile of compute counted: a packaged name or a YAML written by "
              "`tvbo calibrate`; none = the packaged default",
              nullable=True, metavar="NAME|PATH", config="profile", workflow="campaign",
              config_help="Hardware profile of the counted model: a packaged profile name or a path"
              " to a YAML written by `tvbo calibrate` (relative to the working "
              "directory). null = the packaged default."),
    RunOption("polynomial", "floats", None,
              "R(n) = a0 + a1 n + a2 n^2 + ... seconds, for compute polynomial (required there, "
              "rejected otherwise); each a_i >= 0",
              nullable=True, minimum=0, metavar="A0,A1,...", config="polynomial",
              workflow="campaign", item_label=" a{i}",
              config_help="Coefficients a0, a1, ... (seconds) of R(n) = a0 + a1 n + a2 n^2 + ... "
              "for compute: polynomial (required there, rejected otherwise); each >= 0."),
    RunOption("lookahead", "bool", False,
              "optimise the acquisition at the predicted sample time instead of the decision time",
              config="lookahead", workflow="campaign", engine=True,
              config_help="Optimise the acquisition at the predicted sample time instead of the "
              "decision time."),
    RunOption("max_iterations", "int", None,
              "stop a run after this many iterations (none = run until the horizon)",
              nullable=True, minimum=1, metavar="N", config="max_iterations",
              workflow="campaign", engine=True,
              config_help="Stop a run after this many iterations (null = run until the horizon)."),
    # > 0: the expert is a participant of the simulation; a free expert would sell unlimited side
    # information in no time (and an infinite cost, refused as not finite, would stall the clock)
    RunOption("expert_cost", "float", None,
              "seconds per answer of the expert that answers side queries (SparQ-GP-UCB); none = "
              "the benchmark's evaluation cost; > 0: the expert is a participant of the "
              "simulation",
              nullable=True, minimum=0, exclusive=True, metavar="SECONDS", config="expert_cost",
              workflow="campaign", engine=True,
              config_help="Seconds per answer of the expert that answers side queries (SparQ-GP-"
              "UCB); null = the benchmark's evaluation cost. Must be > 0: the expert is"
              " a participant of the simulation."),
    RunOption("expert_noise_var", "float", None,
              "noise variance of the expert's answers; none = the benchmark's noise variance",
              nullable=True, minimum=0, metavar="VAR", config="expert_noise_var",
              workflow="campaign", engine=True,
              config_help="Noise variance of the expert's answers; null = the benchmark's noise "
              "variance."),
    RunOption("recommendation", "str", None,
              "record the regret of this recommendation at each instant (regret_current): "
              "latest (the latest completed query) or posterior-mean (the in-sample "
              "posterior-mean maximiser); none = not recorded",
              nullable=True, choices=("latest", "posterior-mean"), config="recommendation",
              workflow="campaign", engine=True,
              config_help="Record the regret of this recommendation at each instant "
              "(regret_current): latest (the latest completed query) or posterior-mean "
              "(the in-sample posterior-mean maximiser); null = not recorded."),
    RunOption("cost_table", "str", "metronome",
              "published noise/cost table: metronome = Table 3 of \"TVBO without a metronome\" "
              "(BOLT), icml = Table 2 of \"Optimizing through change\" (ICML); they differ for "
              "Shekel, Hartmann-3, Powell and Temperature",
              choices=("metronome", "icml"), config="cost_table", workflow="benchmark",
              config_help="Published noise/cost table: metronome = Table 3 of \"TVBO without a "
              "metronome\" (BOLT), icml = Table 2 of \"Optimizing through change\" (ICML)."
              " They differ for Shekel, Hartmann-3, Powell and Temperature."),
    RunOption("horizon", "float", None,
              "virtual time horizon H in seconds; none = each benchmark's default (600 s)",
              nullable=True, minimum=0, exclusive=True, metavar="SECONDS", config="horizon",
              workflow="benchmark",
              config_help="Virtual time horizon H in seconds (> 0); null = each benchmark's default"
              " (600 s)."),
    RunOption("cost", "float", None,
              "evaluation cost c in seconds (>= 0; 0 is a valid what-if); none = the table's",
              nullable=True, minimum=0, metavar="SECONDS", config="benchmark_options.*.cost",
              config_default=NO_CONFIG_DEFAULT, workflow="benchmark",
              config_help="Evaluation cost c in seconds (>= 0); null = the table's."),
    RunOption("noise_var", "float", None,
              "observation noise variance (>= 0); none = the table's",
              nullable=True, minimum=0, metavar="VAR", config="benchmark_options.*.noise_var",
              config_default=NO_CONFIG_DEFAULT, workflow="benchmark",
              config_help="Observation noise variance (>= 0); null = the table's."),
    RunOption("benchmark_options", "object", None,
              "further options of the benchmark's factory (JSON object), e.g. "
              "{\"path\": \"data/intel/intel_2004-03-06.nc\"} for the real-data benchmarks or "
              "{\"scenario_seed\": 1} for wlan; the benchmark names unknown options",
              nullable=True, metavar="JSON", config="benchmark_options.*.options",
              config_default={}, config_null=False, workflow="benchmark",
              config_help="Further options passed to the benchmark's factory as JSON (`tvbo run "
              "--benchmark-options`), e.g. {path: data/intel/intel_2004-03-06.nc} for "
              "the real-data benchmarks or {scenario_seed: 1} for wlan; the benchmark "
              "names unknown options."),
    RunOption("algorithm_options", "object", None,
              "options of the algorithm (JSON object), validated by the algorithm, which names "
              "unknown options",
              nullable=True, metavar="JSON", config="algorithm_options.*",
              config_default=NO_CONFIG_DEFAULT, workflow="algorithm"),
    # at most 64: a SimPy process per evaluator; a larger k is a different regime -- batch BO --
    # that the engine does not model
    RunOption("evaluators", "int", 1,
              "asynchronous evaluators k (tvbo.sim.parallel); 1 = the sequential loop",
              minimum=1, maximum=64, metavar="K", config="evaluators", grid=True,
              config_default=[1], workflow="parallel", engine=True,
              config_help="Numbers of asynchronous evaluators k (a grid dimension like speeds; "
              "tvbo.sim.parallel). 1 = the sequential loop (today's run files, "
              "unchanged). Integers in [1, 64]."),
    RunOption("pending", "str", "hallucinate",
              "how the acquisition treats queries still running with k > 1 or overlap: "
              "hallucinate (GP-BUCB), kriging-believer, constant-liar-min|mean|max, none",
              registry="tvbo.acquisition.pending:pending_names", noun="pending strategy",
              known=PENDING_STRATEGIES,
              metavar="NAME",
              config="pending", workflow="parallel", engine=True,
              config_help="How the acquisition treats queries still running with k > 1 or overlap: "
              "hallucinate (GP-BUCB), kriging-believer, constant-liar-min|mean|max, "
              "none."),
    RunOption("overlap", "bool", False,
              "compute the next query while evaluations run (not for abo or sparq-gp-ucb)",
              config="overlap", grid=True, config_default=[False], workflow="parallel",
              engine=True,
              config_help="Compute the next query while evaluations run (a grid dimension: [false],"
              " [true] or [false, true]). Not for abo or sparq-gp-ucb."),
    # at most 10: a Gamma with cv 10 has shape 0.01 (almost every draw ~0, a rare one enormous);
    # beyond that it is no longer a duration model
    RunOption("cost_cv", "float", None,
              "coefficient of variation of each evaluation's duration: durations are Gamma "
              "distributed with mean c (the cost) and this CV, drawn from a random stream of their "
              "own, so evaluations finish out of order with k > 1; none or 0 = every evaluation "
              "takes exactly c",
              nullable=True, minimum=0.0, maximum=10.0, metavar="CV", config="cost_cv",
              workflow="campaign", engine=True),
    RunOption("oracle_table", "path", None,
              "f*(t) table written by `tvbo oracle` for this benchmark configuration (default: "
              "the run builds its own; a table for another configuration is an error)",
              nullable=True, metavar="FILE", workflow="input",
              workflow_note="the rule's input (rule oracle_table), switched by the config key "
              "oracle_tables"),
    RunOption("threads", "int", 1,
              "BLAS threads during the simulation (1: fastest for tvbo's small dense problems "
              "and never oversubscribes shared cores; the API's None leaves them alone)",
              nullable=True, minimum=1, metavar="N",
              workflow_note="a workflow job runs with the rule's threads (1): the CLI default"),
    RunOption("confirm_large", "bool", False,
              "run although the run's estimated peak memory exceeds the limit of one run "
              "(tvbo.resources.MEMORY_LIMIT, 4 GiB) or --threads exceeds the machine's cores",
              config="confirm_large", workflow="campaign",
              config_help="Confirm a large campaign: allows a grid of more than 5000 runs and "
              "runs whose estimated peak memory exceeds the 4 GiB limit of one run (tvbo run "
              "--confirm-large; see tvbo/resources.py)."),
)

#: :func:`tvbo.simulate` keywords that are not run options (how the caller watches a run)
API_ONLY: dict[str, str] = {"progress": "a callback of the caller, not a setting of the run"}
#: ``tvbo run`` / ``run-many`` flags that are not run options (where and how loudly to write)
CLI_ONLY: dict[str, str] = {
    "out": "the run file(s) to write",
    "quiet": "no progress on stderr",
    "seeds": "tvbo run-many's seeds: the seed option, one run per value",
    "plugin": "plugin modules to import first (tvbo.plugins): they add names, they are not a "
              "setting of the run (the config key plugins is passed by the workflow)",
}

_BY_NAME: dict[str, RunOption] = {o.name: o for o in RUN_SPEC}


def option(name: str) -> RunOption:
    """The declaration of run option ``name``."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown run option {name!r}; valid: {', '.join(_BY_NAME)}") from None


def _spec() -> tuple[RunOption, ...]:
    """The current declaration (a module attribute, so a test can add an option)."""
    return RUN_SPEC


# -- per-field checks -----------------------------------------------------------------------------
def _is_bool(value: Any) -> bool:
    # numpy.bool_ (numpy 1) is spelt numpy.bool in numpy 2
    return isinstance(value, bool) or (type(value).__module__ == "numpy"
                                       and type(value).__name__ in ("bool_", "bool"))


def _bound(opt: RunOption) -> str:
    """The valid range in words: '> 0', '>= 1', 'in [1, 64]'."""
    low = "" if opt.minimum is None else f"{opt.minimum:g}"
    if opt.maximum is not None:
        return f"in [{low}, {opt.maximum:g}]" if low else f"<= {opt.maximum:g}"
    if low:
        return f"{'>' if opt.exclusive else '>='} {low}"
    return ""


def _in_range(opt: RunOption, value: float) -> bool:
    if opt.minimum is not None and not (value > opt.minimum if opt.exclusive
                                        else value >= opt.minimum):
        return False
    return opt.maximum is None or value <= opt.maximum


def _check_number(opt: RunOption, where: str, value: Any, *, integer: bool,
                  nullable: bool) -> None:
    if integer:
        ok = not _is_bool(value) and isinstance(value, Integral) and _in_range(opt, value)
        what = "an integer"
    else:
        ok = (not _is_bool(value) and isinstance(value, Real) and math.isfinite(value)
              and _in_range(opt, value))
        what = "a finite number"
    if not ok:
        rng = _bound(opt)
        raise ValueError(f"{where} must be {what}{' ' + rng if rng else ''}"
                         f"{' or None' if nullable else ''}, got {value!r}")


def _check_field(opt: RunOption, where: str, value: Any) -> None:
    """Type, bounds and choices of one value of ``opt`` (named ``where`` in messages)."""
    if value is None:
        if not opt.nullable:
            raise ValueError(f"{where} must be given (not None)")
        return
    if opt.kind == "name":  # a registry name or an instance: the registries judge them
        return
    if opt.kind in ("int", "float"):
        _check_number(opt, where, value, integer=opt.kind == "int", nullable=opt.nullable)
    elif opt.kind == "floats":
        if isinstance(value, str | bytes) or not isinstance(value, Sequence) or not value:
            raise ValueError(f"{where} must be a non-empty list of numbers, got {value!r}")
        for i, item in enumerate(value):
            _check_number(opt, where + opt.item_label.format(i=i), item, integer=False,
                          nullable=False)
    elif opt.kind == "bool":
        if not _is_bool(value):
            raise ValueError(f"{where} must be true or false, got {value!r}")
    elif opt.kind == "object":
        if not isinstance(value, Mapping):
            raise ValueError(f"{where} must be a mapping (a JSON object), got {value!r}")
    elif opt.kind == "path":
        if not isinstance(value, str | os.PathLike) or not str(value):
            raise ValueError(f"{where} must be a non-empty name or path, got {value!r}")
    elif opt.kind == "str":
        if isinstance(value, str) and value in opt.known:
            return  # a built-in name: valid without importing the registry's module
        valid = opt.valid_choices()
        if not isinstance(value, str) or (valid is not None and value not in valid):
            shown = ", ".join(valid) if valid is not None else "a non-empty string"
            none = " (or None)" if opt.nullable else ""
            what = f"{where}: unknown {opt.noun}" if opt.noun else f"unknown {where}"
            raise ValueError(f"{what} {value!r}; valid: {shown}{none}")
    else:  # pragma: no cover - a declaration error, caught by tests/test_runspec.py
        raise AssertionError(f"run option {opt.name!r}: unknown kind {opt.kind!r}")


def _values(opt: RunOption, options: Mapping[str, Any], style: Style
            ) -> Iterator[tuple[str, Any]]:
    """(name in messages, value) of ``opt`` in ``options``: one per grid value in a config."""
    if style == "config":
        if not opt.config or "*" in opt.config or opt.config_key not in options:
            return  # per-name maps (benchmark_options.*) are checked by the schema
        value = options[opt.config_key]
        if opt.grid:
            for i, item in enumerate(value or []):
                yield f"{opt.config}[{i}]", item
        else:
            yield opt.config, value
        return
    if opt.name in options:
        yield opt.field_name(style), options[opt.name]


def _get(opt: RunOption, options: Mapping[str, Any], style: Style) -> Any:
    """The value of ``opt`` in ``options``, else its default (in a config: the config's)."""
    if style == "config":
        default = opt.default if opt.config_default is None else opt.config_default
        if not opt.config or "*" in opt.config:  # not a campaign-wide key
            return default
        return options.get(opt.config_key, default)
    return options.get(opt.name, opt.default)


def _check_seed(where: str, value: int) -> None:
    if not value < SEED_LIMIT:
        raise ValueError(
            f"{where}: {value} is out of range; a seed must be an integer with "
            f"0 <= seed < 2**63 = {SEED_LIMIT} (the run file stores it as int64)")


# -- the one function -------------------------------------------------------------------------
def check_run_options(options: Mapping[str, Any], *, style: Style = "api",
                      algorithms: Mapping[str, Callable[[], Any]] | None = None
                      ) -> CheckedRun | None:
    """Check the run options in ``options``; raise ``ValueError`` (one line) at the first fault.

    Returns the :class:`CheckedRun` of one run's options (API and CLI styles; None for a
    config), the only way to obtain one: a :class:`CheckedRun` given back is returned as it is,
    unchecked (it was checked in this process), so a value passes this function once.

    ``options`` maps option names to one run's values (``style="api"`` or ``"cli"``, where
    messages name the keyword or the ``--flag``), or is a campaign config (``style="config"``:
    config keys, grid keys hold lists and every value is checked; messages name the config
    path). Options absent from ``options`` are not checked (their defaults are valid).

    Per field: type, bounds and choices of the declaration (a registry's choices are read now).
    Across fields: the seed fits the run file's int64; ``polynomial`` is given exactly when
    ``compute`` is polynomial; ``profile`` only with ``compute`` counted, and it loads;
    ``time_grid_step`` <= ``horizon``; with k > 1 evaluators or overlap, every algorithm of
    ``algorithms`` (name -> a function building it, called only then) can run that way under
    the ``pending`` strategy (:func:`tvbo.sim.parallel.check_parallel` names the reason).
    """
    if isinstance(options, CheckedRun):
        return options
    spec = {o.name: o for o in _spec()}
    for opt in spec.values():
        for where, value in _values(opt, options, style):
            _check_field(opt, where, value)
            if opt.name == "seed":
                _check_seed(where, value)

    def name(key: str) -> str:
        return spec[key].field_name(style)

    def value(key: str) -> Any:
        return _get(spec[key], options, style)

    compute, polynomial = value("compute"), value("polynomial")
    profile = value("profile")
    C, P, PR = name("compute"), name("polynomial"), name("profile")
    # polynomial with a profile and no coefficients: a response-time model file replays an
    # algorithm (tvbo calibrate --from-runs; tvbo.sim.compute.ResponseTimeModel)
    replay = compute == "polynomial" and profile is not None and polynomial is None
    if not replay and (compute == "polynomial") != (polynomial is not None):
        shown = None if polynomial is None else ",".join(f"{a:g}" for a in polynomial)
        raise ValueError(" ".join(
            f"{P} (coefficients A0,A1,... of R(n)) must be set exactly when compute is "
            f"'polynomial' ({C} polynomial needs {P} A0,A1,... or {PR} R.yaml from tvbo "
            f"calibrate --from-runs); got {C} {compute}, {P} {shown}".split()))
    if profile is not None and not (compute == "counted" or replay):
        raise ValueError(f"{PR} applies only to compute 'counted' ({PR} needs {C} counted, or "
                         f"{C} polynomial without {P}: a response-time model from tvbo "
                         f"calibrate --from-runs), got {C} {compute}")
    horizon, step = value("horizon"), value("time_grid_step")
    if horizon is not None and step > horizon:
        raise ValueError(f"{name('time_grid_step')} {step:g} exceeds {name('horizon')} "
                         f"{horizon:g}")
    if isinstance(profile, str | os.PathLike):
        _check_profile(PR, profile, replay=replay)
    _check_sanity(options, style, spec, name, value)
    _check_parallel(options, style, spec, algorithms)
    if style == "config":
        return None
    return CheckedRun(_TRUSTED, {opt.name: _get(opt, options, style) for opt in spec.values()})


def check_parallel_options(options: Mapping[str, Any], *, style: Style = "api",
                           algorithms: Mapping[str, Callable[[], Any]]) -> None:
    """Only the cross-check of ``evaluators`` / ``overlap`` / ``pending`` against the algorithms
    (see :func:`check_run_options`), for a caller whose values already passed
    :func:`check_run_options` without the algorithms (the config validator builds the
    algorithms in a second step, after their options are judged): the values are not judged
    again."""
    _check_parallel(options, style, {o.name: o for o in _spec()}, algorithms)


#: the key only :func:`check_run_options` holds: a :class:`CheckedRun` made elsewhere is refused
_TRUSTED = object()


class CheckedRun(Mapping[str, Any]):
    """One run's options after :func:`check_run_options`: option name -> value, every option of
    :data:`RUN_SPEC` present (an absent one has its default), read-only.

    Why a type of its own: the API, the engine and ``tvbo run`` each used to judge the same
    value again (three checks per ``tvbo run`` process); a value wrapped here has been judged in
    this process, so a receiver of a ``CheckedRun`` trusts it and checks nothing. Only
    :func:`check_run_options` can make one (a private key), so holding one proves the check.
    """

    __slots__ = ("_values",)

    def __init__(self, key: object, values: Mapping[str, Any]) -> None:
        if key is not _TRUSTED:
            raise TypeError("a CheckedRun is made by tvbo.runspec.check_run_options only")
        self._values = dict(values)

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"CheckedRun({self._values!r})"

    def with_seed(self, seed: Any, *, style: Style = "api") -> CheckedRun:
        """The same run with another seed (``tvbo run-many``): only the seed is judged, the one
        option no cross-field check reads but its own range."""
        opt = option("seed")
        where = opt.field_name(style)
        _check_field(opt, where, seed)
        _check_seed(where, seed)
        return CheckedRun(_TRUSTED, {**self._values, "seed": seed})

    def engine_options(self) -> EngineOptions:
        """The :class:`~tvbo.sim.engine.EngineOptions` of this run, built from the declarations
        marked ``engine=True`` (the engine trusts them: it checks nothing again). Integers and
        floats are made plain Python numbers (numpy scalars from a caller's array would
        otherwise reach the run file's JSON configuration)."""
        # lazy: numpy and simpy; tvbo --help loads this module (tests/test_startup.py)
        from tvbo.sim.engine import EngineOptions

        plain = {"int": int, "float": float, "bool": bool}
        values = {}
        for opt in _spec():
            if opt.engine:
                value = self._values[opt.name]
                values[opt.name] = value if value is None else plain.get(opt.kind, _same)(value)
        return EngineOptions(**values)


def _same(value: Any) -> Any:
    return value


#: the speed factors a run accepts: beyond them a compute time overflows or vanishes in
#: floating point (``--speed 1e-300`` made every charge infinite and the run NaN)
SPEED_RANGE: tuple[float, float] = (1e-6, 1e6)


def _check_sanity(options: Mapping[str, Any], style: Style, spec: Mapping[str, RunOption],
                  name: Callable[[str], str], value: Callable[[str], Any]) -> None:
    """Values each valid alone that give a meaningless or unbounded run together (issue 24
    items 3 and 10): a speed beyond :data:`SPEED_RANGE`, no query after the warm-up, and the
    resource guard (memory estimate, threads; :func:`tvbo.resources.check_resources`)."""
    low, high = SPEED_RANGE
    for where, speed in _values(spec["speed"], options, style):
        if isinstance(speed, int | float) and not low <= speed <= high:
            raise ValueError(f"{where} {speed:g} is outside [{low:g}, {high:g}]: every compute "
                             "time is divided by it, and beyond that range the times overflow or "
                             "vanish in floating point; give a speed in that range")
    warmup, cap = value("warmup"), value("max_iterations")
    if isinstance(cap, int) and isinstance(warmup, int) and warmup >= cap:
        raise ValueError(f"{name('warmup')} {warmup} >= {name('max_iterations')} {cap}: the run "
                         "would stop before the algorithm's first query (its regret undefined); "
                         f"give {name('max_iterations')} > {name('warmup')}")
    names = {key: name(key) for key in ("horizon", "time_grid_step", "threads", "confirm_large")}
    if style != "config":
        check_resources({k: value(k) for k in (*names, "benchmark", "benchmark_options", "cost",
                                               "max_iterations")}, names=names)
        return
    per_benchmark = options.get("benchmark_options") or {}
    for benchmark in options.get("benchmarks") or [None]:
        overrides = per_benchmark.get(benchmark) or {} if isinstance(per_benchmark, Mapping) \
            else {}
        check_resources({"horizon": value("horizon"), "time_grid_step": value("time_grid_step"),
                         "confirm_large": value("confirm_large"), "benchmark": benchmark,
                         "max_iterations": cap, "cost": overrides.get("cost"),
                         "benchmark_options": overrides.get("options") or {}},
                        names=names, where=f"benchmark {benchmark!r}: " if benchmark else "")


#: profiles that loaded in this process, keyed by :func:`_profile_key` (a ``run-many`` job checks
#: the same profile once per run; parsing its YAML each time cost ~10 ms per run)
_CHECKED_PROFILES: set[tuple[Any, ...]] = set()


def _profile_key(profile: str | os.PathLike) -> tuple[Any, ...]:
    """What identifies a profile's content: a file's path, size and modification time (an
    edited file is checked again); a packaged name by itself."""
    try:
        st = os.stat(profile)
    except OSError:
        return ("name", str(profile))
    return ("file", os.path.realpath(profile), st.st_size, st.st_mtime_ns)


def _check_profile(where: str, profile: str | os.PathLike, *, replay: bool = False) -> None:
    key = (*_profile_key(profile), replay)
    if key in _CHECKED_PROFILES:
        return
    import yaml

    # lazy: numpy, yaml; tvbo --help loads this module (tests/test_startup.py), a profile is read
    # only when a run names one
    from tvbo.sim.calibrate_runs import is_response_model, load_response_model
    from tvbo.sim.profiles import load_profile

    try:
        if replay:
            load_response_model(profile)
        elif is_response_model(profile):
            raise ValueError("a response-time model (tvbo calibrate --from-runs), not a hardware "
                             "profile: replay it with compute polynomial and no polynomial "
                             "coefficients")
        else:
            load_profile(profile)
    except (ValueError, OSError, yaml.YAMLError) as err:
        raise ValueError(f"{where} {str(profile)!r}: {' '.join(str(err).split())} "
                         "(`tvbo list profiles`)") from None
    _CHECKED_PROFILES.add(key)


def _check_parallel(options: Mapping[str, Any], style: Style, spec: Mapping[str, RunOption],
                    algorithms: Mapping[str, Callable[[], Any]] | None) -> None:
    """k > 1 evaluators or overlap: each algorithm must be able to run that way."""
    evaluators = _get(spec["evaluators"], options, style)
    overlap = _get(spec["overlap"], options, style)
    pending = _get(spec["pending"], options, style)
    grid_k = evaluators if style == "config" else [evaluators]
    grid_o = overlap if style == "config" else [overlap]
    settings = [(k, o) for k in grid_k for o in grid_o if k > 1 or o]
    if not settings or not algorithms:
        return
    # lazy: numpy and simpy, only with k > 1 evaluators or overlap; tvbo --help loads this module
    from tvbo.sim.engine import EngineOptions
    from tvbo.sim.parallel import check_parallel

    for build in algorithms.values():
        algorithm = build()
        for k, o in settings:
            check_parallel(algorithm, EngineOptions(evaluators=k, overlap=o, pending=pending))


# -- the CLI flags of a value (what the workflow writes) -----------------------------------------
def _render(opt: RunOption, value: Any) -> list[str]:
    """``[flag, text]`` of one value as ``tvbo run`` reads it back ([] = the default: none)."""
    if value is None or value is False:
        return []
    flag = opt.cli_flag
    if flag is None:
        raise ValueError(f"run option {opt.name!r} has no tvbo run flag")
    if opt.kind == "bool":
        return [flag]
    if opt.kind == "float":
        return [flag, repr(float(value))]
    if opt.kind == "int":
        return [flag, str(int(value))]
    if opt.kind == "floats":
        return [flag, ",".join(repr(float(a)) for a in value)]
    if opt.kind == "object":
        import json

        return [flag, json.dumps(dict(value), sort_keys=True)]
    return [flag, str(value)]


def cli_args(values: Mapping[str, Any]) -> list[str]:
    """The ``tvbo run`` flags of ``values`` (option name -> value), in declaration order.

    None and False give no flag (the CLI's default); floats are written as ``repr(float)``
    (``0.0``, ``1e-06``), the polynomial as ``a0,a1,...`` and objects as sorted JSON, so a
    config value parses back to the same number. An unknown name is an error.
    """
    for key in values:
        _unknown(key)
    return [arg for opt in _spec() if opt.name in values for arg in _render(opt, values[opt.name])]


def _unknown(key: str) -> None:
    if key not in {o.name for o in _spec()}:
        raise ValueError(f"unknown run option {key!r}; valid: "
                         f"{', '.join(o.name for o in _spec())}")


def workflow_values(config: Mapping[str, Any], place: str, *,
                    benchmark: str | None = None) -> dict[str, Any]:
    """Option name -> config value of every option the workflow passes at ``place``
    (:data:`WORKFLOW_PLACES`): ``campaign`` or ``benchmark`` (the latter reads the per-benchmark
    entries ``benchmark_options.<benchmark>.*``)."""
    if place not in WORKFLOW_PLACES:
        raise ValueError(f"unknown workflow place {place!r}; valid: {', '.join(WORKFLOW_PLACES)}")
    out: dict[str, Any] = {}
    for opt in _spec():
        if opt.workflow != place:
            continue
        node: Any = config
        for part in opt.config.split("."):
            key = benchmark if part == "*" else part
            node = node.get(key) if isinstance(node, Mapping) else None
        out[opt.name] = node
    return out


# -- the config schema ----------------------------------------------------------------------------
_JSON_TYPES = {"int": "integer", "float": "number", "bool": "boolean", "str": "string",
               "path": "string", "object": "object", "floats": "array"}


def _value_schema(opt: RunOption) -> dict[str, Any]:
    """The JSON Schema of one value of ``opt`` (not null)."""
    if opt.kind == "name":
        return {"$ref": "#/$defs/name"}
    node: dict[str, Any] = {}
    choices = opt.choices
    if choices is not None:
        return {"enum": list(choices)}
    node["type"] = _JSON_TYPES[opt.kind]
    if opt.kind in ("str", "path"):
        node["minLength"] = 1
    bounds: dict[str, Any] = {}
    if opt.minimum is not None:
        bounds["exclusiveMinimum" if opt.exclusive else "minimum"] = opt.minimum
    if opt.maximum is not None:
        bounds["maximum"] = opt.maximum
    if opt.kind == "floats":
        node["items"] = {"type": "number", **bounds}
        node["minItems"] = 1
    else:
        node.update(bounds)
    return node


def _plain(value: Any) -> Any:
    """Integral floats as ints (YAML writes 0, not 0.0, for a bound)."""
    if isinstance(value, float) and value.is_integer() and not isinstance(value, bool):
        return int(value)
    return value


def _option_schema(opt: RunOption) -> dict[str, Any]:
    node = {"description": " ".join((opt.config_help or _sentence(opt.help)).split())}
    value = _value_schema(opt)
    nullable = opt.nullable if opt.config_null is None else opt.config_null
    if opt.grid:
        node.update(type="array", items=value, minItems=1, uniqueItems=True)
    elif nullable and "enum" in value:
        node["enum"] = [None, *value["enum"]]
    elif nullable:
        kind = value.pop("type")
        node["type"] = [kind, "null"]
        node.update(value)
    else:
        node.update(value)
    default = opt.default if opt.config_default is None else opt.config_default
    if default is not NO_CONFIG_DEFAULT and default is not REQUIRED:
        node["default"] = default
    for key in ("minimum", "exclusiveMinimum", "maximum"):
        if key in node:
            node[key] = _plain(node[key])
        if key in node.get("items", {}):
            node["items"][key] = _plain(node["items"][key])
    return node


def _sentence(text: str) -> str:
    text = text[:1].upper() + text[1:]
    return text if text.endswith(".") else text + "."


def schema_properties() -> dict[tuple[str, ...], dict[str, Any]]:
    """The schema node of every option in the config, keyed by its path in the schema
    (``("properties", "compute")``, ``("properties", "benchmark_options",
    "additionalProperties", "properties", "cost")``)."""
    out: dict[tuple[str, ...], dict[str, Any]] = {}
    for opt in _spec():
        if not opt.config:
            continue
        path: list[str] = []
        for part in opt.config.split("."):
            path += ["additionalProperties"] if part == "*" else ["properties", part]
        node = _option_schema(opt)
        if opt.kind == "object" and path[-1] == "additionalProperties":
            node = {"type": "object"}  # algorithm_options.<name>: the map's values
        out[tuple(path)] = node
    return out


def render_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every run option's node replaced by the generated one (in place; the
    position of an existing key is kept, a new key is appended). Parents must exist."""
    for path, node in schema_properties().items():
        parent: Any = schema
        for part in path[:-1]:
            parent = parent[part]
        parent[path[-1]] = node
    return schema


#: the first lines of the written schema (YAML drops comments: this one is written every time)
SCHEMA_HEADER = (
    "# The run options' properties (compute, warmup, seeds, ..., benchmark_options.*.cost) are\n"
    "# GENERATED from tvbo/runspec.py: edit the RunSpec there, then run\n"
    "#   python scripts/write_config_schema.py\n"
    "# (tests/test_runspec.py fails while this file differs from the generated one).\n"
)


def _strip_descriptions(node: Any) -> Any:
    """Descriptions without the trailing newline of a folded YAML block (text, not meaning)."""
    if isinstance(node, dict):
        return {k: (" ".join(v.split()) if k == "description" and isinstance(v, str)
                    else _strip_descriptions(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_strip_descriptions(v) for v in node]
    return node


def render_schema_text(text: str) -> str:
    """The schema file ``text`` with every run option's properties regenerated, as YAML.

    Lists of scalars and small maps of scalars (``items: {type: integer, minimum: 0}``) are
    written in flow style, as a person writes them; the rest in block style.
    """
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def scalar(value: Any) -> bool:
        return value is None or isinstance(value, str | int | float | bool)

    def represent_list(dumper: yaml.SafeDumper, data: list) -> Any:
        flow = all(scalar(v) for v in data)
        return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)

    def represent_dict(dumper: yaml.SafeDumper, data: dict) -> Any:
        flow = (0 < len(data) <= 4 and "description" not in data
                and all(scalar(v) or (isinstance(v, list) and all(scalar(x) for x in v))
                        for v in data.values()))
        return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=flow)

    Dumper.add_representer(list, represent_list)
    Dumper.add_representer(dict, represent_dict)
    schema = _strip_descriptions(render_schema(yaml.safe_load(text)))
    return SCHEMA_HEADER + yaml.dump(schema, Dumper=Dumper, sort_keys=False, width=100,
                                     allow_unicode=True)
