"""The BOKE paper's static benchmarks (spec_boke.md §5.2) as time-invariant tasks.

Each is ``f(x, t) = -raw(lo + (hi - lo) x)``: the classical function (minimisation form) on its
usual box, negated because tvbo maximises, constant in time. The paper gives names and dimensions
only (spec §5.2 ⚠); the classical forms and domains of Jamil & Yang (2013) are used, not
Picheny's standardised versions. Every optimum is known, so the oracle is exact
(:meth:`exact_argmax`), and :meth:`raw` can be checked against the published minima.

Defaults (documented, all overridable): ``noise_var = 0`` (the paper's noise-free Fig. 6; pass
``noise_var > 0`` for the noisy Fig. 7 variant, whose level the paper does not give), ``cost = 0``
(so compute time alone drives the clock, as the paper's regret-vs-CPU-time plots need; the
``counted`` model always charges something, so the clock advances), ``horizon = 600`` s.

The paper's 8-D garden sprinkler model (spec §5.3) is :mod:`tvbo.benchmarks.sprinkler`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from tvbo.benchmarks.base import Benchmark

STATIC_OPTIONS: tuple[str, ...] = ("horizon", "cost", "noise_var", "cost_table", "oracle_grid_step")
DEFAULT_HORIZON = 600.0


class StaticBenchmark(Benchmark):
    """A published test function, constant in time, with a known global minimiser."""

    oracle_exact = True
    lower: ClassVar[tuple[float, ...]] = ()
    upper: ClassVar[tuple[float, ...]] = ()
    #: a known global minimiser of :meth:`raw` in original coordinates
    argmin_raw: ClassVar[tuple[float, ...]] = ()
    #: the published minimum of :meth:`raw`
    min_raw: ClassVar[float] = 0.0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._lo = np.asarray(self.lower, float)
        self._span = np.asarray(self.upper, float) - self._lo
        if self._lo.shape != (self.d,) or len(self.argmin_raw) != self.d:
            raise TypeError(f"{type(self).__name__}: bounds and argmin need d = {self.d} entries")

    def to_original(self, x: np.ndarray) -> np.ndarray:
        return self._lo + self._span * np.asarray(x, float)

    def _evaluate(self, x: np.ndarray, t: np.ndarray) -> np.ndarray:
        f = -self.raw(self.to_original(x))
        return np.broadcast_to(f, np.broadcast_shapes(np.shape(f), np.shape(t))).copy()

    def exact_argmax(self, t: float) -> np.ndarray:
        return (np.asarray(self.argmin_raw, float) - self._lo) / self._span

    def domain(self) -> dict[str, Any]:
        pairs = [[float(a), float(b)] for a, b in zip(self.lower, self.upper, strict=True)]
        return {"spatial": pairs, "time": [0.0, self.horizon], "time_invariant": True}

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["objective"] = "maximise f(x) = -raw(z), z original coordinates; time-invariant"
        return out


class Forrester(StaticBenchmark):
    """Forrester (1-D): (6z - 2)^2 sin(12z - 4) on [0, 1]; min -6.02074 at z = 0.75725."""

    name, d = "forrester", 1
    lower, upper = (0.0,), (1.0,)
    argmin_raw, min_raw = (0.7572487144,), -6.020740055767

    def raw(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)[..., 0]
        return (6.0 * z - 2.0) ** 2 * np.sin(12.0 * z - 4.0)


class GoldsteinPrice(StaticBenchmark):
    """Goldstein-Price (2-D) on [-2, 2]^2; min 3 at (0, -1)."""

    name, d = "goldstein-price", 2
    lower, upper = (-2.0, -2.0), (2.0, 2.0)
    argmin_raw, min_raw = (0.0, -1.0), 3.0

    def raw(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        a, b = z[..., 0], z[..., 1]
        p = 1 + (a + b + 1) ** 2 * (19 - 14 * a + 3 * a**2 - 14 * b + 6 * a * b + 3 * b**2)
        q = 30 + (2 * a - 3 * b) ** 2 * (18 - 32 * a + 12 * a**2 + 48 * b - 36 * a * b + 27 * b**2)
        return p * q


class SixHumpCamel(StaticBenchmark):
    """Six-Hump Camel (2-D), z1 in [-3, 3], z2 in [-2, 2]; min -1.0316285 at +-(0.0898, -0.7126)."""

    name, d = "six-hump-camel", 2
    lower, upper = (-3.0, -2.0), (3.0, 2.0)
    argmin_raw, min_raw = (0.08984201368, -0.7126564032), -1.031628453490

    def raw(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        a, b = z[..., 0], z[..., 1]
        return (4 - 2.1 * a**2 + a**4 / 3) * a**2 + a * b + (-4 + 4 * b**2) * b**2


class Hartmann3Static(StaticBenchmark):
    """Hartmann-3 (3-D) on [0, 1]^3; min -3.86278 at (0.114614, 0.555649, 0.852547)."""

    name, d = "hartmann3-static", 3
    lower, upper = (0.0,) * 3, (1.0,) * 3
    argmin_raw, min_raw = (0.114614, 0.555649, 0.852547), -3.86278
    alpha = np.array([1.0, 1.2, 3.0, 3.2])
    A = np.array([[3, 10, 30], [0.1, 10, 35], [3, 10, 30], [0.1, 10, 35]], float)
    P = 1e-4 * np.array(
        [[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]], float
    )

    def raw(self, z: np.ndarray) -> np.ndarray:
        diff = np.asarray(z, float)[..., None, :] - self.P
        return -np.sum(self.alpha * np.exp(-np.sum(self.A * diff**2, axis=-1)), axis=-1)

    def exact_argmax(self, t: float) -> np.ndarray:
        # the published minimiser has 6 digits; polish it once to machine precision
        if not hasattr(self, "_polished"):
            x, _ = self.oracle_polish(0.0, super().exact_argmax(t)[None, :])
            self._polished = x
        return self._polished.copy()


class Rosenbrock4(StaticBenchmark):
    """Rosenbrock (4-D) on [-5, 10]^4 (Picheny's box); min 0 at (1, 1, 1, 1)."""

    name, d = "rosenbrock4", 4
    lower, upper = (-5.0,) * 4, (10.0,) * 4
    argmin_raw, min_raw = (1.0,) * 4, 0.0

    def raw(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float)
        return np.sum(
            100.0 * (z[..., 1:] - z[..., :-1] ** 2) ** 2 + (1.0 - z[..., :-1]) ** 2, axis=-1
        )


class Sphere6(StaticBenchmark):
    """Sphere (6-D) on [-5.12, 5.12]^6; min 0 at the origin."""

    name, d = "sphere6", 6
    lower, upper = (-5.12,) * 6, (5.12,) * 6
    argmin_raw, min_raw = (0.0,) * 6, 0.0

    def raw(self, z: np.ndarray) -> np.ndarray:
        return np.sum(np.asarray(z, float) ** 2, axis=-1)


STATIC: dict[str, type[StaticBenchmark]] = {
    cls.name: cls
    for cls in (Forrester, GoldsteinPrice, SixHumpCamel, Hartmann3Static, Rosenbrock4, Sphere6)
}


def static_factory(cls: type[StaticBenchmark]):
    """``factory(**opts)`` for the registry; ``cost_table`` is accepted and ignored (no table)."""

    def build(**opts: Any) -> Benchmark:
        unknown = sorted(set(opts) - set(STATIC_OPTIONS))
        if unknown:
            raise TypeError(
                f"unknown option(s) {', '.join(unknown)} for benchmark {cls.name!r}; "
                f"valid options: {', '.join(STATIC_OPTIONS)}"
            )

        def pick(key: str, default: float) -> float:
            value = opts.get(key)
            return default if value is None else value

        return cls(
            horizon=pick("horizon", DEFAULT_HORIZON),
            noise_var=pick("noise_var", 0.0),
            cost=pick("cost", 0.0),
            oracle_grid_step=pick("oracle_grid_step", 1.0),
        )

    build.__doc__ = (
        f"Build the static {cls.name!r} benchmark; options: {', '.join(STATIC_OPTIONS)}."
    )
    return build
