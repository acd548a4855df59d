"""Data sets shared by the reference tests: what tvbo's GPs see in the presets' runs.

x in [0, 1]^d, t in seconds over a 600 s task (the BOLT / W-DBO horizons), y a smooth function
drifting in time plus noise; standardised with the population std, as W-DBO's code and tvbo do.
"""

from __future__ import annotations

import numpy as np


def dataset(d: int, n: int, seed: int, *, horizon: float = 600.0
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X (n, d), T (n,), y (n,))`` of a drifting sine in d dimensions."""
    rng = np.random.default_rng(1000 * d + 10 * n + seed)
    X = rng.uniform(size=(n, d))
    T = np.sort(rng.uniform(0.0, horizon, n))
    phase = 2.0 * np.pi * T / horizon
    y = np.sin(3.0 * X @ np.linspace(1.0, 0.5, d) + phase) + 0.3 * X[:, 0] \
        + 0.1 * rng.normal(size=n)
    return X, T, y


def standardized(y: np.ndarray) -> np.ndarray:
    return (y - y.mean()) / y.std()


#: (d, n, seed, time_scale or None for a spatial-only GP): 26 data sets across dimensions 1-6,
#: sizes 6-60 and the time units the presets use (600: w-dbo-paper / bolt-paper, time over the
#: 600 s task; 60: the W-DBO README loop's minutes; 1: the library's default, seconds)
CASES: list[tuple[int, int, int, float | None]] = [
    *[(d, n, 0, 600.0) for d in (1, 2, 3, 4, 6) for n in (8, 20, 45)],
    *[(d, n, 1, 60.0) for d, n in ((2, 15), (3, 30), (4, 12))],
    *[(d, n, 2, 1.0) for d, n in ((2, 10), (3, 25), (4, 60))],
    *[(d, n, 3, None) for d, n in ((1, 6), (2, 15), (3, 30), (4, 20), (6, 40))],
]
