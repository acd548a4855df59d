"""BOLT's bounds (tvbo.analysis.bounds) against independent numerical computations.

Independent references: the spectral density by numerical Fourier transform of k_T, the power
spectral distribution F_T from k_T directly (F_T(x) = (2/pi) int_0^inf k_T(tau) sin(2 pi x tau)
/ tau dtau, which never touches our S_T), E[max(0, X)] by quadrature of the Gaussian density,
and the upper bounds re-evaluated from their printed formulas by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from tvbo.analysis.bounds import (
    TEMPORAL_KERNELS,
    BoundSettings,
    TemporalKernel,
    beta_icml,
    beta_metronome,
    eps_c,
    expected_positive_part,
    metronome_constants,
    sigma_c_squared,
    space_correlation_at_diameter,
    squared_norms,
    temporal_kernel,
    upper_bound_icml,
    upper_bound_metronome,
)
from tvbo.analysis.nstar import cubic_response_time, nstar, nstar_bruteforce

KERNEL_CASES = [("matern12", 1.0), ("matern32", 1.0), ("matern52", 1.0), ("rbf", 1.0),
                ("rq", 0.7), ("rq", 1.0), ("rq", 3.0)]


def _k(name: str, alpha: float, ell: float = 1.3) -> TemporalKernel:
    return temporal_kernel(name, ell, alpha=alpha)


def _scalar(f, x: float) -> float:
    return float(np.asarray(f(np.array([x])))[0])


def _fourier(kernel: TemporalKernel, xi: float) -> float:
    """S_T(xi) = 2 int_0^inf k_T(tau) cos(2 pi xi tau) dtau by QUADPACK's Fourier integrator."""
    if xi == 0.0:
        return 2.0 * integrate.quad(lambda t: _scalar(kernel, t), 0, np.inf, limit=500)[0]
    value, _ = integrate.quad(lambda t: _scalar(kernel, t), 0, np.inf, weight="cos",
                              wvar=2 * math.pi * xi, limlst=200)
    return 2.0 * value


def _power_from_kernel(kernel: TemporalKernel, x: float) -> float:
    """F_T(x) = (2/pi) int_0^inf k_T(tau) sin(2 pi x tau) / tau dtau (no spectral density used)."""
    w = 2 * math.pi * x
    head = integrate.quad(lambda t: _scalar(kernel, t) * math.sin(w * t) / t, 0, 1.0,
                          limit=200)[0]
    tail = integrate.quad(lambda t: _scalar(kernel, t) / t, 1.0, np.inf, weight="sin", wvar=w,
                          limlst=200)[0]
    return 2.0 / math.pi * (head + tail)


@pytest.mark.parametrize(("name", "alpha"), KERNEL_CASES)
def test_spectral_density_is_the_fourier_transform_of_k(name, alpha):
    kernel = _k(name, alpha)
    for xi in (0.0, 0.05, 0.3, 0.9):
        expected = _fourier(kernel, xi)
        assert _scalar(kernel.spectral_density, xi) == pytest.approx(expected, rel=1e-6)
    total = 2 * integrate.quad(lambda z: _scalar(kernel.spectral_density, z), 0, np.inf,
                               limit=400)[0]
    assert total == pytest.approx(1.0, rel=1e-8)
    assert kernel.max_spectral_density == pytest.approx(_fourier(kernel, 0.0), rel=1e-6)


@pytest.mark.parametrize(("name", "alpha"), KERNEL_CASES)
def test_power_distribution_from_the_kernel_directly(name, alpha):
    kernel = _k(name, alpha)
    for x in (0.02, 0.2, 0.7):
        assert _scalar(kernel.power_distribution, x) == pytest.approx(
            _power_from_kernel(kernel, x), abs=1e-7
        )


@pytest.mark.parametrize(("name", "alpha"), KERNEL_CASES)
def test_power_tail_matches_the_integral_of_the_density_even_when_tiny(name, alpha):
    kernel = _k(name, alpha)
    for x in (0.0, 0.1, 1.0, 3.0):
        expected = 2 * integrate.quad(lambda z: _scalar(kernel.spectral_density, z), x, np.inf,
                                      epsabs=0, epsrel=1e-11, limit=400)[0]
        got = _scalar(kernel.power_tail, x)
        assert got == pytest.approx(expected, rel=1e-7)
        assert got + _scalar(kernel.power_distribution, x) == pytest.approx(1.0)


