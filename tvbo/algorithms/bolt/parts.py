"""BOLT (Bardou & Thiran 2025): cap the dataset at n* and remove the least relevant observation.

Recommendation 1 (spec_bolt.md §3): with response time ``R(n)`` and temporal correlation ``k_T``,
keep at most ``n* = argmax_n sum_{i<=n} k_T(i R(n))^2`` observations. Recommendation 2 (§4):
when ``|D| > n*`` remove ``argmin_i W2(GP_D, GP_{D \\ o_i})`` -- the ``w2`` removal rule of
:mod:`tvbo.algorithms.wdbo.parts`. One dataset policy, ``bolt-nstar``, covers both published
versions:

* ``version="metronome"`` ([B], "without a metronome", Algorithm 1; the default): R(n) is learnt
  online from the clock (a cubic regression on measured response times) and n* recomputed every
  iteration;
* ``version="icml"`` ([A], ICML, Algorithm 1): R(n) is an input (``response_time``) and n* is
  computed once.

Presets: ``bolt`` (metronome) and ``bolt-icml``; ablations are one line, e.g.
``make("bolt-fifo", preset="bolt", removal="oldest")``.

Surrogate. BOLT "is based on W-DBO" ([A] §4): both papers ran the two on the same BoTorch GP and
fitting routines, whose default ``SingleTaskGP`` carries priors on its hyperparameters. ``bolt`` and
``bolt-icml`` therefore share the robust ``w-dbo`` surrogate: MAP-II with the weak log-normal
priors :data:`tvbo.algorithms.wdbo.declare.ROBUST_PRIOR`. Without them the maximum-likelihood l_T
sometimes falls to a few seconds early in a run, which drives n* down to ~10 for the rest of it:
Ackley, 600 s, botorch-i9-laptop profile, seeds 0-4: plain MLE gave l_T medians of 2-4 s in 4 of 5
seeds, n* medians 13-23 and average regret 4.48 +- 0.83 (W-DBO with the priors: 2.29 +- 0.05).
``bolt-reference`` keeps the plain maximum-likelihood fit (metronome version) for comparison,
like ``w-dbo-reference``. Unlike ``w-dbo``, BOLT's removal count needs no cap: its policy removes
at most one observation per iteration by definition. ``bolt-paper`` runs BOLT on the W-DBO public
code's fit (GPyTorch Adam, no priors; :data:`tvbo.algorithms.wdbo.declare.PAPER_SURROGATE`) and its
noisy-sigma UCB.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from tvbo.algorithms.bolt.nstar import cubic_response_time, search_nstar
from tvbo.algorithms.bolt.response_time import fit_response_time, fit_response_time_counted
from tvbo.algorithms.components import (
    Composition,
    DatasetEditor,
    DatasetPolicy,
    PartContext,
    RemovalRule,
    Surrogate,
    register_component,
)
from tvbo.algorithms.wdbo.parts import (
    require_spatiotemporal,
    spatiotemporal_gp,
    temporal_lengthscale,
)

__all__ = ["VERSIONS", "BoltNStar", "fit_response_time"]

#: Published versions of BOLT: [B] "without a metronome" (online R) and [A] ICML (R given).
VERSIONS: tuple[str, ...] = ("metronome", "icml")
#: Initial guesses of the direct search for n* (spec_bolt.md §13.6).
INITIAL_GUESSES: tuple[str, ...] = ("previous", "size")
#: What R(n) means with k asynchronous evaluators (see BoltNStar's docstring).
PARALLEL_RESPONSES: tuple[str, ...] = ("interarrival", "per-evaluator")


class BoltNStar(DatasetPolicy):
    """BOLT's cleaning: when ``|D| > n*``, remove the removal rule's choice (at most one).

    Every open choice of spec_bolt.md §13 is an option (defaults first):

    * ``version`` ("metronome" | "icml").
    * Response time, metronome ([B] §4): the policy reads the clock (``self.context.clock()``)
      once per iteration and records ``(|D|, R)``, R = the time between consecutive reads. The
      composed algorithm gives a dataset policy no hook inside ``propose``, so the read happens in
      ``after_fit`` (at ``t_available``, before cleaning); consecutive reads are still exactly one
      loop apart, so R is the same full cycle as ``t_decide[k+1] - t_decide[k]`` (fit + clean of
      one iteration, acquisition + evaluation of the next), shifted by one ingest. |D| is the size
      during the acquisition of that interval, i.e. the size after the previous cleaning -- the
      paper's "dataset size at the beginning of the iteration"; the fit and the cleaning in the
      interval saw that size, or one more when the previous cleaning removed a point.
    * ``include_warmup`` (False): warm-up intervals do not enter the regression (no hyperparameter
      fit, no acquisition: they would only measure the evaluation cost). An interval enters only
      if the previous read was post-warm-up.
    * Intervals after a removal enter the regression (False for ``skip_after_removal``): at
      steady state BOLT removes one point every iteration, and skipping them would freeze the
      regression exactly where it matters.
    * Regression: :func:`fit_response_time`, non-negative cubic, on all recorded points; used
      once ``min_points`` (4) distinct sizes exist. Before that nothing is removed (n* unknown).
    * ``initial_guess`` ("previous"): the direct search starts from the previous n* (from |D|
      the first time, or when the previous n* was the cap); "size" starts from |D| every time.
      The search costs O(|n* - n0| n*) kernel evaluations, charged to the ``clean`` phase.
      ``n_max`` (10 000) caps n*. A fitted R with c1 = c2 = c3 = 0 is constant: n* is infinite
      ([B] §3.1), recorded as ``n_max`` without searching, and nothing is removed.
    * k_T: the surrogate's temporal correlation with the CURRENT fitted l_T (bounds of the
      surrogate, [1, 1e4] s by default).
    * ``max_removals`` (1): both Algorithm 1s use ``if`` (spec_bolt.md §5.3, §13.7); None removes
      until ``|D| <= n*``.
    * ``floor`` (2): never clean below it (the W-DBO reference's floor).
    * ``parallel_response`` ("interarrival"), with k asynchronous evaluators
      (:mod:`tvbo.sim.parallel`; neither paper considers overlapping queries): the clock is read
      at every ingestion as above, so R is the time between consecutive *arrivals*, about
      (compute + c) / k. That is the spacing in time of consecutive observations, which is what
      n* = argmax_n sum_i k_T(i R(n))^2 prices (the i-th newest point is ~i R old), so it is the
      default. "per-evaluator" multiplies each measured interval by k, i.e. prices R as one
      evaluator's cycle (the sequential meaning of a response time): a smaller n*. With one
      evaluator both are identical.
    * Warm-up (§13.8): nothing is measured or removed during it; afterwards the warm-up points
      are ordinary observations, removable like any other.
    * beta (§13.2): the acquisition's option; the presets keep the UCB default, W-DBO's
      ``0.2 d log(2n)`` (the papers' theoretical schedules need L or a, b and delta). Override
      with ``make("bolt", beta=...)``.
    * icml ([A] Alg. 1): ``response_time`` = R(n) coefficients ``(c0, c1, c2, c3)`` in seconds --
      the FULL response time, evaluation cost included (for the ``polynomial`` compute model
      with cost c pass ``(c + a0/speed, a1/speed, a2/speed, a3/speed)``). n* is computed once,
      at the first post-warm-up cleaning,
      because l_T must have been fitted first. Without ``response_time`` the icml version
      estimates R as [A] §4 suggests (the same regression) and freezes n* the first time it is
      available.
    """

    kind = "bolt-nstar"

    def __init__(
        self,
        *,
        version: str = "metronome",
        response_time: Sequence[float] | None = None,
        min_points: int = 4,
        include_warmup: bool = False,
        skip_after_removal: bool = False,
        initial_guess: str = "previous",
        n_max: int = 10_000,
        max_removals: int | None = 1,
        floor: int = 2,
        parallel_response: str = "interarrival",
    ) -> None:
        if parallel_response not in PARALLEL_RESPONSES:
            raise ValueError(
                f"bolt-nstar: unknown parallel_response {parallel_response!r}; "
                f"valid: {', '.join(PARALLEL_RESPONSES)}"
            )
        self.parallel_response = parallel_response
        if version not in VERSIONS:
            raise ValueError(
                f"bolt-nstar: unknown version {version!r}; valid: {', '.join(VERSIONS)}"
            )
        if initial_guess not in INITIAL_GUESSES:
            raise ValueError(
                f"bolt-nstar: unknown initial_guess {initial_guess!r}; "
                f"valid: {', '.join(INITIAL_GUESSES)}"
            )
        for name, value, low in (
            ("min_points", min_points, 1),
            ("n_max", n_max, 1),
            ("floor", floor, 1),
        ):
            if isinstance(value, bool) or int(value) != value or value < low:
                raise ValueError(f"bolt-nstar: {name} must be an integer >= {low}, got {value!r}")
        if max_removals is not None and (
            isinstance(max_removals, bool) or int(max_removals) != max_removals or max_removals < 1
        ):
            raise ValueError(
                f"bolt-nstar: max_removals must be an integer >= 1 or None, got {max_removals!r}"
            )
        self.coefficients: np.ndarray | None = None
        if response_time is not None:
            if version != "icml":
                raise ValueError(
                    "bolt-nstar: response_time is an input of version 'icml' only; version "
                    "'metronome' learns R(n) from the clock"
                )
            coeffs = [float(v) for v in response_time]
            if not 1 <= len(coeffs) <= 4 or not all(math.isfinite(v) and v >= 0 for v in coeffs):
                raise ValueError(
                    "bolt-nstar: response_time must be 1 to 4 finite coefficients >= 0 "
                    f"(c0, c1, c2, c3 in seconds), got {response_time!r}"
                )
            coeffs += [0.0] * (4 - len(coeffs))
            if cubic_response_time(coeffs)(1) <= 0:
                raise ValueError(f"bolt-nstar: response_time gives R(1) <= 0: {response_time!r}")
            self.coefficients = np.asarray(coeffs)
        self.version = version
        self.response_time = None if response_time is None else list(map(float, response_time))
        self.min_points = int(min_points)
        self.include_warmup = bool(include_warmup)
        self.skip_after_removal = bool(skip_after_removal)
        self.initial_guess = initial_guess
        self.n_max = int(n_max)
        self.max_removals = None if max_removals is None else int(max_removals)
        self.floor = int(floor)
        # the response-time dataset (|D|, R) and the clock bookkeeping
        self.sizes: list[int] = []
        self.times: list[float] = []
        self._last_read: tuple[float, bool] | None = None
        self._size_after_clean: int | None = None
        self._removed_before = False
        # outputs
        self.n_star: int | None = None
        self.last_response = math.nan
        self.size_before_clean = math.nan
        self.removed_last = 0
        self.removed_score = math.nan

    def check_composition(self, parts: Composition) -> None:
        require_spatiotemporal(parts, "dataset policy 'bolt-nstar'", removal=True)

    def bind(self, context: PartContext, *, surrogate: Surrogate, removal: RemovalRule | None,
             editor: DatasetEditor) -> None:
        super().bind(context, surrogate=surrogate, removal=removal, editor=editor)
        spatiotemporal_gp(surrogate, "dataset policy 'bolt-nstar'")

    # -- response time ---------------------------------------------------------------------------
    def _measure(self, warmup: bool) -> None:
        """Read the clock and add ``(|D| during the interval, R)`` to the response-time dataset."""
        now = float(self.context.clock())
        last = self._last_read
        self._last_read = (now, warmup)
        if last is None or self._size_after_clean is None:
            return
        t_prev, prev_warm = last
        if prev_warm and not self.include_warmup:
            return
        if self._removed_before and self.skip_after_removal:
            return
        response = now - t_prev
        if self.parallel_response == "per-evaluator":
            response *= self.context.evaluators
        if response > 0.0:
            self.sizes.append(self._size_after_clean)
            self.times.append(response)
            self.last_response = response

    def _fit_response(self) -> None:
        if len(set(self.sizes)) < self.min_points:
            return
        # the model layer fits R(n) and reports its work and fit-health record itself
        self.coefficients = fit_response_time_counted(
            self.sizes, self.times, work=self.context.work,
            source=f"dataset:{self.kind}:response-time")

    # -- n* ----------------------------------------------------------------------------------------
    def _compute_nstar(self) -> None:
        coeffs = self.coefficients
        R = cubic_response_time(coeffs)
        if not R(1) > 0.0:
            return  # degenerate fit (all-zero coefficients): n* unknown, keep the previous one
        if not np.any(coeffs[1:] > 0.0):
            # constant R: ||u_n||^2 increases forever, n* is infinite (spec_bolt.md §3.1); the
            # direct search would only walk one step at a time to the cap, at O(n_max^2) cost
            self.n_star = self.n_max
            return
        surrogate = self.surrogate
        gp = surrogate.gp
        lengthscale = temporal_lengthscale(surrogate, "dataset policy 'bolt-nstar'")
        previous = self.n_star
        if self.initial_guess == "previous" and previous is not None and previous < self.n_max:
            n0 = previous
        else:
            n0 = max(1, surrogate.n)
        # the direct search counts its own work (tvbo.algorithms.bolt.nstar)
        self.n_star = search_nstar(gp.kernel.time.name, lengthscale, R,
                                   n0=min(n0, self.n_max), n_max=self.n_max,
                                   work=self.context.work)

    # -- the hook ----------------------------------------------------------------------------------
    def after_fit(self, *, now: float, warmup: bool) -> None:
        self.removed_last = 0
        surrogate = self.surrogate
        self.size_before_clean = float(surrogate.n)
        if self.version == "metronome" or self.response_time is None:
            self._measure(warmup)
        if not warmup:
            if self.version == "metronome":
                self._fit_response()
                if self.coefficients is not None:
                    self._compute_nstar()
            elif self.n_star is None:  # icml: once, after the first fit of l_T
                if self.response_time is None:
                    self._fit_response()
                if self.coefficients is not None:
                    self._compute_nstar()
            self._clean(now)
        self._removed_before = self.removed_last > 0
        self._size_after_clean = surrogate.n

    def _clean(self, now: float) -> None:
        if self.n_star is None:
            return
        surrogate = self.surrogate
        cap = math.inf if self.max_removals is None else self.max_removals
        while surrogate.n > max(self.n_star, self.floor) and self.removed_last < cap:
            i, score = self.removal.choose(surrogate, now)
            self.editor.remove(i)
            self.removed_last += 1
            self.removed_score = score

    def state(self) -> dict[str, float]:
        c = np.full(4, math.nan) if self.coefficients is None else self.coefficients
        return {
            "bolt_nstar": math.nan if self.n_star is None else float(self.n_star),
            "bolt_R_c0": float(c[0]),
            "bolt_R_c1": float(c[1]),
            "bolt_R_c2": float(c[2]),
            "bolt_R_c3": float(c[3]),
            "bolt_R_points": float(len(self.sizes)),
            "bolt_R_last": self.last_response,
            "bolt_size_before_clean": self.size_before_clean,
            "bolt_removed": float(self.removed_last),
            "bolt_removed_score": self.removed_score,
        }

    def options(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "response_time": self.response_time,
            "min_points": self.min_points,
            "include_warmup": self.include_warmup,
            "skip_after_removal": self.skip_after_removal,
            "initial_guess": self.initial_guess,
            "n_max": self.n_max,
            "max_removals": self.max_removals,
            "floor": self.floor,
            "parallel_response": self.parallel_response,
        }


register_component("dataset", BoltNStar)
