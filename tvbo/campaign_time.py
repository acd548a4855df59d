"""A measured model of a campaign's time: what the workflow's start-of-campaign ETA says.

The model file (:data:`MODEL_FILE`, YAML, re-fitted from run files by
``scripts/fit_campaign_time.py``) holds, per *compute class* (the compute model and, for
``counted``, the hardware profile: ``counted:botorch-i9-laptop``, ``counted:reference-2core``,
``polynomial``, ``measured``), algorithm, benchmark and *regime* (the evaluation cost and
horizon the runs had), what the sampled runs cost: their mean CPU seconds
(``run_cpu_seconds`` of the run files: the simulation and its f*, see
:data:`tvbo.results.schema.COST_ATTRIBUTES`), their mean number of iterations and the mean virtual
compute of one post-warm-up iteration. Besides:
the CPU seconds of one simulation job outside its runs (interpreter, imports, Snakemake's job,
writing), of one run outside the recorder's span (metrics, the run file), of building each
benchmark's shared f*(t) table, and of the analysis after the runs.

One run of a campaign cell is priced as

    seconds = (sampled seconds / sampled iterations) * iterations
    iterations = min(max_iterations, warmup + (H - warmup * c) / (c + compute / speed + wait))

with ``compute`` the cell's measured virtual compute per iteration and ``wait`` the rest of its
measured post-warm-up period (ABO's look-ahead waits; the spread of the compute), so a change
of horizon, cost or speed scales the sampled cost by the iterations it changes (linearly: an
algorithm whose dataset grows costs more per iteration on a longer run than this predicts).
Why regimes: a run's CPU per iteration follows its dataset, and the dataset follows the cost
(W-DBO's table runs Powell at c = 1 s where BOLT [B] runs it at c = 0.01 s, so its runs hold
other datasets); one cell per (algorithm, benchmark) averaged over both tables priced each with
the other's runs (refitting BOLT [B]'s shared benchmarks from W-DBO's runs moved its estimate
from 3,631 to 22,076 s). A config's run is priced from the cell of its own regime; a regime the
model has not seen takes the nearest sampled one of that algorithm and benchmark (in
|ln cost ratio| + |ln horizon ratio|, costs offset by :data:`COST_OFFSET`), scaled by the
iterations as above. Further fallbacks (:data:`FALLBACKS`): the algorithm's median over the
benchmarks it was sampled on, else the compute class's median over every sampled cell, else
every class's median; each fallback is named in the start message.

The campaign's wall time on ``cores`` cores: the jobs (``runs_per_job`` seeds each, their runs
plus the job's overhead) and the missing f*(t) tables, scheduled longest first on the cores
(LPT list scheduling, what Snakemake's greedy scheduler approaches), plus the analysis. All
durations are CPU seconds of an otherwise idle machine; a busy machine stretches the wall time,
not the CPU time.
"""

from __future__ import annotations

import heapq
import json
import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from tvbo.benchmarks.tables import COST_TABLES
from tvbo.config_check import compute_values

#: the packaged model file
MODEL_FILE = Path(__file__).with_name("campaign_time.yaml")
#: format of the model file
FORMAT = "tvbo-campaign-time"
FORMAT_VERSION = 2
#: how a cell absent from the model is priced, in the order tried
FALLBACKS: dict[str, str] = {
    "measured": "sampled on this algorithm and benchmark at this cost and horizon",
    "regime": "sampled on this algorithm and benchmark at another cost or horizon: the nearest "
              "one, scaled by the iterations",
    "data": "the benchmark's cost and horizon follow its data, not prepared yet: priced at the "
            "sampled runs' own",
    "algorithm": "benchmark not sampled for this algorithm: its median over sampled benchmarks",
    "class": "algorithm not sampled: the median of every sampled cell of this compute class",
    "any": "compute class not sampled: the median of every sampled cell",
}
#: seconds added to both costs when regimes are compared (a cost of 0 s has no logarithm)
COST_OFFSET = 1e-3
#: regimes closer than this (log distance) are the same regime
SAME_REGIME = 1e-9
#: default hardware profile of ``counted`` (tvbo.sim.profiles)
DEFAULT_PROFILE = "reference-2core"