def test_closed_forms_of_the_spec():
    """spec_bolt.md §6.1 [EXT]: F_T for RBF and Matérn-1/2; RQ(alpha=1) is a Cauchy spectrum."""
    x = np.array([0.01, 0.1, 0.5, 2.0])
    ell = 0.7
    np.testing.assert_allclose(temporal_kernel("rbf", ell).power_distribution(x),
                               special.erf(math.sqrt(2) * math.pi * ell * x), rtol=1e-13)
    np.testing.assert_allclose(temporal_kernel("matern12", ell).power_distribution(x),
                               2 / math.pi * np.arctan(2 * math.pi * ell * x), rtol=1e-13)
    a = math.sqrt(2) * ell
    np.testing.assert_allclose(temporal_kernel("rq", ell).power_tail(x),
                               np.exp(-2 * math.pi * a * x), rtol=1e-9)
    # Matérn-3/2, derived by hand: F = (2 theta + sin 2 theta) / pi, tan theta = 2 pi x l / sqrt 3
    theta = np.arctan(2 * math.pi * x * ell / math.sqrt(3))
    np.testing.assert_allclose(temporal_kernel("matern32", ell).power_distribution(x),
                               (2 * theta + np.sin(2 * theta)) / math.pi, rtol=1e-12)


def test_far_tails_keep_their_relative_accuracy():
    """Where F_T is 1 in double precision, the tail follows its asymptotic form."""
    x = np.array([1e2, 1e3, 1e4])
    m52 = temporal_kernel("matern52", 1.0)
    # S ~ C (2 pi xi)^-6 for large xi, so 2 int_x^inf S = 2 C (2 pi)^-6 x^-5 / 5
    c = _scalar(m52.spectral_density, 0.0) * (5.0) ** 3
    asymptotic = 2 * c * (2 * math.pi) ** -6 * x**-5 / 5
    np.testing.assert_allclose(m52.power_tail(x), asymptotic, rtol=1e-3)
    assert np.all(m52.power_distribution(x[1:]) == 1.0)  # why the tail is computed directly
    rq = temporal_kernel("rq", 1.0)
    np.testing.assert_allclose(rq.power_tail(np.array([20.0])),
                               np.exp(-2 * math.pi * math.sqrt(2) * 20.0), rtol=1e-8)


def test_sinc_has_a_compact_spectrum():
    sinc = temporal_kernel("sinc", 2.0)
    assert _scalar(sinc.power_tail, 0.25) == pytest.approx(0.0)  # support |xi| <= 1/(2 l)
    assert _scalar(sinc.power_tail, 0.125) == pytest.approx(0.5)
    assert sinc.max_spectral_density == pytest.approx(2.0)


def test_expected_positive_part_against_quadrature():
    mean = -2.0
    for std in (3.0, 1.5, 0.5, 0.2, 0.11, 0.0995, 0.0):
        if std == 0.0:
            expected = 0.0
        else:
            expected = integrate.quad(lambda x, s=std: x * stats.norm.pdf(x, mean, s), 0, np.inf,
                                      epsabs=0, epsrel=1e-12)[0]
        got = float(expected_positive_part(np.array(mean), np.array(std)))
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-300)
    # continuous across the switch to the asymptotic series (z = 20)
    std = 2.0 / np.array([20.0 - 1e-9, 20.0 + 1e-9])
    left, right = expected_positive_part(np.full(2, -2.0), std)
    assert right == pytest.approx(left, rel=1e-8)
    with pytest.raises(ValueError, match="mean <= 0"):
        expected_positive_part(np.array(1.0), np.array(1.0))


def test_eps_c_by_brute_force_for_figure_1_settings():
    """[A] Fig. 1 (d = 4, L = l_S = l_T = lambda = 1): eq (4)-(5) from the kernel by quadrature."""
    kernel = temporal_kernel("matern32", 1.0)
    k_s = space_correlation_at_diameter("matern52", 1.0, 4)
    r = 2.0 * math.sqrt(5.0)  # sqrt(5) * sqrt(d) / l_S
    assert k_s == pytest.approx((1 + r + r * r / 3) * math.exp(-r))
    for c in (0.5, 1.0, 3.0, 20.0):
        s2 = 2 * (1 + k_s) * (1 - _power_from_kernel(kernel, 1 / (2 * c)))
        s = math.sqrt(s2)
        expected = integrate.quad(lambda x, s=s: x * stats.norm.pdf(x, -2.0, s), 0, np.inf,
                                  epsabs=0, epsrel=1e-11)[0]
        assert float(sigma_c_squared(np.array(c), kernel)) == pytest.approx(s2, rel=1e-6)
        assert float(eps_c(np.array(c), kernel)) == pytest.approx(expected, rel=1e-5)


