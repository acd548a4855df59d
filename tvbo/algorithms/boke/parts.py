"""BOKE, BOKE+, KR-UCB and a time-varying BOKE: the algorithms' policies over shared parts.

Zhu et al., "Bayesian Optimization by Kernel Regression and Density-based Exploration"
(spec: ``spec_boke.md``). Each idea lives in its layer:

* the model -- the Nadaraya-Watson mean ``m`` and the kernel density ``W`` (Eqs. 3.1, 3.9),
  bandwidth rules, discounting, work counting:
  :class:`tvbo.algorithms.boke.kernel_regression.KernelRegression`;
* the acquisitions -- IKR-UCB ``m + sqrt(beta_t) W^(-1/2)`` (Eq. 3.12) and its maximisation
  (:mod:`tvbo.algorithms.boke.ikr_ucb`), KR-UCB's arm index and widening step
  (:mod:`tvbo.algorithms.boke.kr_ucb`); the beta rules ``boke`` (Thm 4.13) and ``boke-wdbo`` are
  registered in :mod:`tvbo.acquisition.beta`.

This module keeps only what makes each algorithm itself, as component parts and presets:

* ``kernel-regression`` surrogate: the model, plus tv-boke's discount truncation (observations
  lighter than ``min_weight`` are removed through the run's
  :class:`~tvbo.algorithms.components.DatasetEditor`, so they count as removals);
* ``ikr-ucb`` acquisition: BOKE (p = 1) and BOKE+'s exploitation coin (Alg. 3): each call draws
  q ~ Bernoulli(p); q = 1 maximises IKR-UCB, q = 0 maximises ``m`` (Eq. 3.14);
* ``kr-ucb`` acquisition (App. A.2, Alg. 5): re-sample the best existing arm while the number of
  distinct points exceeds ``t^alpha``, otherwise widen into low density (exploration by density);
* presets ``boke``, ``boke-plus``, ``kr-ucb`` and ``tv-boke`` (not in the paper, spec §6.2:
  BOKE on a sliding window of the last 100 observations -- SW-GP-UCB's ``sliding-window``
  dataset policy -- or with discounted weights ``gamma^age`` in both m and W via
  ``surrogate={"forgetting": "discount"}, dataset="keep-all"``; h and beta then follow the
  effective sample size).

On a discrete problem (``ProblemInfo.candidates`` set) every query is a candidate: IKR-UCB is
maximised exhaustively over the candidates, KR-UCB widens to the emptiest candidate of its ball,
and a first query without data is a uniform candidate.

Nothing here computes a mean, a density, a beta or counts work.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tvbo.algorithms.base import ProblemInfo
from tvbo.algorithms.boke.ikr_ucb import IKRUCBBeta, make_search, maximize_ikr_ucb
from tvbo.algorithms.boke.kernel_regression import KernelRegression
from tvbo.algorithms.boke.kr_ucb import (
    kr_ucb_arm_scores,
    widen,
    widen_on_candidates,
    widening_radius,
)
from tvbo.algorithms.components import (
    Acquisition,
    DatasetEditor,
    PartContext,
    Surrogate,
    register_component,
)
from tvbo.models import Prediction


# -- the surrogate ----------------------------------------------------------------------------
class KernelRegressionSurrogate(Surrogate):
    """BOKE's kernel-regression model (:class:`KernelRegression`) as a Surrogate component.

    Options are the model's (``kernel``, ``bandwidth``, ``bandwidth_scale``, ``forgetting``,
    ``gamma``, ``min_weight``; validated at construction). ``fit`` does nothing: the bandwidth
    follows its rule (spec §2.7). ``predict`` is the model's: NW mean and ``var = 1 / W``.
    """

    kind = "kernel-regression"

    def __init__(
        self,
        *,
        kernel: str = "gaussian",
        bandwidth: str | float = "scott",
        bandwidth_scale: float = float(np.sqrt(1.0 / 12.0)),
        forgetting: str = "none",
        gamma: float = 0.99,
        min_weight: float = 1e-4,
    ) -> None:
        self._options = {
            "kernel": kernel,
            "bandwidth": bandwidth,
            "bandwidth_scale": bandwidth_scale,
            "forgetting": forgetting,
            "gamma": gamma,
            "min_weight": min_weight,
        }
        self.editor: DatasetEditor | None = None
        # validates the options now; replaced in bind() by the model of the problem's dimension
        self.model = KernelRegression(1, **self._options)

    def bind(self, context: PartContext, *, editor: DatasetEditor | None = None) -> None:
        """``editor``: tv-boke's discount truncation removes through it (counted removals)."""
        super().bind(context, editor=editor)
        self.editor = editor
        self.model = KernelRegression(
            int(context.problem.d), work=context.work, **self._options
        )

    @property
    def n(self) -> int:
        return self.model.n

    @property
    def X(self) -> np.ndarray:
        return self.model.X

    @property
    def T(self) -> np.ndarray:
        return self.model.T

    @property
    def y(self) -> np.ndarray:
        return self.model.y

    def append(self, x: np.ndarray, t: float, y: float) -> None:
        self.model.append(x, t, y)
        n_max = self.model.n_max
        if n_max is not None:
            while self.n > n_max:
                if self.editor is None:
                    raise RuntimeError(
                        "surrogate 'kernel-regression': discount truncation needs the editor "
                        "bind() is given (the algorithm counts the removals)")
                self.editor.remove(0)  # counted, like a dataset policy's removals

    def remove(self, i: int) -> None:
        self.model.remove(i)

    def clear(self) -> None:
        self.model.set_data(np.empty((0, self.model.d)), np.empty(0), np.empty(0))

    def fit(self) -> None:
        """Nothing to fit: the bandwidth follows its rule (spec §2.7)."""

    def predict(self, X, t, *, grad=False, include_noise=False) -> Prediction:
        return self.model.predict(X, t, grad=grad, include_noise=include_noise)

    def state(self) -> dict[str, float]:
        return self.model.state()

    def options(self) -> dict[str, Any]:
        return self.model.options()