class CampaignTimeModelError(ValueError):
    """A model file that cannot be used (unreadable, another format, missing fields)."""


@dataclass(frozen=True)
class Cell:
    """What the sampled runs of one (compute class, algorithm, benchmark, regime) cost."""

    seconds: float  # mean CPU seconds of one run (the recorder's span)
    iterations: float  # mean iterations of those runs
    compute: float  # mean virtual compute of one post-warm-up iteration (s, at speed 1)
    cost: float  # the runs' evaluation cost (s): with the horizon, the cell's regime
    horizon: float  # the runs' horizon (s)
    runs: int = 1
    #: mean virtual seconds of one post-warm-up iteration beyond its cost and compute: ABO's
    #: look-ahead waits, and the spread of the compute (an iteration count is the horizon over
    #: the MEAN period, which a mean compute under-counts when compute varies); may be negative
    wait: float = 0.0

    @property
    def seconds_per_iteration(self) -> float:
        return self.seconds / max(self.iterations, 1.0)

    def distance(self, cost: float, horizon: float) -> float:
        """How far this cell's regime is from ``(cost, horizon)`` (module docstring)."""
        return (abs(math.log((self.cost + COST_OFFSET) / (cost + COST_OFFSET)))
                + abs(math.log(max(self.horizon, 1e-12) / max(horizon, 1e-12))))


@dataclass(frozen=True)
class Model:
    """The contents of a model file (see the module docstring)."""

    #: compute class -> algorithm -> benchmark -> its cells, one per regime (cost, horizon)
    cells: dict[str, dict[str, dict[str, tuple[Cell, ...]]]]
    job_seconds: float
    #: a job's start-up grows with the campaign's jobs (Snakemake's bookkeeping per job scales
    #: with its DAG): one job costs job_seconds + job_seconds_per_job * (the campaign's jobs)
    job_seconds_per_job: float
    run_seconds: float
    table_seconds: dict[str, float]
    default_table_seconds: float
    analysis_seconds: float
    analysis_seconds_per_run: float
    source: str = ""
    notes: dict[str, Any] = field(default_factory=dict)


def _number(value: Any, where: str) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise CampaignTimeModelError(f"{where}: expected a number, found {value!r}") from None
    if not (math.isfinite(out) and out >= 0):
        raise CampaignTimeModelError(f"{where}: expected a finite number >= 0, found {value!r}")
    return out


def _signed(value: Any, where: str) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise CampaignTimeModelError(f"{where}: expected a number, found {value!r}") from None
    if not math.isfinite(out):
        raise CampaignTimeModelError(f"{where}: expected a finite number, found {value!r}")
    return out


def parse_model(data: Any, source: str = "campaign-time model") -> Model:
    """A :class:`Model` from the decoded YAML ``data``; :class:`CampaignTimeModelError` names
    the first bad field."""
    if not isinstance(data, Mapping):
        raise CampaignTimeModelError(f"{source}: expected a mapping, found {type(data).__name__}")
    if data.get("format") != FORMAT or data.get("format_version") != FORMAT_VERSION:
        raise CampaignTimeModelError(
            f"{source}: format expected {FORMAT!r} version {FORMAT_VERSION}, found "
            f"{data.get('format')!r} version {data.get('format_version')!r}")
    cells: dict[str, dict[str, dict[str, tuple[Cell, ...]]]] = {}
    for key, algorithms in (data.get("cells") or {}).items():
        for algorithm, benchmarks in (algorithms or {}).items():
            for benchmark, rows in (benchmarks or {}).items():
                where = f"{source}: cells.{key}.{algorithm}.{benchmark}"
                if not isinstance(rows, list) or not rows:
                    raise CampaignTimeModelError(
                        f"{where}: expected a non-empty list of regimes, found {rows!r}")
                row_of = cells.setdefault(str(key), {}).setdefault(str(algorithm), {})
                row_of[str(benchmark)] = tuple(_cell(row, f"{where}[{i}]")
                                               for i, row in enumerate(rows))
                regimes = [(c.cost, c.horizon) for c in row_of[str(benchmark)]]
                if len(set(regimes)) < len(regimes):
                    raise CampaignTimeModelError(f"{where}: a regime (cost, horizon) is listed "
                                                 "twice")
    overheads = data.get("overheads") or {}
    tables = data.get("oracle_tables") or {}
    return Model(
        cells=cells,
        job_seconds=_number(overheads.get("job_seconds"), f"{source}: overheads.job_seconds"),
        job_seconds_per_job=_number(overheads.get("job_seconds_per_job", 0.0),
                                    f"{source}: overheads.job_seconds_per_job"),
        run_seconds=_number(overheads.get("run_seconds"), f"{source}: overheads.run_seconds"),
        table_seconds={str(k): _number(v, f"{source}: oracle_tables.{k}")
                       for k, v in (tables.get("seconds") or {}).items()},
        default_table_seconds=_number(tables.get("default_seconds"),
                                      f"{source}: oracle_tables.default_seconds"),
        analysis_seconds=_number(overheads.get("analysis_seconds"),
                                 f"{source}: overheads.analysis_seconds"),
        analysis_seconds_per_run=_number(overheads.get("analysis_seconds_per_run"),
                                         f"{source}: overheads.analysis_seconds_per_run"),
        source=source,
        notes=dict(data.get("measured") or {}),
    )


