"""KR-UCB's two acquisitions (Yee et al. 2016; the BOKE paper's App. A.2, Alg. 5).

Over any model with the :class:`~tvbo.models.protocol.HasKernelDensity` capability:

* the arm index (A.4): ``m(x_i) + C s_y sqrt(log(sum_j W(x_j)) / W(x_i))`` at every held
  observation (O(n^2)); ``C`` is in units of ``s_y = std(y)`` (like BOKE's noise scale), since
  the paper gives no value (spec §2.13);
* progressive widening (A.5): the point of lowest density W within ``k(x, x~) > tau`` of the
  arm x~. For isotropic kernels the constraint is a ball of radius rho (:func:`widening_radius`);
  the constrained argmin is solved by screening ``n_candidates`` uniform points of the ball,
  clipped to the box (a projection that keeps them in the ball) -- the paper does not say how.

Whether to re-sample or widen is the algorithm's policy (``tvbo.algorithms.boke``).
"""

from __future__ import annotations

import numpy as np

from tvbo.acquisition.ikr_ucb import y_scale
from tvbo.models.protocol import HasKernelDensity

__all__ = ["kr_ucb_arm_scores", "widen", "widening_radius"]


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
