"""k asynchronous evaluators, and compute/evaluation overlap, on the virtual clock.

The engine (:mod:`tvbo.sim.engine`) runs this loop instead of its sequential one when
``evaluators > 1`` or ``overlap`` is on; with ``evaluators == 1`` and no overlap the sequential
loop runs unchanged, so today's run files are reproduced bit for bit.

Semantics (one optimiser process, one CPU; k evaluators, a SimPy ``Resource`` of capacity k):

* The algorithm is a single sequential worker: it either ingests one completed observation or
  computes one proposal at a time, and the clock advances by the priced compute of each call.
* **Completions are ingested in finish order.** Before every proposal, every observation that
  has arrived is ingested first (so a proposal uses all the data available when it starts).
* **A proposal is made whenever an evaluator is free** (fewer than k queries outstanding). The
  algorithm knows the queries still running -- their points and sample times -- through
  ``Algorithm.set_pending``; the pending strategy (:mod:`tvbo.acquisition.pending`) decides what
  the acquisition makes of them.
* **Overlap** (``overlap=True``): the algorithm may also prepare one query beyond the k running
  ones -- it computes while every evaluator is busy, and the prepared query waits in the
  evaluators' FIFO queue and is sampled the moment one frees. With one evaluator the response
  time becomes about ``max(c, compute)`` instead of ``c + compute``. The query's sample time is
  when an evaluator takes it; its acquisition was optimised for its decision time (or, with
  ``lookahead``, for ``decide + last proposal's compute``).
* Each evaluation occupies its evaluator for exactly ``c`` seconds from its sample time.
* Warm-up: the first ``warmup`` queries are uniform random and cost no compute, so k of them
  start at once; the first model-based proposal waits until every warm-up observation has been
  ingested (the warm-up design is the initial dataset, as in the papers, and a GP needs data).
* Horizon: no proposal starts at or after H; a query that would be sampled after H is dropped;
  queries sampled by H complete and are ingested (as in the sequential loop).

Recorded per query (iteration = completion order), besides the sequential loop's variables:
``hidden_compute`` -- seconds of this query's compute (its proposal and its ingestion) during
which at least one evaluator was busy, i.e. compute hidden behind evaluation (0 in a sequential
run); ``pending_at_decide`` -- queries outstanding when it was proposed; ``evaluators_busy`` --
evaluators busy at its sample time (itself included).

Algorithms that cannot run here (``Algorithm.parallel_blocker``): SparQ-GP-UCB (side queries to
the expert are a sequential protocol inside one iteration) and ABO (its look-ahead chooses each
query's sample time, so it owns the evaluator's timeline). :func:`check_parallel` names them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from tvbo.acquisition.pending import make_pending
from tvbo.algorithms.base import Algorithm, Query
from tvbo.benchmarks.base import observation
from tvbo.results.labels import parallel_label, parse_label
from tvbo.work import STANDARD_PHASES

__all__ = ["check_parallel", "parallel_label", "parallel_process", "parse_label"]

#: consecutive iterations without clock progress tolerated before the run is declared stuck
_MAX_ZERO_STEPS = 1000


def check_parallel(algorithm: Algorithm, options) -> None:
    """Raise ``ValueError`` (before any work) if ``algorithm`` cannot run with these options."""
    what = (f"evaluators={options.evaluators}" if options.evaluators > 1 else "overlap")
    reason = algorithm.parallel_blocker()
    if reason is not None:
        raise ValueError(f"algorithm {algorithm.name!r} cannot run with {what}: {reason}")
    strategy = make_pending(options.pending)
    if strategy.lie is not None and not algorithm.supports_pending():
        raise ValueError(
            f"algorithm {algorithm.name!r} cannot condition on pending queries (pending "
            f"strategy {strategy.name!r}); use pending: none"
        )


@dataclass(eq=False)
class _Query:
    """One query's life: proposal, evaluation, arrival (compared by identity)."""

    x: np.ndarray
    warm: bool
    t_decide: float
    t_query: float
    propose_charges: dict[str, float]
    pending_at_decide: int
    hidden: float = 0.0
    t_sample: float = float("nan")
    t_available: float = float("nan")
    y: float = float("nan")
    #: the noiseless f(x, t_sample), from the same evaluation as ``y``
    f: float = float("nan")
    busy_at_sample: int = 0
    dropped: bool = False
    extra: dict[str, float] = field(default_factory=dict)


