"""ABO's look-ahead: GP-UCB jointly over the configuration x and a future sampling time t.

Nyikosa, Osborne & Roberts (2018), "Bayesian optimisation for dynamic problems" (ABO, arXiv
1803.03432; the author's MATLAB code ``doBayesOpt.m``, spec_baselines.md §4): once the fitted
temporal lengthscale has stabilised, ABO chooses *when* to sample as well as *where*, inside a
window ``[t_lo, t_hi]`` of the future. The acquisition is the package's one UCB
(:func:`tvbo.acquisition.ucb.ucb`, ``mu + sqrt(beta) sigma``) evaluated on a
:class:`LookaheadWindow`: the (d+1)-dimensional unit box ``u = (x, tau)`` with
``t = t_lo + tau (t_hi - t_lo)``, whose posterior and gradients come from any model with the
:class:`~tvbo.models.protocol.HasSpaceTimeGradient` capability (the exact GP); the time gradient
is scaled by the window length (chain rule). It is maximised by the shared multi-start optimiser
(:class:`~tvbo.acquisition.optimize.AcquisitionOptimizer`: Sobol raw samples in the (d+1)-box,
then L-BFGS-B with analytic gradients in x and t); on a finite candidate set, exhaustively over
candidates x ``time_grid`` evenly spaced times of the window. Work is counted by the model and
by the optimiser on the model's counter.

Beta (:class:`LookaheadBeta`): any schedule of :func:`~tvbo.acquisition.beta.make_beta`, or ABO's
own ``kappa_i`` (registered rule ``abo``, a sqrt(beta)) squared.

When the window is empty (before stability, or ABO-t) ABO is UCB at the present time:
:meth:`LookaheadUCB.at_present`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvbo.acquisition.beta import BetaSchedule, beta_rule
from tvbo.acquisition.optimize import AcquisitionOptimizer
from tvbo.acquisition.ucb import ucb
from tvbo.gp.exact import Prediction
from tvbo.models.protocol import HasSpaceTimeGradient, Model

__all__ = ["LookaheadBeta", "LookaheadUCB", "LookaheadWindow"]


@dataclass(frozen=True)
class LookaheadBeta:
    """beta of the look-ahead UCB: ``schedule(d, n, i)``, or ABO's ``kappa_i^2`` when None."""

    schedule: BetaSchedule | None = None
    kappa_delta: float = 0.1

    def __post_init__(self) -> None:
        if not 0 < self.kappa_delta < 1:
            raise ValueError(f"kappa_delta must be in (0, 1), got {self.kappa_delta!r}")

    def __call__(self, d: int, n: int, i: int) -> float:
        """beta at ABO's iteration ``i`` with ``n`` observations in dimension ``d``."""
        if self.schedule is None:
            return beta_rule("abo")(i=i, d=d, delta=self.kappa_delta) ** 2
        return float(self.schedule(d, n, i))


@dataclass
class LookaheadWindow:
    """The (d+1)-dim unit box seen by the optimiser: ``u = (x, tau)``, ``t = t_lo + tau * span``.

    A predictor for the shared :func:`ucb` (``predict``; the ``t`` argument is unused: each point
    carries its own time); the time gradient is scaled by ``span`` (chain rule).
    """

    model: HasSpaceTimeGradient
    t_lo: float
    span: float

    def times(self, U: np.ndarray) -> np.ndarray:
        return self.t_lo + U[:, -1] * self.span

    def predict(self, U, t=None, *, grad=False, include_noise=False) -> Prediction:
        U = np.asarray(U, float)
        pred = self.model.predict_space_time(
            U[:, :-1], self.times(U), grad=grad, include_noise=include_noise
        )
        if grad:
            pred.dmean[:, -1] *= self.span
            pred.dvar[:, -1] *= self.span
        return pred


@dataclass(frozen=True)
class LookaheadUCB:
    """Maximise UCB at the present time or jointly over space and a future time window.

    ``optimizer``: the shared multi-start optimiser; ``time_grid``: times per candidate on a
    finite candidate set; ``include_noise``: the noisy predictive sigma (off, as in Srinivas et
    al.). Both searches start also from the incumbent (the observation with the largest y; at
    ``tau = 0`` in the window).
    """

    optimizer: AcquisitionOptimizer
    time_grid: int = 16
    include_noise: bool = False

    def __post_init__(self) -> None:
        if int(self.time_grid) != self.time_grid or self.time_grid < 2:
            raise ValueError(f"time_grid must be an integer >= 2, got {self.time_grid!r}")
        object.__setattr__(self, "time_grid", int(self.time_grid))

    @staticmethod
    def _incumbent(model: Model) -> np.ndarray | None:
        return model.X[[int(np.argmax(model.y))]] if model.n else None

    def at_present(
        self,
        model: Model,
        t: float,
        beta: float,
        d: int,
        rng: np.random.Generator,
        candidates: np.ndarray | None = None,
    ) -> np.ndarray:
        """argmax_x UCB(x, t) at the present time ``t``."""

        def present(X: np.ndarray, grad: bool):
            return ucb(model, X, t, beta, grad=grad, include_noise=self.include_noise)

        x, _ = self.optimizer.maximize(
            present,
            d,
            rng,
            candidates=candidates,
            extra_starts=self._incumbent(model),
            work=model.work,
        )
        return x

    def over_window(
        self,
        model: Model,
        t_lo: float,
        t_hi: float,
        beta: float,
        d: int,
        rng: np.random.Generator,
        candidates: np.ndarray | None = None,
    ) -> tuple[np.ndarray, float]:
        """argmax over (x, t) in [0, 1]^d x [t_lo, t_hi] of UCB(x, t): the point and its time."""
        if not isinstance(model, HasSpaceTimeGradient):
            raise TypeError(
                "the look-ahead UCB needs a model with gradients in time (HasSpaceTimeGradient), "
                f"got {type(model).__name__}"
            )
        box = LookaheadWindow(model, t_lo, t_hi - t_lo)
        if candidates is not None:
            return self._over_window_discrete(box, candidates, beta)
        incumbent = self._incumbent(model)

        def joint(U: np.ndarray, grad: bool):
            return ucb(box, U, t_lo, beta, grad=grad, include_noise=self.include_noise)

        starts = None if incumbent is None else np.hstack([incumbent, [[0.0]]])
        u, _ = self.optimizer.maximize(joint, d + 1, rng, extra_starts=starts, work=model.work)
        return u[:-1], float(box.times(u[None, :])[0])

    def _over_window_discrete(
        self, box: LookaheadWindow, candidates: np.ndarray, beta: float
    ) -> tuple[np.ndarray, float]:
        """Exhaustive over candidates x ``time_grid`` evenly spaced times of the window."""
        candidates = np.asarray(candidates, float)
        best, best_value = (candidates[0], box.t_lo), -np.inf
        for tau in np.linspace(0.0, 1.0, self.time_grid):
            U = np.hstack([candidates, np.full((len(candidates), 1), tau)])
            values, _ = ucb(box, U, 0.0, beta, grad=False, include_noise=self.include_noise)
            i = int(np.argmax(values))
            if values[i] > best_value:
                best_value = float(values[i])
                best = (candidates[i].copy(), float(box.times(U[i : i + 1])[0]))
        return best
