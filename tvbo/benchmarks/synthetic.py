"""The eight synthetic benchmarks of the BOLT papers (spec_bolt.md §8.3), as time-varying tasks.

Convention (the papers leave it implicit, spec §1.1 and §8.2): each function is defined on
``z = (z_1, ..., z_d, z_{d+1})`` in its original box ``[lo, hi]``; the LAST coordinate is time.
The task is to MAXIMISE

    f(x, t) = -raw(lo_s + (hi_s - lo_s) * x,  lo_t + (hi_t - lo_t) * t / H),

with ``x in [0, 1]^d`` (the normalised spatial domain) and ``t in [0, H]`` seconds mapped
linearly onto the time coordinate's original range ``[lo_t, hi_t]``. Neither BOLT paper states
this mapping (spec §1.1 flag); the papers give one box for all d + 1 coordinates, so the default
sweeps the whole box. The ``time_range`` option replaces ``[lo_t, hi_t]`` (e.g. ``[0, 1]``: time
normalised as the W-DBO paper's App. H.1 says of its implementation), which changes how fast the
function moves: Griewank's ``z_t^2 / 4000`` term drifts by 90 over a run on the default range and
by 2.5e-4 on ``[0, 1]``; the reproduction report measures what that does to the BOLT table.
``raw`` is the function exactly as published
(minimisation form), so its known minima are checkable on the original definition.

Oracle structure used here (see each class): Ackley and Schwefel have exact spatial argmaxes,
Griewank has one whenever cos(z_t / sqrt(6)) >= 0, Eggholder is one-dimensional in space, Powell
is convex; Shekel and Hartmann seed the multistart with their known peak locations.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from tvbo.benchmarks.base import Benchmark
from tvbo.benchmarks.oracle import maximise_1d


class SyntheticBenchmark(Benchmark):
    """A published test function with its last coordinate used as time."""

    #: original box of all d+1 coordinates (time last)
    lower: ClassVar[tuple[float, ...]] = ()
    upper: ClassVar[tuple[float, ...]] = ()

    def __init__(self, *, time_range: tuple[float, float] | None = None,
                 spatial_range: tuple[float, float] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._lo = np.asarray(self.lower, float)
        self._span = np.asarray(self.upper, float) - self._lo
        if self._lo.shape != (self.d + 1,):
            raise TypeError(f"{type(self).__name__}: bounds must have d + 1 = {self.d + 1} entries")
        #: the range [lo, hi] every spatial coordinate sweeps; None: the published box. A
        #: reading option (Griewank: the papers' row fits a small box; docs/investigations.md)
        self.spatial_range: tuple[float, float] | None = None
        if spatial_range is not None:
            lo_s, hi_s = check_time_range(spatial_range, self.name, "spatial_range")
            self.spatial_range = (lo_s, hi_s)
            self._lo[: self.d] = lo_s
            self._span[: self.d] = hi_s - lo_s
        #: the range [lo_t, hi_t] that t in [0, H] sweeps on the time coordinate; None: the
        #: function's own box (the papers' domain covers all d + 1 coordinates, spec §8.3)
        self.time_range: tuple[float, float] | None = None
        if time_range is not None:
            lo_t, hi_t = check_time_range(time_range, self.name)
            self.time_range = (lo_t, hi_t)
            self._lo[self.d] = lo_t
            self._span[self.d] = hi_t - lo_t

    def to_original(self, x: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Original coordinates z (..., d+1) of normalised ``x`` and time ``t`` in seconds."""
        x = np.asarray(x, float)
        t = np.asarray(t, float)
        batch = np.broadcast_shapes(x.shape[:-1], t.shape)
        z = np.empty(batch + (self.d + 1,))
        z[..., : self.d] = self._lo[: self.d] + self._span[: self.d] * x
        z[..., self.d] = self._lo[self.d] + self._span[self.d] * (t / self.horizon)
        return z

    def _evaluate(self, x: np.ndarray, t: np.ndarray) -> np.ndarray:
        return -self.raw(self.to_original(x, t))

    def raw_gradient(self, z: np.ndarray) -> np.ndarray | None:
        """Gradient of :meth:`raw` with respect to z (all d+1 coordinates); None if absent."""
        return None

    def _gradient(self, x: np.ndarray, t: np.ndarray) -> np.ndarray | None:
        g = self.raw_gradient(self.to_original(x, t))
        return None if g is None else -g[..., : self.d] * self._span[: self.d]

    def domain(self) -> dict[str, Any]:
        pairs = [[float(a), float(b)] for a, b in zip(self.lower, self.upper, strict=True)]
        time = pairs[-1] if self.time_range is None else [float(v) for v in self.time_range]
        spatial = pairs[:-1] if self.spatial_range is None else [
            [float(v) for v in self.spatial_range] for _ in range(self.d)]
        return {"spatial": spatial, "time": time, "time_seconds": [0.0, self.horizon]}

    def _origin(self) -> np.ndarray | None:
        """Normalised x of the spatial origin z_s = 0, or None if the box excludes it."""
        x = -self._lo[: self.d] / self._span[: self.d]
        return x if np.all((x >= 0.0) & (x <= 1.0)) else None

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["objective"] = "maximise f(x, t) = -raw(z); z original coordinates, time last"
        if self.time_range is not None:  # recorded only when set: older runs stay as they are
            out["time_range"] = [float(v) for v in self.time_range]
        if self.spatial_range is not None:
            out["spatial_range"] = [float(v) for v in self.spatial_range]
        return out


