"""The ``tvbo`` command line: run one simulation, list what exists, and the campaign steps.

The Snakemake workflow calls these sub-commands from ``shell:`` rules, so everything a rule needs
(run, merge, table, figures, runs) is here and unit-testable, and no workflow script depends on
Snakemake's magic ``snakemake`` object.

Error policy: bad user input (unknown name, out-of-range number, malformed JSON) ends with exit
status 2 and exactly one line ``tvbo: error: <cause>`` on stderr, no traceback and no output file.
The engine signals bad input with :class:`ValueError`, which is reported the same way. Any other
exception is a bug and keeps its traceback.

Start-up is lean: this module imports only the standard library and :mod:`tvbo.registry` (the
static catalogue of names), and each command imports what it uses inside its function, so
``tvbo --help``, ``tvbo run --help`` and ``tvbo list`` import no numpy, scipy, xarray, pandas or
matplotlib, and ``tvbo run`` imports only the modules of the benchmark and algorithm it runs
(``tests/test_startup.py`` checks both). Nothing here changes ``os.environ``: ``tvbo run
--threads`` pins BLAS threads for the duration of the simulation (:mod:`tvbo.sim.threads`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from tvbo import algorithms, benchmarks, plugins, registry, runspec
from tvbo.analysis import figure_output
from tvbo.outputs import (
    check_distinct,
    check_not_input,
    check_output_dir,
    check_output_file,
    created_dir,
    describe_os_error,
)

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from tvbo.runspec import CheckedRun

PROG = "tvbo"
#: what ``tvbo compare --paper`` accepts (tvbo.analysis.compare.PAPER_CHOICES; kept here so that
#: building the parser does not import pandas)
COMPARE_PAPERS: tuple[str, ...] = ("auto", "bolt-metronome", "bolt-icml", "wdbo", "none")
#: what ``tvbo list`` can list (the sections of :data:`tvbo.registry.CATALOGUE`)
LISTABLE: tuple[str, ...] = ("benchmarks", "algorithms", "compute", "profiles")
#: ``tvbo whatif --nstar-summary`` choices (= tvbo.analysis.whatif.NSTAR_SUMMARIES, repeated here
#: so that ``tvbo --help`` does not import matplotlib; a test keeps the two equal)
NSTAR_SUMMARIES: tuple[str, ...] = ("median", "final", "time-average")
#: the suffix of every netCDF file tvbo writes (run and campaign files)
NETCDF: tuple[str, ...] = (".nc",)


class UsageError(Exception):
    """Bad user input detected after parsing (reported as a one-line error, exit status 2)."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (no usage dump), exit status 2."""

    def error(self, message: str) -> NoReturn:
        fail(f"{message} (see '{self.prog} --help')")


def one_line(text: str) -> str:
    """Collapse a possibly multi-line message into one line (engine messages, JSON errors)."""
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


def fail(message: str) -> NoReturn:
    """Print ``tvbo: error: <message>`` as a single line and exit with status 2."""
    sys.stderr.write(f"{PROG}: error: {one_line(message)}\n")
    sys.exit(2)


