"""Pending-point strategies: what an acquisition assumes about queries still being evaluated.

With k asynchronous evaluators (:mod:`tvbo.sim.parallel`) the algorithm proposes a new query
while up to k - 1 others are still running. A plain UCB ignores them and tends to propose the
same point again. Every strategy here turns the pending queries ``(X_p, T_p)`` (their points and
sample times) into *lies* ``Y_p``; the surrogate is then conditioned on ``(X_p, T_p, Y_p)`` for
the duration of one acquisition (``Surrogate.fantasy``) and restored exactly afterwards. The
fantasies never enter the dataset: dataset policies (W-DBO's budget, BOLT's n*, R-/ET-GP-UCB's
resets) act only on observations that have arrived, and a pending query's result is appended
when it arrives, whatever was removed or reset in between.

Strategies (``make_pending(name)``; unknown names list the valid ones):

* ``none`` -- ignore pending queries (the control; duplicates are possible).
* ``hallucinate`` -- GP-BUCB (Desautels, Krause & Burdick 2014, JMLR 15, "Parallelizing
  exploration-exploitation tradeoffs in Gaussian process bandit optimization", Eq. 5): the lie
  is the posterior mean at ``(x_p, t_p)``, so the posterior mean is unchanged while the variance
  is conditioned on the pending queries: for one pending point,
  ``var'(x) = var(x) - cov(x, x_p)^2 / (var(x_p) + noise)``.
* ``kriging-believer`` -- Ginsbourger, Le Riche & Carraro (2010), "Kriging is well-suited to
  parallelize optimization", §4.2: the same lie (the posterior mean); registered under its own
  name for the citation. With the exact GP of this package both give identical queries.
* ``constant-liar-min`` / ``constant-liar-mean`` / ``constant-liar-max`` -- Ginsbourger et al.
  (2010), §4.3: one constant lie L for every pending point, the minimum / mean / maximum of the
  held observations. For maximisation ``min`` is the pessimistic liar (pushes proposals away
  from pending points the most), ``max`` the optimistic one.

The surrogate's standardisation (mean/std of y) is frozen during a fantasy, so the lies enter
in the same units as the data and the formulas above hold exactly
(``ExactGP.frozen_standardization``).
The UCB's ``beta(n)`` sees the dataset size including the pending points, as GP-BUCB's
``beta_t`` counts every query issued.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np


class _Model(Protocol):
    @property
    def y(self) -> np.ndarray: ...

    def predict(self, X, t, *, grad: bool = False, include_noise: bool = False): ...


#: lies (m,) for pending points X (m, d) at sample times T (m,)
Lie = Callable[[_Model, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class PendingStrategy:
    """A named way to account for pending queries; ``lie is None`` ignores them."""

    name: str
    citation: str
    lie: Lie | None

    def lies(self, model: _Model, X: np.ndarray, T: np.ndarray) -> np.ndarray | None:
        """The values to condition on, or None (ignore the pending queries)."""
        if self.lie is None or len(X) == 0:
            return None
        return np.asarray(self.lie(model, np.asarray(X, float), np.asarray(T, float)), float)


def _posterior_mean(model: _Model, X: np.ndarray, T: np.ndarray) -> np.ndarray:
    """The posterior mean at each pending point at its own sample time."""
    if len(model.y) == 0:
        return np.zeros(len(X))
    if np.all(T == T[0]):
        return np.asarray(model.predict(X, float(T[0])).mean, float)
    return np.asarray([model.predict(X[i : i + 1], float(T[i])).mean[0]
                       for i in range(len(X))], float)


def _constant(reduce: Callable[[np.ndarray], float]) -> Lie:
    def lie(model: _Model, X: np.ndarray, T: np.ndarray) -> np.ndarray:
        y = np.asarray(model.y, float)
        value = float(reduce(y)) if y.size else 0.0
        return np.full(len(X), value)

    return lie


_GP_BUCB = ("Desautels, Krause & Burdick (2014), JMLR 15:4053-4103, GP-BUCB: hallucinated "
            "observations at the posterior mean")
_GINSBOURGER = ("Ginsbourger, Le Riche & Carraro (2010), Kriging is well-suited to parallelize "
                "optimization, in Computational Intelligence in Expensive Optimization Problems")

PENDING_STRATEGIES: dict[str, PendingStrategy] = {
    "none": PendingStrategy("none", "ignore pending queries (control)", None),
    "hallucinate": PendingStrategy("hallucinate", _GP_BUCB, _posterior_mean),
    "kriging-believer": PendingStrategy("kriging-believer", _GINSBOURGER + ", §4.2",
                                        _posterior_mean),
    "constant-liar-min": PendingStrategy("constant-liar-min", _GINSBOURGER + ", §4.3 (CL-min)",
                                         _constant(np.min)),
    "constant-liar-mean": PendingStrategy("constant-liar-mean",
                                          _GINSBOURGER + ", §4.3 (CL-mean)", _constant(np.mean)),
    "constant-liar-max": PendingStrategy("constant-liar-max", _GINSBOURGER + ", §4.3 (CL-max)",
                                         _constant(np.max)),
}


def pending_names() -> list[str]:
    """Registered strategy names."""
    return sorted(PENDING_STRATEGIES)


def register_pending(strategy: PendingStrategy) -> None:
    """Add a strategy (a name may be registered once)."""
    if strategy.name in PENDING_STRATEGIES:
        raise ValueError(f"pending strategy {strategy.name!r} is already registered")
    PENDING_STRATEGIES[strategy.name] = strategy


def make_pending(name: str) -> PendingStrategy:
    """The strategy called ``name``; an unknown name raises ``ValueError`` listing the valid."""
    key = str(name).strip().lower()
    if key not in PENDING_STRATEGIES:
        raise ValueError(f"unknown pending strategy {name!r}; valid: {', '.join(pending_names())}")
    return PENDING_STRATEGIES[key]
