"""SparQ-GP-UCB's query-the-expert decision: where to ask the expert for fresh values of f_t.

Mauduit, Berthier & Simonetto (Algorithm 1, line 5; Appendix A): at step t the expert is asked
about ``Q_t`` locations drawn from an approximate ``Q_t``-DPP over the past inputs, with the
model's prior covariance as the DPP kernel (Definition 1: the plain Gram matrix under the current
hyperparameters, no noise term). Dispersed locations are the ones whose fresh answers shrink the
posterior variance the most, which is why the decision is an acquisition: it reads the model and
chooses inputs. The kernel matrix is charged by the model (:meth:`ExactGP.prior_covariance`), the
chain by the sampler (:func:`tvbo.algorithms.sparq.dpp.sample_mdpp`) on the model's work counter.

The UCB that follows the expert's answers (eq. (18)) is here too: :class:`ExpertUCBBeta` is its
beta -- Theorem 3.1's rule (registered ``"sparq-gp-ucb"``) on the model's information gain, or
any schedule of :func:`tvbo.acquisition.make_beta` -- and :func:`maximize_ucb` maximises the
shared :func:`tvbo.acquisition.ucb.ucb` with the shared optimiser from the incumbent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from tvbo.acquisition.beta import BetaSchedule, beta_rule, rule_beta
from tvbo.acquisition.optimize import AcquisitionOptimizer
from tvbo.acquisition.ucb import ucb
from tvbo.algorithms.sparq.dpp import MDPPSample, sample_mdpp
from tvbo.work import WorkCounter

#: the registered beta rule of SparQ-GP-UCB's Theorem 3.1 (:mod:`tvbo.acquisition.beta`)
PAPER_RULE = "sparq-gp-ucb"


class HasPriorCovariance(Protocol):
    """A model that can give its prior covariance matrix over a set of inputs (and counts it)."""

    work: WorkCounter

    def prior_covariance(self, X: np.ndarray, T=None) -> np.ndarray: ...


class HasInformationGain(Protocol):
    """A posterior with per-point noise that gives Theorem 3.1's log-det term
    (:class:`tvbo.models.HasPointNoise`), its data and its predictions (the exact GP)."""

    n: int
    X: np.ndarray
    y: np.ndarray
    work: WorkCounter

    def information_gain(self) -> float: ...

    def predict(self, X, t, *, grad: bool = False, include_noise: bool = False): ...


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


@dataclass(frozen=True)
class ExpertUCBBeta:
    """beta of SparQ-GP-UCB's UCB on the sparse set (eq. (18)).

    ``schedule=None`` is the paper's rule (Theorem 3.1 / Proposition 4, registered
    ``"sparq-gp-ucb"``: ``sqrt(beta_t) = sqrt(2 ln(2/delta) + ln det(Sigma+K) - ln det Sigma) +
    rkhs_norm``, the log-dets from the model's ``information_gain``); a schedule of
    :func:`tvbo.acquisition.make_beta` is called with (d, the model's n, the call count). Both
    return beta for :func:`tvbo.acquisition.ucb.ucb` (which takes its square root).
    """

    schedule: BetaSchedule | None = None
    delta: float = 0.05
    rkhs_norm: float = 1.0

    def __call__(self, model: HasInformationGain, d: int, calls: int) -> float:
        if self.schedule is None:
            return rule_beta(
                beta_rule(PAPER_RULE),
                information_gain=model.information_gain(),
                delta=self.delta,
                rkhs_norm=self.rkhs_norm,
            )
        return self.schedule(d, model.n, calls)


def maximize_ucb(
    model: HasInformationGain,
    beta: float,
    optimizer: AcquisitionOptimizer,
    d: int,
    rng: np.random.Generator,
    *,
    candidates: np.ndarray | None = None,
) -> np.ndarray:
    """argmax_x of the shared UCB on ``model`` (a purely spatial posterior), by the shared
    multi-start optimiser with the incumbent (largest y held) as an extra start; the
    optimiser's work is charged to the model's counter."""

    def acquisition(X: np.ndarray, grad: bool):
        return ucb(model, X, None, beta, grad=grad)

    incumbent = model.X[[int(np.argmax(model.y))]] if model.n else None
    x, _ = optimizer.maximize(
        acquisition,
        d,
        rng,
        candidates=candidates,
        extra_starts=incumbent,
        work=model.work,
    )
    return np.asarray(x, float)