# -- argparse types: each validates a range and names the bad value ------------------------------
def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be finite, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite float > 0 (speed, horizon, time-grid step)."""
    value = _number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def nonnegative_float(text: str) -> float:
    """A finite float >= 0 (evaluation cost, noise variance; 0 is a valid what-if)."""
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def nonnegative_int(text: str) -> int:
    """An int >= 0 (seed, warm-up queries)."""
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def positive_int(text: str) -> int:
    """An int >= 1 (iteration cap, matrix sizes, repeats)."""
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return value


def coefficients(text: str) -> list[float]:
    """``a0,a1,...``: polynomial R(n) = a0 + a1 n + a2 n^2 + ... seconds, every a_i finite >= 0.

    Non-negative coefficients guarantee a non-negative compute time for every dataset size n.
    """
    parts = [p.strip() for p in text.split(",")]
    if not text.strip() or any(not p for p in parts):
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers a0,a1,..., got {text!r}"
        )
    values = []
    for part in parts:
        value = _number(part)
        if value < 0:
            raise argparse.ArgumentTypeError(f"coefficients must be >= 0, got {part} in {text!r}")
        values.append(value)
    return values


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different: ``{"beta": 1, "beta": 2}`` would silently
    keep the last value (issue 24 item 10)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise argparse.ArgumentTypeError(f"JSON key {key!r} is given twice; give it once")
        out[key] = value
    return out


def json_object(text: str) -> dict[str, Any]:
    """A JSON object (``{"key": value, ...}``), for benchmark and algorithm options."""
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(
            f"malformed JSON ({err.msg} at char {err.pos}): {text!r}"
        ) from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object {{...}}, got {text!r}")
    return value


# -- registries: the static catalogue (tvbo.registry) imports nothing heavy ---------------------
def benchmark_names() -> list[str]:
    return registry.names("benchmarks")


def algorithm_names() -> list[str]:
    return registry.names("algorithms")


def compute_models() -> tuple[str, ...]:
    return tuple(registry.names("compute"))


def profile_names() -> list[str]:
    return registry.names("profiles")


def _all_names(kind: str) -> list[str]:
    """Names registered at run time too (plug-ins; catalogue gaps): imports every module."""
    plugins.load()  # the installed plugins' names (entry points)
    if kind == "benchmark":
        benchmarks.load_all()
        return benchmarks.names()
    algorithms.load_all()
    return algorithms.names()


def load_plugins(args: argparse.Namespace) -> None:
    """Load the ``--plugin`` modules and the installed plugin entry points (:mod:`tvbo.plugins`)
    before any name is checked: a bad plugin is one line naming it, before anything runs."""

    plugins.load(getattr(args, "plugin", None) or ())


def _add_plugin_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plugin", action="append", metavar="MODULE",
                   help="import this plugin module (defines TVBO_ALGORITHMS / TVBO_BENCHMARKS; "
                   "see tvbo.plugins) before anything else; repeatable. Installed plugin "
                   "packages (entry points tvbo.algorithms / tvbo.benchmarks) need no flag")


def check_name(kind: str, name: str, valid: Sequence[str]) -> None:
    """Raise :class:`UsageError` naming ``name`` and listing ``valid`` if it is not in them."""
    if name not in valid:
        raise UsageError(f"unknown {kind} {name!r}; valid {kind}s: {', '.join(valid)}")


# -- progress -------------------------------------------------------------------------------------
class Progress:
    """Reports virtual-time progress of one run on a stream (stderr).

    The engine calls the instance as ``progress(now, horizon, k)`` after each completed iteration
    (``k`` = iterations so far; without it, the calls are counted). On a terminal a single line
    is rewritten in place (throttled to ~10 updates per wall-clock second); in a log file (a
    Snakemake job) one line is written per 10 % of the horizon, so logs stay short and readable.
    """

    def __init__(self, label: str, stream: TextIO, *, interval: float = 0.1) -> None:
        self.label = label
        self.stream = stream
        self.interactive = bool(getattr(stream, "isatty", lambda: False)())
        self.interval = interval
        self.queries = 0
        self._last_wall = -math.inf
        self._next_tenth = 1  # next multiple of H/10 that triggers a log line
        self._now = 0.0
        self._horizon = math.nan
        self._written = ""  # last state line written

    def _line(self) -> str:
        return (
            f"{self.label}: t = {self._now:.1f} / {self._horizon:g} s, "
            f"{self.queries} {'query' if self.queries == 1 else 'queries'}"
        )

    def __call__(self, now: float, horizon: float, k: int | None = None) -> None:
        self.queries = self.queries + 1 if k is None else int(k)
        self._now, self._horizon = float(now), float(horizon)
        if self.interactive:
            wall = time.monotonic()
            if wall - self._last_wall >= self.interval:
                self._last_wall = wall
                self._write("\r" + self._line())
        elif horizon > 0 and now >= self._next_tenth * horizon / 10:
            while now >= self._next_tenth * horizon / 10:
                self._next_tenth += 1
            self._write(self._line() + "\n")

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()
        self._written = text.strip("\r\n")

    def close(self, summary: str) -> None:
        """Finish with the final state (unless just shown in a log) and a summary line."""
        if self.queries and (self.interactive or self._written != self._line()):
            self.stream.write(("\r" if self.interactive else "") + self._line() + "\n")
        self.stream.write(f"{self.label}: {summary}\n")
        self.stream.flush()


# -- commands -------------------------------------------------------------------------------------
def _run_values(args: argparse.Namespace) -> dict[str, Any]:
    """The run options of the parsed flags: option name -> value (tvbo.runspec)."""
    return {o.name: getattr(args, o.name) for o in runspec.RUN_SPEC if hasattr(args, o.name)}


def _check_run_args(args: argparse.Namespace) -> list[CheckedRun]:
    """The checks of ``tvbo run`` / ``tvbo run-many`` that need no simulation: names, then the
    ONE check of the run options (:func:`tvbo.runspec.check_run_options`, as the API and the
    config validator use it: compute vs polynomial vs profile, time-grid step vs horizon, seed
    range, pending strategy, evaluators/overlap vs the algorithm). Plugins are loaded first.

    Returns the checked options of each seed's run, which :func:`tvbo.api.simulate_checked`
    runs without judging them again (one check per value in the process)."""
    if getattr(args, "plugin", None):
        load_plugins(args)
    if args.benchmark not in benchmark_names():  # maybe registered at run time: complete list
        check_name("benchmark", args.benchmark, _all_names("benchmark"))
    # an ablation (config algorithm_options {name: {preset: ...}}) is a new name: check its preset
    preset = (args.algorithm_options or {}).get("preset")
    kind, name = ("algorithm", args.algorithm) if preset is None else (
        "algorithm preset", str(preset))
    if name not in algorithm_names():
        check_name(kind, name, _all_names("algorithm"))

    def build() -> Any:
        return algorithms.make(args.algorithm, **(args.algorithm_options or {}))

    values = _run_values(args)
    seeds = list(getattr(args, "seeds", None) or [args.seed])  # run-many: --seeds
    first = runspec.check_run_options({**values, "seed": seeds[0]}, style="cli",
                                      algorithms={args.algorithm: build})
    assert first is not None  # one run's options (not a config)
    return [first, *(first.with_seed(seed, style="cli") for seed in seeds[1:])]


def _simulate_and_write(args: argparse.Namespace, run: CheckedRun, out: Path) -> Path:
    """One run of ``args`` with the options ``run`` (checked by :func:`_check_run_args`),
    written atomically to ``out`` (what ``tvbo run`` does; ``tvbo run-many`` calls it once per
    seed, so its files are those of separate calls)."""
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.api import simulate_checked
    from tvbo.results.io import write_run

    label = f"{args.benchmark}/{args.algorithm} seed {run['seed']}"
    progress = None if args.quiet else Progress(label, sys.stderr)
    started = time.monotonic()
    ds = simulate_checked(run, progress=progress)
    out.parent.mkdir(parents=True, exist_ok=True)
    written = write_run(ds, out)
    if progress is not None:
        wall = time.monotonic() - started
        progress.close(f"wrote {written} ({wall:.1f} s wall)")
    _print_final_regrets(ds, quiet=args.quiet)
    return Path(written)


def cmd_run(args: argparse.Namespace) -> int:
    """Simulate one (benchmark, algorithm, seed, speed) run and write it atomically."""
    (run,) = _check_run_args(args)
    out = check_output_file(args.out, suffixes=NETCDF)
    _simulate_and_write(args, run, out)
    return 0


def cmd_run_many(args: argparse.Namespace) -> int:
    """Simulate several seeds of one (benchmark, algorithm, speed) in this process.

    Why: a run of a short-horizon study computes for about as long as the interpreter takes to
    start and import numpy/scipy/xarray/simpy; one process per group of seeds pays that once.
    Each seed is a separate :func:`tvbo.simulate` call with fresh benchmark and algorithm
    objects (nothing is shared between runs but the interpreter), and each run file is written
    atomically as soon as its run ends, byte for byte the file ``tvbo run`` writes for that seed
    (tests/test_cli.py checks it). Every argument is checked before the first run starts.
    """
    runs = _check_run_args(args)
    if len(args.out) != len(args.seeds):
        raise UsageError(
            f"--out needs one file per seed: got {len(args.seeds)} seeds "
            f"({' '.join(map(str, args.seeds))}) and {len(args.out)} files"
        )
    for flag, values in (("--seeds", args.seeds), ("--out", [str(Path(o)) for o in args.out])):
        repeated = sorted({str(v) for v in values if values.count(v) > 1})
        if repeated:
            raise UsageError(f"{flag} repeats {', '.join(repeated)}; give each once")
    outs = [check_output_file(o, suffixes=NETCDF) for o in args.out]
    check_distinct(outs)
    written: list[Path] = []
    try:
        for run, out in zip(runs, outs, strict=True):
            written.append(_simulate_and_write(args, run, out))
    except BaseException:
        # all or nothing: a failed job leaves none of its files (Snakemake reruns the whole
        # group); a kill -9 cannot clean up, but each file is written atomically, so what is
        # left is complete, and `snakemake --rerun-incomplete` reruns the job
        # (docs/how-to/slurm.md, "Resuming")
        for path in written:
            path.unlink(missing_ok=True)
        raise
    return 0


def cmd_check_config(args: argparse.Namespace) -> int:
    """Validate campaign config file(s) as the workflow does, before any job; write nothing.

    The files are merged in order and ``--config KEY=VALUE`` applied on top, as Snakemake does
    with ``--configfile FILE... --config KEY=VALUE...``; then :func:`tvbo.config_check.
    check_config` (the validator the workflow runs at parse time). A bad config is one line on
    stderr and exit status 2; a good one prints one line (campaign, grid) on stdout.
    """
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.config_check import GRID_KEYS, check_config, grid_size, load_config_files

    cfg = check_config(load_config_files(args.files, args.config or ()), schema=args.schema)
    shape = " x ".join(f"{len(cfg[k])} {k}" for k in GRID_KEYS)
    print(f"{', '.join(args.files)}: valid; campaign {cfg['campaign']!r}, {grid_size(cfg)} runs "
          f"({shape})")
    return 0


def _add_check_config(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check-config",
        help="validate campaign config file(s) as the workflow does (one line per error)",
        description="Validate workflow config file(s): schema (workflow/schemas/"
        "config.schema.yaml), names, compute/profile, seeds, grid size and every algorithm's and "
        "benchmark's options, exactly as the workflow does before any job. Files are merged in "
        "order, like snakemake --configfile FILE...; give config/config.yaml first to check what "
        "a plain --configfile run sees. Exit status 2 and one line on stderr if invalid.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="config YAML file(s)")
    p.add_argument("--config", nargs="+", action="extend", metavar="KEY=VALUE",
                   help="overrides, as snakemake --config (VALUE parsed as YAML)")
    p.add_argument("--schema", metavar="FILE",
                   help="the config schema (default: workflow/schemas/config.schema.yaml of the "
                   "checkout tvbo is installed from, else of the working directory)")
    p.set_defaults(func=cmd_check_config)
def _print_final_regrets(ds: Any, *, quiet: bool) -> None:
    """One stderr line with the run's two headline metrics (nothing with --quiet), so a user
    who runs one simulation by hand sees its outcome without opening the file."""
    if quiet:
        return
    average = float(ds.attrs.get("average_regret", float("nan")))
    integrated = float(ds.attrs.get("time_integrated_regret", float("nan")))
    print(f"final: average regret {average:.6g}, time-integrated regret {integrated:.6g} "
          f"({int(ds.attrs.get('n_iterations', 0))} queries)", file=sys.stderr)


def cmd_list(args: argparse.Namespace) -> int:
    """Print the catalogue: one line per name with its description and citation.

    ``--names`` prints bare names, one per line (for scripts). Reads the static catalogue
    (:mod:`tvbo.registry`), so it imports no built-in benchmark or algorithm module, and the
    plugins (:mod:`tvbo.plugins`: installed entry points and ``--plugin`` modules), which it
    does import: a bad plugin is one line naming it.
    """

    load_plugins(args)
    found = {section: {n: plugins.find(section, n) for n in plugins.names(section)}
             for section in plugins.ENTRY_POINT_GROUPS}
    sources: dict[str, Callable[[], Sequence[str]]] = {
        "benchmarks": lambda: sorted({*benchmark_names(), *found["benchmarks"]}),
        "algorithms": lambda: sorted({*algorithm_names(), *found["algorithms"]}),
        "compute": compute_models,
        "profiles": profile_names,
    }
    kinds = [args.what] if args.what is not None else list(sources)
    width = max(len(n) for kind in kinds for n in sources[kind]())

    def line(kind: str, name: str) -> str:
        if args.names:
            return name
        item = registry.entry(kind, name) or found.get(kind, {}).get(name)
        if item is None:  # registered at run time: no catalogue text
            return name
        return f"{name:<{width}}  {item.description}  [{item.citation}]"

    if args.what is not None:
        print("\n".join(line(args.what, n) for n in sources[args.what]()))
        return 0
    blocks = [f"{kind}:\n" + "\n".join(f"  {line(kind, n)}" for n in sources[kind]())
              for kind in kinds]
    print("\n".join(blocks))
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    """Fit a hardware profile (work -> seconds) on this machine and write it as YAML; with
    ``--from-runs``, a response-time model R_p(n) of one algorithm from its measured runs."""
    out = check_output_file(args.out, suffixes=(".yaml", ".yml"))
    if args.from_runs:
        if args.emulate:
            raise UsageError("--from-runs and --emulate are two different calibrations; give one")
        # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
        from tvbo.sim.calibrate_runs import calibrate_from_runs

        print(calibrate_from_runs(args.from_runs, out, degree=args.degree, name=args.name,
                                  note=args.note))
        return 0
    targets = dict(_size_seconds(item) for item in args.emulate or [])  # bad input: nothing written
    out.parent.mkdir(parents=True, exist_ok=True)
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.sim.threads import limit_blas_threads

    with limit_blas_threads(1):  # price one-thread numerics, as simulations run them
        return _calibrate(args, out, targets)


def _calibrate(args: argparse.Namespace, out: Path, targets: dict[int, float]) -> int:
    if targets:
        # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
        from tvbo.sim.calibrate import emulate

        profile = emulate(targets, args.name or out.stem, algorithm=args.algorithm,
                          description=args.description or "")
        written = profile.save(out)
    else:
        # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
        from tvbo.sim.calibrate import calibrate

        written = calibrate(out, sizes=tuple(args.sizes), repeats=args.repeats, name=args.name)
    print(written)
    return 0


def _size_seconds(text: str) -> tuple[int, float]:
    """Parse one ``N=SECONDS`` response-time target of ``tvbo calibrate --emulate``."""
    try:
        size, seconds = text.split("=")
        return int(size), float(seconds)
    except ValueError:
        raise ValueError(
            f"--emulate targets look like N=SECONDS (e.g. 64=1.0), got {text!r}"
        ) from None


def _existing(paths: Sequence[str]) -> list[Path]:
    missing = [p for p in paths if not Path(p).is_file()]
    if missing:
        raise UsageError(f"no such file: {', '.join(missing)}")
    return [Path(p) for p in paths]


def _load_campaign(path: str, labels: dict | None = None) -> Any:
    (campaign,) = _existing([path])
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.results.validate import load_campaign  # one-line errors: bad file, silent mix

    dataset = load_campaign(campaign)
    if labels:  # --labels: the campaign carries them to every table and figure
        # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
        from tvbo.analysis.context import with_label_overrides

        dataset = with_label_overrides(dataset, labels)
    return dataset


def _labels_arg(text: str) -> dict:
    """``--labels``: JSON ``{key: {label?, variant?, preset?}}`` or ``{key: "label"}``."""
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.analysis.context import parse_label_overrides

    try:
        return parse_label_overrides(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _add_labels(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--labels",
        type=_labels_arg,
        default=None,
        metavar="JSON",
        help='algorithm names in tables and legends: {"KEY": {"label": "...", "variant": '
        '"paper|robust|null", "preset": "..."}} or {"KEY": "label"}; default: the display '
        "name of each algorithm's preset and its variant, e.g. W-DBO (robust)",
    )


def cmd_merge(args: argparse.Namespace) -> int:
    """Merge run files into one campaign file (ragged runs are NaN-padded)."""
    runs = _existing(args.runs)
    out = check_output_file(args.out, suffixes=NETCDF)
    check_not_input(out, runs)
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.results.campaign import MAX_QUERIES, merge_runs, write_campaign
    from tvbo.results.validate import parse_allow_mixed

    allow_mixed = parse_allow_mixed(args.allow_mixed)
    max_queries = MAX_QUERIES if args.max_queries is None else (args.max_queries or None)
    campaign = merge_runs(runs, allow_mixed, args.jobs, max_queries)  # checked before writing
    out.parent.mkdir(parents=True, exist_ok=True)
    print(write_campaign(campaign, out))
    return 0


def cmd_stale(args: argparse.Namespace) -> int:
    """List the run files and f*(t) tables a change of the code has made stale; ``--delete``
    removes them (and the campaign files merged from them) so that Snakemake rebuilds them."""
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.results.code_record import campaign_folder, check_runs

    try:
        verdicts = check_runs(args.paths)
    except FileNotFoundError as err:
        raise UsageError(str(err)) from None
    stale = {p: c for p, c in verdicts.items() if c}
    unrecorded = [p for p, c in verdicts.items() if c is None]
    current = len(verdicts) - len(stale) - len(unrecorded)
    print(f"{len(verdicts)} run files and f*(t) tables: {len(stale)} stale, {len(unrecorded)} "
          f"without a code record (made before tvbo recorded the code it executes), "
          f"{current} current")
    groups: dict[tuple[str, str], list[list[str]]] = {}
    for path, changed in stale.items():
        folder = campaign_folder(path) or path.parent
        kind = "f*(t) tables" if path.suffix == ".npz" else path.parent.name
        groups.setdefault((str(folder), kind), []).append(changed)
    for (folder, kind), changes in sorted(groups.items()):
        modules = sorted({m for changed in changes for m in changed})
        more = f" and {len(modules) - 4} more" if len(modules) > 4 else ""
        shown = ", ".join(modules[:4]) + more
        print(f"  {folder}: {kind}, {len(changes)} stale (changed: {shown})")
    if not args.delete:
        if stale or (unrecorded and args.unrecorded):
            print("remove them with --delete, then rebuild them with snakemake (it says how)")
        return 0
    doomed = [*stale, *(unrecorded if args.unrecorded else [])]
    for path in doomed:
        path.unlink(missing_ok=True)
    # the merge of each campaign that lost a file (a current f*(t) table stays: rebuilding it
    # would make every run of its benchmark older than its input, and Snakemake rerun them all)
    folders = sorted({f for f in map(campaign_folder, doomed) if f is not None})
    for folder in folders:
        merged = folder / "campaign.nc"
        if merged.is_file():
            merged.unlink()
            print(f"  removed {merged}")
    # Snakemake does not rerun a job whose outputs exist because an input went missing (the
    # tables of a campaign whose runs were removed), so the last rule is forced: it asks for the
    # missing campaign files, whose merges ask for the missing runs and tables
    print(f"removed {len(doomed)} files; rebuild them and what depends on them with "
          "`snakemake --cores N --forcerun merge_runs` (a campaign) or "
          "`snakemake --cores N --forcerun reproduction reproduction` (the reproduction report)")
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    """Write the papers' regret tables: CSV, Markdown, LaTeX and the normalised values."""
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.analysis.tables import TABLE_FORMATS, write_tables

    formats = args.format or list(TABLE_FORMATS)
    outdir = check_output_dir(args.outdir)
    campaign = _load_campaign(args.campaign, args.labels)
    with created_dir(outdir):
        for path in write_tables(campaign, outdir, formats=formats, ci=args.ci,
                                 aggregate=args.aggregate):
            print(path)
    return 0


