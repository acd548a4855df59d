"""BOKE, BOKE+, KR-UCB and a time-varying BOKE: kernel-regression BO without a GP.

Zhu et al., "Bayesian Optimization by Kernel Regression and Density-based Exploration"
(spec: ``spec_boke.md``). The surrogate is the Nadaraya-Watson (NW) estimator (Eq. 3.1)

    m(x) = sum_i k(x, x_i; h) y_i / W(x),     W(x) = sum_i k(x, x_i; h)    (Eq. 3.9)

with the nearest-neighbour average as fallback where ``W(x) = 0`` (Eqs. 3.6/3.8), and the
exploration term ``sigma(x) = W(x)^(-1/2)`` (Eq. 3.13). BOKE maximises the IKR-UCB acquisition
``m + sqrt(beta_t) W^(-1/2)`` (Eq. 3.12); BOKE+ (Alg. 3) does so with probability ``p`` and
maximises ``m`` otherwise; KR-UCB (App. A.2, Alg. 5) re-samples an existing arm or widens
progressively. ``tv-boke`` is not in the paper (spec §6.2): BOKE on a sliding window of the last
100 observations (the ``sliding-window`` dataset policy of SW-GP-UCB), or with discounted weights
``gamma^age`` in both m and W (``surrogate={"forgetting": "discount"}, dataset="keep-all"``);
h and beta then follow the effective sample size.

The parts fit the component roles: a ``kernel-regression`` Surrogate (storage O(1) per
observation, ``fit`` is a no-op, ``predict`` gives the NW mean and ``var = 1/W``) and two
Acquisitions, ``ikr-ucb`` (BOKE, BOKE+ via ``p``) and ``kr-ucb``; presets ``boke``,
``boke-plus``, ``kr-ucb``, ``tv-boke``. There is nothing to pre-compute (Table 1: O(1)
preprocessing); each evaluation of ``m`` query points against ``n`` observations reports
``kernel(n m)``, ``flop`` for the distances and sums, and one ``call`` -- an honest O(n) per
evaluation.

Choices the paper leaves open (all constructor options; spec §7-§8):

* inputs are the engine's normalised box [0, 1]^d (spec §8.1); y is NOT standardised (the NW
  mean is affine-equivariant), but the noise scale of ``beta_t`` is expressed in units of the
  standard deviation of the observed y (``noise_scale``), so the bonus is scale-free (§8.2, §8.5);
* bandwidth ``h_t = c t^(-1/(d+4))`` (Scott, Eq. 5.1) with ``c = bandwidth_scale`` = sqrt(1/12),
  the standard deviation of U[0, 1] -- what SciPy's ``scotts_factor`` times the data's std gives
  for a space-filling design, without re-estimating from the data (§2.7, §8.3); ``t`` is the
  number of observations held, warm-up included (the paper's convention, §8.4);
* ``beta_t = 2 s^2 M log(2 pi^2 t^2 / (3 delta))`` (Thm 4.13, what the experiments use) with
  ``s = noise_scale * std(y)``, ``delta = 0.1``; ``beta="wdbo"`` gives W-DBO's 0.2 d log 2t (times
  var(y)) for a like-for-like comparison; a number gives a fixed beta;
* acquisition maximisation: ``n_candidates`` uniform random points screened (not the
  observations: that would make an iteration O(n^2)), the best ``n_starts`` and the incumbent
  polished by one block-separable L-BFGS-B with analytic gradients (§2.9: "multi-start with
  L-BFGS-B"). The optimiser maximises ``asinh(alpha)``, a monotone transform with the same
  maximisers, because ``W^(-1/2)`` grows like ``exp(d^2 / 4h^2)`` far from the data and
  L-BFGS-B needs a tame scale (§8.7). With a compact kernel, points where ``W = 0`` have
  ``alpha = +inf``; ties are broken by the distance to the data (max-min-distance space
  filling, §8.8).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import minimize

from tvbo.algorithms.components import Acquisition, Surrogate, register_component
from tvbo.algorithms.presets import register_preset
from tvbo.gp.exact import Prediction
from tvbo.work import WorkCounter

KERNELS: tuple[str, ...] = ("gaussian", "epanechnikov", "uniform")
BANDWIDTH_RULES: tuple[str, ...] = ("scott", "silverman")
BETA_RULES: tuple[str, ...] = ("paper", "wdbo")
FORGETTING: tuple[str, ...] = ("none", "discount")

#: acquisition score given to points where W = 0 (alpha = +inf) before adding their distance to
#: the data; above any finite asinh(alpha) (asinh of the largest double is ~710)
_INF_SCORE = 1.0e4
#: cap on log W^(-1/2) so that alpha stays a finite double
_LOG_SIGMA_CAP = 600.0


# -- the kernel-regression core -------------------------------------------------------------
@dataclass
class KRResult:
    """NW mean, log density and (optionally) their gradients at ``m`` query points."""

    mean: np.ndarray  # (m,)
    log_w: np.ndarray  # (m,) log W(x); -inf where W = 0
    nn_dist: np.ndarray  # (m,) distance to the nearest observation
    grad_mean: np.ndarray | None = None  # (m, d)
    grad_log_w: np.ndarray | None = None  # (m, d)
    grad_nn_dist: np.ndarray | None = None  # (m, d)


def check_bandwidth(h: float) -> float:
    """``h`` as a float; a non-positive or non-finite bandwidth is an error."""
    try:
        value = float(h)
    except (TypeError, ValueError):
        raise ValueError(f"bandwidth must be a positive number, got {h!r}") from None
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"bandwidth must be finite and > 0, got {h!r}")
    return value


def kernel_regression(
    Xq: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    h: float,
    *,
    kernel: str = "gaussian",
    weights: np.ndarray | None = None,
    grad: bool = False,
    work: WorkCounter | None = None,
) -> KRResult:
    """NW mean (Eq. 3.1, stable form 3.7) and log of the kernel density W (Eq. 3.9).

    ``weights`` (n,) are optional per-observation time weights in (0, 1] (tv-boke): both sums
    become ``sum_i w_i k_i``. Where ``W(x) = 0`` (compact kernels) the mean is the average of the
    y of all tied nearest observations (Eqs. 3.6/3.8) and ``log_w = -inf``. The Gaussian kernel is
    evaluated in log space with the nearest squared distance subtracted (Eq. 3.7), so W never
    underflows to 0/0 however small ``h`` is.
    """
    h = check_bandwidth(h)
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; valid kernels: {', '.join(KERNELS)}")
    Xq = np.atleast_2d(np.asarray(Xq, float))
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    m, n = len(Xq), len(X)
    if n == 0:
        raise ValueError("kernel regression needs at least one observation")
    d = X.shape[1]
    w = np.ones(n) if weights is None else np.asarray(weights, float)
    diff = Xq[:, None, :] - X[None, :, :]  # (m, n, d)
    D2 = np.einsum("mnd,mnd->mn", diff, diff)
    if work is not None:
        work.kernel(n * m)
        work.flops((3 * d + 8) * n * m + (4 * d * n * m if grad else 0))
        work.call()
    nn_idx = np.argmin(D2, axis=1)
    d2min = D2[np.arange(m), nn_idx]
    nn_dist = np.sqrt(d2min)
    out = KRResult(mean=np.empty(m), log_w=np.empty(m), nn_dist=nn_dist)
    if kernel == "gaussian":
        a = -D2 / (2.0 * h * h) + np.log(w)
        amax = a.max(axis=1)
        e = np.exp(a - amax[:, None])
        s = e.sum(axis=1)
        p = e / s[:, None]  # normalised NW weights
        out.mean = p @ y
        out.log_w = amax + np.log(s)
        if grad:
            # grad log W = -(x - sum_i p_i x_i) / h^2 ; grad m = sum_i p_i (y_i - m) x_i / h^2
            out.grad_log_w = -(Xq - p @ X) / (h * h)
            out.grad_mean = ((p * (y[None, :] - out.mean[:, None])) @ X) / (h * h)
    else:
        inside = D2 <= h * h
        if kernel == "epanechnikov":
            k = np.where(inside, 1.0 - D2 / (h * h), 0.0)
        else:
            k = inside.astype(float)
        kw = k * w
        W = kw.sum(axis=1)
        pos = W > 0
        mean = np.empty(m)
        mean[pos] = (kw[pos] @ y) / W[pos]
        with np.errstate(divide="ignore"):
            out.log_w = np.where(pos, np.log(np.where(pos, W, 1.0)), -np.inf)
        if grad:
            out.grad_mean = np.zeros((m, d))
            out.grad_log_w = np.zeros((m, d))
            if kernel == "epanechnikov" and pos.any():
                # grad k_i = -2 (x - x_i) / h^2 inside the support
                g = np.where(inside[pos][..., None], -2.0 * diff[pos] / (h * h), 0.0)
                gw = g * w[None, :, None]
                out.grad_log_w[pos] = gw.sum(axis=1) / W[pos][:, None]
                resid = y[None, :] - mean[pos][:, None]
                out.grad_mean[pos] = np.einsum("mnd,mn->md", gw, resid) / W[pos][:, None]
        if (~pos).any():
            # nearest-neighbour fallback (Eq. 3.6): average over all tied nearest points
            rows = np.flatnonzero(~pos)
            tol = 1e-12 * np.maximum(d2min[rows], 1e-300)
            ties = D2[rows] <= (d2min[rows] + tol)[:, None]
            mean[rows] = (ties @ y) / ties.sum(axis=1)
        out.mean = mean
    if grad:
        safe = np.where(nn_dist > 0, nn_dist, 1.0)
        out.grad_nn_dist = np.where((nn_dist > 0)[:, None], (Xq - X[nn_idx]) / safe[:, None], 0.0)
    return out


def scott_factor(n: float, d: int) -> float:
    """Scott's rule factor n^(-1/(d+4)) (Eq. 5.1)."""
    return float(n) ** (-1.0 / (d + 4))