def check_time_range(value: Any, benchmark: str, option: str = "time_range"
                     ) -> tuple[float, float]:
    """``value`` as two finite floats lo < hi, or a ValueError naming the ``option``."""
    try:
        lo_t, hi_t = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(
            f"benchmark {benchmark!r}: {option} must be two numbers [lo, hi], got {value!r}"
        ) from None
    if not (np.isfinite(lo_t) and np.isfinite(hi_t) and lo_t < hi_t):
        raise ValueError(
            f"benchmark {benchmark!r}: {option} must be finite with lo < hi, got {value!r}"
        )
    return lo_t, hi_t


# -- Shekel ---------------------------------------------------------------------------------
class Shekel(SyntheticBenchmark):
    """Shekel-10 in 4-D ("Shekel (4)" in the papers): 3 spatial coordinates + time, [0, 10]^4."""

    name = "shekel"
    d = 3
    oracle_candidates_always = False  # peaks sit at fixed centres; tracked, never trapped
    lower = (0.0,) * 4
    upper = (10.0,) * 4
    beta = np.array([1, 2, 2, 4, 4, 6, 3, 7, 5, 5], float) / 10.0
    #: C as published: 4 x 10, row j (coordinate), column i (term)
    C = np.array(
        [
            [4, 1, 8, 6, 3, 2, 5, 8, 6, 7],
            [4, 1, 8, 6, 7, 9, 3, 1, 2, 3.6],
            [4, 1, 8, 6, 3, 2, 5, 8, 6, 7],
            [4, 1, 8, 6, 7, 9, 3, 1, 2, 3.6],
        ],
        float,
    )

    def raw(self, z: np.ndarray) -> np.ndarray:
        diff = np.asarray(z, float)[..., None, :] - self.C.T  # (..., 10, 4)
        return -np.sum(1.0 / (np.sum(diff**2, axis=-1) + self.beta), axis=-1)

    def raw_gradient(self, z: np.ndarray) -> np.ndarray:
        diff = np.asarray(z, float)[..., None, :] - self.C.T
        den = np.sum(diff**2, axis=-1) + self.beta
        return np.sum(2.0 * diff / den[..., None] ** 2, axis=-2)

    def candidate_starts(self, t: float) -> np.ndarray:
        # every term's centre is (close to) a local maximum's basin
        return self.C.T[:, : self.d] / 10.0