def _alias(text: str) -> tuple[str, str]:
    """One ``PAPER_NAME=CAMPAIGN_NAME`` of ``tvbo compare --alias``."""
    name, sep, target = text.partition("=")
    if not sep or not name.strip() or not target.strip():
        raise argparse.ArgumentTypeError(
            f"expected PAPER_NAME=CAMPAIGN_NAME (e.g. bolt-icml=bolt), got {text!r}"
        )
    return name.strip(), target.strip()


def cmd_compare(args: argparse.Namespace) -> int:
    """Write the paper-vs-tvbo table (CSV, Markdown, LaTeX) and the normalised-regret figure."""
    aliases = dict(args.alias or [])
    if len(aliases) != len(args.alias or []):
        raise UsageError("--alias names the same paper algorithm twice")
    outdir = check_output_dir(args.outdir)
    campaign = _load_campaign(args.campaign, args.labels)
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.analysis.compare import write_comparison

    options = _figure_options(args)
    with created_dir(outdir), options.context():
        for path in write_comparison(campaign, outdir, paper=args.paper, aliases=aliases,
                                     options=options):
            print(path)
    return 0


def cmd_figures(args: argparse.Namespace) -> int:
    """Write the campaign figures (PNG, PDF or SVG)."""
    outdir = check_output_dir(args.outdir)
    campaign = _load_campaign(args.campaign, args.labels)
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.analysis.figures import write_figures

    with created_dir(outdir):
        for path in write_figures(campaign, outdir, options=_figure_options(args),
                                  aggregate=args.aggregate):
            print(path)
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    """Write one CSV row per run (run keys and summary metrics) for the report."""
    out = check_output_file(args.out)
    campaign = _load_campaign(args.campaign)
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.results.campaign import runs_table

    out.parent.mkdir(parents=True, exist_ok=True)
    runs_table(campaign).to_csv(out, index=False)
    print(out)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write the tidy table of tvbo/results/export.py (its docstring documents the columns)."""
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.results.export import export_campaign

    print(export_campaign(_load_campaign(args.campaign), args.out, args.format,
                          per_iteration=args.per_iteration))
    return 0


def cmd_theory(args: argparse.Namespace) -> int:
    """Write the theory figures (n* curves, eps_c, upper bounds; PNG) and their numbers (CSV)."""
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.analysis.theory_figures import write_theory

    with created_dir(check_output_dir(args.outdir)) as outdir:
        for path in write_theory(outdir, options=_figure_options(args)):
            print(path)
    return 0


def cmd_whatif(args: argparse.Namespace) -> int:
    """Write the hardware what-if figures (PNG) and their table (CSV) of a multi-speed campaign."""
    outdir = check_output_dir(args.outdir)
    campaign = _load_campaign(args.campaign)
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.analysis.whatif import write_whatif

    with created_dir(outdir):
        for path in write_whatif(campaign, outdir, nstar_summary=args.nstar_summary,
                                 options=_figure_options(args)):
            print(path)
    return 0


def cmd_parallel_whatif(args: argparse.Namespace) -> int:
    """Write the k-evaluators what-if figures (PNG) and their table (CSV) of a campaign."""
    outdir = check_output_dir(args.outdir)
    campaign = _load_campaign(args.campaign)
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.analysis.parallel_whatif import write_parallel_whatif

    with created_dir(outdir):
        for path in write_parallel_whatif(campaign, outdir, options=_figure_options(args),
                                          aggregate=args.aggregate):
            print(path)
    return 0


def cmd_paper_figures(args: argparse.Namespace) -> int:
    """Write one seed paper's figures (PNG) and the numbers behind them (CSV) for a campaign."""
    outdir = check_output_dir(args.outdir)
    campaign = _load_campaign(args.campaign, args.labels)
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.analysis.context import recorded_algorithm_options
    from tvbo.analysis.paper_figures import check_paper_algorithms, write_paper_figures

    presets = [o.get("preset") for o in recorded_algorithm_options(campaign).values()]
    check_paper_algorithms(args.paper, [*campaign["algorithm"].values, *presets], args.campaign)
    with created_dir(outdir):
        for path in write_paper_figures(campaign, outdir, args.paper,
                                        options=_figure_options(args)):
            print(path)
    return 0


