"""The interface every algorithm implements, and what it is told about the problem.

An algorithm never sleeps and never reads a wall clock: the engine tells it the time. It works in
two calls per iteration so the engine can charge each phase's compute time:

* ``propose(t)`` -- return the next query for time ``t`` (hyperparameter fit and acquisition
  optimisation happen here; the fit is charged to ``"fit"``, everything else in the call to
  ``"acquisition"``);
* ``ingest(x, t, y, now=..., warmup=...)`` -- take the observation sampled at ``t`` (GP update,
  dataset cleaning charged to ``"clean"``; the rest is charged to ``"update"``).

Every numerical routine reports its work to the run's counter (``self.work``, handed over by the
engine in :meth:`Algorithm.setup`) so that the deterministic ``counted`` compute model can price
it. In a composed algorithm the models, optimisers and policies count their own work and mark
their own phases (:mod:`tvbo.algorithms.composed`); the algorithm only hands the counter on.
``state()`` returns the scalars worth recording each iteration.

``side_queries`` / ``ingest_side`` are the engine's side-query protocol (SparQ-GP-UCB's expert;
default: none). A composed algorithm serves them through the one part with the
:class:`~tvbo.algorithms.components.SideQueries` capability (SparQ's ``expert-ucb``
acquisition), found once at construction.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tvbo.acquisition.pending import PendingStrategy
from tvbo.work import WorkCounter


@dataclass(frozen=True)
class ProblemInfo:
    """What an algorithm may know about the problem.

    Following the papers, algorithms do NOT know the noise variance, the evaluation cost or the
    horizon: they learn what they need from data and from the clock.
    """

    d: int
    #: finite candidate set (m, d) for discrete benchmarks, else None
    candidates: np.ndarray | None = None
    #: the temporal covariance family the papers use on this benchmark (e.g. Matérn-1/2 for WLAN)
    temporal_kernel: str = "matern32"
    #: candidate GP priors the benchmark declares (PE-GP-UCB's unknown-prior problems), as
    #: prior mappings (data, so algorithms need not import benchmarks); () when it has none
    candidate_priors: tuple = ()


@dataclass(frozen=True)
class Query:
    """A query to sample no earlier than virtual time ``at`` (ABO's look-ahead).

    ``propose`` may return a plain array (sample as soon as the computation ends) or a ``Query``;
    the engine then waits until ``at`` before sampling (if ``at`` is already past, it samples at
    once). Waiting is idle time, not compute: it is recorded but not charged to any phase.
    """

    x: np.ndarray
    at: float


class Algorithm(ABC):
    """Base class: option validation, setup and the two-call iteration protocol."""

    #: registry name, e.g. "gp-ucb"
    name: ClassVar[str] = ""
    #: True only for an algorithm whose computation is negligible by design (no model: uniform
    #: random queries, the reference policies ``centre`` and ``best-static`` of
    #: :mod:`tvbo.algorithms.reference.policies`): under ``compute: counted`` an algorithm that
    #: reports no work after warm-up is refused (its compute would be priced 0 s, silently)
    #: unless it declares this. Code tvbo cannot count (an outside optimiser) runs under
    #: ``measured`` or ``polynomial`` instead (``tvbo calibrate --from-runs``).
    compute_free: ClassVar[bool] = False
    #: True only for an algorithm that never looks at what it observes: its proposals depend on
    #: the query times and its own random stream only (not on what it ingested), and neither
    #: ``ingest`` nor ``state`` depends on the observed values (the reference policies
    #: ``centre`` and ``best-static``; ``random-search``). With ``compute_free`` such a run is
    #: a function of the query times, so the engine takes the proposals first and evaluates the
    #: objective for all queries at once (:meth:`tvbo.sim.engine.Engine._run_open_loop`), with
    #: the event loop's results (tests/sim/test_open_loop.py).
    open_loop: ClassVar[bool] = False

    def __init__(self) -> None:
        self.work = WorkCounter()
        self.problem: ProblemInfo | None = None
        self.rng: np.random.Generator = np.random.default_rng(0)
        #: the engine's virtual clock (BOLT's clock C); never a wall clock
        self.clock: Callable[[], float] = lambda: 0.0

    def setup(self, problem: ProblemInfo, rng: np.random.Generator, work: WorkCounter,
              clock: Callable[[], float] | None = None) -> None:
        """Called once by the engine before the first query."""
        self.problem = problem
        self.rng = rng
        self.work = work
        if clock is not None:
            self.clock = clock
        self._setup()

    def attach_oracle(self, benchmark) -> None:  # noqa: B027 - optional hook
        """Called by the engine before :meth:`setup` with the benchmark itself. Only reference
        policies computed from the oracle (``best-static``) use it; an algorithm must not."""

    def _setup(self) -> None:  # noqa: B027 - optional hook
        """Subclass hook: build surrogates once the problem is known."""

    @abstractmethod
    def propose(self, t: float) -> np.ndarray | Query:
        """Return the next query x in [0,1]^d, optimised for time ``t`` (or a :class:`Query`)."""

    @abstractmethod
    def ingest(self, x: np.ndarray, t: float, y: float, *, now: float, warmup: bool) -> None:
        """Take the observation ``y`` of ``x`` sampled at time ``t``; ``now`` is the clock."""

    @abstractmethod
    def dataset_size(self) -> int:
        """Number of observations currently held."""

    def side_queries(self, t: float) -> np.ndarray | None:
        """Points (m, d) to ask the EXPERT about before ``propose`` (SparQ-GP-UCB), or None.

        The engine evaluates each on the expert -- a separate participant of the simulation with
        its own cost and noise (``EngineOptions.expert_cost`` / ``expert_noise_var``) -- on the
        virtual clock, then hands the answers to :meth:`ingest_side`. Computation done here is
        charged to the ``side`` phase.
        """
        return None

    def ingest_side(self, X: np.ndarray, T: np.ndarray, Y: np.ndarray) -> None:  # noqa: B027
        """Take the expert's answers ``Y`` at points ``X`` sampled at times ``T``."""

    # -- parallel evaluators (tvbo.sim.parallel) ------------------------------------------------
    #: with k evaluators: how many there are, and the strategy for queries still running
    evaluators: int = 1
    pending_strategy: PendingStrategy | None = None

    def parallel_blocker(self) -> str | None:
        """Why this algorithm cannot run with k > 1 evaluators or overlap, or None if it can.

        Side queries (SparQ-GP-UCB) are a sequential protocol with the expert inside one
        iteration; they have no meaning while other queries run.
        """
        if type(self).side_queries is not Algorithm.side_queries:
            return "it asks the expert side queries inside each iteration (sequential protocol)"
        return None

    def supports_pending(self) -> bool:
        """Whether :meth:`propose` can condition on pending queries (else only ``none``)."""
        return False

    def configure_parallel(self, evaluators: int, pending: PendingStrategy) -> None:
        """Called by the parallel engine before :meth:`setup`."""
        if pending.lie is not None and not self.supports_pending():
            raise ValueError(
                f"algorithm {self.name!r} cannot condition on pending queries; use pending "
                f"strategy 'none' (got {pending.name!r})"
            )
        self.evaluators = int(evaluators)
        self.pending_strategy = pending
        self.set_pending(np.empty((0, 0)), np.empty(0))

    def set_pending(self, X: np.ndarray, T: np.ndarray) -> None:
        """The queries still being evaluated (points and sample times) before a ``propose``."""
        self.pending_X = np.asarray(X, float)
        self.pending_T = np.asarray(T, float).reshape(-1)

    def recommend(self, t: float) -> np.ndarray | None:
        """The recommendation at time ``t`` (posterior-mean maximiser), or None if the
        algorithm has no model (the engine then falls back to the latest completed query)."""
        return None

    def state(self) -> dict[str, float]:
        """Scalars recorded every iteration as ``state_<name>`` (hyperparameters, n*, ...)."""
        return {}

    def options(self) -> dict:
        """The algorithm's resolved options, recorded in the run file's configuration."""
        return {}
