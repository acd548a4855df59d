"""PE-GP-UCB's Intel experiment: one candidate GP prior per previous day (B.8.2, spec D.17).

This module is the data-free maths of one day's prior (:func:`day_prior` from a loaded field);
reading the prepared days belongs to the Intel loader,
:func:`tvbo.benchmarks.temperature.intel_priors` (so the arrow points one way: temperature ->
intel_priors). The ``temperature-sensors`` benchmark builds the priors from its ``prior_paths``
option and declares them as its ``candidate_priors``, which the engine hands to the algorithm
(``ProblemInfo.candidate_priors``; algorithm option ``priors: benchmark``). The priors are data --
one mapping per day with the keys of :class:`tvbo.models.candidate_prior.CandidatePrior` -- so
the algorithms never read data files and the benchmark never imports an algorithm.

Choices (spec D.17): each day's prepared 10-minute field (``python -m tvbo.data prepare-intel``)
gives the empirical covariance between its sensors over the day's bins (unscaled, degC^2); the
mean is the day's mean temperature (the paper's zero-mean prior read as a prior on temperatures
centred by that day's mean); ``eps`` of the temporal factor ``(1 - eps)^(|t - t'| / 2)``
maximises the day's own marginal likelihood (Kronecker form, :func:`kronecker_log_likelihood`)
over ``epsilon_grid``; one step (bin) = the benchmark's ``step_seconds`` virtual seconds;
``noise_var`` is R^2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

_LOG_2PI = math.log(2.0 * math.pi)
#: the default grid of eps values a day's prior chooses from by marginal likelihood
EPSILON_GRID: tuple[float, ...] = (0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 0.6)
#: R^2 of the priors (the ``temperature`` table's noise variance)
PRIOR_NOISE_VAR = 0.16


def kronecker_log_likelihood(
    Y: np.ndarray, C: np.ndarray, epsilon: float, noise_var: float
) -> float:
    """log N(vec Y | 0, A_eps (x) C + R^2 I) for a (time, sensor) block ``Y``.

    ``A_eps[k, l] = (1 - eps)^(|k - l| / 2)`` over the time bins. Both factors are diagonalised
    once, so the (n_t n_s)-dimensional likelihood costs two small eigendecompositions.
    """
    nt = Y.shape[0]
    k = np.arange(nt)
    A = (1.0 - epsilon) ** (np.abs(k[:, None] - k[None, :]) / 2.0)
    la, Qa = np.linalg.eigh(A)
    lc, Qc = np.linalg.eigh(C)
    lam = np.maximum(la, 0.0)[:, None] * np.maximum(lc, 0.0)[None, :] + noise_var
    Z = Qa.T @ Y @ Qc
    return float(-0.5 * np.sum(Z * Z / lam) - 0.5 * np.sum(np.log(lam)) - 0.5 * Y.size * _LOG_2PI)


def day_prior(
    values: np.ndarray,
    coords: np.ndarray,
    *,
    step_seconds: float,
    noise_var: float = PRIOR_NOISE_VAR,
    epsilon_grid: Sequence[float] = EPSILON_GRID,
) -> dict[str, Any]:
    """The candidate prior of one day's ``(time, sensor)`` field at sensor ``coords`` (m, 2)."""
    Y = values - values.mean()
    C = np.cov(values, rowvar=False)
    C = 0.5 * (C + C.T) + 1e-9 * np.mean(np.diag(C)) * np.eye(len(C))
    grid = [float(e) for e in epsilon_grid]
    lml = [kronecker_log_likelihood(Y, C, e, noise_var) for e in grid]
    return {
        "space_kernel": "empirical",
        "covariance": C,
        "locations": np.asarray(coords, float),
        "mean": float(values.mean()),
        "epsilon": grid[int(np.argmax(lml))],
        "time_unit": float(step_seconds),
        "noise_var": float(noise_var),
    }
