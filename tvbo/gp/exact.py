"""Exact GP regression with an incrementally maintained Cholesky factor.

Time-varying BO changes the dataset by one observation at a time (append a query, delete a stale
observation), so the factor ``L L^T = Delta = K + (noise + jitter) I`` is updated in O(n^2)
instead of refactorised in O(n^3): append solves for the new row, remove applies a rank-one update
to the trailing block. A full factorisation happens only in :meth:`ExactGP.set_data` and
:meth:`ExactGP.set_hyperparameters` (Delta depends on X, T and the hyperparameters only), or as a
recorded fallback when an appended point makes Delta numerically singular.

Outputs are standardised over the *current* data (``(y - mean) / std``), so every append/remove
changes the standardised targets; that only needs ``alpha = Delta^{-1} y_std`` again (O(n^2)).
Hyperparameters are in standardised units; predictions come back in original units.

A prior mean ``m(x)`` (optional, ``prior_mean=``; PE-GP-UCB's candidate priors) changes only the
targets: the GP conditions on the residuals ``r = y - m(X)`` with the same factor and the same
append/remove/predict arithmetic, and adds ``m(x)`` back to the posterior mean. A kernel with a
``variance(X, T, hp)`` method (an empirical covariance is not stationary) gives the prior variance
``k(x, x)``; otherwise it is ``signal_var``.

Every routine reports its work to a :class:`~tvbo.work.WorkCounter` with the textbook counts
of ``tvbo/work.py``, as deterministic functions of the sizes involved; the ``counted`` compute
model turns those counts into virtual seconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import cdist

from tvbo.gp.kernels import Hyperparameters, SeparableKernel
from tvbo.gp.linalg import (
    PIVOT_RTOL,
    JitterError,
    cho_inverse,
    cho_solve,
    cholesky_rank_one_update,
    cholesky_with_jitter,
    flops_inverse,
    flops_matmul,
    flops_rank_one,
    flops_trisolve,
    tri_solve,
)
from tvbo.work import WorkCounter

__all__ = [
    "ExactGP",
    "Prediction",
    "joint_posterior",
]

_LOG_2PI = math.log(2.0 * math.pi)

@dataclass
class Prediction:
    """Posterior at m points, in original (un-standardised) output units."""

    mean: np.ndarray  # (m,)
    var: np.ndarray  # (m,) latent f variance, plus noise if requested
    dmean: np.ndarray | None = None  # (m, d) d mean / d x
    dvar: np.ndarray | None = None  # (m, d) d var / d x


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


class ExactGP:
    """Exact GP posterior for a :class:`SeparableKernel`, with O(n^2) append and remove.

    ``jitter_events`` counts every jitter escalation of any factorisation done for this GP
    (including the trial factorisations of :func:`tvbo.gp.fit.fit_hyperparameters`); ``jitter``
    is the jitter in force on the diagonal of the current factor (0 normally; reset to 0 when the
    matrix is refactorised from scratch by ``set_data``/``set_hyperparameters``).

    ``prior_mean`` (optional): ``m(X)`` (m, d) -> (m,) in original units (the
    :class:`~tvbo.models.HasPriorMean` capability). The GP then works on the residuals ``y -
    m(X)`` (standardised like ``y`` is without a mean, so pass ``standardize=False`` for a prior
    given in the data's units, as the candidate priors are) and the posterior mean is ``m(x) +
    k^T Delta^{-1} r``; before any data it predicts the prior. Input gradients are refused with
    a prior mean (a prior mean need not be differentiable; its users maximise over finite sets).
    """

    #: m(X) -> (m,) in original units, or None (the zero mean: the arithmetic is unchanged)
    _prior_mean: Callable[[np.ndarray], np.ndarray] | None = None
    #: m at the held inputs (n,), kept with the data (None without a prior mean)
    _m: np.ndarray | None = None

    def __init__(
        self,
        kernel: SeparableKernel,
        hyperparameters: Hyperparameters,
        *,
        standardize: bool = True,
        work: WorkCounter | None = None,
        prior_mean: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> None:
        self.kernel = kernel
        if prior_mean is not None:
            if not callable(prior_mean):
                raise TypeError(f"prior_mean must be callable m(X) -> (m,), got {prior_mean!r}")
            self._prior_mean = prior_mean
            self._m = np.empty(0)
        self._check_hp(hyperparameters)
        self._hp = hyperparameters
        self.standardize = bool(standardize)
        self.work: WorkCounter = work if work is not None else WorkCounter()
        self.jitter_events: int = 0
        self.jitter: float = 0.0
        #: keep ``y_mean``/``y_std`` when data change (pending-point fantasies condition on lies
        #: in the units of the real data; see :mod:`tvbo.acquisition.pending`)
        self.frozen_standardization: bool = False
        self.d: int | None = None
        self._X = np.empty((0, 0))
        self._T = np.empty(0)
        self._y = np.empty(0)
        self._L = np.empty((0, 0), order="F")
        self._alpha = np.empty(0)
        self._ys = np.empty(0)
        self.y_mean: float = 0.0
        self.y_std: float = 1.0

    # -- read-only state ---------------------------------------------------------------------
    @property
    def hyperparameters(self) -> Hyperparameters:
        return self._hp

    @property
    def n(self) -> int:
        return int(self._y.shape[0])

    @property
    def X(self) -> np.ndarray:
        return _readonly(self._X)

    @property
    def T(self) -> np.ndarray:
        return _readonly(self._T)

    @property
    def y(self) -> np.ndarray:
        return _readonly(self._y)

    @property
    def y_standardized(self) -> np.ndarray:
        """``(r - y_mean) / y_std`` with ``r = y - m(X)`` (``r = y`` without a prior mean): the
        targets the hyperparameters and alpha refer to."""
        return _readonly(self._ys)

    @property
    def cholesky(self) -> np.ndarray:
        """Lower factor L with ``L L^T = K + (noise_var + jitter) I`` (standardised units)."""
        return _readonly(self._L)

    # -- validation ------------------------------------------------------------------------
    def _check_hp(self, hp: Hyperparameters) -> None:
        if not isinstance(hp, Hyperparameters):
            raise TypeError(f"hyperparameters must be a Hyperparameters, got {type(hp).__name__}")
        if self.kernel.has_time and hp.lengthscale_time is None:
            raise ValueError("spatio-temporal kernel needs lengthscale_time, got None")

    def _points(self, X: np.ndarray, name: str, *, any_d: bool = False) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"{name} must be a 2-D array (n, d), got shape {X.shape}")
        if not any_d and self.d is not None and X.shape[1] != self.d:
            raise ValueError(f"{name} has {X.shape[1]} columns, but the GP has d = {self.d}")
        if not np.isfinite(X).all():
            raise ValueError(f"{name} contains non-finite values")
        return X

    def _times(self, T: np.ndarray | float | None, m: int, name: str) -> np.ndarray:
        if not self.kernel.has_time:
            return np.zeros(m)
        if T is None:
            raise ValueError(f"{name} is required by the spatio-temporal kernel, got None")
        T = np.asarray(T, dtype=float)
        T = np.full(m, float(T)) if T.ndim == 0 else T.reshape(-1)
        if T.shape[0] != m:
            raise ValueError(f"{name} must be a scalar or have {m} entries, got {T.shape[0]}")
        if not np.all(np.isfinite(T)):
            raise ValueError(f"{name} contains non-finite values")
        return T.astype(float, copy=True)

    # -- internal numerics ----------------------------------------------------------------
    @property
    def _scale(self) -> float:
        return self._hp.signal_var + self._hp.noise_var

    def prior_mean(self, X: np.ndarray) -> np.ndarray:
        """``m(X)`` (m,) in original units; zeros without a prior mean."""
        X = np.asarray(X, dtype=float)
        if self._prior_mean is None or len(X) == 0:
            return np.zeros(len(X))
        return np.asarray(self._prior_mean(X), dtype=float).reshape(-1)

    def _prior_variance(self, X: np.ndarray, T: np.ndarray, hp: Hyperparameters):
        """``k(x, x)`` at each point: the kernel's ``variance`` if it has one (an empirical
        covariance), else ``signal_var`` (a scalar: every correlation is 1 at distance 0)."""
        variance = getattr(self.kernel, "variance", None)
        if variance is None:
            return hp.signal_var
        return variance(X, T, hp)

    def _restandardize(self) -> None:
        """Recompute mean/std of the current y (its residuals with a prior mean) and ``alpha``
        (2 n^2 flops)."""
        y = self._y if self._m is None else self._y - self._m
        if self.frozen_standardization and self.standardize:
            pass  # keep the standardisation of the real data
        elif self.standardize and y.size > 0:
            self.y_mean = float(np.mean(y))
            std = float(np.std(y))
            self.y_std = std if std >= 1e-12 else 1.0
        else:
            self.y_mean, self.y_std = 0.0, 1.0
        self._ys = (y - self.y_mean) / self.y_std
        n = self.n
        if n:
            # = scipy.linalg.cho_solve((L, True), ys): the same LAPACK dpotrs, without the
            # wrapper's batching and checks (once per append/remove/refit)
            self._alpha, info = cho_solve(self._L, self._ys)
            if info != 0:
                raise ValueError(f"illegal value in {-info}th argument of internal potrs")
        else:
            self._alpha = np.empty(0)
        self.work.flops(2 * flops_trisolve(n))

    def _refactorize(
        self,
        X: np.ndarray,
        T: np.ndarray,
        y: np.ndarray,
        hp: Hyperparameters,
        start_jitter: float = 0.0,
        *,
        noise: np.ndarray | None = None,
        kernel_matrix: np.ndarray | None = None,
    ) -> None:
        """Full O(n^3) factorisation of the candidate state, committed only on success.

        On a :class:`JitterError` the GP keeps its previous data, hyperparameters and factor (the
        escalations tried are still counted) and the error propagates. ``noise`` is the per-point
        noise of the candidate state (None: ``hp.noise_var`` for every point); ``kernel_matrix``
        a prior covariance of X the caller already computed (and charged).
        """
        n = y.shape[0]
        if kernel_matrix is None:
            K = self.kernel.matrix(X, T, X, T, hp)
            self.work.kernel(n * n)
        else:
            K = np.array(kernel_matrix, float, copy=True)
        K[np.diag_indices(n)] += hp.noise_var if noise is None else noise
        try:
            L, jitter, events = cholesky_with_jitter(
                K, hp.signal_var + hp.noise_var, self.work, start_jitter=start_jitter
            )
        except JitterError as err:
            self.jitter_events += err.escalations
            raise
        self.jitter_events += events
        self.jitter = jitter
        self._X, self._T, self._y, self._hp = X, T, y, hp
        if self._prior_mean is not None:
            self._m = self.prior_mean(X)
        self._noise = noise
        if X.shape[1] > 0:  # an empty GP without columns keeps d unknown
            self.d = int(X.shape[1])
        self._L = np.asfortranarray(L)
        self._restandardize()

    # -- data updates ---------------------------------------------------------------------
    def set_data(
        self,
        X: np.ndarray,
        T: np.ndarray | None,
        y: np.ndarray,
        *,
        noise: np.ndarray | None = None,
        kernel_matrix: np.ndarray | None = None,
    ) -> None:
        """Replace the dataset and factorise from scratch (O(n^3)).

        ``noise`` (optional): each observation's own noise variance, in the standardised units
        of the hyperparameters (see :meth:`append_with_noise`); None gives every observation
        ``noise_var``. ``kernel_matrix`` (optional): ``kernel.matrix(X, T, X, T, hp)`` already
        computed by the caller (a model that borders a cache), used as is and not charged again.
        """
        X = self._points(X, "X", any_d=True).copy()  # a new dataset may change d
        y = np.asarray(y, dtype=float).reshape(-1)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows")
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains non-finite values")
        T = self._times(T, X.shape[0], "T")
        noise = self._check_point_noise(noise, X.shape[0])
        if kernel_matrix is not None and np.shape(kernel_matrix) != (X.shape[0],) * 2:
            raise ValueError(
                f"kernel_matrix must have shape {(X.shape[0],) * 2}, got {np.shape(kernel_matrix)}"
            )
        self.work.call()
        self._refactorize(X, T, y.copy(), self._hp, noise=noise, kernel_matrix=kernel_matrix)

    def set_hyperparameters(self, hp: Hyperparameters) -> None:
        """Switch hyperparameters; Delta changes, so refactorise (O(n^3), jitter reset to 0)."""
        self._check_hp(hp)
        self.work.call()
        self._refactorize(self._X, self._T, self._y, hp, noise=self._noise)

    def append(self, x: np.ndarray, t: float | None, y: float) -> None:
        """Add one observation with an O(n^2) Cholesky row update.

        The new row is ``l = L^{-1} k`` and the new pivot ``k(z,z) + noise + jitter - l.l``. If
        that pivot is numerically non-positive, fall back to a full refactorisation with jitter
        escalation (recorded in ``jitter_events``). With per-point noise in force, the new
        observation's noise is ``noise_var`` (:meth:`append_with_noise` gives its own).
        """
        self._append(x, t, y, None)

    def _append(self, x: np.ndarray, t: float | None, y: float, noise_var: float | None) -> None:
        x = self._points(np.asarray(x, dtype=float).reshape(1, -1), "x", any_d=self.d is None)
        tt = self._times(t, 1, "t")
        y = float(y)
        if not math.isfinite(y):
            raise ValueError(f"y must be finite, got {y!r}")
        if self.d is None:  # first observation of an empty GP fixes the input dimension
            self.d = int(x.shape[1])
            self._X = np.empty((0, self.d))
        self.work.call()
        n = self.n
        hp = self._hp
        k = self.kernel.matrix(self._X, self._T, x, tt, hp)[:, 0]
        self.work.kernel(n + 1)
        # k(z, z) = lambda because every correlation is 1 at distance 0 (or the kernel's own)
        own = hp.noise_var if noise_var is None else noise_var
        diag = self._prior_variance(x, tt, hp)
        if np.ndim(diag) > 0:
            diag = float(diag[0])
        diag = diag + own + self.jitter
        noise = self._noise
        if noise is not None or noise_var is not None:
            noise = np.append(np.full(n, hp.noise_var) if noise is None else noise, own)
        if n:
            row = self._trsolve(k, trans=0)
            pivot = diag - float(row @ row)
        else:
            row, pivot = np.empty(0), diag
        self.work.flops(flops_trisolve(n) + 2 * n)
        X = np.vstack([self._X, x])
        T = np.concatenate([self._T, tt])
        Y = np.append(self._y, y)
        if pivot > PIVOT_RTOL * self._scale:
            L = np.zeros((n + 1, n + 1), order="F")
            L[:n, :n] = self._L
            L[n, :n] = row
            L[n, n] = math.sqrt(pivot)
            self._X, self._T, self._y, self._L = X, T, Y, L
            self._noise = noise
            if self._m is not None:
                self._m = np.append(self._m, float(self.prior_mean(x)[0]))
            self._restandardize()
        else:
            self._refactorize(X, T, Y, hp, start_jitter=self.jitter, noise=noise)

    def remove(self, i: int) -> None:
        """Delete observation ``i`` (negative indices allowed) in O((n - i)^2).

        With ``L = [[L11, 0, 0], [l21, l22, 0], [L31, l32, L33]]``, deleting row/column i leaves
        ``[[L11, 0], [L31, L33']]`` where ``L33' L33'^T = L33 L33^T + l32 l32^T``: a rank-one
        update of the trailing block, which cannot fail (it only adds a PSD term).
        """
        n = self.n
        if not isinstance(i, int | np.integer) or not -n <= i < n:
            raise IndexError(f"observation index {i!r} out of range for a GP with n = {n}")
        i = int(i) % n
        self.work.call()
        L = self._L
        v = L[i + 1 :, i].copy()
        trailing = np.array(L[i + 1 :, i + 1 :], order="F", copy=True)
        cholesky_rank_one_update(trailing, v)
        self.work.flops(flops_rank_one(n - i - 1))
        self.work.steps(n - i - 1)  # the column sweep is a Python loop
        newL = np.zeros((n - 1, n - 1), order="F")
        newL[:i, :i] = L[:i, :i]
        newL[i:, :i] = L[i + 1 :, :i]
        newL[i:, i:] = trailing
        self._L = newL
        self._X = np.delete(self._X, i, axis=0)
        self._T = np.delete(self._T, i)
        self._y = np.delete(self._y, i)
        if self._noise is not None:
            self._noise = np.delete(self._noise, i)
        if self._m is not None:
            self._m = np.delete(self._m, i)
        self._restandardize()

    # -- inference ------------------------------------------------------------------------
    def _trsolve(self, B: np.ndarray, trans: int, *, overwrite: bool = False) -> np.ndarray:
        """``L^{-1} B`` (trans=0) or ``L^{-T} B`` (trans=1) via LAPACK dtrtrs (no wrapper cost).

        ``overwrite=True`` lets dtrtrs solve in B's own memory when B is a Fortran-ordered
        float64 array the caller no longer needs (the same dtrtrs call on the same numbers,
        without copying an (n, m) block first); otherwise B is left untouched.
        """
        n = self._L.shape[0]
        if n == 0:
            return np.asarray(B, dtype=float)
        out, info = tri_solve(self._L, B, trans, overwrite)
        if info != 0:
            raise np.linalg.LinAlgError(f"dtrtrs failed with info = {info} (n = {n})")
        return out

    def predict(
        self,
        X: np.ndarray,
        t: np.ndarray | float | None,
        *,
        grad: bool = False,
        include_noise: bool = False,
    ) -> Prediction:
        """Posterior mean and variance of f at (X, t) in original units; gradients w.r.t. x.

        ``var`` is clipped at 0 (rounding can make it slightly negative at data points).
        ``dvar = -2 (dk/dx)^T Delta^{-1} k`` because the prior variance is constant in x.
        With a prior mean: ``m(x)`` is added to the mean; before any data this is the prior.

        A scalar ``t`` (an acquisition at one time) goes to a kernel with ``scalar_time`` as
        it is, so the temporal correlation is computed once per observation rather than once
        per (query, observation) pair; the floats are the same either way (see
        :meth:`tvbo.gp.kernels.SeparableKernel.time_factor`).
        """
        if self._prior_mean is not None and grad:
            raise ValueError(
                "ExactGP.predict: grad=True is not available with a prior mean (a prior mean "
                "need not be differentiable); maximise over a finite candidate set instead"
            )
        if self.d is None and self._prior_mean is None:
            raise ValueError("the GP has no data yet, so its input dimension d is unknown")
        X = self._points(X, "X")
        m = X.shape[0]
        kernel = self.kernel
        scalar_time = getattr(kernel, "scalar_time", False)
        if not kernel.has_time:  # times are ignored: a scalar_time kernel takes None
            tt = None if scalar_time else np.zeros(m)
        elif scalar_time and (type(t) is float or (t is not None and np.ndim(t) == 0)):
            tt = float(t)
            if not math.isfinite(tt):
                raise ValueError("t contains non-finite values")
        else:
            tt = self._times(t, m, "t")
        return self._predict(X, tt, grad, include_noise)

    def _predict(
        self, X: np.ndarray, tt: np.ndarray | float | None, grad: bool, include_noise: bool
    ) -> Prediction:
        """:meth:`predict` on checked inputs: X (m, d) float; ``tt`` (m,) times, a scalar time
        for a ``scalar_time`` kernel, or None without a time kernel."""
        m, n, d = X.shape[0], self._L.shape[0], self.d
        hp = self._hp
        work = self.work
        work.call()
        s = self.y_std
        if d is None and not grad:  # a prior mean and no data yet: the prior
            Ks = np.zeros((m, 0))
        else:
            # a scalar time only reaches a scalar_time kernel (predict), which computes one
            # k_T row for all m queries. No row is kept between calls: a cache keyed on the
            # time saved 0.02% of a bolt_paper slice (cProfile: 5,961 of 19,671 rows reused,
            # ~32 us each, of 968 s), far under the 5% a fast form must earn, and it had to be
            # forgotten at every change of the times or hyperparameters
            if grad:
                Ks, G = self.kernel.matrix_and_grad_factor(X, tt, self._X, self._T, hp)
            else:
                Ks = self.kernel.matrix(X, tt, self._X, self._T, hp)
        work.kernel(m * n)
        mean_s = Ks @ self._alpha
        # a fresh Ks is not read again: dtrtrs may solve in its memory (Ks.T is F-ordered)
        V = self._trsolve(Ks.T, trans=0, overwrite=Ks.flags.owndata)  # L^{-1} k, (n, m)
        var_s = self._prior_variance(X, tt, hp) - np.einsum("ij,ij->j", V, V)
        work.flops(flops_matmul(m, n, 1) + flops_trisolve(n, m) + 2.0 * n * m)
        np.maximum(var_s, 0.0, out=var_s)
        if include_noise:
            var_s = var_s + hp.noise_var
        dmean = dvar = None
        if grad:
            # dk_j/dx = G_j (x - x_j): contract with weights w without forming (m, n, d)
            if self._noise is None:  # (per-point noise: K and G counted as one kernel pass)
                work.kernel(m * n)
            W = self._trsolve(V, trans=1, overwrite=True)  # Delta^{-1} k, (n, m)
            Ga = G * self._alpha
            dmean = (X * Ga.sum(axis=1)[:, None] - Ga @ self._X) * s
            GW = np.multiply(G, W.T, out=G)  # G is not read again
            dvar = -2.0 * (X * GW.sum(axis=1)[:, None] - GW @ self._X) * (s * s)
            work.flops(flops_trisolve(n, m) + 2 * flops_matmul(m, n, d) + 4.0 * m * n)
        mean = mean_s * s + self.y_mean
        if self._prior_mean is not None:
            mean = mean + self.prior_mean(X)
        if self._noise is not None:  # per-point noise: see the block below
            return Prediction(mean=mean, var=var_s * s * s, dmean=dmean, dvar=dvar)
        return Prediction(mean=mean, var=var_s * (s * s), dmean=dmean, dvar=dvar)

    def log_marginal_likelihood(self) -> float:
        """``log N(y_std | 0, Delta)`` under the current hyperparameters (and jitter)."""
        n = self.n
        self.work.call()
        self.work.flops(4.0 * n)
        logdet = 2.0 * float(np.sum(np.log(np.diag(self._L)))) if n else 0.0
        return -0.5 * float(self._ys @ self._alpha) - 0.5 * logdet - 0.5 * n * _LOG_2PI

    def precision_matrix(self) -> np.ndarray:
        """``Delta^{-1} = (K + (noise + jitter) I)^{-1}`` in standardised units (dpotri, ~n^3)."""
        n = self.n
        self.work.call()
        self.work.flops(flops_inverse(n))
        if n == 0:
            return np.empty((0, 0))
        inv, info = cho_inverse(self._L)
        if info != 0:
            raise np.linalg.LinAlgError(f"dpotri failed with info = {info} for n = {n}")
        lower = np.tril(inv)
        return lower + np.tril(inv, -1).T

    def alpha(self) -> np.ndarray:
        """``Delta^{-1} y_std`` (a copy), the weights of the posterior mean."""
        return self._alpha.copy()

    # -- per-point noise (tvbo.models.HasPointNoise) -------------------------------------------
    # Observations may carry their own noise variance: SparQ-GP-UCB's aged observations and
    # expert answers, W-GP-UCB's weighted observations (noise lambda / w_i). The factor is then
    # that of ``K + diag(noise) + jitter I``; append/remove stay O(n^2) (the new pivot uses the
    # new point's own noise; a removal's rank-one update does not involve the noise at all).
    # Units: standardised, like ``noise_var``. Without per-point noise (``_noise is None``) every
    # operation is exactly the homoscedastic arithmetic above. Two choices keep results of the
    # former SparQ posterior bit-identical and are documented here: with per-point noise,
    # ``predict`` scales the variance as ``var_s * s * s`` and counts K and its gradient factor
    # G as one kernel pass (one call computes both); jitter and the pivot tolerance stay relative
    # to ``signal_var + noise_var`` (the per-point noises never make a pivot smaller than the
    # smallest of them, so this scale only matters for a degenerate factor). Hyperparameter fits
    # (tvbo.gp.fit) treat the noise as homoscedastic: fit on a GP without per-point noise.

    #: per-observation noise variances (standardised units), or None: ``noise_var`` for all
    _noise: np.ndarray | None = None

    @property
    def point_noise(self) -> np.ndarray:
        """(n,) noise variance of every observation (standardised units), a read-only copy."""
        if self._noise is None:
            return _readonly(np.full(self.n, self._hp.noise_var))
        return _readonly(self._noise.copy())

    @property
    def has_point_noise(self) -> bool:
        """True when observations carry their own noise (set_data/append_with_noise)."""
        return self._noise is not None

    def _check_point_noise(self, noise: np.ndarray | None, n: int) -> np.ndarray | None:
        if noise is None:
            return None
        noise = np.array(noise, dtype=float).reshape(-1)
        if noise.shape[0] != n:
            raise ValueError(f"noise must have one variance per observation ({n}), "
                             f"got {noise.shape[0]}")
        if not np.all(np.isfinite(noise)) or np.any(noise <= 0):
            raise ValueError("noise (per-point variances) must be finite and > 0")
        return noise

    def append_with_noise(self, x: np.ndarray, t: float | None, y: float,
                          noise_var: float) -> None:
        """:meth:`append` an observation with its own noise variance (standardised units)."""
        noise_var = float(noise_var)
        if not (math.isfinite(noise_var) and noise_var > 0):
            raise ValueError(f"noise_var must be a finite number > 0, got {noise_var!r}")
        self._append(x, t, y, noise_var)

    def set_point_noise(self, noise: np.ndarray | None) -> None:
        """Give every held observation a new noise variance (None: back to ``noise_var``);
        Delta changes on its diagonal, so refactorise (O(n^3))."""
        noise = self._check_point_noise(noise, self.n)
        self.work.call()
        self._refactorize(self._X, self._T, self._y, self._hp, noise=noise)

    def set_standardization(self, mean: float, std: float) -> None:
        """Standardise y by the given ``(y - mean) / std`` from now on (frozen; SparQ-GP-UCB
        standardises by its fit set, not by the data it conditions on). Call before set_data."""
        mean, std = float(mean), float(std)
        if not (math.isfinite(mean) and math.isfinite(std) and std > 0):
            raise ValueError(f"standardisation needs a finite mean and std > 0, got {mean!r}, "
                             f"{std!r}")
        self.standardize = True
        self.frozen_standardization = True
        self.y_mean, self.y_std = mean, std
        if self.n:
            self._restandardize()

    def information_gain(self) -> float:
        """``1/2 log det(Sigma + K) - 1/2 log det(Sigma)`` with Sigma = diag(point noise).

        The log term of SparQ-GP-UCB's beta (Theorem 3.1), read off the factor's diagonal in
        O(n) (not charged as work, like :meth:`alpha`); standardised units; 0 without data.
        """
        if self.n == 0:
            return 0.0
        return float(np.sum(np.log(np.diag(self._L))) - 0.5 * np.sum(np.log(self.point_noise)))

    def prior_covariance(self, X: np.ndarray, T: np.ndarray | float | None = None) -> np.ndarray:
        """Prior covariance matrix ``k((X, T), (X, T))`` under the current hyperparameters
        (standardised units), charged as ``len(X)^2`` kernel entries (e.g. a DPP's kernel)."""
        X = self._points(X, "X", any_d=True)
        T = self._times(T, X.shape[0], "T")
        K = self.kernel.matrix(X, T, X, T, self._hp)
        self.work.kernel(X.shape[0] ** 2)
        return K
    # -- capability HasSpaceTimeGradient (ABO's look-ahead; body: joint_posterior below) -----
    def predict_space_time(
        self, X: np.ndarray, T: np.ndarray, *, grad: bool = False, include_noise: bool = False
    ) -> Prediction:
        """Posterior at the points ``(X[i], T[i])`` with gradients in (x, t): d + 1 columns."""
        if self._prior_mean is not None:
            raise ValueError("predict_space_time: not available with a prior mean")
        return joint_posterior(self, X, T, grad=grad, include_noise=include_noise)


# -- the posterior at space-time points, with gradients in x AND t ------------------------------
# ABO (Nyikosa et al. 2018) optimises its acquisition jointly over the configuration x and the
# future sampling time t, so it needs d/dt of the posterior as well as d/dx; predict gives d/dx
# only. This is the same posterior (same Cholesky factor, same weights alpha), with the time
# derivative of the separable kernel added; ExactGP.predict_space_time exposes it as the model
# capability tvbo.models.protocol.HasSpaceTimeGradient. It assumes the zero prior mean of the
# standardised GP (what ABO uses).
def joint_posterior(
    gp: ExactGP,
    X: np.ndarray,
    T: np.ndarray,
    *,
    grad: bool = False,
    include_noise: bool = False,
    work: WorkCounter | None = None,
) -> Prediction:
    """Posterior of f at the points ``(X[i], T[i])`` with gradients w.r.t. ``(x, t)``.

    ``dmean`` and ``dvar`` have ``d + 1`` columns: d spatial, then time. For the separable kernel
    ``k = lambda k_S(|x - x_j| / l_S) k_T(|t - t_j| / l_T)``:

    * ``d k / d x = lambda k_T k_S'(r_S) / (r_S l_S^2) (x - x_j)`` (finite at r_S = 0);
    * ``d k / d t = lambda k_S k_T'(r_T) sign(t - t_j) / l_T``;

    then ``d mu = (d k)^T alpha`` and ``d var = -2 (d k)^T Delta^{-1} k`` (the prior variance is
    constant). Matérn-1/2 in time has a cusp at ``t = t_j``; ``sign(0) = 0`` picks the zero
    subgradient there. Everything is in the GP's standardised units and converted back.
    """
    if not gp.kernel.has_time:
        raise ValueError("joint_posterior needs a spatio-temporal GP (kernel without time)")
    if gp.n == 0:
        raise ValueError("joint_posterior needs at least one observation")
    work = work if work is not None else gp.work
    X = np.asarray(X, float)
    T = np.asarray(T, float).reshape(-1)
    if X.ndim != 2 or X.shape[1] != gp.d or T.shape[0] != X.shape[0]:
        raise ValueError(f"X must be (m, {gp.d}) and T (m,), got {X.shape} and {T.shape}")
    hp = gp.hyperparameters
    ls, lt, sv = hp.lengthscale_space, hp.lengthscale_time, hp.signal_var
    m, n, d = X.shape[0], gp.n, gp.d
    work.call()
    work.kernel(m * n)
    rs = cdist(X, gp.X) / ls
    lag = T[:, None] - gp.T[None, :]
    rt = np.abs(lag) / lt
    cs = gp.kernel.space.value(rs)
    ct, dct = gp.kernel.time.value_and_d_dr(rt)
    K = sv * cs * ct
    L = gp.cholesky
    mean_s = K @ gp.alpha()
    V = _solve(L, K.T, 0)
    var_s = np.maximum(sv - np.einsum("ij,ij->j", V, V), 0.0)
    work.flops(flops_matmul(m, n, 1) + flops_trisolve(n, m) + 2.0 * n * m)
    if include_noise:
        var_s = var_s + hp.noise_var
    s = gp.y_std
    dmean = dvar = None
    if grad:
        W = _solve(L, V, 1).T  # (m, n)
        alpha = gp.alpha()
        G = sv * ct * gp.kernel.space.d_dr_over_r(rs) / (ls * ls)  # dk/dx = G (x - x_j)
        Kt = sv * cs * dct * np.sign(lag) / lt  # dk/dt
        Ga, GW = G * alpha, G * W
        dmean = np.empty((m, d + 1))
        dvar = np.empty((m, d + 1))
        dmean[:, :d] = X * Ga.sum(axis=1)[:, None] - Ga @ gp.X
        dvar[:, :d] = -2.0 * (X * GW.sum(axis=1)[:, None] - GW @ gp.X)
        dmean[:, d] = Kt @ alpha
        dvar[:, d] = -2.0 * np.einsum("ij,ij->i", Kt, W)
        dmean *= s
        dvar *= s * s
        work.kernel(2 * m * n)
        work.flops(flops_trisolve(n, m) + 2 * flops_matmul(m, n, d) + 10.0 * m * n)
    return Prediction(mean=mean_s * s + gp.y_mean, var=var_s * (s * s), dmean=dmean, dvar=dvar)


def _solve(L: np.ndarray, B: np.ndarray, trans: int) -> np.ndarray:
    """``L^{-1} B`` (trans 0) or ``L^{-T} B`` (trans 1); B is left untouched."""
    out, info = tri_solve(L, B, trans)
    if info != 0:
        raise np.linalg.LinAlgError(f"dtrtrs failed with info = {info} (n = {L.shape[0]})")
    return out
