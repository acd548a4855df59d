"""ABO: adaptive Bayesian optimisation (Nyikosa, Osborne & Roberts, arXiv 1803.03432).

ABO models f(x, t) with a spatio-temporal GP and, once the fitted temporal lengthscale l_T has
*stabilised*, optimises the acquisition jointly over the configuration x AND the time t at which
to sample, inside the window ``[t_now, t_now + l_T / 3]``: it may decide to wait for a better
moment. Before stability it queries at the current time like any UCB method. Everything below
follows the author's MATLAB code (``bayes_opt_mat/BayesOpt/doBayesOpt.m``, "ABO Checks"), since
the paper body was not retrievable (spec_baselines.md §4 and its status note).

This module keeps ABO's policy -- when l_T counts as stable, which window of future times to
search, and handing the engine a :class:`~tvbo.algorithms.base.Query` for the chosen time -- as
the acquisition part ``kind="abo"`` (:class:`ABOAcquisition`) and the preset ``abo``. The
look-ahead UCB over space and time and its beta (ABO's ``kappa_i``, registered rule ``abo``)
are in :mod:`tvbo.algorithms.abo.lookahead`; the joint ``(x, t)`` posterior with gradients in x AND
t is the exact GP's :meth:`~tvbo.gp.exact.ExactGP.predict_space_time`
(:func:`tvbo.gp.exact.joint_posterior`). Nothing here computes a posterior, a UCB or a beta,
or counts work.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tvbo.acquisition import AcquisitionOptimizer, make_beta
from tvbo.algorithms.abo.lookahead import LookaheadBeta, LookaheadUCB
from tvbo.algorithms.base import Query
from tvbo.algorithms.components import (
    Acquisition,
    GPSurrogate,
    PartContext,
    Surrogate,
    register_component,
)

#: slope of l_T measured in seconds per iteration (the author's code) or in log(l_T) per iteration
SLOPE_SCALES: tuple[str, ...] = ("absolute", "log")


class ABOAcquisition(Acquisition):
    """ABO's acquisition: UCB at the present until l_T is stable, then UCB over (x, t).

    **Stability of l_T** (spec §4.2, ``doBayesOpt.m``): ABO records the fitted l_T at every one of
    its iterations i. For ``i > burn_in`` it computes the slope ``g = (l_T[i] - l_T[i - D]) / D``
    with ``D = burn_in - 1``; a check "qualifies" when ``|g| < slope_threshold``. The flag is set
    at the ``stability_checks``-th qualifying check (the code's peg/key logic: the 3rd) and is
    never cleared; checks need not be consecutive. ``slope_scale="absolute"`` measures l_T in
    seconds (the code's raw lengthscale in the problem's time unit); ``"log"`` measures log l_T,
    a unit-free alternative.

    **Window** (spec §4.2): once stable, ``t`` ranges over ``[t_now + dt_min, t_now +
    max(dt_min, window_fraction * l_T)]`` (capped at ``t_now + max_lookahead`` if given), where
    ``t_now`` is the time the engine asks about (the decision time, or the predicted sample time
    with the engine's ``lookahead``). Decision on the minimum step: the author's code anchors the
    window at the *previous query's* time and so allows no progress; our window starts at the
    present, which the clock guarantees to be later than the previous sample (evaluation and
    compute take time), so ``dt_min = 0`` already enforces strict progress; a positive
    ``dt_min`` forces ABO to look at least that far ahead.

    **Joint optimisation**: Sobol raw samples in the (d+1)-dim unit box (x, tau) with
    ``t = t_lo + tau (t_hi - t_lo)``, then multi-start L-BFGS-B with analytic gradients in x and
    t (:class:`~tvbo.algorithms.abo.lookahead.LookaheadUCB` over the GP's
    :meth:`~tvbo.gp.exact.ExactGP.predict_space_time`); the engine then waits until the chosen
    time (a :class:`~tvbo.algorithms.base.Query`). Finite candidate sets use a grid of ``time_grid``
    times over the window instead.

    **Acquisition form**: maximisation, ``mu + sqrt(beta) sigma`` (ABO's LCB for minimisation,
    mirrored). ``beta`` takes any schedule of :func:`~tvbo.acquisition.make_beta`; the default is
    the common W-DBO ``0.2 d log 2n`` so all UCB baselines explore alike. ``beta="abo"`` uses
    ABO's ``kappa_i`` (registered beta rule ``abo``, ``kappa_delta`` = the code's 0.1) as
    ``sqrt(beta)``; the two are close in practice (d = 1, i = n = 100: 1.10 vs 1.03).
    ``optimise_time=False`` gives ABO-t (never looks ahead).

    State: ``abo_stable``, ``abo_checks`` (qualifying checks so far), ``abo_slope`` (NaN before
    burn-in), ``abo_lengthscale_time``, ``abo_lookahead`` (chosen ``t_best - t_now``; 0 before
    stability), ``abo_window`` (window length), ``beta``.
    """

    kind = "abo"
    #: why ABO cannot run with k > 1 evaluators or overlap (tvbo.sim.parallel)
    parallel_blocker = ("its look-ahead chooses the sample time of each query itself, so it "
                        "owns the evaluator's timeline")

    def __init__(
        self,
        *,
        beta: Any = "wdbo",
        kappa_delta: float = 0.1,
        burn_in: int = 5,
        slope_threshold: float = 0.1,
        stability_checks: int = 3,
        slope_scale: str = "absolute",
        window_fraction: float = 1.0 / 3.0,
        dt_min: float = 0.0,
        max_lookahead: float | None = None,
        optimise_time: bool = True,
        time_grid: int = 16,
        n_restarts: int = 20,
        raw_samples: int = 512,
        maxiter: int = 200,
        include_noise: bool = False,
    ) -> None:
        use_kappa = isinstance(beta, str) and beta == "abo"
        self.beta_spec = beta
        self.beta = LookaheadBeta(None if use_kappa else make_beta(beta), kappa_delta)
        if int(burn_in) != burn_in or burn_in < 2:
            raise ValueError(
                f"burn_in must be an integer >= 2 (slope over burn_in - 1 "
                f"iterations), got {burn_in!r}"
            )
        if not slope_threshold > 0:
            raise ValueError(f"slope_threshold must be > 0, got {slope_threshold!r}")
        if int(stability_checks) != stability_checks or stability_checks < 1:
            raise ValueError(f"stability_checks must be an integer >= 1, got {stability_checks!r}")
        if slope_scale not in SLOPE_SCALES:
            raise ValueError(
                f"unknown slope_scale {slope_scale!r}; valid: {', '.join(SLOPE_SCALES)}"
            )
        if not window_fraction > 0:
            raise ValueError(f"window_fraction must be > 0, got {window_fraction!r}")
        if not (math.isfinite(dt_min) and dt_min >= 0):
            raise ValueError(f"dt_min must be a finite number >= 0, got {dt_min!r}")
        if max_lookahead is not None and not max_lookahead >= dt_min:
            raise ValueError(f"max_lookahead must be >= dt_min ({dt_min}), got {max_lookahead!r}")
        self.kappa_delta = float(kappa_delta)
        self.burn_in = int(burn_in)
        self.slope_threshold = float(slope_threshold)
        self.stability_checks = int(stability_checks)
        self.slope_scale = slope_scale
        self.window_fraction = float(window_fraction)
        self.dt_min = float(dt_min)
        self.max_lookahead = None if max_lookahead is None else float(max_lookahead)
        self.optimise_time = bool(optimise_time)
        self.lookahead = LookaheadUCB(
            AcquisitionOptimizer(n_restarts=n_restarts, raw_samples=raw_samples, maxiter=maxiter),
            time_grid=time_grid,
            include_noise=bool(include_noise),
        )
        # run state
        self.iteration = 0
        self.history: list[float] = []
        self.checks = 0
        self.stable = False
        self.last_slope = float("nan")
        self.last_beta = float("nan")
        self.last_lookahead = 0.0
        self.last_window = 0.0

    def bind(self, context: PartContext) -> None:
        super().bind(context)
        self.iteration, self.history, self.checks, self.stable = 0, [], 0, False

    # -- the stability test -----------------------------------------------------------------
    def _update_stability(self, lengthscale_time: float) -> None:
        self.history.append(float(lengthscale_time))
        i = self.iteration
        self.last_slope = float("nan")
        if self.stable or i <= self.burn_in:
            return
        lag = self.burn_in - 1
        now, before = self.history[i - 1], self.history[i - 1 - lag]
        if self.slope_scale == "log":
            now, before = math.log(now), math.log(before)
        self.last_slope = (now - before) / lag
        if abs(self.last_slope) < self.slope_threshold:
            self.checks += 1
            if self.checks >= self.stability_checks:
                self.stable = True

    def window(self, t: float, lengthscale_time: float) -> tuple[float, float]:
        """The look-ahead window ``(t_lo, t_hi)`` for the present ``t`` and the fitted l_T."""
        hi = max(self.dt_min, self.window_fraction * lengthscale_time)
        if self.max_lookahead is not None:
            hi = min(hi, self.max_lookahead)
        return t + self.dt_min, t + hi

    # -- selection --------------------------------------------------------------------------
    def select(self, surrogate: Surrogate, t: float) -> np.ndarray | Query:
        """x at the present ``t`` until l_T is stable, then ``Query(x, t_best)``: the engine
        waits until the chosen time (the composed algorithm passes a Query through)."""
        gp = getattr(surrogate, "gp", None)
        if not isinstance(surrogate, GPSurrogate) or gp is None or not gp.kernel.has_time:
            raise ValueError(
                "ABO needs a spatio-temporal surrogate: kind 'gp' with time_kernel='problem' or "
                f"a correlation name; got {getattr(surrogate, 'kind', surrogate)!r} without time"
            )
        problem = self.context.problem
        self.iteration += 1
        lengthscale_time = float(surrogate.hyperparameters.lengthscale_time)
        self._update_stability(lengthscale_time)
        self.last_beta = beta = self.beta(problem.d, surrogate.n, self.iteration)
        rng = self.context.rng

        if not (self.stable and self.optimise_time) or surrogate.n == 0:
            self.last_lookahead = self.last_window = 0.0
            return self.lookahead.at_present(gp, t, beta, problem.d, rng, problem.candidates)

        t_lo, t_hi = self.window(t, lengthscale_time)
        x, t_best = self.lookahead.over_window(
            gp, t_lo, t_hi, beta, problem.d, rng, problem.candidates
        )
        self.last_window = t_hi - t
        self.last_lookahead = t_best - t
        return Query(np.asarray(x, float), float(t_best))

    # -- records ----------------------------------------------------------------------------
    def state(self) -> dict[str, float]:
        return {
            "abo_stable": float(self.stable),
            "abo_checks": float(self.checks),
            "abo_slope": self.last_slope,
            "abo_lengthscale_time": self.history[-1] if self.history else float("nan"),
            "abo_lookahead": self.last_lookahead,
            "abo_window": self.last_window,
            "beta": self.last_beta,
        }

    def options(self) -> dict[str, Any]:
        return {
            "beta": (self.beta_spec if self.beta.schedule is None
                     else dict(self.beta.schedule.__dict__)),
            "kappa_delta": self.kappa_delta,
            "burn_in": self.burn_in,
            "slope_threshold": self.slope_threshold,
            "stability_checks": self.stability_checks,
            "slope_scale": self.slope_scale,
            "window_fraction": self.window_fraction,
            "dt_min": self.dt_min,
            "max_lookahead": self.max_lookahead,
            "optimise_time": self.optimise_time,
            "time_grid": self.lookahead.time_grid,
            "n_restarts": self.lookahead.optimizer.n_restarts,
            "raw_samples": self.lookahead.optimizer.raw_samples,
            "maxiter": self.lookahead.optimizer.maxiter,
            "include_noise": self.lookahead.include_noise,
        }


register_component("acquisition", ABOAcquisition)
