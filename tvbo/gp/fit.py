"""Type-II maximum likelihood for the hyperparameters of an :class:`~tvbo.gp.exact.ExactGP`.

The log marginal likelihood (or, with a :class:`~tvbo.gp.lml.LogNormalPrior`, the log posterior)
of the standardised targets, :class:`~tvbo.gp.lml.LMLObjective` (formulas there), is maximised
over the log of each hyperparameter with L-BFGS-B inside box bounds
(:class:`HyperparameterBounds`; bounds on the temporal lengthscale are essential, see there),
warm-started. ``mode=`` hands the fit to a published implementation's recipe instead
(:mod:`tvbo.gp.fit_modes`).

Fit health: every fit that returns a :class:`FitResult` also reports one flat record to
``gp.work.record_fit`` (:func:`_report`, the single exit point of :func:`fit_hyperparameters`):
the fitted values, for each whether it sits at its lower/upper bound (:func:`at_bounds`), the
LML (and log posterior with a prior), the fit mode and the caller-named ``source``. The engine
stores the records on the run file's ``fit`` dimension, so degenerate fits stay visible.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from tvbo.gp.exact import ExactGP
from tvbo.gp.fit_modes import FitMode, resolve_fit_mode
from tvbo.gp.kernels import HyperparameterBounds, Hyperparameters
from tvbo.gp.lml import (
    HYPERPARAMETERS,
    FitResult,
    LMLObjective,
    LogNormalPrior,
    parameter_names,
)
from tvbo.lbfgsb import LbfgsbResult, minimize_lbfgsb

__all__ = [
    "AT_BOUND_TOLERANCE",
    "DEFAULT_MODE",
    "at_bounds",
    "fit_hyperparameters",
]

#: L-BFGS-B stopping rules. The LML is O(n) nats; a relative change of 1e-7 or a projected
#: gradient of 1e-3 nats per log-unit is far below what changes the posterior, and stopping there
#: keeps warm-started refits after a single append down to a handful of evaluations.
FTOL = 1e-7
GTOL = 1e-3

#: A fitted value counts as AT a bound when ``|log h - log bound| <= AT_BOUND_TOLERANCE * (log hi
#: - log lo)``: 1% of the log-width of its box. Relative to the width (not an absolute 1% in h)
#: because the boxes span 2.6 to 6 decades, and because L-BFGS-B stopped by ``GTOL`` on a flat
#: likelihood ends NEAR a bound rather than on it; for the default l_T box [1, 1e4] s this is
#: l_T >= 9.1e3 s or <= 1.097 s. A box with ``lo == hi`` is a fixed value, never "at" a bound.
AT_BOUND_TOLERANCE = 0.01

#: name recorded as ``fit_mode`` for the bounded L-BFGS-B type-II ML / MAP-II fit of this module
#: (the ``mode`` argument's default; other modes record their own name, tvbo.gp.fit_modes)
DEFAULT_MODE = "lbfgs"


def at_bounds(
    value: float, bound: tuple[float, float], tolerance: float = AT_BOUND_TOLERANCE
) -> tuple[bool, bool]:
    """``(at_lower, at_upper)`` of a positive ``value`` in the box ``bound = (lo, hi)``.

    At a bound: ``|log value - log bound| <= tolerance * (log hi - log lo)``. A degenerate box
    (``lo == hi``) fixes the value, so neither flag is set.
    """
    lo, hi = (math.log(float(b)) for b in bound)
    if not hi > lo or not (math.isfinite(value) and value > 0):
        return False, False
    slack = tolerance * (hi - lo)
    v = math.log(float(value))
    return v - lo <= slack, hi - v <= slack


def _report(
    gp: ExactGP,
    result: FitResult,
    objective: LMLObjective,
    bounds: HyperparameterBounds,
    *,
    mode: str,
    source: str,
) -> FitResult:
    """Attach bound flags and a fit-health record to ``result`` and queue it on ``gp.work``.

    The record is flat (``{field: scalar}``): ``source``, ``mode``, ``n_data``, ``n_evals``,
    ``success``, ``jitter_events``, ``lml`` (the log marginal likelihood alone),
    ``log_posterior`` (LML + log prior; NaN without a prior), ``fitted`` (comma-separated names
    of the fitted hyperparameters), ``time_unit`` (``"s"`` for a temporal kernel, else ``""``;
    callers whose time axis counts steps overwrite it) and, for every hyperparameter, its value
    and ``<name>_at_lower`` / ``<name>_at_upper`` (0 for a parameter that was held fixed).
    Nothing here reports work, so recording never changes a virtual time.
    """
    hp = result.hyperparameters
    fitted = set(objective.names)
    log_posterior = float(result.lml)
    lml = log_posterior
    if objective.prior is not None:
        if math.isfinite(log_posterior):
            log_prior, _ = objective.prior.log_density_and_grad(
                objective.names, objective.to_theta(hp)
            )
            lml = log_posterior - log_prior
    else:
        log_posterior = math.nan
    return _queue_record(
        gp, result, mode=mode, source=source, fitted=list(objective.names),
        flags=lambda name, value: (
            at_bounds(value, getattr(bounds, name)) if name in fitted else (False, False)
        ),
        lml=lml, log_posterior=log_posterior,
    )


def _queue_record(gp: ExactGP, result: FitResult, *, mode: str, source: str,
                  fitted: list[str], flags: Any, lml: float, log_posterior: float) -> FitResult:
    """Build the flat fit-health record (fields: see :func:`_report`), queue it on ``gp.work``
    and attach it and the bound flags to ``result``. ``flags(name, value) -> (at_lower,
    at_upper)`` is the mode's notion of a bound. Records report no work."""
    hp = result.hyperparameters
    lower, upper = [], []
    record: dict[str, object] = {
        "source": str(source),
        "mode": str(mode),
        "n_data": int(gp.n),
        "n_evals": int(result.n_evals),
        "success": int(bool(result.success)),
        "jitter_events": int(result.jitter_events),
    }
    for name in HYPERPARAMETERS:
        value = getattr(hp, name)
        value = math.nan if value is None else float(value)
        lo_hit, hi_hit = flags(name, value)
        record[name] = value
        record[f"{name}_at_lower"] = int(lo_hit)
        record[f"{name}_at_upper"] = int(hi_hit)
        if lo_hit:
            lower.append(name)
        if hi_hit:
            upper.append(name)
    record["lml"] = lml
    record["log_posterior"] = log_posterior
    record["fitted"] = ",".join(fitted)
    record["time_unit"] = "s" if gp.kernel.has_time else ""
    gp.work.record_fit(record)
    result.at_lower, result.at_upper, result.record = tuple(lower), tuple(upper), record
    return result


