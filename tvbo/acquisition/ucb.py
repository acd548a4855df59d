"""GP-UCB at a fixed time: ``alpha(x) = mu(x, t) + sqrt(beta) * sigma(x, t)``."""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

#: variance floor under the square root: keeps the gradient finite at observed points
_VAR_FLOOR = 1e-12


class _Predictor(Protocol):
    def predict(self, X, t, *, grad: bool = False, include_noise: bool = False): ...


def ucb(
    gp: _Predictor,
    X: np.ndarray,
    t: float,
    beta: float,
    *,
    grad: bool = True,
    include_noise: bool = False,
) -> tuple[np.ndarray, np.ndarray | None]:
    """UCB values (m,) and gradients (m, d) w.r.t. x for a batch of points X (m, d) at time t.

    ``include_noise`` adds the observation noise to sigma, as the public W-DBO reference does
    (its posterior is the likelihood's); off by default, as in Srinivas et al.
    """
    return _ucb_of(gp.predict(X, t, grad=grad, include_noise=include_noise), beta, grad)


def _ucb_of(pred, beta: float, grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """The UCB of one posterior prediction (the arithmetic of :func:`ucb`, written once).

    ``mu + sqrt(beta) sigma`` and ``dmu + sqrt(beta) dvar / (2 sigma)``, evaluated in place on
    fresh arrays (an acquisition step calls this thousands of times on a handful of points, so
    allocations are a visible share): each entry is the same IEEE operations on the same
    operands as the expressions (a sum's operands commute exactly).
    """
    sigma = np.maximum(pred.var, _VAR_FLOOR)
    np.sqrt(sigma, out=sigma)
    # math.sqrt is IEEE sqrt like np.sqrt; a negative or NaN beta keeps numpy's NaN
    root_beta = math.sqrt(beta) if beta >= 0.0 else np.sqrt(beta)
    values = np.multiply(root_beta, sigma)
    values += pred.mean
    if not grad:
        return values, None
    grads = np.multiply(root_beta, pred.dvar)
    grads /= (2.0 * sigma)[:, None]
    grads += pred.dmean
    return values, grads


def ucb_with_posterior(
    gp: _Predictor, X: np.ndarray, t: float, beta: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(UCB, mu, sigma)`` at ``X`` (m, d) for time ``t`` from ONE posterior evaluation.

    For a policy on a finite set that also reads the posterior at its choice (PE-GP-UCB's
    elimination width ``beta sigma_{t-1}(x_t)``, Regret Balancing's width): the values are
    :func:`ucb`'s (floored variance), ``sigma`` is the model's own (unfloored) posterior std.
    """
    pred = gp.predict(X, t, grad=False, include_noise=False)
    values, _ = _ucb_of(pred, beta, grad=False)
    return values, pred.mean, np.sqrt(pred.var)