def _uniform(problem: ProblemInfo, rng: np.random.Generator) -> np.ndarray:
    """A first query with no data: uniform on [0, 1]^d, or a uniform candidate of a finite set."""
    if problem.candidates is None:
        return rng.random(int(problem.d))
    C = np.asarray(problem.candidates, float)
    return C[int(rng.integers(len(C)))].copy()


def _kr(surrogate: Surrogate, who: str) -> KernelRegression:
    if not isinstance(surrogate, KernelRegressionSurrogate):
        raise TypeError(
            f"acquisition {who!r} needs the 'kernel-regression' surrogate, got {surrogate.kind!r}"
        )
    return surrogate.model


# -- IKR-UCB (BOKE, BOKE+) ----------------------------------------------------------------------
class IKRUCBAcquisition(Acquisition):
    """BOKE's IKR-UCB step (Eq. 3.12) with BOKE+'s exploitation coin (Alg. 3).

    Each call draws q ~ Bernoulli(p): q = 1 maximises ``m + sqrt(beta_t) W^(-1/2)``, q = 0
    maximises ``m`` (Eq. 3.14). ``p`` is the paper's probability of a UCB step: p = 1 is BOKE.

    Options:

    ``p``            probability of an IKR-UCB step, in (0, 1]
    ``beta``         paper (Thm 4.13) | wdbo (0.2 d log 2t, times var(y)) | a fixed number >= 0
    ``noise_scale``  Thm 4.13's sub-Gaussian scale s, in units of std(y)
    ``delta``        Thm 4.13's confidence level, in (0, 1)
    ``n_candidates`` points screened per maximisation (raw samples for ``multistart``)
    ``n_starts``     best screened points polished by L-BFGS-B (the incumbent is added)
    ``maxiter``      L-BFGS-B iteration cap
    ``search``       screen (BOKE's own) | multistart (the shared optimiser), see
                     :mod:`tvbo.algorithms.boke.ikr_ucb`
    """

    kind = "ikr-ucb"

    def __init__(
        self,
        *,
        p: float = 1.0,
        beta: str | float = "paper",
        noise_scale: float = 0.1,
        delta: float = 0.1,
        n_candidates: int = 256,
        n_starts: int = 4,
        maxiter: int = 50,
        search: str = "screen",
    ) -> None:
        if not (0.0 < float(p) <= 1.0):
            raise ValueError(f"p (probability of a UCB step) must be in (0, 1], got {p!r}")
        self.p = float(p)
        self.beta = IKRUCBBeta(
            beta if isinstance(beta, str) else float(beta), float(noise_scale), float(delta)
        )
        self.search_kind = search
        self.search = make_search(
            search, n_candidates=int(n_candidates), n_starts=int(n_starts), maxiter=int(maxiter)
        )
        self.n_candidates = int(n_candidates)
        self.n_starts = int(n_starts)
        self.maxiter = int(maxiter)
        self._last: dict[str, float] = {}

    def select(self, surrogate: Surrogate, t: float) -> np.ndarray:
        kr = _kr(surrogate, self.kind)
        rng = self.context.rng
        problem = self.context.problem
        if kr.n == 0:
            self._last = {"exploit": 0.0}
            return _uniform(problem, rng)
        exploit = self.p < 1.0 and rng.random() >= self.p
        beta = self.beta(kr.n_eff(), kr.y, problem.d)
        self._last = {"beta": beta, "exploit": float(exploit)}
        return maximize_ikr_ucb(kr, 0.0 if exploit else beta, rng, self.search,
                                candidates=problem.candidates)

    def state(self) -> dict[str, float]:
        return dict(self._last)

    def options(self) -> dict[str, Any]:
        return {
            "p": self.p,
            "beta": self.beta.rule,
            "noise_scale": self.beta.noise_scale,
            "delta": self.beta.delta,
            "n_candidates": self.n_candidates,
            "n_starts": self.n_starts,
            "maxiter": self.maxiter,
            "search": self.search_kind,
        }


