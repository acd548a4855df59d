"""BOKE's surrogate: Nadaraya-Watson kernel regression and its kernel density, as a Model.

Zhu et al., "Bayesian Optimization by Kernel Regression and Density-based Exploration"
(spec: ``spec_boke.md``). The model is the Nadaraya-Watson (NW) estimator (Eq. 3.1)

    m(x) = sum_i k(x, x_i; h) y_i / W(x),     W(x) = sum_i k(x, x_i; h)    (Eq. 3.9)

with the nearest-neighbour average as fallback where ``W(x) = 0`` (Eqs. 3.6/3.8). Its
"variance" for the :class:`~tvbo.models.protocol.Model` protocol is ``1 / W``, so that
``sqrt(var)`` is the density-based exploration term ``W^(-1/2)`` of Eq. 3.13 (+inf where W = 0).
It is the second implementation of the protocol (the exact GP is the first) and adds one
capability, :class:`~tvbo.models.protocol.HasKernelDensity`: :meth:`KernelRegression.regression`
gives the mean, ``log W`` and the distance to the nearest observation in one pass, which the
IKR-UCB acquisition needs in log space (``W`` under- and ``1/W`` overflows far from the data).

There is nothing to pre-compute (Table 1: O(1) preprocessing): storage is O(1) per observation;
each evaluation of ``m`` query points against ``n`` observations counts ``kernel(n m)``, ``flop``
for the distances and sums and one ``call`` on the model's ``work`` counter; each append and
removal counts one ``call``.

Choices the paper leaves open (constructor options; spec §7-§8):

* inputs are the engine's normalised box [0, 1]^d (spec §8.1); y is NOT standardised (the NW
  mean is affine-equivariant);
* bandwidth ``h = c n^(-1/(d+4))`` (Scott, Eq. 5.1) with ``c = bandwidth_scale`` = sqrt(1/12),
  the standard deviation of U[0, 1] -- what SciPy's ``scotts_factor`` times the data's std gives
  for a space-filling design, without re-estimating from the data (§2.7, §8.3); ``n`` is the
  (effective) number of observations held, warm-up included (the paper's convention, §8.4);
* ``forgetting="discount"`` (not in the paper, spec §6.2, the tv-boke variant): observation i of
  age a (number of later observations) has weight ``gamma^a`` in BOTH sums, and h follows the
  effective sample size ``sum_i gamma^a_i``; observations lighter than ``min_weight`` are useless,
  and :attr:`KernelRegression.n_max` says how many are worth keeping (the owner removes the rest).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvbo.gp.exact import Prediction
from tvbo.work import WorkCounter

__all__ = [
    "BANDWIDTH_RULES",
    "FORGETTING",
    "KERNELS",
    "KRResult",
    "KernelRegression",
    "check_bandwidth",
    "kernel_regression",
    "scott_factor",
    "silverman_factor",
]

KERNELS: tuple[str, ...] = ("gaussian", "epanechnikov", "uniform")
BANDWIDTH_RULES: tuple[str, ...] = ("scott", "silverman")
FORGETTING: tuple[str, ...] = ("none", "discount")


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


class KernelRegression:
    """The NW model of BOKE (Eqs. 3.1, 3.9) over ``d``-dimensional inputs; a :class:`Model`.

    Options (all validated here, with the valid choices named on bad input):

    ``kernel``          gaussian (the paper's experiments) | epanechnikov | uniform (Eqs. 3.2-3.4)
    ``bandwidth``       scott | silverman | a fixed positive number h
    ``bandwidth_scale`` the constant c of h = c * factor(n) (unspecified in the paper, spec §2.7)
    ``forgetting``      none (BOKE) | discount (weight gamma^age in m AND W; spec §6.2)
    ``gamma``           discount factor per later observation, in (0, 1)
    ``min_weight``      discounted observations lighter than this are not worth keeping

    There is no fit: the paper deliberately does not re-estimate the bandwidth (spec §2.7, citing
    Bull 2011); ``h`` follows a rule of the effective sample size. Time stamps are stored (the
    protocol's ``T``, used by removal rules) but the model is static in time: ``predict``
    ignores ``t``.
    """

    def __init__(
        self,
        d: int,
        *,
        kernel: str = "gaussian",
        bandwidth: str | float = "scott",
        bandwidth_scale: float = float(np.sqrt(1.0 / 12.0)),
        forgetting: str = "none",
        gamma: float = 0.99,
        min_weight: float = 1e-4,
        work: WorkCounter | None = None,
    ) -> None:
        if isinstance(d, bool) or int(d) != d or d < 1:
            raise ValueError(f"d (input dimension) must be an integer >= 1, got {d!r}")
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
        self.d = int(d)
        # not ``kernel``: that attribute name is HasTemporalKernel's (a separable GP kernel)
        self.kernel_name = kernel
        self.bandwidth = bandwidth
        self.bandwidth_scale = float(bandwidth_scale)
        self.forgetting = forgetting
        self.gamma = float(gamma)
        self.min_weight = float(min_weight)
        self.work: WorkCounter = work if work is not None else WorkCounter()
        self._X: list[np.ndarray] = []
        self._T: list[float] = []
        self._y: list[float] = []

    # -- data (O(1) per observation: nothing to factorise) -----------------------------------
    @property
    def n(self) -> int:
        return len(self._y)

    @property
    def X(self) -> np.ndarray:
        return np.array(self._X).reshape(self.n, self.d)

    @property
    def T(self) -> np.ndarray:
        return np.array(self._T)

    @property
    def y(self) -> np.ndarray:
        return np.array(self._y)

    def set_data(self, X: np.ndarray, T: np.ndarray | None, y: np.ndarray) -> None:
        """Replace every observation; one ``call`` unless the data are emptied (a reset is free,
        as nothing is factorised)."""
        X = np.asarray(X, float).reshape(-1, self.d)
        y = np.asarray(y, float).reshape(-1)
        T = np.zeros(len(y)) if T is None else np.asarray(T, float).reshape(-1)
        if not len(X) == len(T) == len(y):
            raise ValueError(
                f"set_data: X, T and y must have the same length, got {len(X)}, {len(T)}, {len(y)}"
            )
        self._X = [row.copy() for row in X]
        self._T = [float(t) for t in T]
        self._y = [float(v) for v in y]
        if len(y):
            self.work.call()

    def append(self, x: np.ndarray, t: float | None, y: float) -> None:
        """Hold one more observation (one ``call``)."""
        self._X.append(np.asarray(x, float).reshape(-1).copy())
        self._T.append(0.0 if t is None else float(t))
        self._y.append(float(y))
        self.work.call()

    def remove(self, i: int) -> None:
        """Forget observation ``i`` (one ``call``)."""
        if not 0 <= i < self.n:
            raise IndexError(f"observation index {i} out of range for {self.n} observations")
        del self._X[i], self._T[i], self._y[i]
        self.work.call()

    @property
    def n_max(self) -> int | None:
        """Observations worth keeping under discounting (``gamma^age >= min_weight``), else None."""
        if self.forgetting != "discount":
            return None
        # gamma^age >= min_weight  <=>  age <= log(min_weight) / log(gamma)
        return int(np.floor(np.log(self.min_weight) / np.log(self.gamma))) + 1

    # -- the model ---------------------------------------------------------------------------
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
        if self.bandwidth == "scott":
            return self.bandwidth_scale * scott_factor(max(n, 1.0), self.d)
        if self.bandwidth == "silverman":
            return self.bandwidth_scale * silverman_factor(max(n, 1.0), self.d)
        return float(self.bandwidth)

    def regression(self, Xq: np.ndarray, *, grad: bool = False) -> KRResult:
        """NW mean, log density and nearest distance of the held data at ``Xq`` (work counted)."""
        w = self.weights() if self.forgetting == "discount" else None
        return kernel_regression(
            Xq,
            self.X,
            self.y,
            self.bandwidth_at(self.n_eff()),
            kernel=self.kernel_name,
            weights=w,
            grad=grad,
            work=self.work,
        )

    def predict(
        self,
        X: np.ndarray,
        t: np.ndarray | float | None = None,
        *,
        grad: bool = False,
        include_noise: bool = False,
    ) -> Prediction:
        """NW mean and ``var = 1 / W`` (+inf where W = 0), with d/dx when ``grad``.

        ``t`` is ignored (the model is static in time) and so is ``include_noise``: W^(-1/2) is
        an exploration term, not a predictive distribution, and has no noise part.
        """
        r = self.regression(np.atleast_2d(np.asarray(X, float)), grad=grad)
        with np.errstate(over="ignore"):
            var = np.exp(-r.log_w)
        dvar = None if r.grad_log_w is None else -var[:, None] * r.grad_log_w
        return Prediction(mean=r.mean, var=var, dmean=r.grad_mean, dvar=dvar)

    def state(self) -> dict[str, float]:
        """The bandwidth and effective sample size (empty without data)."""
        if self.n == 0:
            return {}
        n = self.n_eff()
        return {"h": self.bandwidth_at(n), "n_eff": n}

    def options(self) -> dict[str, object]:
        return {
            "kernel": self.kernel_name,
            "bandwidth": self.bandwidth,
            "bandwidth_scale": self.bandwidth_scale,
            "forgetting": self.forgetting,
            "gamma": self.gamma,
            "min_weight": self.min_weight,
        }
