"""Closed-form self-convolutions of the stationary correlations used by the W2 relevance criterion.

The W-DBO criterion (Bardou, Thiran & Ranieri, NeurIPS 2024, Theorem 4.1 and Appendix D) turns
the integral of squared posterior differences over the future domain ``S x [t0, inf)`` into
quadratic forms in the matrix ``C_jk = (kS * kS)(x_j - x_k) * (kT * kT)_{t0}(t_j, t_k)``. This
module supplies both factors exactly, for the four correlations of the project:

* ``matern12``  ``exp(-r)``
* ``matern32``  ``(1 + sqrt(3) r) exp(-sqrt(3) r)``
* ``matern52``  ``(1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r)``
* ``rbf``       ``exp(-r^2 / 2)``

with ``r = |distance| / lengthscale``.

Space (integral over all of R^d, the paper's eq. (35) upper bound of the integral over S):
the Fourier transform of a Matérn-nu correlation is proportional to
``(alpha^2 + |w|^2)^-(nu + d/2)`` with ``alpha = sqrt(2 nu) / l``; squaring it gives the spectrum of
a Matérn of order ``nu' = 2 nu + d/2`` with the same ``alpha``. Hence

``(k * k)(r) = A(nu, d, l) * M_{nu'}(alpha r)``,  ``M_v(z) = 2^(1-v) / Gamma(v) z^v K_v(z)``,

``A = 2^d pi^(d/2) Gamma(nu + d/2)^2 Gamma(2 nu + d/2) / (Gamma(nu)^2 Gamma(2 nu + d)) alpha^-d``,

which is the paper's Lemma D.3 written with a unit-peak Matérn. The RBF gives
``pi^(d/2) l^d exp(-r^2 / (4 l^2))`` (Lemma D.2).

Time (integral over ``[t0, inf)``): for the RBF the exact result is
``sqrt(pi) l / 2 * exp(-(ti - tj)^2 / (4 l^2)) * erfc((2 t0 - ti - tj) / (2 l))``. The paper's
eq. (70) and the official C++ code print ``2 l^2`` in the first exponent; that is an error
(checked by quadrature, see ``shared/spec/spec_baselines.md`` §7.4) and we use the exact
``4 l^2``. For Matérn ``p + 1/2`` with both ``ti, tj <= t0`` the integrand on ``[t0, inf)`` is
``exp(-2 c t)`` times a polynomial of degree ``2p`` (``c = sqrt(2p + 1) / l``), so Gauss-Laguerre
with ``p + 1`` nodes is *exact*. Observation times after ``t0`` are handled exactly as well, by
splitting the line at ``ti`` and ``tj`` (between them the integrand is a constant times a
polynomial, where Gauss-Legendre with ``p + 1`` nodes is exact) and by reflecting the part before
both points.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from scipy import special

#: Correlation names with closed-form convolutions (the same names as the GP kernels).
SUPPORTED: tuple[str, ...] = ("matern12", "matern32", "matern52", "rbf")

#: Matérn smoothness ``nu`` per name (``nu = p + 1/2``); the RBF is handled separately.
_MATERN_NU: dict[str, float] = {"matern12": 0.5, "matern32": 1.5, "matern52": 2.5}

#: Below this scaled distance ``M_v(z) = 1 - O(z^2)`` is 1 to double precision (``v >= 3/2`` here),
#: and ``K_v(z)`` would overflow for tiny ``z``.
_SMALL_Z = 1e-8


def check_name(name: str) -> str:
    """Return ``name`` if it is a supported correlation, else raise a ValueError listing them."""
    if name not in SUPPORTED:
        raise ValueError(f"unknown kernel {name!r}; valid choices: {', '.join(SUPPORTED)}")
    return name


def _check_lengthscale(lengthscale: float) -> float:
    value = float(lengthscale)
    if not (value > 0.0 and math.isfinite(value)):
        raise ValueError(f"lengthscale must be a positive finite number, got {lengthscale!r}")
    return value


def correlation(name: str, r: np.ndarray) -> np.ndarray:
    """Unit-lengthscale correlation ``k(r)`` of kernel ``name`` at scaled distances ``r >= 0``."""
    check_name(name)
    r = np.abs(np.asarray(r, dtype=float))
    if name == "matern12":
        return np.exp(-r)
    if name == "matern32":
        z = math.sqrt(3.0) * r
        return (1.0 + z) * np.exp(-z)
    if name == "matern52":
        z = math.sqrt(5.0) * r
        return (1.0 + z + z * z / 3.0) * np.exp(-z)
    return np.exp(-0.5 * r * r)


# ---------------------------------------------------------------------------------------------
# space: integral over R^d
# ---------------------------------------------------------------------------------------------
def _unit_matern(order: float, z: np.ndarray) -> np.ndarray:
    """``M_v(z) = 2^(1-v)/Gamma(v) z^v K_v(z)`` (a unit-peak Matérn), computed in log space."""
    z = np.asarray(z, dtype=float)
    out = np.ones_like(z)
    big = z > _SMALL_Z
    if np.any(big):
        zb = z[big]
        # kve = K_v(z) e^z keeps K_v finite for large z; the logs keep z^v finite for large v.
        log_val = (
            (1.0 - order) * math.log(2.0)
            - special.gammaln(order)
            + order * np.log(zb)
            + np.log(special.kve(order, zb))
            - zb
        )
        out[big] = np.exp(log_val)
    return out


def space_convolution_amplitude(name: str, lengthscale: float, d: int) -> float:
    """``(kS * kS)(0) = integral over R^d of kS(x)^2 dx``: the peak of the space convolution."""
    check_name(name)
    ell = _check_lengthscale(lengthscale)
    d = _check_dim(d)
    if name == "rbf":
        return math.pi ** (d / 2.0) * ell**d
    nu = _MATERN_NU[name]
    alpha = math.sqrt(2.0 * nu) / ell
    log_a = (
        d * math.log(2.0)
        + 0.5 * d * math.log(math.pi)
        + 2.0 * math.lgamma(nu + 0.5 * d)
        + math.lgamma(2.0 * nu + 0.5 * d)
        - 2.0 * math.lgamma(nu)
        - math.lgamma(2.0 * nu + d)
        - d * math.log(alpha)
    )
    return math.exp(log_a)


def _check_dim(d: int) -> int:
    if int(d) != d or int(d) < 1:
        raise ValueError(f"spatial dimension d must be a positive integer, got {d!r}")
    return int(d)


def space_convolution_r(name: str, lengthscale: float, r: np.ndarray, d: int) -> np.ndarray:
    """``(kS * kS)`` over R^d as a function of the distance ``r = |a - b|`` (any shape)."""
    amplitude = space_convolution_amplitude(name, lengthscale, d)
    ell = float(lengthscale)
    r = np.asarray(r, dtype=float)
    if name == "rbf":
        return amplitude * np.exp(-(r * r) / (4.0 * ell * ell))
    nu = _MATERN_NU[name]
    alpha = math.sqrt(2.0 * nu) / ell
    return amplitude * _unit_matern(2.0 * nu + 0.5 * d, alpha * r)


def space_convolution(name: str, lengthscale: float, diff: np.ndarray, d: int) -> np.ndarray:
    """Exact ``integral over R^d of kS(|x - a| / l) kS(|x - b| / l) dx`` for ``diff = a - b``.

    ``diff`` has shape ``(..., d)``; the result has shape ``(...)``. Integrating over R^d instead
    of the search space S bounds the paper's integral over S from above (eq. (35)); callers that
    want the reference code's tighter ``min(1, .)`` cap apply it themselves (see
    :func:`tvbo.algorithms.wdbo.relevance.relevance`).
    """
    diff = np.asarray(diff, dtype=float)
    if diff.ndim == 0 or diff.shape[-1] != d:
        raise ValueError(f"diff must have shape (..., d={d}), got shape {diff.shape}")
    r = np.sqrt(np.sum(diff * diff, axis=-1))
    return space_convolution_r(name, lengthscale, r, d)


# ---------------------------------------------------------------------------------------------
# time: integral over [t0, inf)
# ---------------------------------------------------------------------------------------------
@cache
def _laguerre(n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    return np.polynomial.laguerre.laggauss(n_nodes)


@cache
def _legendre(n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    return np.polynomial.legendre.leggauss(n_nodes)


def _matern_tail(name: str, ell: float, s0: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``integral_{s0}^{inf} k(t - a) k(t - b) dt`` for Matérn, valid when ``a, b <= s0``.

    With ``t = s0 + u / (2c)`` the integrand is ``exp(-u)`` times a polynomial of degree ``2p`` in
    ``u``, which ``p + 1`` Gauss-Laguerre nodes integrate exactly.
    """
    nu = _MATERN_NU[name]
    p = int(nu - 0.5)
    c = math.sqrt(2.0 * p + 1.0) / ell
    nodes, weights = _laguerre(p + 1)
    da = (s0 - a) / ell
    db = (s0 - b) / ell
    total = np.zeros(np.broadcast(s0, a, b).shape)
    for u, w in zip(nodes, weights, strict=True):
        shift = u / (2.0 * c * ell)  # the node as a lag in lengthscale units
        total = total + w * math.exp(u) * correlation(name, da + shift) * correlation(
            name, db + shift
        )
    return total / (2.0 * c)


