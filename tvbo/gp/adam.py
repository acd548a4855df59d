"""torch.optim.Adam as the published TVBO code runs it (:func:`adam_minimize`), in one form.

``steps`` iterations of torch's Adam (no weight decay, not AMSGrad) on any
``fun(z) -> (loss, grad)``, written as the update rule reads; the ``gpytorch-adam`` fit mode
(:mod:`tvbo.gp.fit_modes`, the W-DBO public code's fit) runs it on
:class:`tvbo.gp.fit_modes.RawObjective`. One function holding the whole loop, the reference
form: with ``TVBO_JIT`` on, the ``gpytorch-adam`` fit runs its compiled twin instead
(:func:`tvbo.gp.compiled.adam_fit`: this loop and the raw objective in one numba call, the
same bits; ``python benchmarks/fit_overhead.py --jit`` times both).

No fast form, measured: a fused loop on Python floats (``adam_softplus_lml``, until this
module) made a 150-step ``gpytorch-adam`` fit 23-36% cheaper (n = 60 / 10;
``python benchmarks/fit_overhead.py --compare`` at that commit), but Adam fits are 7.3% of the
wall time of a ``bolt_paper`` slice weighted towards them (shekel, hartmann3 x w-dbo-paper,
bolt-paper, gp-ucb, tv-gp-ucb x seeds 0-1: cProfile, ``FitMode.fit`` cumulative), so the loop
saved about 2% there: the slice took 54.4 s CPU fused and 58.9 s plain, and once the 5.9% by
which the machine's load moved gp-ucb and tv-gp-ucb (which never run Adam) is taken out, about
1 s (1.8%) is the loop's. In the whole campaign, where the paper presets are 2 of 14
algorithms, it is less: under the 5% that a fast form must earn. Same bits either way (every
run digest of the slice was identical).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = ["ADAM_BETAS", "ADAM_EPS", "adam_minimize"]

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