def _cell(row: Any, where: str) -> Cell:
    if not isinstance(row, Mapping):
        raise CampaignTimeModelError(f"{where}: expected a mapping, found {row!r}")
    return Cell(
        seconds=_number(row.get("seconds"), f"{where}.seconds"),
        iterations=_number(row.get("iterations"), f"{where}.iterations"),
        compute=_number(row.get("compute", 0.0), f"{where}.compute"),
        cost=_number(row.get("cost"), f"{where}.cost"),
        horizon=_number(row.get("horizon"), f"{where}.horizon"),
        runs=int(_number(row.get("runs", 1), f"{where}.runs")),
        wait=_signed(row.get("wait", 0.0), f"{where}.wait"),
    )


@lru_cache(maxsize=4)
def _load_cached(path: str, mtime: float) -> Model:
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        raise CampaignTimeModelError(f"campaign-time model {path}: unreadable ({err})") from None
    return parse_model(data, f"campaign-time model {path}")


def load_model(path: str | Path | None = None) -> Model:
    """The model of ``path`` (default: the packaged :data:`MODEL_FILE`)."""
    path = Path(path) if path is not None else MODEL_FILE
    try:
        mtime = path.stat().st_mtime
    except OSError:
        raise CampaignTimeModelError(f"campaign-time model {path}: no such file") from None
    return _load_cached(str(path), mtime)


# -- the config's cells ---------------------------------------------------------------------------
def compute_class(config: Mapping[str, Any]) -> str:
    """``counted:<profile>`` (profile file stem, default :data:`DEFAULT_PROFILE`), or the model
    name (``polynomial``, ``measured``)."""
    model = str(config.get("compute") or "counted")
    if model == "counted":
        return f"counted:{Path(str(config.get('profile') or DEFAULT_PROFILE)).stem}"
    return model


#: cost (s) and horizon (s) of a benchmark whose own cannot be known and was never sampled
DEFAULT_COST, DEFAULT_HORIZON = 0.1, 600.0


def known_cost_and_horizon(config: Mapping[str, Any], benchmark: str
                           ) -> tuple[float | None, float | None]:
    """The evaluation cost and horizon of ``benchmark`` under ``config``: its override, else
    the cost table's row, else (a benchmark the tables do not list: the PE-GP-UCB toy, BOKE's
    static functions, a plugin's) the benchmark's own defaults under its options; None where
    none of them says (a real-data benchmark whose data is not prepared yet: its cost and
    horizon follow its data, e.g. ozone's days)."""
    table = COST_TABLES.get(str(config.get("cost_table") or "metronome"), {})
    row = dict(table.get(benchmark, {}))
    override = (config.get("benchmark_options") or {}).get(benchmark) or {}
    if not row:
        own = _own_cost_and_horizon(benchmark, json.dumps(override.get("options") or {},
                                                          sort_keys=True, default=str))
        if own is not None:
            row = {"cost": own[0], "horizon": own[1]}
    cost = override.get("cost", row.get("cost"))
    horizon = config.get("horizon") or override.get("horizon") or row.get("horizon")
    return (None if cost is None else float(cost or 0.0),
            None if horizon is None else float(horizon))