# -- Hartmann -------------------------------------------------------------------------------
class _Hartmann(SyntheticBenchmark):
    oracle_candidates_always = False  # positive Gaussian bumps: tracked peaks persist or merge
    alpha = np.array([1.0, 1.2, 3.0, 3.2])
    A: ClassVar[np.ndarray]
    P: ClassVar[np.ndarray]

    def raw(self, z: np.ndarray) -> np.ndarray:
        diff = np.asarray(z, float)[..., None, :] - self.P  # (..., 4, d+1)
        return -np.sum(self.alpha * np.exp(-np.sum(self.A * diff**2, axis=-1)), axis=-1)

    def raw_gradient(self, z: np.ndarray) -> np.ndarray:
        diff = np.asarray(z, float)[..., None, :] - self.P
        e = self.alpha * np.exp(-np.sum(self.A * diff**2, axis=-1))
        return np.sum(e[..., None] * 2.0 * self.A * diff, axis=-2)

    def candidate_starts(self, t: float) -> np.ndarray:
        return self.P[:, : self.d].copy()


class Hartmann3(_Hartmann):
    """Hartmann-3: 2 spatial coordinates + time on [0, 1]^3."""

    name = "hartmann3"
    d = 2
    lower = (0.0,) * 3
    upper = (1.0,) * 3
    A = np.array([[3, 10, 30], [0.1, 10, 35], [3, 10, 30], [0.1, 10, 35]], float)
    P = 1e-4 * np.array(
        [[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]], float
    )


class Hartmann6(_Hartmann):
    """Hartmann-6: 5 spatial coordinates + time on [0, 1]^6."""

    name = "hartmann6"
    d = 5
    lower = (0.0,) * 6
    upper = (1.0,) * 6
    A = np.array(
        [
            [10, 3, 17, 3.50, 1.7, 8],
            [0.05, 10, 17, 0.1, 8, 14],
            [3, 3.5, 1.7, 10, 17, 8],
            [17, 8, 0.05, 10, 0.1, 14],
        ],
        float,
    )
    P = 1e-4 * np.array(
        [
            [1312, 1696, 5569, 124, 8283, 5886],
            [2329, 4135, 8307, 3736, 1004, 9991],
            [2348, 1451, 3522, 2883, 3047, 6650],
            [4047, 8828, 8732, 5743, 1091, 381],
        ],
        float,
    )


