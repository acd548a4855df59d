"""SparQ-GP-UCB: time-varying GP-UCB with an expert (Mauduit, Berthier & Simonetto).

Uncertainty injection turns the time-varying problem into a sequence of static heteroscedastic
ones: at step t an observation of age a = t - i is an observation of the CURRENT function with
noise variance ``sigma^2 (a^2 + 1)`` (eq. (10)/(15)). Observations whose injected variance
exceeds ``g(t) = sigma^2 log t`` are discarded; ``Q_t = 6 log t`` locations, drawn from an
approximate Q_t-DPP over the past inputs (Appendix A), are sent to an EXPERT who answers with
fresh noisy values of f_t; the exact heteroscedastic GP posterior on the kept recent observations
+ the expert answers ((16)-(17)) drives UCB (18). Spec: ``spec_sparq_pegpucb.md`` PART A; open
questions PART D (resolved below).

The algorithm is the preset ``sparq-gp-ucb`` of three registered parts
(:mod:`tvbo.algorithms.presets`), run by the shared iteration protocol
(:class:`~tvbo.algorithms.composed.ComposedAlgorithm`):

* surrogate ``sparq-gp`` (:class:`SparQGPSurrogate`): every bandit observation (the history)
  and the expert answers of the current step; the exact GP with per-point noise
  (:class:`tvbo.gp.exact.ExactGP`, :class:`tvbo.models.HasPointNoise`) conditioned on the
  sparse set, and the hyperparameter fit on its homoscedastic part;
* dataset policy ``uncertainty-injection`` (:class:`UncertaintyInjection`): ages, injected
  variances, the threshold g(t) and the kept mask -- it masks observations, never removes them
  (every past input stays in the expert's ground set);
* acquisition ``expert-ucb`` (:class:`ExpertUCB`): the query-the-expert decision (the M-DPP
  locations of :mod:`tvbo.algorithms.sparq.expert` / :mod:`tvbo.algorithms.sparq.dpp`), the
  capability :class:`~tvbo.algorithms.components.SideQueries` through which the composed
  algorithm serves the engine's side queries, then the UCB with beta
  :class:`tvbo.algorithms.sparq.expert.ExpertUCBBeta` (Theorem 3.1's registered rule
  ``"sparq-gp-ucb"`` or a schedule).

Nothing here computes a posterior, a UCB or a beta, or counts work: the models, the sampler and
the optimiser do, on the run's counter.

On the virtual clock (``tvbo/sim/engine.py``): the engine calls ``side_queries`` before each
post-warm-up ``propose`` (phase ``side``), asks its expert -- a separate SimPy resource whose
cost and noise are the ENGINE options ``expert_cost`` / ``expert_noise_var``
(``tvbo.simulate(..., expert_cost=...)``, ``tvbo run --expert-cost``) -- and hands the answers
to ``ingest_side``. One iteration: side queries (discard, DPP) -> answers -> ``propose`` (fit on
the expert answers and the fresh y_t, condition, UCB) -> evaluation -> ``ingest`` (store y_t).

Decisions (spec_sparq_pegpucb.md; PART D question numbers in brackets), each an option of the
part named in brackets:

* **Age and t** (``age_unit``, policy): ``"step"`` (default, the paper is discrete-time): the
  i-th bandit observation (warm-up included) has step index i, the current step t is the number
  of observations ingested, age = t - i. ``"time"``: age = (now - t_i) / ``time_unit`` and
  t = now / ``time_unit`` on the virtual clock (for benchmarks whose drift is per second).
* **Injected variance** (``injection``, policy, [9]): ``"paper"`` ``sigma^2 (a^2 + 1)``
  (default, eq. (10) literally) or ``"drift"`` ``drift^2 a^2 / 3 + sigma^2``.
* **Discarding** (policy, [1]): ``g(t) = sigma^2 ln t`` (natural log; ``threshold="power"``
  gives ``sigma^2 t^threshold_exponent``, any o(t^{1/4}) is allowed); ``keep_newest=True``
  always keeps the fresh y_t (the literal rule drops everything at t <= 2). With ln, the kept
  ages are {0,1} for 8 <= t <= 148 and {0,1,2} up to t = 22026: O(sqrt(log t)) steps, not the
  "O(log t)" of the contributions list -- we follow the stated threshold.
* **Expert queries** (acquisition, [2], [3]): ``Q_t = ceil(query_scale * ln t)`` per step
  (default 6, the experiments' "6 log T", evaluated at the current t so the count grows like the
  theory's O(log^d t)); ``n_queries`` fixes it instead. The DPP ground set is the DISTINCT past
  inputs (``ground_set="all"``, §3.2 "previously observed points"; ``"discarded"`` restricts it
  to the discarded ones); Q_t is capped at its size, so one step never queries a location twice;
  an expert location may coincide with a kept recent point. Answers are not reused at the next
  step (the paper lists reuse as future work); a new DPP sample is drawn every step.
* **Sampler** (acquisition, [4]): Algorithm 2 (swap MCMC) from Algorithm 3's greedy MAP start,
  ``N~ = ceil(mcmc_factor * N * Q_t)`` iterations (spec's practical c N M, c = 1), or
  ``mcmc_steps``. The DPP kernel is the plain spatial Gram matrix with the current
  hyperparameters (no noise term, Definition 1).
* **Noise** (surrogate, [5]): ``noise_var`` sigma^2 is the ML-fitted noise (default None) or a
  known value in output units (the paper's 0.01); the algorithm's belief about the expert's
  noise, ``expert_noise_var`` sigma-bar^2, defaults to sigma^2 (it satisfies both proof
  requirements, spec §A.4.4). The TRUE expert noise and cost are engine options.
* **beta** (acquisition, [6]): ``beta="paper"`` is Theorem 3.1 / Proposition 4, the registered
  rule ``"sparq-gp-ucb"``: ``beta_t = sqrt(2 ln(2/delta) + ln det(Sigma+K) - ln det Sigma) +
  rkhs_norm`` on the sparse set (the log-dets from the model's ``information_gain``),
  multiplying sigma (delta = 0.05 as in §4; ``rkhs_norm`` B = 1 in standardised units since
  ||f_t||_k is unknown). Any schedule of :func:`tvbo.acquisition.make_beta` (e.g. ``"wdbo"``,
  the shared 0.2 d log 2n; or a number) is the practical option; those multiply sigma by
  sqrt(beta), as in every other UCB of the package.
* **Hyperparameters** (surrogate, [7]): ``"ml"`` (default): (signal variance, lengthscale,
  noise) maximise the marginal likelihood every step, warm-started, on the homoscedastic part of
  the sparse set (the expert answers and the fresh observation, all of noise sigma^2 when
  sigma-bar^2 = sigma^2); ``"fixed"`` keeps ``initial``. y is standardised by the mean and std
  of the sparse set (f is in [1, 3] on the moving bump: a zero prior mean on raw y would be
  wrong). Kernel: squared exponential (``space_kernel="rbf"``, the paper's §4.1 choice).
  ``fit_cold_start`` (default True): every fit runs L-BFGS-B from the warm start AND from
  ``initial`` and keeps the higher likelihood. A warm start alone can lock the run in the
  "everything is noise" local optimum (lengthscale ~8 cube widths, signal variance at its floor,
  noise 1): the flat mean sends every query to an edge of the box, which adds no new distinct
  input, so the expert's ground set and the fit set never change again. Measured on the moving
  bump, seed 2 of the paper study: trapped from step 20 to 480 (average regret 1.80 against
  0.15-0.23 for the other nine seeds), although the structured optimum had a log likelihood
  7-13 nats higher at every step. The extra start costs one small fit (n <= Q_t + 3 points).
* **x_{t+1}** (acquisition, [8]): multi-start L-BFGS-B over [0,1]^d (Sobol raw samples, the
  package's acquisition optimiser); the first query is the engine's warm-up (or uniform random).

State recorded every iteration: ``n_expert`` (Q_t answered), ``n_kept``, ``n_discarded``,
``history_size``, ``threshold`` g(t), ``max_kept_var``, ``beta``, ``information_gain``,
``dpp_logdet``, ``mcmc_acceptance``, ``mcmc_steps``, ``cold_start_won`` (1 when this step's fit
kept the start from ``initial``) and the fitted ``signal_var``, ``lengthscale_space``,
``noise_var`` (sigma^2, output units). ``n_kept``, ``n_discarded`` and ``threshold`` are those
of the expert's decision (the start of the step).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from tvbo.acquisition import AcquisitionOptimizer, make_beta
from tvbo.acquisition.beta import root_beta
from tvbo.algorithms.components import (
    Acquisition,
    Composition,
    DatasetEditor,
    DatasetPolicy,
    PartContext,
    RemovalRule,
    Surrogate,
    register_component,
)
from tvbo.algorithms.sparq.expert import (
    ExpertUCBBeta,
    expert_locations,
    maximize_ucb,
    mcmc_steps,
    n_expert_queries,
)
from tvbo.gp.exact import ExactGP, Prediction
from tvbo.gp.fit import fit_hyperparameters
from tvbo.gp.kernels import HyperparameterBounds, Hyperparameters, SeparableKernel, correlation

AGE_UNITS: tuple[str, ...] = ("step", "time")
INJECTIONS: tuple[str, ...] = ("paper", "drift")
THRESHOLDS: tuple[str, ...] = ("log", "power")
GROUND_SETS: tuple[str, ...] = ("all", "discarded")
HYPERPARAMETER_MODES: tuple[str, ...] = ("ml", "fixed")

__all__ = [
    "ExpertUCB",
    "SparQGPSurrogate",
    "SparseSetRule",
    "UncertaintyInjection",
    "discard_threshold",
    "injected_variance",
    "kept_mask",
    "n_expert_queries",
]


def _choice(option: str, value: Any, valid: tuple[str, ...]) -> None:
    if value not in valid:
        raise ValueError(f"unknown {option} {value!r}; valid: {', '.join(valid)}")


def _positive(option: str, value: Any) -> None:
    if isinstance(value, bool) or not (
        isinstance(value, int | float) and math.isfinite(value) and value > 0
    ):
        raise ValueError(f"{option} must be a finite number > 0, got {value!r}")


def _count_or_none(option: str, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ValueError(f"{option} must be None or an integer >= 0, got {value!r}")


# ------------------------------------------------------------------------------------------------
# the formulas of §2.1 / §3 (module functions so tests can check them directly)
# ------------------------------------------------------------------------------------------------
def injected_variance(
    ages: np.ndarray, noise_var: float, *, injection: str = "paper", drift: float = 1.0
) -> np.ndarray:
    """Noise variance of observations of age ``a`` seen as observations of the current f.

    ``"paper"``: ``sigma^2 (a^2 + 1)`` (eq. (10), used literally, spec §A.3 [IMPL]);
    ``"drift"``: ``drift^2 a^2 / 3 + sigma^2``, the paper's own derivation with
    ``f_{t+1} = f_t + v``, ``v ~ U(-drift, drift)`` (PART D, question 9).
    """
    if injection not in INJECTIONS:
        raise ValueError(f"unknown injection {injection!r}; valid: {', '.join(INJECTIONS)}")
    a = np.asarray(ages, float)
    if np.any(a < 0):
        raise ValueError("observation ages must be >= 0")
    if injection == "paper":
        return noise_var * (a * a + 1.0)
    return drift * drift * a * a / 3.0 + noise_var


def discard_threshold(
    t: float, noise_var: float, *, kind: str = "log", exponent: float = 0.2
) -> float:
    """``g(t)``: ``sigma^2 ln t`` (``"log"``, the paper's example) or ``sigma^2 t^exponent``.

    Any ``g = o(t^{1/4})`` keeps the regret proof (§3), so ``"power"`` needs exponent < 1/4.
    For ``t < 1`` (before the first step) nothing can be kept: ``-inf``.
    """
    if kind not in THRESHOLDS:
        raise ValueError(f"unknown threshold {kind!r}; valid: {', '.join(THRESHOLDS)}")
    if t < 1:
        return -math.inf
    if kind == "log":
        return noise_var * math.log(t)
    return noise_var * t**exponent


def kept_mask(
    variances: np.ndarray, threshold: float, *, keep_newest: bool = True, newest: int | None = None
) -> np.ndarray:
    """Observations whose injected variance is <= the threshold (Algorithm 1, line 4).

    With ``keep_newest`` the observation at index ``newest`` (default: the last) is always kept:
    under the literal rule nothing survives at t <= 2 (ln t < 1), not even the fresh y_t
    (PART D, question 1).
    """
    v = np.asarray(variances, float)
    keep = v <= threshold
    if keep_newest and v.size:
        keep[-1 if newest is None else newest] = True
    return keep


# ------------------------------------------------------------------------------------------------
# the surrogate: the history, the expert answers, the GP with per-point noise on the sparse set
# ------------------------------------------------------------------------------------------------
@runtime_checkable
class SparseSetRule(Protocol):
    """What the ``sparq-gp`` surrogate needs from its dataset policy: which of its held bandit
    observations are kept now and their injected noise variances (output units), the threshold
    g(t) and the paper's t. :class:`UncertaintyInjection` is the one implementation."""

    def current_t(self, now: float | None = None) -> float: ...

    def injected(self, now: float | None = None) -> np.ndarray: ...

    def threshold(self, now: float | None = None) -> float: ...

    def kept(self, now: float | None = None) -> np.ndarray: ...


class SparQGPSurrogate(Surrogate):
    """SparQ-GP-UCB's model: the exact GP with per-point noise on the sparse set (16)-(17).

    Holds every bandit observation (the history: the expert's DPP ground set and the ages) and
    the expert answers of the current step. The model conditions on the *sparse set* -- the
    history's observations its dataset policy keeps (:class:`SparseSetRule`), with their injected
    variances, and the expert answers with sigma-bar^2 -- so ``n``, ``X``, ``T``, ``y`` are that
    set's (``n`` is the run's dataset size). The hyperparameters are fitted on the homoscedastic
    part (the expert answers and the fresh y_t) with a GP without per-point noise (``fit_gp``,
    whose prior covariance is also the DPP kernel); y is standardised by that fit set's mean and
    std. Options: see the module docstring (noise, hyperparameters). ``clock``: the time the
    sparse set refers to (``at``), set by the acquisition at the expert's decision and at the
    proposal and by the policy at each ingestion.

    It never removes observations (its policy masks them): ``remove``/``clear`` are errors.
    """

    kind = "sparq-gp"

    def __init__(
        self,
        *,
        noise_var: float | None = None,
        expert_noise_var: float | None = None,
        space_kernel: str = "rbf",
        hyperparameters: str = "ml",
        bounds: Mapping[str, Any] | None = None,
        initial: Mapping[str, float] | None = None,
        fit_max_iter: int = 50,
        fit_cold_start: bool = True,
    ) -> None:
        _choice("hyperparameters", hyperparameters, HYPERPARAMETER_MODES)
        for option, value in (("noise_var", noise_var), ("expert_noise_var", expert_noise_var)):
            if value is not None and not (
                isinstance(value, int | float) and math.isfinite(value) and value > 0
            ):
                raise ValueError(f"{option} must be None or a finite number > 0, got {value!r}")
        if fit_max_iter < 1:
            raise ValueError(f"fit_max_iter must be >= 1, got {fit_max_iter!r}")
        correlation(space_kernel)
        init = {"signal_var": 1.0, "lengthscale_space": 0.1, "noise_var": 0.01}
        unknown = sorted(set(initial or {}) - set(init))
        if unknown:
            raise ValueError(f"initial: unknown hyperparameter(s) {unknown}; valid: {sorted(init)}")
        init.update(initial or {})
        self.noise_var = noise_var
        self.expert_noise_var = expert_noise_var
        self.space_kernel = space_kernel
        self.hyperparameter_mode = hyperparameters
        self.bounds_option = dict(bounds or {})
        self.initial = init
        self.fit_max_iter = int(fit_max_iter)
        self.fit_cold_start = bool(fit_cold_start)
        self.bounds = HyperparameterBounds(**self.bounds_option)
        self.kernel = SeparableKernel(space=space_kernel, time=None)
        self.hp = Hyperparameters(lengthscale_time=None, **init)
        self.rule: SparseSetRule | None = None
        self._clear_run(0)

    def _clear_run(self, d: int) -> None:
        self._X = np.empty((0, d))
        self._T = np.empty(0)
        self._y = np.empty(0)
        self._Xe = np.empty((0, d))
        self._Te = np.empty(0)
        self._Ye = np.empty(0)
        self.clock = 0.0
        #: the heteroscedastic posterior of the current step: the exact GP with per-point noise
        self.posterior: ExactGP | None = None
        self._fresh = False
        self.fit_gp: ExactGP | None = None
        self._stats: dict[str, float] = {}

    def check_composition(self, parts: Composition) -> None:
        if not isinstance(parts.dataset, SparseSetRule):
            raise ValueError(
                f"surrogate 'sparq-gp' needs a dataset policy that says which observations are "
                f"kept and their noise (dataset 'uncertainty-injection'), got "
                f"{parts.dataset.kind!r}"
            )
        if parts.removal is not None:
            raise ValueError("surrogate 'sparq-gp' never removes observations (its policy masks "
                             f"them); removal must be None, got {parts.removal.kind!r}")

    def bind(self, context: PartContext, *, editor: DatasetEditor | None = None) -> None:
        super().bind(context, editor=editor)
        self._clear_run(int(context.problem.d))
        self.fit_gp = ExactGP(self.kernel, self.hp, standardize=False, work=context.work)

    def use_rule(self, rule: SparseSetRule) -> None:
        """Called by the dataset policy's ``bind``: the rule that defines the sparse set."""
        self.rule = rule

    # -- the data: history, expert answers, the step's clock -----------------------------------
    @property
    def history_size(self) -> int:
        return int(self._y.shape[0])

    @property
    def history_X(self) -> np.ndarray:
        """Every bandit observation's input (oldest first): the expert's ground set."""
        return self._X

    @property
    def history_T(self) -> np.ndarray:
        return self._T

    @property
    def history_y(self) -> np.ndarray:
        return self._y

    @property
    def n_side(self) -> int:
        """Expert answers of the current step."""
        return int(self._Ye.size)

    def at(self, now: float) -> None:
        """Set the time the sparse set refers to (ages in ``"time"`` units use it)."""
        self.clock = float(now)
        self._fresh = False

    def append(self, x: np.ndarray, t: float, y: float) -> None:
        """Algorithm 1, line 3: store y_t (every past input stays in the DPP ground set)."""
        self._X = np.vstack([self._X, np.asarray(x, float).reshape(1, -1)])
        self._T = np.append(self._T, float(t))
        self._y = np.append(self._y, float(y))
        self._fresh = False

    def clear_side(self) -> None:
        """Forget the expert answers of the last step (they are not reused)."""
        self._Xe = np.empty((0, self.context.problem.d))
        self._Te = np.empty(0)
        self._Ye = np.empty(0)
        self._fresh = False

    def set_side(self, X: np.ndarray, T: np.ndarray, Y: np.ndarray) -> None:
        """Algorithm 1, line 6: the expert's fresh answers (replace last step's)."""
        self._Xe = np.asarray(X, float).reshape(-1, self.context.problem.d).copy()
        self._Te = np.asarray(T, float).reshape(-1).copy()
        self._Ye = np.asarray(Y, float).reshape(-1).copy()
        self._fresh = False

    def remove(self, i: int) -> None:
        raise ValueError("surrogate 'sparq-gp' never removes observations: its dataset policy "
                         "masks them (every past input stays in the expert's ground set)")

    def clear(self) -> None:
        self.remove(0)

    # -- the sparse set (as the policy defines it) ---------------------------------------------
    def _rule(self) -> SparseSetRule:
        if self.rule is None:
            raise RuntimeError("surrogate 'sparq-gp' is not bound to its dataset policy")
        return self.rule

    def kept(self) -> np.ndarray:
        """Boolean mask of the history kept at the current step."""
        return self._rule().kept()

    def injected(self) -> np.ndarray:
        return self._rule().injected()

    def threshold(self) -> float:
        return self._rule().threshold()

    def current_t(self) -> float:
        return self._rule().current_t()

    @property
    def n(self) -> int:
        """Observations the GP conditions on: kept recent ones + the current expert answers."""
        if self.history_size == 0:
            return int(self._Ye.size)
        return int(self.kept().sum()) + int(self._Ye.size)

    @property
    def X(self) -> np.ndarray:
        return np.vstack([self._X[self.kept()], self._Xe]) if self.history_size else self._Xe

    @property
    def T(self) -> np.ndarray:
        return np.concatenate([self._T[self.kept()], self._Te]) if self.history_size else self._Te

    @property
    def y(self) -> np.ndarray:
        return np.concatenate([self._y[self.kept()], self._Ye]) if self.history_size else self._Ye

    # -- noise and standardisation ---------------------------------------------------------------
    def sigma2(self) -> float:
        """sigma^2 in output units: the option, or the fitted noise (standardised) x std^2."""
        if self.noise_var is not None:
            return float(self.noise_var)
        _, std = self.standardization()
        return float(self.hp.noise_var) * std * std

    def sigma2_expert(self) -> float:
        value = self.expert_noise_var
        return self.sigma2() if value is None else float(value)

    def fit_set(self) -> tuple[np.ndarray, np.ndarray]:
        """The homoscedastic part of the sparse set: the expert answers and the fresh y_t."""
        return np.vstack([self._Xe, self._X[-1:]]), np.concatenate([self._Ye, self._y[-1:]])

    def standardization(self) -> tuple[float, float]:
        """Mean and std of y over the fit set (all past y while it has < 2 points).

        The fit set, not the whole sparse set, so that sigma^2 (fitted in these units) does not
        depend on the kept set, which itself depends on sigma^2 under ``injection="drift"``.
        """
        ys = self.fit_set()[1]
        if ys.size < 2:
            ys = self._y
        if ys.size == 0:
            return 0.0, 1.0
        std = float(np.std(ys))
        return float(np.mean(ys)), (std if std >= 1e-12 else 1.0)

    # -- the fit and the posterior ---------------------------------------------------------------
    def fit(self) -> None:
        """ML fit on the homoscedastic part of the sparse set (expert answers + fresh y_t)."""
        if self.hyperparameter_mode != "ml":
            return
        X, y = self.fit_set()
        if len(y) < 2:
            return
        self._fresh = False
        mean, std = self.standardization()
        gp = self.fit_gp
        fixed = self.noise_var
        if fixed is not None:  # a known sigma^2: only the kernel is fitted
            gp.set_hyperparameters(
                Hyperparameters(
                    signal_var=self.hp.signal_var,
                    lengthscale_space=self.hp.lengthscale_space,
                    lengthscale_time=None,
                    noise_var=float(fixed) / std**2,
                )
            )
        gp.set_data(X, None, (y - mean) / std)
        fit = dict(max_iter=self.fit_max_iter, rng=self.context.rng, fit_noise=fixed is None)
        warm = fit_hyperparameters(gp, self.bounds, source="sparq:warm", **fit)
        if self.fit_cold_start:
            # a second start from ``initial`` (see the module docstring: escapes the local
            # optimum "everything is noise" that a warm start never leaves)
            init = dict(self.initial)
            if fixed is not None:
                init["noise_var"] = float(fixed) / std**2
            cold = fit_hyperparameters(
                gp,
                self.bounds,
                init=Hyperparameters(lengthscale_time=None, **init),
                source="sparq:cold",
                **fit,
            )
            if not cold.lml > warm.lml:
                gp.set_hyperparameters(warm.hyperparameters)
            # fit health: which of the two fits is in force
            for result, kept in ((warm, not cold.lml > warm.lml), (cold, cold.lml > warm.lml)):
                if result.record is not None:
                    result.record["kept"] = int(kept)
            self._stats["cold_start_won"] = float(cold.lml > warm.lml)
        self.hp = gp.hyperparameters

    def _build(self, *, record: bool) -> ExactGP:
        """(16)-(17) on the kept recent observations and the expert answers: the exact GP with
        per-point noise (injected variances, sigma-bar^2 for the expert), standardised by the fit
        set's mean and std (noise in those units, ``noise / std^2``)."""
        keep = self.kept()
        var = self.injected()[keep]
        X = np.vstack([self._X[keep], self._Xe])
        y = np.concatenate([self._y[keep], self._Ye])
        noise = np.concatenate([var, np.full(len(self._Ye), self.sigma2_expert())])
        mean, std = self.standardization()
        if record:
            self._stats["max_kept_var"] = float(var.max()) if var.size else float("nan")
        gp = ExactGP(self.kernel, self.hp, work=self.context.work)
        gp.set_standardization(mean, std)
        gp.set_data(X, None, y, noise=noise / float(std) ** 2)
        return gp

    def condition(self) -> ExactGP:
        """The posterior of the current step (recorded as ``posterior``; its state recorded)."""
        self.posterior = self._build(record=True)
        self._fresh = True
        return self.posterior

    @property
    def prior_model(self) -> ExactGP:
        """The GP whose prior covariance (current hyperparameters, no noise) is the DPP kernel."""
        return self.fit_gp

    def predict(self, X, t, *, grad=False, include_noise=False) -> Prediction:
        """The posterior on the current sparse set (conditioned again if the data, the clock or
        the hyperparameters changed since the step's posterior; not recorded)."""
        if self.posterior is None or not self._fresh:
            self.posterior = self._build(record=False)
            self._fresh = True
        return self.posterior.predict(X, t, grad=grad, include_noise=include_noise)

    # -- records ---------------------------------------------------------------------------------
    def state(self) -> dict[str, float]:
        out = {
            "n_expert": float(self._Ye.size),
            "history_size": float(self.history_size),
            "signal_var": float(self.hp.signal_var),
            "lengthscale_space": float(self.hp.lengthscale_space),
            "noise_var": self.sigma2() if self.history_size else float("nan"),
        }
        for key in ("max_kept_var", "cold_start_won"):
            out[key] = float(self._stats.get(key, float("nan")))
        return out

    def options(self) -> dict[str, Any]:
        return {
            "noise_var": self.noise_var,
            "expert_noise_var": self.expert_noise_var,
            "space_kernel": self.space_kernel,
            "hyperparameters": self.hyperparameter_mode,
            "bounds": dict(self.bounds_option),
            "initial": dict(self.initial),
            "fit_max_iter": self.fit_max_iter,
            "fit_cold_start": self.fit_cold_start,
        }


# ------------------------------------------------------------------------------------------------
# the dataset policy: uncertainty injection and the discard rule
# ------------------------------------------------------------------------------------------------
class UncertaintyInjection(DatasetPolicy):
    """Ages, injected variances, the threshold g(t) and the kept mask (Algorithm 1, line 4).

    Options (module docstring, "Age and t", "Injected variance", "Discarding"): ``age_unit``,
    ``time_unit``, ``injection``, ``drift``, ``threshold``, ``threshold_exponent``,
    ``keep_newest``. It masks, never removes: the surrogate keeps every observation (the
    expert's ground set) and conditions on the kept ones (:class:`SparseSetRule`). sigma^2 is
    the surrogate's (:meth:`SparQGPSurrogate.sigma2`), the clock the surrogate's step clock,
    which this policy advances to ``now`` at each ingestion.
    """

    kind = "uncertainty-injection"
    removes: ClassVar[bool] = False

    def __init__(
        self,
        *,
        age_unit: str = "step",
        time_unit: float = 1.0,
        injection: str = "paper",
        drift: float = 1.0,
        threshold: str = "log",
        threshold_exponent: float = 0.2,
        keep_newest: bool = True,
    ) -> None:
        _choice("age_unit", age_unit, AGE_UNITS)
        _choice("injection", injection, INJECTIONS)
        _choice("threshold", threshold, THRESHOLDS)
        _positive("time_unit", time_unit)
        _positive("drift", drift)
        if not (isinstance(threshold_exponent, int | float) and 0 < threshold_exponent < 0.25):
            raise ValueError(
                f"threshold_exponent must be in (0, 1/4) (g = o(t^(1/4))), "
                f"got {threshold_exponent!r}"
            )
        self.age_unit = age_unit
        self.time_unit = float(time_unit)
        self.injection = injection
        self.drift = float(drift)
        self.threshold_kind = threshold
        self.threshold_exponent = float(threshold_exponent)
        self.keep_newest = bool(keep_newest)

    def check_composition(self, parts: Composition) -> None:
        if not isinstance(parts.surrogate, SparQGPSurrogate):
            raise ValueError(
                "dataset 'uncertainty-injection' needs the 'sparq-gp' surrogate (the history, "
                f"sigma^2 and the step clock), got {parts.surrogate.kind!r}"
            )

    def bind(self, context: PartContext, *, surrogate: Surrogate,  # type: ignore[override]
             removal: RemovalRule | None, editor: DatasetEditor) -> None:
        super().bind(context, surrogate=surrogate, removal=removal, editor=editor)
        self.model: SparQGPSurrogate = surrogate  # type: ignore[assignment]
        self.model.use_rule(self)

    def after_fit(self, *, now: float, warmup: bool) -> None:
        """The step's clock is the ingestion time (the composed ingest hands it here)."""
        self.model.at(now)

    def current_t(self, now: float | None = None) -> float:
        """The paper's t: observations ingested (``"step"``) or now / time_unit (``"time"``)."""
        if self.age_unit == "step":
            return float(self.model.history_size)
        return float(self.model.clock if now is None else now) / self.time_unit

    def ages(self, now: float | None = None) -> np.ndarray:
        """Age of every past observation in steps (or in time units)."""
        n = self.model.history_size
        if self.age_unit == "step":
            return (n - np.arange(1, n + 1)).astype(float)
        now = self.model.clock if now is None else now
        return np.maximum(now - self.model.history_T, 0.0) / self.time_unit

    def injected(self, now: float | None = None) -> np.ndarray:
        return injected_variance(
            self.ages(now), self.model.sigma2(), injection=self.injection, drift=self.drift
        )

    def threshold(self, now: float | None = None) -> float:
        return discard_threshold(
            self.current_t(now),
            self.model.sigma2(),
            kind=self.threshold_kind,
            exponent=self.threshold_exponent,
        )

    def kept(self, now: float | None = None) -> np.ndarray:
        """Boolean mask of the past observations kept at the current step."""
        return kept_mask(self.injected(now), self.threshold(now), keep_newest=self.keep_newest)

    def options(self) -> dict[str, Any]:
        return {
            "age_unit": self.age_unit,
            "time_unit": self.time_unit,
            "injection": self.injection,
            "drift": self.drift,
            "threshold": self.threshold_kind,
            "threshold_exponent": self.threshold_exponent,
            "keep_newest": self.keep_newest,
        }


# ------------------------------------------------------------------------------------------------
# the acquisition: query the expert, then UCB
# ------------------------------------------------------------------------------------------------
def _sparq_gp(surrogate: Surrogate, who: str) -> SparQGPSurrogate:
    if not isinstance(surrogate, SparQGPSurrogate):
        raise ValueError(f"acquisition {who!r} needs the 'sparq-gp' surrogate, got "
                         f"{surrogate.kind!r}")
    return surrogate


class ExpertUCB(Acquisition):
    """SparQ-GP-UCB's acquisition: the query-the-expert decision, then the UCB (18).

    ``side_queries`` (Algorithm 1, lines 4-5; the :class:`~tvbo.algorithms.components.
    SideQueries` capability): forget last step's answers, then draw Q_t expert locations from
    the M-DPP over the ground set (:func:`tvbo.algorithms.sparq.expert.expert_locations`, the
    surrogate's prior covariance as the kernel). ``ingest_side``: hand the answers to the
    surrogate. ``select``: condition the surrogate on the sparse set and maximise the UCB with
    beta :class:`~tvbo.algorithms.sparq.expert.ExpertUCBBeta` (:func:`~tvbo.algorithms.sparq.expert.
    maximize_ucb`). Options: module docstring ("Expert queries", "Sampler", "beta", "x_{t+1}").
    """

    kind = "expert-ucb"

    def __init__(
        self,
        *,
        query_scale: float = 6.0,
        n_queries: int | None = None,
        ground_set: str = "all",
        mcmc_factor: float = 1.0,
        mcmc_steps: int | None = None,
        beta: Any = "paper",
        delta: float = 0.05,
        rkhs_norm: float = 1.0,
        n_restarts: int = 20,
        raw_samples: int = 512,
        maxiter: int = 200,
    ) -> None:
        _choice("ground_set", ground_set, GROUND_SETS)
        _positive("query_scale", query_scale)
        _positive("mcmc_factor", mcmc_factor)
        _count_or_none("n_queries", n_queries)
        _count_or_none("mcmc_steps", mcmc_steps)
        if not (isinstance(delta, int | float) and 0 < delta < 1):
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        if not (isinstance(rkhs_norm, int | float) and math.isfinite(rkhs_norm) and rkhs_norm >= 0):
            raise ValueError(f"rkhs_norm (B) must be a finite number >= 0, got {rkhs_norm!r}")
        self.query_scale = float(query_scale)
        self.n_queries = n_queries
        self.ground_set = ground_set
        self.mcmc_factor = float(mcmc_factor)
        self.mcmc_steps = mcmc_steps
        self.beta_option = beta
        self.beta = ExpertUCBBeta(None if beta == "paper" else make_beta(beta), float(delta),
                                  float(rkhs_norm))
        self.optimizer = AcquisitionOptimizer(
            n_restarts=n_restarts, raw_samples=raw_samples, maxiter=maxiter
        )
        self.calls = 0
        self._stats: dict[str, float] = {}

    def check_composition(self, parts: Composition) -> None:
        _sparq_gp(parts.surrogate, self.kind)

    def bind(self, context: PartContext) -> None:
        super().bind(context)
        self.calls = 0
        self._stats = {}

    # -- the expert (capability SideQueries) -----------------------------------------------------
    def side_queries(self, surrogate: Surrogate, t: float) -> np.ndarray | None:
        """Algorithm 1, lines 4-5: discard, then draw Q_t expert locations from the DPP."""
        model = _sparq_gp(surrogate, self.kind)
        model.at(t)
        model.clear_side()
        keep = model.kept()
        X = model.history_X
        pool = X if self.ground_set == "all" else X[~keep]
        ground = np.unique(pool, axis=0) if len(pool) else pool
        q = min(
            n_expert_queries(model.current_t(), scale=self.query_scale, fixed=self.n_queries),
            len(ground),
        )
        self._stats.update(
            n_kept=float(keep.sum()),
            n_discarded=float((~keep).sum()),
            threshold=model.threshold(),
            n_ground=float(len(ground)),
            dpp_logdet=float("nan"),
            mcmc_acceptance=float("nan"),
            mcmc_steps=0.0,
        )
        if q < 1:
            return None
        steps = mcmc_steps(len(ground), q, factor=self.mcmc_factor, fixed=self.mcmc_steps)
        # the DPP kernel: the prior covariance under the current hyperparameters (the fit GP's)
        sample = expert_locations(model.prior_model, ground, q, steps, self.context.rng)
        self._stats.update(
            dpp_logdet=sample.logdet,
            mcmc_acceptance=sample.acceptance,
            mcmc_steps=float(sample.steps),
        )
        return ground[sample.indices].copy()

    def ingest_side(self, surrogate: Surrogate, X: np.ndarray, T: np.ndarray,
                    Y: np.ndarray) -> None:
        """Algorithm 1, line 6: the expert's fresh answers go to the model."""
        _sparq_gp(surrogate, self.kind).set_side(X, T, Y)

    # -- the query -------------------------------------------------------------------------------
    def select(self, surrogate: Surrogate, t: float) -> np.ndarray:
        """x_{t+1}: the UCB on the step's posterior (uniform when there is no data at all)."""
        model = _sparq_gp(surrogate, self.kind)
        problem = self.context.problem
        self.calls += 1
        model.at(t)
        if model.history_size == 0 and model.n_side == 0:  # no data at all: x_1 is uniform
            return self.context.rng.uniform(0.0, 1.0, size=problem.d)
        post = model.condition()
        beta = self.beta(post, problem.d, self.calls)
        self._stats.update(beta=root_beta(beta), information_gain=post.information_gain())
        return maximize_ucb(post, beta, self.optimizer, problem.d, self.context.rng,
                            candidates=problem.candidates)

    def root_beta(self, posterior: ExactGP) -> float:
        """The multiplier of sigma in the UCB (recorded as the state ``beta``)."""
        return root_beta(self.beta(posterior, self.context.problem.d, self.calls))

    # -- records ---------------------------------------------------------------------------------
    def state(self) -> dict[str, float]:
        keys = ("n_kept", "n_discarded", "threshold", "beta", "information_gain", "dpp_logdet",
                "mcmc_acceptance", "mcmc_steps")
        return {key: float(self._stats.get(key, float("nan"))) for key in keys}

    def options(self) -> dict[str, Any]:
        return {
            "query_scale": self.query_scale,
            "n_queries": self.n_queries,
            "ground_set": self.ground_set,
            "mcmc_factor": self.mcmc_factor,
            "mcmc_steps": self.mcmc_steps,
            "beta": self.beta_option,
            "delta": self.beta.delta,
            "rkhs_norm": self.beta.rkhs_norm,
            "n_restarts": self.optimizer.n_restarts,
            "raw_samples": self.optimizer.raw_samples,
            "maxiter": self.optimizer.maxiter,
        }


register_component("surrogate", SparQGPSurrogate)
register_component("acquisition", ExpertUCB)
register_component("dataset", UncertaintyInjection)
