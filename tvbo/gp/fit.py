"""Type-II maximum likelihood for the hyperparameters of an :class:`~tvbo.gp.exact.ExactGP`.

The log marginal likelihood of the standardised targets,
``LML = -1/2 y^T Delta^{-1} y - 1/2 log|Delta| - n/2 log 2 pi``, is maximised over the log of
each hyperparameter with L-BFGS-B inside box bounds (:class:`HyperparameterBounds`; bounds on the
temporal lengthscale are essential, see there). Gradients are analytic:
``d LML / d theta = 1/2 sum_ij (alpha alpha^T - Delta^{-1})_ij (d Delta / d theta)_ij`` with

* ``d Delta / d log lambda = lambda k_S k_T``;
* ``d Delta / d log l_S = lambda k_T (-r k_S'(r))`` (and likewise for ``l_T``);
* ``d Delta / d log sigma^2 = sigma^2 I``.

With a :class:`LogNormalPrior` the objective is the log *posterior* (MAP-II): each prior adds
``-1/2 ((theta_k - log median_k) / s_k)^2`` and its gradient ``-(theta_k - log median_k) / s_k^2``
(a normal density on ``theta_k = log h_k``, i.e. a log-normal on ``h_k``, the modern BoTorch
default). Weak priors regularise the fits of small datasets, where the likelihood alone is flat or
degenerate (noise -> 0 interpolation, tiny lengthscales), without biasing large-data fits.

One evaluation costs one Cholesky (n^3/3), one inverse (~n^3) and a few n^2 elementwise sums.
The distance matrices do not depend on the hyperparameters and are computed once per fit.

Fit health: every fit that returns a :class:`FitResult` also reports one flat record to
``gp.work.record_fit`` (:func:`_report`, the single exit point of :func:`fit_hyperparameters`):
the fitted values, for each whether it sits at its lower/upper bound (:func:`at_bounds`), the
LML (and log posterior with a prior), the fit mode and the caller-named ``source``. The engine
stores the records on the run file's ``fit`` dimension, so degenerate fits stay visible.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from scipy.linalg.lapack import dpotrf, dpotri, dpotrs
from scipy.optimize import minimize

from tvbo.gp.exact import (
    JITTER_START,
    PIVOT_RTOL,
    ExactGP,
    JitterError,
    cholesky_with_jitter,
    flops_cholesky,
    flops_inverse,
    flops_trisolve,
)
from tvbo.gp.kernels import (
    HyperparameterBounds,
    Hyperparameters,
    SeparableKernel,
    space_distances,
    time_distances,
)
from tvbo.work import WorkCounter

_LOG_2PI = math.log(2.0 * math.pi)
#: ufuncs and reductions of LMLObjective.lml_and_grad, looked up once
_divide, _multiply, _add = np.divide, np.multiply, np.add
_sum_reduce, _min_reduce = np.add.reduce, np.minimum.reduce
_matvec, _matmul = np.ndarray.dot, np.matmul

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


@dataclass(frozen=True)
class LogNormalPrior:
    """Independent log-normal priors ``log h ~ N(log median, log_sd^2)`` on some hyperparameters.

    ``priors`` maps a hyperparameter name (``signal_var``, ``lengthscale_space``,
    ``lengthscale_time``, ``noise_var``) to ``(median, log_sd)`` in natural units; names absent
    from the mapping (or not fitted, e.g. a fixed noise) get a flat prior, so the empty prior is
    plain maximum likelihood.
    """

    priors: tuple[tuple[str, float, float], ...] = ()

    @classmethod
    def from_mapping(cls, mapping: dict[str, tuple[float, float]]) -> LogNormalPrior:
        entries = []
        for name, pair in mapping.items():
            if name not in _HYPERPARAMETERS:
                raise ValueError(
                    f"prior: unknown hyperparameter {name!r}; valid: {', '.join(_HYPERPARAMETERS)}"
                )
            try:
                median, log_sd = (float(v) for v in pair)
            except (TypeError, ValueError):
                raise ValueError(
                    f"prior {name!r} must be a pair (median, log_sd), got {pair!r}"
                ) from None
            if not (math.isfinite(median) and median > 0.0):
                raise ValueError(f"prior {name!r}: median must be finite and > 0, got {median!r}")
            if not (math.isfinite(log_sd) and log_sd > 0.0):
                raise ValueError(f"prior {name!r}: log_sd must be finite and > 0, got {log_sd!r}")
            entries.append((name, median, log_sd))
        return cls(tuple(entries))

    def log_density_and_grad(
        self, names: tuple[str, ...], theta: np.ndarray
    ) -> tuple[float, np.ndarray]:
        """Log prior (up to a constant) at ``theta`` (log hyperparameters in the order ``names``)
        and its gradient with respect to ``theta``."""
        grad = np.zeros(len(names))
        value = 0.0
        for name, median, log_sd in self.priors:
            if name in names:
                k = names.index(name)
                z = (float(theta[k]) - math.log(median)) / log_sd
                value -= 0.5 * z * z
                grad[k] = -z / log_sd
        return value, grad


_HYPERPARAMETERS = ("signal_var", "lengthscale_space", "lengthscale_time", "noise_var")


def parameter_names(kernel: SeparableKernel, fit_noise: bool = True) -> tuple[str, ...]:
    """Order of the log-parameters ``theta`` used by :class:`LMLObjective` and the gradient."""
    names = ["signal_var", "lengthscale_space"]
    if kernel.has_time:
        names.append("lengthscale_time")
    if fit_noise:
        names.append("noise_var")
    return tuple(names)


class LMLObjective:
    """LML and its gradient as a function of ``theta = log(hyperparameters)``.

    Built once per fit from a snapshot of the data (distances are cached); each call reports one
    ``call``, ``n^2`` kernel entries and its flops to ``work``. Cholesky failures are handled by
    jitter escalation (counted in :attr:`jitter_events`); if even the capped jitter fails the
    LML is ``-inf`` with a zero gradient, so an optimiser backs off instead of crashing.
    """

    def __init__(
        self,
        kernel: SeparableKernel,
        X: np.ndarray,
        T: np.ndarray | None,
        y: np.ndarray,
        *,
        fit_noise: bool = True,
        noise_var: float | None = None,
        work: WorkCounter | None = None,
        prior: LogNormalPrior | None = None,
    ) -> None:
        if not fit_noise and noise_var is None:
            raise ValueError("fit_noise=False needs the fixed noise_var")
        self.kernel = kernel
        self.fit_noise = fit_noise
        self.fixed_noise = noise_var
        self.names = parameter_names(kernel, fit_noise)
        self.prior = prior
        self.work = work if work is not None else WorkCounter()
        self.y = np.asarray(y, dtype=float).reshape(-1)
        self.n = self.y.shape[0]
        X = np.asarray(X, dtype=float)
        self.Ds = space_distances(X, X)
        self.Dt: np.ndarray | None = None
        if kernel.has_time:
            T = np.asarray(T, dtype=float).reshape(-1)
            self.Dt = time_distances(T, T)
        #: work of one evaluation, as the textbook counts of tvbo.gp.exact (computed once)
        self._chol_flops = flops_cholesky(self.n)
        n, n_grad = self.n, len(self.names)
        self._grad_flops = 2 * flops_trisolve(n) + flops_inverse(n) + 4.0 * n_grad * n * n
        #: (kind, amount) pairs every evaluation reports first (WorkCounter.add_all)
        self._eval_work = (("call", 1.0), ("kernel", n * n), ("flop", self._chol_flops))
        #: the LML's constant n/2 log 2 pi, as each evaluation computed it: 0.5 * n * log 2 pi
        self._half_n_log_2pi = 0.5 * n * _LOG_2PI
        self._buffers: tuple | None = None
        #: the correlations' in-place evaluations, bound once (None: no time component)
        self._space_into = kernel.space.value_and_d_dr_into
        self._time_into = kernel.time.value_and_d_dr_into if kernel.has_time else None
        self.n_evals = 0
        self.jitter_events = 0
        self.best_theta: np.ndarray | None = None
        self.best_lml = -math.inf

    def to_hyperparameters(self, theta: np.ndarray) -> Hyperparameters:
        values = dict(zip(self.names, np.exp(np.asarray(theta, dtype=float)), strict=True))
        return Hyperparameters(
            signal_var=float(values["signal_var"]),
            lengthscale_space=float(values["lengthscale_space"]),
            lengthscale_time=(float(values["lengthscale_time"]) if self.kernel.has_time else None),
            noise_var=float(values["noise_var"]) if self.fit_noise else float(self.fixed_noise),
        )

    def to_theta(self, hp: Hyperparameters) -> np.ndarray:
        return np.log(np.array([getattr(hp, name) for name in self.names], dtype=float))

    def log_bounds(self, bounds: HyperparameterBounds) -> list[tuple[float, float]]:
        return [tuple(math.log(v) for v in getattr(bounds, name)) for name in self.names]

    def values(self, theta: np.ndarray) -> tuple[float, float, float | None, float]:
        """``(signal_var, lengthscale_space, lengthscale_time, noise_var)`` at ``theta``.

        The same floats as :meth:`to_hyperparameters` (one ``np.exp`` of the whole vector),
        without building the dataclass on every evaluation; a value the dataclass would reject
        (not finite, not positive) is passed to it, so the same ``ValueError`` is raised.
        """
        ex = np.exp(theta).tolist()
        sv, ls = ex[0], ex[1]
        k = 2
        lt = None
        if self.kernel.has_time:
            lt = ex[2]
            k = 3
        nv = ex[k] if self.fit_noise else float(self.fixed_noise)
        ok = (
            math.isfinite(sv) and sv > 0 and math.isfinite(ls) and ls > 0
            and (lt is None or (math.isfinite(lt) and lt > 0))
            and math.isfinite(nv) and nv >= 0
        )
        if not ok:
            self.to_hyperparameters(theta)  # raises the dataclass's ValueError
        return sv, ls, lt, nv

    def __call__(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """``(LML, d LML / d theta)`` at ``theta`` (plus the log prior and its gradient, if any)."""
        theta = np.asarray(theta, dtype=float)
        lml, grad = self.lml_and_grad(*self.values(theta))
        if grad is None:
            return -math.inf, np.zeros_like(theta)
        grad = np.asarray(grad)
        if self.prior is not None:
            log_prior, prior_grad = self.prior.log_density_and_grad(self.names, theta)
            lml += log_prior
            grad = grad + prior_grad
        if lml > self.best_lml:
            self.best_lml, self.best_theta = lml, theta.copy()
        return lml, grad

    def _workspace(self) -> tuple:
        """Buffers and views reused by every evaluation of this objective (made once).

        n x n buffers ``rs, cs, dcs, rt, ct, dct, Kf, Ms`` (C order), ``A`` (Fortran order: the
        matrix LAPACK factorises and inverts in place) and ``scratch`` (two more, for the
        correlations), plus views of ``A`` that every evaluation would otherwise rebuild:
        ``At`` (its C-contiguous transpose) and ``A_diag`` (its diagonal, the same elements and
        stride as ``A.diagonal()``).
        """
        if self._buffers is None:
            n = self.n
            shape = self.Ds.shape
            arrays = [np.empty(shape) for _ in range(8)]
            A = np.empty(shape, order="F")
            self._buffers = (*arrays, A, (np.empty(shape), np.empty(shape)),
                             A.T, A.T.reshape(-1)[:: n + 1])
        return self._buffers

    def lml_and_grad(
        self, sv: float, ls: float, lt: float | None, nv: float
    ) -> tuple[float, list[float] | None]:
        """LML of :attr:`y` and its gradient w.r.t. the log hyperparameters (a list in the order
        of :attr:`names`; ``None`` with LML ``-inf`` when the factorisation fails); no prior.

        The hot loop of every fit (150 of them per fit in mode ``gpytorch-adam``): on the small
        datasets of a run its cost is interpreter overhead as much as arithmetic, so it calls
        LAPACK directly (``dpotrf``/``dpotrs``, as ``cholesky_with_jitter``/``cho_solve`` would),
        builds no objects and writes every n x n intermediate into buffers allocated once per
        objective (:meth:`_workspace`; factor and inverse overwrite Delta's copy in place).
        Every floating-point operation is the one of the textbook formulas in the module
        docstring, in a fixed order; tests/gp/test_fit_speed.py checks the results bit for bit
        against that plain formulation.
        """
        n = self.n
        work = self.work
        # one call / n^2 kernel entries / the Cholesky's flops, added in this order as three
        # add() calls would (the Cholesky's flops always precede any jitter escalation's)
        work.add_all(self._eval_work)
        self.n_evals += 1
        rs, cs, dcs, rt, ct, dct, Kf, Ms, A, scratch, At, A_diag = self._workspace()
        # ufuncs with positional outputs: the same loops as ``np.divide(.., out=rs)`` and
        # ``dcs *= rs``, with less argument parsing (see _mul's note in tvbo.gp.kernels)
        _divide(self.Ds, ls, rs)
        self._space_into(rs, cs, dcs, scratch)
        _multiply(dcs, rs, dcs)  # r k_S'(r) = -d k_S / d log l_S
        Dt = self.Dt
        if Dt is not None:
            _divide(Dt, lt, rt)
            self._time_into(rt, ct, dct, scratch)
            _multiply(dct, rt, dct)
            _multiply(cs, ct, Kf)
            _multiply(Kf, sv, Kf)  # lambda k_S k_T = d Delta / d log lambda
        else:
            ct = dct = None
            _multiply(cs, sv, Kf)
        # Delta = Kf + noise I, copied into the Fortran-order buffer LAPACK works in, so
        # dpotrf factorises it in place (the same values as f2py's own copy of a C array)
        np.copyto(A, Kf)
        _add(A_diag, nv, A_diag)
        scale = sv + nv
        # cholesky_with_jitter's first attempt (no jitter), inlined; escalation goes through it
        # positional arguments (lower=1, clean=1, overwrite_a=1 here; lower=1, overwrite_b=0
        # for dpotrs; lower=1, overwrite_c=1 for dpotri): the same LAPACK calls, ~0.4 us less
        # f2py keyword parsing each
        L, info = dpotrf(A, 1, 1, 1)
        # f2py factorises a Fortran-order float64 buffer in place and returns it: L is A, so
        # A's diagonal view is L's (else, never seen, take L's own)
        L_diag = A_diag if L is A else L.diagonal()
        if not (info == 0 and (n == 0 or float(_min_reduce(L_diag)) ** 2 > PIVOT_RTOL * scale)):
            A = Kf.copy()  # the failed attempt overwrote the buffer
            A.reshape(-1)[:: n + 1] += nv
            try:
                L, _, events = cholesky_with_jitter(
                    A, scale, work, start_jitter=JITTER_START * scale
                )
            except JitterError as err:
                self.jitter_events += err.escalations + 1
                return -math.inf, None
            self.jitter_events += events + 1
            L_diag = L.diagonal()
        y = self.y
        alpha = dpotrs(L, y, 1, 0)[0]
        self.alpha = alpha  # Delta^{-1} y, for a constant-mean gradient (tvbo.gp.fit_modes)
        # the ufunc reductions of .min() / .sum() without the methods' Python frames
        log_det = float(_sum_reduce(np.log(L_diag)))  # before dpotri overwrites L
        # lower triangle of Delta^{-1}, in L's place; its upper triangle stays 0 (dpotrf
        # cleaned it)
        P, info = dpotri(L, 1, 1)
        if info != 0:
            return -math.inf, None
        if P is A and L is A:  # in place, as f2py does: the views made once
            Pt, tr_p = At, float(_sum_reduce(A_diag))
        else:
            Pt, tr_p = P.T, float(P.trace())
        # Pt: a C-contiguous view, so vdot needs no copy; M symmetric => same sums
        vdot = np.vdot
        # alpha^T M alpha - tr(Delta^{-1} M) for symmetric M whose P_ii M_ii sum to tr_diag
        # (the trace uses only the lower triangle of Delta^{-1}), inlined for each M below
        work.flops(self._grad_flops)
        # ndarray.dot instead of @: on C-contiguous operands both end in the same BLAS call
        # (ddot for vector.vector; dgemv, transposed column-major, for matrix.vector) with
        # the same sizes and strides, so the same floats, and the method skips matmul's
        # generalised-ufunc dispatch (~1 us each, 8 per call). Two exceptions keep @: y may
        # be a strided view of a caller's array, and at n = 1 the two differ (matmul takes a
        # 1 x 1 matrix times a vector as a ddot, dot takes length-1 vectors as scalars: the
        # sign of a zero can differ), so n = 1 keeps @ throughout
        if n > 1:
            adot, mv = alpha.dot, _matvec
            y_alpha = y.dot(alpha) if y.flags.c_contiguous else y @ alpha
        else:
            adot, mv = partial(_matmul, alpha), _matmul
            y_alpha = y @ alpha
        lml = -0.5 * float(y_alpha) - log_det - self._half_n_log_2pi
        grad = [0.5 * (float(adot(mv(Kf, alpha))) - (2.0 * float(vdot(Pt, Kf)) - sv * tr_p))]
        # d Delta / d log l_S = -lambda k_T r k_S'(r): zero on the diagonal (r = 0)
        if ct is None:
            Ms = dcs
        else:
            _multiply(dcs, ct, Ms)
        grad.append(-0.5 * sv * (float(adot(mv(Ms, alpha))) - (2.0 * float(vdot(Pt, Ms)) - 0.0)))
        if ct is not None:
            _multiply(dct, cs, dct)
            grad.append(
                -0.5 * sv * (float(adot(mv(dct, alpha))) - (2.0 * float(vdot(Pt, dct)) - 0.0))
            )
        if self.fit_noise:
            grad.append(0.5 * nv * (float(adot(alpha)) - tr_p))
        return lml, grad


def log_marginal_likelihood_and_grad(
    gp: ExactGP, hp: Hyperparameters | None = None, *, fit_noise: bool = True
) -> tuple[float, np.ndarray]:
    """LML of ``gp``'s standardised data under ``hp`` (default: the GP's own) and its gradient.

    The gradient is with respect to the *log* hyperparameters, in the order
    ``parameter_names(gp.kernel, fit_noise)``. The GP itself is not modified.
    """
    hp = gp.hyperparameters if hp is None else hp
    objective = LMLObjective(
        gp.kernel,
        gp.X,
        gp.T,
        gp.y_standardized,
        fit_noise=fit_noise,
        noise_var=hp.noise_var,
        work=gp.work,
    )
    return objective(objective.to_theta(hp))


@dataclass
class FitResult:
    """Outcome of :func:`fit_hyperparameters`; ``lml`` is in standardised units."""

    hyperparameters: Hyperparameters
    lml: float
    n_evals: int
    success: bool
    message: str
    jitter_events: int = 0
    #: fitted hyperparameters at their lower / upper bound (see :data:`AT_BOUND_TOLERANCE`)
    at_lower: tuple[str, ...] = ()
    at_upper: tuple[str, ...] = ()
    #: the fit-health record queued on ``gp.work`` (the same dict; a caller may add
    #: algorithm-specific fields, e.g. a forgetting rate, before the engine drains it)
    record: dict[str, object] | None = None


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
    for name in _HYPERPARAMETERS:
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


def _report_mode(gp: ExactGP, result: FitResult, fit_mode: Any, *, source: str) -> FitResult:
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
        objective = LMLObjective(
            gp.kernel,
            gp.X,
            gp.T,
            gp.y_standardized,
            fit_noise=fit_noise,
            noise_var=start.noise_var,
            work=gp.work,
            prior=prior,
        )
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

        runs = []
        for theta0 in starts:
            res = minimize(
                negative,
                theta0,
                jac=True,
                method="L-BFGS-B",
                bounds=log_bounds,
                options={"maxiter": max_iter, "maxfun": 3 * max_iter, "ftol": FTOL, "gtol": GTOL},
            )
            runs.append(res)
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
                runs.append(
                    minimize(
                        negative,
                        escape,
                        jac=True,
                        method="L-BFGS-B",
                        bounds=log_bounds,
                        options={
                            "maxiter": max_iter,
                            "maxfun": 3 * max_iter,
                            "ftol": FTOL,
                            "gtol": GTOL,
                        },
                    )
                )
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


def _resolve_mode(mode: Any, options: Mapping[str, Any] | None) -> Any:
    """The FitMode for ``mode`` (None for "lbfgs"); a late import: fit_modes builds on fit."""
    if isinstance(mode, str) and mode == "lbfgs" and not options:
        return None
    from tvbo.gp.fit_modes import resolve_fit_mode

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