def _substitute(text: str) -> tuple[str, str]:
    """``KEY=CAMPAIGN.nc`` of ``tvbo reproduce --campaign``."""
    key, sep, path = text.partition("=")
    if not sep or not key or not path:
        raise argparse.ArgumentTypeError(f"expected KEY=CAMPAIGN.nc, got {text!r}")
    return key, path


def cmd_reproduce(args: argparse.Namespace) -> int:
    """Write the reproduction report (Markdown) from the spec and the campaigns' run files."""
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.analysis.reproduction.report import write_report

    check_output_file(args.out)
    print(write_report(args.out, args.spec, args.results, dict(args.campaign or []),
                       args.provenance))
    return 0


def _add_reproduce(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reproduce",
        help="write the reproduction report: published tables and seed-paper claims vs tvbo",
        description="For each published table and seed-paper claim of the spec, compare tvbo's "
        "campaign (results/<campaign>/campaign.nc) with the paper: cells, ratios, ranks, pairwise "
        "orderings, explanations with computed evidence, speed sensitivity and verdicts; and the "
        "published code's measured runs (a committed table) beside tvbo's emulations. A "
        "campaign not yet run is listed with the command that runs it.",
    )
    p.add_argument("--spec", default="config/reproduction.yaml", metavar="FILE",
                   help="reproduction spec (default %(default)s)")
    p.add_argument("--results", default="results", metavar="DIR",
                   help="folder holding <campaign>/campaign.nc (default %(default)s)")
    p.add_argument("--out", default="docs/reproduction.md", metavar="FILE.md",
                   help="Markdown file to write (default %(default)s)")
    p.add_argument(
        "--campaign", type=_substitute, action="append", metavar="KEY=CAMPAIGN.nc",
        help="use CAMPAIGN.nc for the spec's campaign KEY (a stand-in, marked in the report's "
        "header; repeatable)",
    )
    p.add_argument(
        "--provenance", metavar="FILE.yaml",
        help="how the run files were made (command, commit, wall_time_s, machine), printed in "
        "the report's header as given, so the same files give the same bytes",
    )
    p.set_defaults(func=cmd_reproduce)