def silverman_factor(n: float, d: int) -> float:
    """Silverman's rule factor (n (d+2) / 4)^(-1/(d+4)) (Eq. 5.2)."""
    return (float(n) * (d + 2) / 4.0) ** (-1.0 / (d + 4))


def paper_beta(t: float, noise_scale: float, delta: float, m_psi: float = 1.0) -> float:
    """Thm 4.13: beta_t = 2 s^2 M_Psi log(2 pi^2 t^2 / (3 delta))."""
    return 2.0 * noise_scale**2 * m_psi * np.log(2.0 * np.pi**2 * t**2 / (3.0 * delta))


# -- the surrogate ----------------------------------------------------------------------------
class KernelRegressionSurrogate(Surrogate):
    """The NW surrogate and kernel density of BOKE (Eqs. 3.1, 3.9), as a Surrogate component.

    ``fit`` does nothing: the paper deliberately does not re-estimate the bandwidth (spec §2.7,
    citing Bull 2011); ``h`` follows a rule of the effective sample size.

    Options:

    ``kernel``          gaussian (the paper's experiments) | epanechnikov | uniform (Eqs. 3.2-3.4)
    ``bandwidth``       scott | silverman | a fixed positive number h
    ``bandwidth_scale`` the constant c of h = c * factor(n) (unspecified in the paper, spec §2.7)
    ``forgetting``      none (BOKE) | discount (tv-boke variant: weight gamma^age in m AND W)
    ``gamma``           discount factor per later observation, in (0, 1)
    ``min_weight``      discounted observations lighter than this are removed (bounds the cost)

    ``predict`` returns the NW mean and ``var = 1 / W`` (so ``sqrt(var)`` is the exploration term
    W^(-1/2) of Eq. 3.13; +inf where W = 0), which lets a generic UCB read it too.
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
        if kernel not in KERNELS:
            raise ValueError(f"unknown kernel {kernel!r}; valid kernels: {', '.join(KERNELS)}")
        if isinstance(bandwidth, str):
            if bandwidth not in BANDWIDTH_RULES:
                raise ValueError(
                    f"unknown bandwidth rule {bandwidth!r}; valid: {', '.join(BANDWIDTH_RULES)} "
                    "or a positive number"
                )
        else:
            bandwidth = check_bandwidth(bandwidth)
        check_bandwidth(bandwidth_scale)
        if forgetting not in FORGETTING:
            raise ValueError(f"unknown forgetting {forgetting!r}; valid: {', '.join(FORGETTING)}")
        if not (0.0 < float(gamma) < 1.0):
            raise ValueError(f"gamma must be in (0, 1), got {gamma!r}")
        if not (0.0 < float(min_weight) < 1.0):
            raise ValueError(f"min_weight must be in (0, 1), got {min_weight!r}")
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.bandwidth_scale = float(bandwidth_scale)
        self.forgetting = forgetting
        self.gamma = float(gamma)
        self.min_weight = float(min_weight)
        self._X: list[np.ndarray] = []
        self._T: list[float] = []
        self._y: list[float] = []

    # -- storage (O(1) per observation: nothing to factorise) --------------------------------
    @property
    def n(self) -> int:
        return len(self._y)

    @property
    def X(self) -> np.ndarray:
        return np.array(self._X).reshape(self.n, self.algorithm.problem.d)

    @property
    def T(self) -> np.ndarray:
        return np.array(self._T)

    @property
    def y(self) -> np.ndarray:
        return np.array(self._y)

    def append(self, x: np.ndarray, t: float, y: float) -> None:
        self._X.append(np.asarray(x, float).reshape(-1).copy())
        self._T.append(float(t))
        self._y.append(float(y))
        self.work.call()
        if self.forgetting == "discount":
            # gamma^age >= min_weight  <=>  age <= log(min_weight) / log(gamma)
            keep = int(np.floor(np.log(self.min_weight) / np.log(self.gamma))) + 1
            while self.n > keep:
                self.algorithm.remove(0)  # counted by the algorithm (removed_total)

    def remove(self, i: int) -> None:
        if not 0 <= i < self.n:
            raise IndexError(f"observation index {i} out of range for {self.n} observations")
        del self._X[i], self._T[i], self._y[i]
        self.work.call()

    def clear(self) -> None:
        self._X, self._T, self._y = [], [], []

    def fit(self) -> None:
        """Nothing to fit: the bandwidth follows its rule (spec §2.7)."""

    # -- the model --------------------------------------------------------------------------
    def weights(self) -> np.ndarray:
        """Recency weights of the held observations, oldest first (all ones unless discounted)."""
        if self.forgetting == "discount":
            return self.gamma ** np.arange(self.n - 1, -1, -1, dtype=float)
        return np.ones(self.n)

    def n_eff(self) -> float:
        """Effective sample size sum_i w_i: what h and beta are tied to (spec §6.2)."""
        return float(self.weights().sum())

    def bandwidth_at(self, n: float) -> float:
        """h for ``n`` observations (Scott/Silverman times c, or the fixed bandwidth)."""
        d = int(self.algorithm.problem.d)
        if self.bandwidth == "scott":
            return self.bandwidth_scale * scott_factor(max(n, 1.0), d)
        if self.bandwidth == "silverman":
            return self.bandwidth_scale * silverman_factor(max(n, 1.0), d)
        return float(self.bandwidth)

    def regression(self, Xq: np.ndarray, *, grad: bool = False) -> KRResult:
        """NW mean and log density of the held data at ``Xq`` (work reported)."""
        w = self.weights() if self.forgetting == "discount" else None
        return kernel_regression(
            Xq,
            self.X,
            self.y,
            self.bandwidth_at(self.n_eff()),
            kernel=self.kernel,
            weights=w,
            grad=grad,
            work=self.work,
        )

    def predict(self, X, t, *, grad=False, include_noise=False) -> Prediction:
        r = self.regression(np.atleast_2d(np.asarray(X, float)), grad=grad)
        with np.errstate(over="ignore"):
            var = np.exp(-r.log_w)
        dvar = None if r.grad_log_w is None else -var[:, None] * r.grad_log_w
        return Prediction(mean=r.mean, var=var, dmean=r.grad_mean, dvar=dvar)

    def state(self) -> dict[str, float]:
        if self.n == 0:
            return {}
        n = self.n_eff()
        return {"h": self.bandwidth_at(n), "n_eff": n}

    def options(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "bandwidth": self.bandwidth,
            "bandwidth_scale": self.bandwidth_scale,
            "forgetting": self.forgetting,
            "gamma": self.gamma,
            "min_weight": self.min_weight,
        }


def _kr(surrogate: Surrogate, who: str) -> KernelRegressionSurrogate:
    if not isinstance(surrogate, KernelRegressionSurrogate):
        raise TypeError(
            f"acquisition {who!r} needs the 'kernel-regression' surrogate, got {surrogate.kind!r}"
        )
    return surrogate


def _y_scale(y: np.ndarray) -> float:
    """std of the observed y (1 for fewer than two or constant values): the unit of s and C."""
    s = float(np.std(y)) if len(y) > 1 else 0.0
    return s if s > 0 else 1.0


# -- IKR-UCB (BOKE, BOKE+) ----------------------------------------------------------------------
class IKRUCBAcquisition(Acquisition):
    """IKR-UCB (Eq. 3.12) with BOKE+'s exploitation steps (Alg. 3).

    Each call draws q ~ Bernoulli(p): q = 1 maximises ``m + sqrt(beta_t) W^(-1/2)``, q = 0
    maximises ``m`` (Eq. 3.14). ``p`` is the paper's probability of a UCB step: p = 1 is BOKE.

    Options:

    ``p``            probability of an IKR-UCB step, in (0, 1]
    ``beta``         paper (Thm 4.13) | wdbo (0.2 d log 2t, times var(y)) | a fixed number >= 0
    ``noise_scale``  Thm 4.13's sub-Gaussian scale s, in units of std(y)
    ``delta``        Thm 4.13's confidence level, in (0, 1)
    ``n_candidates`` uniform random points screened per maximisation
    ``n_starts``     best screened points polished by L-BFGS-B (the incumbent is added)
    ``maxiter``      L-BFGS-B iteration cap
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
    ) -> None:
        if not (0.0 < float(p) <= 1.0):
            raise ValueError(f"p (probability of a UCB step) must be in (0, 1], got {p!r}")
        if isinstance(beta, str):
            if beta not in BETA_RULES:
                raise ValueError(
                    f"unknown beta rule {beta!r}; valid: {', '.join(BETA_RULES)} or a number >= 0"
                )
        elif not (np.isfinite(float(beta)) and float(beta) >= 0):
            raise ValueError(f"beta must be finite and >= 0, got {beta!r}")
        if not float(noise_scale) > 0:
            raise ValueError(f"noise_scale must be > 0, got {noise_scale!r}")
        if not (0.0 < float(delta) < 1.0):
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        for option, value in (
            ("n_candidates", n_candidates),
            ("n_starts", n_starts),
            ("maxiter", maxiter),
        ):
            if int(value) < 1:
                raise ValueError(f"{option} must be >= 1, got {value!r}")
        self.p = float(p)
        self.beta_rule = beta if isinstance(beta, str) else float(beta)
        self.noise_scale = float(noise_scale)
        self.delta = float(delta)
        self.n_candidates = int(n_candidates)
        self.n_starts = int(n_starts)
        self.maxiter = int(maxiter)
        self._last: dict[str, float] = {}

    def beta_at(self, n: float, y: np.ndarray) -> float:
        """beta for ``n`` (effective) observations with observed values ``y``."""
        scale = _y_scale(y)
        if self.beta_rule == "paper":
            return paper_beta(max(n, 1.0), self.noise_scale * scale, self.delta)
        if self.beta_rule == "wdbo":
            return 0.2 * self.algorithm.problem.d * np.log(2.0 * max(n, 1.0)) * scale**2
        return float(self.beta_rule)

    @staticmethod
    def value(surrogate: KernelRegressionSurrogate, Xq: np.ndarray, beta: float) -> np.ndarray:
        """alpha = m + sqrt(beta) W^(-1/2) (Eq. 3.12); +inf where W = 0."""
        r = surrogate.regression(Xq)
        with np.errstate(over="ignore"):
            return r.mean + np.sqrt(beta) * np.exp(-0.5 * r.log_w)

    @staticmethod
    def score(
        surrogate: KernelRegressionSurrogate, Xq: np.ndarray, beta: float, grad: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        """asinh(alpha) (``_INF_SCORE`` + distance to the data where W = 0) and its gradient."""
        r = surrogate.regression(Xq, grad=grad)
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

    def maximise(self, surrogate: KernelRegressionSurrogate, beta: float) -> np.ndarray:
        """Multistart L-BFGS-B of alpha on [0,1]^d (beta = 0: of the mean m)."""
        d = int(self.algorithm.problem.d)
        y = surrogate.y
        # random screening points only (screening every observation would make an iteration
        # O(n^2)); the incumbent joins the polished starts
        cand = self.algorithm.rng.random((self.n_candidates, d))
        s, _ = self.score(surrogate, cand, beta, grad=False)
        order = np.argsort(-s)[: self.n_starts]
        starts = np.vstack([cand[order], surrogate.X[np.argmax(y)][None, :]])
        k = len(starts)

        def objective(flat: np.ndarray) -> tuple[float, np.ndarray]:
            val, g = self.score(surrogate, flat.reshape(k, d), beta, grad=True)
            return -float(val.sum()), -g.ravel()

        res = minimize(
            objective,
            starts.ravel(),
            jac=True,
            method="L-BFGS-B",
            bounds=[(0.0, 1.0)] * (k * d),
            options={"maxiter": self.maxiter, "ftol": 1e-10, "gtol": 1e-8},
        )
        allx = np.vstack([cand[order[:1]], np.clip(res.x.reshape(k, d), 0.0, 1.0)])
        vals, _ = self.score(surrogate, allx, beta, grad=False)
        return allx[int(np.argmax(vals))].copy()

    def select(self, surrogate: Surrogate, t: float) -> np.ndarray:
        kr = _kr(surrogate, self.kind)
        if kr.n == 0:
            self._last = {"exploit": 0.0}
            return self.algorithm.rng.random(self.algorithm.problem.d)
        exploit = self.p < 1.0 and self.algorithm.rng.random() >= self.p
        beta = self.beta_at(kr.n_eff(), kr.y)
        self._last = {"beta": beta, "exploit": float(exploit)}
        return self.maximise(kr, 0.0 if exploit else beta)

    def state(self) -> dict[str, float]:
        return dict(self._last)

    def options(self) -> dict[str, Any]:
        return {
            "p": self.p,
            "beta": self.beta_rule,
            "noise_scale": self.noise_scale,
            "delta": self.delta,
            "n_candidates": self.n_candidates,
            "n_starts": self.n_starts,
            "maxiter": self.maxiter,
        }


# -- KR-UCB -----------------------------------------------------------------------------------
class KRUCBAcquisition(Acquisition):
    """KR-UCB (Yee et al. 2016; the BOKE paper's App. A.2, Alg. 5).

    If the number of distinct points exceeds ``t^alpha`` it re-samples the existing arm maximising
    ``m(x_i) + C sqrt(log(sum_j W(x_j)) / W(x_i))`` (A.4, O(n^2) preprocessing); otherwise it
    widens: the new point minimises W within ``k(x, x~) > tau`` of that arm (A.5). For isotropic
    kernels the constraint is a ball of radius rho (gaussian: h sqrt(-2 ln tau); epanechnikov:
    h sqrt(1 - tau); uniform: h). The paper gives no alpha, C, tau (spec §2.13): defaults
    alpha = 0.5, C = 1 in units of std(y) (like BOKE's noise scale), tau = exp(-1/2) (rho = h
    for the Gaussian kernel). The constrained argmin is solved by screening ``n_candidates``
    uniform points of the ball, clipped to the box (a projection that keeps them in the ball);
    the paper does not say how.
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
        if kernel == "gaussian":
            return h * float(np.sqrt(-2.0 * np.log(self.tau)))
        if kernel == "epanechnikov":
            return h * float(np.sqrt(1.0 - self.tau))
        return h

    def arm_scores(self, kr: KernelRegressionSurrogate) -> np.ndarray:
        """(A.4) at every held observation."""
        r = kr.regression(kr.X)
        W = np.exp(r.log_w)
        total = max(float(W.sum()), 1.0 + 1e-12)
        return r.mean + self.C * _y_scale(kr.y) * np.sqrt(np.log(total) / W)

    def select(self, surrogate: Surrogate, t: float) -> np.ndarray:
        kr = _kr(surrogate, self.kind)
        d = int(self.algorithm.problem.d)
        rng = self.algorithm.rng
        if kr.n == 0:
            return rng.random(d)
        X = kr.X
        n = kr.n_eff()
        arm = X[int(np.argmax(self.arm_scores(kr)))]
        distinct = len(np.unique(X, axis=0))
        resample = n**self.alpha < distinct
        if resample:
            x = arm.copy()
        else:
            rho = self.radius(kr.kernel, kr.bandwidth_at(n))
            u = rng.standard_normal((self.n_candidates, d))
            u /= np.linalg.norm(u, axis=1, keepdims=True)
            r = rho * rng.random(self.n_candidates) ** (1.0 / d)
            cand = np.clip(arm + u * r[:, None], 0.0, 1.0)
            x = cand[int(np.argmin(kr.regression(cand).log_w))].copy()
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

_KR = {"kind": "kernel-regression"}
#: the presets this module provides
PRESET_SPECS: dict[str, dict[str, Any]] = {
    "boke": {"surrogate": _KR, "acquisition": {"kind": "ikr-ucb"}, "dataset": {"kind": "keep-all"}},
    # p is not reported (spec §2.6); 0.5 = spec §8.11's example
    "boke-plus": {
        "surrogate": _KR,
        "acquisition": {"kind": "ikr-ucb", "p": 0.5},
        "dataset": {"kind": "keep-all"},
    },
    "kr-ucb": {
        "surrogate": _KR,
        "acquisition": {"kind": "kr-ucb"},
        "dataset": {"kind": "keep-all"},
    },
    # sliding window of the last 100 observations (SW-GP-UCB's policy and default); the
    # discounted variant: surrogate={"forgetting": "discount"}, dataset="keep-all"
    "tv-boke": {
        "surrogate": _KR,
        "acquisition": {"kind": "ikr-ucb"},
        "dataset": {"kind": "sliding-window", "window": 100},
    },
}
for _name, _spec in PRESET_SPECS.items():
    register_preset(_name, _spec)
