"""The ``tvbo`` command line: run one simulation, list what exists, and the campaign steps.

The Snakemake workflow calls these sub-commands from ``shell:`` rules, so everything a rule needs
(run, merge, table, figures, runs) is here and unit-testable, and no workflow script depends on
Snakemake's magic ``snakemake`` object.

Error policy: bad user input (unknown name, out-of-range number, malformed JSON) ends with exit
status 2 and exactly one line ``tvbo: error: <cause>`` on stderr, no traceback and no output file.
The engine signals bad input with :class:`ValueError`, which is reported the same way. Any other
exception is a bug and keeps its traceback.

Heavy imports (numpy, xarray, the engine) are deferred into the command functions so that
``tvbo --help`` and ``tvbo list`` stay fast.
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
from typing import Any, NoReturn, TextIO

# One BLAS thread per process unless the user says otherwise: simulations are many small dense
# problems, which multi-threaded BLAS slows down (oversubscription), and the workflow runs one
# process per core. Set before numpy is first imported by a sub-command.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

PROG = "tvbo"
#: what ``--stamp`` accepts: the true sample time (default) or the decision time (W-DBO code)
STAMPS: tuple[str, ...] = ("sample", "decide")
#: the published noise/cost tables: [B] "without a metronome" Table 3, [A] ICML Table 2
COST_TABLES: tuple[str, ...] = ("metronome", "icml")
#: what ``tvbo compare --paper`` accepts (tvbo.analysis.compare.PAPER_CHOICES; kept here so that
#: building the parser does not import pandas)
COMPARE_PAPERS: tuple[str, ...] = ("auto", "bolt-metronome", "bolt-icml", "wdbo", "none")
#: what ``tvbo list`` can list
LISTABLE: tuple[str, ...] = ("benchmarks", "algorithms", "compute")
#: ``tvbo whatif --nstar-summary`` choices (= tvbo.analysis.whatif.NSTAR_SUMMARIES, repeated here
#: so that ``tvbo --help`` does not import matplotlib; a test keeps the two equal)
NSTAR_SUMMARIES: tuple[str, ...] = ("median", "final", "time-average")


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


def json_object(text: str) -> dict[str, Any]:
    """A JSON object (``{"key": value, ...}``), for benchmark and algorithm options."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(
            f"malformed JSON ({err.msg} at char {err.pos}): {text!r}"
        ) from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object {{...}}, got {text!r}")
    return value


# -- registries (imported lazily; the engine is heavy) --------------------------------------------
def benchmark_names() -> list[str]:
    from tvbo import benchmarks

    return list(benchmarks.names())


def algorithm_names() -> list[str]:
    from tvbo import algorithms

    return list(algorithms.names())


def compute_models() -> tuple[str, ...]:
    from tvbo.sim.compute import COMPUTE_MODELS

    return tuple(COMPUTE_MODELS)


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
def _check_parallel_args(args: argparse.Namespace) -> None:
    """--evaluators/--overlap/--pending: bad values and algorithms that cannot run in parallel
    are refused before any work (tvbo.sim.parallel.check_parallel names the reason)."""
    from tvbo.acquisition.pending import make_pending
    from tvbo.sim.engine import MAX_EVALUATORS

    if args.evaluators > MAX_EVALUATORS:
        raise UsageError(f"--evaluators must be an integer in [1, {MAX_EVALUATORS}], "
                         f"got {args.evaluators}")
    try:
        make_pending(args.pending)
    except ValueError as err:
        raise UsageError(f"--pending: {err}") from None
    if args.evaluators > 1 or args.overlap:
        from tvbo.algorithms import make as make_algorithm
        from tvbo.sim.engine import EngineOptions
        from tvbo.sim.parallel import check_parallel

        options = EngineOptions(evaluators=args.evaluators, overlap=args.overlap,
                                pending=args.pending)
        try:
            check_parallel(make_algorithm(args.algorithm, **(args.algorithm_options or {})),
                           options)
        except ValueError as err:
            raise UsageError(str(err)) from None


