"""Maximising an acquisition over a finite candidate set, with an explicit tie rule.

On a finite set exact ties are common (PE-GP-UCB's toy: the candidate priors' tall hills tie
exactly, and before any data every prior's UCB is flat), and which tied point is taken changes
results (spec_sparq_pegpucb.md D.19). :class:`~tvbo.acquisition.optimize.AcquisitionOptimizer`
takes the first maximiser of a finite set; the rules here make the choice an option:

* ``"random"``: uniformly at random among the values within ``1e-12`` (relative, at least
  absolute ``1e-12``) of the maximum, with the caller's seeded generator;
* ``"first"``: the lowest index among them (what ``numpy``/``torch`` ``argmax`` does, up to
  the tolerance).

:func:`joint_argmax` maximises over several acquisitions at once (PE-GP-UCB's doubly optimistic
argmax over (x, prior)): each row's maximisers, then the rows whose maximum ties the best.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

#: tie-breaking rules of every argmax / argmin over a finite set (D.19)
TIES: tuple[str, ...] = ("random", "first")
#: relative width of a tie (at least absolute, for values near 0)
TIE_RTOL = 1e-12


def check_ties(rule: str) -> str:
    if rule not in TIES:
        raise ValueError(f"unknown ties rule {rule!r}; valid: {', '.join(TIES)}")
    return rule


def pick(tied: np.ndarray | Sequence[int], rule: str, rng: np.random.Generator) -> int:
    """One of the tied indices ``tied`` (increasing): the first, or uniformly at random.

    A single candidate consumes no random number, so the generator's stream only moves on real
    ties.
    """
    if len(tied) == 1 or rule == "first":
        return int(tied[0])
    return int(tied[rng.integers(len(tied))])


def argmax(values: np.ndarray, rule: str, rng: np.random.Generator) -> int:
    """Index of the maximum of ``values``, ties (within :data:`TIE_RTOL`) broken by ``rule``."""
    top = np.max(values)
    return pick(np.flatnonzero(values >= top - TIE_RTOL * max(1.0, abs(top))), rule, rng)


def joint_argmax(
    rows: Sequence[np.ndarray], rule: str, rng: np.random.Generator
) -> tuple[int, int]:
    """``(row, column)`` of the maximum over several acquisitions evaluated on one set.

    The candidates are every row's own maximisers (within the tolerance of that row's maximum)
    whose row maximum is within the tolerance of the best row's, in (row, column) order; one is
    chosen by ``rule``.
    """
    best, choices = -math.inf, []
    for r, values in enumerate(rows):
        top = float(np.max(values))
        for j in np.flatnonzero(values >= top - TIE_RTOL * max(1.0, abs(top))):
            choices.append((top, r, int(j)))
        best = max(best, top)
    tol = TIE_RTOL * max(1.0, abs(best))
    choices = [c for c in choices if c[0] >= best - tol]
    _, r, j = choices[pick(np.arange(len(choices)), rule, rng)]
    return r, j