def cost_and_horizon(config: Mapping[str, Any], benchmark: str,
                     sampled: Cell | None = None) -> tuple[float, float]:
    """:func:`known_cost_and_horizon`, with what it cannot know taken from ``sampled`` (a cell
    of the model: the runs' own regime), else :data:`DEFAULT_COST` and
    :data:`DEFAULT_HORIZON`."""
    cost, horizon = known_cost_and_horizon(config, benchmark)
    if cost is None:
        cost = sampled.cost if sampled is not None else DEFAULT_COST
    if horizon is None:
        horizon = sampled.horizon if sampled is not None else DEFAULT_HORIZON
    return cost, horizon


@lru_cache(maxsize=256)
def _own_cost_and_horizon(benchmark: str, options_json: str) -> tuple[float, float] | None:
    """The cost and horizon a benchmark sets itself under its options (None: it cannot be
    built here, e.g. its data is not downloaded yet). Why: a run's iterations follow them, and
    the toy's 100 one-second steps priced as 600 s at 0.1 s were 60 times too many."""
    try:
        from tvbo.benchmarks import make  # lazy: only for benchmarks the tables do not list

        bench = make(benchmark, **json.loads(options_json))
        return float(bench.cost), float(bench.horizon)
    except Exception:  # noqa: BLE001 -- any failure leaves the stated defaults
        return None


def iterations(config: Mapping[str, Any], benchmark: str, compute: float,
               speed: float = 1.0, wait: float = 0.0, sampled: Cell | None = None) -> float:
    """Expected iterations of one run when an iteration computes ``compute`` virtual seconds
    at speed 1 and waits ``wait`` more (module docstring); ``sampled``: as for
    :func:`cost_and_horizon`."""
    cost, horizon = cost_and_horizon(config, benchmark, sampled)
    warmup = int(config.get("warmup") or 0)
    step = cost + compute / max(float(speed), 1e-12)
    if step + wait > 0:
        step += wait
    rest = max(horizon - warmup * cost, 0.0)
    count = warmup + (rest / step if step > 0 else 1e6)
    cap = config.get("max_iterations")
    return float(min(count, cap)) if cap else float(count)


@dataclass(frozen=True)
class Price:
    """The predicted CPU seconds of one run and how the model got them."""

    seconds: float
    iterations: float
    basis: str  # a key of FALLBACKS


def _median_cell(cells: Iterable[Cell]) -> Cell | None:
    cells = list(cells)
    if not cells:
        return None
    return Cell(seconds=statistics.median(c.seconds_per_iteration for c in cells),
                iterations=1.0, compute=statistics.median(c.compute for c in cells),
                cost=math.nan, horizon=math.nan, runs=sum(c.runs for c in cells),
                wait=statistics.median(c.wait for c in cells))


def nearest_cell(cells: Iterable[Cell], cost: float, horizon: float) -> Cell | None:
    """The cell of the regime nearest ``(cost, horizon)`` (the first listed on ties)."""
    return min(cells, key=lambda c: c.distance(cost, horizon), default=None)