def test_eps_c_limits_and_monotonicity():
    c = 1.0 / np.logspace(-3, 1.5, 60)  # slow to fast sampling
    slow_limit = expected_positive_part(
        np.array(-2.0), np.sqrt(2 * (1 + space_correlation_at_diameter("matern52", 1.0, 4)))
    )
    at_one_hz = {}
    for name in ("matern12", "matern32", "matern52", "rq", "rbf"):
        values = eps_c(c, temporal_kernel(name, 1.0))
        assert np.all(np.diff(values) <= 0), name  # eps_c increases with c
        assert values[0] == pytest.approx(float(slow_limit), rel=1e-2)  # c -> inf: F_T -> 0
        assert values[-1] < 1e-30  # fast sampling: the lower bound becomes trivial
        at_one_hz[name] = float(eps_c(np.array(1.0), temporal_kernel(name, 1.0)))
    # smoother kernels make eps_c fall faster ([A] §3.1)
    assert at_one_hz["rbf"] < at_one_hz["matern52"] < at_one_hz["matern32"] < at_one_hz["matern12"]
    # compact spectrum: eps_c = 0 as soon as the Nyquist frequency covers it (c <= l for sinc)
    sinc = temporal_kernel("sinc", 1.0)
    assert np.all(eps_c(np.array([1.0, 0.5, 0.1]), sinc) == 0.0)
    assert float(eps_c(np.array(2.0), sinc)) > 0.0


def test_bad_kernel_and_cost_inputs():
    with pytest.raises(ValueError, match="valid choices: matern12, matern32"):
        temporal_kernel("periodic")
    with pytest.raises(ValueError, match="lengthscale"):
        temporal_kernel("rbf", 0.0)
    with pytest.raises(ValueError, match="c must be > 0"):
        eps_c(np.array([1.0, 0.0]), temporal_kernel("rbf"))
    with pytest.raises(ValueError, match="valid choices"):
        space_correlation_at_diameter("cosine", 1.0, 2)
    assert set(TEMPORAL_KERNELS) >= {"matern12", "matern32", "matern52", "rbf"}


# -- upper bounds ---------------------------------------------------------------------------------
K_T = temporal_kernel("rbf", 100.0)
R_CUBIC = cubic_response_time((0.05, 0.0, 0.0, 1e-6))


def test_beta_forms():
    s = BoundSettings(d=3, lipschitz=2.0, delta=0.1)
    T = 500.0
    printed = 2 * 3 * math.log(2.0 * 3 * T**2 / (6 * 0.1)) + 4 * math.log(math.pi * T)
    assert beta_icml(T, s) == pytest.approx(printed)
    derived = 2 * math.log((2.0 * 3 * T**2) ** 3 * math.pi**2 * T**2 / (6 * 0.1))
    assert beta_icml(T, s.with_(beta_form="derived")) == pytest.approx(derived)
    # [B] eq (10) as printed, and the lemma's 2 log(tau^d pi^2 T^2 / (3 delta))
    s = BoundSettings(d=2, a=1.5, b=0.5, delta=0.05)
    lip = 0.5 * math.sqrt(math.log(2 * 1.5 * math.pi**2 * T**2 / (3 * 0.05)))
    assert beta_metronome(T, s) == pytest.approx(
        2 * 2 * math.log(lip * 2 * T**2 / (6 * 0.05)) + 4 * math.log(math.pi * T)
    )
    assert beta_metronome(T, s.with_(beta_form="derived")) == pytest.approx(
        2 * math.log((lip * 2 * T**2) ** 2 * math.pi**2 * T**2 / (3 * 0.05))
    )


def test_icml_bound_by_hand_and_its_minimiser_is_nstar():
    s = BoundSettings()
    T, n = 5000, np.arange(1, 201)
    bound = upper_bound_icml(n, T, K_T, R_CUBIC, s)
    u2 = squared_norms(K_T, R_CUBIC, n)
    lam, kappa = 1.0, space_correlation_at_diameter("matern52", 1.0, 4)
    by_hand = 2 + np.sqrt(4 * lam * beta_icml(T, s) * T * (T - lam * kappa**2 / (lam + 0.01) * u2))
    np.testing.assert_allclose(bound, by_hand, rtol=1e-13)
    n_star = nstar_bruteforce(K_T, R_CUBIC, 200)
    assert n_star == nstar(K_T, R_CUBIC) == 89
    assert int(n[np.argmin(bound)]) == n_star  # Recommendation 1 minimises eq (7)
    # eq (83) keeps T/n: its minimiser is argmax ||u_n||^2 / n instead (spec §6.2 ⚠)
    tight = upper_bound_icml(n, T, K_T, R_CUBIC, s.with_(icml_form="eq83"))
    assert np.all(tight <= bound + 1e-9)  # tighter, since T >= n
    assert int(n[np.argmin(tight)]) == int(n[np.argmax(u2 / n)])


