"""The benchmark interface every TVBO algorithm, engine and analysis codes against.

A benchmark is a time-varying objective ``f(x, t)`` to MAXIMISE over the normalised spatial
domain ``x in [0, 1]^d`` at virtual times ``t in [0, H]`` seconds, observed with Gaussian noise
of variance ``noise_var`` and costing ``cost`` seconds per evaluation. It also answers the oracle
questions regret needs (``f_star``, ``argmax``, ``refine_f_star``) through a cached
:class:`~tvbo.benchmarks.oracle.TimeGridOracle`.

Subclasses implement :meth:`_evaluate` (batched, unvalidated) and :meth:`raw`; they may add an
analytic :meth:`_gradient`, an exact :meth:`exact_argmax` where structure allows, and
:meth:`candidate_starts` (structural starting points for the multistart oracle).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from tvbo.benchmarks.oracle import (
    TimeGridOracle,
    fd_gradient,
    multistart,
    newton_polish,
    newton_polish_memo,
    polish,
    polish_memo,
    sobol_points,
)

#: tolerance on inputs just outside the domain (float round-off); such inputs are clipped
_DOMAIN_TOL = 1e-9


class Benchmark(ABC):
    """A time-varying objective to maximise, with noise, cost, horizon and an oracle for f*."""

    name: str = ""
    d: int = 0
    temporal_kernel: str = "matern32"
    is_discrete: bool = False
    #: True when :meth:`oracle_solve` is exact and ignores warm starts (no re-polishing sweeps)
    oracle_exact: bool = False
    #: True when :meth:`_evaluate` of a batch of rows ``(X, t)`` gives, row for row, the float
    #: :meth:`oracle_value` gives at each row (elementwise arithmetic and one reduction per row;
    #: tested per benchmark, since a row's float can depend on the batch's shape through
    #: numpy's loops). An exact benchmark with it lets the oracle refine a run's f* at all
    #: query times in a few array calls (:meth:`TimeGridOracle.refine_many`). Not named
    #: ``oracle_*``: it decides no f* value, so it is not an oracle setting that a shared f*
    #: table is checked against (:func:`tvbo.benchmarks.oracle_table.oracle_settings`)
    batch_rows_exact: bool = False
    #: Sobol raw samples / polished top-k at a scanned grid time and at an off-grid time
    oracle_raw_samples: int = 1024
    oracle_top_k: int = 4
    oracle_offgrid_raw_samples: int = 64
    oracle_offgrid_top_k: int = 1
    #: polish :meth:`candidate_starts` at every time, not only at scans: needed when a tracked
    #: warm start can sit on a stationary point that stopped being a maximum (Griewank's origin
    #: once c_t < 0); benchmarks whose peaks persist (Shekel, Hartmann) switch it off for speed
    oracle_candidates_always: bool = True
    #: where noise_var came from (tvbo.benchmarks.noise): "table" unless a protocol set it, and
    #: the measured signal variance the "wdbo" protocol scaled (None otherwise)
    noise_protocol: str = "table"
    signal_var: float | None = None
    #: candidate GP priors the benchmark declares for prior-set algorithms (PE-GP-UCB [P2]):
    #: mappings with the keys of tvbo.models.candidate_prior.CandidatePrior; () for none. The
    #: engine hands them to the algorithm as ``ProblemInfo.candidate_priors``.
    candidate_priors: tuple = ()

    def __init__(
        self,
        *,
        horizon: float,
        noise_var: float,
        cost: float,
        table: str | None = None,
        lengthscale_time: float | None = None,
        oracle_grid_step: float = 1.0,
    ) -> None:
        for option, value, positive in (
            ("horizon", horizon, True),
            ("noise_var", noise_var, False),
            ("cost", cost, False),
            ("oracle_grid_step", oracle_grid_step, True),
        ):
            try:
                v = float(value)
            except (TypeError, ValueError):
                raise TypeError(f"{option} must be a number, got {value!r}") from None
            if not np.isfinite(v) or (v <= 0 if positive else v < 0):
                rule = "> 0" if positive else ">= 0"
                raise ValueError(f"{option} must be finite and {rule}, got {value!r}")
        self.horizon = float(horizon)
        self.noise_var = float(noise_var)
        self.cost = float(cost)
        self.table = table
        self.lengthscale_time = None if lengthscale_time is None else float(lengthscale_time)
        self.oracle_grid_step = float(oracle_grid_step)
        self._oracle: TimeGridOracle | None = None

    # -- the objective ----------------------------------------------------------------------
    @abstractmethod
    def _evaluate(self, x: np.ndarray, t: np.ndarray) -> np.ndarray:
        """f(x, t) for validated arrays: ``x`` (..., d) in [0,1]^d, ``t`` broadcastable."""

    def _gradient(self, x: np.ndarray, t: np.ndarray) -> np.ndarray | None:
        """d f / d x, shape of ``x``; None when no analytic gradient exists."""
        return None

    @abstractmethod
    def raw(self, z: np.ndarray) -> np.ndarray:
        """The original function (minimisation form) on its original domain, time last."""

    def _inputs(self, x: Any, t: Any) -> tuple[np.ndarray, np.ndarray]:
        x = np.asarray(x, float)
        t = np.asarray(t, float)
        if x.ndim == 0 or x.shape[-1] != self.d:
            raise ValueError(
                f"{self.name}: x must have last dimension d={self.d}, got shape {x.shape}"
            )
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(t))):
            raise ValueError(f"{self.name}: x and t must be finite")
        if x.size and (x.min() < -_DOMAIN_TOL or x.max() > 1 + _DOMAIN_TOL):
            raise ValueError(
                f"{self.name}: x must lie in [0, 1]^{self.d}, got values in "
                f"[{x.min():.6g}, {x.max():.6g}]"
            )
        tol = _DOMAIN_TOL * self.horizon
        if t.size and (t.min() < -tol or t.max() > self.horizon + tol):
            raise ValueError(
                f"{self.name}: t must lie in [0, H={self.horizon:g}] s, got values in "
                f"[{t.min():.6g}, {t.max():.6g}]"
            )
        return np.clip(x, 0.0, 1.0), np.clip(t, 0.0, self.horizon)

    def __call__(self, x: Any, t: Any) -> np.ndarray | float:
        """Noiseless f(x, t) to maximise; vectorised. A float for a single point."""
        x, t = self._inputs(x, t)
        out = np.asarray(self._evaluate(x, t), float)
        return float(out) if out.ndim == 0 else out

    def sample(self, x: Any, t: Any, rng: np.random.Generator) -> np.ndarray | float:
        """A noisy observation f(x, t) + N(0, noise_var)."""
        y = self._noisy(np.asarray(self(x, t), float), rng)
        return float(y) if y.ndim == 0 else y

    def observe(self, x: Any, t: Any, rng: np.random.Generator) -> tuple[float, float]:
        """``(f(x, t), y)`` at one point: the noiseless value and the observation
        :meth:`sample` would return with the same ``rng``, from a single evaluation of f.

        Why: the engine needs both at every query (``y`` for the algorithm, ``f`` for the
        regret); evaluating f twice doubled the per-query cost of the floor rows, which make
        up to 180,001 queries a run. The same floats as ``(self(x, t), self.sample(x, t,
        rng))``: the same evaluation and the same noise draw.
        """
        f = np.asarray(self(x, t), float)
        return float(f), float(self._noisy(f, rng))

    def observe_many(self, X: Any, ts: Any, rng: np.random.Generator
                     ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`observe` at every row ``(X[i], ts[i])``, in row order, from one evaluation of
        the batch: the floats of one :meth:`observe` per row where :attr:`batch_rows_exact`
        holds (the engine's open-loop path uses it only there; the noise draws are the
        same sequence of the generator)."""
        f = self.oracle_values(*self._inputs(np.asarray(X, float).reshape(-1, self.d), ts))
        return f, self._noisy(f, rng)

    def _noisy(self, f: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``f`` plus one N(0, noise_var) draw of ``rng`` per entry."""
        return f + np.sqrt(self.noise_var) * rng.standard_normal(f.shape)

    # -- oracle -----------------------------------------------------------------------------
    @property
    def oracle(self) -> TimeGridOracle:
        """The (lazily created) cached oracle for f*."""
        if self._oracle is None:
            self._oracle = TimeGridOracle(self, self.oracle_grid_step)
        return self._oracle

    def _check_times(self, t: Any) -> np.ndarray:
        t = np.asarray(t, float)
        tol = _DOMAIN_TOL * self.horizon
        if not np.all(np.isfinite(t)) or (
            t.size and (t.min() < -tol or t.max() > self.horizon + tol)
        ):
            raise ValueError(f"{self.name}: t must lie in [0, H={self.horizon:g}] s, got {t!r}")
        return np.clip(t, 0.0, self.horizon)

    def f_star(self, t: Any) -> np.ndarray | float:
        """max_x f(x, t), vectorised over ``t``."""
        return self.oracle.value(self._check_times(t))

    def argmax(self, t: Any) -> np.ndarray:
        """argmax_x f(x, t): ``(d,)`` for a scalar ``t``, ``(len(t), d)`` for an array."""
        return self.oracle.argmax(self._check_times(t))

    def refine_f_star(self, t: float, x: Any) -> float:
        """max(f*(t), local maximum polished from ``x``); improves the oracle cache.

        The engine calls this with every query, so an algorithm that finds a better optimum
        than the cached one can never be credited with negative regret.
        """
        t = float(self._check_times(t))
        x, _ = self._inputs(x, t)
        return self.oracle.refine(t, x.reshape(self.d))

    def refine_f_star_many(self, t: Any, x: Any) -> np.ndarray:
        """:meth:`refine_f_star` at every ``(t[i], x[i])`` at once (the engine's deferred f* at
        a run's query times; see :meth:`TimeGridOracle.refine_many`)."""
        t = np.asarray(self._check_times(np.asarray(t, float).reshape(-1)), float)
        x, _ = self._inputs(np.asarray(x, float).reshape(len(t), self.d), t)
        return self.oracle.refine_many(t, x)

    # hooks the oracle uses (see tvbo.benchmarks.oracle.OracleProblem)
    def exact_argmax(self, t: float) -> np.ndarray | None:
        """The exact argmax at ``t`` when the benchmark's structure gives it, else None."""
        return None

    def exact_argmax_many(self, ts: np.ndarray) -> np.ndarray:
        """:meth:`exact_argmax` at every time of ``ts``: ``(len(ts), d)`` (one call per time
        here; a benchmark with a vectorised form overrides it and derives its
        :meth:`exact_argmax` from it)."""
        return np.array([self.exact_argmax(float(t)) for t in np.asarray(ts, float).ravel()],
                        float).reshape(-1, self.d)

    def candidate_starts(self, t: float) -> np.ndarray:
        """Structural starting points ``(k, d)`` for the multistart oracle (e.g. known peaks)."""
        return np.empty((0, self.d))

    def _batch(self, t: float) -> tuple[Any, Any]:
        tt = np.float64(t)

        def fun(X: np.ndarray) -> np.ndarray:
            return self._evaluate(X, tt)

        def grad(X: np.ndarray) -> np.ndarray:
            g = self._gradient(X, tt)
            return fd_gradient(fun, X) if g is None else g

        return fun, grad

    def oracle_value(self, x: np.ndarray, t: float) -> float:
        return float(self._evaluate(np.asarray(x, float), np.float64(t)))

    def oracle_values(self, X: np.ndarray, ts: np.ndarray) -> np.ndarray:
        """f at every row ``(X[i], ts[i])`` in one evaluation: :meth:`oracle_value`'s floats
        where :attr:`batch_rows_exact` holds (the oracle uses it only there)."""
        return np.asarray(self._evaluate(np.asarray(X, float), np.asarray(ts, float)),
                          float).reshape(-1)

    def oracle_solve(self, t: float, warm: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
        """Distinct local maxima ``(X, F)`` at time ``t``, best first (one row when exact).

        ``"scan"`` polishes ``warm`` + :meth:`candidate_starts` + the best of
        :attr:`oracle_raw_samples` Sobol points; ``"offgrid"`` ``warm`` + the best of a few;
        ``"track"`` ``warm`` only; the last two add the candidates too when
        :attr:`oracle_candidates_always`. Exact benchmarks ignore the mode.
        """
        x = self.exact_argmax(t)
        if x is not None:
            x = np.asarray(x, float)
            return x[None, :], np.array([self.oracle_value(x, t)])
        if mode not in ("scan", "track", "offgrid"):
            raise ValueError(f"unknown oracle mode {mode!r}; valid modes: scan, track, offgrid")
        fun, grad = self._batch(t)
        starts = [np.reshape(warm, (-1, self.d))]
        if mode == "scan" or self.oracle_candidates_always:
            starts.append(self.candidate_starts(t))
        raw, top_k = None, 0
        if mode == "scan":
            raw, top_k = sobol_points(self.d, self.oracle_raw_samples), self.oracle_top_k
        elif mode == "offgrid":
            raw = sobol_points(self.d, self.oracle_offgrid_raw_samples)
            top_k = self.oracle_offgrid_top_k
        S = np.vstack(starts)
        if not len(S) and raw is None:
            raise ValueError(f"{self.name}: oracle mode {mode!r} needs warm starts at t={t}")
        return multistart(fun, grad, S, raw, top_k)

    def oracle_polish(self, t: float, starts: np.ndarray) -> tuple[np.ndarray, float]:
        """Best local maximum polished from ``starts`` at time ``t``."""
        fun, grad = self._batch(t)
        X, F = polish(fun, grad, starts)
        i = int(np.argmax(F))
        return X[i].copy(), float(F[i])

    def oracle_refine(
        self, t: float, warm: np.ndarray, x: np.ndarray
    ) -> tuple[np.ndarray, float] | None:
        """f* at an off-grid query time, cheaply: the best local maximum reached from ``warm``
        (the neighbouring grid argmaxes), the structural candidates when
        :attr:`oracle_candidates_always`, and the query ``x``, all polished in one batched
        :func:`~tvbo.benchmarks.oracle.newton_polish` on the analytic gradient; rows it does not
        converge go to L-BFGS-B. None when the benchmark has no analytic gradient (the caller
        then uses the multistart of :meth:`oracle_solve`).
        """
        tt = np.float64(t)
        x = np.reshape(np.asarray(x, float), (1, self.d))
        if self._gradient(x, tt) is None:
            return None
        starts = [np.reshape(warm, (-1, self.d))]
        if self.oracle_candidates_always:
            starts.append(self.candidate_starts(t))
        starts.append(x)
        S = np.vstack(starts)

        def fun(X: np.ndarray) -> np.ndarray:
            return self._evaluate(X, tt)

        def grad(X: np.ndarray) -> np.ndarray:
            return self._gradient(X, tt)

        X, F, converged = newton_polish(fun, grad, S)
        if not converged.all():
            rest = np.flatnonzero(~converged)
            Xr, Fr = polish(fun, grad, X[rest], refine_best=False)
            better = Fr > F[rest]
            X[rest[better]], F[rest[better]] = Xr[better], Fr[better]
        i = int(np.argmax(F))
        return X[i].copy(), float(F[i])

    def oracle_refine_many(
        self, ts: np.ndarray, warms: list[np.ndarray], X: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """:meth:`oracle_refine` for many queries at once: ``(argmax (n, d), f* (n,))`` at the
        times ``ts`` from the starts ``warms[i]`` (+ candidates) + ``X[i]``, all rows of all
        queries in one :func:`~tvbo.benchmarks.oracle.newton_polish` (each row evaluated at its
        own query's time: ``_evaluate`` broadcasts ``t`` over the batch); rows it does not
        converge go to L-BFGS-B per query, as in :meth:`oracle_refine`. None without an
        analytic gradient."""
        ts = np.asarray(ts, float).reshape(-1)
        X = np.reshape(np.asarray(X, float), (len(ts), self.d))
        if not len(ts) or self._gradient(X[:1], np.float64(ts[0])) is None:
            return None
        starts, owner = [], []
        for q, t in enumerate(ts):
            rows = [np.reshape(warms[q], (-1, self.d))]
            if self.oracle_candidates_always:
                rows.append(self.candidate_starts(float(t)))
            rows.append(X[q : q + 1])
            block = np.vstack(rows)
            starts.append(block)
            owner.append(np.full(len(block), q))
        S = np.vstack(starts)
        owner_all = np.concatenate(owner)
        bounds = np.cumsum([0] + [len(b) for b in starts])  # query q owns rows bounds[q]:[q+1]
        # Each (time, start) row is its own problem and newton_polish is row-wise: a row
        # repeated exactly (a floor row querying the grid's argmax, a grid argmax that stays
        # put) is polished once, and rows polished by an earlier run of this process (the
        # seeds of a `tvbo run-many` job query at the same times) are reused (PolishMemo).
        memo = polish_memo(self.oracle_identity())
        Xs, F, converged = newton_polish_memo(memo, ts[owner_all], S, self._evaluate,
                                              self._gradient)
        for q in np.unique(owner_all[~converged]):
            rest = bounds[q] + np.flatnonzero(~converged[bounds[q] : bounds[q + 1]])
            key = b"lbfgsb" + np.float64(ts[q]).tobytes() + np.ascontiguousarray(Xs[rest]).tobytes()
            done = memo.get(key)
            if done is None:
                qfun, qgrad = self._batch_exact(float(ts[q]))
                done = polish(qfun, qgrad, Xs[rest], refine_best=False)
                memo.put(key, (done[0].copy(), done[1].copy()))
            Xr, Fr = done
            better = Fr > F[rest]
            Xs[rest[better]], F[rest[better]] = Xr[better], Fr[better]
        best_x = np.empty((len(ts), self.d))
        best_f = np.empty(len(ts))
        for q in range(len(ts)):
            i = bounds[q] + int(np.argmax(F[bounds[q] : bounds[q + 1]]))
            best_x[q], best_f[q] = Xs[i], F[i]
        return best_x, best_f

    def oracle_identity(self) -> str:
        """Text that names this objective exactly: its class and full description
        (:meth:`describe`, the same identity a shared f*(t) table is checked against). Runs of
        one process with equal identities share polish results
        (:class:`~tvbo.benchmarks.oracle.PolishMemo`)."""
        cls = type(self)
        return json.dumps([f"{cls.__module__}.{cls.__qualname__}", self.describe()],
                          sort_keys=True, separators=(",", ":"), default=str)

    def _batch_exact(self, t: float) -> tuple[Any, Any]:
        """``(fun, grad)`` at time ``t`` on the analytic gradient (as :meth:`oracle_refine`)."""
        tt = np.float64(t)

        def fun(Z: np.ndarray) -> np.ndarray:
            return self._evaluate(Z, tt)

        def grad(Z: np.ndarray) -> np.ndarray:
            return self._gradient(Z, tt)

        return fun, grad

    # -- metadata ---------------------------------------------------------------------------
    def domain(self) -> dict[str, Any]:
        """Original domain of the spatial coordinates and of the time coordinate."""
        return {"spatial": [[0.0, 1.0]] * self.d, "time": [0.0, self.horizon]}

    def describe(self) -> dict[str, Any]:
        """Everything a result file needs to identify this benchmark instance."""
        out = {
            "name": self.name,
            "d": self.d,
            "horizon": self.horizon,
            "noise_var": self.noise_var,
            "cost": self.cost,
            "table": self.table,
            "lengthscale_time": self.lengthscale_time,
            "temporal_kernel": self.temporal_kernel,
            "is_discrete": self.is_discrete,
            "oracle_grid_step": self.oracle_grid_step,
            "objective": "maximise f(x, t)",
            "domain": self.domain(),
        }
        if self.noise_protocol != "table":  # recorded only when set, so older runs stay as they are
            out["noise_protocol"] = self.noise_protocol
            out["signal_var"] = self.signal_var
        return out

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, d={self.d}, horizon={self.horizon:g}, "
            f"noise_var={self.noise_var:g}, cost={self.cost:g}, table={self.table!r})"
        )


def observation(benchmark, x: np.ndarray, t: float, rng: np.random.Generator
                ) -> tuple[float, float]:
    """``(f(x, t), y)`` of one query, for the engine and its parallel loop.

    :meth:`Benchmark.observe` (one evaluation of f), or, for a duck-typed benchmark (only
    ``sample`` and ``__call__`` are required), ``sample`` then ``__call__``, as the engine
    always did."""
    method = getattr(benchmark, "observe", None)
    if method is not None:
        return method(x, t, rng)
    y = float(benchmark.sample(x, t, rng))
    return float(benchmark(x, t)), y