def _matern_between(
    name: str, ell: float, lo: np.ndarray, a: np.ndarray, b: np.ndarray
) -> np.ndarray:
    """``integral_{lo}^{b} k(t - a) k(b - t) dt`` for ``a <= lo <= b`` (exact Gauss-Legendre)."""
    p = int(_MATERN_NU[name] - 0.5)
    nodes, weights = _legendre(p + 1)
    half = 0.5 * (b - lo)
    mid = 0.5 * (b + lo)
    total = np.zeros(np.broadcast(lo, a, b).shape)
    for x, w in zip(nodes, weights, strict=True):
        t = mid + half * x
        total = total + w * correlation(name, (t - a) / ell) * correlation(name, (b - t) / ell)
    return half * total


def time_convolution(name: str, lengthscale: float, t_i, t_j, t0: float) -> np.ndarray:
    """Exact ``integral_{t0}^{inf} kT(|t - t_i| / l) kT(|t - t_j| / l) dt``.

    ``t_i`` and ``t_j`` broadcast against each other (e.g. ``t[:, None]`` and ``t[None, :]``).
    Any position relative to ``t0`` is allowed: observations stamped after ``t0`` (look-ahead,
    clock skew) are integrated exactly too, by splitting the line at the two points.
    """
    check_name(name)
    ell = _check_lengthscale(lengthscale)
    t0 = float(t0)
    ti = np.asarray(t_i, dtype=float)
    tj = np.asarray(t_j, dtype=float)
    if name == "rbf":
        gap = ti - tj
        return (
            0.5
            * math.sqrt(math.pi)
            * ell
            * np.exp(-(gap * gap) / (4.0 * ell * ell))
            * special.erfc((2.0 * t0 - ti - tj) / (2.0 * ell))
        )
    a, b = np.broadcast_arrays(np.minimum(ti, tj), np.maximum(ti, tj))
    # part beyond both points (and beyond t0)
    out = np.array(_matern_tail(name, ell, np.maximum(t0, b), a, b), dtype=float)
    # part between the two points that lies after t0
    lo = np.minimum(np.maximum(t0, a), b)
    between = lo < b
    if np.any(between):
        out[between] += _matern_between(name, ell, lo[between], a[between], b[between])
    # part before both points that lies after t0: integral_{t0}^{a}, by reflection t -> -t
    before = t0 < a
    if np.any(before):
        na, nb = -a[before], -b[before]
        out[before] += _matern_tail(name, ell, na, na, nb) - _matern_tail(name, ell, -t0, na, nb)
    return out