# -- tvbo oracle: the shared f*(t) table (tvbo.benchmarks.oracle_table) --------------------------
def cmd_oracle(args: argparse.Namespace) -> int:
    """Build one benchmark configuration's f*(t) table and write it atomically."""
    if args.plugin:
        load_plugins(args)
    if args.benchmark not in benchmark_names():  # maybe a plugin's: the complete list
        check_name("benchmark", args.benchmark, _all_names("benchmark"))
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.api import write_oracle

    started = time.monotonic()

    options = {o.name: getattr(args, o.name) for o in runspec.RUN_SPEC if o.workflow == "benchmark"}
    check_output_file(args.out)
    written = write_oracle(args.benchmark, args.out, **options)
    if not args.quiet:
        sys.stderr.write(
            f"{args.benchmark}: wrote oracle table {written} "
            f"({time.monotonic() - started:.1f} s wall)\n"
        )
    return 0


def _add_oracle(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "oracle",
        help="build a benchmark's f*(t) table once, for 'tvbo run --oracle-table'",
        description="Build the oracle's f*(t) grid (times, f*, argmax) of one benchmark "
        "configuration and write it atomically (.npz). Give the benchmark options exactly as "
        "to 'tvbo run': a run accepts only a table built for its configuration.",
    )

    _add_run_option(p, runspec.option("benchmark"))
    p.add_argument("--out", required=True, metavar="FILE", help="table file to write (.npz)")
    # the benchmark's configuration: the run options the workflow passes to both commands
    for opt in runspec.RUN_SPEC:
        if opt.workflow == "benchmark":
            _add_run_option(p, opt)
    p.add_argument("--quiet", action="store_true", help="no summary line on stderr")
    _add_plugin_flag(p)
    p.set_defaults(func=cmd_oracle)
