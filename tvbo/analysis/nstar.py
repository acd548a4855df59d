"""Recommendation 1 of BOLT, n*, for the theory analyses: see :mod:`tvbo.algorithms.bolt.nstar`.

The computation lives in the model layer, where BOLT's dataset policy uses it (algorithms never
import analysis); this module keeps the analyses' import path.
"""

from tvbo.algorithms.bolt.nstar import (
    SUPPORTED,
    KernelT,
    ResponseTime,
    cubic_response_time,
    nstar,
    nstar_bruteforce,
    squared_norm_u,
    temporal_correlation,
)

__all__ = [
    "SUPPORTED",
    "KernelT",
    "ResponseTime",
    "cubic_response_time",
    "nstar",
    "nstar_bruteforce",
    "squared_norm_u",
    "temporal_correlation",
]
