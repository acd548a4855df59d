"""The BOKE paper's static benchmarks: published values, known optima, time invariance, options."""

from __future__ import annotations

import numpy as np
import pytest

import tvbo.benchmarks as B
from tvbo.benchmarks.static import STATIC

NAMES = sorted(STATIC)


def test_all_registered():
    assert set(NAMES) == {
        "forrester",
        "goldstein-price",
        "six-hump-camel",
        "hartmann3-static",
        "rosenbrock4",
        "sphere6",
    }
    assert set(NAMES) <= set(B.names())
    assert B.make("Goldstein_Price").name == "goldstein-price"


@pytest.mark.parametrize(
    ("name", "z", "value"),
    [
        # hand-computed values of the classical definitions at simple points
        ("forrester", [0.0], 4.0 * np.sin(-4.0)),
        ("goldstein-price", [0.0, 0.0], (1 + 19) * (30 + 0)),
        ("six-hump-camel", [1.0, 1.0], (4 - 2.1 + 1 / 3) + 1 + 0),
        ("rosenbrock4", [0.0] * 4, 3.0),
        ("sphere6", [1.0, 2.0, 0.0, 0.0, 0.0, -1.0], 6.0),
        (
            "hartmann3-static",
            [0.0, 0.0, 0.0],
            -sum(
                a * np.exp(-np.sum(np.array(A) * np.array(P) ** 2))
                for a, A, P in zip(
                    [1.0, 1.2, 3.0, 3.2],
                    [[3, 10, 30], [0.1, 10, 35], [3, 10, 30], [0.1, 10, 35]],
                    [
                        [0.3689, 0.1170, 0.2673],
                        [0.4699, 0.4387, 0.7470],
                        [0.1091, 0.8732, 0.5547],
                        [0.0381, 0.5743, 0.8828],
                    ],
                    strict=True,
                )
            ),
        ),
    ],
)
def test_raw_matches_hand_computed_values(name, z, value):
    assert B.make(name).raw(np.array(z)) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_known_optimum_is_hit_and_not_beaten(name):
    b = B.make(name)
    cls = STATIC[name]
    f_star = b.f_star(123.0)
    assert f_star == pytest.approx(-cls.min_raw, rel=1e-6, abs=1e-9)
    x = b.argmax(7.0)
    assert b(x, 0.0) == pytest.approx(f_star, rel=1e-12, abs=1e-12)
    # a dense random sample never beats the optimum
    pts = np.random.default_rng(0).random((20000, b.d))
    assert np.max(b(pts, 0.0)) <= f_star + 1e-9
    # the optimum is a local maximum: small moves inside the box do not improve it
    rng = np.random.default_rng(1)
    moves = np.clip(x + 1e-4 * rng.standard_normal((200, b.d)), 0.0, 1.0)
    assert np.max(b(moves, 0.0)) <= f_star + 1e-9


def test_six_hump_camel_has_its_two_symmetric_minima():
    b = B.make("six-hump-camel")
    assert b.raw(np.array([-0.08984201368, 0.7126564032])) == pytest.approx(-1.0316284535, abs=1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_time_invariant_and_defaults(name):
    b = B.make(name)
    x = np.random.default_rng(2).random((5, b.d))
    np.testing.assert_array_equal(b(x, 0.0), b(x, b.horizon))
    assert (b.cost, b.noise_var, b.horizon) == (0.0, 0.0, 600.0)
    assert b.describe()["domain"]["time_invariant"] is True


def test_noisy_variant_and_options():
    b = B.make("sphere6", noise_var=0.04, cost=0.1, horizon=100.0, cost_table="metronome")
    x = np.full(6, 0.3)
    ys = np.array([b.sample(x, 1.0, np.random.default_rng(s)) for s in range(2000)])
    assert ys.std() == pytest.approx(0.2, rel=0.1)
    assert ys.mean() == pytest.approx(b(x, 1.0), abs=0.02)
    with pytest.raises(TypeError, match="valid options"):
        B.make("forrester", wiggle=1)
    with pytest.raises(ValueError, match="noise_var"):
        B.make("forrester", noise_var=-1.0)
