"""Work accounting: the bridge between an algorithm's computation and the virtual clock.

Every numerical routine of an algorithm reports the *work* it did to a :class:`WorkCounter`
(floating-point operations of dense linear algebra, kernel entries evaluated, and top-level
numerical calls). The ``counted`` compute model turns those counts into seconds with a hardware
profile, which makes virtual time a deterministic function of the computation itself and so
bit-identical across machines. The same counter also measures the CPU time of each phase (all
threads of the process), which the ``measured`` compute model uses instead.

Work kinds (keep this list and :data:`WORK_KINDS` in step; hardware profiles name them):

``flop``
    floating-point operations of dense linear algebra, counted with the textbook formulas:
    Cholesky of n x n: n^3/3; triangular solve with an n x n factor and m right-hand sides:
    n^2 m; matrix product (a x b)(b x c): 2abc; rank-one Cholesky update/downdate of size n:
    2n^2 ... An approximate but *consistent* count is what matters.
``kernel``
    kernel (covariance) entries evaluated, each entry counted once whatever the input dimension.
``call``
    top-level numerical calls (one log-marginal-likelihood evaluation, one batched acquisition
    evaluation, one append/remove): the fixed interpreter overhead of each.
``step``
    iterations of Python-level inner loops in hot paths (one column of a rank-one Cholesky
    update, ...): cheaper than a call, but not free, and invisible in flop counts.

Phases name *what* the algorithm is doing (``fit``, ``acquisition``, ``update``, ``clean``, ...);
the engine records the compute time of each phase separately.

Fit records ride on the same counter because every GP already carries it: each hyperparameter
fit (:func:`tvbo.gp.fit.fit_hyperparameters`) reports one flat record (fitted values, bound
flags, LML, mode, source) with :meth:`WorkCounter.record_fit`; the engine drains them after every
algorithm call (:meth:`WorkCounter.drain_fits`) into the run file's ``fit`` dimension. Records
are not work: :meth:`WorkCounter.clear` leaves them alone and they never change a price.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

WORK_KINDS: tuple[str, ...] = ("flop", "kernel", "call", "step")

#: Phases every run file records (zero when an algorithm does not use them). Algorithms may
#: add their own phase names; those are recorded too.
STANDARD_PHASES: tuple[str, ...] = ("acquisition", "fit", "update", "clean")

#: the valid kinds as a set: :meth:`WorkCounter.add` runs millions of times per run, and one hash
#: lookup is cheaper than scanning the tuple
_KINDS: frozenset[str] = frozenset(WORK_KINDS)


def _unknown_kind(kind: object) -> ValueError:
    return ValueError(f"unknown work kind {kind!r}; valid kinds: {', '.join(WORK_KINDS)}")


class WorkCounter:
    """Accumulates work counts and CPU time per phase.

    Use ``with counter.phase("fit"): ...`` around a block of computation; inside it, numerical
    routines call :meth:`add`. Work added outside any phase goes to ``default_phase``.
    """

    def __init__(self) -> None:
        self._counts: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self._cpu: dict[str, float] = defaultdict(float)
        self._stack: list[str] = []
        #: phase of work reported outside any ``phase`` block
        self.default_phase = "update"
        self._fits: list[dict[str, object]] = []

    # -- reporting work ---------------------------------------------------------------------
    def add(self, kind: str, amount: float) -> None:
        """Report ``amount`` units of work of ``kind`` in the current phase."""
        if kind not in _KINDS:
            raise _unknown_kind(kind)
        stack = self._stack  # current_phase, inlined: this runs millions of times per run
        self._counts[stack[-1] if stack else self.default_phase][kind] += float(amount)

    def add_all(self, pairs: tuple[tuple[str, float], ...]) -> None:
        """Report several ``(kind, amount)`` pairs, in order, in the current phase.

        The same sums, added in the same order, as one :meth:`add` per pair (so every
        accumulated float is identical), with the phase's accumulator looked up once: for hot
        loops that report a fixed set of counts per call (one LML evaluation reports a call,
        its kernel entries and its Cholesky). An unknown kind raises :meth:`add`'s error, after
        the pairs before it were added, as the equivalent sequence of :meth:`add` calls would.
        """
        stack = self._stack
        counts = self._counts[stack[-1] if stack else self.default_phase]
        for kind, amount in pairs:
            if kind not in _KINDS:
                raise _unknown_kind(kind)
            counts[kind] += float(amount)

    def phase_counts(self) -> dict[str, float]:
        """The current phase's accumulator itself (kind -> total; a missing kind reads 0.0).

        For compiled hot loops (:mod:`tvbo.gp.compiled`) that continue the sums in machine code
        and store them back: the same additions in the same order as :meth:`add` calls, so
        every total is the same float. Not a copy: writing to it reports work.
        """
        stack = self._stack
        return self._counts[stack[-1] if stack else self.default_phase]

    # one kind each, :meth:`add` inlined (a valid kind needs no check); the same sum as add()
    def flops(self, amount: float) -> None:
        stack = self._stack
        self._counts[stack[-1] if stack else self.default_phase]["flop"] += float(amount)

    def kernel(self, entries: float) -> None:
        stack = self._stack
        self._counts[stack[-1] if stack else self.default_phase]["kernel"] += float(entries)

    def call(self, n: float = 1.0) -> None:
        stack = self._stack
        self._counts[stack[-1] if stack else self.default_phase]["call"] += float(n)

    def steps(self, n: float) -> None:
        stack = self._stack
        self._counts[stack[-1] if stack else self.default_phase]["step"] += float(n)

    # -- fit records ---------------------------------------------------------------------------
    def record_fit(self, record: Mapping[str, object]) -> None:
        """Queue one hyperparameter-fit record (a flat mapping of scalars) for the engine.

        The record is queued as the same dict object, so a caller may add algorithm-specific
        fields (e.g. a forgetting rate derived from the fitted l_T) until the engine drains it.
        """
        self._fits.append(record if isinstance(record, dict) else dict(record))

    def drain_fits(self) -> list[dict[str, object]]:
        """The queued fit records, oldest first; the queue is emptied."""
        fits, self._fits = self._fits, []
        return fits

    # -- phases ----------------------------------------------------------------------------
    @property
    def current_phase(self) -> str:
        return self._stack[-1] if self._stack else self.default_phase

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Attribute the work and the CPU time of the enclosed block to phase ``name``.

        Phases nest: CPU time spent in an inner phase is attributed to the inner phase only,
        so the engine can wrap a whole ``propose`` call in ``phase("acquisition")`` while the
        algorithm marks its hyperparameter fit inside it with ``phase("fit")``.
        """
        outer = self._stack[-1] if self._stack else None
        self._stack.append(name)
        start = time.process_time()  # every thread of the process (BLAS, OpenMP, torch)
        try:
            yield
        finally:
            elapsed = time.process_time() - start
            self._stack.pop()
            self._cpu[name] += elapsed
            if outer is not None:
                self._cpu[outer] -= elapsed

    # -- reading ---------------------------------------------------------------------------
    def counts(self) -> dict[str, dict[str, float]]:
        """Work per phase: ``{phase: {kind: amount}}`` (a copy)."""
        return {p: dict(k) for p, k in self._counts.items()}

    def cpu_seconds(self) -> dict[str, float]:
        """Process CPU time (all threads) per phase, in seconds (a copy)."""
        return {p: max(0.0, s) for p, s in self._cpu.items()}

    def phases(self) -> list[str]:
        return sorted(set(self._counts) | set(self._cpu))

    def clear(self) -> None:
        """Forget work and CPU time (not the queued fit records: those are drained)."""
        self._counts.clear()
        self._cpu.clear()


class NullWorkCounter(WorkCounter):
    """A counter that ignores everything, for code used outside a simulation."""

    def add(self, kind: str, amount: float) -> None:  # noqa: D102 - same contract
        if kind not in _KINDS:
            raise _unknown_kind(kind)

    def add_all(self, pairs: tuple[tuple[str, float], ...]) -> None:  # noqa: D102 - same contract
        for kind, _ in pairs:
            if kind not in _KINDS:
                raise _unknown_kind(kind)

    def flops(self, amount: float) -> None:  # noqa: D102 - ignored here
        return None

    def kernel(self, entries: float) -> None:  # noqa: D102 - ignored here
        return None

    def call(self, n: float = 1.0) -> None:  # noqa: D102 - ignored here
        return None

    def steps(self, n: float) -> None:  # noqa: D102 - ignored here
        return None

    def record_fit(self, record: Mapping[str, object]) -> None:  # noqa: D102 - ignored here
        return None
