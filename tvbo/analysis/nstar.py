"""Re-export of :mod:`tvbo.gp.nstar` (BOLT's optimal dataset size n*), kept for existing callers.

The computation moved to ``tvbo/gp/nstar.py`` so that BOLT (an algorithm) can use it without
importing ``analysis/`` (issue 11 item 6); new code should import :mod:`tvbo.gp.nstar`.
"""

from __future__ import annotations

from tvbo.gp.nstar import (
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
