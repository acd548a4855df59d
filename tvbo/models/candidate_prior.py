"""Candidate GP priors (PE-GP-UCB [P2]): a kernel, its hyperparameters, a noise and a prior mean.

PE-GP-UCB and its baselines are told a finite set of GP priors that contains the true one
(spec_sparq_pegpucb.md PART B). A prior is data -- :class:`CandidatePrior` -- and becomes a model
with :meth:`CandidatePrior.model`: the exact GP (:class:`tvbo.gp.exact.ExactGP`) with the prior's
mean, unstandardised, in fixed-hyperparameter mode (the prior IS the model, nothing
is fitted). The kernel (:class:`PriorKernel`) is

``k((x, t), (x', t')) = signal_var * corr(|x - x'| / lengthscale_space) * (1 - epsilon) **
(|t - t'| / (2 time_unit))``

(the time-varying form of [P2] B.1; ``epsilon = 0``: static), or, with ``space_kernel =
"empirical"``, a covariance matrix read over known locations (the Intel experiment's
previous-day priors, B.8.2) times the same temporal factor. The mean is a constant or
``"hills:<n>"``, the prior means of the paper's toy (:class:`HillsShape`, shared with the
``hills`` benchmark, which draws its objective from prior 2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tvbo.gp.exact import ExactGP
from tvbo.gp.kernels import Hyperparameters, correlation
from tvbo.work import WorkCounter

__all__ = [
    "EMPIRICAL",
    "HILLS_KERNEL",
    "HILLS_SHAPE",
    "N_HILLS",
    "N_PRIORS",
    "PRIOR_KEYS",
    "CandidatePrior",
    "HillsKernel",
    "HillsShape",
    "PriorKernel",
    "hills_priors",
    "prior_posterior",
]

#: number of hills and of candidate priors of the toy (prior 0 = equal hills, prior n = hill n-1
#: tallest)
N_HILLS = 10
N_PRIORS = 11
#: the space kernel that reads an explicit covariance matrix over known locations (Intel priors)
EMPIRICAL = "empirical"
PRIOR_KEYS: tuple[str, ...] = (
    "space_kernel",
    "signal_var",
    "lengthscale_space",
    "noise_var",
    "mean",
    "epsilon",
    "time_unit",
    "hill_width",
    "small_height",
    "tall_height",
    "covariance",
    "locations",
)


@dataclass(frozen=True)
class HillsShape:
    """Geometry of the ten hills (shared by the benchmark and the candidate prior means)."""

    hill_width: float = 0.03
    small_height: float = 1.0
    tall_height: float = 3.0

    def __post_init__(self) -> None:
        if not self.hill_width > 0:
            raise ValueError(f"hill_width must be > 0, got {self.hill_width!r}")
        if not self.tall_height > self.small_height >= 0:
            raise ValueError(
                "need tall_height > small_height >= 0, got "
                f"{self.tall_height!r} and {self.small_height!r}"
            )

    @property
    def centres(self) -> np.ndarray:
        return np.linspace(0.0, 1.0, N_HILLS)

    def mean(self, prior: int, x: np.ndarray) -> np.ndarray:
        """Mean of candidate prior ``prior`` (0..10) at points ``x`` (..., 1) or (...,)."""
        if not (isinstance(prior, int | np.integer) and 0 <= prior < N_PRIORS):
            raise ValueError(f"hills prior must be an integer in 0..{N_PRIORS - 1}, got {prior!r}")
        x = np.asarray(x, float)
        if x.ndim and x.shape[-1] == 1:
            x = x[..., 0]
        heights = np.full(N_HILLS, self.small_height)
        if prior > 0:
            heights[prior - 1] = self.tall_height
        bumps = np.exp(-0.5 * ((x[..., None] - self.centres) / self.hill_width) ** 2)
        return bumps @ heights


@dataclass(frozen=True)
class HillsKernel:
    """The toy's RBF kernel and noise (spec D.16: "in our code"; the reconstruction is argued in
    :mod:`tvbo.benchmarks.hills`): lengthscale 0.1, signal variance 0.05, noise variance 0.01."""

    lengthscale: float = 0.1
    signal_var: float = 0.05
    noise_var: float = 0.01


#: the toy's defaults, written once: the hills benchmark, :func:`hills_priors` and the defaults
#: of :class:`CandidatePrior` read them
HILLS_KERNEL = HillsKernel()
HILLS_SHAPE = HillsShape()


def hills_priors(
    *,
    lengthscale: float = HILLS_KERNEL.lengthscale,
    signal_var: float = HILLS_KERNEL.signal_var,
    noise_var: float = HILLS_KERNEL.noise_var,
    hill_width: float = HILLS_SHAPE.hill_width,
    small_height: float = HILLS_SHAPE.small_height,
    tall_height: float = HILLS_SHAPE.tall_height,
) -> list[dict[str, Any]]:
    """The 11 candidate priors of the toy (same RBF kernel, mean ``hills:<n>``), as option dicts."""
    return [
        {
            "space_kernel": "rbf",
            "signal_var": signal_var,
            "lengthscale_space": lengthscale,
            "noise_var": noise_var,
            "mean": f"hills:{n}",
            "hill_width": hill_width,
            "small_height": small_height,
            "tall_height": tall_height,
        }
        for n in range(N_PRIORS)
    ]


class PriorKernel:
    """The kernel of a candidate prior, in the interface :class:`tvbo.gp.exact.ExactGP` uses.

    ``matrix(X1, T1, X2, T2, hp)`` reads ``signal_var`` and ``lengthscale_space`` from the
    hyperparameters ``hp`` and the time unit of the factor ``(1 - epsilon) ** (|t - t'| / (2
    unit))`` from ``hp.lengthscale_time`` (so :meth:`~tvbo.gp.exact.ExactGP.set_hyperparameters`
    changes them); the correlation family, ``epsilon`` and an empirical covariance are the
    kernel's structure. ``variance`` is ``k(x, x)``, which an empirical covariance does not hold
    constant. The arithmetic is that of PE-GP-UCB's original per-prior GP, kept bit for bit.
    """

    has_time = True

    def __init__(
        self,
        space_kernel: str = "rbf",
        epsilon: float = 0.0,
        *,
        covariance: np.ndarray | None = None,
        locations: np.ndarray | None = None,
    ) -> None:
        self.space_kernel = space_kernel
        self.epsilon = float(epsilon)
        self.covariance = covariance
        self.locations = locations
        if space_kernel != EMPIRICAL:
            correlation(space_kernel)  # validates the name

    def __repr__(self) -> str:
        return f"PriorKernel({self.space_kernel!r}, epsilon={self.epsilon!r})"

    def _index(self, X: np.ndarray) -> np.ndarray:
        """Row of ``locations`` at each point of ``X`` (-1 where the prior has no such point)."""
        d2 = np.sum((X[:, None, :] - self.locations[None, :, :]) ** 2, axis=-1)
        j = np.argmin(d2, axis=1)
        return np.where(d2[np.arange(len(X)), j] < 1e-18, j, -1)

    def _empirical(self, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        """Covariance read from the matrix; a point the prior never saw (a sensor missing on the
        prior's day) gets the mean variance and no covariance with other points."""
        i1, i2 = self._index(X1), self._index(X2)
        ok1, ok2 = i1 >= 0, i2 >= 0
        K = np.zeros((len(X1), len(X2)))
        K[np.ix_(ok1, ok2)] = self.covariance[np.ix_(i1[ok1], i2[ok2])]
        unknown = ~ok1[:, None] | ~ok2[None, :]
        same = np.sum((X1[:, None, :] - X2[None, :, :]) ** 2, axis=-1) < 1e-18
        K[unknown & same] = float(np.mean(np.diag(self.covariance)))
        return K

    def matrix(
        self, X1: np.ndarray, T1: np.ndarray, X2: np.ndarray, T2: np.ndarray, hp: Hyperparameters
    ) -> np.ndarray:
        """k((x, t), (x', t')) between two point sets; times in seconds."""
        if self.space_kernel == EMPIRICAL:
            K = self._empirical(X1, X2)
        else:
            r = np.sqrt(np.sum((X1[:, None, :] - X2[None, :, :]) ** 2, axis=-1))
            K = hp.signal_var * correlation(self.space_kernel).value(r / hp.lengthscale_space)
        if self.epsilon > 0:
            dt = np.abs(T1[:, None] - T2[None, :]) / hp.lengthscale_time
            K = K * (1.0 - self.epsilon) ** (dt / 2.0)
        return K

    def variance(self, X: np.ndarray, T: np.ndarray, hp: Hyperparameters) -> np.ndarray:
        """k((x, t), (x, t)) at points ``X`` (m, d)."""
        if self.space_kernel == EMPIRICAL:
            return np.diag(self._empirical(X, X)).copy()
        return np.full(len(X), hp.signal_var)


@dataclass(frozen=True)
class CandidatePrior:
    """One candidate GP prior: kernel family + hyperparameters + noise + mean (B.1)."""

    space_kernel: str = "rbf"
    signal_var: float = HILLS_KERNEL.signal_var
    lengthscale_space: float = HILLS_KERNEL.lengthscale
    noise_var: float = HILLS_KERNEL.noise_var
    mean: float | str = 0.0
    epsilon: float = 0.0
    time_unit: float = 1.0
    hill_width: float = HILLS_SHAPE.hill_width
    small_height: float = HILLS_SHAPE.small_height
    tall_height: float = HILLS_SHAPE.tall_height
    #: ``space_kernel="empirical"``: covariance (m, m) between the points ``locations`` (m, d)
    covariance: Any = None
    locations: Any = None

    def __post_init__(self) -> None:
        if self.space_kernel == EMPIRICAL:
            self._check_empirical()
        else:
            try:
                correlation(self.space_kernel)
            except ValueError:
                raise ValueError(
                    f"unknown space_kernel {self.space_kernel!r}; valid names: rbf, matern12, "
                    f"matern32, matern52, {EMPIRICAL}"
                ) from None
        for name in ("signal_var", "lengthscale_space", "time_unit"):
            v = float(getattr(self, name))
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"prior {name} must be finite and > 0, got {v!r}")
        if not (math.isfinite(self.noise_var) and self.noise_var > 0):
            raise ValueError(f"prior noise_var must be finite and > 0, got {self.noise_var!r}")
        if not 0.0 <= self.epsilon < 1.0:
            raise ValueError(f"prior epsilon must be in [0, 1), got {self.epsilon!r}")
        self._hills_index()  # validate the mean spec early

    def _check_empirical(self) -> None:
        if self.covariance is None or self.locations is None:
            raise ValueError(
                "space_kernel 'empirical' needs covariance (m, m) and locations (m, d)"
            )
        C = np.array(self.covariance, float)
        L = np.array(self.locations, float)
        if C.ndim != 2 or C.shape[0] != C.shape[1] or L.ndim != 2 or len(L) != len(C):
            raise ValueError(
                f"empirical prior: covariance must be (m, m) and locations (m, d), got "
                f"{C.shape} and {L.shape}"
            )
        if not (np.all(np.isfinite(C)) and np.allclose(C, C.T) and np.all(np.diag(C) > 0)):
            raise ValueError("empirical prior: covariance must be finite, symmetric, diag > 0")
        C.setflags(write=False)
        L.setflags(write=False)
        object.__setattr__(self, "covariance", C)
        object.__setattr__(self, "locations", L)

    # -- the prior as a model ---------------------------------------------------------------
    @property
    def hyperparameters(self) -> Hyperparameters:
        """The fixed hyperparameters (``lengthscale_time`` = the temporal factor's time unit)."""
        return Hyperparameters(
            signal_var=self.signal_var,
            lengthscale_space=self.lengthscale_space,
            lengthscale_time=self.time_unit,
            noise_var=self.noise_var,
        )

    def space_time_kernel(self) -> PriorKernel:
        return PriorKernel(
            self.space_kernel, self.epsilon, covariance=self.covariance, locations=self.locations
        )

    def model(self, work: WorkCounter | None = None) -> ExactGP:
        """An exact GP with this prior's kernel, fixed hyperparameters and mean (no data).

        Unstandardised: the prior's mean and hyperparameters are in the data's units. Nothing
        is fitted (the prior IS the model); :meth:`ExactGP.set_hyperparameters` is the only
        way its hyperparameters change.
        """
        return ExactGP(
            self.space_time_kernel(), self.hyperparameters, standardize=False,
            prior_mean=self.mean_at, work=work,
        )

    # -- the prior's functions --------------------------------------------------------------
    def _hills_index(self) -> int | None:
        if isinstance(self.mean, bool):
            raise ValueError(f"prior mean must be a number or 'hills:<n>', got {self.mean!r}")
        if isinstance(self.mean, int | float):
            if not math.isfinite(self.mean):
                raise ValueError(f"prior mean must be finite, got {self.mean!r}")
            return None
        if isinstance(self.mean, str) and self.mean.startswith("hills:"):
            try:
                n = int(self.mean.split(":", 1)[1])
            except ValueError:
                n = -1
            if not 0 <= n <= 10:
                raise ValueError(f"prior mean {self.mean!r}: hills index must be 0..10")
            return n
        raise ValueError(f"prior mean must be a number or 'hills:<n>', got {self.mean!r}")

    def mean_at(self, X: np.ndarray) -> np.ndarray:
        """Prior mean at points ``X`` (m, d) (time-independent in both supported forms)."""
        n = self._hills_index()
        if n is None:
            return np.full(len(X), float(self.mean))
        shape = HillsShape(self.hill_width, self.small_height, self.tall_height)
        return shape.mean(n, X[:, :1])

    def prior_var(self, X: np.ndarray) -> np.ndarray:
        """k((x, t), (x, t)) at points ``X`` (m, d)."""
        return self.space_time_kernel().variance(X, np.zeros(len(X)), self.hyperparameters)

    def kernel(self, X1: np.ndarray, T1: np.ndarray, X2: np.ndarray, T2: np.ndarray) -> np.ndarray:
        """k((x, t), (x', t')) between two point sets; times in seconds."""
        return self.space_time_kernel().matrix(X1, T1, X2, T2, self.hyperparameters)


def prior_posterior(log_evidence: np.ndarray) -> np.ndarray:
    """``P(p | D)`` over candidate priors from their log evidences, uniform hyperprior
    ``P(p) = 1/|U|`` ([P2] B.7.2): ``exp(lml - max lml)``, normalised (shifted by the maximum
    so the largest weight is 1 and nothing underflows to an all-zero vector)."""
    lml = np.asarray(log_evidence, float)
    w = np.exp(lml - lml.max())
    return w / w.sum()
