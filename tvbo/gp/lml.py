"""The log marginal likelihood of an exact GP's data and its gradient (:class:`LMLObjective`),
the outcome every hyperparameter fit returns (:class:`FitResult`) and the log-normal prior of
MAP-II fits (:class:`LogNormalPrior`).

The log marginal likelihood of the standardised targets,
``LML = -1/2 y^T Delta^{-1} y - 1/2 log|Delta| - n/2 log 2 pi``, as a function of the log of
each hyperparameter. Gradients are analytic:
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
The distance matrices do not depend on the hyperparameters and are computed once per objective.

Its own module below both fits: tvbo's bounded L-BFGS-B fit (:mod:`tvbo.gp.fit`) and the
published implementations' fits (:mod:`tvbo.gp.fit_modes`) maximise the same objective and
return the same :class:`FitResult`; ``fit`` dispatches to ``fit_modes``, so neither imports the
other for these names.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np

from tvbo import jit
from tvbo.gp.exact import ExactGP
from tvbo.gp.kernels import (
    HyperparameterBounds,
    Hyperparameters,
    SeparableKernel,
    space_distances,
    time_distances,
)
from tvbo.gp.linalg import (
    JITTER_START,
    PIVOT_RTOL,
    JitterError,
    cho_factor,
    cho_inverse,
    cho_solve,
    cholesky_with_jitter,
    flops_cholesky,
    flops_inverse,
    flops_trisolve,
)
from tvbo.work import WorkCounter

__all__ = [
    "HYPERPARAMETERS",
    "FitResult",
    "LMLObjective",
    "LogNormalPrior",
    "log_marginal_likelihood_and_grad",
    "parameter_names",
]

_LOG_2PI = math.log(2.0 * math.pi)
#: ufuncs and reductions of LMLObjective.lml_and_grad, looked up once
_divide, _multiply, _add = np.divide, np.multiply, np.add
_sum_reduce, _min_reduce = np.add.reduce, np.minimum.reduce


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
            if name not in HYPERPARAMETERS:
                raise ValueError(
                    f"prior: unknown hyperparameter {name!r}; valid: {', '.join(HYPERPARAMETERS)}"
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


#: hyperparameter names of :class:`~tvbo.gp.kernels.Hyperparameters`, in fitting order
HYPERPARAMETERS: tuple[str, ...] = (
    "signal_var",
    "lengthscale_space",
    "lengthscale_time",
    "noise_var",
)


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
        #: the compiled form's workspace (tvbo.gp.compiled), made on the first compiled call
        self._compiled = None
        #: whether lml_and_grad runs compiled: None until its first call decides (tvbo.jit)
        self._use_compiled: bool | None = None

    @classmethod
    def of_gp(cls, gp: ExactGP, *, fit_noise: bool = True, noise_var: float | None = None,
              prior: LogNormalPrior | None = None) -> LMLObjective:
        """The objective of ``gp``'s current data: its kernel, inputs and standardised targets,
        with its work counted on ``gp.work`` (the one set-up every fit of a GP uses).
        ``noise_var`` is the fixed noise when ``fit_noise=False``."""
        return cls(gp.kernel, gp.X, gp.T, gp.y_standardized, fit_noise=fit_noise,
                   noise_var=noise_var, work=gp.work, prior=prior)

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

    def lml_and_grad_reference(
        self, sv: float, ls: float, lt: float | None, nv: float
    ) -> tuple[float, list[float] | None]:
        """:meth:`lml_and_grad` in its reference form: the module docstring's formulas as they
        read, on fresh arrays, through :func:`~tvbo.gp.linalg.cholesky_with_jitter`. The same
        floats, work, jitter counts and :attr:`alpha` (tests/gp/test_fit_speed.py);
        ``python benchmarks/fit_overhead.py --compare`` times the two.
        """
        n, work = self.n, self.work
        work.call()
        work.kernel(n * n)
        self.n_evals += 1
        rs = self.Ds / ls
        cs, dcs = self.kernel.space.value_and_d_dr(rs)
        dcs = dcs * rs  # r k_S'(r) = -d k_S / d log l_S
        if self.Dt is not None:
            rt = self.Dt / lt
            ct, dct = self.kernel.time.value_and_d_dr(rt)
            dct = dct * rt
            Kf = cs * ct * sv  # lambda k_S k_T = d Delta / d log lambda
        else:
            ct = dct = None
            Kf = cs * sv
        A = Kf.copy()
        A[np.diag_indices(n)] += nv  # Delta
        try:
            L, _, events = cholesky_with_jitter(A, sv + nv, work)
        except JitterError as err:
            self.jitter_events += err.escalations
            return -math.inf, None
        self.jitter_events += events
        y = self.y
        alpha, _ = cho_solve(L, y)
        self.alpha = alpha
        P, info = cho_inverse(L)  # lower triangle of Delta^{-1}, strict upper 0
        if info != 0:
            return -math.inf, None
        tr_p = float(np.trace(P))

        def quad_minus_trace(M: np.ndarray, tr_diag: float) -> float:
            """alpha^T M alpha - tr(Delta^{-1} M) for symmetric M, from Delta^{-1}'s lower
            triangle: twice its product with M minus the diagonal's share ``tr_diag``."""
            return float(alpha @ (M @ alpha)) - (2.0 * float(np.vdot(P.T, M)) - tr_diag)

        work.flops(self._grad_flops)
        lml = -0.5 * float(y @ alpha) - float(np.sum(np.log(np.diag(L)))) - self._half_n_log_2pi
        grad = [0.5 * quad_minus_trace(Kf, sv * tr_p)]
        # d Delta / d log l_S = -lambda k_T r k_S'(r): zero on the diagonal (r = 0)
        grad.append(-0.5 * sv * quad_minus_trace(dcs if ct is None else dcs * ct, 0.0))
        if ct is not None:
            grad.append(-0.5 * sv * quad_minus_trace(dct * cs, 0.0))
        if self.fit_noise:
            grad.append(0.5 * nv * (float(alpha @ alpha) - tr_p))
        return lml, grad

    def lml_and_grad(
        self, sv: float, ls: float, lt: float | None, nv: float
    ) -> tuple[float, list[float] | None]:
        """LML of :attr:`y` and its gradient w.r.t. the log hyperparameters (a list in the order
        of :attr:`names`; ``None`` with LML ``-inf`` when the factorisation fails); no prior.

        The fast form of :meth:`lml_and_grad_reference` (the formulas as they read), and ONE
        function, so that a compiler (numba) can take it whole: with ``TVBO_JIT`` on and n up to
        :data:`tvbo.gp.compiled.MAX_N`, the call is handed to its compiled twin
        (:func:`tvbo.gp.compiled.lml_and_grad`, the same bits; :func:`compiled_applies`). It inlines
        the first attempt of ``cholesky_with_jitter``, builds no objects and writes every n x n
        intermediate into buffers allocated once per objective (:meth:`_workspace`; factor and
        inverse overwrite Delta's copy in place). Every floating-point operation is the reference's,
        in the same order: tests/gp/test_fit_speed.py checks results, work and jitter counts bit for
        bit.

        Measured gain (``python benchmarks/fit_overhead.py --compare``, this 2-core box, one
        BLAS thread, thread CPU time, best of 3): 27% less per evaluation at n = 10 and 40
        (31 vs 43 us, 56 vs 77 us), 66% at n = 160, 50% at n = 512 (11.9 vs 23.7 ms): the
        reference allocates ~10 fresh n x n arrays per call, which the allocator maps and
        unmaps at these sizes. In a ``bolt_paper`` slice (shekel, hartmann3 x w-dbo-paper,
        bolt-paper, gp-ucb, tv-gp-ucb x seeds 0-1, cProfile) this method is 4.5% of the wall
        time, so at the campaign's small n it saves ~1.6%, under the 5% a fast form must earn
        there; it stays because the judged benchmarks fit at n = 64-512 (``policy_step.py``,
        ``gp_step.py``: the fit is half of a W-DBO/BOLT iteration at n = 512), where the
        reference would cost up to twice as much.
        """
        if self._use_compiled is None:
            self._use_compiled = compiled_applies(self, load=False)
        if self._use_compiled:
            from tvbo.gp import compiled  # lazy: imports numba; loaded once compiled_applies

            totals = compiled.counter_totals(self.work)
            if totals is not None:
                result = compiled.lml_and_grad(self, compiled.workspace(self), sv, ls, lt, nv,
                                               totals)
                compiled.store_totals(self.work, totals)
                return result
        n = self.n
        if n <= jit.MAX_N:  # what the compiled form would have saved (tvbo.jit's break-even)
            _PLAIN_SMALL[0] += 1
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
        # cholesky_with_jitter's first attempt (no jitter), inlined and in place; escalation
        # goes through it
        L, info = cho_factor(A, True)
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
        alpha = cho_solve(L, y)[0]
        self.alpha = alpha  # Delta^{-1} y, for a constant-mean gradient (tvbo.gp.fit_modes)
        # the ufunc reductions of .min() / .sum() without the methods' Python frames
        log_det = float(_sum_reduce(np.log(L_diag)))  # before dpotri overwrites L
        # lower triangle of Delta^{-1}, in L's place; its upper triangle stays 0 (dpotrf
        # cleaned it)
        P, info = cho_inverse(L, True)
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
        # alpha^T M alpha as alpha @ (M @ alpha): BLAS dgemv then ddot
        lml = -0.5 * float(y @ alpha) - log_det - self._half_n_log_2pi
        grad = [0.5 * (float(alpha @ (Kf @ alpha)) - (2.0 * float(vdot(Pt, Kf)) - sv * tr_p))]
        # d Delta / d log l_S = -lambda k_T r k_S'(r): zero on the diagonal (r = 0)
        if ct is None:
            Ms = dcs
        else:
            _multiply(dcs, ct, Ms)
        grad.append(-0.5 * sv * (float(alpha @ (Ms @ alpha)) - (2.0 * float(vdot(Pt, Ms)) - 0.0)))
        if ct is not None:
            _multiply(dct, cs, dct)
            grad.append(
                -0.5 * sv * (float(alpha @ (dct @ alpha)) - (2.0 * float(vdot(Pt, dct)) - 0.0))
            )
        if self.fit_noise:
            grad.append(0.5 * nv * (float(alpha @ alpha) - tr_p))
        return lml, grad


