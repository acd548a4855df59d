"""IKR-UCB, BOKE's acquisition: ``alpha = m + sqrt(beta) W^(-1/2)`` (Zhu et al., Eq. 3.12).

Over any model with the :class:`~tvbo.models.protocol.HasKernelDensity` capability (BOKE's
kernel regression, :class:`tvbo.algorithms.boke.kernel_regression.KernelRegression`): ``m`` is its
mean,
``W`` its kernel density. ``beta = 0`` gives the pure-exploitation acquisition ``argmax m``
(Eq. 3.14, BOKE+'s exploitation steps). Work is counted by the model (each evaluation) and, for
the ``multistart`` search, by the shared optimiser on the model's counter.

Choices the paper leaves open (spec §2.9, §8.7-§8.8):

* the maximiser works on ``asinh(alpha)``, a monotone transform with the same maximisers,
  because ``W^(-1/2)`` grows like ``exp(d^2 / 4h^2)`` far from the data and L-BFGS-B needs a
  tame scale; log W^(-1/2) is capped at ``_LOG_SIGMA_CAP`` so alpha stays a finite double;
* with a compact kernel, points where ``W = 0`` have ``alpha = +inf``; ties among them are
  broken by the distance to the data (max-min-distance space filling): their score is
  ``_INF_SCORE + distance``;
* the search: the paper prescribes only "multi-start with L-BFGS-B" (§2.9). ``"screen"``
  (:class:`ScreenAndPolish`, the default, BOKE's own search since it was added) screens uniform
  random points, polishes the best few AND the incumbent by one block-separable L-BFGS-B with
  analytic gradients and tight tolerances, and keeps the best screened point if polishing loses;
  ``"multistart"`` is the package's shared optimiser
  (:class:`~tvbo.acquisition.optimize.AcquisitionOptimizer`: Sobol raw samples, the GP-UCB
  baselines' search), for a like-for-like comparison of the acquisition alone.
* a finite candidate set (a discrete benchmark's ``ProblemInfo.candidates``): f is defined only
  there, so the acquisition is evaluated on every candidate and the maximiser taken with the
  ``"first"`` tie rule of :mod:`tvbo.acquisition.finite` (lowest index; no random number drawn),
  whatever the search -- the discrete path of the shared optimiser, which the GP-UCB baselines
  take on the same benchmarks;
* beta: ``"paper"`` is Theorem 4.13 (rule ``boke`` of :mod:`tvbo.acquisition.beta`) with the
  sub-Gaussian scale ``s = noise_scale * std(y)``, so the bonus is scale-free (spec §8.2, §8.5);
  ``"wdbo"`` is rule ``boke-wdbo``; a number is a fixed beta.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvbo.acquisition import finite
from tvbo.acquisition.beta import beta_rule
from tvbo.acquisition.optimize import AcquisitionOptimizer, BatchedAcquisition
from tvbo.lbfgsb import minimize_lbfgsb
from tvbo.models.protocol import HasKernelDensity

__all__ = [
    "IKR_UCB_BETAS",
    "SEARCHES",
    "IKRUCBBeta",
    "ScreenAndPolish",
    "ikr_ucb_score",
    "ikr_ucb_value",
    "make_search",
    "maximize_ikr_ucb",
    "maximize_on_candidates",
    "y_scale",
]

#: beta rules of IKR-UCB by option name -> registered rule
IKR_UCB_BETAS: dict[str, str] = {"paper": "boke", "wdbo": "boke-wdbo"}
#: how IKR-UCB is maximised
SEARCHES: tuple[str, ...] = ("screen", "multistart")

#: acquisition score given to points where W = 0 (alpha = +inf) before adding their distance to
#: the data; above any finite asinh(alpha) (asinh of the largest double is ~710)
_INF_SCORE = 1.0e4
#: cap on log W^(-1/2) so that alpha stays a finite double
_LOG_SIGMA_CAP = 600.0


def y_scale(y: np.ndarray) -> float:
    """std of the observed y (1 for fewer than two or constant values): the unit of s and C."""
    s = float(np.std(y)) if len(y) > 1 else 0.0
    return s if s > 0 else 1.0


@dataclass(frozen=True)
class IKRUCBBeta:
    """beta of IKR-UCB: ``rule`` is ``"paper"``, ``"wdbo"`` or a fixed number >= 0."""

    rule: str | float = "paper"
    noise_scale: float = 0.1
    delta: float = 0.1

    def __post_init__(self) -> None:
        if isinstance(self.rule, str):
            if self.rule not in IKR_UCB_BETAS:
                raise ValueError(
                    f"unknown beta rule {self.rule!r}; valid: {', '.join(IKR_UCB_BETAS)} "
                    "or a number >= 0"
                )
        elif not (np.isfinite(float(self.rule)) and float(self.rule) >= 0):
            raise ValueError(f"beta must be finite and >= 0, got {self.rule!r}")
        if not float(self.noise_scale) > 0:
            raise ValueError(f"noise_scale must be > 0, got {self.noise_scale!r}")
        if not (0.0 < float(self.delta) < 1.0):
            raise ValueError(f"delta must be in (0, 1), got {self.delta!r}")

    def __call__(self, n: float, y: np.ndarray, d: int) -> float:
        """beta for ``n`` (effective) observations with observed values ``y`` in dimension d."""
        scale = y_scale(y)
        if self.rule == "paper":
            return beta_rule("boke")(
                t=max(n, 1.0), noise_scale=self.noise_scale * scale, delta=self.delta
            )
        if self.rule == "wdbo":
            return beta_rule("boke-wdbo")(d=d, t=n, y_scale=scale)
        return float(self.rule)


def ikr_ucb_value(model: HasKernelDensity, Xq: np.ndarray, beta: float) -> np.ndarray:
    """alpha = m + sqrt(beta) W^(-1/2) (Eq. 3.12); +inf where W = 0."""
    r = model.regression(Xq)
    with np.errstate(over="ignore"):
        return r.mean + np.sqrt(beta) * np.exp(-0.5 * r.log_w)


def ikr_ucb_score(
    model: HasKernelDensity, Xq: np.ndarray, beta: float, grad: bool
) -> tuple[np.ndarray, np.ndarray]:
    """asinh(alpha) (``_INF_SCORE`` + distance to the data where W = 0) and its gradient."""
    r = model.regression(Xq, grad=grad)
    zero = ~np.isfinite(r.log_w)
    raw_log_sigma = -0.5 * np.where(zero, 0.0, r.log_w)
    bonus = np.sqrt(beta) * np.exp(np.minimum(raw_log_sigma, _LOG_SIGMA_CAP))
    alpha = r.mean + bonus
    score = np.where(zero, _INF_SCORE + r.nn_dist, np.arcsinh(alpha))
    if not grad:
        return score, np.empty(0)
    capped = raw_log_sigma >= _LOG_SIGMA_CAP
    dalpha = r.grad_mean + bonus[:, None] * np.where(capped[:, None], 0.0, -0.5 * r.grad_log_w)
    # d asinh(a) = da / sqrt(1 + a^2), written so that a^2 cannot overflow
    big = np.abs(alpha) > 1.0
    a_big = np.where(big, np.abs(alpha), 1.0)
    a_small = np.where(big, 0.0, alpha)
    inv = np.where(
        big, 1.0 / (a_big * np.sqrt(1.0 + a_big**-2)), 1.0 / np.sqrt(1.0 + a_small**2)
    )
    return score, np.where(zero[:, None], r.grad_nn_dist, dalpha * inv[:, None])


@dataclass(frozen=True)
class ScreenAndPolish:
    """Screen ``n_candidates`` uniform points, polish the best ``n_starts`` and the incumbent.

    One L-BFGS-B over the stacked starts (separable sum, analytic gradients, ``ftol`` 1e-10,
    ``gtol`` 1e-8, ``maxiter``); the result is the best of the polished points and the best
    screened point (ties: the screened one). The incumbent is polished but not screened: screening
    the observations would make an iteration O(n^2) for a kernel-regression model.
    """

    n_candidates: int = 256
    n_starts: int = 4
    maxiter: int = 50

    def __post_init__(self) -> None:
        for option, value in (
            ("n_candidates", self.n_candidates),
            ("n_starts", self.n_starts),
            ("maxiter", self.maxiter),
        ):
            if int(value) < 1:
                raise ValueError(f"{option} must be >= 1, got {value!r}")

    def maximize(
        self,
        acquisition: BatchedAcquisition,
        d: int,
        rng: np.random.Generator,
        incumbent: np.ndarray,
    ) -> np.ndarray:
        """The maximiser of ``acquisition`` on [0, 1]^d (``incumbent``: (d,) or (1, d))."""
        cand = rng.random((self.n_candidates, d))
        s, _ = acquisition(cand, False)
        order = np.argsort(-s)[: self.n_starts]
        starts = np.vstack([cand[order], np.asarray(incumbent, float).reshape(1, d)])
        k = len(starts)

        def objective(flat: np.ndarray) -> tuple[float, np.ndarray]:
            val, g = acquisition(flat.reshape(k, d), True)
            return -float(val.sum()), -g.ravel()

        # = scipy's minimize(L-BFGS-B, bounds=[(0, 1)] * (k * d)) bit for bit (tvbo.lbfgsb)
        res = minimize_lbfgsb(objective, starts.ravel(), 0.0, 1.0, maxiter=self.maxiter,
                              ftol=1e-10, gtol=1e-8)
        allx = np.vstack([cand[order[:1]], np.clip(res.x.reshape(k, d), 0.0, 1.0)])
        vals, _ = acquisition(allx, False)
        return allx[int(np.argmax(vals))].copy()


#: candidates scored per batched call on a finite set (bounds the (m, n) kernel matrix)
_CANDIDATE_BATCH = 512


def maximize_on_candidates(
    acquisition: BatchedAcquisition, candidates: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """The candidate with the largest acquisition value, by exhaustive evaluation; ties (within
    :data:`~tvbo.acquisition.finite.TIE_RTOL`) go to the lowest index, so ``rng`` is not used."""
    C = np.asarray(candidates, float)
    if C.ndim != 2 or len(C) == 0:
        raise ValueError(f"candidates must be a non-empty (m, d) array, got shape {C.shape}")
    values = np.concatenate([acquisition(C[i : i + _CANDIDATE_BATCH], False)[0]
                             for i in range(0, len(C), _CANDIDATE_BATCH)])
    return C[finite.argmax(values, "first", rng)].copy()


def maximize_ikr_ucb(
    model: HasKernelDensity,
    beta: float,
    rng: np.random.Generator,
    search: ScreenAndPolish | AcquisitionOptimizer,
    candidates: np.ndarray | None = None,
) -> np.ndarray:
    """The maximiser of IKR-UCB on [0, 1]^d (beta = 0: of the mean m), started also from the
    incumbent (the observation with the largest y); on a finite ``candidates`` set (m, d), the
    best candidate (exhaustive, :func:`maximize_on_candidates`), whatever the search."""
    d = int(model.X.shape[1])
    incumbent = model.X[np.argmax(model.y)][None, :]

    def acquisition(X: np.ndarray, grad: bool) -> tuple[np.ndarray, np.ndarray]:
        return ikr_ucb_score(model, X, beta, grad)

    if candidates is not None:
        return maximize_on_candidates(acquisition, candidates, rng)
    if isinstance(search, AcquisitionOptimizer):
        x, _ = search.maximize(acquisition, d, rng, extra_starts=incumbent, work=model.work)
        return x
    return search.maximize(acquisition, d, rng, incumbent)


def make_search(kind: str, *, n_candidates: int, n_starts: int, maxiter: int
                ) -> ScreenAndPolish | AcquisitionOptimizer:
    """``"screen"`` or ``"multistart"`` with the same budget: ``n_candidates`` screened (raw
    samples), ``n_starts`` polished (restarts), ``maxiter`` L-BFGS-B iterations."""
    if kind not in SEARCHES:
        raise ValueError(f"unknown search {kind!r}; valid: {', '.join(SEARCHES)}")
    screen = ScreenAndPolish(n_candidates=n_candidates, n_starts=n_starts, maxiter=maxiter)
    if kind == "screen":
        return screen
    return AcquisitionOptimizer(n_restarts=n_starts, raw_samples=n_candidates, maxiter=maxiter)

