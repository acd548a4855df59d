"""PE-GP-UCB (Prior-Elimination GP-UCB) [P2] and the paper's baselines for an unknown prior.

The learner is given a finite set of candidate GP priors that contains the true one, and does not
know which (spec_sparq_pegpucb.md PART B). Each algorithm keeps ONE exact GP per candidate prior,
with the prior's FIXED kernel, hyperparameters, noise and mean (no fitting: the prior is the
model), updated by an O(n^2) Cholesky row append. Registered algorithms:

``pe-gp-ucb``        Algorithm 1: doubly optimistic argmax over (x, surviving prior); only the
                     selected prior ``p_t`` is tested, on its own accumulated one-step-ahead errors
                     ``|sum eta_i| > sqrt(xi_t |S|) + sum beta_i sigma_{i-1}(x_i)`` -- with the
                     PRE-update std ``sigma_{i-1}`` the proof uses (B.4 [FLAG], D.14); at most one
                     elimination per step, permanent.
``mle-prior``        type-II maximum likelihood: ``p_t = argmax_p log N(y | m^p, K^p + R_p^2 I)``
                     on D_{t-1}, then UCB of that prior (B.7.1).
``bayes-prior``      fully Bayesian: maximise ``sum_p P(p | D_{t-1}) UCB^p`` with a uniform
                     hyperprior (B.7.2); the recorded "selected" prior is the posterior mode.
``regret-balancing`` Appendix D, Algorithm 2 with ``R^p(t) = t`` (play the least-played active
                     prior), ``L_t(p) = mean y - sqrt(xi_t / |S^p|)`` and the elimination rule
                     of line 11 read with ``L_t(p)`` (B.7.3).
``random-search``    uniform choice on X_t (the figures' Random Search, B.7.4).

Choices the paper leaves open (each a constructor option):

* a prior is ``{space_kernel, signal_var, lengthscale_space, noise_var, mean, epsilon,
  time_unit}``: kernel ``signal_var * corr(|x-x'| / lengthscale_space) * (1 - epsilon) **
  (|t-t'| / (2 time_unit))`` (the time-varying form of B.1; ``epsilon = 0``: static prior), mean a
  constant or ``"hills:<n>"`` (the toy's prior means). ``priors="hills"`` = the toy's 11 priors
  with the benchmark's DEFAULT shape; ``priors={"set": "hills", "signal_var": ..., ...}`` (keys
  :data:`HILLS_KEYS`) rebuilds them with the options of a non-default ``hills`` benchmark;
  ``space_kernel="empirical"`` reads a covariance matrix over known locations, and
  ``priors={"set": "intel", "paths": [...], "step_seconds": s}`` builds the Intel experiment's
  one-prior-per-previous-day set (:func:`intel_priors`).
  The posterior mean subtracts the prior mean AT THE DATA POINTS (B.2 [FLAG], D.15).
* ``beta="paper"``: Theorem 4.1 case A, ``beta_t = sqrt(2 log(T |X| pi^2 t^2 / (3 delta)))`` with
  ``T = horizon_steps`` and ``|X|`` the candidate-set size (the same for every prior, B.5); any
  :func:`tvbo.acquisition.make_beta` schedule is accepted instead (multiplier ``sqrt(beta)``).
  ``xi_t = 2 R^2 log(|U| pi^2 t^2 / (3 delta))`` with ``R^2`` the tested prior's noise variance.
  ``t`` counts every observation ingested so far plus one (the paper's step index). The same
  ``beta`` drives all four algorithms (D.18).
* the domain: the benchmark's candidate set when it has one, else ``n_candidates`` Sobol points
  (B.4 [IMPL] "optimise on a grid"). ``search_space`` (a mapping of
  :class:`tvbo.benchmarks.hills.AlternatingSearchSpace`) restricts the argmax to ``X_t``; the
  toy study passes the benchmark's schedule (the engine's candidate set is fixed).
* ties in the argmax (over ``(x, p)``, over the least-played priors, over equal evidences) are
  broken uniformly at random with the algorithm's seeded generator (``ties="random"``, default)
  or by the lowest index (``ties="first"``, what ``numpy``/``torch`` ``argmax`` does) (D.19).
  It matters on the toy: the priors' tall hills tie exactly, every evidence is 0 before the
  first observation, and with ``"first"`` the baselines try prior 0, 1, 2 first -- the true
  prior is third in that order, which helps MLE and the fully Bayesian rule a lot.
* ``test_sigma="pre"`` (default): the elimination width is ``beta_i sigma_{i-1}(x_i)``, the
  posterior std BEFORE ``y_i`` (the proof's "preservation of p*" needs it); ``"post"`` reads
  Algorithm 1's line 12 as printed, ``sigma_i(x_i)`` after ``y_i`` joined the data (smaller,
  so a stricter test that can eject the true prior) (B.4 [FLAG], D.14). ``eta_i`` always uses
  the pre-update mean (line 11).
* ``keep_last=True``: the last surviving prior is never eliminated (D.20); with
  ``keep_last=False`` eliminating it raises a clear error.
* warm-up observations (the engine's, ``warmup=True``) join every GP but no ``S^p``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.linalg import solve_triangular

from tvbo.acquisition.beta import BetaSchedule, make_beta
from tvbo.algorithms.base import Algorithm
from tvbo.benchmarks.hills import AlternatingSearchSpace, HillsShape, hills_priors
from tvbo.gp.kernels import correlation
from tvbo.qmc import sobol
from tvbo.work import WorkCounter

_LOG_2PI = math.log(2.0 * math.pi)
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
PRIOR_SETS: tuple[str, ...] = ("hills", "intel")
#: tie-breaking rules of every argmax / argmin (D.19)
TIES: tuple[str, ...] = ("random", "first")
#: which posterior std enters PE-GP-UCB's elimination width: sigma_{i-1} (the proof's, default)
#: or sigma_i (Algorithm 1's line 12 as printed; smaller, so the test is stricter) (D.14)
TEST_SIGMAS: tuple[str, ...] = ("pre", "post")
#: the space kernel that reads an explicit covariance matrix over known locations (Intel priors)
EMPIRICAL = "empirical"


@dataclass(frozen=True)
class CandidatePrior:
    """One candidate GP prior: kernel family + hyperparameters + noise + mean (B.1)."""

    space_kernel: str = "rbf"
    signal_var: float = 0.05
    lengthscale_space: float = 0.1
    noise_var: float = 0.01
    mean: float | str = 0.0
    epsilon: float = 0.0
    time_unit: float = 1.0
    hill_width: float = 0.03
    small_height: float = 1.0
    tall_height: float = 3.0
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

    def prior_var(self, X: np.ndarray) -> np.ndarray:
        """k((x, t), (x, t)) at points ``X`` (m, d)."""
        if self.space_kernel == EMPIRICAL:
            return np.diag(self._empirical(X, X)).copy()
        return np.full(len(X), self.signal_var)

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

    def kernel(self, X1: np.ndarray, T1: np.ndarray, X2: np.ndarray, T2: np.ndarray) -> np.ndarray:
        """k((x, t), (x', t')) between two point sets; times in seconds."""
        if self.space_kernel == EMPIRICAL:
            K = self._empirical(X1, X2)
        else:
            r = np.sqrt(np.sum((X1[:, None, :] - X2[None, :, :]) ** 2, axis=-1))
            K = self.signal_var * correlation(self.space_kernel).value(r / self.lengthscale_space)
        if self.epsilon > 0:
            dt = np.abs(T1[:, None] - T2[None, :]) / self.time_unit
            K = K * (1.0 - self.epsilon) ** (dt / 2.0)
        return K


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


INTEL_KEYS: tuple[str, ...] = ("set", "paths", "step_seconds", "noise_var", "epsilon_grid")
#: ``{"set": "hills", ...}``: the toy's 11 priors with the benchmark's kernel/noise/hill options
#: (pass the SAME values as the ``hills`` benchmark, or the true prior is not in the set)
HILLS_KEYS: tuple[str, ...] = (
    "set",
    "lengthscale",
    "signal_var",
    "noise_var",
    "hill_width",
    "small_height",
    "tall_height",
)


def intel_priors(
    paths: list[str],
    *,
    step_seconds: float,
    noise_var: float = 0.16,
    epsilon_grid: tuple[float, ...] = (0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 0.6),
) -> list[CandidatePrior]:
    """One prior per previous day (B.8.2): ``Cov(i, i') (1 - eps)^(|t - t'| / 2)``.

    Choices (spec D.17): each day's prepared 10-minute field (``python -m tvbo.data
    prepare-intel``) gives the empirical covariance between its sensors over the day's bins
    (unscaled, degC^2); the mean is the day's mean temperature (the paper's zero-mean prior read
    as a prior on temperatures centred by that day's mean); ``eps`` maximises the day's own
    marginal likelihood (Kronecker form, :func:`kronecker_log_likelihood`) over
    ``epsilon_grid``; one step (bin) = ``step_seconds`` virtual seconds of the
    ``temperature-sensors`` benchmark (pass the same value); ``noise_var`` is R^2.
    """
    from tvbo.benchmarks.temperature import load_intel_field

    if not paths:
        raise ValueError("the set of candidate priors is empty: intel needs at least one path")
    if not (math.isfinite(step_seconds) and step_seconds > 0):
        raise ValueError(f"intel priors: step_seconds must be > 0, got {step_seconds!r}")
    grid = [float(e) for e in epsilon_grid]
    if not grid or not all(0.0 <= e < 1.0 for e in grid):
        raise ValueError(f"intel priors: epsilon_grid values must lie in [0, 1), got {grid}")
    out = []
    for path in paths:
        field = load_intel_field(path)
        Y = field.values - field.values.mean()
        C = np.cov(field.values, rowvar=False)
        C = 0.5 * (C + C.T) + 1e-9 * np.mean(np.diag(C)) * np.eye(len(C))
        lml = [kronecker_log_likelihood(Y, C, e, noise_var) for e in grid]
        out.append(
            CandidatePrior(
                space_kernel=EMPIRICAL,
                covariance=C,
                locations=field.coords,
                mean=float(field.values.mean()),
                epsilon=grid[int(np.argmax(lml))],
                time_unit=float(step_seconds),
                noise_var=float(noise_var),
            )
        )
    return out


def parse_priors(priors: str | list | tuple | dict) -> list[CandidatePrior]:
    """Candidate priors from a named set (``"hills"``), a prior-set mapping
    (``{"set": "intel", "paths": [...], "step_seconds": ...}`` or ``{"set": "hills",
    "signal_var": ..., ...}``) or a list of prior mappings."""
    if isinstance(priors, dict) and priors.get("set") == "hills":
        unknown = sorted(set(priors) - set(HILLS_KEYS))
        if unknown:
            raise ValueError(
                f"hills priors: unknown key(s) {unknown}; valid: {list(HILLS_KEYS)}"
            )
        return parse_priors(hills_priors(**{k: v for k, v in priors.items() if k != "set"}))
    if isinstance(priors, dict):
        unknown = sorted(set(priors) - set(INTEL_KEYS))
        if priors.get("set") != "intel" or unknown:
            raise ValueError(
                f"a prior-set mapping needs set: intel (keys {list(INTEL_KEYS)}) or set: hills "
                f"(keys {list(HILLS_KEYS)}); got {priors!r}"
            )
        opts = {k: v for k, v in priors.items() if k not in ("set", "paths")}
        if "step_seconds" not in opts:
            raise ValueError("intel priors need step_seconds (the benchmark's seconds per bin)")
        return intel_priors(list(priors.get("paths") or []), **opts)
    if isinstance(priors, str):
        if priors != "hills":
            raise ValueError(
                f"unknown prior set {priors!r}; valid: hills (or a mapping with set: intel)"
            )
        priors = hills_priors()
    if not isinstance(priors, list | tuple):
        raise ValueError(f"priors must be a prior-set name or a list of mappings, got {priors!r}")
    if len(priors) == 0:
        raise ValueError("the set of candidate priors is empty; give at least one prior")
    out = []
    for i, p in enumerate(priors):
        if isinstance(p, CandidatePrior):
            out.append(p)
            continue
        if not isinstance(p, dict):
            raise ValueError(f"prior {i} must be a mapping, got {p!r}")
        unknown = sorted(set(p) - set(PRIOR_KEYS))
        if unknown:
            raise ValueError(f"prior {i}: unknown key(s) {unknown}; valid: {list(PRIOR_KEYS)}")
        out.append(CandidatePrior(**p))
    return out


class PriorGP:
    """Exact GP posterior under ONE fixed prior, grown by an O(n^2) Cholesky row append.

    Keeps ``L L^T = K + R^2 I`` and ``z = L^{-1} (y - m)`` (``m`` = prior mean at the data), so
    the posterior mean is ``m(x) + k^T L^{-T} z`` and the log marginal likelihood
    ``-z.z/2 - sum log diag L - n log(2 pi)/2`` costs O(n) after each append.
    """

    def __init__(self, prior: CandidatePrior, d: int, work: WorkCounter) -> None:
        self.prior = prior
        self.work = work
        self.X = np.empty((0, d))
        self.T = np.empty(0)
        self.y = np.empty(0)
        self._L = np.empty((0, 0))
        self._z = np.empty(0)
        self._n = 0

    @property
    def n(self) -> int:
        return self._n

    def append(self, x: np.ndarray, t: float, y: float) -> None:
        n, p = self._n, self.prior
        x = np.asarray(x, float).reshape(1, -1)
        tt = np.array([float(t)])
        k = p.kernel(self.X, self.T, x, tt)[:, 0]
        c = float(p.kernel(x, tt, x, tt)[0, 0]) + p.noise_var
        L = self._L[:n, :n]
        lrow = solve_triangular(L, k, lower=True) if n else np.empty(0)
        diag = math.sqrt(max(c - float(lrow @ lrow), 1e-12 * c))
        resid = float(y) - float(p.mean_at(x)[0])
        if n == self._L.shape[0]:  # grow the buffer geometrically
            cap = max(8, 2 * n)
            buf = np.zeros((cap, cap))
            buf[:n, :n] = L
            self._L = buf
            self._z = np.concatenate([self._z, np.zeros(cap - len(self._z))])
        self._L[n, :n] = lrow
        self._L[n, n] = diag
        self._z[n] = (resid - float(lrow @ self._z[:n])) / diag
        self.X = np.vstack([self.X, x])
        self.T = np.append(self.T, tt)
        self.y = np.append(self.y, float(y))
        self._n = n + 1
        self.work.kernel(n + 1)
        self.work.flops(n * n + 4 * n)
        self.work.call()

    def predict(self, X: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and standard deviation of f at points ``X`` (m, d) and time ``t``."""
        p, n, m = self.prior, self._n, len(X)
        T = np.full(m, float(t))
        mean = p.mean_at(X)
        var = p.prior_var(X)
        self.work.call()
        if n:
            Ks = p.kernel(X, T, self.X, self.T)
            V = solve_triangular(self._L[:n, :n], Ks.T, lower=True)
            mean = mean + V.T @ self._z[:n]
            var = var - np.sum(V * V, axis=0)
            self.work.kernel(m * n)
            self.work.flops(n * n * m + 4 * n * m)
        return mean, np.sqrt(np.maximum(var, 0.0))

    def log_marginal_likelihood(self) -> float:
        """log N(y | m^p, K^p + R_p^2 I) of the data held (0 for no data)."""
        n = self._n
        z = self._z[:n]
        return float(-0.5 * z @ z - np.sum(np.log(np.diag(self._L[:n, :n]))) - 0.5 * n * _LOG_2PI)


