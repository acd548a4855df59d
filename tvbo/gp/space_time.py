"""The exact GP's posterior at space-time points, with gradients in x AND t.

ABO (Nyikosa et al. 2018) optimises its acquisition jointly over the configuration x and the
future sampling time t, so it needs d/dt of the posterior as well as d/dx; the exact GP's
``predict`` gives d/dx only. This is the same posterior (same Cholesky factor, same weights
``alpha``), with the time derivative of the separable kernel added;
:meth:`ExactGP.predict_space_time` exposes it as the model capability
:class:`tvbo.models.protocol.HasSpaceTimeGradient`.
It assumes the zero prior mean of the standardised GP (what ABO uses).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.spatial.distance import cdist

from tvbo.gp.linalg import flops_matmul, flops_trisolve, tri_solve
from tvbo.gp.prediction import Prediction
from tvbo.work import WorkCounter

if TYPE_CHECKING:  # exact.py imports this module for ExactGP.predict_space_time
    from tvbo.gp.exact import ExactGP

__all__ = ["joint_posterior"]


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
