"""GP-UCB at a fixed time: ``alpha(x) = mu(x, t) + sqrt(beta) * sigma(x, t)``."""

from __future__ import annotations

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
    """The UCB of one posterior prediction (the arithmetic of :func:`ucb`, written once)."""
    var = np.maximum(pred.var, _VAR_FLOOR)
    sigma = np.sqrt(var)
    root_beta = np.sqrt(beta)
    values = pred.mean + root_beta * sigma
    if not grad:
        return values, None
    grads = pred.dmean + root_beta * pred.dvar / (2.0 * sigma)[:, None]
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
