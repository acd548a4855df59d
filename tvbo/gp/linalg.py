"""Dense linear algebra of the exact GP: one LAPACK calling convention, the jittered Cholesky,
the rank-one update and the textbook flop counts every routine reports.

Why one module: the exact GP and its space-time posterior (:mod:`tvbo.gp.exact`) and the
hyperparameter fit's objective (:mod:`tvbo.gp.lml`) all factorise, solve with and invert the
same lower Cholesky factors. Each LAPACK routine is called here and
only here, through one small function per routine with the same signature shape: the matrix
arguments, then what the caller lets LAPACK overwrite, returning ``(result, info)`` exactly as
LAPACK reports it (no checks or copies added, so the hot loop of a fit pays one Python frame).

The routines are scipy's f2py wrappers called with positional flags (``lower=1`` always): the
same LAPACK calls as the keyword form, without f2py's keyword parsing (~0.4 us per call, 3 per
LML evaluation of a fit). Factors are always lower (``L L^T = A``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg.lapack import dpotrf, dpotri, dpotrs, dtrtrs

from tvbo.work import WorkCounter

__all__ = [
    "JITTER_CAP",
    "JITTER_START",
    "PIVOT_RTOL",
    "JitterError",
    "cho_factor",
    "cho_inverse",
    "cho_solve",
    "cholesky_rank_one_update",
    "cholesky_with_jitter",
    "flops_cholesky",
    "flops_inverse",
    "flops_matmul",
    "flops_rank_one",
    "flops_trisolve",
    "tri_solve",
]

#: First jitter, relative to ``signal_var + noise_var``; multiplied by 10 at each escalation.
JITTER_START = 1e-10
#: Largest jitter tried, relative to ``signal_var + noise_var``; beyond it factorisation fails.
JITTER_CAP = 1e-2
#: A pivot ``L_ii^2`` below this (relative to ``signal_var + noise_var``) counts as a failed
#: factorisation even if LAPACK accepted it: such a factor is dominated by rounding error.
#: It sits two decades below :data:`JITTER_START` so the first jitter always suffices for it.
PIVOT_RTOL = 1e-12


# -- textbook flop counts (tvbo/work.py) ----------------------------------------------------
def flops_cholesky(n: int) -> float:
    return n**3 / 3.0


def flops_trisolve(n: int, nrhs: int = 1) -> float:
    return float(n * n * nrhs)


def flops_matmul(a: int, b: int, c: int) -> float:
    return 2.0 * a * b * c


def flops_rank_one(n: int) -> float:
    return 2.0 * n * n


def flops_inverse(n: int) -> float:
    return float(n**3)


# -- the LAPACK calls -------------------------------------------------------------------------
def cho_factor(A: np.ndarray, overwrite: bool = False) -> tuple[np.ndarray, int]:
    """``(L, info)``: lower Cholesky factor of ``A`` (dpotrf, upper triangle zeroed).

    ``overwrite=True`` lets LAPACK factorise in ``A``'s own memory when ``A`` is a
    Fortran-ordered float64 array (then ``L is A``); otherwise ``A`` is left untouched.
    ``info > 0``: the leading minor of that order is not positive definite.
    """
    return dpotrf(A, 1, 1, overwrite)


def cho_solve(L: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, int]:
    """``(x, info)`` with ``L L^T x = b`` (dpotrs; ``b`` is not modified)."""
    return dpotrs(L, b, 1, 0)


def cho_inverse(L: np.ndarray, overwrite: bool = False) -> tuple[np.ndarray, int]:
    """``(P, info)``: the lower triangle of ``(L L^T)^{-1}`` (dpotri); the strict upper
    triangle is whatever ``L`` held there (zero for a factor of :func:`cho_factor`).
    ``overwrite=True`` inverts in ``L``'s memory (Fortran-ordered float64 ``L`` only)."""
    return dpotri(L, 1, overwrite)


def tri_solve(L: np.ndarray, B: np.ndarray, trans: int, overwrite: bool = False
              ) -> tuple[np.ndarray, int]:
    """``(X, info)``: ``L^{-1} B`` (``trans=0``) or ``L^{-T} B`` (``trans=1``) (dtrtrs).

    ``overwrite=True`` lets LAPACK solve in ``B``'s memory when ``B`` is a Fortran-ordered
    float64 array the caller no longer needs; otherwise ``B`` is left untouched.
    """
    return dtrtrs(L, B, 1, trans, 0, L.shape[0], overwrite)


# -- factorisations -----------------------------------------------------------------------------
class JitterError(np.linalg.LinAlgError):
    """Factorisation failed even at the capped jitter; ``escalations`` were tried first."""

    def __init__(self, message: str, escalations: int) -> None:
        super().__init__(message)
        self.escalations = escalations


def pivots_ok(L_diag: np.ndarray, scale: float) -> bool:
    """The smallest pivot ``L_ii^2`` exceeds :data:`PIVOT_RTOL` ``* scale`` (true for n = 0)."""
    return L_diag.shape[0] == 0 or float(np.minimum.reduce(L_diag)) ** 2 > PIVOT_RTOL * scale


def cholesky_with_jitter(
    A: np.ndarray, scale: float, work: WorkCounter, *, start_jitter: float = 0.0
) -> tuple[np.ndarray, float, int]:
    """Lower Cholesky factor of ``A + jitter I`` with the smallest jitter that succeeds.

    Starts at ``start_jitter`` (0 for a fresh factorisation); on failure the jitter becomes
    ``JITTER_START * scale`` and is multiplied by 10 until the factorisation succeeds. Returns
    ``(L, jitter, escalations)``; raises :class:`JitterError` (a ``LinAlgError``) once the jitter
    would exceed ``JITTER_CAP * scale``. Every attempt is charged ``n^3/3`` flops.
    """
    n = A.shape[0]
    jitter = float(start_jitter)
    if not (math.isfinite(jitter) and jitter >= 0.0):
        raise ValueError(f"start_jitter must be a finite number >= 0, got {start_jitter!r}")
    escalations = 0
    cap = JITTER_CAP * scale * (1.0 + 1e-9)
    while True:
        M = A if jitter == 0.0 else A + jitter * np.eye(n)
        L, info = cho_factor(M)
        work.flops(flops_cholesky(n))
        if info == 0 and pivots_ok(np.diag(L), scale):
            return L, jitter, escalations
        jitter = JITTER_START * scale if jitter == 0.0 else jitter * 10.0
        if jitter > cap:
            raise JitterError(
                f"Cholesky factorisation of a {n}x{n} covariance failed even with jitter "
                f"{jitter / 10.0:.3g} (= {JITTER_CAP:g} x (signal_var + noise_var)); "
                "the hyperparameters or the data (duplicates with zero noise?) are degenerate",
                escalations,
            )
        escalations += 1


def cholesky_rank_one_update(L: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Lower factor of ``L L^T + v v^T`` (``L`` is modified in place and returned).

    The classic Givens-style column sweep: 2 m^2 flops. It loops over the m columns with
    vectorised column operations; a loop-free product form was measured to be slower beyond
    m ~ 250 because ``np.cumsum`` over matrices is not vectorised.
    """
    v = np.array(v, dtype=float)
    m = v.shape[0]
    for k in range(m):
        lkk = L[k, k]
        r = math.hypot(lkk, v[k])
        c = r / lkk
        s = v[k] / lkk
        L[k, k] = r
        if k + 1 < m:
            col = L[k + 1 :, k]
            col += s * v[k + 1 :]
            col /= c
            tail = v[k + 1 :]
            tail *= c
            tail -= s * col
    return L