def test_metronome_bound_by_hand_and_its_minimiser():
    s = BoundSettings(noise_var=0.05)
    n = np.arange(1, 201)
    u2 = squared_norms(K_T, R_CUBIC, n)
    consts = metronome_constants(K_T, R_CUBIC, s)
    kappa = space_correlation_at_diameter("matern52", 1.0, 4)
    lam_bar = math.sqrt(2 * math.pi) * 100.0 / 0.05  # max S_T of an RBF is sqrt(2 pi) l
    assert consts["C2"] == pytest.approx(kappa**2 / (lam_bar + 0.05))
    assert consts["C1"] == pytest.approx(8 / math.log(1 + 1 / 0.05))
    for T in (1000, 10**7):
        bound = upper_bound_metronome(n, T, K_T, R_CUBIC, s)
        inner = n / (2 * 0.05) + (T - n) * (1 - consts["C2"] * u2) / (2 * 0.05)
        by_hand = np.sqrt(T * consts["C1"] * beta_metronome(T, s) * inner) + math.pi**2 / 6
        np.testing.assert_allclose(bound, by_hand, rtol=1e-13)
        # with gamma_n <= n / (2 sigma^2) the minimiser is argmax (T - n) ||u_n||^2 ...
        assert int(n[np.argmin(bound)]) == int(n[np.argmax((T - n) * u2)])
    # ... which is Recommendation 1's n* once T >> n*
    assert int(n[np.argmin(bound)]) == 89
    printed = upper_bound_metronome(n, 1000, K_T, R_CUBIC, s.with_(gamma_form="printed"))
    assert np.all(printed > upper_bound_metronome(n, 1000, K_T, R_CUBIC, s))
    inside = upper_bound_metronome(n, 1000, K_T, R_CUBIC, s.with_(pi2_inside=True))
    assert np.all(inside < upper_bound_metronome(n, 1000, K_T, R_CUBIC, s))


def test_static_sanity_check_of_b():
    """[B]: with k_T = 1 and n = T, eq (4) is Srinivas et al.'s sqrt(T C1 beta_T gamma_T)."""

    class Constant:
        max_spectral_density = math.inf  # k_T = 1: S_T is a Dirac mass, so C_2 = 0

        def __call__(self, lag):
            return np.ones_like(np.asarray(lag, dtype=float))

    s = BoundSettings()
    T = 300
    bound = upper_bound_metronome(np.array([T]), T, Constant(), R_CUBIC, s)
    gamma = T / (2 * s.noise_var)
    expected = math.sqrt(T * 8 / math.log(1 + 1 / s.noise_var) * beta_metronome(T, s) * gamma)
    assert float(bound[0]) == pytest.approx(expected + math.pi**2 / 6)


def test_constant_response_time_makes_the_bounds_decrease_in_n():
    R = cubic_response_time((0.5,))
    n = np.arange(1, 150)
    for bound in (upper_bound_icml(n, 10_000, K_T, R), upper_bound_metronome(n, 10**6, K_T, R)):
        assert np.all(np.diff(bound) < 0)  # ||u_n||^2 increases forever: n* is infinite


def test_bounds_are_nan_beyond_T_and_reject_bad_settings():
    n = np.array([1, 50, 100, 101])
    assert np.isnan(upper_bound_icml(n, 100, K_T, R_CUBIC)).tolist() == [False] * 3 + [True]
    assert np.isnan(upper_bound_metronome(n, 100, K_T, R_CUBIC))[-1]
    with pytest.raises(ValueError, match="delta must be in"):
        BoundSettings(delta=1.5)
    with pytest.raises(ValueError, match="unknown beta_form 'verbatim'; valid choices: printed"):
        BoundSettings(beta_form="verbatim")
    with pytest.raises(ValueError, match="unknown icml_form"):
        BoundSettings().with_(icml_form="eq8")
    with pytest.raises(ValueError, match="unknown space kernel"):
        BoundSettings(space_kernel="cosine")
    with pytest.raises(ValueError, match="integers >= 1"):
        upper_bound_icml(np.array([0, 1]), 100, K_T, R_CUBIC)
    with pytest.raises(ValueError, match="T must be"):
        upper_bound_icml(np.array([1]), 0.5, K_T, R_CUBIC)
    with pytest.raises(ValueError, match="R\\(0\\) > 0"):
        metronome_constants(K_T, cubic_response_time((0.0, 1e-3)))
