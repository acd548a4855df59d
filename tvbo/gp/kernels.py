"""Separable spatio-temporal covariance functions of the BOLT setting (spec_bolt.md section 2.2).

The surrogate is ``k((x,t),(x',t')) = lambda * k_S(|x-x'|/l_S) * k_T(|t-t'|/l_T)``
with isotropic, stationary correlation functions ``k_S`` and ``k_T`` taking values in [0, 1]
(Assumption 3.2/3.3 of BOLT [A]). A :class:`Correlation` is a function of the *scaled* distance
``r = |delta| / l`` only, so the same object serves space and time, and lengthscale derivatives
follow from ``d k / d log l = -r * d k / d r``.

Hyperparameters are expressed in *standardised* output units (the exact GP standardises y over its
current data), x lives in [0, 1]^d and t in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np
from scipy.spatial.distance import cdist

CORRELATIONS: tuple[str, ...] = ("matern12", "matern32", "matern52", "rbf")

_SQRT3 = math.sqrt(3.0)
_SQRT5 = math.sqrt(5.0)
#: the same floats as the expressions ``-_SQRT3`` / ``-_SQRT5`` (negation is exact)
_NEG_SQRT3 = -_SQRT3
_NEG_SQRT5 = -_SQRT5
#: the ufuncs of the in-place correlations, looked up once
_mul, _add, _exp = np.multiply, np.add, np.exp


class Correlation:
    """A stationary isotropic correlation of the scaled distance ``r = |delta| / l >= 0``.

    Subclasses implement :meth:`value_and_d_dr`, which shares the exponential between the value
    and its derivative (the hyperparameter fit needs both on every n x n matrix), and
    :meth:`d_dr_over_r`, the quantity that input gradients need: ``d k / d x = k'(r) / r * delta /
    l^2``. Writing it as one closed form keeps gradients finite at coincident points.

    Each built-in correlation writes its formula once, as the textbook expression in its
    class docstring (a 0-d argument gives a scalar), and the Matérn-3/2 and -5/2 have one fast
    form, :meth:`value_and_d_dr_into` (see there for why and its measured gain): the same
    IEEE operations on the same operands in the same order (``1 + a r`` and ``a r + 1`` are
    the same rounded sum; ``(-c) r`` is the same product), so every float is identical
    (tests/gp/test_fit_speed.py).
    """

    name: str = ""

    def value(self, r: np.ndarray) -> np.ndarray:
        """Correlation at scaled distance ``r``; in [0, 1] with ``value(0) == 1``."""
        return self.value_and_d_dr(r)[0]

    def d_dr(self, r: np.ndarray) -> np.ndarray:
        """Derivative of the correlation with respect to ``r`` (finite at ``r = 0``)."""
        return self.value_and_d_dr(r)[1]

    def value_and_d_dr(self, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def d_dr_over_r(self, r: np.ndarray) -> np.ndarray:
        """``d_dr(r) / r``, evaluated in a form that is finite at ``r = 0``."""
        raise NotImplementedError

    def value_and_d_dr_over_r(self, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(value(r), d_dr_over_r(r))`` (posterior gradients need both)."""
        return self.value(r), self.d_dr_over_r(r)

    def value_and_d_dr_into(self, r: np.ndarray, value: np.ndarray, deriv: np.ndarray,
                            scratch: tuple[np.ndarray, np.ndarray]) -> None:
        """:meth:`value_and_d_dr` of an array ``r`` written into ``value`` and ``deriv``.

        The interface of the fit's hot loop (:meth:`tvbo.gp.lml.LMLObjective.lml_and_grad`),
        which evaluates the same n x n shape ~150 times into buffers (``scratch``: two more
        arrays of r's shape, overwritten). Here, the reference: :meth:`value_and_d_dr` copied
        in. The Matérn-3/2 and -5/2 override it with their one fast form, the same operations
        in place, which avoids allocating and faulting in fresh pages on every call (at
        n >= 128 an n x n array is large enough for the allocator to map and unmap it).
        Measured gain (``python benchmarks/fit_overhead.py --compare``, one BLAS thread, best
        of 3): ``lml_and_grad`` takes 9% less at n = 10, 14% at n = 40, 9% at n = 160 and 47%
        at n = 512 (11.6 vs 21.9 ms). In a ``bolt_paper`` slice the overrides are 1.1% of the
        wall time (cProfile), so they save well under 5% of a campaign; they stay for the
        judged benchmarks' fits at n = 256-512 (``policy_step.py``, ``gp_step.py``), where
        the fit would be up to ~1.9x slower without them. Same floats either way.
        """
        v, d = self.value_and_d_dr(r)
        value[...] = v
        deriv[...] = d

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Matern12(Correlation):
    """Matérn-1/2 (Ornstein-Uhlenbeck, exponential): ``exp(-r)``.

    It is not differentiable at ``r = 0``: :meth:`d_dr` returns the one-sided (right) derivative
    ``-1`` there, and :meth:`d_dr_over_r` returns 0 at ``r = 0`` so that the input gradient at a
    coincident point is the zero subgradient of the symmetric cusp (any direction has the same
    one-sided slope, so no direction is preferred).
    """

    name = "matern12"

    def value(self, r: np.ndarray) -> np.ndarray:
        return np.exp(-np.asarray(r, dtype=float))

    def value_and_d_dr(self, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        e = np.exp(-np.asarray(r, dtype=float))
        return e, -e

    def d_dr_over_r(self, r: np.ndarray) -> np.ndarray:
        r = np.asarray(r, dtype=float)
        positive = r > 0.0
        safe = np.where(positive, r, 1.0)
        return np.where(positive, -np.exp(-safe) / safe, 0.0)


class Matern32(Correlation):
    """Matérn-3/2: ``(1 + sqrt(3) r) exp(-sqrt(3) r)``; ``k'(r) = -3 r exp(-sqrt(3) r)``."""

    name = "matern32"

    @staticmethod
    def _terms(r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The formula, once: ``(r, e = exp(-sqrt(3) r), value = (1 + sqrt(3) r) e)``.

        Written with in-place operators on the fresh arrays (a 0-d ``r`` gives scalars): the
        expression's operations in its order, one n x m pass and array fewer each.
        """
        r = np.asarray(r, dtype=float)
        e = np.exp(_NEG_SQRT3 * r)
        v = _SQRT3 * r
        v += 1.0
        v *= e
        return r, e, v

    def value(self, r: np.ndarray) -> np.ndarray:
        return self._terms(r)[2]

    def value_and_d_dr(self, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r, e, v = self._terms(r)
        d = -3.0 * r
        d *= e
        return v, d

    def d_dr_over_r(self, r: np.ndarray) -> np.ndarray:
        _, e, _ = self._terms(r)
        e *= -3.0
        return e

    def value_and_d_dr_over_r(self, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        _, e, v = self._terms(r)
        e *= -3.0  # -3 e, in e's own (fresh) memory
        return v, e

    def value_and_d_dr_into(self, r: np.ndarray, value: np.ndarray, deriv: np.ndarray,
                            scratch: tuple[np.ndarray, np.ndarray]) -> None:
        # the fast form (see Correlation.value_and_d_dr_into): the operations of
        # value_and_d_dr in the same order, into the buffers, ufuncs with positional outputs
        e = scratch[0]
        _mul(_NEG_SQRT3, r, e)
        _exp(e, e)
        _mul(_SQRT3, r, value)
        _add(value, 1.0, value)
        _mul(value, e, value)
        _mul(-3.0, r, deriv)
        _mul(deriv, e, deriv)


class Matern52(Correlation):
    """Matérn-5/2: ``(1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r)``.

    ``k'(r) = -(5/3) r (1 + sqrt(5) r) exp(-sqrt(5) r)``.
    """

    name = "matern52"

    @staticmethod
    def _terms(r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The formula, once: ``(r, e = exp(-sqrt(5) r), s = 1 + sqrt(5) r,
        value = (s + 5 r^2 / 3) e)``, with in-place operators on the fresh arrays as
        :meth:`Matern32._terms`."""
        r = np.asarray(r, dtype=float)
        e = np.exp(_NEG_SQRT5 * r)
        s = _SQRT5 * r
        s += 1.0
        v = (5.0 / 3.0) * r
        v *= r
        v += s
        v *= e
        return r, e, s, v

    def value(self, r: np.ndarray) -> np.ndarray:
        return self._terms(r)[3]

    def value_and_d_dr(self, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r, e, s, v = self._terms(r)
        d = -(5.0 / 3.0) * r
        d *= s
        d *= e
        return v, d

    def d_dr_over_r(self, r: np.ndarray) -> np.ndarray:
        return self.value_and_d_dr_over_r(r)[1]

    def value_and_d_dr_over_r(self, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        _, e, s, v = self._terms(r)
        s *= -(5.0 / 3.0)  # -(5/3) s e, in s's own (fresh) memory
        s *= e
        return v, s

    def value_and_d_dr_into(self, r: np.ndarray, value: np.ndarray, deriv: np.ndarray,
                            scratch: tuple[np.ndarray, np.ndarray]) -> None:
        e, s = scratch  # the fast form, as Matern32.value_and_d_dr_into
        _mul(_NEG_SQRT5, r, e)
        _exp(e, e)
        _mul(_SQRT5, r, s)
        _add(s, 1.0, s)
        _mul(5.0 / 3.0, r, value)
        _mul(value, r, value)
        _add(value, s, value)
        _mul(value, e, value)
        _mul(-(5.0 / 3.0), r, deriv)
        _mul(deriv, s, deriv)
        _mul(deriv, e, deriv)


class RBF(Correlation):
    """Squared exponential: ``exp(-r^2 / 2)``; ``k'(r) = -r exp(-r^2 / 2)``."""

    name = "rbf"

    def value(self, r: np.ndarray) -> np.ndarray:
        r = np.asarray(r, dtype=float)
        return np.exp(-0.5 * r * r)

    def value_and_d_dr(self, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = np.asarray(r, dtype=float)
        e = np.exp(-0.5 * r * r)
        return e, -r * e

    def d_dr_over_r(self, r: np.ndarray) -> np.ndarray:
        r = np.asarray(r, dtype=float)
        return -np.exp(-0.5 * r * r)

    def value_and_d_dr_over_r(self, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        e = self.value(r)
        return e, -e


_REGISTRY: dict[str, type[Correlation]] = {
    cls.name: cls for cls in (Matern12, Matern32, Matern52, RBF)
}


def correlation(name: str) -> Correlation:
    """The correlation function called ``name`` (one of :data:`CORRELATIONS`)."""
    try:
        return _REGISTRY[name]()
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown correlation {name!r}; valid names: {', '.join(CORRELATIONS)}"
        ) from None


@dataclass(frozen=True)
class Hyperparameters:
    """GP hyperparameters, in standardised output units.

    ``lengthscale_space`` is isotropic and in units of the unit cube [0, 1]^d;
    ``lengthscale_time`` is in seconds and ``None`` for a spatial-only GP. ``noise_var`` may be 0
    (interpolation); the exact GP then relies on recorded jitter escalation.
    """

    signal_var: float
    lengthscale_space: float
    lengthscale_time: float | None
    noise_var: float

    def __post_init__(self) -> None:
        for name in ("signal_var", "lengthscale_space", "lengthscale_time"):
            value = getattr(self, name)
            if value is None and name == "lengthscale_time":
                continue
            if not (isinstance(value, int | float | np.floating) and math.isfinite(value)):
                raise ValueError(f"{name} must be a finite positive number, got {value!r}")
            if value <= 0:
                raise ValueError(f"{name} must be > 0, got {value!r}")
        nv = self.noise_var
        if not (isinstance(nv, int | float | np.floating) and math.isfinite(nv)) or nv < 0:
            raise ValueError(f"noise_var must be a finite number >= 0, got {nv!r}")

    def as_dict(self) -> dict[str, float]:
        """Field name -> value as plain floats, without ``None`` entries (for result files)."""
        return {f.name: float(v) for f in fields(self) if (v := getattr(self, f.name)) is not None}


@dataclass(frozen=True)
class HyperparameterBounds:
    """Box bounds (lo, hi) for every fitted hyperparameter, in standardised units.

    Defaults and why:

    * ``signal_var`` (0.05, 20): y is standardised, so the prior variance should be O(1); the
      range leaves room for a strong trend without letting the fit explain data by scale alone.
    * ``lengthscale_space`` (0.01, 10): x is in [0, 1]^d. Below ~0.01 no realistic dataset
      (n <= 10^3) resolves the function and the GP degenerates to interpolated noise; the
      multimodal benchmarks (Eggholder, Schwefel) have features of ~0.02-0.05 once normalised.
      Above 10 (> 5 cube diameters for d <= 4) the function is effectively constant in x.
    * ``lengthscale_time`` (1, 1e4) seconds: horizons are 600-1800 s; an unconstrained l_T
      collapses to ~1e-5 in public W-DBO reproductions and makes every old point irrelevant, so
      the floor of 1 s (a few evaluation costs) is essential; 1e4 s is "static" over any horizon.
    * ``noise_var`` (1e-6, 1): at most the whole standardised variance; the floor keeps Delta
      well conditioned without jitter.
    """

    signal_var: tuple[float, float] = (0.05, 20.0)
    lengthscale_space: tuple[float, float] = (0.01, 10.0)
    lengthscale_time: tuple[float, float] = (1.0, 1e4)
    noise_var: tuple[float, float] = (1e-6, 1.0)

    def __post_init__(self) -> None:
        for f in fields(self):
            pair = getattr(self, f.name)
            try:
                lo, hi = (float(v) for v in pair)
            except (TypeError, ValueError):
                raise ValueError(f"{f.name} bounds must be a pair (lo, hi), got {pair!r}") from None
            if not (math.isfinite(lo) and math.isfinite(hi)):
                raise ValueError(f"{f.name} bounds must be finite, got {pair!r}")
            if lo <= 0:
                raise ValueError(f"{f.name} lower bound must be > 0, got {lo!r}")
            if lo > hi:
                raise ValueError(f"{f.name} bounds need lo <= hi, got ({lo!r}, {hi!r})")


def _as_points(X: np.ndarray, name: str) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n, d), got shape {X.shape}")
    return X


def _as_times(T: np.ndarray | float | None, n: int, name: str) -> np.ndarray:
    if T is None:
        raise ValueError(f"{name} is required for a spatio-temporal kernel, got None")
    T = np.asarray(T, dtype=float)
    if T.ndim == 0:
        return np.full(n, float(T))
    T = T.reshape(-1)
    if T.shape[0] != n:
        raise ValueError(f"{name} must have {n} entries (one per point), got {T.shape[0]}")
    return T


def space_distances(X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
    """Euclidean distances (m, n) as sqrt(sum of squared differences): no cancellation."""
    return cdist(X1, X2)


def time_distances(T1: np.ndarray, T2: np.ndarray) -> np.ndarray:
    """Absolute time lags (m, n) in seconds."""
    return np.abs(T1[:, None] - T2[None, :])


class SeparableKernel:
    """``lambda * k_S(|x - x'| / l_S) * k_T(|t - t'| / l_T)``; ``time=None`` gives a spatial GP.

    Defaults follow BOLT: Matérn-5/2 in space, Matérn-3/2 in time (spec_bolt.md section 2.5).
    """

    def __init__(self, space: str = "matern52", time: str | None = "matern32") -> None:
        self.space: Correlation = correlation(space)
        self.time: Correlation | None = None if time is None else correlation(time)
        self.has_time: bool = self.time is not None

    def __repr__(self) -> str:
        t = None if self.time is None else self.time.name
        return f"SeparableKernel(space={self.space.name!r}, time={t!r})"

    def _check(self, hp: Hyperparameters) -> None:
        if self.has_time and hp.lengthscale_time is None:
            raise ValueError("this kernel has a time component: lengthscale_time must not be None")

    def time_correlation(
        self, T1: np.ndarray | None, T2: np.ndarray | None, m: int, n: int, hp: Hyperparameters
    ) -> np.ndarray | float:
        """k_T matrix (m, n), or the scalar 1.0 for a spatial-only kernel."""
        if self.time is None:
            return 1.0
        self._check(hp)
        t1 = _as_times(T1, m, "T1")
        t2 = _as_times(T2, n, "T2")
        return self.time.value(time_distances(t1, t2) / hp.lengthscale_time)

    #: :meth:`matrix` and :meth:`matrix_and_grad_factor` accept a scalar ``T1`` as the time of
    #: every row (ExactGP.predict passes the acquisition's time so, see :meth:`time_factor`)
    scalar_time: bool = True

    def time_factor(
        self, T1: np.ndarray | float | None, T2: np.ndarray | float | None, m: int, n: int,
        hp: Hyperparameters,
    ) -> np.ndarray | float:
        """k_T as :meth:`matrix` uses it: (m, n), a row (n,) when ``T1`` is a scalar, or 1.0.

        A scalar ``T1`` (every query at one time, as in an acquisition at time t) gives the
        same k_T row for every query point; broadcasting that row multiplies the same floats as
        the (m, n) matrix of :meth:`time_correlation` holds (``|t - t_j| / l_T`` and the
        correlation are elementwise, so each entry is the same IEEE result), at n instead of
        m n exponentials: a raw-sample scoring call has m = 512.

        The one fast form of k_T (the (m, n) matrix is its reference). Measured gain
        (``python benchmarks/gp_step.py --compare-row``, one BLAS thread, process CPU time,
        best of 5) for ``matrix_and_grad_factor``: 26% less at m = 512, n = 32, 41% at
        m = 512, n = 256, 12% at m = 20, n = 64. Kernel evaluations are 1.5% of a
        ``bolt_paper`` slice (cProfile), so it saves under 1% of a campaign; it stays for the
        acquisitions of the judged benchmarks (``policy_step.py``, ``gp_step.py``: 512 raw
        samples at n up to 512), a third of their time.
        """
        if self.time is None or T1 is None or np.ndim(T1) != 0:
            return self.time_correlation(T1, T2, m, n, hp)
        self._check(hp)
        t2 = _as_times(T2, n, "T2")
        lag = np.subtract(float(T1), t2)
        np.abs(lag, out=lag)
        lag /= hp.lengthscale_time
        return self.time.value(lag)

    def matrix(
        self,
        X1: np.ndarray,
        T1: np.ndarray | float | None,
        X2: np.ndarray,
        T2: np.ndarray | float | None,
        hp: Hyperparameters,
    ) -> np.ndarray:
        """Covariance (m, n) between (X1, T1) and (X2, T2); T is ignored without time.
        """
        X1 = _as_points(X1, "X1")
        X2 = _as_points(X2, "X2")
        r = space_distances(X1, X2)
        r /= hp.lengthscale_space
        kt = self.time_factor(T1, T2, X1.shape[0], X2.shape[0], hp)
        # = hp.signal_var * k_S * k_T, in place on the fresh k_S (products commute exactly)
        K = self.space.value(r)
        K *= hp.signal_var
        K *= kt
        return K

    def matrix_and_grad_factor(
        self,
        X1: np.ndarray,
        T1: np.ndarray | float | None,
        X2: np.ndarray,
        T2: np.ndarray | float | None,
        hp: Hyperparameters,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Covariance K (m, n) and the factor G (m, n) with ``dK_ij / d x1_i = G_ij (x1_i - x2_j)``.

        Isotropy makes every input gradient a scalar times the difference vector, so callers
        that contract gradients with weights (posterior mean/variance gradients) never need the
        (m, n, d) tensor: ``sum_j G_ij w_j (x1_i - x2_j) = x1_i (G w)_i - (G * w) @ X2``.
        ``G = lambda k_T k_S'(r) / (r l_S^2)``, finite at coincident points (see
        :meth:`Correlation.d_dr_over_r`). Distances and k_T are computed once for both.
        """
        X1 = _as_points(X1, "X1")
        X2 = _as_points(X2, "X2")
        ls = hp.lengthscale_space
        r = space_distances(X1, X2)
        r /= ls
        kt = self.time_factor(T1, T2, X1.shape[0], X2.shape[0], hp)
        skt = hp.signal_var * kt
        K, G = self.space.value_and_d_dr_over_r(r)  # fresh arrays: scaled in place
        K *= skt
        G *= skt / (ls * ls)
        return K, G

    def grad_x(
        self,
        X1: np.ndarray,
        T1: np.ndarray | float | None,
        X2: np.ndarray,
        T2: np.ndarray | float | None,
        hp: Hyperparameters,
    ) -> np.ndarray:
        """Gradient (m, n, d) of k((x1_i, t1_i), (x2_j, t2_j)) with respect to x1_i.

        ``d k / d x1 = lambda k_T k_S'(r) / r * (x1 - x2) / l_S^2``, with ``k_S'(r)/r`` in closed
        form so coincident points give finite values (zero for Matérn-1/2, see :class:`Matern12`).
        """
        X1 = _as_points(X1, "X1")
        X2 = _as_points(X2, "X2")
        _, G = self.matrix_and_grad_factor(X1, T1, X2, T2, hp)
        return G[:, :, None] * (X1[:, None, :] - X2[None, :, :])
