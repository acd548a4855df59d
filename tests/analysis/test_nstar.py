"""Recommendation 1 (n*): the direct search against brute force and the spec's sanity values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tvbo.analysis.nstar import (
    cubic_response_time,
    nstar,
    nstar_bruteforce,
    squared_norm_u,
    temporal_correlation,
)


@pytest.mark.parametrize(
    ("coeffs", "expected"),
    [
        ((0.05, 0.0, 0.0, 1e-6), {"matern12": 72, "matern32": 82, "rbf": 89}),
        ((0.1, 0.0, 0.0, 1e-7), {"matern12": 126, "matern32": 142, "rbf": 154}),
    ],
)
def test_spec_sanity_values(coeffs, expected):
    """spec_bolt.md §3.2 [EXT]: l_T = 100 s."""
    R = cubic_response_time(coeffs)
    for name, n_star in expected.items():
        k_T = temporal_correlation(name, 100.0)
        assert nstar(k_T, R) == n_star
        assert nstar(k_T, R, n0=400) == n_star
        assert nstar_bruteforce(k_T, R, 300) == n_star


RESPONSES = {
    "cubic": (0.2, 0.0, 0.0, 3e-6),
    "quadratic": (0.5, 0.01, 2e-4),
    "linear": (0.05, 0.02),
}


@pytest.mark.parametrize("name", ["matern12", "matern32", "matern52", "rbf"])
@pytest.mark.parametrize("growth", sorted(RESPONSES))
@pytest.mark.parametrize("ell", [10.0, 60.0])
def test_direct_search_equals_brute_force_from_any_start(name, growth, ell):
    k_T = temporal_correlation(name, ell)
    R = cubic_response_time(RESPONSES[growth])
    best = nstar_bruteforce(k_T, R, 400)
    assert 1 < best < 400  # an interior maximum, so the comparison is meaningful
    for n0 in (1, 2, best - 1, best, best + 1, 3 * best, 399):
        assert nstar(k_T, R, n0=n0, n_max=400) == best, n0


def test_squared_norm_matches_the_definition():
    k_T = temporal_correlation("matern32", 30.0)
    R = cubic_response_time((0.3, 0.01))
    n = 17
    r = 0.3 + 0.01 * n
    by_hand = sum(
        ((1 + math.sqrt(3) * i * r / 30) * math.exp(-math.sqrt(3) * i * r / 30)) ** 2
        for i in range(1, n + 1)
    )
    assert squared_norm_u(k_T, R, n) == pytest.approx(by_hand, rel=1e-13)


def test_bounded_response_time_returns_the_cap():
    k_T = temporal_correlation("matern12", 100.0)
    constant = cubic_response_time((0.05,))
    assert nstar(k_T, constant, n_max=1500) == 1500
    assert nstar(k_T, constant, n0=700, n_max=1500) == 1500
    assert nstar_bruteforce(k_T, constant, 300) == 300
    # constant R: each step is O(1), so the default cap of 100 000 is reachable quickly
    assert nstar(k_T, constant) == 100_000
    # bounded but increasing R whose Delta u stays positive
    saturating = lambda n: 0.05 + 0.01 * n / (n + 1)  # noqa: E731
    assert nstar(k_T, saturating, n_max=800) == nstar_bruteforce(k_T, saturating, 800) == 800


def test_underflowed_flat_top_stops_at_its_first_size():
    """RBF, constant R: k_T(i R)^2 underflows beyond ~27 lengthscales, so Delta u becomes 0."""
    k_T = temporal_correlation("rbf", 1.0)
    R = cubic_response_time((0.5,))
    n_flat = nstar(k_T, R, n_max=1000)
    assert 40 < n_flat < 1000
    # the first added term that underflows: Delta u(n_flat) = k_T((n_flat + 1) R)^2 == 0
    assert k_T(np.array([(n_flat + 1) * 0.5]))[0] ** 2 == 0.0
    assert k_T(np.array([n_flat * 0.5]))[0] ** 2 > 0.0
    assert nstar(k_T, R, n0=900, n_max=1000) == n_flat


def test_ties_return_the_smaller_size():
    """k_T = 1 below 10 s and 0 beyond; R = 3 s up to n = 4, then 4 s: ||u||^2 = 1, 2, 3, 3, 2."""

    def k_T(lag):
        return (np.asarray(lag) < 10.0).astype(float)

    def R(n):
        return 3.0 if n <= 4 else 4.0

    assert [squared_norm_u(k_T, R, n) for n in range(1, 6)] == [1, 2, 3, 3, 2]
    assert nstar_bruteforce(k_T, R, 5) == 3
    for n0 in (1, 2, 3, 4):
        assert nstar(k_T, R, n0=n0, n_max=5) == 3


def test_increasing_response_time_everywhere_gives_one():
    k_T = temporal_correlation("rbf", 1.0)
    R = cubic_response_time((0.0, 2.0))  # R(n) = 2n: the second point is already uncorrelated
    assert nstar(k_T, R, n0=50, n_max=100) == nstar_bruteforce(k_T, R, 100) == 1


def test_invalid_inputs():
    k_T = temporal_correlation("matern52", 10.0)
    R = cubic_response_time((0.1, 0.0, 0.0, 1e-6))
    with pytest.raises(ValueError, match="n0 must be an integer >= 1"):
        nstar(k_T, R, n0=0)
    with pytest.raises(ValueError, match="n_max must be an integer >= n0=5"):
        nstar(k_T, R, n0=5, n_max=4)
    with pytest.raises(ValueError, match=r"R\(1\) = -1.0"):
        nstar(k_T, cubic_response_time((-1.0,)))
    with pytest.raises(ValueError, match="1 to 4 finite numbers"):
        cubic_response_time((1, 2, 3, 4, 5))
    with pytest.raises(ValueError, match="valid choices"):
        temporal_correlation("exponential", 1.0)
    with pytest.raises(ValueError, match="lengthscale"):
        temporal_correlation("rbf", 0.0)