#: plain LML evaluations at n <= tvbo.jit.MAX_N in this process (a one-element list: mutable
#: without ``global``), counted for the break-even rule of :func:`compiled_applies`
_PLAIN_SMALL = [0]


def compiled_applies(objective: LMLObjective, *, load: bool = True) -> bool:
    """Whether ``objective`` evaluates in compiled form (:mod:`tvbo.gp.compiled`): the switch
    :mod:`tvbo.jit` is on, n is small and the kernel's correlations are built-in ones.

    ``load=False`` (an L-BFGS-B fit's objective): only when the compiled module is already
    loaded in this process, ``TVBO_JIT=1``, or the process has evaluated the plain LML
    :data:`tvbo.jit.LOAD_AFTER` times at small n, since loading numba for a few fits costs
    more than it saves (:mod:`tvbo.jit`: the break-even rule). ``TVBO_JIT=1`` where the
    compiled form cannot bind its routines is an error naming why; with ``TVBO_JIT`` unset the
    plain form runs instead.
    """
    if (not load and not jit.requested() and "tvbo.gp.compiled" not in sys.modules
            and _PLAIN_SMALL[0] < jit.LOAD_AFTER):
        return False
    if not jit.enabled():
        return False
    from tvbo.gp import compiled  # lazy: imports numba, which only a fit with the JIT on needs

    if not compiled.ready():
        if jit.requested():
            raise jit.JitConfigError(f"{jit.ENV}=1, but the compiled fit cannot run here: "
                                     f"{compiled.unavailable_reason()}")
        return False
    return (1 <= objective.n <= compiled.MAX_N
            and compiled.kernel_codes(objective.kernel) is not None)


def log_marginal_likelihood_and_grad(
    gp: ExactGP, hp: Hyperparameters | None = None, *, fit_noise: bool = True
) -> tuple[float, np.ndarray]:
    """LML of ``gp``'s standardised data under ``hp`` (default: the GP's own) and its gradient.

    The gradient is with respect to the *log* hyperparameters, in the order
    ``parameter_names(gp.kernel, fit_noise)``. The GP itself is not modified.
    """
    hp = gp.hyperparameters if hp is None else hp
    objective = LMLObjective.of_gp(gp, fit_noise=fit_noise, noise_var=hp.noise_var)
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
