"""The three synthetic benchmarks of the W-DBO paper that the BOLT papers do not have.

W-DBO ("This Too Shall Pass", Bardou, Thiran & Ranieri, NeurIPS 2024), App. H.2 and Table 2:
each function is a standard test function of ``d' = d + 1`` coordinates whose LAST coordinate is
time, ``z = (x_1, ..., x_d, t)`` (spec_baselines.md §7.7):

* ``rastrigin`` ("Rastrigin (5)"): ``a d' + sum_i (z_i^2 - a cos(2 pi z_i))``, a = 10, on
  [-4, 4]^5 (4 spatial coordinates + time);
* ``styblinski-tang`` ("Styblinski-Tang (4)"): ``1/2 sum_i (z_i^4 - 16 z_i^2 + 5 z_i)`` on
  [-5, 5]^4 (3 + time);
* ``rosenbrock`` ("Rosenbrock (3)"): ``sum_{i<d'} 100 (z_{i+1} - z_i^2)^2 + (z_i - 1)^2`` on
  [-1, 1.5]^3 (2 + time).

The conventions are those of :mod:`tvbo.benchmarks.synthetic` (W-DBO App. H.1 says the same):
the spatial domain is normalised to [0, 1]^d, time ``t in [0, H]`` seconds is mapped linearly
onto the time coordinate's range, and the task MAXIMISES ``-raw``. The names avoid the static
BOKE benchmark ``rosenbrock4`` (4-D, time-invariant, :mod:`tvbo.benchmarks.static`); the papers'
labels ("Rosenbrock (3)", "Styblinski-Tang (4)", "Rastrigin (5)") are registry aliases.

Noise, cost and horizon: no BOLT paper has these benchmarks, so their rows in the cost tables
(:mod:`tvbo.benchmarks.tables`) are tvbo's choice, documented there: the W-DBO protocol's noise
(5 % of the signal variance, :mod:`tvbo.benchmarks.noise`), the BOLT tables' cost of a cheap
closed-form function (0.05 s) and W-DBO's horizon (600 s).

Oracles (all exact, ``oracle_exact = True``):

* Rastrigin and Styblinski-Tang are sums of one function of each coordinate, so the time
  coordinate only adds a constant and every spatial coordinate is minimised independently, by
  the same 1-D minimiser at every t. Rastrigin: ``z^2 >= 0`` and ``-a cos(2 pi z) >= -a``, both
  with equality at ``z = 0`` only, so ``z = 0`` (x = 1/2). Styblinski-Tang: the minimiser of the
  quartic ``h(z) = z^4 - 16 z^2 + 5 z`` on [-5, 5] is a root of the cubic ``h'`` or an end point;
  all are evaluated (z* = -2.903534, raw per coordinate -39.16617). In both the argmax does not
  move with time: W-DBO's construction makes only the optimal VALUE time-varying here.
* Rosenbrock's time coordinate is the END of the chain, ``z_3``; with it fixed the optimum of
  (z_1, z_2) is NOT (1, 1) (the term ``100 (z_3 - z_2^2)^2`` pulls z_2 towards sqrt(z_3)). It is
  computed by an exact reduction to one dimension: for a fixed z_2, the z_1-part
  ``g(z_1) = 100 (z_2 - z_1^2)^2 + (z_1 - 1)^2`` is a quartic whose minimum over [-1, 1.5] is at
  a root of its cubic derivative or at an end point (all evaluated, vectorised), which leaves
  ``phi(z_2) = min g + 100 (z_3 - z_2^2)^2 + (z_2 - 1)^2``, minimised on [-1, 1.5] by
  :func:`tvbo.benchmarks.oracle.maximise_1d` (dense grid + bounded Brent).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from tvbo.benchmarks.oracle import maximise_1d
from tvbo.benchmarks.synthetic import SyntheticBenchmark


# -- Rastrigin ------------------------------------------------------------------------------
class Rastrigin(SyntheticBenchmark):
    """Rastrigin, a = 10, in 5-D (4 spatial coordinates + time) on [-4, 4]^5 (W-DBO App. H.2).

    Exact oracle: separable with every coordinate minimised at 0 (module docstring), so
    x* = (1/2, ..., 1/2) at every t and f*(t) = -(z_t^2 - a cos(2 pi z_t) + a).
    """

    name = "rastrigin"
    d = 4
    lower = (-4.0,) * 5
    upper = (4.0,) * 5
    a = 10.0
    oracle_exact = True

    def raw(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        n = z.shape[-1]
        return self.a * n + np.sum(z**2 - self.a * np.cos(2.0 * np.pi * z), axis=-1)

    def raw_gradient(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        return 2.0 * z + 2.0 * np.pi * self.a * np.sin(2.0 * np.pi * z)

    def exact_argmax(self, t: float) -> np.ndarray:
        return (0.0 - self._lo[: self.d]) / self._span[: self.d]


# -- Styblinski-Tang ------------------------------------------------------------------------
def _quartic_argmin(lo: float, hi: float) -> float:
    """argmin of h(z) = z^4 - 16 z^2 + 5 z on [lo, hi]: a real root of h' or an end point."""
    roots = np.roots([4.0, 0.0, -32.0, 5.0])
    cand = np.concatenate([np.clip(roots.real, lo, hi), [lo, hi]])
    h = cand**4 - 16.0 * cand**2 + 5.0 * cand
    return float(cand[int(np.argmin(h))])