def _report_mode(gp: ExactGP, result: FitResult, fit_mode: FitMode, *, source: str) -> FitResult:
    """The fit-health record of a published implementation's fit (:mod:`tvbo.gp.fit_modes`).

    Same fields as :func:`_report`. A bound is a finite end of the mode's own constraint (an
    ``Interval``'s two ends, ``GreaterThan``'s lower end, in tvbo units: constraint x unit);
    GPyTorch's ``Positive`` has no finite end, so a value there is never "at a bound" (a
    runaway l_T shows instead in the fit-health table's l_T-beyond-the-horizon share). ``lml``
    is the mode's maximised objective when the mode has no prior, else NaN, with the objective
    in ``log_posterior`` (recording prices no work, so no extra likelihood is computed).
    """
    names = parameter_names(gp.kernel, True)
    fitted = [n for n in names if fit_mode.spec(n).fixed is None]
    has_prior = any(fit_mode.spec(n).prior is not None for n in fitted)

    def flags(name: str, value: float) -> tuple[bool, bool]:
        if name not in fitted:
            return False, False
        spec = fit_mode.spec(name)
        lo = spec.constraint.lower * spec.unit
        hi = spec.constraint.upper * spec.unit
        if spec.constraint.kind == "interval" and lo > 0:
            return at_bounds(value, (lo, hi))
        if lo > 0 and math.isfinite(value) and value > 0:
            return math.log(value) - math.log(lo) <= math.log1p(AT_BOUND_TOLERANCE), False
        return False, False

    objective = float(result.lml)
    return _queue_record(
        gp, result, mode=str(fit_mode.name), source=source, fitted=fitted, flags=flags,
        lml=math.nan if has_prior else objective,
        log_posterior=objective if has_prior else math.nan,
    )