# -- fit-health (a separate block: its command and its parser) -----------------------------------
def _unit_share(text: str) -> float:
    """argparse type: a number in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1], got {text!r}")
    return value


def _add_figure_options(p: argparse.ArgumentParser) -> None:
    """--format, --dpi, --style: the same on every figure command (tvbo.analysis.figure_output)."""
    figure_output.add_figure_arguments(p)


def _add_aggregate(p: argparse.ArgumentParser) -> None:
    """--aggregate: how seeds are summarised (tvbo.analysis.aggregate)."""
    p.add_argument("--aggregate", choices=("mean_se", "median_iqr", "iqm_bootstrap"),
                   default="mean_se",
                   help="centre and band over seeds: mean ± 1 s.e. (default, the papers'), "
                   "median and interquartile range, or interquartile mean with a 95%% "
                   "bootstrap interval")


def _figure_options(args: argparse.Namespace):  # -> FigureOptions (imported lazily)

    return figure_output.from_args(args)


def cmd_fit_health(args: argparse.Namespace) -> int:
    """Write a campaign's fit-health table (CSV + Markdown), degenerate runs and l_T figure."""
    outdir = check_output_dir(args.outdir)
    campaign = _load_campaign(args.campaign)
    # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
    from tvbo.analysis.fit_health import write_fit_health

    with created_dir(outdir):
        for path in write_fit_health(campaign, outdir, min_streak=args.min_streak,
                                     min_share=args.min_share, options=_figure_options(args)):
            print(path)
    return 0


def _add_fit_health(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fit-health",
        help="write a campaign's fit-health table, degenerate runs and l_T figure",
        description="Shares of hyperparameter fits at a bound per algorithm and benchmark, runs "
        "whose temporal lengthscale ends above the horizon, runs stuck at a bound, and the "
        "fitted l_T over virtual time per run (fit_health.csv, fit_health.md, "
        "degenerate_runs.csv, lengthscale_time.png).",
    )
    p.add_argument("campaign", metavar="CAMPAIGN.nc")
    p.add_argument("--outdir", required=True, metavar="DIR")
    p.add_argument("--min-streak", type=positive_int, default=5, metavar="FITS",
                   help="a run is degenerate when its last >= FITS fits (default 5) ...")
    p.add_argument("--min-share", type=_unit_share, default=0.25, metavar="SHARE",
                   help="... and >= SHARE of its fits (default 0.25) are stuck")
    _add_figure_options(p)
    p.set_defaults(func=cmd_fit_health)


# -- parser ---------------------------------------------------------------------------------------
def _add_run(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="simulate one run on the virtual clock and write it (netCDF)",
        description="Simulate one (benchmark, algorithm, seed, speed) run on the virtual clock "
        "and write it atomically as netCDF. Names: see 'tvbo list'.",
    )
    _add_run_option(p, runspec.option("seed"))
    p.add_argument("--out", required=True, metavar="FILE", help="output run file (.nc)")
    _run_options(p)
    p.set_defaults(func=cmd_run)
    p = sub.add_parser(
        "run-many",
        help="simulate several seeds of one configuration in one process (one file per seed)",
        description="Simulate the runs of several seeds of one (benchmark, algorithm, speed) one "
        "after another in this process and write each run file atomically as soon as its run "
        "ends: the same files as one 'tvbo run' per seed, without paying the interpreter's "
        "start-up per run. The workflow groups its seeds with the config key runs_per_job.",
    )
    seed = runspec.option("seed")
    p.add_argument("--seeds", required=True, nargs="+", type=_cli_type(seed), metavar="SEED",
                   help=f"{seed.help}s, one run each, in this order")
    p.add_argument("--out", required=True, nargs="+", metavar="FILE",
                   help="output run files (.nc), one per seed, in the order of --seeds")
    _run_options(p)
    p.set_defaults(func=cmd_run_many)


#: argparse types of the RunSpec's (kind, minimum, exclusive); a new combination must be added
#: here (tests/test_runspec.py builds every flag, so a missing one fails there, not at run time)
_CLI_TYPES: dict[tuple[str, float | None, bool], Callable[[str], Any]] = {
    ("int", 0, False): nonnegative_int,
    ("int", 1, False): positive_int,
    ("float", 0, True): positive_float,
    ("float", 0, False): nonnegative_float,
    ("floats", 0, False): coefficients,
    ("object", None, False): json_object,
}


def _cli_type(opt: Any) -> Callable[[str], Any] | None:
    """The argparse type of a run option (None: a string)."""
    if opt.kind in ("str", "path", "name"):
        return None
    key = (opt.kind, opt.minimum, opt.exclusive)
    if key not in _CLI_TYPES:
        raise NotImplementedError(f"run option {opt.name!r}: no argparse type for {key}")
    return _CLI_TYPES[key]


def _add_run_option(p: argparse.ArgumentParser, opt: Any) -> None:
    """One flag of a run option, from its declaration (tvbo.runspec)."""
    flag = opt.cli_flag
    if opt.kind == "bool":
        p.add_argument(flag, action="store_true", help=opt.help)
        return
    kwargs: dict[str, Any] = {"metavar": opt.metavar, "help": opt.help}
    if opt.default is runspec.REQUIRED:
        kwargs["required"] = True
    else:
        kwargs["default"] = opt.default
        if opt.default is not None:
            kwargs["help"] += f" (default {opt.default})"
    if opt.choices is not None and not opt.noun:  # with a noun: check_run_options names it
        kwargs["choices"] = opt.choices
    elif _cli_type(opt) is not None:
        kwargs["type"] = _cli_type(opt)
    p.add_argument(flag, **kwargs)


def _run_options(p: argparse.ArgumentParser) -> None:
    """The flags ``tvbo run`` and ``tvbo run-many`` share: every run option of the RunSpec
    (:data:`tvbo.runspec.RUN_SPEC`) but the seed, generated from its declaration; ``--quiet``."""

    for opt in runspec.RUN_SPEC:
        if opt.cli_flag is not None and opt.name != "seed":
            _add_run_option(p, opt)
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    _add_plugin_flag(p)


