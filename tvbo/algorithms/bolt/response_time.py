"""BOLT's response-time model: R(n), the time of one loop with n observations, from the clock.

BOLT "without a metronome" learns R(n) online by regressing measured loop times on the dataset
size (spec_bolt.md §3.3). The regression is a model fit like a GP's hyperparameter fit, so it
lives in the model layer and reports its own work and fit-health record:
:func:`fit_response_time_counted` is what the dataset policy calls.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.optimize import nnls

from tvbo.work import WorkCounter

__all__ = ["fit_response_time", "fit_response_time_counted"]


def fit_response_time(sizes: Sequence[float], times: Sequence[float]) -> np.ndarray:
    """Least-squares cubic ``R(n) = c0 + c1 n + c2 n^2 + c3 n^3`` with ``c_j >= 0`` (NNLS).

    Both papers fit "a 3rd-degree polynomial" because GP inference is at most O(n^3) (spec_bolt.md
    §3.3) but say nothing of its sign. Non-negative coefficients make R positive and
    non-decreasing on n >= 0, as Definition 3.5 requires, and keep the direct search's
    assumptions; an unconstrained cubic fitted on a narrow range of n routinely extrapolates to a
    negative or decreasing R. The columns are scaled by ``max(n)^j`` for conditioning. Returns
    ``[c0, c1, c2, c3]`` (seconds, s/n, ...). Exact non-negative cubic data are recovered.
    """
    n = np.asarray(sizes, dtype=float).reshape(-1)
    r = np.asarray(times, dtype=float).reshape(-1)
    if n.shape != r.shape or n.size == 0:
        raise ValueError(
            f"sizes and times must be non-empty and of equal length, got {n.size} and {r.size}"
        )
    if not (np.all(np.isfinite(n)) and np.all(np.isfinite(r))) or np.any(n < 0):
        raise ValueError("sizes must be finite and >= 0 and times finite")
    scale = max(1.0, float(n.max()))
    powers = np.arange(4)
    A = (n[:, None] / scale) ** powers[None, :]
    coef, _ = nnls(A, r)
    return coef / scale**powers


def fit_response_time_counted(
    sizes: Sequence[float], times: Sequence[float], *, work: WorkCounter, source: str
) -> np.ndarray:
    """:func:`fit_response_time`, its work and its fit-health record reported to ``work``.

    Work: one call and ``128 m`` flops for m points (Lawson-Hanson: a few QR solves of an m x 4
    system). The record (``source`` names the caller) holds the NNLS coefficients of
    ``R(n) = c0 + c1 n + c2 n^2 + c3 n^3``; a coefficient at its bound 0 drops that power of n
    from the model of the response time.
    """
    m = len(sizes)
    coefficients = fit_response_time(sizes, times)
    work.call(1)
    work.flops(128.0 * m)
    record: dict[str, object] = {"source": source, "mode": "nnls", "n_data": m, "success": 1,
                                 "time_unit": "",
                                 "fitted": ",".join(f"response_c{i}" for i in range(4))}
    for i, c in enumerate(np.asarray(coefficients, float)):
        record[f"response_c{i}"] = float(c)
        record[f"response_c{i}_at_lower"] = int(c == 0.0)
    work.record_fit(record)
    return coefficients
