"""KR-UCB's two acquisitions (Yee et al. 2016; the BOKE paper's App. A.2, Alg. 5).

Over any model with the :class:`~tvbo.models.protocol.HasKernelDensity` capability:

* the arm index (A.4): ``m(x_i) + C s_y sqrt(log(sum_j W(x_j)) / W(x_i))`` at every held
  observation (O(n^2)); ``C`` is in units of ``s_y = std(y)`` (like BOKE's noise scale), since
  the paper gives no value (spec §2.13);
* progressive widening (A.5): the point of lowest density W within ``k(x, x~) > tau`` of the
  arm x~. For isotropic kernels the constraint is a ball of radius rho (:func:`widening_radius`);
  the constrained argmin is solved by screening ``n_candidates`` uniform points of the ball,
  clipped to the box (a projection that keeps them in the ball) -- the paper does not say how.
  On a finite candidate set (a discrete benchmark) the constrained argmin is exact: the
  lowest-density candidate of the ball other than the arm (:func:`widen_on_candidates`).

Whether to re-sample or widen is the algorithm's policy (``tvbo.algorithms.boke.parts``).
"""

from __future__ import annotations

import numpy as np

from tvbo.acquisition import finite
from tvbo.algorithms.boke.ikr_ucb import y_scale
from tvbo.models.protocol import HasKernelDensity

__all__ = ["kr_ucb_arm_scores", "widen", "widen_on_candidates", "widening_radius"]


def kr_ucb_arm_scores(model: HasKernelDensity, C: float) -> np.ndarray:
    """(A.4) at every held observation of ``model``."""
    r = model.regression(model.X)
    W = np.exp(r.log_w)
    total = max(float(W.sum()), 1.0 + 1e-12)
    return r.mean + C * y_scale(model.y) * np.sqrt(np.log(total) / W)


def widening_radius(kernel: str, h: float, tau: float) -> float:
    """rho such that k(x, x~; h) > tau  <=>  |x - x~| < rho (gaussian, epanechnikov, uniform)."""
    if kernel == "gaussian":
        return h * float(np.sqrt(-2.0 * np.log(tau)))
    if kernel == "epanechnikov":
        return h * float(np.sqrt(1.0 - tau))
    if kernel == "uniform":
        return h
    raise ValueError(f"unknown kernel {kernel!r}; valid kernels: gaussian, epanechnikov, uniform")


def widen(
    model: HasKernelDensity,
    arm: np.ndarray,
    rho: float,
    rng: np.random.Generator,
    n_candidates: int,
) -> np.ndarray:
    """(A.5): the lowest-density of ``n_candidates`` uniform points of the ball (arm, rho)."""
    d = int(np.asarray(arm).shape[0])
    u = rng.standard_normal((n_candidates, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    r = rho * rng.random(n_candidates) ** (1.0 / d)
    cand = np.clip(arm + u * r[:, None], 0.0, 1.0)
    return cand[int(np.argmin(model.regression(cand).log_w))].copy()


def widen_on_candidates(
    model: HasKernelDensity,
    arm: np.ndarray,
    rho: float,
    candidates: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """(A.5) on a finite set: the lowest-density candidate with ``0 < |x - arm| < rho``.

    Widening adds a new arm (as the continuous search does almost surely), so the arm itself is
    excluded. Choice (the paper has no finite case): if the ball holds no other candidate (rho
    below the grid spacing), the pool is the candidates nearest to the arm. Ties of W go to the
    lowest index (:func:`tvbo.acquisition.finite.argmax`, rule ``"first"``: ``rng`` unused).
    A single candidate is returned as is.
    """
    C = np.asarray(candidates, float)
    if C.ndim != 2 or len(C) == 0:
        raise ValueError(f"candidates must be a non-empty (m, d) array, got shape {C.shape}")
    dist = np.linalg.norm(C - np.asarray(arm, float).reshape(1, -1), axis=1)
    others = dist > 0.0
    if not others.any():
        return C[0].copy()
    pool = np.flatnonzero(others & (dist < rho))
    if pool.size == 0:
        nearest = float(dist[others].min())
        pool = np.flatnonzero(others & (dist <= nearest * (1.0 + finite.TIE_RTOL)))
    log_w = model.regression(C[pool]).log_w
    return C[pool[finite.argmax(-np.asarray(log_w, float), "first", rng)]].copy()
