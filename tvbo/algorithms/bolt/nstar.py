"""Recommendation 1 of BOLT: the dataset size n* that best trades data for response time.

Both BOLT papers bound the regret by a quantity that shrinks as ``||u_n||^2`` grows, where

``u_n = (k_T(R(n)), k_T(2 R(n)), ..., k_T(n R(n)))``   and   ``n* = argmax_n ||u_n||^2``

(eq. (8)-(9) of the ICML paper, eq. (5) of "without a metronome"). This module is in the model
layer because BOLT's dataset policy (:mod:`tvbo.algorithms.bolt.parts`) computes n* every iteration;
the theory analyses (:mod:`tvbo.analysis.nstar`) re-export it. ``k_T`` is the temporal
correlation at a lag in seconds and ``R(n)`` the response time (seconds) with ``n`` observations:
keeping more data helps only while the extra observations are not made stale by the slower loop.
The papers find n* by a direct search, ``n_{i+1} = n_i + sign(Delta u(n_i))`` with
``Delta u(n) = ||u_{n+1}||^2 - ||u_n||^2``, stopping when the sign changes. Under the papers'
assumptions (``k_T`` non-negative and decreasing, ``R`` increasing) the relaxation has a unique
maximum, so the discrete maximiser is unique or a pair of consecutive integers.

Conventions (the papers leave them open):

* ties ``||u_{n*}||^2 == ||u_{n*+1}||^2``: the smaller size n* is returned (less compute for the
  same bound);
* bounded ``R`` (e.g. constant): ``||u_n||^2`` increases forever, n* is infinite, and the search
  returns the cap ``n_max``. It stops earlier, as at a tie, where ``Delta u`` underflows to
  exactly 0 (a constant ``R`` with an RBF ``k_T``: lags beyond ~27 lengthscales; Matérn-1/2:
  ~370), since the sizes then cannot be told apart in floating point;
* ``Delta u(n) == 0`` is treated as "not increasing": from ``n0`` the search walks *down* through
  zero steps (the paper's literal ``sign(0) = 0`` would stop on any numerically flat stretch,
  e.g. where every ``k_T(i R(n))`` has underflowed) and returns the first size of a flat top;
* ``Delta u(n)`` is evaluated term by term,
  ``k_T((n+1) R(n+1))^2 + sum_{i<=n} [k_T(i R(n+1))^2 - k_T(i R(n))^2]``, which avoids the
  cancellation between the two large sums and costs O(1) when ``R(n+1) == R(n)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from tvbo.gp.convolutions import SUPPORTED, check_name, correlation
from tvbo.work import WorkCounter

KernelT = Callable[[np.ndarray], np.ndarray]
ResponseTime = Callable[[int], float]


def temporal_correlation(name: str, lengthscale: float) -> KernelT:
    """``lag -> k_T(|lag| / lengthscale)`` for one of :data:`tvbo.gp.convolutions.SUPPORTED`."""
    check_name(name)
    ell = float(lengthscale)
    if not (ell > 0.0 and math.isfinite(ell)):
        raise ValueError(f"lengthscale must be a positive finite number, got {lengthscale!r}")

    def k_T(lag: np.ndarray) -> np.ndarray:
        return correlation(name, np.abs(np.asarray(lag, dtype=float)) / ell)

    k_T.__doc__ = f"{name} temporal correlation with lengthscale {ell} s (lags in seconds)"
    return k_T


def cubic_response_time(coeffs: Sequence[float]) -> ResponseTime:
    """``R(n) = c0 + c1 n + c2 n^2 + c3 n^3`` from 1 to 4 coefficients in increasing degree.

    This is the model both papers fit to measured response times (GP inference is O(n^3)).
    Missing high-degree coefficients are 0, so ``(0.05, 0, 0, 1e-6)`` and ``(2.0,)`` both work.
    """
    c = [float(v) for v in coeffs]
    if not 1 <= len(c) <= 4 or not all(math.isfinite(v) for v in c):
        raise ValueError(f"coeffs must be 1 to 4 finite numbers (c0, c1, c2, c3), got {coeffs!r}")
    c += [0.0] * (4 - len(c))

    def R(n: int) -> float:
        return c[0] + n * (c[1] + n * (c[2] + n * c[3]))

    R.__doc__ = f"R(n) = {c[0]} + {c[1]} n + {c[2]} n^2 + {c[3]} n^3 seconds"
    return R


def _response(R: ResponseTime, n: int) -> float:
    value = float(R(n))
    if not (value > 0.0 and math.isfinite(value)):
        raise ValueError(f"response time must be positive and finite, got R({n}) = {value!r}")
    return value


def squared_norm_u(k_T: KernelT, R: ResponseTime, n: int) -> float:
    """``||u_n||^2 = sum_{i=1..n} k_T(i R(n))^2`` (``k_T`` takes lags in seconds)."""
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    lags = np.arange(1, int(n) + 1, dtype=float) * _response(R, int(n))
    values = np.asarray(k_T(lags), dtype=float)
    return float(np.sum(values * values))


def _delta_u(k_T: KernelT, R: ResponseTime, n: int) -> float:
    """``||u_{n+1}||^2 - ||u_n||^2`` without subtracting the two large sums."""
    r_now, r_next = _response(R, n), _response(R, n + 1)
    last = float(np.asarray(k_T(np.array([(n + 1) * r_next])), dtype=float)[0])
    if r_next == r_now:
        return last * last
    i = np.arange(1, n + 1, dtype=float)
    new = np.asarray(k_T(i * r_next), dtype=float)
    old = np.asarray(k_T(i * r_now), dtype=float)
    return last * last + float(np.sum((new - old) * (new + old)))


def nstar(k_T: KernelT, R: ResponseTime, *, n0: int = 1, n_max: int = 100_000) -> int:
    """The paper's direct search for ``n* = argmax_n ||u_n||^2``, started at ``n0``.

    Steps by ``sign(Delta u(n))`` until the sign changes; returns ``n_max`` if ``Delta u`` stays
    positive up to it (bounded ``R``: infinite n*) and 1 if it stays non-positive down to 1. On a
    tie the smaller size is returned (see the module notes for ``Delta u == 0``).
    Cost: O(|n* - n0| * n*) kernel evaluations, so warm-starting
    from the previous n* is cheap.
    """
    if int(n0) != n0 or n0 < 1:
        raise ValueError(f"n0 must be an integer >= 1, got {n0!r}")
    if int(n_max) != n_max or n_max < n0:
        raise ValueError(f"n_max must be an integer >= n0={n0}, got {n_max!r}")
    n, n_max = int(n0), int(n_max)
    if _delta_u(k_T, R, n) > 0.0:
        while n < n_max:
            n += 1
            if _delta_u(k_T, R, n) <= 0.0:  # crossed the maximum, or a tie (n, n+1)
                return n
        return n_max
    # Delta u(n0) <= 0: the maximum is at or below n0. Walking down through Delta u == 0 as well
    # returns the smaller size of a tie and gets off numerically flat stretches (all k_T
    # underflowed), where the paper's literal step sign(0) = 0 would stay put.
    while n > 1 and _delta_u(k_T, R, n - 1) <= 0.0:
        n -= 1
    return n


def nstar_bruteforce(k_T: KernelT, R: ResponseTime, n_max: int) -> int:
    """``argmax_{1 <= n <= n_max} ||u_n||^2`` by evaluating every n (the smallest on ties).

    O(n_max^2); a reference for tests.
    """
    if int(n_max) != n_max or n_max < 1:
        raise ValueError(f"n_max must be an integer >= 1, got {n_max!r}")
    values = [squared_norm_u(k_T, R, n) for n in range(1, int(n_max) + 1)]
    return int(np.argmax(values)) + 1


__all__ = [
    "SUPPORTED",
    "cubic_response_time",
    "nstar",
    "nstar_bruteforce",
    "search_nstar",
    "squared_norm_u",
    "temporal_correlation",
]


def search_nstar(
    kernel: str,
    lengthscale: float,
    R: ResponseTime,
    *,
    n0: int = 1,
    n_max: int = 100_000,
    work: WorkCounter | None = None,
) -> int:
    """:func:`nstar` for the temporal family ``kernel`` with ``lengthscale``, work counted.

    The direct search is BOLT's dataset policy's computation; it reports its own work to
    ``work`` (one call, and per evaluation of k_T its entries and one Python-level step), so the
    policy that asks for n* counts nothing itself.
    """
    base = temporal_correlation(kernel, lengthscale)
    if work is None:
        return nstar(base, R, n0=n0, n_max=n_max)

    def k_T(lag: np.ndarray) -> np.ndarray:
        work.kernel(float(np.size(lag)))
        work.steps(1.0)
        return base(lag)

    work.call(1)
    return nstar(k_T, R, n0=n0, n_max=n_max)
