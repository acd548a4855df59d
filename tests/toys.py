"""A toy time-varying benchmark whose every quantity is known in closed form, for engine and
algorithm tests that need to compute instants and regrets by hand."""

from __future__ import annotations

import numpy as np


class ToyBenchmark:
    """f(x, t) = -(x - m(t))^2 with m(t) = 0.5 + 0.3 sin(t / 10): f* = 0 exactly."""

    name = "toy"
    d = 1
    noise_var = 0.01
    temporal_kernel = "matern32"

    def __init__(self, horizon: float = 20.0, cost: float = 0.5) -> None:
        self.horizon = horizon
        self.cost = cost

    def _m(self, t):
        return 0.5 + 0.3 * np.sin(np.asarray(t, float) / 10.0)

    def __call__(self, x, t):
        x = np.asarray(x, float)
        return -((x[..., 0] - self._m(t)) ** 2)

    def sample(self, x, t, rng):
        return float(self(x, t)) + rng.normal(0.0, np.sqrt(self.noise_var))

    def f_star(self, t):
        return np.zeros_like(np.asarray(t, float))

    def argmax(self, t):
        return self._m(t)[..., None]

    def refine_f_star(self, t, x):
        return 0.0

    def describe(self):
        return {"name": self.name, "d": self.d, "horizon": self.horizon, "cost": self.cost}
