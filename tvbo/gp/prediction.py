"""The posterior a GP model returns at m query points (:class:`Prediction`).

Its own module because every posterior produces one: the exact GP (:mod:`tvbo.gp.exact`), its
space-time posterior (:mod:`tvbo.gp.space_time`) and the models built on them, so none of them
has to import another just for the return type.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Prediction"]


@dataclass
class Prediction:
    """Posterior at m points, in original (un-standardised) output units."""

    mean: np.ndarray  # (m,)
    var: np.ndarray  # (m,) latent f variance, plus noise if requested
    dmean: np.ndarray | None = None  # (m, d) d mean / d x
    dvar: np.ndarray | None = None  # (m, d) d var / d x
