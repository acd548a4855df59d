"""The model layer's contract: what an algorithm may ask of a surrogate, and nothing more.

Layering (issue 11): ``tvbo.work`` <- ``tvbo.gp`` (kernels, exact GP, fits) <- ``tvbo.models``
(this protocol and the implementations every algorithm shares) <- ``tvbo.acquisition`` <-
``tvbo.algorithms``. An algorithm is a composition of one model, one acquisition and its own data
policy (keep, reset, remove, window); it never computes a posterior, a UCB or a beta itself, and it
never counts work: models and optimisers count their own through the ``work`` counter they hold.

:class:`Model` is the core every surrogate provides: data in (append one observation, remove one,
replace all), posterior out (mean and variance at points and time, with gradients in x for the
multi-start optimiser). Capabilities a model may add are separate, small protocols, so an
algorithm that needs one can say so in its type and check it once at setup instead of probing
attributes at run time:

* :class:`HasHyperparameters`: hyperparameters that can be read and set (fixed-hyperparameter
  mode is a model whose ``set_hyperparameters`` is called once and never by a fit);
* :class:`HasPointNoise`: observations with their own noise variance (SparQ-GP-UCB's experts);
* :class:`HasPriorMean`: a non-zero prior mean function (PE-GP-UCB's candidate priors);
* :class:`HasTemporalKernel`: a separable space x time kernel whose temporal part the W2
  relevance criterion integrates (W-DBO, BOLT);
* :class:`HasKernelDensity`: an exploration term that is a kernel density W(x), available in
  log space with the distance to the nearest observation (BOKE's kernel regression);
* :class:`HasSpaceTimeGradient`: a posterior at space-time points with gradients in x AND t
  (ABO's look-ahead optimises over future sampling times).

The exact GP (:class:`tvbo.gp.exact.ExactGP`) is the one GP implementation; BOKE's kernel
regression is a second implementation of :class:`Model`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from tvbo.gp.exact import Prediction
from tvbo.work import WorkCounter

__all__ = [
    "HasHyperparameters",
    "HasKernelDensity",
    "HasPointNoise",
    "HasPriorMean",
    "HasSpaceTimeGradient",
    "HasTemporalKernel",
    "Model",
    "Prediction",
]


@runtime_checkable
class Model(Protocol):
    """A surrogate of f(x, t): data in, posterior out, work counted on ``work``."""

    work: WorkCounter

    @property
    def n(self) -> int:
        """Number of observations the posterior is conditioned on."""
        ...

    @property
    def X(self) -> np.ndarray:
        """(n, d) observed points (read-only view)."""
        ...

    @property
    def T(self) -> np.ndarray:
        """(n,) observation times (read-only view)."""
        ...

    @property
    def y(self) -> np.ndarray:
        """(n,) observed values in original units (read-only view)."""
        ...

    def set_data(self, X: np.ndarray, T: np.ndarray | None, y: np.ndarray) -> None:
        """Replace every observation (a reset is ``set_data`` with empty arrays)."""
        ...

    def append(self, x: np.ndarray, t: float | None, y: float) -> None:
        """Condition on one more observation."""
        ...

    def remove(self, i: int) -> None:
        """Forget observation ``i`` (W-DBO, BOLT, sliding windows)."""
        ...

    def predict(
        self,
        X: np.ndarray,
        t: np.ndarray | float | None,
        *,
        grad: bool = False,
        include_noise: bool = False,
    ) -> Prediction:
        """Posterior mean and variance of f at (X, t), with d/dx when ``grad``."""
        ...


@runtime_checkable
class HasHyperparameters(Protocol):
    """A model whose hyperparameters can be read and set (by a fit, or fixed once)."""

    @property
    def hyperparameters(self): ...

    def set_hyperparameters(self, hp) -> None: ...

    def log_marginal_likelihood(self) -> float: ...


@runtime_checkable
class HasPointNoise(Protocol):
    """A model whose observations each carry their own noise variance (standardised units).

    ``set_data(X, T, y, noise=...)`` sets them all; ``information_gain`` is
    ``1/2 log det(Sigma + K) - 1/2 log det(Sigma)`` with Sigma the noise (SparQ-GP-UCB's beta).
    """

    @property
    def point_noise(self) -> np.ndarray: ...

    def append_with_noise(self, x: np.ndarray, t: float | None, y: float,
                          noise_var: float) -> None: ...

    def set_point_noise(self, noise: np.ndarray | None) -> None: ...

    def information_gain(self) -> float: ...


@runtime_checkable
class HasPriorMean(Protocol):
    """A model with a non-zero prior mean function m(x) (in original units).

    Implemented by :class:`tvbo.gp.exact.ExactGP` (``prior_mean=``; zeros without one), the
    exact GP of a fixed candidate prior (:meth:`tvbo.models.candidate_prior.CandidatePrior.model`).
    """

    def prior_mean(self, X: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class HasTemporalKernel(Protocol):
    """A model with a separable kernel k_S(x, x') k_T(t, t') (the W2 criterion needs k_T)."""

    kernel: object


@runtime_checkable
class HasKernelDensity(Protocol):
    """A model whose exploration term is a kernel density W(x) (BOKE, Zhu et al., Eq. 3.9).

    ``predict`` gives ``var = 1 / W``, which overflows far from the data; ``regression`` gives
    the mean, ``log W`` (``-inf`` where W = 0) and the distance to the nearest observation, with
    their gradients in x when ``grad`` (a :class:`tvbo.algorithms.boke.kernel_regression.KRResult`),
    so an acquisition can work in log space and break ties where W = 0.
    """

    def regression(self, X: np.ndarray, *, grad: bool = False): ...


@runtime_checkable
class HasSpaceTimeGradient(Protocol):
    """A model whose posterior at points ``(X[i], T[i])`` has gradients in x and t.

    ``dmean`` and ``dvar`` of the returned prediction have ``d + 1`` columns (d spatial, then
    time). ABO's look-ahead acquisition (:mod:`tvbo.algorithms.abo.lookahead`) needs it.
    """

    def predict_space_time(self, X: np.ndarray, T: np.ndarray, *, grad: bool = False,
                           include_noise: bool = False) -> Prediction: ...
