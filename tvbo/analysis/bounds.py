"""BOLT's regret bounds as computable functions: the lower-bound slope eps_c and two upper bounds.

Sources: ``spec_bolt.md`` §6 ([A] = the ICML paper "Optimizing Through Change", [B] = "TVBO
without a metronome"). Everything here is a *function of numbers* so that the theory figures
(:mod:`tvbo.analysis.theory_figures`) and the tests can evaluate, plot and cross-check it.

Temporal kernels and their spectra
    The lower bound needs the spectral density ``S_T`` of the temporal correlation and its
    "power spectral distribution" ``F_T(x) = 2 * int_0^x S_T(z) dz``. The Fourier convention is
    the one implied by [A] eqs (24)-(28): ordinary frequency in Hz,
    ``S_T(xi) = int_R k_T(tau) exp(-2 pi i xi tau) dtau``, so ``int_R S_T = k_T(0) = 1`` and
    ``F_T(inf) = 1``. :class:`TemporalKernel` gives ``k_T``, ``S_T``, ``F_T`` and the tail
    ``1 - F_T`` in closed form (Matérn: a regularised incomplete beta function; RBF: ``erfc``;
    sinc: a ramp) or by one well-scaled quadrature (rational quadratic, whose spectrum is a
    Bessel-K function). The tail is computed *directly*, never as ``1 - F_T``: at high sampling
    frequencies ``F_T`` is 1 to double precision while ``1 - F_T`` (and hence ``sigma_c``) still
    spans hundreds of orders of magnitude.

Lower bound ([A] Thm 3.6, eqs (4)-(5))
    ``eps_c = sigma_c phi(-L sqrt(d)/sigma_c) - L sqrt(d) Phi(-L sqrt(d)/sigma_c)`` with
    ``sigma_c^2 = 2 lambda (1 + k_S(sqrt(d))) (1 - F_T(1/(2c)))``. ``eps_c = E[max(0, X)]`` for
    ``X ~ N(-L sqrt(d), sigma_c^2)``; it is evaluated with ``erfcx`` so that the difference of
    two nearly equal terms does not cancel (:func:`expected_positive_part`). The spatial
    correlation used for ``k_S(sqrt(d))`` is not given by the paper (spec §6.1 ⚠); it is a
    parameter here, Matérn-5/2 by default (the papers' spatial kernel in every experiment).

Upper bounds ([A] Thm 3.8 eq (7), [B] Thm 3.6 eq (4))
    Both depend on the maximal dataset size ``n`` only through ``||u_n||^2`` (and, in [B],
    through ``gamma_n`` and ``T - n``). The choices the spec flags are explicit fields of
    :class:`BoundSettings`:

    * ``beta_form``: ``"printed"`` evaluates eq (63) [A] / eq (10) [B] verbatim; ``"derived"``
      re-derives ``beta_T`` from the lemma's own definitions (``delta`` outside the ``2d``
      factor), see :func:`beta_icml` and :func:`beta_metronome`;
    * ``icml_form``: ``"eq7"`` is the theorem as stated; ``"eq83"`` keeps the factor ``T/n`` the
      proof drops between (83) and (7), a tighter bound whose minimiser is
      ``argmax ||u_n||^2 / n`` instead of Recommendation 1's ``argmax ||u_n||^2``;
    * ``gamma_form``: ``"lemma_a4"`` bounds ``gamma_n`` by ``n / (2 sigma_0^2)`` (the 1/2 the
      proof of [B] Lemma A.2 carries), ``"printed"`` by ``n / sigma_0^2`` (Lemma A.2's printed
      definition, which omits the 1/2);
    * ``pi2_inside``: [B] eq (4) puts ``pi^2/6`` outside the square root, display (30) inside.

    Both proofs assume the retained observations are the ``n`` most recent ones at lags
    ``R(n), ..., n R(n)`` and ``T >= n``; the bound functions return NaN for ``n > T``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from scipy import integrate, special

from tvbo.algorithms.bolt.nstar import ResponseTime, squared_norm_u
from tvbo.gp.convolutions import SUPPORTED as SPACE_KERNELS
from tvbo.gp.convolutions import correlation

#: temporal correlations with a spectral density here. The first four are the GP kernels of
#: tvbo; ``rq`` (rational quadratic, [A] Fig. 2) and ``sinc`` (compact spectrum, [A] §3.1's
#: remark that such a kernel makes the lower bound trivial) exist for the theory only.
TEMPORAL_KERNELS: tuple[str, ...] = ("matern12", "matern32", "matern52", "rbf", "rq", "sinc")
#: Matérn smoothness per name
_MATERN_NU: dict[str, float] = {"matern12": 0.5, "matern32": 1.5, "matern52": 2.5}

BetaForm = Literal["printed", "derived"]
IcmlForm = Literal["eq7", "eq83"]
GammaForm = Literal["lemma_a4", "printed"]
BETA_FORMS: tuple[str, ...] = ("printed", "derived")
ICML_FORMS: tuple[str, ...] = ("eq7", "eq83")
GAMMA_FORMS: tuple[str, ...] = ("lemma_a4", "printed")


def _positive(name: str, value: float) -> float:
    value = float(value)
    if not (value > 0.0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return value


def _choice(name: str, value: str, valid: Sequence[str]) -> str:
    if value not in valid:
        raise ValueError(f"unknown {name} {value!r}; valid choices: {', '.join(valid)}")
    return value


# ---------------------------------------------------------------------------------------------
# temporal kernels: correlation, spectral density, power spectral distribution
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TemporalKernel:
    """A stationary temporal correlation ``k_T(tau)`` and its spectrum (lags in s, frequency in Hz).

    ``alpha`` is the shape of the rational quadratic
    ``k(tau) = (1 + tau^2 / (2 alpha l^2))^-alpha`` and is ignored by the other kernels.
    """

    name: str
    lengthscale: float = 1.0
    alpha: float = 1.0

    def __post_init__(self) -> None:
        _choice("temporal kernel", self.name, TEMPORAL_KERNELS)
        _positive("lengthscale", self.lengthscale)
        _positive("alpha", self.alpha)

    @property
    def label(self) -> str:
        """A short name for legends (``RQ(alpha=1)``, ``Matérn-3/2``, ...)."""
        labels = {"matern12": "Matérn-1/2", "matern32": "Matérn-3/2", "matern52": "Matérn-5/2",
                  "rbf": "RBF", "sinc": "sinc"}
        return labels.get(self.name, f"RQ (α={self.alpha:g})")

    # -- k_T ---------------------------------------------------------------------------------
    def __call__(self, lag: np.ndarray) -> np.ndarray:
        """``k_T(|lag|)``; usable directly as the ``k_T`` of :mod:`tvbo.algorithms.bolt.nstar`."""
        r = np.abs(np.asarray(lag, dtype=float)) / self.lengthscale
        if self.name in SPACE_KERNELS:
            return correlation(self.name, r)
        if self.name == "rq":
            return (1.0 + r * r / (2.0 * self.alpha)) ** (-self.alpha)
        return np.sinc(r)

    # -- S_T ---------------------------------------------------------------------------------
    def spectral_density(self, xi: np.ndarray) -> np.ndarray:
        """``S_T(xi)`` (units: seconds), ``xi`` in Hz; integrates to 1 over the real line."""
        xi = np.abs(np.asarray(xi, dtype=float))
        ell = self.lengthscale
        if self.name in _MATERN_NU:
            nu = _MATERN_NU[self.name]
            log_c = (
                math.log(2.0 * math.sqrt(math.pi))
                + math.lgamma(nu + 0.5)
                + nu * math.log(2.0 * nu)
                - math.lgamma(nu)
                - 2.0 * nu * math.log(ell)
            )
            return np.exp(log_c) * (2.0 * nu / ell**2 + (2.0 * math.pi * xi) ** 2) ** (-nu - 0.5)
        if self.name == "rbf":
            return math.sqrt(2.0 * math.pi) * ell * np.exp(-2.0 * (math.pi * ell * xi) ** 2)
        if self.name == "sinc":
            return np.where(xi <= 0.5 / ell, ell, 0.0)
        scale = math.sqrt(2.0 * self.alpha) * ell  # k(tau) = h(tau / scale), h(x) = (1+x^2)^-a
        return scale * _rq_unit_density(self.alpha, scale * xi)

    @property
    def max_spectral_density(self) -> float:
        """``max S_T = S_T(0) = int_R k_T`` (infinite for a rational quadratic, alpha <= 1/2)."""
        if self.name == "rq" and self.alpha <= 0.5:
            return math.inf
        if self.name == "rq":
            scale = math.sqrt(2.0 * self.alpha) * self.lengthscale
            return scale * math.sqrt(math.pi) * math.exp(
                math.lgamma(self.alpha - 0.5) - math.lgamma(self.alpha)
            )
        return float(self.spectral_density(np.array([0.0]))[0])

    # -- F_T and its tail --------------------------------------------------------------------
    def power_tail(self, x: np.ndarray) -> np.ndarray:
        """``1 - F_T(x) = 2 int_x^inf S_T``, computed without cancellation (``x >= 0`` in Hz)."""
        x = np.asarray(x, dtype=float)
        if np.any(x < 0) or np.any(np.isnan(x)):
            raise ValueError("power_tail needs frequencies x >= 0")
        ell = self.lengthscale
        if self.name in _MATERN_NU:
            # w = 2 pi xi = a tan(theta): the tail is int_0^phi sin^(2 nu - 1), an incomplete beta
            nu = _MATERN_NU[self.name]
            a2 = 2.0 * nu / ell**2
            w2 = (2.0 * math.pi * x) ** 2
            with np.errstate(divide="ignore", invalid="ignore"):
                s = np.where(np.isinf(w2), 0.0, a2 / (a2 + w2))
            return special.betainc(nu, 0.5, s)
        if self.name == "rbf":
            return special.erfc(math.sqrt(2.0) * math.pi * ell * x)
        if self.name == "sinc":
            return np.clip(1.0 - 2.0 * ell * x, 0.0, 1.0)
        scale = math.sqrt(2.0 * self.alpha) * ell
        flat = np.array([_rq_unit_tail(self.alpha, v) for v in (scale * x).ravel()])
        return flat.reshape(x.shape)

    def power_distribution(self, x: np.ndarray) -> np.ndarray:
        """``F_T(x) = 2 int_0^x S_T(z) dz``, the fraction of the power below ``x`` Hz."""
        return 1.0 - self.power_tail(x)


def _rq_unit_density(alpha: float, eta: np.ndarray) -> np.ndarray:
    """Fourier transform of ``(1 + x^2)^-a``.

    ``2 pi^a / Gamma(a) |eta|^(a-1/2) K_(a-1/2)(2 pi |eta|)``, in log space via ``kve``.
    """
    eta = np.abs(np.asarray(eta, dtype=float))
    order = alpha - 0.5
    log_c = math.log(2.0) + alpha * math.log(math.pi) - math.lgamma(alpha)
    out = np.empty_like(eta)
    zero = eta == 0.0
    if np.any(zero):
        out[zero] = (
            math.sqrt(math.pi) * math.exp(math.lgamma(order) - math.lgamma(alpha))
            if order > 0
            else math.inf
        )
    z = 2.0 * math.pi * eta[~zero]
    out[~zero] = np.exp(log_c + order * np.log(eta[~zero]) + np.log(special.kve(order, z)) - z)
    return out


def _rq_unit_tail(alpha: float, eta0: float) -> float:
    """``2 int_eta0^inf`` of :func:`_rq_unit_density`, with ``exp(-2 pi eta0)`` factored out.

    The substitution ``eta = eta0 + s`` leaves a well-scaled integrand (``kve`` carries the
    exponential), so the relative accuracy holds even where the tail itself is 1e-200.
    """
    if eta0 == 0.0:
        return 1.0
    if math.isinf(eta0):
        return 0.0
    order = alpha - 0.5
    log_c = math.log(2.0) + alpha * math.log(math.pi) - math.lgamma(alpha)

    def scaled(s: float) -> float:
        eta = eta0 + s
        return math.exp(log_c + order * math.log(eta) - 2.0 * math.pi * s) * float(
            special.kve(order, 2.0 * math.pi * eta)
        )

    value, _ = integrate.quad(scaled, 0.0, math.inf, epsabs=0.0, epsrel=1e-11, limit=200)
    return 2.0 * value * math.exp(-2.0 * math.pi * eta0)


def temporal_kernel(name: str, lengthscale: float = 1.0, *, alpha: float = 1.0) -> TemporalKernel:
    """The :class:`TemporalKernel` ``name`` (one of :data:`TEMPORAL_KERNELS`)."""
    return TemporalKernel(name, float(lengthscale), float(alpha))


def space_correlation_at_diameter(name: str, lengthscale: float, d: int) -> float:
    """``k_S(sqrt(d))``: the spatial correlation across the diameter of ``[0,1]^d``.

    For a decreasing isotropic ``k_S`` this is also ``min_{x,x'} k_S(x, x')`` ([B]'s kappa).
    """
    if name not in SPACE_KERNELS:
        raise ValueError(
            f"unknown space kernel {name!r}; valid choices: {', '.join(SPACE_KERNELS)}"
        )
    if int(d) != d or d < 1:
        raise ValueError(f"spatial dimension d must be a positive integer, got {d!r}")
    ell = _positive("space lengthscale", lengthscale)
    return float(correlation(name, np.array([math.sqrt(d) / ell]))[0])


# ---------------------------------------------------------------------------------------------
# lower bound
# ---------------------------------------------------------------------------------------------
def expected_positive_part(mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """``E[max(0, X)]`` for ``X ~ N(mean, std^2)``, ``mean <= 0``, without cancellation.

    ``E = std phi(z) - |mean| Phi(-z)`` with ``z = |mean|/std``; the two terms agree to
    ``~1/z^2`` relative precision, so it is written as
    ``std exp(-z^2/2) (1/sqrt(2 pi) - z/2 erfcx(z/sqrt 2))`` and the bracket, for ``z > 20``,
    replaced by its asymptotic series ``(1/sqrt(2 pi)) (1/z^2 - 3/z^4 + 15/z^6 - ...)``.
    ``std == 0`` gives 0 (a point mass at ``mean <= 0``).
    """
    mean, std = np.broadcast_arrays(np.asarray(mean, dtype=float), np.asarray(std, dtype=float))
    if np.any(mean > 0) or np.any(std < 0):
        raise ValueError("expected_positive_part needs mean <= 0 and std >= 0")
    out = np.zeros(mean.shape)
    pos = std > 0
    z = np.abs(mean[pos]) / std[pos]
    bracket = np.empty_like(z)
    small = z <= 20.0
    zs = z[small]
    bracket[small] = 1.0 / math.sqrt(2.0 * math.pi) - 0.5 * zs * special.erfcx(zs / math.sqrt(2.0))
    zl = z[~small]
    inv = 1.0 / (zl * zl)
    # sum_k (-1)^(k+1) (2k-1)!! z^(-2k), k = 1..12: the first omitted term is < 1e-18 relative
    # (below z = 20 the direct form loses at most log10(z^2) < 2.7 digits)
    series, term = np.zeros_like(zl), np.ones_like(zl)
    for k in range(1, 13):
        term = term * inv * (1.0 if k == 1 else (2 * k - 1))
        series += term if k % 2 else -term
    bracket[~small] = series / math.sqrt(2.0 * math.pi)
    with np.errstate(under="ignore"):
        out[pos] = std[pos] * np.exp(-0.5 * z * z) * np.maximum(bracket, 0.0)
    return out


def sigma_c_squared(
    c: np.ndarray,
    kernel: TemporalKernel,
    *,
    d: int = 4,
    signal_var: float = 1.0,
    space_kernel: str = "matern52",
    space_lengthscale: float = 1.0,
) -> np.ndarray:
    """[A] eq (5): ``2 lambda (1 + k_S(sqrt d)) (1 - F_T(1 / 2c))`` for evaluation costs ``c``."""
    c = np.asarray(c, dtype=float)
    if np.any(~(c > 0)):
        raise ValueError("evaluation costs c must be > 0 seconds")
    lam = _positive("signal_var", signal_var)
    k_diam = space_correlation_at_diameter(space_kernel, space_lengthscale, d)
    return 2.0 * lam * (1.0 + k_diam) * kernel.power_tail(0.5 / c)


def eps_c(
    c: np.ndarray,
    kernel: TemporalKernel,
    *,
    d: int = 4,
    lipschitz: float = 1.0,
    signal_var: float = 1.0,
    space_kernel: str = "matern52",
    space_lengthscale: float = 1.0,
) -> np.ndarray:
    """[A] Thm 3.6: the slope of the algorithm-independent lower bound ``E[R_T] in Omega(eps_c T)``.

    ``c`` is the evaluation cost (s), i.e. ``1/c`` is the sampling frequency. [A] Fig. 1 uses
    ``d = 4`` and ``L = l_S = l_T = lambda = 1`` (the defaults, with ``l_T`` in ``kernel``).
    """
    lip = _positive("lipschitz", lipschitz)
    s2 = sigma_c_squared(
        c, kernel, d=d, signal_var=signal_var, space_kernel=space_kernel,
        space_lengthscale=space_lengthscale,
    )
    mean = np.full(np.shape(s2), -lip * math.sqrt(d))
    return expected_positive_part(mean, np.sqrt(s2))


# ---------------------------------------------------------------------------------------------
# upper bounds
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BoundSettings:
    """Constants of the upper bounds; every choice the spec flags is a field (see module doc).

    ``lipschitz`` is [A]'s ``L`` (Assumption 3.4 [A]); ``a``, ``b`` are [B]'s derivative-tail
    constants (Assumption 3.4 [B]). ``signal_var`` is [A]'s ``lambda`` ([B] fixes it to 1; it
    is used by [B] only through ``kappa``, which is a correlation).
    """

    d: int = 4
    signal_var: float = 1.0
    noise_var: float = 0.01
    delta: float = 0.05
    lipschitz: float = 1.0
    a: float = 1.0
    b: float = 1.0
    space_kernel: str = "matern52"
    space_lengthscale: float = 1.0
    beta_form: BetaForm = "printed"
    icml_form: IcmlForm = "eq7"
    gamma_form: GammaForm = "lemma_a4"
    pi2_inside: bool = False

    def __post_init__(self) -> None:
        if int(self.d) != self.d or self.d < 1:
            raise ValueError(f"d must be a positive integer, got {self.d!r}")
        for name in ("signal_var", "noise_var", "lipschitz", "a", "b", "space_lengthscale"):
            _positive(name, getattr(self, name))
        if not 0.0 < self.delta < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {self.delta!r}")
        _choice("beta_form", self.beta_form, BETA_FORMS)
        _choice("icml_form", self.icml_form, ICML_FORMS)
        _choice("gamma_form", self.gamma_form, GAMMA_FORMS)
        space_correlation_at_diameter(self.space_kernel, self.space_lengthscale, self.d)

    def with_(self, **changes: object) -> BoundSettings:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    @property
    def kappa(self) -> float:
        """``k_S(sqrt d)``: [A]'s ``k_S(sqrt d)`` and [B]'s ``min k_S``."""
        return space_correlation_at_diameter(self.space_kernel, self.space_lengthscale, self.d)


def _iterations(T: float) -> float:
    T = float(T)
    if not (T >= 1 and math.isfinite(T)):
        raise ValueError(f"the number of iterations T must be a finite number >= 1, got {T!r}")
    return T


def beta_icml(T: float, settings: BoundSettings) -> float:
    """[A] ``beta_T``. ``printed``: eq (63), ``2d log(L d T^2 / (6 delta)) + 4 log(pi T)``.

    ``derived``: Lemma D.1's ``2 log(tau^d pi^2 T^2 / (6 delta))`` with ``tau = L d T^2``, i.e.
    ``2d log(L d T^2) + 4 log(pi T) - 2 log(6 delta)`` (spec §6.2 ⚠: eq (63) puts ``6 delta``
    inside the ``2d`` factor).
    """
    T, s = _iterations(T), settings
    if s.beta_form == "printed":
        return 2 * s.d * math.log(s.lipschitz * s.d * T**2 / (6 * s.delta)) + 4 * math.log(
            math.pi * T
        )
    return (
        2 * s.d * math.log(s.lipschitz * s.d * T**2)
        + 4 * math.log(math.pi * T)
        - 2 * math.log(6 * s.delta)
    )


def beta_metronome(T: float, settings: BoundSettings) -> float:
    """[B] ``beta_T``. ``printed``: eq (10),
    ``2d log(b d T^2 sqrt(log(d a pi^2 T^2 / (3 delta))) / (6 delta)) + 4 log(pi T)``.

    ``derived``: Lemma A.1's ``2 log(tau^d pi^2 T^2 / (3 delta))`` with ``tau = L_T d T^2`` and
    the Srinivas-style ``L_T = b sqrt(log(d a pi^2 T^2 / (3 delta)))`` that the printed form
    implies, i.e. ``2d log(L_T d T^2) + 4 log(pi T) - 2 log(3 delta)``.
    """
    T, s = _iterations(T), settings
    inner = math.log(s.d * s.a * math.pi**2 * T**2 / (3 * s.delta))
    if inner <= 0:
        raise ValueError(
            f"beta (eq (10) [B]) needs d a pi^2 T^2 / (3 delta) > 1, got log = {inner:g}"
        )
    lip = s.b * math.sqrt(inner)
    if s.beta_form == "printed":
        return 2 * s.d * math.log(lip * s.d * T**2 / (6 * s.delta)) + 4 * math.log(math.pi * T)
    return 2 * s.d * math.log(lip * s.d * T**2) + 4 * math.log(math.pi * T) - 2 * math.log(
        3 * s.delta
    )


def squared_norms(k_T: Callable[[np.ndarray], np.ndarray], R: ResponseTime,
                  n_values: Sequence[int] | np.ndarray) -> np.ndarray:
    """``||u_n||^2`` for every ``n`` of ``n_values`` (see :mod:`tvbo.algorithms.bolt.nstar`)."""
    return np.array([squared_norm_u(k_T, R, int(n)) for n in np.asarray(n_values).ravel()])


def _sizes(n_values: Sequence[int] | np.ndarray) -> np.ndarray:
    n = np.asarray(n_values)
    if n.ndim != 1 or n.size == 0 or np.any(n < 1) or np.any(n != np.round(n)):
        raise ValueError(f"dataset sizes n must be a non-empty 1-d array of integers >= 1, got {n}")
    return n.astype(int)


def upper_bound_icml(
    n_values: Sequence[int] | np.ndarray,
    T: float,
    k_T: Callable[[np.ndarray], np.ndarray],
    R: ResponseTime,
    settings: BoundSettings | None = None,
) -> np.ndarray:
    """[A] Thm 3.8: high-probability bound on the cumulative regret ``R_T`` per max size ``n``.

    ``eq7``:  ``2 + sqrt(4 lambda beta_T T (T - C ||u_n||^2))``;
    ``eq83``: ``2 + sqrt(4 lambda beta_T T^2 (1 - C ||u_n||^2 / n))``,
    with ``C = lambda k_S^2(sqrt d) / (lambda + sigma_0^2)``. NaN where ``n > T``.
    """
    n, T, s = _sizes(n_values), _iterations(T), settings or BoundSettings()
    u2 = squared_norms(k_T, R, n)
    const = s.signal_var * s.kappa**2 / (s.signal_var + s.noise_var)
    beta = beta_icml(T, s)
    if s.icml_form == "eq7":
        inside = T * (T - const * u2)
    else:
        inside = T * T * (1.0 - const * u2 / n)
    bound = 2.0 + np.sqrt(4.0 * s.signal_var * beta * np.maximum(inside, 0.0))
    return np.where(n <= T, bound, np.nan)


def metronome_constants(
    kernel: TemporalKernel, R: ResponseTime, settings: BoundSettings = BoundSettings()
) -> dict[str, float]:
    """[B]'s ``C_1 = 8 / log(1 + sigma_0^-2)`` and ``C_2 = kappa^2 / (lambda_bar + sigma_0^2)``.

    ``lambda_bar = max S_T / R(0)`` (Lemma A.3 [B]); ``max S_T`` is in the Hz convention of
    this module (seconds), so ``lambda_bar`` is dimensionless. ``R(0)`` must be > 0.
    """
    s = settings or BoundSettings()
    r0 = float(R(0))
    if not (r0 > 0 and math.isfinite(r0)):
        raise ValueError(f"[B]'s C_2 needs R(0) > 0 (Definition 3.5), got R(0) = {r0!r}")
    lam_bar = kernel.max_spectral_density / r0
    return {
        "C1": 8.0 / math.log(1.0 + 1.0 / s.noise_var),
        "C2": s.kappa**2 / (lam_bar + s.noise_var),
        "lambda_bar": lam_bar,
        "kappa": s.kappa,
    }


def upper_bound_metronome(
    n_values: Sequence[int] | np.ndarray,
    T: float,
    kernel: TemporalKernel,
    R: ResponseTime,
    settings: BoundSettings | None = None,
) -> np.ndarray:
    """[B] Thm 3.6 eq (4), a high-probability bound on ``R_T`` per maximal dataset size ``n``.

    ``sqrt(T C_1 beta_T (gamma_n + (T - n)(1 - C_2 ||u_n||^2) / (2 sigma_0^2))) + pi^2/6``.

    ``gamma_n`` is replaced by its bound (``gamma_form``), so with ``lemma_a4`` the inner term
    is ``(T - (T - n) C_2 ||u_n||^2) / (2 sigma_0^2)``: at finite ``T`` its minimiser is
    ``argmax (T - n) ||u_n||^2``, which tends to Recommendation 1's n* as ``T -> inf``.
    NaN where ``n > T``.
    """
    n, T, s = _sizes(n_values), _iterations(T), settings or BoundSettings()
    u2 = squared_norms(kernel, R, n)
    consts = metronome_constants(kernel, R, s)
    gamma = n / (2.0 * s.noise_var) if s.gamma_form == "lemma_a4" else n / s.noise_var
    inner = gamma + (T - n) * (1.0 - consts["C2"] * u2) / (2.0 * s.noise_var)
    radicand = T * consts["C1"] * beta_metronome(T, s) * np.maximum(inner, 0.0)
    pi2 = math.pi**2 / 6.0
    bound = np.sqrt(radicand + pi2) if s.pi2_inside else np.sqrt(radicand) + pi2
    return np.where(n <= T, bound, np.nan)


__all__ = [
    "BETA_FORMS",
    "GAMMA_FORMS",
    "ICML_FORMS",
    "TEMPORAL_KERNELS",
    "BoundSettings",
    "TemporalKernel",
    "beta_icml",
    "beta_metronome",
    "eps_c",
    "expected_positive_part",
    "metronome_constants",
    "sigma_c_squared",
    "space_correlation_at_diameter",
    "squared_norms",
    "temporal_kernel",
    "upper_bound_icml",
    "upper_bound_metronome",
]
