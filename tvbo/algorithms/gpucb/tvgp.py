"""TV-GP-UCB (Bogunovic, Scarlett & Cevher, AISTATS 2016): the back-to-prior surrogate.

Bogunovic's Markov model ``f_{t+1} = sqrt(1 - eps) f_t + sqrt(eps) g_{t+1}`` induces the separable
covariance ``k(x, x') (1 - eps)^{|i - j| / 2}`` between steps i and j (spec_baselines.md §2.2).
Because ``(1 - eps)^{|i-j|/2} = exp(-|i - j| / l)`` with ``l = -2 / ln(1 - eps)``, the temporal
factor is a Matérn-1/2 correlation of the lag with lengthscale l, so TV-GP-UCB is the exact GP of
:class:`~tvbo.algorithms.components.GPSurrogate` with a Matérn-1/2 temporal kernel whose time
coordinate is the iteration index, and the forgetting rate is fitted by maximum likelihood through
l (Supp. App. B, eqs. (24)-(25): same likelihood, reparametrised).

The algorithm is the preset ``tv-gp-ucb``: this surrogate, GP-UCB at the upcoming step, and no
dataset policy (the paper keeps everything; §2.3's truncation is left to a dataset policy).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from tvbo.algorithms.components import (
    DatasetEditor,
    GPSurrogate,
    PartContext,
    register_component,
)
from tvbo.gp.exact import Prediction
from tvbo.gp.lml import FitResult

#: what the temporal coordinate of the kernel counts
TIME_AXES: tuple[str, ...] = ("index", "time")

#: Bounds on the forgetting rate: those of Ray-Tune PB2's ``TV_SquaredExp`` (spec §2.8). The
#: upper 0.5 keeps at least ~0.7 correlation between consecutive steps; 1e-5 is "static" over
#: any run we simulate (l = 2e5 steps).
EPS_BOUNDS: tuple[float, float] = (1e-5, 0.5)


def eps_to_lengthscale(eps: float) -> float:
    """Matérn-1/2 lengthscale with ``exp(-1/l) = sqrt(1 - eps)``: ``l = -2 / ln(1 - eps)``."""
    eps = float(eps)
    if not 0.0 < eps < 1.0:
        raise ValueError(f"forgetting rate eps must be in (0, 1), got {eps!r}")
    return -2.0 / math.log1p(-eps)


def lengthscale_to_eps(lengthscale: float) -> float:
    """Inverse of :func:`eps_to_lengthscale`: ``eps = 1 - exp(-2 / l)``."""
    lengthscale = float(lengthscale)
    if not (math.isfinite(lengthscale) and lengthscale > 0):
        raise ValueError(f"lengthscale must be a finite number > 0, got {lengthscale!r}")
    return -math.expm1(-2.0 / lengthscale)


def annotate_forgetting_rate(result: FitResult, eps: float, *, time_unit: str) -> None:
    """Add the forgetting rate fitted through ``l_T`` to a fit-health record.

    ``eps = 1 - exp(-2 / l_T)`` decreases in ``l_T``, so eps is at its LOWER bound exactly when
    ``l_T`` is at its upper one (and vice versa); ``time_unit`` says what ``l_T`` counts.
    """
    record = result.record
    if record is None:
        return
    record["epsilon"] = float(eps)
    record["epsilon_at_lower"] = int(record.get("lengthscale_time_at_upper", 0))
    record["epsilon_at_upper"] = int(record.get("lengthscale_time_at_lower", 0))
    record["time_unit"] = time_unit


def check_eps_bounds(eps_bounds: Sequence[float]) -> tuple[float, float]:
    """Validate a pair ``(lo, hi)`` with ``0 < lo <= hi < 1`` and return it as floats."""
    try:
        lo, hi = (float(v) for v in eps_bounds)
    except (TypeError, ValueError):
        raise ValueError(f"eps_bounds must be a pair (lo, hi), got {eps_bounds!r}") from None
    if not (0.0 < lo <= hi < 1.0):
        raise ValueError(f"eps_bounds need 0 < lo <= hi < 1, got ({lo!r}, {hi!r})")
    return lo, hi


def eps_lengthscale_bounds(eps_bounds: Sequence[float]) -> tuple[float, float]:
    """Lengthscale bounds equivalent to ``eps_bounds`` (l decreases as eps grows)."""
    lo, hi = check_eps_bounds(eps_bounds)
    return eps_to_lengthscale(hi), eps_to_lengthscale(lo)


class TVGPSurrogate(GPSurrogate):
    """TV-GP-UCB's back-to-prior GP: ``lambda k_S(x, x') (1 - eps)^{|s - s'| / 2}``.

    Choices the paper leaves open (spec_baselines.md §2.11), each an option:

    * ``time_axis``: ``"index"`` (default; the paper's model and W-DBO's protocol, §7.8/App. H.3)
      -- observation j gets the step ``s_j`` = its position in the stream of all observations
      (warm-up included, starting at 1); ``"time"`` uses the sample time stamp in seconds, so eps
      becomes a forgetting rate per second.
    * eps is refitted by maximum likelihood with every hyperparameter fit (W-DBO refits it at
      every iteration, §2.8) through ``l_T = -2 / ln(1 - eps)``, inside ``eps_bounds`` (default
      PB2's ``[1e-5, 0.5]``, converted to ``l_T`` in ``[2.885, 2.0e5]`` steps). ``initial_eps``
      is the first fit's start (default: the geometric middle of the l_T bounds, eps ~ 2.6e-3).
    * Prediction time: the engine asks for the posterior at a clock time t; in index mode t maps
      to the step whose sample is the first held observation stamped at or after t, and any t
      after the last observation's stamp maps to the upcoming step ``s = s_last + 1``. So the
      acquisition (called at the current time) scores ``f_{s_last + 1}``: eqs. (7)-(8) with the
      lag ``s - i``.
    * Prior mean: the exact GP standardises y over the held data, so "back to the prior" means
      back to the mean of the held observations (spec §2.3 recommends standardising).
    * ``fit_mode``: as :class:`~tvbo.algorithms.components.GPSurrogate`; with a mode other than
      ``"lbfgs"`` eps is fitted through l_T under that mode's constraint (``eps_bounds`` then only
      set the first start) and its ``time_scale`` is in steps (index axis) or seconds.
    * beta: the acquisition's schedule (default W-DBO's ``0.2 d log 2n``, shared by every UCB
      baseline for a fair comparison). Bogunovic's practical ``0.8 log(4t)`` is the registered
      rule ``"log"`` (:mod:`tvbo.acquisition.beta`): ``tv-gp-ucb: {beta: log}``, with t the
      acquisition's call count.

    ``T`` returns the observations' time stamps (seconds) whatever the axis, so removal rules and
    analyses see real times; ``steps`` (= ``gp.T``) is the model's temporal coordinate.
    """

    kind = "tv-gp"

    def __init__(
        self,
        *,
        time_axis: str = "index",
        eps_bounds: Sequence[float] = EPS_BOUNDS,
        initial_eps: float | None = None,
        space_kernel: str = "matern52",
        bounds: Mapping[str, Any] | None = None,
        initial: Mapping[str, float] | None = None,
        fit_max_iter: int = 50,
        fit_restarts: int = 0,
        standardize: bool = True,
        fit_mode: str = "lbfgs",
        fit_mode_options: Mapping[str, Any] | None = None,
    ) -> None:
        if time_axis not in TIME_AXES:
            raise ValueError(f"unknown time_axis {time_axis!r}; valid: {', '.join(TIME_AXES)}")
        if "lengthscale_time" in (bounds or {}):
            raise ValueError(
                "tv-gp: bound the forgetting rate with eps_bounds, not bounds['lengthscale_time']"
            )
        if "lengthscale_time" in (initial or {}):
            raise ValueError(
                "tv-gp: start the forgetting rate with initial_eps, not initial['lengthscale_time']"
            )
        self.eps_bounds = check_eps_bounds(eps_bounds)
        init = dict(initial or {})
        if initial_eps is not None:
            lo, hi = self.eps_bounds
            if not lo <= float(initial_eps) <= hi:
                raise ValueError(
                    f"initial_eps must lie in eps_bounds [{lo}, {hi}], got {initial_eps!r}"
                )
            init["lengthscale_time"] = eps_to_lengthscale(initial_eps)
        super().__init__(
            space_kernel=space_kernel,
            time_kernel="matern12",
            bounds=bounds,
            initial=init,
            fit_max_iter=fit_max_iter,
            fit_restarts=fit_restarts,
            standardize=standardize,
            fit_mode=fit_mode,
            fit_mode_options=fit_mode_options,
        )
        self.bounds = replace(self.bounds, lengthscale_time=eps_lengthscale_bounds(self.eps_bounds))
        self.time_axis = time_axis
        self.initial_eps = None if initial_eps is None else float(initial_eps)
        self._stamps = np.empty(0)
        self._next_step = 1

    def bind(self, context: PartContext, *, editor: DatasetEditor | None = None) -> None:
        super().bind(context, editor=editor)
        self._stamps = np.empty(0)
        self._next_step = 1

    # -- data --------------------------------------------------------------------------------
    @property
    def steps(self) -> np.ndarray:
        """The kernel's temporal coordinate of each held observation (step index or stamp)."""
        return self.gp.T

    @property
    def next_step(self) -> int:
        """Step index the next observation will get (1 + observations appended so far)."""
        return self._next_step

    def append(self, x, t, y) -> None:
        coordinate = float(self._next_step) if self.time_axis == "index" else float(t)
        self.gp.append(np.asarray(x, float), coordinate, float(y))
        self._stamps = np.append(self._stamps, float(t))
        self._next_step += 1

    def remove(self, i: int) -> None:
        self.gp.remove(i)
        self._stamps = np.delete(self._stamps, i)

    def clear(self) -> None:
        super().clear()
        self._stamps = np.empty(0)  # the step counter keeps running: steps are global

    # -- model ---------------------------------------------------------------------------------
    def model_time(self, t: float | np.ndarray) -> float | np.ndarray:
        """The kernel's temporal coordinate for clock time(s) t (see the class docstring)."""
        if self.time_axis == "time":
            return t
        t_arr = np.asarray(t, float)
        steps = self.gp.T
        pos = np.searchsorted(self._stamps, t_arr, side="left")
        held = pos < self._stamps.shape[0]
        safe = np.minimum(pos, max(steps.shape[0] - 1, 0))
        picked = steps[safe] if steps.shape[0] else np.zeros_like(t_arr)
        out = np.where(held, picked, float(self._next_step))
        return float(out) if out.ndim == 0 else out

    def predict(self, X, t, *, grad=False, include_noise=False) -> Prediction:
        return self.gp.predict(X, self.model_time(t), grad=grad, include_noise=include_noise)

    def annotate_fit(self, result: FitResult) -> None:
        """Fit health: the forgetting rate, and l_T counted in steps on the index axis."""
        annotate_forgetting_rate(
            result,
            lengthscale_to_eps(result.hyperparameters.lengthscale_time),
            time_unit="step" if self.time_axis == "index" else "s",
        )

    @property
    def forgetting_rate(self) -> float:
        """eps of the current hyperparameters (per step; per second if ``time_axis="time"``)."""
        return lengthscale_to_eps(self.gp.hyperparameters.lengthscale_time)

    def state(self) -> dict[str, float]:
        out = super().state()
        out["forgetting_rate"] = self.forgetting_rate
        return out

    def options(self) -> dict[str, Any]:
        """The constructor's options only: the GP surrogate's ``time_kernel`` (fixed here),
        ``prior`` and ``min_fit_size`` are not options of ``tv-gp``, and l_T (eps) is bounded
        and started by ``eps_bounds`` and ``initial_eps``, not by ``bounds``/``initial``."""
        gp = super().options()
        return {
            "time_axis": self.time_axis,
            "eps_bounds": list(self.eps_bounds),
            "initial_eps": self.initial_eps,
            "space_kernel": gp["space_kernel"],
            "bounds": {k: v for k, v in gp["bounds"].items() if k != "lengthscale_time"},
            "initial": {k: v for k, v in gp["initial"].items() if k != "lengthscale_time"},
            "fit_max_iter": gp["fit_max_iter"],
            "fit_restarts": gp["fit_restarts"],
            "standardize": gp["standardize"],
            "fit_mode": gp["fit_mode"],
            "fit_mode_options": gp["fit_mode_options"],
        }


register_component("surrogate", TVGPSurrogate)