def cmd_run(args: argparse.Namespace) -> int:
    """Simulate one (benchmark, algorithm, seed, speed) run and write it atomically."""
    check_name("benchmark", args.benchmark, benchmark_names())
    check_name("algorithm", args.algorithm, algorithm_names())
    check_name("compute model", args.compute, compute_models())
    if args.polynomial is not None and args.compute != "polynomial":
        raise UsageError(f"--polynomial needs --compute polynomial, got --compute {args.compute}")
    if args.compute == "polynomial" and args.polynomial is None:
        raise UsageError("--compute polynomial needs --polynomial A0,A1,... (coefficients of R(n))")
    if args.profile is not None and args.compute != "counted":
        raise UsageError(f"--profile needs --compute counted, got --compute {args.compute}")
    if args.horizon is not None and args.time_grid_step > args.horizon:
        raise UsageError(
            f"--time-grid-step {args.time_grid_step:g} exceeds --horizon {args.horizon:g}"
        )
    _check_parallel_args(args)

    from tvbo import simulate
    from tvbo.results.io import write_run

    label = f"{args.benchmark}/{args.algorithm} seed {args.seed}"
    progress = None if args.quiet else Progress(label, sys.stderr)
    started = time.monotonic()
    ds = simulate(
        args.benchmark,
        args.algorithm,
        seed=args.seed,
        compute=args.compute,
        speed=args.speed,
        horizon=args.horizon,
        warmup=args.warmup,
        profile=args.profile,
        polynomial=args.polynomial,
        cost_table=args.cost_table,
        cost=args.cost,
        noise_var=args.noise_var,
        time_grid_step=args.time_grid_step,
        stamp=args.stamp,
        lookahead=args.lookahead,
        benchmark_options=args.benchmark_options,
        algorithm_options=args.algorithm_options,
        max_iterations=args.max_iterations,
        expert_cost=args.expert_cost,
        expert_noise_var=args.expert_noise_var,
        evaluators=args.evaluators,
        overlap=args.overlap,
        pending=args.pending,
        recommendation=args.recommendation,
        progress=progress,
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    written = write_run(ds, out)
    if progress is not None:
        wall = time.monotonic() - started
        progress.close(f"wrote {written} ({wall:.1f} s wall)")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """Print registered benchmarks, algorithms and compute models, one per line."""
    sources: dict[str, Callable[[], Sequence[str]]] = {
        "benchmarks": benchmark_names,
        "algorithms": algorithm_names,
        "compute": compute_models,
    }
    if args.what is not None:
        print("\n".join(sources[args.what]()))
        return 0
    blocks = [
        f"{kind}:\n" + "\n".join(f"  {n}" for n in source()) for kind, source in sources.items()
    ]
    print("\n".join(blocks))
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    """Fit a hardware profile (work -> seconds) on this machine and write it as YAML."""
    out = Path(args.out)
    targets = dict(_size_seconds(item) for item in args.emulate or [])  # bad input: nothing written
    out.parent.mkdir(parents=True, exist_ok=True)
    if targets:
        from tvbo.sim.calibrate import emulate

        profile = emulate(targets, args.name or out.stem, algorithm=args.algorithm,
                          description=args.description or "")
        written = profile.save(out)
    else:
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


def _load_campaign(path: str) -> Any:
    import xarray as xr

    (campaign,) = _existing([path])
    return xr.load_dataset(campaign, decode_timedelta=False)


def cmd_merge(args: argparse.Namespace) -> int:
    """Merge run files into one campaign file (ragged runs are NaN-padded)."""
    runs = _existing(args.runs)
    from tvbo.results.campaign import merge_runs, write_campaign

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    print(write_campaign(merge_runs(runs), out))
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    """Write the papers' regret tables: CSV, Markdown, LaTeX and the normalised values."""
    from tvbo.analysis.tables import TABLE_FORMATS, write_tables

    formats = args.format or list(TABLE_FORMATS)
    campaign = _load_campaign(args.campaign)
    Path(args.outdir).mkdir(parents=True, exist_ok=True)
    for path in write_tables(campaign, Path(args.outdir), formats=formats, ci=args.ci):
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
    campaign = _load_campaign(args.campaign)
    from tvbo.analysis.compare import write_comparison

    Path(args.outdir).mkdir(parents=True, exist_ok=True)
    for path in write_comparison(campaign, Path(args.outdir), paper=args.paper, aliases=aliases):
        print(path)
    return 0


def cmd_figures(args: argparse.Namespace) -> int:
    """Write the campaign figures (PNG)."""
    campaign = _load_campaign(args.campaign)
    from tvbo.analysis.figures import write_figures

    Path(args.outdir).mkdir(parents=True, exist_ok=True)
    for path in write_figures(campaign, Path(args.outdir)):
        print(path)
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    """Write one CSV row per run (run keys and summary metrics) for the report."""
    campaign = _load_campaign(args.campaign)
    from tvbo.results.campaign import runs_table

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    runs_table(campaign).to_csv(out, index=False)
    print(out)
    return 0


def cmd_theory(args: argparse.Namespace) -> int:
    """Write the theory figures (n* curves, eps_c, upper bounds; PNG) and their numbers (CSV)."""
    from tvbo.analysis.theory_figures import write_theory

    for path in write_theory(Path(args.outdir), dpi=args.dpi):
        print(path)
    return 0


def cmd_whatif(args: argparse.Namespace) -> int:
    """Write the hardware what-if figures (PNG) and their table (CSV) of a multi-speed campaign."""
    campaign = _load_campaign(args.campaign)
    from tvbo.analysis.whatif import write_whatif

    for path in write_whatif(
        campaign, Path(args.outdir), nstar_summary=args.nstar_summary, dpi=args.dpi
    ):
        print(path)
    return 0


def cmd_parallel_whatif(args: argparse.Namespace) -> int:
    """Write the k-evaluators what-if figures (PNG) and their table (CSV) of a campaign."""
    campaign = _load_campaign(args.campaign)
    from tvbo.analysis.parallel_whatif import write_parallel_whatif

    for path in write_parallel_whatif(campaign, Path(args.outdir), dpi=args.dpi):
        print(path)
    return 0


def cmd_paper_figures(args: argparse.Namespace) -> int:
    """Write one seed paper's figures (PNG) and the numbers behind them (CSV) for a campaign."""
    campaign = _load_campaign(args.campaign)
    from tvbo.analysis.paper_figures import write_paper_figures

    for path in write_paper_figures(campaign, Path(args.outdir), args.paper, dpi=args.dpi):
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
    from tvbo.analysis.reproduction import write_report

    print(write_report(args.out, args.spec, args.results, dict(args.campaign or [])))
    return 0


def _add_reproduce(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reproduce",
        help="write the reproduction report: published tables and seed-paper claims vs tvbo",
        description="For each published table and seed-paper claim of the spec, compare tvbo's "
        "campaign (results/<campaign>/campaign.nc) with the paper: cells, ratios, ranks, pairwise "
        "orderings, explanations with computed evidence, speed sensitivity and verdicts. A "
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
    p.set_defaults(func=cmd_reproduce)


# -- parser ---------------------------------------------------------------------------------------
def _add_run(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="simulate one run on the virtual clock and write it (netCDF)",
        description="Simulate one (benchmark, algorithm, seed, speed) run on the virtual clock "
        "and write it atomically as netCDF. Names: see 'tvbo list'.",
    )
    p.add_argument("--benchmark", required=True, metavar="NAME", help="benchmark name")
    p.add_argument("--algorithm", required=True, metavar="NAME", help="algorithm name")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="random seed (default 0)")
    p.add_argument(
        "--compute",
        default="counted",
        metavar="MODEL",
        help="compute-time model: counted (deterministic work x hardware profile), measured "
        "(CPU time) or polynomial (explicit R(n)); default counted",
    )
    p.add_argument(
        "--speed", type=positive_float, default=1.0, help="hardware speed factor (> 0, default 1)"
    )
    p.add_argument(
        "--horizon",
        type=positive_float,
        metavar="SECONDS",
        help="virtual time horizon H (> 0; default: the benchmark's)",
    )
    p.add_argument("--out", required=True, metavar="FILE", help="output run file (.nc)")
    p.add_argument(
        "--warmup", type=nonnegative_int, default=15, help="random warm-up queries (default 15)"
    )
    p.add_argument("--profile", metavar="NAME|PATH", help="hardware profile for --compute counted")
    p.add_argument(
        "--polynomial",
        type=coefficients,
        metavar="A0,A1,...",
        help="R(n) = a0 + a1 n + ... seconds, for --compute polynomial",
    )
    p.add_argument(
        "--cost-table",
        choices=COST_TABLES,
        default="metronome",
        help="published noise/cost table (default metronome)",
    )
    p.add_argument(
        "--cost", type=nonnegative_float, metavar="SECONDS", help="override evaluation cost c"
    )
    p.add_argument(
        "--noise-var", type=nonnegative_float, metavar="VAR", help="override noise variance"
    )
    p.add_argument(
        "--time-grid-step",
        type=positive_float,
        default=1.0,
        metavar="SECONDS",
        help="step of the time grid for time-integrated regret (> 0, default 1)",
    )
    p.add_argument(
        "--stamp",
        choices=STAMPS,
        default="sample",
        help="time stamp stored with an observation (default sample)",
    )
    p.add_argument(
        "--lookahead",
        action="store_true",
        help="optimise the acquisition at the predicted sample time",
    )
    p.add_argument(
        "--benchmark-options", type=json_object, metavar="JSON", help="extra benchmark options"
    )
    p.add_argument(
        "--algorithm-options", type=json_object, metavar="JSON", help="algorithm options"
    )
    p.add_argument(
        "--max-iterations", type=positive_int, metavar="N", help="stop after N iterations"
    )
    p.add_argument(
        "--expert-cost", type=positive_float, metavar="SECONDS",
        help="seconds per expert answer (SparQ-GP-UCB side queries; default: benchmark's cost)",
    )
    p.add_argument(
        "--expert-noise-var", type=nonnegative_float, metavar="VAR",
        help="noise variance of the expert's answers (default: the benchmark's)",
    )
    # k asynchronous evaluators and overlap (tvbo.sim.parallel); validated by EngineOptions
    p.add_argument(
        "--evaluators", type=positive_int, default=1, metavar="K",
        help="asynchronous evaluators (integer, 1 to 64; default 1 = sequential)",
    )
    p.add_argument(
        "--overlap", action="store_true",
        help="compute the next query while evaluations run (not for abo, sparq-gp-ucb)",
    )
    p.add_argument(
        "--pending", default="hallucinate", metavar="NAME",
        help="pending-query strategy with k > 1 or overlap: hallucinate (default), "
        "kriging-believer, constant-liar-min|mean|max, none",
    )
    p.add_argument(
        "--recommendation", choices=("latest", "posterior-mean"), default=None,
        help="record the regret of this recommendation at each instant (regret_current)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_run)


def _add_theory_whatif(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "theory",
        help="write BOLT's theory figures: n* curves, eps_c, upper bounds (PNG + CSV)",
        description="Write the n* curves ([A] Fig. 2 / [B] Fig. 1), the lower-bound slope eps_c "
        "vs sampling frequency ([A] Fig. 1) and the upper bounds vs the maximal dataset size, "
        "with a CSV of every plotted number. Needs no campaign.",
    )
    p.add_argument("--outdir", required=True, metavar="DIR")
    p.add_argument("--dpi", type=positive_int, default=150, help="PNG resolution (default 150)")
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
    p.add_argument("--dpi", type=positive_int, default=150, help="PNG resolution (default 150)")
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
    p.add_argument("--dpi", type=positive_int, default=150, help="PNG resolution (default 150)")
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
    p.add_argument("--dpi", type=positive_int, default=150, help="PNG resolution (default 150)")
    p.set_defaults(func=cmd_paper_figures)


def build_parser() -> argparse.ArgumentParser:
    """The ``tvbo`` argument parser with all sub-commands."""
    parser = _Parser(
        prog=PROG,
        description="tvbo: time-varying Bayesian optimisation on a virtual clock.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_run(sub)

    p = sub.add_parser("list", help="list benchmarks, algorithms or compute models")
    p.add_argument("what", nargs="?", choices=LISTABLE, help="what to list (default: all)")
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
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("merge", help="merge run files into a campaign file")
    p.add_argument("runs", nargs="+", metavar="RUN.nc", help="run files")
    p.add_argument("--out", required=True, metavar="CAMPAIGN.nc", help="campaign file to write")
    p.set_defaults(func=cmd_merge)

    p = sub.add_parser(
        "table",
        help="write the papers' regret tables (CSV, Markdown, LaTeX) of a campaign",
        description="Average and time-integrated regret per benchmark x algorithm, mean ± s.e. "
        "over seeds: best in bold, cells whose interval mean ± CI x s.e. overlaps the best one's "
        "underlined, and the papers' normalised Overall row.",
    )
    p.add_argument("campaign", metavar="CAMPAIGN.nc")
    p.add_argument("--outdir", required=True, metavar="DIR")
    p.add_argument(
        "--ci",
        type=nonnegative_float,
        default=1.0,
        metavar="K",
        help="interval half-width in standard errors for the underlines (default 1, the papers' "
        "mean ± s.e.; 1.96 for 95%% normal intervals; 0 for no underlines)",
    )
    p.add_argument(
        "--format",
        nargs="+",
        choices=("csv", "md", "tex", "normalised"),
        metavar="FORMAT",
        help="formats to write: csv md tex normalised (default: all)",
    )
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
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("figures", help="write the figures (PNG) of a campaign")
    p.add_argument("campaign", metavar="CAMPAIGN.nc")
    p.add_argument("--outdir", required=True, metavar="DIR")
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
    _add_theory_whatif(sub)
    _add_paper_figures(sub)
    _add_reproduce(sub)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tvbo")
    except PackageNotFoundError:
        return "(not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tvbo`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["data"]:  # the data pipeline has its own command line (tvbo.data.__main__)
        from tvbo.data.__main__ import main as data_main

        return int(data_main(argv[1:]))
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (UsageError, ValueError) as err:
        # ValueError is the engine's contract for bad input; its message is the cause.
        fail(str(err))
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{PROG}: interrupted\n")
        return 130


if __name__ == "__main__":  # pragma: no cover - exercised through tvbo/__main__.py
    sys.exit(main())