def fit_hyperparameters(
    gp: ExactGP,
    bounds: HyperparameterBounds = HyperparameterBounds(),  # noqa: B008 - frozen, immutable
    *,
    init: Hyperparameters | None = None,
    max_iter: int = 50,
    n_restarts: int = 0,
    rng: np.random.Generator | None = None,
    fit_noise: bool = True,
    escape_bounds: bool = True,
    prior: LogNormalPrior | None = None,
    mode: Any = "lbfgs",
    mode_options: Mapping[str, Any] | None = None,
    source: str = "",
) -> FitResult:
    """Maximise the LML of ``gp``'s data and install the optimum with ``gp.set_hyperparameters``.

    Starts from ``init`` (default: the GP's current hyperparameters, i.e. a warm start), clipped
    into ``bounds``; ``n_restarts`` further starts are drawn log-uniformly inside the bounds with
    ``rng`` (default ``np.random.default_rng(0)``, so fits are reproducible). Each L-BFGS-B run is
    capped at ``max_iter`` iterations and ``3 * max_iter`` evaluations. With ``fit_noise=False``
    the noise variance stays at the starting value. Never raises on numerical failure: failed
    factorisations count as ``LML = -inf`` and the best point evaluated wins. All work is
    reported inside ``gp.work.phase("fit")``; escalations are added to ``gp.jitter_events``.

    ``escape_bounds``: when the best point has a lengthscale ON one of its bounds, run one more
    local optimisation from the same point with that lengthscale moved to the geometric middle of
    its bounds, and keep whichever likelihood is higher. A lengthscale pinned at a bound is a flat
    region of the likelihood (e.g. l_T far below the spacing of the samples: every pair looks
    independent, the gradient vanishes) that warm-started fits never leave; for W-DBO that
    tiny l_T makes every stored observation look irrelevant and the dataset collapses. The extra
    run costs one local fit, only when a bound is hit, and is deterministic.

    ``prior``: a :class:`LogNormalPrior`; the fit is then MAP-II and ``FitResult.lml`` is the
    maximised log posterior (LML + log prior, up to the prior's constant). ``None`` (default) is
    plain maximum likelihood.

    ``mode``: ``"lbfgs"`` (default) is the fit described above. Any other name of
    :data:`tvbo.gp.fit_modes.FIT_MODES` (or a :class:`tvbo.gp.fit_modes.FitMode`) fits as a
    published implementation does (``mode_options`` are its options); such modes use their own
    parametrisation, constraints, priors and start, so ``bounds``, ``max_iter``, ``n_restarts``,
    ``escape_bounds`` and ``prior`` must be left at their defaults (not silently ignored). The
    result is a :class:`FitResult` either way.

    ``source``: who fitted (e.g. ``"surrogate:gp"``), copied into the fit-health record that
    every returned result (except the no-data one: nothing was fitted) queues on ``gp.work``;
    ``FitResult.at_lower`` / ``at_upper`` name the hyperparameters found at a bound.
    """
    fit_mode = _resolve_mode(mode, mode_options)
    if fit_mode is not None:
        _check_mode_arguments(fit_mode.name, bounds, max_iter, n_restarts, escape_bounds, prior)
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter!r}")
    if n_restarts < 0:
        raise ValueError(f"n_restarts must be >= 0, got {n_restarts!r}")
    start = gp.hyperparameters if init is None else init
    if gp.kernel.has_time and start.lengthscale_time is None:
        raise ValueError("spatio-temporal kernel needs init.lengthscale_time, got None")
    if gp.n == 0:
        return FitResult(start, 0.0, 0, False, "no data: hyperparameters left unchanged")
    if fit_mode is not None:  # a published implementation's fit (tvbo.gp.fit_modes)
        return _report_mode(gp, fit_mode.fit(gp, start), fit_mode, source=source)
    with gp.work.phase("fit"):
        objective = LMLObjective.of_gp(gp, fit_noise=fit_noise, noise_var=start.noise_var,
                                       prior=prior)
        log_bounds = objective.log_bounds(bounds)
        lo = np.array([b[0] for b in log_bounds])
        hi = np.array([b[1] for b in log_bounds])
        starts = [np.clip(objective.to_theta(start), lo, hi)]
        if n_restarts:
            rng = np.random.default_rng(0) if rng is None else rng
            starts += [rng.uniform(lo, hi) for _ in range(n_restarts)]

        def negative(theta: np.ndarray) -> tuple[float, np.ndarray]:
            lml, grad = objective(theta)
            if not math.isfinite(lml):
                return 1e300, np.zeros_like(theta)
            return -lml, -grad

        def local_fit(theta0: np.ndarray) -> LbfgsbResult:
            # = scipy's minimize(L-BFGS-B) bit for bit, without its per-call overhead
            return minimize_lbfgsb(negative, theta0, lo, hi, maxiter=max_iter,
                                   maxfun=3 * max_iter, ftol=FTOL, gtol=GTOL)

        runs = [local_fit(theta0) for theta0 in starts]
        if escape_bounds and objective.best_theta is not None:
            names = parameter_names(gp.kernel, fit_noise)
            theta = np.clip(objective.best_theta, lo, hi)
            pinned = [
                i
                for i, name in enumerate(names)
                if name.startswith("lengthscale")
                and hi[i] > lo[i]
                and min(theta[i] - lo[i], hi[i] - theta[i]) < 1e-3 * (hi[i] - lo[i])
            ]
            if pinned:
                escape = theta.copy()
                escape[pinned] = 0.5 * (lo[pinned] + hi[pinned])
                runs.append(local_fit(escape))
        gp.jitter_events += objective.jitter_events
        if objective.best_theta is None:
            failed = FitResult(
                start,
                -math.inf,
                objective.n_evals,
                False,
                "every evaluation failed to factorise; hyperparameters left unchanged",
                objective.jitter_events,
            )
            return _report(gp, failed, objective, bounds, mode=mode, source=source)
        best = objective.to_hyperparameters(np.clip(objective.best_theta, lo, hi))
        gp.set_hyperparameters(best)
        success = any(bool(res.success) for res in runs)
        message = "; ".join(str(res.message) for res in runs)
        fitted = FitResult(
            best,
            float(objective.best_lml),
            objective.n_evals,
            success,
            message,
            objective.jitter_events,
        )
        return _report(gp, fitted, objective, bounds, mode=DEFAULT_MODE, source=source)


def _resolve_mode(mode: Any, options: Mapping[str, Any] | None) -> FitMode | None:
    """The FitMode for ``mode`` (None for "lbfgs", this module's own fit)."""
    if isinstance(mode, str) and mode == "lbfgs" and not options:
        return None
    return resolve_fit_mode(mode, options)


def _check_mode_arguments(name: str, bounds: HyperparameterBounds, max_iter: int,
                          n_restarts: int, escape_bounds: bool, prior: Any) -> None:
    """Reject lbfgs-only arguments with another mode instead of ignoring them."""
    given = []
    if bounds != HyperparameterBounds():
        given.append("bounds")
    if max_iter != 50:
        given.append("max_iter")
    if n_restarts:
        given.append("n_restarts")
    if not escape_bounds:
        given.append("escape_bounds")
    if prior is not None:
        given.append("prior")
    if given:
        raise ValueError(
            f"fit mode {name!r} has its own constraints, priors and optimiser; "
            f"{', '.join(given)} apply to mode 'lbfgs' only"
        )
