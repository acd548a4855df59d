"""Garden sprinkler model: published example, hand-computed standstill, physics, optimum, runs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import tvbo
import tvbo.benchmarks as B
from tvbo.benchmarks.sprinkler import (
    COMPMODELS_EXAMPLE,
    LOWER,
    OPTIMUM_RANGE,
    OPTIMUM_Z,
    UPPER,
    search_optimum,
    simulate,
)

LO, HI = np.asarray(LOWER), np.asarray(UPPER)
#: a sprinkler that cannot turn: the jets leave radially (beta = 90 deg), no tangential thrust
STANDING = np.array([30.0, 90.0, 3e-6, 0.15, 0.015, 0.015, 1.5, 8.0])


def test_reproduces_the_compmodels_example():
    z, (consumption, spray_range, speed) = COMPMODELS_EXAMPLE
    out = simulate(np.array(z))
    assert float(out["consumption"]) == pytest.approx(consumption, abs=5e-7)
    assert float(out["range"]) == pytest.approx(spray_range, abs=5e-7)
    assert float(out["speed"]) == pytest.approx(speed, abs=5e-7)
    # the book's start of the fixed point reaches the same equilibrium within its 0.5 % tolerance
    book = simulate(np.array(z), line_loss_start="book")
    for key in ("consumption", "range", "speed"):
        assert float(book[key]) == pytest.approx(float(out[key]), rel=5e-3)
        assert float(book[key]) != float(out[key])


def test_standstill_by_hand():
    alpha, _, A, _, _, _, p_bar, d_zul = STANDING
    p = p_bar * 1e5
    c_v = 10.0 ** (5.0704 - 0.579413 * d_zul + 0.0196432 * d_zul**2) * 60000.0**2
    q = np.sqrt(p / (c_v + 1000.0 / (8.0 * A**2)))  # Bernoulli over line and two nozzles
    out = simulate(STANDING)
    assert not bool(out["rotating"]) and float(out["speed"]) == 0.0
    assert float(out["consumption"]) == pytest.approx(60000.0 * q, rel=1e-12)
    assert float(out["jet_speed"]) == pytest.approx(q / (2.0 * A), rel=1e-12)


def test_range_is_the_flight_of_a_drop_with_abraham_drag():
    """Euler (dt = 5 ms) vs an accurate integration of the same drag law: within Euler's error."""
    out = simulate(STANDING)
    v0, A, alpha = float(out["jet_speed"]), STANDING[2], np.deg2rad(STANDING[0])
    D = np.sqrt(4.0 * A / np.pi)
    mass = np.pi / 6.0 * D**3 * 1000.0
    nu = 1.82e-5 / 1.25

    def rhs(_, s):
        vh, vv = s[2], s[3]
        v = np.hypot(vh, vv)
        re = v * D / nu
        drag = 0.5 * 1.25 * v**2 * np.pi / 4.0 * D**2 * 24.0 / re * (1 + 0.11 * np.sqrt(re)) ** 2
        a = drag / mass
        return [vh, vv, -a * vh / v, -10.0 - a * vv / v]

    land = lambda _, s: s[1]  # noqa: E731
    land.terminal, land.direction = True, -1
    sol = solve_ivp(rhs, (0.0, 10.0), [0.0, 1e-3, v0 * np.cos(alpha), v0 * np.sin(alpha)],
                    events=land, rtol=1e-10, atol=1e-12)
    exact = float(sol.y_events[0][0][0])
    assert float(out["range"]) == pytest.approx(exact, abs=0.02)  # 6.601 vs 6.607 m
    assert 3.0 < exact < v0**2 * np.sin(2.0 * alpha) / 10.0  # drag shortens the vacuum range


def test_turning_sprinkler_balances_torque_and_energy():
    z = np.array(COMPMODELS_EXAMPLE[0])
    out = simulate(z)
    alpha, beta, A, d, m_t, m_f = np.deg2rad(z[0]), np.deg2rad(z[1]), *z[2:6]
    R, c = d / 2.0, np.cos(np.deg2rad(z[0])) * np.cos(np.deg2rad(z[1]))
    n = float(out["speed"])
    v_arm = 2.0 * np.pi * n * R
    v_r = float(out["consumption"]) / 60000.0 / (2.0 * A)
    v_a = float(out["jet_speed"])
    # the absolute jet speed composes the relative one and the arm's speed
    assert v_a**2 == pytest.approx(v_r**2 - 2.0 * v_r * v_arm * c + v_arm**2, rel=1e-10)
    torque = 2.0 * 1000.0 * A * v_r * R * (v_r * c - v_arm)
    assert torque == pytest.approx(m_t + n * m_f, rel=0.01)  # the fixed point's 0.5 % + one step
    assert 0.0 < alpha < np.pi / 2 and 0.0 < beta < np.pi / 2