def price_run(model: Model, config: Mapping[str, Any], benchmark: str, algorithm: str,
              speed: float = 1.0) -> Price:
    """CPU seconds of one run of ``algorithm`` on ``benchmark`` (the recorder's span plus the
    per-run overhead), with the fallback it needed."""
    # the algorithm's own compute model where compute_per_algorithm gives one (the run files
    # it was sampled from record that model: scripts/fit_campaign_time.py)
    key = compute_class(compute_values(config, algorithm))
    by_class = model.cells.get(key, {})
    cells = by_class.get(algorithm, {}).get(benchmark, ())
    # a cost or horizon unknown until the data is prepared: the most sampled regime of this
    # algorithm on the benchmark stands in for it, else that of any algorithm on it
    sampled = max(cells or [c for a in by_class.values() for c in a.get(benchmark, ())],
                  key=lambda c: c.runs, default=None)
    cost, horizon = cost_and_horizon(config, benchmark, sampled)
    cell = nearest_cell(cells, cost, horizon)
    basis = "measured"
    if cell is not None and cell.distance(cost, horizon) > SAME_REGIME:
        basis = "regime"
    elif cell is not None and None in known_cost_and_horizon(config, benchmark):
        basis = "data"
    if cell is None:
        basis, cell = "algorithm", _median_cell(c for cells in by_class.get(algorithm, {}).values()
                                                for c in cells)
    if cell is None:
        basis, cell = "class", _median_cell(c for a in by_class.values() for cells in a.values()
                                            for c in cells)
    if cell is None:
        basis, cell = "any", _median_cell(c for k in model.cells.values() for a in k.values()
                                          for cells in a.values() for c in cells)
    if cell is None:
        raise CampaignTimeModelError(f"{model.source}: no sampled cells at all")
    n = iterations(config, benchmark, cell.compute, speed, cell.wait, sampled)
    return Price(seconds=cell.seconds_per_iteration * n + model.run_seconds, iterations=n,
                 basis=basis)


def lpt_makespan(durations: Iterable[float], cores: int) -> float:
    """Wall time of ``durations`` on ``cores`` workers, longest first (LPT list scheduling)."""
    loads = [0.0] * max(int(cores), 1)
    for d in sorted(durations, reverse=True):
        heapq.heapreplace(loads, loads[0] + d)
    return max(loads)


@dataclass
class Estimate:
    """A campaign's predicted time (CPU seconds of an idle machine)."""

    runs: int
    jobs: int
    tables: int
    run_cpu: float  # the runs (recorder span + per-run overhead)
    job_cpu: float  # the jobs' own overhead
    table_cpu: float
    analysis_cpu: float
    wall: float  # on the cores: LPT of tables and jobs, then the analysis
    cores: int
    fallbacks: dict[str, list[str]]  # basis -> "algorithm/benchmark" cells priced by it

    @property
    def cpu(self) -> float:
        return self.run_cpu + self.job_cpu + self.table_cpu + self.analysis_cpu


def estimate(model: Model, config: Mapping[str, Any], pending: Mapping[tuple[str, str, float],
             int], cores: int, tables: Iterable[str] = ()) -> Estimate:
    """The time of ``pending`` runs (``(benchmark, algorithm, speed) -> number of seeds``) and of
    building the f*(t) tables of ``tables`` (benchmark names) on ``cores`` cores."""
    per_job = max(int(config.get("runs_per_job") or 1), 1)
    job_runs: list[float] = []  # the runs' seconds of each job
    fallbacks: dict[str, list[str]] = {}
    runs = 0
    for (benchmark, algorithm, speed), count in pending.items():
        if count <= 0:
            continue
        price = price_run(model, config, benchmark, algorithm, speed)
        if price.basis != "measured":
            fallbacks.setdefault(price.basis, []).append(f"{algorithm}/{benchmark}")
        job_runs += [min(per_job, count - start) * price.seconds
                     for start in range(0, count, per_job)]
        runs += count
    jobs = len(job_runs)
    start_up = model.job_seconds + model.job_seconds_per_job * jobs
    durations = [start_up + seconds for seconds in job_runs]
    run_cpu, job_cpu = float(sum(job_runs)), start_up * jobs
    tables = sorted(set(tables))
    table_times = [model.table_seconds.get(b, model.default_table_seconds) for b in tables]
    analysis = (model.analysis_seconds + model.analysis_seconds_per_run * runs) if runs else 0.0
    wall = lpt_makespan(durations + table_times, cores) + analysis
    return Estimate(runs=runs, jobs=jobs, tables=len(tables), run_cpu=run_cpu, job_cpu=job_cpu,
                    table_cpu=float(sum(table_times)), analysis_cpu=analysis, wall=wall,
                    cores=max(int(cores), 1), fallbacks=fallbacks)
