"""A stand-in for an outside optimiser with an ask/tell interface; it knows nothing of tvbo.

A (1+1) evolution strategy with the one-fifth success rule, maximising on [0, 1]^d: ``ask()``
returns the next point, ``tell(x, y)`` takes its value. Libraries such as Optuna, Nevergrad or
scikit-optimize expose the same two calls; the tvbo wrapper (``tvbo_plugin.AskTellES``) would be
the same for them.
"""

from __future__ import annotations

import numpy as np


class OnePlusOneES:
    """(1+1)-ES with the 1/5th success rule on the unit box (maximisation)."""

    def __init__(self, d: int, sigma: float = 0.2, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.d = d
        self.sigma = float(sigma)
        self.parent: np.ndarray | None = None
        self.parent_value = -np.inf
        self.told = 0

    def ask(self) -> np.ndarray:
        """The next point to evaluate: a Gaussian step from the best point so far."""
        if self.parent is None:
            return self.rng.uniform(size=self.d)
        return np.clip(self.parent + self.sigma * self.rng.standard_normal(self.d), 0.0, 1.0)

    def tell(self, x: np.ndarray, y: float) -> None:
        """Take the value ``y`` of ``x``: keep it if it is better, adapt the step size."""
        self.told += 1
        if y > self.parent_value:
            self.parent, self.parent_value = np.asarray(x, float).copy(), float(y)
            self.sigma = min(self.sigma * 1.5, 0.5)
        else:
            self.sigma = max(self.sigma * 1.5 ** -0.25, 1e-3)
