"""The SimPy engine: one algorithm optimising one benchmark on a virtual clock.

Time semantics of iteration k (DESIGN.md, "Time semantics"):

1. ``t_decide[k] = env.now``: the algorithm reads the clock.
   (SparQ-GP-UCB) ``side_queries`` may first ask the EXPERT about a few points: each answer
   occupies the expert for ``expert_cost`` s and has noise ``expert_noise_var``; the answers go
   to ``ingest_side`` before the proposal (phase ``side``; counts recorded as ``expert_queries``).
2. ``propose`` computes the query; the clock advances by that call's compute time (fit +
   acquisition, priced by the compute model). With ``lookahead`` the acquisition is optimised
   at the *predicted* sample time ``t_decide + (last propose duration)`` instead of ``t_decide``.
3. ``t_sample[k] = env.now``: ``y = f(x, t_sample) + eps``. The evaluation occupies the evaluator
   for ``c`` seconds; the value is available at ``t_available = t_sample + c``.
   An algorithm may ask to sample later (``Query(x, at)``, ABO's look-ahead): the engine then
   idles until ``at``.
4. ``ingest`` takes the observation, stamped with ``t_sample`` (``stamp="sample"``, default) or
   with ``t_decide`` (``stamp="decide"``, what the public W-DBO code does); the clock advances by
   that call's compute time (GP update, dataset cleaning) to ``t_ingested``.
5. The response time is ``R[k] = t_decide[k+1] - t_decide[k] = t_ingested[k] - t_decide[k]``.

Fit health: after every algorithm call the engine drains the hyperparameter-fit records that
the call queued on the work counter (:meth:`~tvbo.work.WorkCounter.drain_fits`) into the
recorder, stamped with the iteration, the call and the virtual time at which the call began
(run-file dimension ``fit``). Recording prices nothing: virtual times are unchanged.

Events: the sequential loop yields a SimPy timeout only for a positive duration. It is the
simulation's one process, so a 0 s wait (a free phase under ``counted``; no side queries)
changes no instant, and skipping it spares the floor rows, which compute nothing, three events
per query (``scripts/compare_runs.py``: run files unchanged).

Warm-up: the first ``warmup`` queries are uniform random (no acquisition); their ingestion is
charged like any other. The run stops at the first clock read at or after the horizon H; a query
whose sample time would fall after H is discarded (it was never evaluated within the horizon).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import simpy

from tvbo.acquisition.pending import make_pending
from tvbo.algorithms.base import Algorithm, ProblemInfo, Query
from tvbo.benchmarks.base import observation
from tvbo.sim.compute import ComputeModel
from tvbo.sim.parallel import check_parallel, parallel_process
from tvbo.sim.recorder import Recorder
from tvbo.work import STANDARD_PHASES, WorkCounter

#: consecutive zero-duration iterations tolerated before the run is declared stuck
_MAX_ZERO_ITERATIONS = 1000


@dataclass(frozen=True)
class EngineOptions:
    """Engine settings that are not part of the benchmark or the algorithm.

    Trusted, not checked: each field is a run option declared once in
    :data:`tvbo.runspec.RUN_SPEC` (``engine=True``: type, bounds, choices), and a run builds
    these options from its checked declaration, ``check_run_options(...).engine_options()``
    (:class:`tvbo.runspec.CheckedRun`), so the engine does not judge a value a second time.
    Code that builds them by hand (tests, :mod:`tvbo.sim.work_probe`) gives valid values;
    ``tests/test_runspec.py`` ties the fields and defaults to the declaration.
    """

    warmup: int = 15
    time_grid_step: float = 1.0
    stamp: str = "sample"
    lookahead: bool = False
    max_iterations: int | None = None
    #: k asynchronous evaluators (tvbo.sim.parallel); 1 = today's sequential loop
    evaluators: int = 1
    #: compute the next query while evaluations run (tvbo.sim.parallel)
    overlap: bool = False
    #: how the acquisition treats queries still running (tvbo.acquisition.pending)
    pending: str = "hallucinate"
    #: record the regret of this recommendation on the time grid; None = not recorded
    recommendation: str | None = None
    #: the expert answering side queries (SparQ-GP-UCB): seconds per answer and noise variance;
    #: None = the benchmark's evaluation cost / noise variance
    expert_cost: float | None = None
    expert_noise_var: float | None = None
    #: coefficient of variation of each evaluation's duration (mean: the benchmark's cost c);
    #: None or 0 = every evaluation takes exactly c (see :meth:`Engine.evaluation_time`)
    cost_cv: float | None = None


def no_work_message(algorithm: str, model: str) -> str:
    """The one line refusing ``algorithm`` under ``model``: what went wrong and what to use."""
    return (
        f"algorithm {algorithm!r} reported no work (tvbo.work) in its first iteration after "
        f"warm-up, so compute: {model} would charge its computation 0 s and every regret would "
        "be wrong; run it with compute: measured (the CPU time it really takes here) or "
        "polynomial (an explicit R(n), e.g. fitted by tvbo calibrate --from-runs), or, if its "
        "computation really is negligible, declare compute_free = True on its class"
    )


def seed_streams(seed: int) -> dict[str, np.random.Generator]:
    """Independent random streams of one run: a change in one never shifts another.

    A stream is child ``i`` of the seed's ``SeedSequence`` whatever the number of streams, so a
    stream appended to the end (``duration``, read only when ``cost_cv`` > 0) leaves the others,
    and every run file made before it, bit-identical."""
    names = ("warmup", "noise", "algorithm", "expert", "duration")
    children = np.random.SeedSequence(int(seed)).spawn(len(names))
    return {n: np.random.default_rng(c) for n, c in zip(names, children, strict=True)}


class Engine:
    """Runs one (benchmark, algorithm, seed) on the virtual clock and records everything."""

    def __init__(
        self,
        benchmark,
        algorithm: Algorithm,
        compute: ComputeModel,
        *,
        seed: int = 0,
        options: EngineOptions | None = None,
        progress: Callable[[float, float, int], None] | None = None,
    ) -> None:
        self.benchmark = benchmark
        self.algorithm = algorithm
        self.compute = compute
        self.seed = int(seed)
        self.options = options or EngineOptions()
        self.progress = progress
        self.horizon = float(benchmark.horizon)
        self.streams = seed_streams(self.seed)
        self.work = WorkCounter()
        self.recorder = Recorder(benchmark.d)
        self.env = simpy.Environment()
        self.evaluator = simpy.Resource(self.env, capacity=self.options.evaluators)
        self.expert = simpy.Resource(self.env, capacity=1)
        #: virtual seconds per phase of the current iteration's side queries (set by _ask_expert)
        self._side_charges: dict[str, float] = {}
        #: work reported after warm-up so far, and whether the first such iteration was checked
        #: (a compute model that prices work refuses an algorithm that reports none)
        self._post_warmup_work = 0.0
        self._work_checked = False
        self.expert_cost = (float(benchmark.cost) if self.options.expert_cost is None
                            else float(self.options.expert_cost))
        self.expert_noise_var = (float(benchmark.noise_var) if self.options.expert_noise_var
                                 is None else float(self.options.expert_noise_var))
        candidates = getattr(benchmark, "candidates", None)
        self.problem = ProblemInfo(
            d=benchmark.d,
            candidates=None if candidates is None else np.asarray(candidates, float),
            temporal_kernel=getattr(benchmark, "temporal_kernel", "matern32"),
            candidate_priors=tuple(getattr(benchmark, "candidate_priors", ()) or ()),
        )

    def evaluation_time(self) -> float:
        """Seconds one evaluation occupies its evaluator: the cost c, or with ``cost_cv`` > 0 a
        Gamma draw with mean c and that coefficient of variation (shape 1/cv^2, scale c cv^2).

        Why Gamma: durations stay positive, the mean stays the published c (so the average
        throughput of k evaluators is unchanged), and cv alone sets how much they spread (cv = 1
        is exponential; hyperparameter-optimisation simulators use the same family for job
        times). The draws come from the run's own ``duration`` stream, so they never shift the
        noise, warm-up or algorithm streams."""
        cost = float(self.benchmark.cost)
        cv = self.options.cost_cv
        if not cv or cost == 0.0:
            return cost
        shape = 1.0 / (cv * cv)
        return float(self.streams["duration"].gamma(shape, cost / shape))

    # -- pricing --------------------------------------------------------------------------------
    def _charge(self, call: str, outer_phase: str, warmup: bool) -> dict[str, float]:
        """Virtual seconds per phase for the work recorded since the last ``work.clear()``."""
        counts = self.work.counts()
        cpu = self.work.cpu_seconds()
        if not warmup and not self._work_checked:  # only until check_work has decided
            self._post_warmup_work += sum(sum(c.values()) for c in counts.values())
        phases = set(counts) | set(cpu) | {outer_phase}
        if not counts and self.compute.free_without_work:
            # the model would price every phase at exactly 0 s: skip asking it (a floor row's
            # 180,001 iterations called it three times each)
            return dict.fromkeys(sorted(phases), 0.0)
        n = self.algorithm.dataset_size()
        return {
            p: self.compute.seconds(p, counts.get(p, {}), cpu.get(p, 0.0), n,
                                    call=call, warmup=warmup)
            for p in sorted(phases)
        }

    def check_work(self, warm: bool) -> None:
        """After the first post-warm-up iteration: refuse an algorithm that reported no work
        under a compute model that prices work (``counted``), instead of charging it 0 s.

        An outside algorithm that never calls ``self.work`` would otherwise get free compute,
        silently, and every regret it reports would be wrong for the question the lab asks. An
        algorithm whose computation really is negligible says so: ``compute_free = True``.
        """
        if warm or self._work_checked:
            return
        self._work_checked = True
        if (self._post_warmup_work > 0 or not self.compute.requires_work
                or getattr(self.algorithm, "compute_free", False)):
            return
        raise ValueError(no_work_message(self.algorithm.name, self.compute.name))

    # -- the process ----------------------------------------------------------------------------
    def _warmup_query(self) -> np.ndarray:
        rng = self.streams["warmup"]
        if self.problem.candidates is not None:
            return self.problem.candidates[rng.integers(len(self.problem.candidates))].copy()
        return rng.uniform(0.0, 1.0, size=self.benchmark.d)

    def _process(self):
        env, algo, opts = self.env, self.algorithm, self.options
        k = 0
        last_propose = 0.0
        zero_streak = 0
        while env.now < self.horizon:
            if opts.max_iterations is not None and k >= opts.max_iterations:
                return
            warm = k < opts.warmup
            t_decide = env.now
            self.work.clear()
            if warm:
                x = self._warmup_query()
                t_query = t_decide
                propose_charges: dict[str, float] = {}
                side_charges: dict[str, float] = {}
                n_expert, expert_time = 0, 0.0
            else:
                n_expert, expert_time = yield from self._ask_expert(algo, t_decide, k)
                self.work.clear()  # the side phase is priced; propose starts from zero
                t_decide_query = env.now
                t_query = t_decide_query + (last_propose if opts.lookahead else 0.0)
                with self.work.phase("acquisition"):
                    proposal = algo.propose(t_query)
                self._drain_fits(k, "propose", t_decide_query)
                wait_until = proposal.at if isinstance(proposal, Query) else None
                x = np.asarray(getattr(proposal, "x", proposal), float).reshape(self.benchmark.d)
                propose_charges = self._charge("propose", "acquisition", warm)
                last_propose = sum(propose_charges.values())
                if last_propose:  # a 0 s wait moves nothing in a one-process simulation
                    yield env.timeout(last_propose)
                if wait_until is not None and wait_until > env.now:
                    yield env.timeout(wait_until - env.now)  # past H: discarded below
            t_sample = env.now
            if t_sample > self.horizon:
                return  # computed too late: never evaluated within the horizon
            x = self._checked_query(x)
            with self.evaluator.request() as slot:
                yield slot
                f, y = observation(self.benchmark, x, t_sample, self.streams["noise"])
                yield env.timeout(self.evaluation_time())
            t_available = env.now
            self.work.clear()
            stamp = t_sample if opts.stamp == "sample" else t_decide
            with self.work.phase("update"):
                algo.ingest(x, stamp, y, now=t_available, warmup=warm)
            self._drain_fits(k, "ingest", t_available)
            ingest_charges = self._charge("ingest", "update", warm)
            ingest_time = sum(ingest_charges.values())
            if ingest_time:
                yield env.timeout(ingest_time)
            t_ingested = env.now

            self.check_work(warm)
            f_star = math.nan  # deferred: every query's f* at once after the run (_f_stars)
            if not warm:
                side_charges = self._side_charges
            charges = {
                p: propose_charges.get(p, 0.0) + ingest_charges.get(p, 0.0)
                + side_charges.get(p, 0.0)
                for p in set(propose_charges) | set(ingest_charges) | set(side_charges)
                | set(STANDARD_PHASES)
            }
            self.recorder.add(
                t_decide=t_decide, t_query=t_query, t_sample=t_sample, t_available=t_available,
                t_ingested=t_ingested, x=x, y=y, f=f, f_star=f_star, is_warmup=warm,
                dataset_size=algo.dataset_size(), compute=charges, state=algo.state(),
                expert_queries=n_expert, expert_time=expert_time,
                recommendation=self.recommendation(x, t_available),
            )
            k += 1
            zero_streak = zero_streak + 1 if t_ingested == t_decide else 0
            if zero_streak >= _MAX_ZERO_ITERATIONS:
                raise RuntimeError(
                    "the virtual clock does not advance: evaluation cost is 0 and the compute "
                    "model charges nothing, so the horizon can never be reached"
                )
            if self.progress is not None:
                self.progress(env.now, self.horizon, k)

    def _checked_queries(self, X: np.ndarray) -> np.ndarray:
        """Each row of ``X`` (n, d) clipped to [0, 1]^d; an error naming the algorithm and the
        first row that is not finite or lies outside the box by more than round-off."""
        inside = (np.isfinite(X) & (X >= -1e-12) & (X <= 1 + 1e-12)).all(axis=-1)
        if not inside.all():
            x = X[int(np.argmin(inside))]
            raise RuntimeError(f"{self.algorithm.name} proposed a query outside [0,1]^d: {x}")
        return np.clip(X, 0.0, 1.0)

    def _checked_query(self, x: np.ndarray) -> np.ndarray:
        """:meth:`_checked_queries` of one query."""
        return self._checked_queries(x[None, :])[0]

    def _drain_fits(self, iteration: int, call: str, now: float) -> None:
        """Move the hyperparameter-fit records of the call that just returned to the recorder.

        Each is stamped with the iteration, the call (``side`` | ``propose`` | ``ingest``) and
        the virtual time at which that call began: the fit saw the data held then, and its
        result is in force from the end of the call. Records of a proposal discarded at the
        horizon keep ``iteration == n_iterations``.
        """
        fits = self.work.drain_fits()
        if fits:
            self.recorder.add_fits(fits, iteration=iteration, call=call, time=now)

    def recommendation(self, x: np.ndarray, t_available: float, *, now: float | None = None
                       ) -> tuple[np.ndarray, float] | None:
        """The recommendation current from now on, and since when; None if not recorded.

        ``latest``: the query just completed, current from its completion ``t_available``;
        ``posterior-mean``: the algorithm's :meth:`~Algorithm.recommend` after the ingestion,
        current from now (falls back to ``latest`` for model-free algorithms). A measurement
        like ``f_star``: its work is never charged to the virtual clock.
        """
        mode = self.options.recommendation
        if mode is None:
            return None
        now = self.env.now if now is None else now
        if mode == "posterior-mean":
            choice = self.algorithm.recommend(now)
            self.work.clear()
            if choice is not None:
                return np.asarray(choice, float).reshape(self.benchmark.d), float(now)
        return np.asarray(x, float).copy(), float(t_available)

    def _ask_expert(self, algo: Algorithm, t_decide: float, iteration: int = 0):
        """Side queries of this iteration: the algorithm's choice (charged to phase ``side``),
        then one expert answer per point, each occupying the expert for ``expert_cost`` s."""
        env = self.env
        self.work.clear()
        with self.work.phase("side"):
            points = algo.side_queries(t_decide)
        self._drain_fits(iteration, "side", t_decide)
        self._side_charges = self._charge("side", "side", False)
        side_time = sum(self._side_charges.values())
        if side_time:
            yield env.timeout(side_time)
        if points is None or len(points) == 0:
            if not any(self._side_charges.values()):
                self._side_charges = {}  # no expert in this algorithm: record no such phase
            return 0, 0.0
        points = np.clip(np.asarray(points, float).reshape(-1, self.benchmark.d), 0.0, 1.0)
        start = env.now
        times, answers = [], []
        for x in points:
            with self.expert.request() as slot:
                yield slot
                t = env.now
                if t > self.horizon:
                    break
                noise = self.streams["expert"].normal(0.0, np.sqrt(self.expert_noise_var))
                answers.append(float(self.benchmark(x, t)) + noise)
                times.append(t)
                yield env.timeout(self.expert_cost)
        if answers:
            self.work.clear()
            side_start = env.now
            with self.work.phase("side"):
                algo.ingest_side(points[: len(answers)], np.asarray(times), np.asarray(answers))
            self._drain_fits(iteration, "side", side_start)
            more = self._charge("side", "side", False)
            self._side_charges = {p: self._side_charges.get(p, 0.0) + more.get(p, 0.0)
                                  for p in set(self._side_charges) | set(more)}
            yield env.timeout(sum(more.values()))
        return len(answers), env.now - start

    @property
    def parallel(self) -> bool:
        """k > 1 evaluators or overlap: the asynchronous loop of :mod:`tvbo.sim.parallel`."""
        return self.options.evaluators > 1 or self.options.overlap

    def run(self) -> Recorder:
        """Simulate until the horizon; returns the filled recorder."""
        if self.parallel:
            check_parallel(self.algorithm, self.options)
            self.algorithm.configure_parallel(self.options.evaluators,
                                              make_pending(self.options.pending))
        self.algorithm.attach_oracle(self.benchmark)  # used by reference policies only
        self.algorithm.setup(self.problem, self.streams["algorithm"], self.work,
                             clock=lambda: self.env.now)
        self._drain_fits(0, "setup", self.env.now)
        if self.open_loop:
            self._run_open_loop()
        else:
            if self.parallel:
                process = self.env.process(parallel_process(self))
            else:
                process = self.env.process(self._process())
            self.env.run(until=process)
        self._f_stars()
        return self.recorder

    @property
    def open_loop(self) -> bool:
        """Whether this run takes the open-loop path (:meth:`_run_open_loop`): an algorithm
        that declares ``open_loop`` and ``compute_free``, the sequential loop, a compute model
        that prices a phase without work at 0 s, and evaluations of constant positive cost.
        Then nothing the algorithm does moves the clock, and what it proposes does not depend on
        what it observes."""
        algo, opts = self.algorithm, self.options
        return bool(getattr(algo, "open_loop", False) and getattr(algo, "compute_free", False)
                    and self.compute.free_without_work and not self.parallel
                    and not opts.cost_cv and float(self.benchmark.cost) > 0.0)

    def _run_open_loop(self) -> None:
        """The event loop's run of an open-loop algorithm, without the event loop.

        Why: the floor rows (``centre``, ``best-static``, ``random-search``) make up to 180,001
        queries a run (Temperature, c = 0.01 s), and the loop's per-query machinery (events,
        pricing, side queries, one evaluation per call) cost them more than everything else.
        Under :attr:`open_loop` every charge is 0 s, so the clock advances by c per query: the
        instants are the loop's float sums (``now + c``; ``now + 0`` is skipped by the loop
        too). The algorithm does not look at its observations, so its proposals are taken first
        (in query order, at the loop's instants), the objective and the noise are evaluated for
        all queries at once (one batch on a benchmark whose batch rows are its single values,
        ``batch_rows_exact``; one call per query otherwise, in query order, as the loop does),
        and then each observation is ingested and recorded in query order. An algorithm that
        breaks the declaration by reporting work, a fit, a phase of its own or a delayed query
        is refused (the event loop would have charged or honoured it).
        tests/sim/test_open_loop.py compares whole run files with the event loop's
        (``_process``), bit for bit.
        """
        algo, opts, horizon, work = self.algorithm, self.options, self.horizon, self.work
        d = self.benchmark.d
        cost = float(self.benchmark.cost)
        times: list[float] = []
        now = self.env.now
        while now < horizon and (opts.max_iterations is None
                                 or len(times) < opts.max_iterations):
            times.append(now)
            now = now + cost
        n = len(times)
        warmup = min(opts.warmup, n)
        X = np.empty((n, d))
        for k in range(warmup):
            X[k] = self._warmup_query()
        # one phase around all proposals and one around all ingestions: every charge is 0 s
        # here, so a phase per query (two context managers and four clock reads per query, a
        # sixth of a floor row's run) would only be measured and thrown away
        with work.phase("acquisition"):
            for k in range(warmup, n):
                proposal = algo.propose(times[k])
                if isinstance(proposal, Query):
                    raise RuntimeError(f"{algo.name} declares open_loop but asked to sample "
                                       "later")
                X[k] = np.asarray(proposal, float).reshape(d)
        X[warmup:] = self._checked_queries(X[warmup:])
        times_array = np.asarray(times, float)
        f, y = self._observe_all(X, times_array)
        done = np.append(times_array[1:], now)  # t_available = t_ingested
        sizes: list[int] = []
        states: list[dict] = []
        recommended: list = []
        with work.phase("update"):
            for k, t in enumerate(times):
                t_done = float(done[k])
                algo.ingest(X[k], t, float(y[k]), now=t_done, warmup=k < warmup)
                sizes.append(algo.dataset_size())
                states.append(algo.state())
                recommended.append(self.recommendation(X[k], t_done, now=t_done))
                if self.progress is not None:
                    self.progress(t_done, horizon, k + 1)
        self.recorder.add_many(
            t_decide=times_array, t_query=times_array, t_sample=times_array, t_available=done,
            t_ingested=done, x=X, y=y, f=f, f_star=np.full(n, math.nan),
            is_warmup=np.arange(n) < warmup, dataset_size=sizes,
            compute=dict.fromkeys(STANDARD_PHASES, 0.0), state=states,
            recommendation=None if opts.recommendation is None else recommended)
        extra = set(work.phases()) - set(STANDARD_PHASES)
        if work.counts() or work.drain_fits() or extra:
            raise RuntimeError(f"{algo.name} declares open_loop but reported work, a fit or a "
                               f"phase of its own ({', '.join(sorted(extra)) or 'no phase'})")

    def _observe_all(self, X: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(f, y)`` at every query, with the noise stream drawn in query order: the floats of
        one :func:`~tvbo.benchmarks.base.observation` per query (see :meth:`_run_open_loop`)."""
        bench, rng = self.benchmark, self.streams["noise"]
        if getattr(bench, "batch_rows_exact", False) and hasattr(bench, "observe_many"):
            return bench.observe_many(X, times, rng)
        pairs = [observation(bench, x, t, rng) for x, t in zip(X, times, strict=True)]
        return (np.array([p[0] for p in pairs], float), np.array([p[1] for p in pairs], float))

    def _f_stars(self) -> None:
        """f* at every query time, filled in after the run: f* never influences a run (no
        algorithm sees it), so the benchmark refines all query times in one batched polish
        (``refine_f_star_many``; one ``refine_f_star`` per query, in query order, for a benchmark
        without it). f* >= f(x, t) by definition: a refinement that falls short of the query's
        own value by round-off is lifted to it, so regret is never negative."""
        rec = self.recorder
        if not len(rec):
            return
        t = np.asarray(rec.columns["t_sample"], float)
        X = np.asarray(rec.x, float).reshape(len(rec), self.benchmark.d)
        many = getattr(self.benchmark, "refine_f_star_many", None)
        if many is not None:
            f_star = np.asarray(many(t, X), float).reshape(len(rec))
        else:
            f_star = np.array([float(self.benchmark.refine_f_star(ti, xi))
                               for ti, xi in zip(t, X, strict=True)])
        f = np.asarray(rec.columns["f"], float)
        rec.columns["f_star"] = [float(v) for v in np.maximum(f_star, f)]

    def time_grid(self) -> np.ndarray:
        """Regular grid over [0, H] (H included) for time-integrated quantities."""
        step = self.options.time_grid_step
        n = int(math.floor(self.horizon / step + 1e-9))
        grid = np.arange(n + 1, dtype=float) * step
        if grid[-1] < self.horizon - 1e-9:
            grid = np.append(grid, self.horizon)
        return grid