def test_physics_monotone_in_pressure_and_line_diameter():
    Z = np.tile(STANDING, (21, 1))
    Z[:, 6] = np.linspace(1.0, 2.0, 21)  # entrance pressure
    out = simulate(Z)
    assert np.all(np.diff(out["consumption"]) > 0)
    assert np.all(np.diff(out["jet_speed"]) > 0)
    assert np.all(np.diff(out["range"]) > 0)
    Z = np.tile(STANDING, (11, 1))
    Z[:, 7] = np.linspace(5.0, 10.0, 11)  # a wider supply line loses less pressure
    assert np.all(np.diff(simulate(Z)["consumption"]) > 0)
    vertical = simulate(np.r_[90.0, STANDING[1:]])
    assert float(vertical["range"]) < 1e-9  # straight up: lands where it started


def test_domain_bounds_and_registry():
    b = B.make("sprinkler")
    assert b.name == "sprinkler" and b.d == 8 and b.noise_var == 0.0 and b.cost == 0.0
    assert b.domain()["spatial"] == [[lo, hi] for lo, hi in zip(LOWER, UPPER, strict=True)]
    assert b.domain()["time_invariant"] is True
    assert LOWER == (0.0, 0.0, 2e-6, 0.1, 0.01, 0.01, 1.0, 5.0)
    assert UPPER == (90.0, 90.0, 4e-6, 0.2, 0.02, 0.02, 2.0, 10.0)
    x = np.random.default_rng(0).random((5, 8))
    np.testing.assert_allclose(b(x, 0.0), simulate(LO + (HI - LO) * x)["range"])
    np.testing.assert_allclose(b(x, 0.0), b(x, 300.0))  # time-invariant
    np.testing.assert_allclose(b.outputs(x)["range"], b(x, 0.0))
    with pytest.raises(ValueError, match="pressure_bar"):
        simulate(np.r_[STANDING[:6], 2.5, STANDING[7]])
    with pytest.raises(ValueError, match="last dimension 8"):
        simulate(np.zeros(7))
    with pytest.raises(ValueError, match="valid: compmodels|one of compmodels, book"):
        simulate(STANDING, line_loss_start="excel")
    with pytest.raises(TypeError, match="valid options: horizon, cost, noise_var"):
        B.make("sprinkler", objective="speed")
    assert B.make("sprinkler", noise_var=0.01, horizon=50.0).noise_var == 0.01


def test_best_known_optimum_holds():
    b = B.make("sprinkler")
    x = b.argmax(17.0)
    assert b(x, 0.0) == pytest.approx(OPTIMUM_RANGE, abs=1e-12)
    assert b.f_star(123.0) == pytest.approx(OPTIMUM_RANGE, abs=1e-12)
    np.testing.assert_allclose(LO + (HI - LO) * x, OPTIMUM_Z, rtol=1e-12)
    rng = np.random.default_rng(7)
    sample = np.vstack([rng.random((6000, 8)),
                        np.clip(x + 0.01 * rng.standard_normal((1000, 8)), 0.0, 1.0),
                        np.clip(x + 1e-5 * rng.standard_normal((1000, 8)), 0.0, 1.0)])
    assert np.max(b(sample, 0.0)) <= OPTIMUM_RANGE + 1e-9


def test_search_optimum_is_reproducible_and_below_the_stored_one():
    z, f = search_optimum(seeds=(0,), popsize=2, maxiter=3, scan_points=9, rounds=1)
    assert f == pytest.approx(float(simulate(z)["range"]), abs=0.0)
    assert 0.0 < f <= OPTIMUM_RANGE
    assert search_optimum(seeds=(0,), popsize=2, maxiter=3, scan_points=9, rounds=1)[1] == f


@pytest.mark.parametrize("algorithm", ["boke", "gp-ucb"])
def test_short_runs(algorithm):
    ds = tvbo.simulate("sprinkler", algorithm, seed=0, warmup=5, max_iterations=12).squeeze()
    regret = ds["regret"].values
    assert regret.size == 12 and np.all(np.isfinite(regret)) and np.all(regret >= -1e-12)
    np.testing.assert_allclose(ds["f"].values + regret, OPTIMUM_RANGE, atol=1e-12)
    assert ds["compute_total"].values[5:].sum() > 0  # the algorithm is charged compute time
    assert np.all(np.diff(ds["t_sample"].values) >= 0)
