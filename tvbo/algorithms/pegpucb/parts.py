"""PE-GP-UCB (Prior-Elimination GP-UCB) [P2] and the paper's baselines for an unknown prior.

The learner is given a finite set of candidate GP priors that contains the true one, and does not
know which (spec_sparq_pegpucb.md PART B). Every algorithm of the family is a preset
(:mod:`tvbo.algorithms.presets`) of registered parts:

* the surrogate ``candidate-priors`` (:class:`CandidatePriorsSurrogate`, option ``priors``): ONE
  model per candidate prior on the shared data -- the exact GP with the prior's mean and FIXED
  kernel, hyperparameters and noise (:meth:`tvbo.models.candidate_prior.CandidatePrior.model`;
  no fitting: the prior is the model) -- and which priors are still consulted (``active``);
* one acquisition per selection rule (:class:`PriorSetAcquisition` and its subclasses, options
  ``beta``, ``delta``, ``horizon_steps``, ``n_candidates``, ``search_space``, ``ties``; PE-GP-UCB
  also ``keep_last``, ``test_sigma``): the policy -- which prior to trust, when to drop one --
  built from the shared parts: the models' posteriors and evidences,
  :func:`tvbo.acquisition.ucb.ucb_with_posterior`, the registered beta rules ``pe-gp-ucb`` and
  ``pe-gp-ucb-xi`` (:mod:`tvbo.acquisition.beta`), the tie rules of
  :mod:`tvbo.acquisition.finite` and the posterior over priors
  :func:`tvbo.models.candidate_prior.prior_posterior`;
* the dataset policy ``keep-all`` (every consulted model takes every observation).

The presets; each one's acquisition has the preset's name, except ``pe-gp-ucb``'s
(``prior-elimination``):

``pe-gp-ucb``        Algorithm 1: doubly optimistic argmax over (x, surviving prior); only the
                     selected prior ``p_t`` is tested, on its own accumulated one-step-ahead errors
                     ``|sum eta_i| > sqrt(xi_t |S|) + sum beta_i sigma_{i-1}(x_i)`` -- with the
                     PRE-update std ``sigma_{i-1}`` the proof uses (B.4 [FLAG], D.14); at most one
                     elimination per step, permanent.
``mle-prior``        type-II maximum likelihood: ``p_t = argmax_p log N(y | m^p, K^p + R_p^2 I)``
                     on D_{t-1}, then UCB of that prior (B.7.1).
``bayes-prior``      fully Bayesian: maximise ``sum_p P(p | D_{t-1}) UCB^p`` with a uniform
                     hyperprior (B.7.2); the recorded "selected" prior is the posterior mode.
``regret-balancing`` Appendix D, Algorithm 2 with ``R^p(t) = t`` (play the least-played active
                     prior), ``L_t(p) = mean y - sqrt(xi_t / |S^p|)`` and the elimination rule
                     of line 11 read with ``L_t(p)`` (B.7.3).
``random-search``    uniform choice on X_t (the figures' Random Search, B.7.4).

Choices the paper leaves open (each an option of a part):

* a prior is ``{space_kernel, signal_var, lengthscale_space, noise_var, mean, epsilon,
  time_unit}`` (:class:`~tvbo.models.candidate_prior.CandidatePrior`): kernel ``signal_var *
  corr(|x-x'| / lengthscale_space) * (1 - epsilon) ** (|t-t'| / (2 time_unit))`` (the
  time-varying form of B.1; ``epsilon = 0``: static prior), mean a constant or ``"hills:<n>"``
  (the toy's prior means). ``priors="hills"`` = the toy's 11 priors with the benchmark's DEFAULT
  shape; ``priors={"set": "hills", "signal_var": ..., ...}`` (keys :data:`HILLS_KEYS`) rebuilds
  them with the options of a non-default ``hills`` benchmark; ``priors="benchmark"`` takes the
  candidate priors the benchmark declares (``ProblemInfo.candidate_priors``: ``hills`` with its
  own options; ``temperature-sensors`` with ``prior_paths``, the Intel experiment's
  one-prior-per-previous-day set, :mod:`tvbo.benchmarks.intel_priors`);
  ``space_kernel="empirical"`` reads a covariance matrix over known locations.
  The posterior mean subtracts the prior mean AT THE DATA POINTS (B.2 [FLAG], D.15).
* ``beta="paper"``: Theorem 4.1 case A (the registered rule ``pe-gp-ucb``), ``sqrt(beta_t) =
  sqrt(2 log(T |X| pi^2 t^2 / (3 delta)))`` with ``T = horizon_steps`` and ``|X|`` the
  candidate-set size (the same for every prior, B.5); any :func:`tvbo.acquisition.make_beta`
  schedule is accepted instead (multiplier ``sqrt(beta)``). ``xi_t = 2 R^2 log(|U| pi^2 t^2 / (3
  delta))`` (the rule ``pe-gp-ucb-xi``) with ``R^2`` the tested prior's noise variance. ``t``
  counts every observation ingested so far plus one (the paper's step index). The same ``beta``
  drives all four algorithms (D.18).
* the domain: the benchmark's candidate set when it has one, else ``n_candidates`` Sobol points
  (B.4 [IMPL] "optimise on a grid"). ``search_space`` (a mapping of
  :class:`tvbo.search_space.AlternatingSearchSpace`) restricts the argmax to ``X_t``; the
  toy study passes the benchmark's schedule (the engine's candidate set is fixed).
* ties in the argmax (over ``(x, p)``, over the least-played priors, over equal evidences) are
  broken uniformly at random with the algorithm's seeded generator (``ties="random"``, default)
  or by the lowest index (``ties="first"``, what ``numpy``/``torch`` ``argmax`` does) (D.19).
  It matters on the toy: the priors' tall hills tie exactly, every evidence is 0 before the
  first observation, and with ``"first"`` the baselines try prior 0, 1, 2 first -- the true
  prior is third in that order, which helps MLE and the fully Bayesian rule a lot.
* ``test_sigma="pre"`` (default): the elimination width is ``beta_i sigma_{i-1}(x_i)``, the
  posterior std BEFORE ``y_i`` (the proof's "preservation of p*" needs it); ``"post"`` reads
  Algorithm 1's line 12 as printed, ``sigma_i(x_i)`` after ``y_i`` joined the data (smaller,
  so a stricter test that can eject the true prior) (B.4 [FLAG], D.14). ``eta_i`` always uses
  the pre-update mean (line 11).
* ``keep_last=True``: the last surviving prior is never eliminated (D.20); with
  ``keep_last=False`` eliminating it raises a clear error.
* warm-up observations (the engine's, ``warmup=True``) join every GP but no ``S^p``.
* ``random-search`` consults no model: its surrogate (default ``priors: [{}]``, kept so the
  family shares one option set) takes no observation into a GP, it only counts them.
* the shared UCB floors the posterior variance at 1e-12 under the square root (it keeps its
  gradient finite); with the priors' noise variances > 0 a posterior variance that small would
  take ~1e10 observations of one point, so it never binds here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tvbo.acquisition.beta import BetaSchedule, beta_rule, make_beta, root_beta
from tvbo.acquisition.finite import TIES, argmax, check_ties, joint_argmax, pick
from tvbo.acquisition.ucb import ucb_with_posterior
from tvbo.algorithms.components import (
    Acquisition,
    Composition,
    DatasetEditor,
    PartContext,
    Surrogate,
    register_component,
)
from tvbo.gp.exact import ExactGP
from tvbo.models.candidate_prior import (
    EMPIRICAL,
    PRIOR_KEYS,
    CandidatePrior,
    hills_priors,
    prior_posterior,
)
from tvbo.models.protocol import Prediction
from tvbo.qmc import sobol
from tvbo.search_space import AlternatingSearchSpace

__all__ = [
    "EMPIRICAL",
    "HILLS_KEYS",
    "PRIOR_KEYS",
    "PRIOR_SETS",
    "TEST_SIGMAS",
    "TIES",
    "BayesPriorAcquisition",
    "CandidatePrior",
    "CandidatePriorsSurrogate",
    "MLEPriorAcquisition",
    "PriorEliminationAcquisition",
    "PriorSetAcquisition",
    "RandomSearchAcquisition",
    "RegretBalancingAcquisition",
    "parse_priors",
]

PRIOR_SETS: tuple[str, ...] = ("hills", "benchmark")
#: which posterior std enters PE-GP-UCB's elimination width: sigma_{i-1} (the proof's, default)
#: or sigma_i (Algorithm 1's line 12 as printed; smaller, so the test is stricter) (D.14)
TEST_SIGMAS: tuple[str, ...] = ("pre", "post")
#: ``{"set": "hills", ...}``: the toy's 11 priors with the benchmark's kernel/noise/hill options
#: (pass the SAME values as the ``hills`` benchmark, or the true prior is not in the set;
#: ``priors="benchmark"`` reads them from the benchmark instead)
HILLS_KEYS: tuple[str, ...] = (
    "set",
    "lengthscale",
    "signal_var",
    "noise_var",
    "hill_width",
    "small_height",
    "tall_height",
)
_INTEL_MOVED = (
    "the Intel priors are built by the temperature-sensors benchmark: give it the benchmark "
    "options prior_paths (and prior_noise_var, prior_epsilon_grid; its own step_seconds is the "
    "time unit) and set the algorithm option priors: benchmark"
)


def parse_priors(priors: str | list | tuple | dict) -> list[CandidatePrior]:
    """Candidate priors from a named set (``"hills"``), a prior-set mapping (``{"set": "hills",
    "signal_var": ..., ...}``) or a list of prior mappings (``"benchmark"`` is resolved by the
    algorithm at setup, from the problem)."""
    if isinstance(priors, dict) and priors.get("set") == "hills":
        unknown = sorted(set(priors) - set(HILLS_KEYS))
        if unknown:
            raise ValueError(
                f"hills priors: unknown key(s) {unknown}; valid: {list(HILLS_KEYS)}"
            )
        return parse_priors(hills_priors(**{k: v for k, v in priors.items() if k != "set"}))
    if isinstance(priors, dict):
        if priors.get("set") == "intel":
            raise ValueError(f"priors {{set: intel}}: {_INTEL_MOVED}")
        raise ValueError(
            f"a prior-set mapping needs set: hills (keys {list(HILLS_KEYS)}); got {priors!r}"
        )
    if isinstance(priors, str):
        if priors != "hills":
            raise ValueError(
                f"unknown prior set {priors!r}; valid: hills, benchmark (the benchmark's own "
                "candidate priors), a mapping with set: hills, or a list of priors"
            )
        priors = hills_priors()
    if not isinstance(priors, list | tuple):
        raise ValueError(f"priors must be a prior-set name or a list of mappings, got {priors!r}")
    if len(priors) == 0:
        raise ValueError("the set of candidate priors is empty; give at least one prior")
    out = []
    for i, p in enumerate(priors):
        if isinstance(p, CandidatePrior):
            out.append(p)
            continue
        if not isinstance(p, dict):
            raise ValueError(f"prior {i} must be a mapping, got {p!r}")
        unknown = sorted(set(p) - set(PRIOR_KEYS))
        if unknown:
            raise ValueError(f"prior {i}: unknown key(s) {unknown}; valid: {list(PRIOR_KEYS)}")
        out.append(CandidatePrior(**p))
    return out


# -- the surrogate: one exact GP per candidate prior, on the shared data ------------------------
class CandidatePriorsSurrogate(Surrogate):
    """The candidate priors' models on the shared data (:class:`CandidatePrior` ``.model``).

    ``priors``: a named set (``"hills"``), a prior-set mapping (``{"set": "hills", ...}``), a list
    of prior mappings, or ``"benchmark"`` (resolved at :meth:`bind` from
    ``ProblemInfo.candidate_priors``), see :func:`parse_priors`. ``active[p]`` says whether prior
    ``p`` is still consulted: an eliminated prior's GP takes no more observations (the per-step
    cost is ``|U_{t-1}|`` updates, B.4 [IMPL]); :attr:`n` still counts every observation (the
    dataset size and the paper's step index). Nothing is fitted and nothing is removed.
    """

    kind = "candidate-priors"
    model_set = True

    def __init__(self, *, priors: str | list | dict = "hills") -> None:
        #: ``priors="benchmark"``: resolved at bind from ``ProblemInfo.candidate_priors``
        self.priors: list[CandidatePrior] = [] if priors == "benchmark" else parse_priors(priors)
        self._priors_option = priors
        self.gps: list[ExactGP] = []
        self.active = np.ones(len(self.priors), bool)
        #: False when the acquisition consults no model (random search): no GP takes data
        self.models_used = True
        self.n_observations = 0
        self._data: list[tuple[np.ndarray, float, float]] = []

    def check_composition(self, parts: Composition) -> None:
        if not isinstance(parts.acquisition, PriorSetAcquisition):
            raise ValueError(
                f"surrogate {self.kind!r} needs a candidate-prior acquisition (one of "
                f"{', '.join(sorted(PRIOR_SET_ACQUISITIONS))}), got {parts.acquisition.kind!r}"
            )
        if parts.dataset.kind != "keep-all" or parts.removal is not None:
            raise ValueError(
                f"surrogate {self.kind!r} keeps every observation: dataset must be 'keep-all' "
                f"and removal none, got {parts.dataset.kind!r} and "
                f"{None if parts.removal is None else parts.removal.kind!r}"
            )
        self.models_used = parts.acquisition.uses_models

    def bind(self, context: PartContext, *, editor: DatasetEditor | None = None) -> None:
        super().bind(context, editor=editor)
        if self._priors_option == "benchmark":
            declared = tuple(getattr(context.problem, "candidate_priors", ()) or ())
            if not declared:
                raise ValueError(
                    "priors: benchmark, but the benchmark declares no candidate priors (hills "
                    "does; temperature-sensors with prior_paths); give the priors instead"
                )
            self.priors = parse_priors(list(declared))
        self.gps = [p.model(context.work) for p in self.priors]
        self.active = np.ones(len(self.priors), bool)
        self.n_observations = 0
        self._data = []

    @property
    def n(self) -> int:
        return self.n_observations

    @property
    def X(self) -> np.ndarray:
        d = int(self.context.problem.d)
        return np.array([x for x, _, _ in self._data], float).reshape(-1, d)

    @property
    def T(self) -> np.ndarray:
        return np.array([t for _, t, _ in self._data], float)

    @property
    def y(self) -> np.ndarray:
        return np.array([y for _, _, y in self._data], float)

    def append(self, x: np.ndarray, t: float, y: float) -> None:
        """Add the observation to the GPs of the active priors (all of them until one is
        eliminated; none when no model is consulted)."""
        x = np.asarray(x, float).reshape(-1)
        if self.models_used:
            for p, gp in enumerate(self.gps):
                if self.active[p]:
                    gp.append(x, t, y)
        self.n_observations += 1
        self._data.append((x, float(t), float(y)))

    def deactivate(self, p: int) -> None:
        """Stop consulting prior ``p``: its GP takes no more observations (permanent)."""
        self.active[p] = False

    def remove(self, i: int) -> None:
        raise ValueError(
            f"surrogate {self.kind!r} keeps every observation (its models are the candidate "
            "priors); use dataset 'keep-all'"
        )

    def fit(self) -> None:
        """Nothing to fit: each prior's kernel, hyperparameters and noise are given."""

    def predict(self, X, t, *, grad=False, include_noise=False) -> Prediction:
        raise ValueError(
            f"surrogate {self.kind!r} is a set of models: predict with one prior's model, "
            "gps[p].predict"
        )

    def prior_options(self) -> str | dict | list[dict]:
        """The ``priors`` option as the run file records it (JSON): a named set or prior-set
        mapping as given (compact, and enough to rebuild the priors), else one mapping per prior
        with arrays (an empirical covariance, its locations) as nested lists."""
        if isinstance(self._priors_option, str | dict):
            return self._priors_option
        return [
            {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in p.__dict__.items()}
            for p in self.priors
        ]

    def options(self) -> dict[str, Any]:
        return {"priors": self.prior_options()}


# -- the acquisitions: one per selection rule ------------------------------------------------
class PriorSetAcquisition(Acquisition):
    """Shared machinery of the selection rules: the finite domain, X_t, beta, xi, the tie rule.

    Works with the ``candidate-priors`` surrogate only (checked at construction, when it is
    kept as :attr:`models`: the per-prior statistics are sized from its priors at bind).
    """

    #: whether the rule consults the priors' models (random search does not)
    uses_models = True

    def __init__(
        self,
        *,
        beta: str | float | dict = "paper",
        delta: float = 0.1,
        horizon_steps: int = 100,
        n_candidates: int = 1024,
        search_space: dict | None = None,
        ties: str = "random",
    ) -> None:
        self.ties = check_ties(ties)
        if not 0.0 < float(delta) < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        if not (isinstance(horizon_steps, int) and horizon_steps >= 1):
            raise ValueError(f"horizon_steps must be an integer >= 1, got {horizon_steps!r}")
        if not (isinstance(n_candidates, int) and n_candidates >= 1):
            raise ValueError(f"n_candidates must be an integer >= 1, got {n_candidates!r}")
        self.delta = float(delta)
        self.horizon_steps = horizon_steps
        self.n_candidates = n_candidates
        self.beta_spec = beta
        self._schedule: BetaSchedule | None = None if beta == "paper" else make_beta(beta)
        self.search_space = AlternatingSearchSpace.from_options(search_space)
        self.candidates = np.empty((0, 0))
        #: the candidate-priors surrogate this rule reads (set by check_composition)
        self.models: CandidatePriorsSurrogate | None = None
        #: prior used for the last proposal (-1 before the first)
        self.selected = -1
        self._init_policy(0)

    def check_composition(self, parts: Composition) -> None:
        if not isinstance(parts.surrogate, CandidatePriorsSurrogate):
            raise ValueError(
                f"acquisition {self.kind!r} needs the 'candidate-priors' surrogate, got "
                f"{parts.surrogate.kind!r}"
            )
        self.models = parts.surrogate

    def bind(self, context: PartContext) -> None:
        super().bind(context)
        d = context.problem.d
        if context.problem.candidates is not None:
            self.candidates = np.asarray(context.problem.candidates, float).reshape(-1, d)
        else:
            # = scipy.stats.qmc.Sobol(d, scramble=True, seed=rng).random(n), without scipy.stats
            self.candidates = sobol(d, self.n_candidates, context.rng)
        self._init_policy(len(self.models.priors))

    def _init_policy(self, n: int) -> None:  # noqa: B027 - optional hook
        """Subclass hook: (re)build the per-prior policy state for ``n`` priors (at
        construction with none, at bind once the priors are known)."""

    # -- shared quantities ----------------------------------------------------------------------
    @property
    def t_index(self) -> int:
        """The paper's step index t of the NEXT query (observations ingested + 1)."""
        return self.models.n + 1

    @property
    def priors(self) -> list[CandidatePrior]:
        return self.models.priors

    @property
    def active(self) -> np.ndarray:
        return self.models.active

    def beta(self, t: int) -> float:
        """beta at step ``t``: the rule ``pe-gp-ucb`` (Theorem 4.1 case A) or the schedule."""
        if self._schedule is None:
            return beta_rule("pe-gp-ucb")(
                horizon_steps=self.horizon_steps,
                n_candidates=len(self.candidates),
                t=t,
                delta=self.delta,
            )
        return self._schedule(self.context.problem.d, self.models.n, t)

    def beta_t(self, t: int) -> float:
        """Confidence multiplier of sigma at step ``t``, ``sqrt(beta)``."""
        return root_beta(self.beta(t))

    def xi_t(self, t: int, noise_var: float) -> float:
        """Noise-concentration radius of Lemma 5.1 with delta_B = delta / 2 (B.5)."""
        return beta_rule("pe-gp-ucb-xi")(
            noise_var=noise_var, n_priors=len(self.priors), t=t, delta=self.delta
        )

    def available(self, t: float) -> np.ndarray:
        """Indices of the candidates in X_t."""
        if self.search_space is None:
            return np.arange(len(self.candidates))
        idx = np.flatnonzero(self.search_space.mask(self.candidates, t))
        if len(idx) == 0:
            raise RuntimeError(f"the search space is empty at t={t}")
        return idx

    def ucb(
        self, p: int, X: np.ndarray, t: float, beta: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(UCB^p, mu^p, sigma^p)`` at ``X`` for time ``t`` (``beta``: not its root), from
        prior ``p``'s model conditioned on the data so far."""
        return ucb_with_posterior(self.models.gps[p], X, t, beta)

    def pick(self, tied: np.ndarray | list) -> int:
        """One of the tied indices ``tied`` by the ``ties`` rule (D.19)."""
        return pick(tied, self.ties, self.context.rng)

    def argmax_random(self, values: np.ndarray) -> int:
        """Index of the maximum of ``values``, ties broken by the ``ties`` rule (D.19)."""
        return argmax(values, self.ties, self.context.rng)

    def options(self) -> dict[str, Any]:
        return {
            "beta": self.beta_spec,
            "delta": self.delta,
            "horizon_steps": self.horizon_steps,
            "n_candidates": self.n_candidates,
            "search_space": None if self.search_space is None else self.search_space.as_dict(),
            "ties": self.ties,
        }


class PriorEliminationAcquisition(PriorSetAcquisition):
    """PE-GP-UCB, Algorithm 1 of [P2] (see the module docstring for the choices)."""

    kind = "prior-elimination"

    def __init__(
        self,
        *,
        beta: str | float | dict = "paper",
        delta: float = 0.1,
        horizon_steps: int = 100,
        n_candidates: int = 1024,
        search_space: dict | None = None,
        ties: str = "random",
        keep_last: bool = True,
        test_sigma: str = "pre",
    ) -> None:
        super().__init__(beta=beta, delta=delta, horizon_steps=horizon_steps,
                         n_candidates=n_candidates, search_space=search_space, ties=ties)
        if test_sigma not in TEST_SIGMAS:
            raise ValueError(
                f"unknown test_sigma {test_sigma!r}; valid: {', '.join(TEST_SIGMAS)}"
            )
        self.keep_last = bool(keep_last)
        self.test_sigma = test_sigma

    def _init_policy(self, n: int) -> None:
        #: per prior: sum of eta_i, |S^p|, sum of beta_i sigma^p_{i-1}(x_i) over i in S^p
        self.sum_eta = np.zeros(n)
        self.count = np.zeros(n, int)
        self.sum_width = np.zeros(n)
        #: (p_t, x_t, mu^{p_t}_{t-1}(x_t), beta_t, sigma^{p_t}_{t-1}(x_t)) of the last proposal
        self._pending: tuple[int, np.ndarray, float, float, float] | None = None
        #: (p_t, eta_t, beta_t, t) awaiting the post-update sigma (``test_sigma="post"``)
        self._post: tuple[int, float, float, int] | None = None
        self.eliminated = -1
        self.last_statistic = math.nan
        self.last_threshold = math.nan

    def select(self, surrogate: Surrogate, t: float) -> np.ndarray:
        idx = self.available(t)
        X = self.candidates[idx]
        beta = self.beta(self.t_index)
        act = np.flatnonzero(self.active)
        rows = [self.ucb(int(p), X, t, beta) for p in act]
        r, j = joint_argmax([u for u, _, _ in rows], self.ties, self.context.rng)  # (prior, x)
        p, (_, mu, sd) = int(act[r]), rows[r]
        x = X[j].copy()
        self.selected = p
        # the PRE-update posterior (conditioned on D_{t-1} only) is stored now, before y exists
        self._pending = (p, x, float(mu[j]), root_beta(beta), float(sd[j]))
        return x

    def before_append(self, surrogate: Surrogate, x: np.ndarray, t: float, y: float, *,
                      warmup: bool) -> None:
        """``test_sigma="pre"``: test with the pending pre-update width, before the GPs take
        ``y`` (an eliminated prior's GP never takes it)."""
        x = np.asarray(x, float).reshape(-1)
        self.eliminated = -1
        self._post = None
        pending, self._pending = self._pending, None
        if warmup or pending is None or not np.allclose(pending[1], x):
            return
        p, _, mu, beta, sd = pending
        step = self.t_index
        if self.test_sigma == "pre":
            self.record_error(p, float(y) - mu, beta * sd, step)
            return
        self._post = (p, float(y) - mu, beta, step)

    def after_append(self, surrogate: Surrogate, x: np.ndarray, t: float, y: float, *,
                     warmup: bool) -> None:
        """``test_sigma="post"``: Algorithm 1's line 12 read literally, sigma^{p_t}_t(x_t)
        AFTER y_t joined D_t (``eta`` keeps the pre-update mean)."""
        if self._post is None:
            return
        (p, eta, beta, step), self._post = self._post, None
        x = np.asarray(x, float).reshape(-1)
        sd_post = float(np.sqrt(self.models.gps[p].predict(x[None, :], t).var[0]))
        self.record_error(p, eta, beta * sd_post, step)

    def record_error(self, p: int, eta: float, width: float, t: int) -> bool:
        """Add step ``t``'s error ``eta`` and width ``beta_t sigma_{t-1}`` to S^p; run the test.

        Returns True when prior ``p`` is eliminated (line 12-13 of Algorithm 1).
        """
        self.sum_eta[p] += eta
        self.count[p] += 1
        self.sum_width[p] += width
        xi = self.xi_t(t, self.priors[p].noise_var)
        self.last_statistic = abs(self.sum_eta[p])
        self.last_threshold = math.sqrt(xi * self.count[p]) + self.sum_width[p]
        if self.last_statistic <= self.last_threshold:
            return False
        if int(self.active.sum()) == 1:
            if self.keep_last:
                return False
            raise RuntimeError(
                f"PE-GP-UCB would eliminate prior {p}, the last surviving one: the true prior "
                "is not in the candidate set (or the confidence parameters are too small)"
            )
        self.models.deactivate(p)
        self.eliminated = p
        return True

    def state(self) -> dict[str, float]:
        return {
            "selected_prior": float(self.selected),
            "n_priors": float(self.active.sum()),
            "eliminated_prior": float(self.eliminated),
            "test_statistic": float(self.last_statistic),
            "test_threshold": float(self.last_threshold),
            "beta": self.beta_t(self.t_index),
        }

    def options(self) -> dict[str, Any]:
        return {**super().options(), "keep_last": self.keep_last, "test_sigma": self.test_sigma}


class MLEPriorAcquisition(PriorSetAcquisition):
    """Type-II maximum likelihood choice of the prior, then its UCB (B.7.1)."""

    kind = "mle-prior"

    def _init_policy(self, n: int) -> None:
        self.log_evidence = np.zeros(n)

    def select(self, surrogate: Surrogate, t: float) -> np.ndarray:
        X = self.candidates[self.available(t)]
        self.log_evidence = np.array([gp.log_marginal_likelihood() for gp in self.models.gps])
        p = self.argmax_random(self.log_evidence)
        self.selected = p
        u, _, _ = self.ucb(p, X, t, self.beta(self.t_index))
        return X[self.argmax_random(u)].copy()

    def state(self) -> dict[str, float]:
        return {
            "selected_prior": float(self.selected),
            "n_priors": float(len(self.priors)),
            "beta": self.beta_t(self.t_index),
        }


class BayesPriorAcquisition(PriorSetAcquisition):
    """Fully Bayesian: argmax of the posterior-weighted UCB over the priors (B.7.2)."""

    kind = "bayes-prior"

    def _init_policy(self, n: int) -> None:
        self.posterior = np.full(n, 1.0 / max(n, 1))

    def select(self, surrogate: Surrogate, t: float) -> np.ndarray:
        X = self.candidates[self.available(t)]
        lml = np.array([gp.log_marginal_likelihood() for gp in self.models.gps])
        self.posterior = prior_posterior(lml)  # uniform hyperprior P(p) = 1/|U|
        beta = self.beta(self.t_index)
        total = np.zeros(len(X))
        for p, wp in enumerate(self.posterior):
            total += wp * self.ucb(p, X, t, beta)[0]
        self.selected = self.argmax_random(self.posterior)
        return X[self.argmax_random(total)].copy()

    def state(self) -> dict[str, float]:
        return {
            "selected_prior": float(self.selected),
            "n_priors": float(len(self.priors)),
            "selected_posterior": float(self.posterior[self.selected])
            if self.selected >= 0
            else math.nan,
            "beta": self.beta_t(self.t_index),
        }


class RegretBalancingAcquisition(PriorSetAcquisition):
    """Regret Balancing, [P2] Appendix D Algorithm 2 with R^p(t) = t (B.7.3)."""

    kind = "regret-balancing"

    def _init_policy(self, n: int) -> None:
        self.count = np.zeros(n, int)
        self.sum_y = np.zeros(n)
        self.sum_width = np.zeros(n)
        #: (p_t, x_t, beta_t sigma^{p_t}_{t-1}(x_t)) of the last proposal
        self._pending: tuple[int, np.ndarray, float] | None = None
        self.n_eliminated = 0

    def select(self, surrogate: Surrogate, t: float) -> np.ndarray:
        X = self.candidates[self.available(t)]
        act = np.flatnonzero(self.active)
        plays = self.count[act]
        p = int(act[self.pick(np.flatnonzero(plays == plays.min()))])
        beta = self.beta(self.t_index)
        u, _, sd = self.ucb(p, X, t, beta)
        j = self.argmax_random(u)
        self.selected = p
        self._pending = (p, X[j].copy(), root_beta(beta) * float(sd[j]))
        return X[j].copy()

    def before_append(self, surrogate: Surrogate, x: np.ndarray, t: float, y: float, *,
                      warmup: bool) -> None:
        """Charge the played prior, then drop the dominated ones before the GPs take ``y``."""
        x = np.asarray(x, float).reshape(-1)
        self.n_eliminated = 0
        pending, self._pending = self._pending, None
        if not warmup and pending is not None and np.allclose(pending[1], x):
            p, _, width = pending
            self.count[p] += 1
            self.sum_y[p] += float(y)
            self.sum_width[p] += width
            self._balance(self.t_index)

    def _balance(self, t: int) -> None:
        """Lines 9-11: once every active prior was played, drop the dominated ones."""
        act = np.flatnonzero(self.active)
        if np.any(self.count[act] == 0):
            return
        n = self.count[act]
        lower = np.array(
            [
                self.sum_y[p] / self.count[p]
                - math.sqrt(self.xi_t(t, self.priors[p].noise_var) / self.count[p])
                for p in act
            ]
        )
        upper = lower + self.sum_width[act] / n
        keep = upper >= lower.max()
        for p in act[~keep]:
            self.models.deactivate(int(p))
        self.n_eliminated = int((~keep).sum())

    def state(self) -> dict[str, float]:
        return {
            "selected_prior": float(self.selected),
            "n_priors": float(self.active.sum()),
            "n_eliminated": float(self.n_eliminated),
            "beta": self.beta_t(self.t_index),
        }


class RandomSearchAcquisition(PriorSetAcquisition):
    """Random Search of [P2]'s figures (undefined there, B.7.4): uniform on X_t, no model.

    It takes the family's options (validated, recorded; only ``n_candidates``,
    ``search_space`` matter) so one ``algorithm_options`` block fits every preset of the family.
    """

    kind = "random-search"
    uses_models = False
    #: one uniform draw per query: no work to count, declared (Algorithm.compute_free), so
    #: `compute: counted` prices it 0 s instead of refusing it
    compute_free = True
    #: a uniform draw from X_t: the data never changes the query (Algorithm.open_loop)
    open_loop = True

    def select(self, surrogate: Surrogate, t: float) -> np.ndarray:
        idx = self.available(t)
        return self.candidates[idx[self.context.rng.integers(len(idx))]].copy()


#: the acquisition kinds of the family
PRIOR_SET_ACQUISITIONS: dict[str, type[PriorSetAcquisition]] = {
    cls.kind: cls
    for cls in (
        PriorEliminationAcquisition,
        MLEPriorAcquisition,
        BayesPriorAcquisition,
        RegretBalancingAcquisition,
        RandomSearchAcquisition,
    )
}

register_component("surrogate", CandidatePriorsSurrogate)
for _cls in PRIOR_SET_ACQUISITIONS.values():
    register_component("acquisition", _cls)
