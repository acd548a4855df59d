"""W-GP-UCB's weighted GP (Deng et al., AISTATS 2022): the exact GP with per-point noise lambda/w_i.

Weighted kernel ridge regression with weights ``w_s`` and regulariser ``lambda`` (spec_baselines.md
§6.1-6.2: ``V = Phi^T W Phi + lambda I``, ``V~ = Phi^T W^2 Phi + lambda I``) is, in kernel form
with ``A = K + lambda W^{-1}``:

* ``a(x) = A^{-1} k(x)`` and ``mu(x) = a(x)^T y``: the posterior mean of the exact GP whose
  observation s has its own noise variance ``lambda / w_s`` -- so the factor, ``alpha`` and the
  standardisation are :class:`tvbo.gp.exact.ExactGP`'s with per-point noise, nothing else;
* the paper's squared confidence width ``||phi(x)||_{V^{-1} V~ V^{-1}}``,
  ``sigma~^2(x) = (1/lambda) [k(x,x) - k^T a] + a^T (I - W^{-1}) a``. Times lambda it is the
  mean squared error of that mean as an estimator of f when the observations' TRUE noise is the
  homoscedastic lambda: ``k(x,x) - 2 a^T k + a^T (K + lambda I) a`` (use ``K a = k - lambda
  W^{-1} a``). This is the one thing the weighted model adds to the exact GP.

The weights change at every step (all old weights shrink by gamma), so the GP is refactorised
once per data change (:meth:`WeightedGP.condition`, one O(n^3) Cholesky; no rank-one shortcut
exists) from a prior covariance matrix that this model borders on append (n + 1 kernel entries)
and trims on removal, so K is evaluated in full only when the hyperparameters change. Weights and
lambda are the caller's policy (W-GP-UCB's discounting, :mod:`tvbo.algorithms.weighted.parts`); work
is counted here, on ``work``, with the textbook counts of :mod:`tvbo.work`.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from scipy.linalg import cho_solve

from tvbo.gp.exact import ExactGP, Prediction
from tvbo.gp.kernels import Hyperparameters, SeparableKernel
from tvbo.gp.linalg import flops_matmul, flops_trisolve
from tvbo.work import WorkCounter

__all__ = ["WeightedGP"]


class WeightedGP:
    """A :class:`tvbo.models.Model`: data in (append, remove, replace), then :meth:`condition` on
    weights and lambda, then the weighted posterior out (:meth:`predict`).

    ``predict`` returns the mean and ``var = lambda sigma~^2`` (plus lambda, the noise of a
    weight-1 observation, with ``include_noise``) in output units, with x-gradients; at w = 1 it
    is exactly the GP posterior with noise lambda. The kernel must be spatial: time enters only
    through the weights.
    """

    def __init__(
        self,
        kernel: SeparableKernel,
        hyperparameters: Hyperparameters,
        *,
        standardize: bool = True,
        work: WorkCounter | None = None,
    ) -> None:
        if kernel.has_time:
            raise ValueError("the weighted GP's kernel is spatial: the weights carry the time")
        self.kernel = kernel
        self._hp = hyperparameters
        self.standardize = bool(standardize)
        self.work: WorkCounter = work if work is not None else WorkCounter()
        self._X = np.empty((0, 0))
        self._T = np.empty(0)
        self._y = np.empty(0)
        self._K: np.ndarray | None = np.empty((0, 0))
        self._gp: ExactGP | None = None
        self._lam = math.nan
        self._weights = np.empty(0)
        self._D = np.empty(0)

    # -- the model protocol: data ------------------------------------------------------------
    @property
    def n(self) -> int:
        return int(self._y.shape[0])

    @property
    def X(self) -> np.ndarray:
        return self._X

    @property
    def T(self) -> np.ndarray:
        return self._T

    @property
    def y(self) -> np.ndarray:
        return self._y

    @property
    def hyperparameters(self) -> Hyperparameters:
        return self._hp

    def set_hyperparameters(self, hp: Hyperparameters) -> None:
        """New kernel hyperparameters: K is recomputed (in full) at the next :meth:`condition`."""
        if hp != self._hp:
            self._hp = hp
            self._K = None
            self._gp = None

    def set_data(self, X: np.ndarray, T: np.ndarray | None, y: np.ndarray) -> None:
        """Replace every observation (empty arrays: a reset)."""
        X = np.asarray(X, float)
        y = np.asarray(y, float).reshape(-1)
        if X.ndim != 2 or X.shape[0] != y.shape[0]:
            raise ValueError(f"X must be (n, d) with n = len(y) = {y.shape[0]}, got {X.shape}")
        self._X = X.copy()
        self._T = np.zeros(len(y)) if T is None else np.asarray(T, float).reshape(-1).copy()
        self._y = y.copy()
        self._K = np.empty((0, 0)) if len(y) == 0 else None
        self._gp = None

    def append(self, x: np.ndarray, t: float | None, y: float) -> None:
        """One more observation; the cached K is bordered (n + 1 kernel entries)."""
        x = np.asarray(x, float).reshape(1, -1)
        if self._K is not None:
            n = self.n
            k = self.kernel.matrix(self._X, None, x, None, self._hp)[:, 0] if n else np.empty(0)
            kxx = self._hp.signal_var
            self._K = np.block([[self._K, k[:, None]], [k[None, :], np.array([[kxx]])]])
            self.work.kernel(n + 1)
        self._X = np.vstack([self._X, x]) if self._X.size else x.copy()
        self._T = np.append(self._T, 0.0 if t is None else float(t))
        self._y = np.append(self._y, float(y))
        self._gp = None

    def remove(self, i: int) -> None:
        """Forget observation ``i`` (negative indices allowed)."""
        n = self.n
        if not isinstance(i, int | np.integer) or not -n <= i < n:
            raise IndexError(f"observation index {i!r} out of range for n = {n}")
        i = int(i) % n
        self._X = np.delete(self._X, i, axis=0)
        self._T = np.delete(self._T, i)
        self._y = np.delete(self._y, i)
        if self._K is not None:
            self._K = np.delete(np.delete(self._K, i, axis=0), i, axis=1)
        self._gp = None

    # -- weighting ---------------------------------------------------------------------------
    @property
    def conditioned(self) -> bool:
        """True while the factor matches the data (no append/remove/new hyperparameters since)."""
        return self._gp is not None

    @property
    def regularizer(self) -> float:
        """lambda of the last :meth:`condition` (standardised units)."""
        return self._lam

    @property
    def weights(self) -> np.ndarray:
        """The weights of the last :meth:`condition`."""
        return self._weights

    @property
    def gp(self) -> ExactGP | None:
        """The exact GP with per-point noise lambda / w_i (None until conditioned)."""
        return self._gp

    def condition(
        self,
        weights: np.ndarray,
        regularizer: float,
        *,
        standardization: tuple[float, float] | None = None,
    ) -> None:
        """Factorise ``A = K + lambda W^{-1}``: the exact GP with per-point noise lambda / w_s.

        ``weights`` in (0, 1], one per observation; ``regularizer`` lambda > 0 (standardised
        units; it is also the GP's ``noise_var``, so jitter is relative to signal_var + lambda).
        ``standardization`` fixes ``(mean, std)`` of y (pending-point fantasies keep the real
        data's); by default y is standardised over the held data, unweighted.
        """
        if not (math.isfinite(regularizer) and regularizer > 0):
            raise ValueError(f"regularizer (lambda) must be a finite number > 0, got {regularizer}")
        w = np.asarray(weights, float).reshape(-1)
        if np.any(~np.isfinite(w)) or np.any(w <= 0) or np.any(w > 1):
            raise ValueError("weights must lie in (0, 1] (relative discount weights)")
        n = self.n
        if w.shape[0] != n:
            raise ValueError(f"weights ({w.shape[0]}) must have one entry per observation ({n})")
        if self._K is None:
            self._K = self.kernel.matrix(self._X, None, self._X, None, self._hp)
            self.work.kernel(n * n)
        lam = float(regularizer)
        inv_w = 1.0 / w
        gp = ExactGP(
            self.kernel,
            replace(self._hp, noise_var=lam),
            standardize=self.standardize,
            work=self.work,
        )
        if standardization is not None:
            gp.set_standardization(*standardization)
        gp.set_data(self._X, None, self._y, noise=lam * inv_w, kernel_matrix=self._K)
        self._gp, self._lam, self._weights = gp, lam, w
        self._D = 1.0 - inv_w  # <= 0: old data widens the band less than the heteroscedastic GP

    # -- the weighted posterior --------------------------------------------------------------
    def width(
        self, X: np.ndarray, *, grad: bool = False
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
        """``(mu, sigma~^2, d mu/dx, d sigma~^2/dx)`` at the rows of X (standardised units).

        ``d mu = (dk)^T A^{-1} y`` and ``d sigma~^2 = -(2/lambda) (dk)^T [a - lambda A^{-1} D a]``
        with ``D = I - W^{-1}`` (the prior variance is constant for a stationary kernel).
        """
        gp = self._gp
        if gp is None:
            raise ValueError("the weighted GP is not conditioned: call condition(weights, lambda)")
        Xq = np.asarray(X, float)
        m, n, d = Xq.shape[0], self.n, Xq.shape[1]
        lam = self._lam
        prior_var = float(self._hp.signal_var)
        self.work.call()
        if n == 0:
            zeros = np.zeros((m, d)) if grad else None
            return np.zeros(m), np.full(m, prior_var / lam), zeros, zeros
        L, alpha = gp.cholesky, gp.alpha()
        Kq = self.kernel.matrix(Xq, None, self._X, None, self._hp)  # (m, n)
        self.work.kernel(m * n)
        mean = Kq @ alpha
        a = cho_solve((L, True), Kq.T, check_finite=False)  # (n, m): a(x) columns
        Da = self._D[:, None] * a
        width2 = (prior_var - np.einsum("ij,ji->i", Kq, a)) / lam + np.einsum("ji,ji->i", a, Da)
        width2 = np.maximum(width2, 0.0)
        self.work.flops(flops_matmul(m, n, 1) + 2 * flops_trisolve(n, m) + 5.0 * n * m)
        if not grad:
            return mean, width2, None, None
        dK = self.kernel.grad_x(Xq, None, self._X, None, self._hp)  # (m, n, d)
        self.work.kernel(m * n)
        B = a - lam * cho_solve((L, True), Da, check_finite=False)  # (n, m)
        dmean = np.einsum("ijk,j->ik", dK, alpha)
        dwidth2 = -(2.0 / lam) * np.einsum("ijk,ji->ik", dK, B)
        self.work.flops(2 * flops_trisolve(n, m) + 2 * flops_matmul(m, n, d) + 2.0 * n * m)
        return mean, width2, dmean, dwidth2

    def predict(
        self,
        X: np.ndarray,
        t: np.ndarray | float | None = None,
        *,
        grad: bool = False,
        include_noise: bool = False,
    ) -> Prediction:
        """Weighted posterior at X in output units (t is ignored: time is in the weights)."""
        mean, width2, dmean, dwidth2 = self.width(X, grad=grad)
        gp = self._gp
        y_mean, s = gp.y_mean, gp.y_std
        lam = self._lam
        var = lam * width2 + (lam if include_noise else 0.0)
        return Prediction(
            mean=mean * s + y_mean,
            var=var * s * s,
            dmean=None if dmean is None else dmean * s,
            dvar=None if dwidth2 is None else lam * dwidth2 * s * s,
        )
