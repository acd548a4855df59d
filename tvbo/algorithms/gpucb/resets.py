"""Dataset policies that forget by resetting: R-GP-UCB, ET-GP-UCB.

Both run plain GP-UCB on a *spatial* GP (no temporal kernel) and handle staleness purely by
which observations they keep (spec_baselines.md §2.5, §3, §5; W-DBO's protocol §7.8):

* ``periodic-reset`` (R-GP-UCB, Bogunovic et al. 2016, Alg. 1): empty the dataset every N
  iterations, or whenever it holds more than N observations (W-DBO's reading);
* ``event-trigger`` (ET-GP-UCB, Brunzema et al. 2025): empty it when a new observation is
  inconsistent with the current posterior under a uniform error bound.

The third forgetting-by-data baseline, SW-GP-UCB's sliding window, lives with its paper
(:mod:`tvbo.algorithms.weighted.sliding_window`).

Policies never act during warm-up (``warmup=True``): the engine's random initial design is kept.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from tvbo.algorithms.components import (
    Composition,
    DatasetEditor,
    DatasetPolicy,
    GPSurrogate,
    PartContext,
    RemovalRule,
    Surrogate,
    register_component,
)
from tvbo.algorithms.gpucb.tvgp import EPS_BOUNDS, annotate_forgetting_rate, eps_lengthscale_bounds
from tvbo.gp.exact import ExactGP
from tvbo.gp.fit import fit_hyperparameters
from tvbo.gp.kernels import Hyperparameters, SeparableKernel

#: smoothness nu of each spatial correlation, for Bogunovic's Matérn reset period
_NU: dict[str, float] = {"matern12": 0.5, "matern32": 1.5, "matern52": 2.5, "rbf": math.inf}

RESET_MODES: tuple[str, ...] = ("period", "size")
TRIGGER_COUNTERS: tuple[str, ...] = ("reset", "global")


def require_gp_surrogate(policy: DatasetPolicy, parts: Composition) -> None:
    """Construction-time check: ``policy`` needs a GP surrogate (its hyperparameters)."""
    if not isinstance(parts.surrogate, GPSurrogate):
        raise ValueError(
            f"dataset policy {policy.kind!r} needs a GP surrogate (kind 'gp' or a "
            f"subclass), got {type(parts.surrogate).__name__}"
        )


def reset_period(
    eps: float, d: int, space_kernel: str = "matern52", constant: float | None = None
) -> int:
    """Bogunovic's block length N(eps) (spec §2.7, Sec. 5.1 "matched case"), without the min(T, .).

    SE kernel: ``ceil(12 eps^{-1/4})``; Matérn-nu: ``ceil(24 eps^{-1/(4 - c)})`` with
    ``c = d(d+1) / (2 nu + d(d+1))``. ``constant`` replaces the cross-validated 12 or 24. The
    corollary assumes nu > 2; for Matérn-1/2 and -3/2 the same formula is applied as a heuristic.
    The horizon T is unknown to the algorithm (in iterations it depends on the response time),
    and N = T would be plain GP-UCB anyway, so ``min(T, .)`` is dropped.
    """
    if not 0.0 < eps < 1.0:
        raise ValueError(f"eps must be in (0, 1), got {eps!r}")
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d!r}")
    if space_kernel not in _NU:
        raise ValueError(f"unknown space_kernel {space_kernel!r}; valid: {', '.join(_NU)}")
    nu = _NU[space_kernel]
    if math.isinf(nu):
        exponent, default = 1.0 / 4.0, 12.0
    else:
        c = d * (d + 1) / (2.0 * nu + d * (d + 1))
        exponent, default = 1.0 / (4.0 - c), 24.0
    constant = default if constant is None else float(constant)
    if not constant > 0:
        raise ValueError(f"constant must be > 0, got {constant!r}")
    return max(1, math.ceil(constant * eps ** (-exponent)))


def trigger_threshold(tau: int, delta: float, sigma: float, sigma_noise: float) -> float:
    """ET-GP-UCB's bound ``E = sqrt(2 ln(pi^2 tau^2 / (3 delta))) (sigma + sigma_n)`` (spec §3.3).

    It is ``sqrt(rho_tau) sigma + omega_tau`` with ``pi_tau = pi^2 tau^2 / 6``: the union bound over
    tau spends ``delta/2`` on the latent error and ``delta/2`` on the noise.
    """
    if tau < 1:
        raise ValueError(f"tau must be >= 1, got {tau!r}")
    return math.sqrt(2.0 * math.log(math.pi**2 * tau**2 / (3.0 * delta))) * (sigma + sigma_noise)


class _ResetPolicy(DatasetPolicy):
    """Counts resets and the observations held since the last one."""

    def __init__(self) -> None:
        self.resets = 0
        self.since_reset = 0

    def check_composition(self, parts: Composition) -> None:
        require_gp_surrogate(self, parts)

    def bind(self, context: PartContext, *, surrogate: Surrogate, removal: RemovalRule | None,
             editor: DatasetEditor) -> None:
        super().bind(context, surrogate=surrogate, removal=removal, editor=editor)
        #: the GP surrogate (checked at construction)
        self.gp_surrogate: GPSurrogate = surrogate  # type: ignore[assignment]
        self.resets = 0
        self.since_reset = 0

    def _reset(self) -> None:
        self.editor.reset()
        self.resets += 1
        self.since_reset = 0


class PeriodicReset(_ResetPolicy):
    """R-GP-UCB: a spatial GP whose dataset is emptied periodically (spec §2.5, §2.7, §7.8).

    Options (choices the paper leaves open, spec §2.11):

    * ``mode``: ``"size"`` (default, W-DBO's protocol §7.8: reset when the dataset holds more than
      N observations, warm-up included) or ``"period"`` (Bogunovic's Alg. 1: reset after every N
      post-warm-up iterations; the first block also holds the warm-up).
    * ``N``: the block length. ``None`` (default) uses :func:`reset_period` with the forgetting
      rate ``eps``; an integer >= 1 fixes it (Bogunovic used N = 15 on temperature data).
    * ``eps``: a number in (0, 1), or ``"fit"`` (default; what W-DBO did, "N(eps) with eps
      estimated"): after each post-warm-up fit, eps is estimated by maximum likelihood of
      Bogunovic's model -- the spatial kernel times ``(1 - eps)^{|i-j|/2}`` over the iteration
      index -- on the held data (all consecutive, since R-GP-UCB only ever resets), with every
      hyperparameter refitted, warm-started from the spatial GP's and the previous eps, eps in
      ``eps_bounds`` (PB2's [1e-5, 0.5]). N then lies in [30, 673] for d = 2, Matérn-5/2.
    * ``constant``: the cross-validated factor of N(eps) (default 12 for SE, 24 for Matérn).
    * The eps fit uses the surrogate's ``fit_mode`` (one config line switches both fits); with a
      mode other than ``"lbfgs"``, ``eps_bounds`` and ``fit_max_iter`` only set the start.

    The reset happens at the end of ``ingest`` (after the fit), so the next query is chosen on
    the prior, as in Alg. 1; hyperparameters are kept.
    """

    kind = "periodic-reset"

    def __init__(
        self,
        *,
        mode: str = "size",
        N: int | None = None,
        eps: float | str = "fit",
        constant: float | None = None,
        eps_bounds: Sequence[float] = EPS_BOUNDS,
        fit_max_iter: int = 50,
    ) -> None:
        super().__init__()
        if mode not in RESET_MODES:
            raise ValueError(f"unknown mode {mode!r}; valid: {', '.join(RESET_MODES)}")
        if N is not None and (isinstance(N, bool) or not isinstance(N, int | np.integer) or N < 1):
            raise ValueError(f"N must be an integer >= 1 or None, got {N!r}")
        if isinstance(eps, str):
            if eps != "fit":
                raise ValueError(f"eps must be a number in (0, 1) or 'fit', got {eps!r}")
        elif not 0.0 < float(eps) < 1.0:
            raise ValueError(f"eps must be a number in (0, 1) or 'fit', got {eps!r}")
        if constant is not None and not float(constant) > 0:
            raise ValueError(f"constant must be > 0, got {constant!r}")
        if fit_max_iter < 1:
            raise ValueError(f"fit_max_iter must be >= 1, got {fit_max_iter!r}")
        self.mode = mode
        self.N = None if N is None else int(N)
        self.eps_option = eps if isinstance(eps, str) else float(eps)
        self.constant = None if constant is None else float(constant)
        self.l_bounds = eps_lengthscale_bounds(eps_bounds)
        self.eps_bounds = tuple(float(v) for v in eps_bounds)
        self.fit_max_iter = int(fit_max_iter)
        self.eps = float("nan") if isinstance(eps, str) else float(eps)
        self.period = self.N if self.N is not None else 0
        self.block = 0  # post-warm-up iterations since the last reset (mode "period")

    def bind(self, context: PartContext, *, surrogate: Surrogate, removal: RemovalRule | None,
             editor: DatasetEditor) -> None:
        super().bind(context, surrogate=surrogate, removal=removal, editor=editor)
        self.block = 0
        if self.eps_option == "fit":
            self.eps = float("nan")
        self._lengthscale_time = math.sqrt(self.l_bounds[0] * self.l_bounds[1])

    # -- eps by maximum likelihood ----------------------------------------------------------------
    def fit_eps(self) -> float:
        """ML estimate of eps on the held data under Bogunovic's model (work: ``self.work``)."""
        surrogate = self.gp_surrogate
        n = surrogate.n
        if n < 2:
            return self.eps
        hp = surrogate.hyperparameters
        kernel = SeparableKernel(space=surrogate.space_kernel, time="matern12")
        start = Hyperparameters(
            signal_var=hp.signal_var,
            lengthscale_space=hp.lengthscale_space,
            lengthscale_time=self._lengthscale_time,
            noise_var=hp.noise_var,
        )
        gp = ExactGP(kernel, start, standardize=surrogate.standardize, work=self.work)
        gp.set_data(surrogate.X, np.arange(n, dtype=float), surrogate.y)
        source = f"dataset:{self.kind}:eps"
        if surrogate.fit_mode != "lbfgs":  # the surrogate's published fit, for eps too
            result = fit_hyperparameters(gp, mode=surrogate.fit_mode,
                                         mode_options=surrogate.fit_mode_options, source=source)
        else:
            bounds = replace(surrogate.bounds, lengthscale_time=self.l_bounds)
            result = fit_hyperparameters(gp, bounds, max_iter=self.fit_max_iter, source=source)
        self._lengthscale_time = float(result.hyperparameters.lengthscale_time)
        eps = -math.expm1(-2.0 / self._lengthscale_time)
        annotate_forgetting_rate(result, eps, time_unit="step")
        return eps

    def current_period(self) -> int:
        """N in force: the fixed ``N`` or N(eps) for the current eps."""
        if self.N is not None:
            return self.N
        if math.isnan(self.eps):  # eps="fit" before any fit: no reset yet
            return 0
        surrogate = self.gp_surrogate
        return reset_period(
            self.eps, self.context.problem.d, surrogate.space_kernel, self.constant
        )

    def after_fit(self, *, now: float, warmup: bool) -> None:
        self.since_reset += 1
        if warmup:
            return
        self.block += 1
        if self.N is None and self.eps_option == "fit":
            self.eps = self.fit_eps()
        self.period = self.current_period()
        if self.period < 1:
            return
        due = (
            self.block >= self.period
            if self.mode == "period"
            else self.surrogate.n > self.period
        )
        if due:
            self._reset()
            self.block = 0

    def state(self) -> dict[str, float]:
        return {
            "resets": float(self.resets),
            "since_reset": float(self.since_reset),
            "reset_period": float(self.period),
            "reset_eps": float(self.eps),
        }

    def options(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "N": self.N,
            "eps": self.eps_option,
            "constant": self.constant,
            "eps_bounds": list(self.eps_bounds),
            "fit_max_iter": self.fit_max_iter,
        }


class EventTrigger(_ResetPolicy):
    """ET-GP-UCB: reset when an observation contradicts the model (spec §3.2-§3.4, §3.9).

    Before the observation ``(x_t, y_t)`` is appended, with ``mu`` and ``sigma`` the latent
    (noise-free) posterior of the current dataset at ``x_t``: reset if
    ``|y_t - mu(x_t)| > E_t = sqrt(2 ln(pi^2 tau^2 / (3 delta))) (sigma(x_t) + sigma_n)``.

    Options (choices the paper leaves open, spec §3.9):

    * ``delta`` (delta_B, default 0.01: the value in the authors' group's code, spec §3.3);
    * ``counter``: tau is the number of observations held since the last reset (``"reset"``,
      default, the group's ``learn_counter``) or the number of observations so far (``"global"``);
    * ``min_tau``: test only when the dataset holds >= ``min_tau`` points (default 5; spec
      §3.9 suggests 1-2 for a GP with fixed hyperparameters). Our GP standardises y over its
      data and refits every hyperparameter each iteration, so right after a reset the bound is
      meaningless: one point gives ``y_std = 1`` in raw units, and with ``min_tau = 1`` the
      kept triggering point triggers again at once, for ever
      (tests/algorithms/test_resets.py); with 2-4 points the ML fit interpolates (l_S at its
      floor) and ``y_std`` underestimates the output scale, giving spurious resets. Five was the
      smallest robust value in our checks;
    * ``keep_trigger``: after a reset the dataset is ``{(x_t, y_t)}`` (default, the group's code
      and spec §3.2) or empty;
    * ``noise_std``: sigma_n in the output's units. ``None`` (default) uses the fitted noise,
      ``sqrt(noise_var) * y_std``. Beware W-DBO's finding (App. H.3): on drifting data the ML
      noise absorbs the drift, E_t grows and the trigger stops firing; a fixed value avoids it.

    The test runs only after warm-up. Hyperparameters are not reset. Recorded each iteration:
    the statistic ``|y - mu|``, the threshold ``E_t`` (NaN when not tested), resets and tau.
    """

    kind = "event-trigger"

    def __init__(
        self,
        *,
        delta: float = 0.01,
        counter: str = "reset",
        min_tau: int = 5,
        keep_trigger: bool = True,
        noise_std: float | None = None,
    ) -> None:
        super().__init__()
        if not 0.0 < float(delta) < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        if counter not in TRIGGER_COUNTERS:
            raise ValueError(f"unknown counter {counter!r}; valid: {', '.join(TRIGGER_COUNTERS)}")
        if isinstance(min_tau, bool) or not isinstance(min_tau, int | np.integer) or min_tau < 1:
            raise ValueError(f"min_tau must be an integer >= 1, got {min_tau!r}")
        if noise_std is not None and not (math.isfinite(noise_std) and noise_std >= 0):
            raise ValueError(f"noise_std must be a finite number >= 0 or None, got {noise_std!r}")
        self.delta = float(delta)
        self.counter = counter
        self.min_tau = int(min_tau)
        self.keep_trigger = bool(keep_trigger)
        self.noise_std = None if noise_std is None else float(noise_std)
        self.observations = 0
        self.statistic = float("nan")
        self.threshold = float("nan")
        self.triggered = False

    def bind(self, context: PartContext, *, surrogate: Surrogate, removal: RemovalRule | None,
             editor: DatasetEditor) -> None:
        super().bind(context, surrogate=surrogate, removal=removal, editor=editor)
        self.observations = 0

    def sigma_noise(self) -> float:
        """sigma_n in output units: ``noise_std``, or the fitted noise de-standardised."""
        if self.noise_std is not None:
            return self.noise_std
        surrogate = self.gp_surrogate
        return math.sqrt(surrogate.hyperparameters.noise_var) * surrogate.gp.y_std

    def before_append(self, x: np.ndarray, t: float, y: float, *, now: float, warmup: bool) -> None:
        self.statistic = self.threshold = float("nan")
        self.triggered = False
        surrogate = self.surrogate
        tau = surrogate.n if self.counter == "reset" else self.observations
        self.observations += 1
        if warmup or surrogate.n < self.min_tau:  # held points, whatever the counter
            return
        pred = surrogate.predict(np.asarray(x, float).reshape(1, -1), t, include_noise=False)
        sigma = math.sqrt(max(float(pred.var[0]), 0.0))
        self.statistic = abs(float(y) - float(pred.mean[0]))
        self.threshold = trigger_threshold(tau, self.delta, sigma, self.sigma_noise())
        if self.statistic > self.threshold:
            self.triggered = True
            self._reset()

    def after_fit(self, *, now: float, warmup: bool) -> None:
        if self.triggered and not self.keep_trigger:
            self.editor.reset()  # drop the triggering point too; still one reset
            return
        self.since_reset += 1

    def state(self) -> dict[str, float]:
        return {
            "resets": float(self.resets),
            "since_reset": float(self.since_reset),
            "trigger_stat": self.statistic,
            "trigger_threshold": self.threshold,
        }

    def options(self) -> dict[str, Any]:
        return {
            "delta": self.delta,
            "counter": self.counter,
            "min_tau": self.min_tau,
            "keep_trigger": self.keep_trigger,
            "noise_std": self.noise_std,
        }


for _cls in (PeriodicReset, EventTrigger):
    register_component("dataset", _cls)

__all__ = [
    "EventTrigger",
    "PeriodicReset",
    "reset_period",
    "trigger_threshold",
]
