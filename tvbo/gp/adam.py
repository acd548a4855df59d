"""torch.optim.Adam as the published TVBO code runs it: the reference loop and its one fast form.

``adam_minimize`` is the reference: ``steps`` iterations of torch's Adam (no weight decay, not
AMSGrad) on any ``fun(z) -> (loss, grad)``, written as the update rule reads.
:func:`adam_softplus_lml` is the same loop fused with the LML objective of a GP whose
hyperparameters all go through GPyTorch's softplus constraints without priors (the
``gpytorch-adam`` mode of :mod:`tvbo.gp.fit_modes`, the W-DBO public code's fit): every float
and the order of every operation are those of ``adam_minimize`` on
:class:`tvbo.gp.fit_modes.RawObjective`, so the two give the same bits
(tests/gp/test_fit_speed.py); the fast form only removes interpreter overhead.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from tvbo.gp.lml import LMLObjective

__all__ = ["ADAM_BETAS", "ADAM_EPS", "adam_minimize", "adam_softplus_lml"]

#: torch.optim.Adam's defaults (betas, eps), used by every Adam fit here
ADAM_BETAS: tuple[float, float] = (0.9, 0.999)
ADAM_EPS: float = 1e-8


def adam_minimize(
    fun: Callable[[np.ndarray], tuple[float, np.ndarray]],
    z0: np.ndarray,
    *,
    lr: float = 0.1,
    steps: int = 150,
    betas: tuple[float, float] = ADAM_BETAS,
    eps: float = ADAM_EPS,
) -> tuple[np.ndarray, float, int, str]:
    """``steps`` iterations of torch's Adam (no weight decay, not AMSGrad) on ``fun``.

    Each step evaluates ``(loss, grad)`` at the current point and then moves it:
    ``m = b1 m + (1-b1) g``, ``v = b2 v + (1-b2) g^2``,
    ``z -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)`` (torch.optim.Adam's update).
    Returns the final point (one step past the last evaluation, as a training loop leaves it),
    the loss at the last evaluated point, the number of evaluations and a message. A failed
    evaluation (infinite loss) contributes a zero gradient.
    """
    z = np.array(z0, float)
    m = np.zeros_like(z)
    v = np.zeros_like(z)
    b1, b2 = betas
    loss = math.inf
    for t in range(1, steps + 1):
        loss, g = fun(z)
        g = np.asarray(g, float)
        m = b1 * m + (1.0 - b1) * g
        v = b2 * v + (1.0 - b2) * g * g
        denom = np.sqrt(v) / math.sqrt(1.0 - b2**t) + eps
        z = z - (lr / (1.0 - b1**t)) * m / denom
    return z, float(loss), steps, f"Adam: {steps} steps, lr {lr}; loss at the last evaluation"


def adam_softplus_lml(
    objective: LMLObjective,
    y: np.ndarray,
    lowers: Sequence[float | None],
    units: Sequence[float],
    z0: np.ndarray,
    *,
    scale: float,
    learn_mean: bool,
    lr: float,
    steps: int,
) -> tuple[np.ndarray, float, float, list[float] | None]:
    """The fast form of :func:`adam_minimize` maximising ``objective`` (LML * ``scale``) over
    raw values z with ``h_k = softplus(z_k) (+ lowers[k])`` and tvbo value ``h_k * units[k]``
    (GPyTorch's ``Positive`` / ``GreaterThan``; every hyperparameter fitted, no prior), plus a
    constant mean ``c = z[-1]`` when ``learn_mean`` (``y - c`` is fitted, d/dc = sum(alpha)).

    Returns ``(z, loss at the last evaluation, best value, best z or None)``; the caller enters
    ``np.errstate`` once. The raw vector, Adam's moments and the chain rule are Python floats
    (IEEE-identical to numpy's float64 for ``+ - * /`` and ``sqrt``), the invariants of a step
    are hoisted and the objective is called through :meth:`LMLObjective.lml_and_grad`: the
    same floats as :func:`adam_minimize` on ``RawObjective`` (``FitMode.fit(fused=False)``).

    Measured gain (benchmarks/fit_overhead.py and the bolt_paper slice in the docstring of
    :meth:`tvbo.gp.fit_modes.FitMode.fit`): see there; ONE function, so that a compiler (numba)
    can take the loop whole.
    """
    b1, b2 = ADAM_BETAS
    eps = ADAM_EPS
    one_b1, one_b2 = 1.0 - b1, 1.0 - b2
    m = len(z0)
    n_h = len(lowers)
    z = [float(v) for v in z0]
    mom = [0.0] * m
    vel = [0.0] * m
    shape = list(zip(range(n_h), lowers, units, strict=True))
    log, sqrt, tanh = math.log, math.sqrt, math.tanh
    logaddexp, as_array, inf = np.logaddexp, np.array, math.inf
    add_reduce = np.add.reduce  # alpha.sum() without the method's Python frame
    subtract, y_shifted = np.subtract, np.empty_like(y)
    mean_index = m - 1
    values, lml_and_grad = objective.values, objective.lml_and_grad
    best_value, best_z = -inf, None
    loss = inf
    grad: list[float] = []
    for t in range(1, steps + 1):
        # -- RawObjective(z): LML * scale and its gradient -----------------------------------------
        # (plain loops: on lists of 3-5 floats a comprehension's own frame costs more)
        soft = logaddexp(0.0, as_array(z)).tolist()
        value = -inf
        hs = []
        th = []
        for k, lower, unit in shape:
            h = soft[k] if lower is None else soft[k] + lower
            if not 0.0 < h < inf:  # isfinite(h) and h > 0 (false for nan): degenerate
                break
            hs.append(h)
            th.append(log(max(h, 1e-300) * unit))
        else:
            if learn_mean:  # y - c, into one buffer (objective.y is only read)
                objective.y = subtract(y, z[mean_index], y_shifted)
            lml, g_log = lml_and_grad(*values(as_array(th)))
            if g_log is not None and -inf < lml < inf:
                grad = []
                for k in range(n_h):
                    d = g_log[k]
                    if not -inf < d < inf:  # a non-finite gradient: a failed evaluation
                        break
                    # dh/dr: the sigmoid of fit_modes._sigmoid() for softplus kinds
                    grad.append(d / hs[k] * (0.5 * (1.0 + tanh(0.5 * z[k]))))
                else:
                    if learn_mean:
                        grad.append(float(add_reduce(objective.alpha)))
                    value = lml * scale
        # -- the best point evaluated, the negation and one Adam step (adam_minimize) ------------
        step = lr / (1.0 - b1**t)
        c2 = sqrt(1.0 - b2**t)
        if -inf < value < inf:
            if value > best_value:
                best_value, best_z = value, z[:]
            loss = -value
            for i in range(m):
                gi = -(grad[i] * scale)
                mi = b1 * mom[i] + one_b1 * gi
                vi = b2 * vel[i] + one_b2 * gi * gi
                mom[i] = mi
                vel[i] = vi
                z[i] = z[i] - step * mi / (sqrt(vi) / c2 + eps)
        else:
            loss = inf
            for i in range(m):  # a zero gradient (a +0.0, as the negation's zeros)
                mi = b1 * mom[i] + one_b1 * 0.0
                vi = b2 * vel[i] + one_b2 * 0.0 * 0.0
                mom[i] = mi
                vel[i] = vi
                z[i] = z[i] - step * mi / (sqrt(vi) / c2 + eps)
    return np.array(z, float), float(loss), best_value, best_z