# -- KR-UCB -----------------------------------------------------------------------------------
class KRUCBAcquisition(Acquisition):
    """KR-UCB (Yee et al. 2016; the BOKE paper's App. A.2, Alg. 5): re-sample or widen.

    If the number of distinct points exceeds ``t^alpha`` it re-samples the existing arm with the
    largest index (A.4, :func:`~tvbo.algorithms.boke.kr_ucb.kr_ucb_arm_scores`); otherwise it
    widens: the new point minimises W within ``k(x, x~) > tau`` of that arm (A.5,
    :func:`~tvbo.algorithms.boke.kr_ucb.widen`). The paper gives no alpha, C, tau (spec §2.13):
    defaults alpha = 0.5, C = 1 in units of std(y) (like BOKE's noise scale), tau = exp(-1/2)
    (rho = h for the Gaussian kernel).
    """

    kind = "kr-ucb"

    def __init__(
        self,
        *,
        alpha: float = 0.5,
        C: float = 1.0,
        tau: float = float(np.exp(-0.5)),
        n_candidates: int = 256,
    ) -> None:
        if not (0.0 < float(alpha) < 1.0):
            raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
        if not float(C) > 0:
            raise ValueError(f"C must be > 0, got {C!r}")
        if not (0.0 < float(tau) < 1.0):
            raise ValueError(f"tau must be in (0, 1), got {tau!r}")
        if int(n_candidates) < 1:
            raise ValueError(f"n_candidates must be >= 1, got {n_candidates!r}")
        self.alpha = float(alpha)
        self.C = float(C)
        self.tau = float(tau)
        self.n_candidates = int(n_candidates)
        self._last: dict[str, float] = {}

    def radius(self, kernel: str, h: float) -> float:
        """rho such that k(x, x~; h) > tau  <=>  |x - x~| < rho."""
        return widening_radius(kernel, h, self.tau)

    def select(self, surrogate: Surrogate, t: float) -> np.ndarray:
        kr = _kr(surrogate, self.kind)
        rng = self.context.rng
        problem = self.context.problem
        if kr.n == 0:
            return _uniform(problem, rng)
        X = kr.X
        n = kr.n_eff()
        arm = X[int(np.argmax(kr_ucb_arm_scores(kr, self.C)))]
        distinct = len(np.unique(X, axis=0))
        resample = n**self.alpha < distinct
        if resample:
            x = arm.copy()
        else:
            rho = self.radius(kr.kernel_name, kr.bandwidth_at(n))
            if problem.candidates is None:
                x = widen(kr, arm, rho, rng, self.n_candidates)
            else:
                x = widen_on_candidates(kr, arm, rho, problem.candidates, rng)
        self._last = {"resample": float(resample), "distinct": float(distinct)}
        return x

    def state(self) -> dict[str, float]:
        return dict(self._last)

    def options(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "C": self.C,
            "tau": self.tau,
            "n_candidates": self.n_candidates,
        }


register_component("surrogate", KernelRegressionSurrogate)
register_component("acquisition", IKRUCBAcquisition)
register_component("acquisition", KRUCBAcquisition)
