"""Multi-start gradient ascent of an acquisition function over [0,1]^d.

The recipe of BoTorch's ``optimize_acqf`` (the routine every algorithm of the BOLT papers shares):
evaluate the acquisition on ``raw_samples`` scrambled Sobol points, start L-BFGS-B from the best
``n_restarts`` of them, return the best local optimum. Defaults are the public W-DBO reference's
(20 restarts, 512 raw samples).

The restarts are independent, so their sum is separable: we run ONE L-BFGS-B over the stacked
``(n_restarts * d)`` vector of all starts. Each objective evaluation is then a single batched GP
prediction of ``n_restarts`` points (matrix operations instead of ``n_restarts`` Python-level
optimiser loops), which is what makes an acquisition step cost milliseconds. The price is a shared
stopping rule: the joint run stops when the whole batch has converged.

A finite candidate set (discrete benchmarks) is handled by exhaustive evaluation instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tvbo.lbfgsb import minimize_lbfgsb
from tvbo.qmc import sobol
from tvbo.work import WorkCounter

#: a batched acquisition: X (m, d) -> values (m,), gradients (m, d) (None when grad=False)
BatchedAcquisition = Callable[[np.ndarray, bool], tuple[np.ndarray, np.ndarray | None]]


@dataclass(frozen=True)
class AcquisitionOptimizer:
    """Multi-start L-BFGS-B seeded by Sobol raw samples (see module docstring).

    ``n_restarts``: local ascents; ``raw_samples``: Sobol points scored to pick the starts;
    ``maxiter``: L-BFGS-B iterations of the joint run; ``batch_size``: raw samples scored per
    batched call (bounds memory).
    """

    n_restarts: int = 20
    raw_samples: int = 512
    maxiter: int = 200
    batch_size: int = 512

    def __post_init__(self) -> None:
        if self.n_restarts < 1:
            raise ValueError(f"n_restarts must be >= 1, got {self.n_restarts}")
        if self.raw_samples < self.n_restarts:
            raise ValueError(
                f"raw_samples ({self.raw_samples}) must be >= n_restarts ({self.n_restarts})"
            )
        if self.maxiter < 1 or self.batch_size < 1:
            raise ValueError("maxiter and batch_size must be >= 1")

    def maximize(
        self,
        acquisition: BatchedAcquisition,
        d: int,
        rng: np.random.Generator,
        *,
        candidates: np.ndarray | None = None,
        extra_starts: np.ndarray | None = None,
        work: WorkCounter | None = None,
    ) -> tuple[np.ndarray, float]:
        """Return ``(x_best, value_best)``.

        ``extra_starts`` (k, d) are added to the scored raw samples (e.g. the incumbent), so a
        good known point is never lost to an unlucky Sobol draw.
        """
        if candidates is not None:
            return self._maximize_discrete(acquisition, candidates)
        raw = self._sobol(d, rng)
        if extra_starts is not None and len(extra_starts):
            raw = np.vstack([raw, np.clip(np.asarray(extra_starts, float).reshape(-1, d), 0, 1)])
        values = self._score(acquisition, raw)
        order = np.argsort(-values, kind="stable")[: self.n_restarts]
        starts = raw[order]
        best_raw = int(order[0])

        k = len(starts)

        def objective(z: np.ndarray) -> tuple[float, np.ndarray]:
            v, g = acquisition(z.reshape(k, d), True)
            if work is not None:
                work.call()
            # np.add.reduce is what np.sum(v) runs, without its Python dispatch layers
            return -float(np.add.reduce(v, axis=None)), -np.asarray(g, float).ravel()

        # = scipy's minimize(L-BFGS-B, bounds=[(0, 1)] * (k * d)) bit for bit, without the
        # per-call overhead of its wrapper (tvbo.lbfgsb)
        result = minimize_lbfgsb(objective, starts.ravel(), 0.0, 1.0, maxiter=self.maxiter)
        finals = np.clip(result.x.reshape(k, d), 0.0, 1.0)
        final_values, _ = acquisition(finals, False)
        i = int(np.argmax(final_values))
        if final_values[i] >= values[best_raw]:
            return finals[i], float(final_values[i])
        return raw[best_raw].copy(), float(values[best_raw])

    # -- internals --------------------------------------------------------------------------
    def _sobol(self, d: int, rng: np.random.Generator) -> np.ndarray:
        # = scipy.stats.qmc.Sobol(d, scramble=True, rng=rng).random(raw_samples), bit for bit,
        # without importing scipy.stats (a quarter of a run's start-up): see tvbo.qmc
        return sobol(d, self.raw_samples, rng)

    def _score(self, acquisition: BatchedAcquisition, X: np.ndarray) -> np.ndarray:
        parts = [acquisition(X[i : i + self.batch_size], False)[0]
                 for i in range(0, len(X), self.batch_size)]
        return np.concatenate(parts)

    def _maximize_discrete(
        self, acquisition: BatchedAcquisition, candidates: np.ndarray
    ) -> tuple[np.ndarray, float]:
        candidates = np.asarray(candidates, float)
        if candidates.ndim != 2 or len(candidates) == 0:
            raise ValueError("candidates must be a non-empty (m, d) array")
        values = self._score(acquisition, candidates)
        i = int(np.argmax(values))
        return candidates[i].copy(), float(values[i])