def _busy_overlap(intervals: list[tuple[float, float]], a: float, b: float) -> float:
    """Length of ``[a, b]`` covered by the union of ``intervals``."""
    if b <= a:
        return 0.0
    cuts = sorted((max(s, a), min(e, b)) for s, e in intervals if e > a and s < b)
    total, cur_s, cur_e = 0.0, None, None
    for s, e in cuts:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def parallel_process(engine):
    """The SimPy process of the optimiser with k evaluators (see the module docstring)."""
    env, algo, opts = engine.env, engine.algorithm, engine.options
    bench, horizon = engine.benchmark, engine.horizon
    capacity = opts.evaluators + (1 if opts.overlap else 0)
    outstanding: list[_Query] = []  # dispatched, not yet arrived (or dropped)
    arrived: list[_Query] = []  # completed, not yet ingested, in finish order
    busy: list[tuple[float, float]] = []  # evaluation intervals [t_sample, t_sample + c]
    state = {"wake": env.event()}
    dispatched = 0
    last_propose = 0.0
    zero_streak = 0

    def notify() -> None:
        if not state["wake"].triggered:
            state["wake"].succeed()

    def evaluate(q: _Query):
        with engine.evaluator.request() as slot:
            yield slot
            q.t_sample = env.now
            if q.t_sample > horizon:
                q.dropped = True  # would be sampled after H: never evaluated
            else:
                q.busy_at_sample = engine.evaluator.count
                duration = engine.evaluation_time()
                busy.append((q.t_sample, q.t_sample + duration))
                q.f, q.y = observation(bench, q.x, q.t_sample, engine.streams["noise"])
                yield env.timeout(duration)
                q.t_available = env.now
        outstanding.remove(q)
        if not q.dropped:
            arrived.append(q)
        notify()

    def hidden(a: float, b: float) -> float:
        return _busy_overlap(busy, a, b)

    while True:
        # 1. ingest every arrival, in finish order
        while arrived:
            q = arrived.pop(0)
            t0 = env.now
            engine.work.clear()
            stamp = q.t_sample if opts.stamp == "sample" else q.t_decide
            with engine.work.phase("update"):
                algo.ingest(q.x, stamp, q.y, now=q.t_available, warmup=q.warm)
            ingest_charges = engine._charge("ingest", "update", q.warm)
            # fit-health records of this ingestion: stamped with the index the query's record
            # gets (completion order) and the time the ingestion began
            engine._drain_fits(len(engine.recorder), "ingest", t0)
            yield env.timeout(sum(ingest_charges.values()))
            t_ingested = env.now
            q.hidden += hidden(t0, t_ingested)
            _record(engine, q, ingest_charges, t_ingested)
            zero_streak = zero_streak + 1 if t_ingested == q.t_decide else 0
            if zero_streak >= _MAX_ZERO_STEPS:
                raise RuntimeError(
                    "the virtual clock does not advance: evaluation cost is 0 and the compute "
                    "model charges nothing, so the horizon can never be reached"
                )
            if engine.progress is not None:
                engine.progress(env.now, horizon, len(engine.recorder))
        # 2. propose while an evaluator (or, with overlap, the one prepared slot) is free
        warmed_up = dispatched < opts.warmup or len(engine.recorder) >= opts.warmup
        can_propose = (env.now < horizon and len(outstanding) < capacity and warmed_up
                       and (opts.max_iterations is None or dispatched < opts.max_iterations))
        if can_propose:
            q = yield from _propose(engine, dispatched, outstanding, last_propose, hidden)
            if q is None:
                continue
            if not q.warm:
                last_propose = sum(q.propose_charges.values())
            outstanding.append(q)
            dispatched += 1
            env.process(evaluate(q))
            continue
        if not outstanding and not arrived:
            return
        if arrived:
            continue
        state["wake"] = env.event()
        yield state["wake"]


def _propose(engine, index: int, outstanding: list[_Query], last_propose: float, hidden):
    """Compute one query (random during warm-up); None if its compute ran past the horizon."""
    env, algo, opts = engine.env, engine.algorithm, engine.options
    warm = index < opts.warmup
    t_decide = env.now
    engine.work.clear()
    if warm:
        return _Query(x=engine._warmup_query(), warm=True, t_decide=t_decide, t_query=t_decide,
                      propose_charges={}, pending_at_decide=len(outstanding))
    X = np.asarray([q.x for q in outstanding], float).reshape(-1, engine.benchmark.d)
    T = np.asarray([q.t_sample if np.isfinite(q.t_sample) else t_decide for q in outstanding])
    algo.set_pending(X, T)
    t_query = t_decide + (last_propose if opts.lookahead else 0.0)
    with engine.work.phase("acquisition"):
        proposal = algo.propose(t_query)
    algo.set_pending(np.empty((0, engine.benchmark.d)), np.empty(0))
    if isinstance(proposal, Query):
        raise RuntimeError(f"{algo.name} returned a timed Query, which k evaluators do not model")
    x = np.asarray(proposal, float).reshape(engine.benchmark.d)
    charges = engine._charge("propose", "acquisition", False)
    # fits of this proposal: stamped with the number of records so far (the data it saw)
    engine._drain_fits(len(engine.recorder), "propose", t_decide)
    yield env.timeout(sum(charges.values()))
    q = _Query(x=engine._checked_query(x), warm=False, t_decide=t_decide, t_query=t_query,
               propose_charges=charges, pending_at_decide=len(outstanding))
    q.hidden = hidden(t_decide, env.now)
    if env.now > engine.horizon:
        return None  # computed too late: never evaluated within the horizon
    return q


def _record(engine, q: _Query, ingest_charges: dict[str, float], t_ingested: float) -> None:
    algo = engine.algorithm
    engine.check_work(q.warm)  # counted: an algorithm reporting no work is refused
    f_star = math.nan  # deferred: every query's f* at once after the run (Engine._f_stars)
    charges = {p: q.propose_charges.get(p, 0.0) + ingest_charges.get(p, 0.0)
               for p in set(q.propose_charges) | set(ingest_charges) | set(STANDARD_PHASES)}
    engine.recorder.add(
        t_decide=q.t_decide, t_query=q.t_query, t_sample=q.t_sample, t_available=q.t_available,
        t_ingested=t_ingested, x=q.x, y=q.y, f=q.f, f_star=f_star, is_warmup=q.warm,
        dataset_size=algo.dataset_size(), compute=charges, state=algo.state(),
        extra={"hidden_compute": q.hidden, "pending_at_decide": float(q.pending_at_decide),
               "evaluators_busy": float(q.busy_at_sample)},
        recommendation=engine.recommendation(q.x, q.t_available),
    )