def _add_theory_whatif(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "theory",
        help="write BOLT's theory figures: n* curves, eps_c, upper bounds (PNG + CSV)",
        description="Write the n* curves ([A] Fig. 2 / [B] Fig. 1), the lower-bound slope eps_c "
        "vs sampling frequency ([A] Fig. 1) and the upper bounds vs the maximal dataset size, "
        "with a CSV of every plotted number. Needs no campaign.",
    )
    p.add_argument("--outdir", required=True, metavar="DIR")
    _add_figure_options(p)
    p.set_defaults(func=cmd_theory)

    p = sub.add_parser(
        "whatif",
        help="write the hardware what-if figures of a campaign with >= 2 speeds (PNG + CSV)",
        description="Regret (query average and time-integrated), BOLT's n* and dataset sizes, "
        "and the number of evaluations vs the hardware speed factor.",
    )
    p.add_argument("campaign", metavar="CAMPAIGN.nc")
    p.add_argument("--outdir", required=True, metavar="DIR")
    p.add_argument(
        "--nstar-summary",
        choices=NSTAR_SUMMARIES,
        default=NSTAR_SUMMARIES[0],
        help="how one run's per-iteration n* is summarised (default %(default)s)",
    )
    _add_figure_options(p)
    p.set_defaults(func=cmd_whatif)

    p = sub.add_parser(
        "parallel-whatif",
        help="write the k-evaluators what-if figures of a campaign (PNG + CSV)",
        description="Average query regret and time-integrated regret of the current "
        "recommendation vs the number of evaluators k, per benchmark and speed, with and "
        "without overlap (tvbo.analysis.parallel_whatif).",
    )
    p.add_argument("campaign", metavar="CAMPAIGN.nc")
    p.add_argument("--outdir", required=True, metavar="DIR")
    _add_figure_options(p)
    _add_aggregate(p)
    p.set_defaults(func=cmd_parallel_whatif)


def _add_paper_figures(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "paper-figures",
        help="write the figures of a seed paper (sparq, pegpucb, boke) for a campaign (PNG + CSV)",
        description="sparq: average regret over steps (mean +- std); pegpucb: cumulative and "
        "average regret over steps (mean +- s.e.) and the proportion of steps each candidate "
        "prior was used; boke: simple regret vs iteration and vs cumulative CPU time.",
    )
    p.add_argument("campaign", metavar="CAMPAIGN.nc")
    p.add_argument("--outdir", required=True, metavar="DIR")
    p.add_argument("--paper", required=True, choices=("sparq", "pegpucb", "boke"))
    _add_figure_options(p)
    _add_labels(p)
    p.set_defaults(func=cmd_paper_figures)


