"""SparQ-GP-UCB: time-varying GP-UCB with an expert (Mauduit, Berthier & Simonetto).

Uncertainty injection turns the time-varying problem into a sequence of static heteroscedastic
ones: at step t an observation of age a = t - i is an observation of the CURRENT function with
noise variance ``sigma^2 (a^2 + 1)`` (eq. (10)/(15)). Observations whose injected variance
exceeds ``g(t) = sigma^2 log t`` are discarded; ``Q_t = 6 log t`` locations, drawn from an
approximate Q_t-DPP over the past inputs (Appendix A), are sent to an EXPERT who answers with
fresh noisy values of f_t; the exact heteroscedastic GP posterior on the kept recent observations
+ the expert answers ((16)-(17)) drives UCB (18). Spec: ``spec_sparq_pegpucb.md`` PART A; open
questions PART D (resolved in :class:`SparQGPUCB`).

This module is the algorithm's data policy (ages, injected noise, discarding) and its
composition; the parts are shared: the heteroscedastic posterior is the exact GP with per-point
noise (:class:`tvbo.gp.exact.ExactGP`, :class:`tvbo.models.HasPointNoise`), the expert's
locations are an acquisition (:mod:`tvbo.acquisition.expert`, the M-DPP sampler of
:mod:`tvbo.acquisition.dpp`), the UCB is :func:`tvbo.acquisition.ucb` and Theorem 3.1's beta is
the registered rule ``"sparq-gp-ucb"`` of :mod:`tvbo.acquisition.beta`. Work is counted by the
model, the sampler and the optimiser, never here.

On the virtual clock (``tvbo/sim/engine.py``): the engine calls :meth:`SparQGPUCB.side_queries`
before each post-warm-up ``propose`` (phase ``side``), asks its expert -- a separate SimPy
resource whose cost and noise are the ENGINE options ``expert_cost`` / ``expert_noise_var``
(``tvbo.simulate(..., expert_cost=...)``, ``tvbo run --expert-cost``) -- and hands the answers to
:meth:`SparQGPUCB.ingest_side`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from tvbo.acquisition import AcquisitionOptimizer, make_beta, ucb
from tvbo.acquisition.beta import beta_rule, rule_beta
from tvbo.acquisition.expert import expert_locations, mcmc_steps, n_expert_queries
from tvbo.algorithms.base import Algorithm
from tvbo.gp.exact import ExactGP
from tvbo.gp.fit import fit_hyperparameters
from tvbo.gp.kernels import HyperparameterBounds, Hyperparameters, SeparableKernel, correlation

NAME = "sparq-gp-ucb"
AGE_UNITS: tuple[str, ...] = ("step", "time")
INJECTIONS: tuple[str, ...] = ("paper", "drift")
THRESHOLDS: tuple[str, ...] = ("log", "power")
GROUND_SETS: tuple[str, ...] = ("all", "discarded")
HYPERPARAMETER_MODES: tuple[str, ...] = ("ml", "fixed")

__all__ = [
    "NAME",
    "SparQGPUCB",
    "discard_threshold",
    "injected_variance",
    "kept_mask",
    "n_expert_queries",
    "register_algorithms",
]


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
# the algorithm
# ------------------------------------------------------------------------------------------------
class SparQGPUCB(Algorithm):
    """SparQ-GP-UCB (Algorithm 1 of the paper) with every open question resolved as an option.

    Decisions (spec_sparq_pegpucb.md; PART D question numbers in brackets):

    * **Age and t** (``age_unit``): ``"step"`` (default, the paper is discrete-time): the i-th
      bandit observation (warm-up included) has step index i, the current step t is the number
      of observations ingested, age = t - i. ``"time"``: age = (now - t_i) / ``time_unit`` and
      t = now / ``time_unit`` on the virtual clock (for benchmarks whose drift is per second).
    * **Injected variance** (``injection``, [9]): ``"paper"`` ``sigma^2 (a^2 + 1)`` (default,
      eq. (10) literally) or ``"drift"`` ``drift^2 a^2 / 3 + sigma^2``.
    * **Discarding** ([1]): ``g(t) = sigma^2 ln t`` (natural log; ``threshold="power"`` gives
      ``sigma^2 t^threshold_exponent``, any o(t^{1/4}) is allowed); ``keep_newest=True`` always
      keeps the fresh y_t (the literal rule drops everything at t <= 2). With ln, the kept ages
      are {0,1} for 8 <= t <= 148 and {0,1,2} up to t = 22026: O(sqrt(log t)) steps, not the
      "O(log t)" of the contributions list -- we follow the stated threshold.
    * **Expert queries** ([2], [3]): ``Q_t = ceil(query_scale * ln t)`` per step (default 6,
      the experiments' "6 log T", evaluated at the current t so the count grows like the theory's
      O(log^d t)); ``n_queries`` fixes it instead. The DPP ground set is the DISTINCT past inputs
      (``ground_set="all"``, §3.2 "previously observed points"; ``"discarded"`` restricts it to
      the discarded ones); Q_t is capped at its size, so one step never queries a location twice;
      an expert location may coincide with a kept recent point. Answers are not reused at the
      next step (the paper lists reuse as future work); a new DPP sample is drawn every step.
    * **Sampler** ([4]): Algorithm 2 (swap MCMC) from Algorithm 3's greedy MAP start,
      ``N~ = ceil(mcmc_factor * N * Q_t)`` iterations (spec's practical c N M, c = 1), or
      ``mcmc_steps``. The DPP kernel is the plain spatial Gram matrix with the current
      hyperparameters (no noise term, Definition 1).
    * **Noise** ([5]): ``noise_var`` sigma^2 is the ML-fitted noise (default None) or a known
      value in output units (the paper's 0.01); the algorithm's belief about the expert's noise,
      ``expert_noise_var`` sigma-bar^2, defaults to sigma^2 (it satisfies both proof
      requirements, spec §A.4.4). The TRUE expert noise and cost are engine options.
    * **beta** ([6]): ``beta="paper"`` is Theorem 3.1 / Proposition 4, the registered rule
      ``"sparq-gp-ucb"``: ``beta_t = sqrt(2 ln(2/delta) + ln det(Sigma+K) - ln det Sigma) +
      rkhs_norm`` on the sparse set (the log-dets from the model's ``information_gain``),
      multiplying sigma (delta = 0.05 as in §4; ``rkhs_norm`` B = 1 in standardised units
      since ||f_t||_k is unknown). Any schedule of :func:`tvbo.acquisition.make_beta` (e.g.
      ``"wdbo"``, the shared 0.2 d log 2n; or a number) is the practical option; those multiply
      sigma by sqrt(beta), as in every other UCB of the package.
    * **Hyperparameters** ([7]): ``"ml"`` (default): (signal variance, lengthscale, noise)
      maximise the marginal likelihood every step, warm-started, on the homoscedastic part of the
      sparse set (the expert answers and the fresh observation, all of noise sigma^2 when
      sigma-bar^2 = sigma^2); ``"fixed"`` keeps ``initial``. y is standardised by the mean and
      std of the sparse set (f is in [1, 3] on the moving bump: a zero prior mean on raw y would
      be wrong). Kernel: squared exponential (``space_kernel="rbf"``, the paper's §4.1 choice).
      ``fit_cold_start`` (default True): every fit runs L-BFGS-B from the warm start AND from
      ``initial`` and keeps the higher likelihood. A warm start alone can lock the run in the
      "everything is noise" local optimum (lengthscale ~8 cube widths, signal variance at its
      floor, noise 1): the flat mean sends every query to an edge of the box, which adds no new
      distinct input, so the expert's ground set and the fit set never change again. Measured on
      the moving bump, seed 2 of the paper study: trapped from step 20 to 480 (average regret
      1.80 against 0.15-0.23 for the other nine seeds), although the structured optimum had a
      log likelihood 7-13 nats higher at every step. The extra start costs one small fit
      (n <= Q_t + 3 points).
    * **x_{t+1}** ([8]): multi-start L-BFGS-B over [0,1]^d (Sobol raw samples, the package's
      acquisition optimiser); the first query is the engine's warm-up (or uniform random).

    ``state()`` records the defining quantities: ``n_expert`` (Q_t answered), ``n_kept``,
    ``n_discarded``, ``history_size``, ``threshold`` g(t), ``max_kept_var``, ``beta``,
    ``information_gain``, ``dpp_logdet``, ``mcmc_acceptance``, ``mcmc_steps``,
    ``cold_start_won`` (1 when this step's fit kept the start from ``initial``) and the fitted
    ``signal_var``, ``lengthscale_space``, ``noise_var`` (sigma^2, output units).
    """

    name = NAME

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
        query_scale: float = 6.0,
        n_queries: int | None = None,
        ground_set: str = "all",
        mcmc_factor: float = 1.0,
        mcmc_steps: int | None = None,
        beta: Any = "paper",
        delta: float = 0.05,
        rkhs_norm: float = 1.0,
        noise_var: float | None = None,
        expert_noise_var: float | None = None,
        space_kernel: str = "rbf",
        hyperparameters: str = "ml",
        bounds: Mapping[str, Any] | None = None,
        initial: Mapping[str, float] | None = None,
        fit_max_iter: int = 50,
        fit_cold_start: bool = True,
        n_restarts: int = 20,
        raw_samples: int = 512,
        maxiter: int = 200,
    ) -> None:
        super().__init__()
        for option, value, valid in (
            ("age_unit", age_unit, AGE_UNITS),
            ("injection", injection, INJECTIONS),
            ("threshold", threshold, THRESHOLDS),
            ("ground_set", ground_set, GROUND_SETS),
            ("hyperparameters", hyperparameters, HYPERPARAMETER_MODES),
        ):
            if value not in valid:
                raise ValueError(f"unknown {option} {value!r}; valid: {', '.join(valid)}")
        positive = {
            "time_unit": time_unit,
            "drift": drift,
            "query_scale": query_scale,
            "mcmc_factor": mcmc_factor,
        }
        for option, value in positive.items():
            if isinstance(value, bool) or not (
                isinstance(value, int | float) and math.isfinite(value) and value > 0
            ):
                raise ValueError(f"{option} must be a finite number > 0, got {value!r}")
        if not (isinstance(threshold_exponent, int | float) and 0 < threshold_exponent < 0.25):
            raise ValueError(
                f"threshold_exponent must be in (0, 1/4) (g = o(t^(1/4))), "
                f"got {threshold_exponent!r}"
            )
        for option, value in (("n_queries", n_queries), ("mcmc_steps", mcmc_steps)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 0
            ):
                raise ValueError(f"{option} must be None or an integer >= 0, got {value!r}")
        if not (isinstance(delta, int | float) and 0 < delta < 1):
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        if not (isinstance(rkhs_norm, int | float) and math.isfinite(rkhs_norm) and rkhs_norm >= 0):
            raise ValueError(f"rkhs_norm (B) must be a finite number >= 0, got {rkhs_norm!r}")
        for option, value in (("noise_var", noise_var), ("expert_noise_var", expert_noise_var)):
            if value is not None and not (
                isinstance(value, int | float) and math.isfinite(value) and value > 0
            ):
                raise ValueError(f"{option} must be None or a finite number > 0, got {value!r}")
        if fit_max_iter < 1:
            raise ValueError(f"fit_max_iter must be >= 1, got {fit_max_iter!r}")
        correlation(space_kernel)
        self.beta_option = beta
        self.beta_schedule = None if beta == "paper" else make_beta(beta)
        init = {"signal_var": 1.0, "lengthscale_space": 0.1, "noise_var": 0.01}
        unknown = sorted(set(initial or {}) - set(init))
        if unknown:
            raise ValueError(f"initial: unknown hyperparameter(s) {unknown}; valid: {sorted(init)}")
        init.update(initial or {})
        self.opts: dict[str, Any] = dict(
            age_unit=age_unit,
            time_unit=float(time_unit),
            injection=injection,
            drift=float(drift),
            threshold=threshold,
            threshold_exponent=float(threshold_exponent),
            keep_newest=bool(keep_newest),
            query_scale=float(query_scale),
            n_queries=n_queries,
            ground_set=ground_set,
            mcmc_factor=float(mcmc_factor),
            mcmc_steps=mcmc_steps,
            beta=beta,
            delta=float(delta),
            rkhs_norm=float(rkhs_norm),
            noise_var=noise_var,
            expert_noise_var=expert_noise_var,
            space_kernel=space_kernel,
            hyperparameters=hyperparameters,
            bounds=dict(bounds or {}),
            initial=init,
            fit_max_iter=int(fit_max_iter),
            fit_cold_start=bool(fit_cold_start),
            n_restarts=int(n_restarts),
            raw_samples=int(raw_samples),
            maxiter=int(maxiter),
        )
        self.bounds = HyperparameterBounds(**dict(bounds or {}))
        self.kernel = SeparableKernel(space=space_kernel, time=None)
        self.hp = Hyperparameters(lengthscale_time=None, **init)
        self.optimizer = AcquisitionOptimizer(
            n_restarts=n_restarts, raw_samples=raw_samples, maxiter=maxiter
        )
        self._reset()

    def _reset(self) -> None:
        self._X = np.empty((0, 0))
        self._T = np.empty(0)
        self._y = np.empty(0)
        self._Xe = np.empty((0, 0))
        self._Ye = np.empty(0)
        self._now = 0.0
        #: the heteroscedastic posterior of the current step: the exact GP with per-point noise
        self.posterior: ExactGP | None = None
        self._fit_gp: ExactGP | None = None
        self._stats: dict[str, float] = {}
        self.calls = 0

    def _setup(self) -> None:
        d = self.problem.d
        self._reset()
        self._X = np.empty((0, d))
        self._Xe = np.empty((0, d))
        self._fit_gp = ExactGP(self.kernel, self.hp, standardize=False, work=self.work)

    # -- ages, variances, the kept set ---------------------------------------------------------
    @property
    def history_size(self) -> int:
        return int(self._y.shape[0])

    def current_t(self, now: float | None = None) -> float:
        """The paper's t: observations ingested (``"step"``) or now / time_unit (``"time"``)."""
        if self.opts["age_unit"] == "step":
            return float(self.history_size)
        return float(self._now if now is None else now) / self.opts["time_unit"]

    def ages(self, now: float | None = None) -> np.ndarray:
        """Age of every past observation in steps (or in time units)."""
        n = self.history_size
        if self.opts["age_unit"] == "step":
            return (n - np.arange(1, n + 1)).astype(float)
        now = self._now if now is None else now
        return np.maximum(now - self._T, 0.0) / self.opts["time_unit"]

    def sigma2(self) -> float:
        """sigma^2 in output units: the option, or the fitted noise (standardised) x std^2."""
        if self.opts["noise_var"] is not None:
            return float(self.opts["noise_var"])
        _, std = self._standardization()
        return float(self.hp.noise_var) * std * std

    def sigma2_expert(self) -> float:
        value = self.opts["expert_noise_var"]
        return self.sigma2() if value is None else float(value)

    def injected(self, now: float | None = None) -> np.ndarray:
        return injected_variance(
            self.ages(now),
            self.sigma2(),
            injection=self.opts["injection"],
            drift=self.opts["drift"],
        )

    def threshold(self, now: float | None = None) -> float:
        return discard_threshold(
            self.current_t(now),
            self.sigma2(),
            kind=self.opts["threshold"],
            exponent=self.opts["threshold_exponent"],
        )

    def kept(self, now: float | None = None) -> np.ndarray:
        """Boolean mask of the past observations kept at the current step."""
        return kept_mask(
            self.injected(now), self.threshold(now), keep_newest=self.opts["keep_newest"]
        )

    def _fit_set(self) -> tuple[np.ndarray, np.ndarray]:
        """The homoscedastic part of the sparse set: the expert answers and the fresh y_t."""
        return np.vstack([self._Xe, self._X[-1:]]), np.concatenate([self._Ye, self._y[-1:]])

    def _standardization(self) -> tuple[float, float]:
        """Mean and std of y over the fit set (all past y while it has < 2 points).

        The fit set, not the whole sparse set, so that sigma^2 (fitted in these units) does not
        depend on the kept set, which itself depends on sigma^2 under ``injection="drift"``.
        """
        ys = self._fit_set()[1]
        if ys.size < 2:
            ys = self._y
        if ys.size == 0:
            return 0.0, 1.0
        std = float(np.std(ys))
        return float(np.mean(ys)), (std if std >= 1e-12 else 1.0)

    # -- the expert ----------------------------------------------------------------------------
    def side_queries(self, t: float) -> np.ndarray | None:
        """Algorithm 1, lines 4-5: discard, then draw Q_t expert locations from the DPP."""
        self._now = float(t)
        self._Xe = np.empty((0, self.problem.d))
        self._Ye = np.empty(0)
        keep = self.kept()
        pool = self._X if self.opts["ground_set"] == "all" else self._X[~keep]
        ground = np.unique(pool, axis=0) if len(pool) else pool
        q = min(
            n_expert_queries(
                self.current_t(), scale=self.opts["query_scale"], fixed=self.opts["n_queries"]
            ),
            len(ground),
        )
        self._stats.update(
            n_kept=float(keep.sum()),
            n_discarded=float((~keep).sum()),
            threshold=self.threshold(),
            n_ground=float(len(ground)),
            dpp_logdet=float("nan"),
            mcmc_acceptance=float("nan"),
            mcmc_steps=0.0,
        )
        if q < 1:
            return None
        steps = mcmc_steps(
            len(ground), q, factor=self.opts["mcmc_factor"], fixed=self.opts["mcmc_steps"]
        )
        # the DPP kernel: the prior covariance under the current hyperparameters (the fit GP's)
        sample = expert_locations(self._fit_gp, ground, q, steps, self.rng)
        self._stats.update(
            dpp_logdet=sample.logdet,
            mcmc_acceptance=sample.acceptance,
            mcmc_steps=float(sample.steps),
        )
        return ground[sample.indices].copy()

    def ingest_side(self, X: np.ndarray, T: np.ndarray, Y: np.ndarray) -> None:
        """Algorithm 1, line 6: the expert's fresh answers (replace last step's)."""
        self._Xe = np.asarray(X, float).reshape(-1, self.problem.d).copy()
        self._Ye = np.asarray(Y, float).reshape(-1).copy()

    # -- the posterior and the query -----------------------------------------------------------
    def _fit(self) -> None:
        """ML fit on the homoscedastic part of the sparse set (expert answers + fresh y_t)."""
        if self.opts["hyperparameters"] != "ml":
            return
        X, y = self._fit_set()
        if len(y) < 2:
            return
        mean, std = self._standardization()
        gp = self._fit_gp
        fixed = self.opts["noise_var"]
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
        fit = dict(max_iter=self.opts["fit_max_iter"], rng=self.rng, fit_noise=fixed is None)
        warm = fit_hyperparameters(gp, self.bounds, source="sparq:warm", **fit)
        if self.opts["fit_cold_start"]:
            # a second start from ``initial`` (see the class docstring: escapes the local optimum
            # "everything is noise" that a warm start never leaves)
            init = dict(self.opts["initial"])
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

    def build_posterior(self) -> ExactGP:
        """(16)-(17) on the kept recent observations and the expert answers: the exact GP with
        per-point noise (injected variances, sigma-bar^2 for the expert), standardised by the fit
        set's mean and std (noise in those units, ``noise / std^2``)."""
        keep = self.kept()
        var = self.injected()[keep]
        X = np.vstack([self._X[keep], self._Xe])
        y = np.concatenate([self._y[keep], self._Ye])
        noise = np.concatenate([var, np.full(len(self._Ye), self.sigma2_expert())])
        mean, std = self._standardization()
        self._stats["max_kept_var"] = float(var.max()) if var.size else float("nan")
        gp = ExactGP(self.kernel, self.hp, work=self.work)
        gp.set_standardization(mean, std)
        gp.set_data(X, None, y, noise=noise / float(std) ** 2)
        return gp

    def beta(self, posterior: ExactGP) -> float:
        """beta of the UCB: the paper's rule (registered ``"sparq-gp-ucb"``, it states
        sqrt(beta)) or a schedule of :func:`tvbo.acquisition.make_beta`."""
        if self.beta_schedule is None:
            return rule_beta(
                beta_rule(NAME),
                information_gain=posterior.information_gain(),
                delta=self.opts["delta"],
                rkhs_norm=self.opts["rkhs_norm"],
            )
        return self.beta_schedule(self.problem.d, posterior.n, self.calls)

    def root_beta(self, posterior: ExactGP) -> float:
        """The multiplier of sigma in the UCB (recorded as the state ``beta``)."""
        return math.sqrt(self.beta(posterior))

    def propose(self, t: float) -> np.ndarray:
        self.calls += 1
        self._now = float(t)
        if self.history_size == 0 and self._Ye.size == 0:  # no data at all: x_1 is uniform
            return self.rng.uniform(0.0, 1.0, size=self.problem.d)
        with self.work.phase("fit"):
            self._fit()
        post = self.posterior = self.build_posterior()
        beta = self.beta(post)
        self._stats.update(beta=math.sqrt(beta), information_gain=post.information_gain())

        def acquisition(X: np.ndarray, grad: bool):
            return ucb(post, X, None, beta, grad=grad)

        incumbent = post.X[[int(np.argmax(post.y))]] if post.n else None
        x, _ = self.optimizer.maximize(
            acquisition,
            self.problem.d,
            self.rng,
            candidates=self.problem.candidates,
            extra_starts=incumbent,
            work=self.work,
        )
        return np.asarray(x, float)

    def ingest(self, x: np.ndarray, t: float, y: float, *, now: float, warmup: bool) -> None:
        """Algorithm 1, line 3: store y_t (every past input stays in the DPP ground set)."""
        self._X = np.vstack([self._X, np.asarray(x, float).reshape(1, -1)])
        self._T = np.append(self._T, float(t))
        self._y = np.append(self._y, float(y))
        self._now = float(now)

    def dataset_size(self) -> int:
        """Observations the GP conditions on: kept recent ones + the current expert answers."""
        if self.history_size == 0:
            return int(self._Ye.size)
        return int(self.kept().sum()) + int(self._Ye.size)

    def state(self) -> dict[str, float]:
        out = {
            "n_expert": float(self._Ye.size),
            "history_size": float(self.history_size),
            "signal_var": float(self.hp.signal_var),
            "lengthscale_space": float(self.hp.lengthscale_space),
            "noise_var": self.sigma2() if self.history_size else float("nan"),
        }
        for key in (
            "n_kept",
            "n_discarded",
            "threshold",
            "max_kept_var",
            "beta",
            "information_gain",
            "dpp_logdet",
            "mcmc_acceptance",
            "mcmc_steps",
            "cold_start_won",
        ):
            out[key] = float(self._stats.get(key, float("nan")))
        return out

    def options(self) -> dict:
        return dict(self.opts)


def register_algorithms() -> list[str]:
    """Register ``sparq-gp-ucb`` with :func:`tvbo.algorithms.register` (idempotent; called on
    import from the package's module block). Returns the names registered by this call."""
    from tvbo.algorithms import names, register

    if NAME in names():
        return []
    register(NAME, SparQGPUCB)
    return [NAME]


register_algorithms()