class PriorSetAlgorithm(Algorithm):
    """Shared machinery: one :class:`PriorGP` per candidate prior, candidates, beta, xi, X_t."""

    def __init__(
        self,
        *,
        priors: str | list | dict = "hills",
        beta: str | float | dict = "paper",
        delta: float = 0.1,
        horizon_steps: int = 100,
        n_candidates: int = 1024,
        search_space: dict | None = None,
        ties: str = "random",
    ) -> None:
        super().__init__()
        if ties not in TIES:
            raise ValueError(f"unknown ties rule {ties!r}; valid: {', '.join(TIES)}")
        self.ties = ties
        self.priors = parse_priors(priors)
        self._priors_option = priors
        if not 0.0 < float(delta) < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        if not (isinstance(horizon_steps, int) and horizon_steps >= 1):
            raise ValueError(f"horizon_steps must be an integer >= 1, got {horizon_steps!r}")
        if not (isinstance(n_candidates, int) and n_candidates >= 1):
            raise ValueError(f"n_candidates must be an integer >= 1, got {n_candidates!r}")
        self.delta = float(delta)
        self.horizon_steps = horizon_steps
        self.n_candidates = n_candidates
        self.beta_spec = beta
        self._schedule: BetaSchedule | None = None if beta == "paper" else make_beta(beta)
        self.search_space = AlternatingSearchSpace.from_options(search_space)
        self.gps: list[PriorGP] = []
        self.candidates = np.empty((0, 0))
        #: the paper's step index t of the NEXT query (observations ingested + 1)
        self.t_index = 1
        self.n_observations = 0
        #: prior used for the last proposal (-1 before the first)
        self.selected = -1

    # -- setup and shared quantities --------------------------------------------------------
    def _setup(self) -> None:
        d = self.problem.d
        if self.problem.candidates is not None:
            self.candidates = np.asarray(self.problem.candidates, float).reshape(-1, d)
        else:
            # = scipy.stats.qmc.Sobol(d, scramble=True, seed=rng).random(n), without scipy.stats
            self.candidates = sobol(d, self.n_candidates, self.rng)
        self.gps = [PriorGP(p, d, self.work) for p in self.priors]
        self.t_index = 1
        self.n_observations = 0

    def beta_t(self, t: int) -> float:
        """Confidence multiplier of sigma at step ``t`` (Theorem 4.1 case A by default)."""
        if self._schedule is None:
            m = len(self.candidates)
            return math.sqrt(
                2.0 * math.log(self.horizon_steps * m * math.pi**2 * t**2 / (3.0 * self.delta))
            )
        return math.sqrt(max(self._schedule(self.problem.d, self.n_observations, t), 0.0))

    def xi_t(self, t: int, noise_var: float) -> float:
        """Noise-concentration radius of Lemma 5.1 with delta_B = delta / 2 (B.5)."""
        return 2.0 * noise_var * math.log(len(self.priors) * math.pi**2 * t**2 / (3.0 * self.delta))

    def available(self, t: float) -> np.ndarray:
        """Indices of the candidates in X_t."""
        if self.search_space is None:
            return np.arange(len(self.candidates))
        idx = np.flatnonzero(self.search_space.mask(self.candidates, t))
        if len(idx) == 0:
            raise RuntimeError(f"the search space is empty at t={t}")
        return idx

    def ucb(
        self, p: int, X: np.ndarray, t: float, beta: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(UCB^p, mu^p, sigma^p)`` at ``X`` for time ``t``, conditioned on the data so far."""
        mu, sd = self.gps[p].predict(X, t)
        return mu + beta * sd, mu, sd

    def pick(self, tied: np.ndarray | list) -> int:
        """One of the tied indices ``tied`` (in increasing order): uniformly at random
        (``ties="random"``) or the first (``ties="first"``, what ``numpy``/``torch`` ``argmax``
        does). The rule matters on the toy, where the priors' tall hills tie exactly (D.19)."""
        if len(tied) == 1 or self.ties == "first":
            return int(tied[0])
        return int(tied[self.rng.integers(len(tied))])

    def argmax_random(self, values: np.ndarray) -> int:
        """Index of the maximum of ``values``, ties broken by the ``ties`` rule (D.19)."""
        top = np.max(values)
        return self.pick(np.flatnonzero(values >= top - 1e-12 * max(1.0, abs(top))))

    def ingest(self, x: np.ndarray, t: float, y: float, *, now: float, warmup: bool) -> None:
        """Default: every prior's GP takes the observation (no elimination)."""
        self._append_all(np.asarray(x, float).reshape(-1), t, y)

    def _append_all(
        self, x: np.ndarray, t: float, y: float, which: np.ndarray | None = None
    ) -> None:
        """Add the observation to the GPs of the priors in ``which`` (default: all of them).

        Eliminated priors are never consulted again, so their GPs are not updated (the
        per-step cost is |U_{t-1}| updates, B.4 [IMPL]); ``dataset_size`` still counts every
        observation (:attr:`n_observations`).
        """
        for p, gp in enumerate(self.gps):
            if which is None or which[p]:
                gp.append(x, t, y)
        self.t_index += 1
        self.n_observations += 1

    def dataset_size(self) -> int:
        return self.n_observations

    def _prior_options(self) -> str | dict | list[dict]:
        """The ``priors`` option as the run file records it (JSON): a named set or prior-set
        mapping as given (compact, and enough to rebuild the priors), else one mapping per prior
        with arrays (an empirical covariance, its locations) as nested lists."""
        if isinstance(self._priors_option, str | dict):
            return self._priors_option
        return [
            {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in p.__dict__.items()}
            for p in self.priors
        ]

    def options(self) -> dict[str, Any]:
        return {
            "priors": self._prior_options(),
            "beta": self.beta_spec,
            "delta": self.delta,
            "horizon_steps": self.horizon_steps,
            "n_candidates": self.n_candidates,
            "search_space": None if self.search_space is None else self.search_space.as_dict(),
            "ties": self.ties,
        }


class PEGPUCB(PriorSetAlgorithm):
    """PE-GP-UCB, Algorithm 1 of [P2] (see the module docstring for the choices)."""

    name = "pe-gp-ucb"

    def __init__(
        self, *, keep_last: bool = True, test_sigma: str = "pre", **options: Any
    ) -> None:
        super().__init__(**options)
        if test_sigma not in TEST_SIGMAS:
            raise ValueError(
                f"unknown test_sigma {test_sigma!r}; valid: {', '.join(TEST_SIGMAS)}"
            )
        self.keep_last = bool(keep_last)
        self.test_sigma = test_sigma
        n = len(self.priors)
        self.active = np.ones(n, bool)
        #: per prior: sum of eta_i, |S^p|, sum of beta_i sigma^p_{i-1}(x_i) over i in S^p
        self.sum_eta = np.zeros(n)
        self.count = np.zeros(n, int)
        self.sum_width = np.zeros(n)
        #: (p_t, x_t, mu^{p_t}_{t-1}(x_t), beta_t, sigma^{p_t}_{t-1}(x_t)) of the last proposal
        self._pending: tuple[int, np.ndarray, float, float, float] | None = None
        self.eliminated = -1
        self.last_statistic = math.nan
        self.last_threshold = math.nan

    def propose(self, t: float) -> np.ndarray:
        idx = self.available(t)
        X = self.candidates[idx]
        beta = self.beta_t(self.t_index)
        best_val, choices = -math.inf, []
        for p in np.flatnonzero(self.active):
            u, mu, sd = self.ucb(int(p), X, t, beta)
            top = float(np.max(u))
            for j in np.flatnonzero(u >= top - 1e-12 * max(1.0, abs(top))):
                choices.append((top, int(p), int(j), float(mu[j]), float(sd[j])))
            best_val = max(best_val, top)
        tol = 1e-12 * max(1.0, abs(best_val))
        choices = [c for c in choices if c[0] >= best_val - tol]  # in (prior, x) order
        _, p, j, mu, sd = choices[self.pick(np.arange(len(choices)))]
        x = X[j].copy()
        self.selected = p
        # the PRE-update posterior (conditioned on D_{t-1} only) is stored now, before y exists
        self._pending = (p, x, mu, beta, sd)
        return x

    def ingest(self, x: np.ndarray, t: float, y: float, *, now: float, warmup: bool) -> None:
        x = np.asarray(x, float).reshape(-1)
        self.eliminated = -1
        pending, self._pending = self._pending, None
        if warmup or pending is None or not np.allclose(pending[1], x):
            self._append_all(x, t, y, self.active)
            return
        p, _, mu, beta, sd = pending
        step = self.t_index
        if self.test_sigma == "pre":
            self.record_error(p, float(y) - mu, beta * sd, step)
            self._append_all(x, t, y, self.active)
            return
        # "post": Algorithm 1's line 12 read literally, sigma^{p_t}_t(x_t) AFTER y_t joined D_t
        self._append_all(x, t, y, self.active)
        sd_post = float(self.gps[p].predict(x[None, :], t)[1][0])
        self.record_error(p, float(y) - mu, beta * sd_post, step)

    def record_error(self, p: int, eta: float, width: float, t: int) -> bool:
        """Add step ``t``'s error ``eta`` and width ``beta_t sigma_{t-1}`` to S^p; run the test.

        Returns True when prior ``p`` is eliminated (line 12-13 of Algorithm 1).
        """
        self.sum_eta[p] += eta
        self.count[p] += 1
        self.sum_width[p] += width
        xi = self.xi_t(t, self.priors[p].noise_var)
        self.last_statistic = abs(self.sum_eta[p])
        self.last_threshold = math.sqrt(xi * self.count[p]) + self.sum_width[p]
        if self.last_statistic <= self.last_threshold:
            return False
        if int(self.active.sum()) == 1:
            if self.keep_last:
                return False
            raise RuntimeError(
                f"PE-GP-UCB would eliminate prior {p}, the last surviving one: the true prior "
                "is not in the candidate set (or the confidence parameters are too small)"
            )
        self.active[p] = False
        self.eliminated = p
        return True

    def state(self) -> dict[str, float]:
        return {
            "selected_prior": float(self.selected),
            "n_priors": float(self.active.sum()),
            "eliminated_prior": float(self.eliminated),
            "test_statistic": float(self.last_statistic),
            "test_threshold": float(self.last_threshold),
            "beta": self.beta_t(self.t_index),
        }

    def options(self) -> dict[str, Any]:
        return {**super().options(), "keep_last": self.keep_last, "test_sigma": self.test_sigma}


class MLEPrior(PriorSetAlgorithm):
    """Type-II maximum likelihood choice of the prior, then its UCB (B.7.1)."""

    name = "mle-prior"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.log_evidence = np.zeros(len(self.priors))

    def propose(self, t: float) -> np.ndarray:
        X = self.candidates[self.available(t)]
        self.log_evidence = np.array([gp.log_marginal_likelihood() for gp in self.gps])
        p = self.argmax_random(self.log_evidence)
        self.selected = p
        u, _, _ = self.ucb(p, X, t, self.beta_t(self.t_index))
        return X[self.argmax_random(u)].copy()


    def state(self) -> dict[str, float]:
        return {
            "selected_prior": float(self.selected),
            "n_priors": float(len(self.priors)),
            "beta": self.beta_t(self.t_index),
        }


class BayesPrior(PriorSetAlgorithm):
    """Fully Bayesian: argmax of the posterior-weighted UCB over the priors (B.7.2)."""

    name = "bayes-prior"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.posterior = np.full(len(self.priors), 1.0 / len(self.priors))

    def propose(self, t: float) -> np.ndarray:
        X = self.candidates[self.available(t)]
        lml = np.array([gp.log_marginal_likelihood() for gp in self.gps])
        w = np.exp(lml - lml.max())  # uniform hyperprior P(p) = 1/|U|
        self.posterior = w / w.sum()
        beta = self.beta_t(self.t_index)
        total = np.zeros(len(X))
        for p, wp in enumerate(self.posterior):
            total += wp * self.ucb(p, X, t, beta)[0]
        self.selected = self.argmax_random(self.posterior)
        return X[self.argmax_random(total)].copy()


    def state(self) -> dict[str, float]:
        return {
            "selected_prior": float(self.selected),
            "n_priors": float(len(self.priors)),
            "selected_posterior": float(self.posterior[self.selected])
            if self.selected >= 0
            else math.nan,
            "beta": self.beta_t(self.t_index),
        }


class RegretBalancing(PriorSetAlgorithm):
    """Regret Balancing, [P2] Appendix D Algorithm 2 with R^p(t) = t (B.7.3)."""

    name = "regret-balancing"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        n = len(self.priors)
        self.active = np.ones(n, bool)
        self.count = np.zeros(n, int)
        self.sum_y = np.zeros(n)
        self.sum_width = np.zeros(n)
        self._pending: tuple[int, np.ndarray, float] | None = None
        self.n_eliminated = 0

    def propose(self, t: float) -> np.ndarray:
        X = self.candidates[self.available(t)]
        act = np.flatnonzero(self.active)
        plays = self.count[act]
        p = int(act[self.pick(np.flatnonzero(plays == plays.min()))])
        beta = self.beta_t(self.t_index)
        u, _, sd = self.ucb(p, X, t, beta)
        j = self.argmax_random(u)
        self.selected = p
        self._pending = (p, X[j].copy(), beta * float(sd[j]))
        return X[j].copy()

    def ingest(self, x: np.ndarray, t: float, y: float, *, now: float, warmup: bool) -> None:
        x = np.asarray(x, float).reshape(-1)
        self.n_eliminated = 0
        pending, self._pending = self._pending, None
        if not warmup and pending is not None and np.allclose(pending[1], x):
            p, _, width = pending
            self.count[p] += 1
            self.sum_y[p] += float(y)
            self.sum_width[p] += width
            self._balance(self.t_index)
        self._append_all(x, t, y, self.active)

    def _balance(self, t: int) -> None:
        """Lines 9-11: once every active prior was played, drop the dominated ones."""
        act = np.flatnonzero(self.active)
        if np.any(self.count[act] == 0):
            return
        n = self.count[act]
        lower = np.array(
            [
                self.sum_y[p] / self.count[p]
                - math.sqrt(self.xi_t(t, self.priors[p].noise_var) / self.count[p])
                for p in act
            ]
        )
        upper = lower + self.sum_width[act] / n
        keep = upper >= lower.max()
        self.active[act[~keep]] = False
        self.n_eliminated = int((~keep).sum())

    def state(self) -> dict[str, float]:
        return {
            "selected_prior": float(self.selected),
            "n_priors": float(self.active.sum()),
            "n_eliminated": float(self.n_eliminated),
            "beta": self.beta_t(self.t_index),
        }


class RandomSearch(PriorSetAlgorithm):
    """Random Search of [P2]'s figures (undefined there, B.7.4): uniform on X_t, no model."""

    name = "random-search"

    def __init__(self, **options: Any) -> None:
        options.setdefault("priors", [{}])  # no model is used; keeps the option set uniform
        super().__init__(**options)

    def propose(self, t: float) -> np.ndarray:
        idx = self.available(t)
        return self.candidates[idx[self.rng.integers(len(idx))]].copy()

    def ingest(self, x: np.ndarray, t: float, y: float, *, now: float, warmup: bool) -> None:
        self._append_all(x, t, y, np.zeros(len(self.priors), bool))


ALGORITHMS: dict[str, type[PriorSetAlgorithm]] = {
    cls.name: cls for cls in (PEGPUCB, MLEPrior, BayesPrior, RegretBalancing, RandomSearch)
}


def register_algorithms() -> list[str]:
    """Register the algorithms with :func:`tvbo.algorithms.register` (idempotent; called on
    import from the package's module block). Returns the names registered by this call."""
    from tvbo.algorithms import names, register

    done = []
    for name, cls in ALGORITHMS.items():
        if name not in names():
            register(name, cls)
            done.append(name)
    return done

register_algorithms()
