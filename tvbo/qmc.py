"""Scrambled Sobol' points without importing ``scipy.stats`` (start-up: issue 14).

Why: the acquisition optimiser and the f* oracle need a few hundred scrambled Sobol' points per
call, and ``from scipy.stats import qmc`` imports all of ``scipy.stats`` (distributions,
ndimage, integrate, interpolate): about a quarter of a run's start-up, paid by every one of a
campaign's hundreds of processes. This module produces exactly the points of
``scipy.stats.qmc.Sobol(d, scramble=True, rng=rng)`` (default 30 bits) for the first draw of an
engine, ``.random(n)`` or ``.random_base2(m)``, and uses ``rng`` the same way (a spawned child
generator), so results stay bit-identical (``tests/test_qmc.py`` compares both
over many dimensions, sizes and seeds; the direction numbers are read from the file scipy ships).

The construction (standard, Joe & Kuo 2008 direction numbers; Owen's linear matrix scrambling
plus a digital shift, Matousek 1998):

* direction numbers ``v[d, j]`` (30 bits): dimension 0 is the van der Corput sequence; every other
  dimension follows the recurrence of its primitive polynomial from its initial numbers;
* scrambling: ``shift`` = 30 random bits per dimension (drawn first), then a random lower-
  triangular binary matrix ``L_d`` per dimension with a unit diagonal (the drawn diagonal is
  discarded); each direction number becomes ``L_d v`` over
  GF(2) (bit ``k`` of ``v`` counted from the most significant one);
* points in Gray-code order: point 0 is the shift; point ``i`` XORs the direction number of the
  lowest zero bit of ``i - 1`` into the previous one; scaled by ``2**-30``.
"""

from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

__all__ = ["sobol"]

BITS = 30


@lru_cache(maxsize=1)
def _table() -> tuple[np.ndarray, np.ndarray]:
    """(poly, vinit) of the Joe-Kuo direction numbers, from the file scipy ships."""
    import scipy  # the package only (cheap); its stats sub-package is not imported

    path = os.path.join(os.path.dirname(scipy.__file__), "stats", "_sobol_direction_numbers.npz")
    with np.load(path) as data:
        return data["poly"], data["vinit"]


@lru_cache(maxsize=64)
def _direction_numbers(d: int) -> np.ndarray:
    """Unscrambled direction numbers ``(d, BITS)``, each left-aligned in ``BITS`` bits."""
    poly, vinit = _table()
    if not 1 <= d <= len(poly):
        raise ValueError(f"Sobol' dimension must be in [1, {len(poly)}], got {d}")
    v = np.zeros((d, BITS), dtype=np.int64)
    v[0, :] = 1
    for dim in range(1, d):
        p = int(poly[dim])
        m = p.bit_length() - 1  # degree of the primitive polynomial
        v[dim, :m] = vinit[dim, :m]
        for j in range(m, BITS):
            new = int(v[dim, j - m])
            for k in range(m):
                if (p >> (m - 1 - k)) & 1:
                    new ^= int(v[dim, j - k - 1]) << (k + 1)
            v[dim, j] = new
    v <<= np.arange(BITS - 1, -1, -1, dtype=np.int64)
    v.setflags(write=False)
    return v


def _scrambled(d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(shift (d,), scrambled direction numbers (d, BITS)), drawing from ``rng`` like scipy.

    Like scipy's engine, the draws come from a child generator spawned from ``rng``'s seed
    sequence: ``rng``'s own stream is untouched, but its spawn counter advances.
    """
    rng = rng.spawn(1)[0]
    shift_bits = rng.integers(2, size=(d, BITS), dtype=np.uint32)
    shift = (shift_bits.astype(np.int64) << np.arange(BITS, dtype=np.int64)).sum(axis=1)
    ltm = np.tril(rng.integers(2, size=(d, BITS, BITS), dtype=np.uint32)).astype(np.int64)
    ltm[:, np.arange(BITS), np.arange(BITS)] = 1  # unit diagonal: L_d is invertible
    v = _direction_numbers(d)
    # bit k (k = 0: most significant of BITS) of every direction number: (d, BITS, BITS[k])
    vbits = (v[:, :, None] >> np.arange(BITS - 1, -1, -1, dtype=np.int64)) & 1
    # row p of L_d . bits of v[d, j], over GF(2): (d, BITS[j], BITS[p]); row p is output bit p,
    # again counted from the most significant bit
    out_bits = np.einsum("dpk,djk->djp", ltm, vbits) & 1
    sv = (out_bits << np.arange(BITS - 1, -1, -1, dtype=np.int64)).sum(axis=2)
    return shift, sv


def sobol(d: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """The first ``n`` points of ``scipy.stats.qmc.Sobol(d, scramble=True, rng=rng)``, (n, d).

    Equal, bit for bit, to ``.random(n)`` (and ``.random_base2(m)`` for ``n = 2**m``) on a fresh
    engine, and leaves ``rng`` (stream and spawn counter) in the same state.
    """
    d, n = int(d), int(n)
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if n > 2**BITS:
        raise ValueError(f"at most 2**{BITS} Sobol' points, got n = {n}")
    shift, sv = _scrambled(d, rng)
    if n == 0:
        return np.empty((0, d))
    # Gray code: point i (i >= 1) = shift XOR (xor of sv[:, c] over the changes c so far), where
    # change number i - 1 flips the lowest zero bit of i - 1
    i = np.arange(n - 1, dtype=np.int64)
    lowest_zero = _lowest_zero_bit(i)
    steps = sv[:, lowest_zero].T  # (n - 1, d)
    quasi = np.bitwise_xor.accumulate(np.vstack([shift[None, :], steps]), axis=0)
    return quasi * (1.0 / 2**BITS)


def _lowest_zero_bit(i: np.ndarray) -> np.ndarray:
    """Index of the lowest zero bit of each (non-negative) integer."""
    x = ~i & (i + 1)  # isolates the lowest zero bit of i
    return np.log2(x.astype(np.float64)).astype(np.int64)
