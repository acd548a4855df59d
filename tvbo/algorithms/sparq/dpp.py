"""Approximate sampling from an M-DPP (fixed-size determinantal point process).

SparQ-GP-UCB (Mauduit, Berthier & Simonetto, Appendix A) picks the locations it asks the expert
about (the acquisition of :mod:`tvbo.algorithms.sparq.expert`) as an approximate sample of an
``M``-DPP over the past inputs, following Burt et al. (2019/2020, Algorithm 1). The ``M``-DPP
with PSD kernel matrix ``K`` (N x N) is the distribution over subsets ``Z`` of size ``M`` with
``P(Z) = det K_ZZ / sum_{|Z'|=M} det K_Z'Z'``: it favours dispersed, weakly correlated points
(spec_sparq_pegpucb.md §A.5, Definition 1).

* :func:`greedy_map` is the paper's Algorithm 3: greedy determinant maximisation (the Schur
  complement identity (33), i.e. pivoted Cholesky) -- the chain's starting set ``Z_0``.
* :func:`sample_mdpp` is the paper's Algorithm 2: the swap chain ``Z' = Z \\ {i} U {j}`` (i
  uniform in Z, j uniform outside), accepted with probability
  ``1/2 min(1, det K_Z'Z' / det K_ZZ)``. It is a lazy Metropolis chain whose stationary law is
  the M-DPP (the proposal is symmetric).

Every determinant ratio is computed in O(M^2) from ``A = K_ZZ^{-1}``: with ``b = K_{Z,j}`` and
``u = A b``, removing i and adding j gives

    det K_Z'Z' / det K_ZZ = A_ii * S(j, Z \\ {i}),
    S(j, Z \\ {i}) = k_jj - (b.u - 2 b_i u_i + A_ii b_i^2) + (u_i - A_ii b_i)^2 / A_ii,

because ``1 / A_ii`` is the Schur complement of ``K_{Z\\i}`` in ``K_ZZ`` and ``K_{Z\\i}^{-1} =
A_{-i,-i} - A_{-i,i} A_{i,-i} / A_ii``. ``A`` is recomputed (O(M^3)) only on acceptance.
Work is reported to a :class:`~tvbo.work.WorkCounter` (flops, steps, calls).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tvbo.work import NullWorkCounter, WorkCounter

#: relative jitter added to the diagonal of K_ZZ before inversion (duplicates make it singular)
_JITTER = 1e-10


@dataclass(frozen=True)
class MDPPSample:
    """Indices of the chosen set (sorted), its log-determinant and the chain's acceptance rate."""

    indices: np.ndarray
    logdet: float
    acceptance: float
    steps: int


