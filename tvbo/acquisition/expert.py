"""SparQ-GP-UCB's query-the-expert decision: where to ask the expert for fresh values of f_t.

Mauduit, Berthier & Simonetto (Algorithm 1, line 5; Appendix A): at step t the expert is asked
about ``Q_t`` locations drawn from an approximate ``Q_t``-DPP over the past inputs, with the
model's prior covariance as the DPP kernel (Definition 1: the plain Gram matrix under the current
hyperparameters, no noise term). Dispersed locations are the ones whose fresh answers shrink the
posterior variance the most, which is why the decision is an acquisition: it reads the model and
chooses inputs. The kernel matrix is charged by the model (:meth:`ExactGP.prior_covariance`), the
chain by the sampler (:func:`tvbo.acquisition.dpp.sample_mdpp`) on the model's work counter.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from tvbo.acquisition.dpp import MDPPSample, sample_mdpp
from tvbo.work import WorkCounter


class HasPriorCovariance(Protocol):
    """A model that can give its prior covariance matrix over a set of inputs (and counts it)."""

    work: WorkCounter

    def prior_covariance(self, X: np.ndarray, T=None) -> np.ndarray: ...


def n_expert_queries(t: float, *, scale: float = 6.0, fixed: int | None = None) -> int:
    """``Q_t = ceil(scale * ln t)`` (the experiments' ``6 log T`` per step), or ``fixed``."""
    if fixed is not None:
        return int(fixed)
    if t <= 1:
        return 0
    return int(math.ceil(scale * math.log(t) - 1e-12))


def mcmc_steps(ground_size: int, queries: int, *, factor: float = 1.0,
               fixed: int | None = None) -> int:
    """Swap moves of the chain: ``ceil(factor * N * Q_t)`` (the spec's practical c N M), or
    ``fixed``."""
    if fixed is not None:
        return int(fixed)
    return int(math.ceil(factor * ground_size * queries))


def expert_locations(
    model: HasPriorCovariance,
    ground: np.ndarray,
    queries: int,
    n_steps: int,
    rng: np.random.Generator,
) -> MDPPSample:
    """Indices into ``ground`` (N, d) of the ``queries`` locations to send to the expert.

    Algorithm 2 of the paper (swap MCMC from Algorithm 3's greedy MAP start) for ``n_steps``
    moves, on the DPP kernel ``model.prior_covariance(ground)``. ``queries`` must be in [1, N].
    """
    K = model.prior_covariance(ground)
    return sample_mdpp(K, queries, n_steps, rng, work=model.work)