def build_parser() -> argparse.ArgumentParser:
    """The ``tvbo`` argument parser with all sub-commands."""
    parser = _Parser(
        prog=PROG,
        description="tvbo: time-varying Bayesian optimisation on a virtual clock.",
    )
    parser.add_argument("--version", action=_VersionAction, nargs=0,
                        help="show the program's version number and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_run(sub)

    p = sub.add_parser(
        "list",
        help="list benchmarks, algorithms, compute models or profiles, with descriptions",
        description="One line per name: description and citation (from tvbo.registry).",
    )
    p.add_argument("what", nargs="?", choices=LISTABLE, help="what to list (default: all)")
    p.add_argument("--names", action="store_true", help="bare names only, one per line")
    _add_plugin_flag(p)
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("calibrate", help="fit a hardware profile for the counted compute model")
    p.add_argument("--out", required=True, metavar="FILE", help="profile YAML to write")
    p.add_argument(
        "--sizes",
        type=positive_int,
        nargs="+",
        default=[32, 64, 128, 256],
        metavar="N",
        help="matrix sizes to time (default 32 64 128 256)",
    )
    p.add_argument("--repeats", type=positive_int, default=3, help="repeats per size (default 3)")
    p.add_argument("--name", help="profile name (default: the file's stem)")
    p.add_argument(
        "--emulate",
        nargs="+",
        metavar="N=SECONDS",
        help="instead of timing this machine, fit prices so that one iteration of --algorithm at "
        "dataset size N costs SECONDS (emulates another implementation, e.g. the papers' BoTorch)",
    )
    p.add_argument("--algorithm", default="w-dbo", help="algorithm priced by --emulate")
    p.add_argument("--description", help="description stored in the profile (with --emulate)")
    p.add_argument(
        "--from-runs", nargs="+", metavar="RUN.nc|DIR",
        help="instead of timing this machine, fit a response-time model R_p(n) per phase "
        "(non-negative polynomial, with its fit error) to one algorithm's runs made with "
        "--compute measured (files, or folders searched for *.nc); replay it with --compute "
        "polynomial --profile OUT")
    p.add_argument("--degree", type=nonnegative_int, default=2, metavar="D",
                   help="degree of each R_p(n) with --from-runs (0-3, default 2)")
    p.add_argument("--note", metavar="TEXT",
                   help="provenance the run files do not record, stored in the model with "
                   "--from-runs (e.g. the commit and machine that made the runs)")
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser(
        "stale", help="list (or delete) the run files a change of the code has made stale",
        description="Compare the code each run file and f*(t) table recorded (the sha256 of "
        "every tvbo module loaded when it was made) with the source as it is now, and list "
        "those whose code changed. With --delete, remove them and the campaign file of each "
        "campaign that lost one, so that the next `snakemake` rebuilds exactly what changed.")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="run files and f*(t) tables, or folders searched for them (results/)")
    p.add_argument("--delete", action="store_true",
                   help="remove the stale files and the campaign files merged from them")
    p.add_argument("--unrecorded", action="store_true",
                   help="treat files without a code record (made before tvbo recorded it) as "
                   "stale too")
    p.set_defaults(func=cmd_stale)

    p = sub.add_parser("merge", help="merge run files into a campaign file")
    p.add_argument("runs", nargs="+", metavar="RUN.nc", help="run files")
    p.add_argument("--out", required=True, metavar="CAMPAIGN.nc", help="campaign file to write")
    p.add_argument(
        "--allow-mixed",
        action="append",
        metavar="FIELD[,FIELD]",
        help="merge runs that differ in these fields anyway: horizon (within a benchmark), "
        "compute (model, profile, coefficients), cost_table, tvbo_version; by default a "
        "difference is refused (repeatable)",
    )
    p.add_argument(
        "--jobs",
        type=positive_int,
        default=1,
        metavar="N",
        help="read the run files and combine each benchmark's runs in N worker processes "
        "(default 1); the campaign file is the same, byte for byte, whatever N",
    )
    p.add_argument(
        "--max-queries",
        type=int,
        default=None,
        metavar="N",
        help="runs with more than N queries (the floor rows make H / c) keep their per-run "
        "metrics and time-grid curves in the campaign, not their per-query record, which "
        "stays in the run file: the campaign pads every run to its longest (default: "
        "tvbo.results.campaign.MAX_QUERIES; 0: keep every run's record)",
    )
    p.set_defaults(func=cmd_merge)

    p = sub.add_parser(
        "table",
        help="write the papers' regret tables (CSV, Markdown, LaTeX) of a campaign",
        description="Average query regret, time-integrated regret and the number of queries per "
        "benchmark x algorithm, mean ± s.e. over seeds: the lowest mean in bold only when its "
        "interval mean ± CI x s.e. is separated from every other cell's, else the cells tied "
        "for best underlined; and the papers' normalised Overall rows.",
    )
    p.add_argument("campaign", metavar="CAMPAIGN.nc")
    p.add_argument("--outdir", required=True, metavar="DIR")
    p.add_argument(
        "--ci",
        type=nonnegative_float,
        default=1.0,
        metavar="K",
        help="interval half-width in standard errors for bold / underline (default 1, the "
        "papers' mean ± s.e.; 1.96 for 95%% normal intervals; 0: the lowest mean is always bold)",
    )
    p.add_argument(
        "--format",
        nargs="+",
        choices=("csv", "md", "tex", "normalised"),
        metavar="FORMAT",
        help="formats to write: csv md tex normalised (default: all)",
    )
    _add_labels(p)
    _add_aggregate(p)
    p.set_defaults(func=cmd_table)

    p = sub.add_parser(
        "compare",
        help="paper vs tvbo table and the normalised-regret figure of a campaign",
        description="Put a published table (BOLT [B] 'metronome', BOLT [A] 'icml', W-DBO) beside "
        "the campaign's average regret for every shared (benchmark, algorithm), with "
        "differences, flags and ranks, and draw the papers' normalised-regret figure.",
    )
    p.add_argument("campaign", metavar="CAMPAIGN.nc")
    p.add_argument("--outdir", required=True, metavar="DIR")
    p.add_argument(
        "--paper",
        choices=COMPARE_PAPERS,
        default="auto",
        help="paper table: auto (the one matching the campaign's cost table), bolt-metronome, "
        "bolt-icml, wdbo, or none (only the figure, tvbo alone); default auto",
    )
    p.add_argument(
        "--alias",
        type=_alias,
        action="append",
        metavar="PAPER_NAME=CAMPAIGN_NAME",
        help="compare the paper's algorithm PAPER_NAME (tvbo name) with the campaign's "
        "CAMPAIGN_NAME, e.g. bolt-icml=bolt (repeatable)",
    )
    _add_labels(p)
    _add_figure_options(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser(
        "figures", help="write the figures (PNG, PDF or SVG) of a campaign",
        description="Regret and dataset size over virtual time, compute per phase vs dataset "
        "size, and the performance profile (fraction of (benchmark, seed, target) problems "
        "solved vs virtual time).",
    )
    p.add_argument("campaign", metavar="CAMPAIGN.nc")
    p.add_argument("--outdir", required=True, metavar="DIR")
    _add_labels(p)
    _add_figure_options(p)
    _add_aggregate(p)
    p.set_defaults(func=cmd_figures)

    p = sub.add_parser(
        "data",
        help="download, verify and prepare real data (Intel, EPA ozone): `tvbo data --help`",
        add_help=False,
    )
    p.add_argument("rest", nargs=argparse.REMAINDER)

    p = sub.add_parser("runs", help="write one CSV row per run of a campaign")
    p.add_argument("campaign", metavar="CAMPAIGN.nc")
    p.add_argument("--out", required=True, metavar="FILE.csv")
    p.set_defaults(func=cmd_runs)
    p = sub.add_parser("export", help="write a campaign as a tidy long table (CSV or parquet)")
    p.add_argument("campaign", metavar="CAMPAIGN.nc")
    p.add_argument("--format", choices=("csv", "parquet"), help="default: the suffix of --out")
    p.add_argument("--per-iteration", action="store_true", help="one row per query, not per run")
    p.add_argument("--out", required=True, metavar="FILE")
    p.set_defaults(func=cmd_export)
    _add_theory_whatif(sub)
    _add_paper_figures(sub)
    _add_reproduce(sub)
    _add_oracle(sub)
    _add_fit_health(sub)
    _add_check_config(sub)
    return parser


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked (importlib.metadata is slow to import)."""

    def __call__(self, parser, namespace, values, option_string=None) -> NoReturn:
        parser.exit(message=f"{parser.prog} {_version()}\n")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tvbo-lab")  # the distribution name (PyPI's "tvbo" is another project)
    except PackageNotFoundError:
        return "(not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tvbo`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["data"]:  # the data pipeline has its own command line (tvbo.data.__main__)
        # lazy: start-up cost: tvbo --help loads no numpy (tests/test_startup.py)
        from tvbo.data.__main__ import main as data_main

        return int(data_main(argv[1:]))
    parser = build_parser()
    args = parser.parse_args(argv)
    _refuse_repeated_flags(parser, argv)
    try:
        return int(args.func(args))
    except (UsageError, ValueError) as err:
        # ValueError is the engine's contract for bad input; its message is the cause.
        fail(str(err))
    except BrokenPipeError:
        # the reader went away (`tvbo list | head`): not an error of ours, and no traceback;
        # stdout is pointed at devnull so the interpreter's final flush cannot fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a killed writer
    except OSError as err:
        # the error boundary: a file that cannot be read or written (a full disk, a folder made
        # read-only during the work) is one line naming the path and the cause, no traceback
        fail(describe_os_error(err))
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{PROG}: interrupted\n")
        return 130


def _refuse_repeated_flags(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """A flag that takes one value given twice (``--seed 1 --seed 2``) is refused: argparse
    keeps the last one silently (issue 24 item 10). Repeatable flags (append, extend) pass."""
    sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if sub is None or not argv or argv[0] not in sub.choices:
        return
    single = (argparse._StoreAction, argparse._StoreTrueAction, argparse._StoreConstAction)
    seen: dict[argparse.Action, str] = {}
    for token in argv[1:]:
        if token == "--":
            break
        action = sub.choices[argv[0]]._option_string_actions.get(token.split("=", 1)[0])
        if action is None or not isinstance(action, single):
            continue
        if action in seen:
            fail(f"{seen[action]} is given twice; give it once (see '{PROG} {argv[0]} --help')")
        seen[action] = token.split("=", 1)[0]


if __name__ == "__main__":  # pragma: no cover - exercised through tvbo/__main__.py
    sys.exit(main())
