"""W-GP-UCB: weighted GP regression for non-stationary bandits (Deng et al., AISTATS 2022).

Observations are discounted, not dropped: observation s carries the weight ``w_s = gamma^{t-s}``
(the most recent has weight 1), and the surrogate is the weighted kernel ridge regression with the
two weighted matrices ``V = Phi^T W Phi + lambda I`` and ``V~ = Phi^T W^2 Phi + lambda I``
(spec_baselines.md §6.1). In the exact kernelised form of §6.2, with ``A = K + lambda W^{-1}``:

* ``a(x) = A^{-1} k(x)`` and ``mu(x) = a(x)^T y`` -- a GP posterior mean with heteroscedastic
  noise ``lambda / w_s`` on observation s;
* ``sigma~^2(x) = ||a||^2 + (1/lambda) [k(x,x) - 2 a^T k + a^T K a]``
  ``= (1/lambda) [k(x,x) - k^T a] + a^T (I - W^{-1}) a`` (using ``K a = k - lambda W^{-1} a``),
  the squared confidence width ``||phi(x)||_{V^{-1} V~ V^{-1}}``.

The weights change at every step (all old weights shrink by gamma), so ``A`` is refactorised once
per step (one O(n^3) Cholesky; no rank-one shortcut exists). Deng et al. analyse Nyström
features; we implement the *exact* kernel form of the same estimator (spec §6.2 decision).

The numerics are the model layer's: :class:`tvbo.algorithms.weighted.weighted_gp.WeightedGP` is the
exact GP with per-point noise ``lambda / w_s`` plus the paper's width. This module provides the
discounting policy (:func:`discount_weights`), :class:`WeightedGPSurrogate`
(``kind="weighted-gp"``: options, weights, the ML fit) and the preset ``w-gp-ucb``; it computes
no posterior and counts no work.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from tvbo.algorithms.components import (
    DatasetEditor,
    PartContext,
    Surrogate,
    register_component,
)
from tvbo.algorithms.weighted.weighted_gp import WeightedGP
from tvbo.gp.exact import ExactGP, Prediction
from tvbo.gp.fit import fit_hyperparameters
from tvbo.gp.kernels import HyperparameterBounds, Hyperparameters, SeparableKernel, correlation

DISCOUNT_BY: tuple[str, ...] = ("step", "time")
HYPERPARAMETER_MODES: tuple[str, ...] = ("ml", "fixed")


def discount_weights(lags: np.ndarray, discount: float, min_weight: float = 0.0) -> np.ndarray:
    """``gamma^lag`` (relative weights: the newest, lag 0, has weight 1), floored at min_weight.

    The floor keeps ``1 / w`` finite: an observation of weight 1e-12 has no influence left
    (its noise is 1e12 lambda), so flooring changes nothing measurable but avoids inf/overflow.
    """
    lags = np.asarray(lags, float)
    if np.any(lags < 0):
        raise ValueError("discount lags must be >= 0 (weights are relative to the newest)")
    with np.errstate(under="ignore"):
        w = np.exp(lags * math.log(discount)) if discount < 1.0 else np.ones_like(lags)
    return np.maximum(w, min_weight)


class WeightedGPSurrogate(Surrogate):
    """W-GP-UCB's surrogate: the weighted GP of Deng et al. (2022) in exact kernel form.

    Choices (spec §6.5 leaves them open; all are options):

    * ``discount`` gamma (default 0.99): the effective memory ``1/(1-gamma)`` = 100 steps plays
      the role of a sliding window (§6.4 heuristic; the paper's recommended value was not found).
    * ``discount_by``: ``"step"`` (default) weighs by the observation's step index s -- the
      count of observations ingested, warm-up included -- as in the paper's rounds;
      ``"time"`` weighs by the sample-time stamp, ``gamma^{(t_newest - t_s) / time_unit}``.
      Both are relative to the newest held observation (weight 1), so weights depend only on the
      data and one factorisation per data change serves every prediction.
    * ``regularizer`` lambda: ``"noise"`` (default) = the noise variance of the ML fit, so that
      with gamma = 1 the surrogate IS the GP-UCB posterior (mean and variance) and the shared beta
      schedule means the same thing; or a fixed number > 0 (third-party code: 0.01).
    * ``hyperparameters``: ``"ml"`` (default) fits (lambda_signal, l_S, noise) by maximum
      likelihood on the *unweighted* data, like every other baseline; ``"fixed"`` keeps
      ``initial`` (the kernel the paper assumes known).
    * ``var`` scaling: :class:`Prediction.var` is ``lambda sigma~^2`` in output units, so the
      UCB ``mu + sqrt(beta) sqrt(var)`` is the paper's ``mu + beta_paper sigma~`` with
      ``beta_paper = sqrt(beta lambda)`` (at gamma = 1, ``lambda sigma~^2`` is the GP variance).
      ``include_noise`` adds lambda (the noise of a weight-1 observation).
    * y is standardised over the held data (mean and std, unweighted), as in the exact GP.
    * ``min_weight`` floors the weights (see :func:`discount_weights`); the dataset is never
      truncated here (that would be a dataset policy), so the cost grows as n^3 per step.

    State: ``signal_var``, ``lengthscale_space``, ``noise_var``, ``regularizer`` (lambda in
    use), ``discount``, ``weight_min`` (the oldest weight), ``weight_sum`` (effective n).
    """

    kind = "weighted-gp"

    def __init__(
        self,
        *,
        discount: float = 0.99,
        discount_by: str = "step",
        time_unit: float = 1.0,
        regularizer: float | str = "noise",
        hyperparameters: str = "ml",
        space_kernel: str = "matern52",
        bounds: Mapping[str, Any] | None = None,
        initial: Mapping[str, float] | None = None,
        fit_max_iter: int = 50,
        fit_restarts: int = 0,
        standardize: bool = True,
        min_weight: float = 1e-12,
    ) -> None:
        if not (isinstance(discount, int | float) and 0 < discount <= 1):
            raise ValueError(f"discount (gamma) must be in (0, 1], got {discount!r}")
        if discount_by not in DISCOUNT_BY:
            raise ValueError(
                f"unknown discount_by {discount_by!r}; valid: {', '.join(DISCOUNT_BY)}"
            )
        if not (isinstance(time_unit, int | float) and math.isfinite(time_unit) and time_unit > 0):
            raise ValueError(f"time_unit must be a finite number > 0, got {time_unit!r}")
        if isinstance(regularizer, str):
            if regularizer != "noise":
                raise ValueError(
                    f"regularizer must be 'noise' or a number > 0, got {regularizer!r}"
                )
        elif isinstance(regularizer, bool) or not (
            isinstance(regularizer, int | float) and math.isfinite(regularizer) and regularizer > 0
        ):
            raise ValueError(f"regularizer must be 'noise' or a number > 0, got {regularizer!r}")
        if hyperparameters not in HYPERPARAMETER_MODES:
            raise ValueError(
                f"unknown hyperparameters mode {hyperparameters!r}; valid: "
                f"{', '.join(HYPERPARAMETER_MODES)}"
            )
        if not 0 <= min_weight < 1:
            raise ValueError(f"min_weight must be in [0, 1), got {min_weight!r}")
        if fit_max_iter < 1 or fit_restarts < 0:
            raise ValueError("fit_max_iter must be >= 1 and fit_restarts >= 0")
        correlation(space_kernel)
        init = {"signal_var": 1.0, "lengthscale_space": 0.2, "noise_var": 0.01}
        unknown = sorted(set(initial or {}) - set(init))
        if unknown:
            raise ValueError(f"initial: unknown hyperparameter(s) {unknown}; valid: {sorted(init)}")
        init.update(initial or {})
        self.discount = float(discount)
        self.discount_by = discount_by
        self.time_unit = float(time_unit)
        self.regularizer_option = regularizer
        self.hyperparameter_mode = hyperparameters
        self.space_kernel = space_kernel
        self.bounds = HyperparameterBounds(**dict(bounds or {}))
        self.initial = init
        self.fit_max_iter = int(fit_max_iter)
        self.fit_restarts = int(fit_restarts)
        self.standardize = bool(standardize)
        self.min_weight = float(min_weight)
        self.kernel = SeparableKernel(space=space_kernel, time=None)
        self.hp = Hyperparameters(lengthscale_time=None, **init)
        #: observations ingested so far (the step index of the next one minus 1); never reset
        #: by :meth:`clear`, so weights after a reset still follow the global step count
        self._steps_taken = 0
        self.gp: ExactGP | None = None
        self._reset_data(d=None)

    # -- data ----------------------------------------------------------------------------------
    def _reset_data(self, d: int | None) -> None:
        self._steps = np.empty(0)
        if self._model is not None:
            self._model.set_data(np.empty((0, d or 0)), None, np.empty(0))

    #: the weighted GP (model layer); built at bind, on the run's work counter
    _model: WeightedGP | None = None

    def bind(self, context: PartContext, *, editor: DatasetEditor | None = None) -> None:
        super().bind(context, editor=editor)
        self._steps_taken = 0
        self._model = WeightedGP(
            self.kernel, self.hp, standardize=self.standardize, work=context.work
        )
        self._reset_data(context.problem.d)
        self.gp = (
            ExactGP(self.kernel, self.hp, standardize=self.standardize, work=context.work)
            if self.hyperparameter_mode == "ml"
            else None
        )

    @property
    def n(self) -> int:
        return self._model.n if self._model is not None else 0

    @property
    def X(self) -> np.ndarray:
        return self._model.X

    @property
    def T(self) -> np.ndarray:
        return self._model.T

    @property
    def y(self) -> np.ndarray:
        return self._model.y

    @property
    def steps(self) -> np.ndarray:
        """Step index s of every held observation (its rank among all observations ingested)."""
        return self._steps

    def append(self, x, t, y) -> None:
        x = np.asarray(x, float).reshape(1, -1)
        self._steps_taken += 1
        self._model.append(x, float(t), float(y))
        self._steps = np.append(self._steps, float(self._steps_taken))
        if self.gp is not None:
            self.gp.append(x[0], None, float(y))

    def remove(self, i: int) -> None:
        n = self.n
        if not isinstance(i, int | np.integer) or not -n <= i < n:
            raise IndexError(f"observation index {i!r} out of range for n = {n}")
        i = int(i) % n
        self._model.remove(i)
        self._steps = np.delete(self._steps, i)
        if self.gp is not None:
            self.gp.remove(i)

    def clear(self) -> None:
        self._reset_data(self.context.problem.d)
        if self.gp is not None:
            self.gp.set_data(np.empty((0, self.context.problem.d)), None, np.empty(0))

    # -- hyperparameters -------------------------------------------------------------------
    def fit(self) -> None:
        """ML fit of (lambda_signal, l_S, noise) on the unweighted data (``"ml"`` mode)."""
        if self.gp is None or self.n < 2:
            return
        fit_hyperparameters(
            self.gp,
            self.bounds,
            max_iter=self.fit_max_iter,
            n_restarts=self.fit_restarts,
            rng=self.context.rng,
            source=f"surrogate:{self.kind}",
        )
        hp = self.gp.hyperparameters
        if hp != self.hp:
            self.hp = hp
            self._model.set_hyperparameters(hp)  # K is recomputed at the next factorisation

    @property
    def hyperparameters(self) -> Hyperparameters:
        return self.hp

    @property
    def regularizer(self) -> float:
        """lambda in standardised units: the fitted noise (``"noise"``) or the fixed value."""
        if self.regularizer_option == "noise":
            return float(self.hp.noise_var)
        return float(self.regularizer_option)

    def weights(self) -> np.ndarray:
        """Relative weights ``gamma^{lag}`` of the held observations (newest = 1)."""
        if self.n == 0:
            return np.empty(0)
        if self.discount_by == "step":
            lags = self._steps.max() - self._steps
        else:
            T = self.T
            lags = (T.max() - T) / self.time_unit
        return discount_weights(lags, self.discount, self.min_weight)

    # -- inference -------------------------------------------------------------------------
    #: pending-point fantasies (tvbo.acquisition.pending) condition through append/remove
    supports_fantasy = True

    @contextmanager
    def fantasy(self, X: np.ndarray, T: np.ndarray, Y: np.ndarray) -> Iterator[Surrogate]:
        """As :meth:`Surrogate.fantasy`, with y's standardisation frozen at the real data's.

        The fantasies take the next step indices, so with ``discount_by="step"`` they age the
        real observations by one step each -- as GP-BUCB counts every issued query as a round.
        """
        self._frozen_standardization = self._standardization()
        # the base class restores this part's own attributes; the weighted GP is an object of
        # its own (its data arrays are replaced on append, never mutated), so restore it too
        saved_model = dict(self._model.__dict__)
        try:
            with super().fantasy(X, T, Y) as surrogate:
                yield surrogate
        finally:
            self._model.__dict__.clear()
            self._model.__dict__.update(saved_model)
            self._frozen_standardization = None

    def _standardization(self) -> tuple[float, float]:
        frozen = getattr(self, "_frozen_standardization", None)
        if frozen is not None:
            return frozen
        if not self.standardize or self.n == 0:
            return 0.0, 1.0
        y = self.y
        std = float(np.std(y))
        return float(np.mean(y)), (std if std >= 1e-12 else 1.0)

    def model(self) -> WeightedGP:
        """The weighted GP conditioned on the current weights (factorised once per change)."""
        model = self._model
        if not model.conditioned:
            frozen = getattr(self, "_frozen_standardization", None)
            model.condition(self.weights(), self.regularizer, standardization=frozen)
        return model

    def predict(self, X, t=None, *, grad=False, include_noise=False) -> Prediction:
        """Weighted posterior at X (t is ignored: time enters only through the weights)."""
        X = np.asarray(X, float)
        if X.ndim != 2 or X.shape[1] != self.context.problem.d:
            raise ValueError(f"X must be (m, {self.context.problem.d}), got shape {X.shape}")
        return self.model().predict(X, t, grad=grad, include_noise=include_noise)

    # -- records ---------------------------------------------------------------------------
    def state(self) -> dict[str, float]:
        w = self.weights()
        return {
            "signal_var": self.hp.signal_var,
            "lengthscale_space": self.hp.lengthscale_space,
            "noise_var": self.hp.noise_var,
            "regularizer": self.regularizer,
            "discount": self.discount,
            "weight_min": float(w.min()) if w.size else float("nan"),
            "weight_sum": float(w.sum()),
        }

    def options(self) -> dict[str, Any]:
        return {
            "discount": self.discount,
            "discount_by": self.discount_by,
            "time_unit": self.time_unit,
            "regularizer": self.regularizer_option,
            "hyperparameters": self.hyperparameter_mode,
            "space_kernel": self.space_kernel,
            "bounds": dict(self.bounds.__dict__),
            "initial": self.initial,
            "fit_max_iter": self.fit_max_iter,
            "fit_restarts": self.fit_restarts,
            "standardize": self.standardize,
            "min_weight": self.min_weight,
        }


register_component("surrogate", WeightedGPSurrogate)