class StyblinskiTang(SyntheticBenchmark):
    """Styblinski-Tang in 4-D (3 spatial coordinates + time) on [-5, 5]^4 (W-DBO App. H.2).

    ``raw = 1/2 sum_i (z_i^4 - 16 z_i^2 + 5 z_i)`` (global minimum -39.16617 d' at
    z_i = -2.903534). Exact oracle: separable, each spatial coordinate at the 1-D minimiser of
    the quartic (a root of its cubic derivative), at every t.
    """

    name = "styblinski-tang"
    d = 3
    lower = (-5.0,) * 4
    upper = (5.0,) * 4
    oracle_exact = True
    _coordinate_argmin: ClassVar[float | None] = None

    def raw(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        return 0.5 * np.sum(z**4 - 16.0 * z**2 + 5.0 * z, axis=-1)

    def raw_gradient(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        return 0.5 * (4.0 * z**3 - 32.0 * z + 5.0)

    def exact_argmax(self, t: float) -> np.ndarray:
        cls = type(self)
        if cls._coordinate_argmin is None:
            cls._coordinate_argmin = _quartic_argmin(self.lower[0], self.upper[0])
        z = np.full(self.d, cls._coordinate_argmin)
        return (z - self._lo[: self.d]) / self._span[: self.d]


# -- Rosenbrock -----------------------------------------------------------------------------
def _depressed_cubic_roots(p: np.ndarray, q: float) -> np.ndarray:
    """The real roots of ``z^3 + p z + q = 0``, vectorised over ``p``: shape ``(len(p), 3)``.

    Three real roots (``4 p^3 + 27 q^2 < 0``): the trigonometric form; one (otherwise): Cardano's
    formula, repeated in the three columns. Closed forms, so a batch costs a few array operations
    (the oracle solves this for every grid point of every time).
    """
    p = np.asarray(p, float)
    disc = q * q / 4.0 + p**3 / 27.0
    three = disc < 0.0
    # trigonometric branch (p < 0 there); the where-guards keep the other rows finite
    ps = np.where(three, p, -1.0)
    r = 2.0 * np.sqrt(-ps / 3.0)
    arg = np.clip(3.0 * q / (2.0 * ps) * np.sqrt(-3.0 / ps), -1.0, 1.0)
    phi = np.arccos(arg) / 3.0
    k = np.arange(3) * (2.0 * np.pi / 3.0)
    trig = r[:, None] * np.cos(phi[:, None] - k)
    # Cardano branch
    sq = np.sqrt(np.where(three, 0.0, disc))
    one = np.cbrt(-q / 2.0 + sq) + np.cbrt(-q / 2.0 - sq)
    return np.where(three[:, None], trig, one[:, None])


def _chain_link_min(z2: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """min over z1 in [lo, hi] of g(z1) = 100 (z2 - z1^2)^2 + (z1 - 1)^2, vectorised over z2.

    The minimiser is a stationary point (a real root of g'(z1) = 400 z1^3 + (2 - 400 z2) z1 - 2,
    i.e. of the depressed cubic z^3 + p z + q with p = (2 - 400 z2) / 400, q = -1/200) or an end
    point: evaluating g on all of them (roots clipped to the box are feasible points too) and
    taking the minimum is exact. Returns ``(argmin z1, min g)``.
    """
    z2 = np.asarray(z2, float).ravel()
    roots = np.clip(_depressed_cubic_roots((2.0 - 400.0 * z2) / 400.0, -2.0 / 400.0), lo, hi)
    # one Newton step on each root removes the closed forms' round-off near a double root
    d1 = 400.0 * roots**3 + (2.0 - 400.0 * z2[:, None]) * roots - 2.0
    d2 = 1200.0 * roots**2 + 2.0 - 400.0 * z2[:, None]
    safe = np.where(d2 > 1e-12, d2, 1.0)
    roots = np.where(d2 > 1e-12, np.clip(roots - d1 / safe, lo, hi), roots)
    ends = np.broadcast_to(np.array([lo, hi]), (z2.size, 2))
    cand = np.concatenate([roots, ends], axis=1)
    g = 100.0 * (z2[:, None] - cand**2) ** 2 + (cand - 1.0) ** 2
    j = np.argmin(g, axis=1)
    rows = np.arange(z2.size)
    return cand[rows, j], g[rows, j]


class Rosenbrock(SyntheticBenchmark):
    """Rosenbrock in 3-D (2 spatial coordinates + time) on [-1, 1.5]^3 (W-DBO App. H.2).

    ``raw = 100 (z2 - z1^2)^2 + (z1 - 1)^2 + 100 (z3 - z2^2)^2 + (z2 - 1)^2`` with time z3 (static
    global minimum 0 at (1, 1, 1)). Exact oracle by the 1-D reduction of the module docstring:
    the optimum of (z1, z2) at a fixed time is not (1, 1) unless z3 = 1.
    """

    name = "rosenbrock"
    d = 2
    lower = (-1.0,) * 3
    upper = (1.5,) * 3
    oracle_exact = True
    #: dense grid of the 1-D search over z2 (phi is smooth with at most two basins)
    oracle_grid_points = 4097

    def raw(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        a, b = z[..., :-1], z[..., 1:]
        return np.sum(100.0 * (b - a**2) ** 2 + (a - 1.0) ** 2, axis=-1)

    def raw_gradient(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        a, b = z[..., :-1], z[..., 1:]
        link = b - a**2
        g = np.zeros_like(z)
        g[..., :-1] += -400.0 * a * link + 2.0 * (a - 1.0)
        g[..., 1:] += 200.0 * link
        return g

    def _time_coordinate(self, t: float) -> float:
        return float(self._lo[self.d] + self._span[self.d] * t / self.horizon)

    def exact_argmax(self, t: float) -> np.ndarray:
        z3 = self._time_coordinate(t)
        lo, hi = float(self._lo[0]), float(self._lo[0] + self._span[0])
        lo2, span2 = float(self._lo[1]), float(self._span[1])

        def minus_phi(X: np.ndarray) -> np.ndarray:
            z2 = lo2 + span2 * np.asarray(X, float)[:, 0]
            _, g = _chain_link_min(z2, lo, hi)
            return -(g + 100.0 * (z3 - z2**2) ** 2 + (z2 - 1.0) ** 2)

        x2, _ = maximise_1d(minus_phi, n_grid=self.oracle_grid_points)
        z2 = lo2 + span2 * x2
        z1, _ = _chain_link_min(z2, lo, hi)
        z = np.array([z1[0], z2[0]])
        return (z - self._lo[: self.d]) / self._span[: self.d]


#: registry name -> class
WDBO_SYNTHETIC: dict[str, type[SyntheticBenchmark]] = {
    cls.name: cls for cls in (Rastrigin, StyblinskiTang, Rosenbrock)
}