def _check(K: np.ndarray, size: int) -> np.ndarray:
    K = np.asarray(K, float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"the DPP kernel matrix must be square, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError("the DPP kernel matrix must be finite")
    n = K.shape[0]
    if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 1:
        raise ValueError(f"the DPP size M must be an integer >= 1, got {size!r}")
    if size > n:
        raise ValueError(
            f"the DPP size M = {size} is larger than the candidate set (N = {n}); choose M <= {n}"
        )
    return K


def greedy_map(K: np.ndarray, size: int, work: WorkCounter | None = None) -> np.ndarray:
    """Algorithm 3: ``size`` indices chosen greedily to maximise ``det K_ZZ`` (pivoted Cholesky).

    ``S(x, Z)`` -- the Schur complement of ``K_ZZ`` in ``K_{Z U x}`` -- is kept for every
    candidate and downdated by one Cholesky column per pick: O(N M^2) in total. Ties go to the
    lowest index (deterministic).
    """
    K = _check(K, size)
    work = work if work is not None else NullWorkCounter()
    n = K.shape[0]
    schur = np.diag(K).astype(float).copy()
    cols = np.zeros((n, size))
    chosen: list[int] = []
    for m in range(size):
        masked = schur.copy()
        masked[chosen] = -np.inf
        j = int(np.argmax(masked))
        chosen.append(j)
        pivot = math.sqrt(max(schur[j], 0.0))
        if pivot > 0:
            c = (K[:, j] - cols[:, :m] @ cols[j, :m]) / pivot
        else:  # the rest of the set is linearly dependent: nothing left to gain
            c = np.zeros(n)
        cols[:, m] = c
        schur = schur - c * c
        work.flops(2.0 * n * (m + 1))
        work.steps(1)
    work.call()
    return np.asarray(chosen, int)


def _inverse(KZ: np.ndarray, work: WorkCounter) -> tuple[np.ndarray, float]:
    """``(K_ZZ + jitter)^{-1}`` and ``log det`` via Cholesky (M^3/3 + M^3 flops)."""
    m = KZ.shape[0]
    scale = max(float(np.max(np.diag(KZ))), 1e-300)
    M = KZ + (_JITTER * scale) * np.eye(m)
    L = np.linalg.cholesky(M)
    Linv = np.linalg.solve(L, np.eye(m))
    work.flops(m**3 / 3.0 + m**3)
    return Linv.T @ Linv, 2.0 * float(np.sum(np.log(np.diag(L))))


def swap_ratio(K: np.ndarray, Z: np.ndarray, A: np.ndarray, pos: int, j: int) -> float:
    """``det K_Z'Z' / det K_ZZ`` for ``Z' = Z`` with ``Z[pos]`` replaced by ``j`` (O(M^2))."""
    b = K[Z, j]
    u = A @ b
    a_ii = A[pos, pos]
    b_i, u_i = b[pos], u[pos]
    quad = float(b @ u) - 2.0 * b_i * u_i + a_ii * b_i * b_i
    schur = K[j, j] - quad + (u_i - a_ii * b_i) ** 2 / a_ii
    return max(float(a_ii * schur), 0.0)


def sample_mdpp(
    K: np.ndarray,
    size: int,
    n_steps: int,
    rng: np.random.Generator,
    *,
    init: np.ndarray | None = None,
    work: WorkCounter | None = None,
) -> MDPPSample:
    """Algorithm 2: ``n_steps`` swap moves of the lazy Metropolis chain, from ``init``.

    ``init`` defaults to the greedy MAP set of :func:`greedy_map` (the paper's line 3). With
    ``size == N`` the only subset is returned at once. Raises ``ValueError`` when ``size`` is
    not in [1, N] or ``n_steps < 0``.
    """
    K = _check(K, size)
    if isinstance(n_steps, bool) or not isinstance(n_steps, int | np.integer) or n_steps < 0:
        raise ValueError(f"n_steps (MCMC iterations) must be an integer >= 0, got {n_steps!r}")
    work = work if work is not None else NullWorkCounter()
    n = K.shape[0]
    Z = greedy_map(K, size, work) if init is None else np.asarray(init, int).copy()
    if Z.shape != (size,) or len(set(Z.tolist())) != size or Z.min() < 0 or Z.max() >= n:
        raise ValueError(f"init must be {size} distinct indices in [0, {n}), got {init!r}")
    A, logdet = _inverse(K[np.ix_(Z, Z)], work)
    if size == n or n_steps == 0:
        return MDPPSample(np.sort(Z), logdet, float("nan"), 0)
    inside = np.zeros(n, bool)
    inside[Z] = True
    outside = np.flatnonzero(~inside)
    positions = rng.integers(size, size=n_steps)
    picks = rng.integers(n - size, size=n_steps)
    coins = rng.random(n_steps)
    accepted = 0
    for step in range(n_steps):
        pos = int(positions[step])
        k = int(picks[step])
        j = int(outside[k])
        ratio = swap_ratio(K, Z, A, pos, j)
        if coins[step] < 0.5 * min(1.0, ratio):
            i = int(Z[pos])
            Z[pos] = j
            outside[k] = i
            A, logdet = _inverse(K[np.ix_(Z, Z)], work)
            accepted += 1
    work.flops(2.0 * size * size * n_steps)
    work.steps(n_steps)
    work.call()
    return MDPPSample(np.sort(Z), logdet, accepted / n_steps, int(n_steps))


def mdpp_probabilities(K: np.ndarray, size: int) -> dict[tuple[int, ...], float]:
    """Exact M-DPP law by enumeration of all subsets (small N only: for tests and checks)."""
    from itertools import combinations

    K = _check(K, size)
    n = K.shape[0]
    if math.comb(n, size) > 200_000:
        raise ValueError(f"C({n}, {size}) subsets are too many to enumerate")
    dets = {
        Z: max(float(np.linalg.det(K[np.ix_(Z, Z)])), 0.0) for Z in combinations(range(n), size)
    }
    total = sum(dets.values())
    if not total > 0:
        raise ValueError("every subset has determinant 0: the kernel matrix has rank < M")
    return {Z: v / total for Z, v in dets.items()}