# -- Ackley ---------------------------------------------------------------------------------
class Ackley(SyntheticBenchmark):
    """Ackley in 4-D (3 spatial + time) on [-32, 32]^4 (the papers' box, not 32.768).

    Exact oracle. With z = (z_s, z_t) and n = 4,
    raw = -a exp(-b sqrt((|z_s|^2 + z_t^2)/n)) - exp((sum_i cos(c z_s,i) + cos(c z_t))/n) + a + e.
    The first term is increasing in |z_s|^2 (a, b > 0), so it is smallest at z_s = 0; the second
    is decreasing in sum_i cos(c z_s,i) <= d, with equality at z_s = 0. Both are minimised by
    z_s = 0 simultaneously, so z_s = 0 (x = 1/2) is the global spatial minimiser of raw for
    every time coordinate z_t.
    """

    name = "ackley"
    d = 3
    lower = (-32.0,) * 4
    upper = (32.0,) * 4
    a, b, c = 20.0, 0.2, 2.0 * np.pi
    oracle_exact = True

    def raw(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        n = z.shape[-1]
        r = np.sqrt(np.sum(z**2, axis=-1) / n)
        return (
            -self.a * np.exp(-self.b * r)
            - np.exp(np.sum(np.cos(self.c * z), axis=-1) / n)
            + self.a
            + np.e
        )

    def raw_gradient(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        n = z.shape[-1]
        r = np.sqrt(np.sum(z**2, axis=-1) / n)
        safe = np.where(r > 0, r, 1.0)
        g1 = np.where(r[..., None] > 0, self.a * self.b * np.exp(-self.b * r)[..., None], 0.0)
        g1 = g1 * z / (n * safe[..., None])
        e2 = np.exp(np.sum(np.cos(self.c * z), axis=-1) / n)
        return g1 + e2[..., None] * self.c * np.sin(self.c * z) / n

    def exact_argmax(self, t: float) -> np.ndarray | None:
        return self._origin()  # x = 1/2 on the published box; None if a range excludes 0


# -- Griewank -------------------------------------------------------------------------------
class Griewank(SyntheticBenchmark):
    """Griewank in 6-D (5 spatial + time) on [-600, 600]^6; time z_6 enters the product.

    Oracle structure: raw = sum z_i^2/4000 - c_t * prod_{i<=5} cos(z_i/sqrt(i)) + 1 + z_6^2/4000,
    with c_t = cos(z_6/sqrt(6)). If c_t >= 0, the product term is >= -c_t (product <= 1) and the
    quadratic >= 0, both with equality at z_s = 0: the argmax is exact. If c_t < 0 the optimum
    needs an odd number of negative cosines; the cheapest is one coordinate near pi*sqrt(j) (j = 1
    cheapest), which seeds the multistart together with the origin and Sobol samples.
    """

    name = "griewank"
    d = 5
    lower = (-600.0,) * 6
    upper = (600.0,) * 6

    def raw(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        root = np.sqrt(np.arange(1, z.shape[-1] + 1))
        return np.sum(z**2, axis=-1) / 4000.0 - np.prod(np.cos(z / root), axis=-1) + 1.0

    def raw_gradient(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        n = z.shape[-1]
        root = np.sqrt(np.arange(1, n + 1))
        cos = np.cos(z / root)
        ones = np.ones(z.shape[:-1] + (1,))
        before = np.cumprod(np.concatenate([ones, cos[..., :-1]], axis=-1), axis=-1)
        after = np.cumprod(np.concatenate([ones, cos[..., ::-1][..., :-1]], axis=-1), axis=-1)
        others = before * after[..., ::-1]  # product of all cosines except the i-th
        return z / 2000.0 + np.sin(z / root) / root * others

    def _time_cos(self, t: float) -> float:
        zt = self._lo[self.d] + self._span[self.d] * t / self.horizon
        return float(np.cos(zt / np.sqrt(self.d + 1)))

    def exact_argmax(self, t: float) -> np.ndarray | None:
        return self._origin() if self._time_cos(t) >= 0 else None

    def candidate_starts(self, t: float) -> np.ndarray:
        rows = [np.zeros(self.d)]
        for j in range(self.d):
            for k in (-1.0, 1.0):
                z = np.zeros(self.d)
                z[j] = k * np.pi * np.sqrt(j + 1)
                rows.append(z)
        z = np.asarray(rows)
        return (z - self._lo[: self.d]) / self._span[: self.d]


# -- Eggholder ------------------------------------------------------------------------------
class Eggholder(SyntheticBenchmark):
    """Eggholder in 2-D (1 spatial + time) on [-512, 512]^2.

    Oracle: one spatial dimension, so a dense grid + bounded Brent polish, plus exact evaluation
    at the two cusps of sqrt|.| (z_1 = z_2 + 47 and z_1 = -2 (z_2 + 47)), where a maximum can sit.
    """

    name = "eggholder"
    d = 1
    lower = (-512.0, -512.0)
    upper = (512.0, 512.0)
    oracle_exact = True

    def raw(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        z1, z2 = z[..., 0], z[..., 1]
        return -(z2 + 47.0) * np.sin(np.sqrt(np.abs(z2 + z1 / 2.0 + 47.0))) - z1 * np.sin(
            np.sqrt(np.abs(z1 - z2 - 47.0))
        )

    def raw_gradient(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        z1, z2 = z[..., 0], z[..., 1]
        u = z2 + z1 / 2.0 + 47.0
        v = z1 - z2 - 47.0
        su, sv = np.sqrt(np.abs(u)), np.sqrt(np.abs(v))
        # d sqrt|w| / dw = sign(w) / (2 sqrt|w|): infinite at the cusp, set to 0 there
        du = np.where(su > 0, np.sign(u) / (2.0 * np.where(su > 0, su, 1.0)), 0.0)
        dv = np.where(sv > 0, np.sign(v) / (2.0 * np.where(sv > 0, sv, 1.0)), 0.0)
        a = (z2 + 47.0) * np.cos(su) * du
        b = z1 * np.cos(sv) * dv
        g1 = -a / 2.0 - np.sin(sv) - b
        g2 = -np.sin(su) - a + b
        return np.stack([g1, g2], axis=-1)

    def oracle_solve(self, t: float, warm: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
        z2 = self._lo[1] + self._span[1] * t / self.horizon
        kinks = (np.array([z2 + 47.0, -2.0 * (z2 + 47.0)]) - self._lo[0]) / self._span[0]
        fun, _ = self._batch(t)
        x, f = maximise_1d(fun, kinks=kinks)
        return x[None, :], np.array([f])


# -- Schwefel -------------------------------------------------------------------------------
class Schwefel(SyntheticBenchmark):
    """Schwefel in 4-D (3 spatial + time) on [-500, 500]^4.

    Oracle: raw = 418.9829 * 4 - sum_i g(z_i) with g(z) = z sin(sqrt|z|) is separable, and the
    time coordinate only adds a constant, so every spatial coordinate maximises g on
    [-500, 500] independently of t: one 1-D dense-grid + Brent maximisation (z ~ 420.9687).
    """

    name = "schwefel"
    d = 3
    lower = (-500.0,) * 4
    upper = (500.0,) * 4
    oracle_exact = True
    #: (lo, span) of a spatial coordinate -> its argmax of g (one 1-D solve per box)
    _coordinate_argmax: ClassVar[dict[tuple[float, float], float]] = {}

    def raw(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        return 418.9829 * z.shape[-1] - np.sum(z * np.sin(np.sqrt(np.abs(z))), axis=-1)

    def raw_gradient(self, z: np.ndarray) -> np.ndarray:
        s = np.sqrt(np.abs(np.asarray(z, float)))
        return -(np.sin(s) + 0.5 * s * np.cos(s))

    def exact_argmax(self, t: float) -> np.ndarray:
        lo, span = float(self._lo[0]), float(self._span[0])
        cache = type(self)._coordinate_argmax
        if (lo, span) not in cache:

            def g(X: np.ndarray) -> np.ndarray:
                z = lo + span * X[:, 0]
                return z * np.sin(np.sqrt(np.abs(z)))

            kinks = np.array([-lo / span]) if lo < 0 < lo + span else None
            cache[(lo, span)] = float(maximise_1d(g, kinks=kinks)[0][0])
        return np.full(self.d, cache[(lo, span)])


# -- Powell ---------------------------------------------------------------------------------
class Powell(SyntheticBenchmark):
    """Powell in 4-D (3 spatial + time) on [-4, 5]^4.

    Oracle: raw is a sum of convex functions of linear forms, hence convex; its restriction to a
    fixed time coordinate is convex too, so any local minimiser is global and a single polish
    (from the previous time's argmax) suffices. A few raw samples are kept as a safeguard.
    """

    name = "powell"
    d = 3
    lower = (-4.0,) * 4
    upper = (5.0,) * 4
    oracle_raw_samples = 16
    oracle_top_k = 1
    oracle_offgrid_raw_samples = 16
    oracle_candidates_always = False  # convex: the warm start alone reaches the optimum

    def raw(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        q = z.reshape(z.shape[:-1] + (-1, 4))
        a, b, c, e = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
        terms = (a + 10 * b) ** 2 + 5 * (c - e) ** 2 + (b - 2 * c) ** 4 + 10 * (a - e) ** 4
        return np.sum(terms, axis=-1)

    def raw_gradient(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        q = z.reshape(z.shape[:-1] + (-1, 4))
        a, b, c, e = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
        p = a + 10 * b
        m = c - e
        s = b - 2 * c
        w = a - e
        g = np.stack(
            [2 * p + 40 * w**3, 20 * p + 4 * s**3, 10 * m - 8 * s**3, -10 * m - 40 * w**3],
            axis=-1,
        )
        return g.reshape(z.shape)

    def candidate_starts(self, t: float) -> np.ndarray:
        return ((0.0 - self._lo[: self.d]) / self._span[: self.d])[None, :]


#: registry name -> class
SYNTHETIC: dict[str, type[SyntheticBenchmark]] = {
    cls.name: cls
    for cls in (Shekel, Hartmann3, Ackley, Griewank, Eggholder, Schwefel, Hartmann6, Powell)
}
