"""Benchmarks: registry, option validation, tables, published optima, time mapping, noise."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from tvbo import benchmarks as B
from tvbo.benchmarks.base import Benchmark

NAMES = [
    "ackley",
    "eggholder",
    "griewank",
    "hartmann3",
    "hartmann6",
    "powell",
    "schwefel",
    "shekel",
]

#: name -> (d, original box of every coordinate), from spec_bolt.md §8.3 (independent of the code)
BOXES = {
    "shekel": (3, 0.0, 10.0),
    "hartmann3": (2, 0.0, 1.0),
    "hartmann6": (5, 0.0, 1.0),
    "ackley": (3, -32.0, 32.0),
    "griewank": (5, -600.0, 600.0),
    "eggholder": (1, -512.0, 512.0),
    "schwefel": (3, -500.0, 500.0),
    "powell": (3, -4.0, 5.0),
}

#: published minima: (name, minimiser z on the original domain, value, absolute tolerance)
KNOWN_MINIMA = [
    ("hartmann3", (0.114614, 0.555649, 0.852547), -3.86278, 1e-5),
    ("hartmann6", (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573), -3.32237, 1e-5),
    ("shekel", (4.00075, 3.99951, 4.00075, 3.99951), -10.5364, 1e-4),
    ("eggholder", (512.0, 404.2319), -959.6407, 1e-4),
    ("schwefel", (420.9687,) * 4, 0.0, 1e-4),
    ("ackley", (0.0,) * 4, 0.0, 1e-12),
    ("griewank", (0.0,) * 6, 0.0, 1e-12),
    ("powell", (0.0,) * 4, 0.0, 1e-12),
]


def test_names_and_unknown_name():
    # the synthetic benchmarks are all registered (real-world ones register beside them)
    assert set(NAMES) <= set(B.names()) and B.names() == sorted(B.names())
    with pytest.raises(ValueError, match="valid names: ackley, eggholder"):
        B.make("himmelblau")


@pytest.mark.parametrize(
    "alias, name",
    [
        ("Hartmann-3", "hartmann3"),
        ("hartmann_6", "hartmann6"),
        ("Hartmann (6)", "hartmann6"),
        ("Shekel (4)", "shekel"),
        ("EGGHOLDER", "eggholder"),
        ("Griewank (6)", "griewank"),
    ],
)
def test_aliases(alias, name):
    assert B.make(alias).name == name


def test_unknown_option_is_named():
    with pytest.raises(TypeError, match="horizn"):
        B.make("ackley", horizn=10.0)


@pytest.mark.parametrize(
    "opts, word",
    [
        ({"horizon": 0.0}, "horizon"),
        ({"horizon": -5.0}, "horizon"),
        ({"horizon": float("nan")}, "horizon"),
        ({"cost": -0.1}, "cost"),
        ({"noise_var": -1e-3}, "noise_var"),
        ({"oracle_grid_step": 0.0}, "oracle_grid_step"),
        ({"cost_table": "neurips"}, "icml, metronome"),
    ],
)
def test_bad_options_raise_with_name(opts, word):
    with pytest.raises(ValueError, match=word):
        B.make("shekel", **opts)


def test_zero_cost_and_zero_noise_allowed():
    b = B.make("powell", cost=0.0, noise_var=0.0)
    assert b.cost == 0.0 and b.noise_var == 0.0
    x = np.array([0.3, 0.5, 0.7])
    assert b.sample(x, 10.0, np.random.default_rng(0)) == b(x, 10.0)


def test_cost_tables_verbatim():
    m, a = B.COST_TABLES["metronome"], B.COST_TABLES["icml"]
    # [B] Table 3 rows (noise, cost, horizon, l_T)
    expected_b = {
        "shekel": (0.02, 8.00, 600, 174),
        "hartmann3": (0.05, 8.00, 600, 164),
        "ackley": (0.05, 0.05, 600, 216),
        "griewank": (0.30, 0.05, 600, 55),
        "eggholder": (0.10, 0.05, 600, 22),
        "schwefel": (0.25, 0.05, 600, 35),
        "hartmann6": (0.05, 0.10, 600, 270),
        "powell": (2.50, 0.01, 600, 552),
        "temperature": (0.16, 0.01, 1800, 396),
        "wlan": (1.50, 0.10, 600, 120),
    }
    for name, (nv, c, h, lt) in expected_b.items():
        row = m[name]
        assert (row["noise_var"], row["cost"], row["horizon"], row["lengthscale_time"]) == (
            nv,
            c,
            h,
            lt,
        )
    # [A] Table 2 costs; noise identical to [B]; horizon 600 everywhere
    expected_a_cost = {
        "shekel": 0.50,
        "hartmann3": 1.00,
        "ackley": 0.05,
        "griewank": 0.05,
        "eggholder": 0.05,
        "schwefel": 0.05,
        "hartmann6": 0.10,
        "powell": 1.00,
        "temperature": 1.00,
        "wlan": 0.10,
    }
    for name, c in expected_a_cost.items():
        assert a[name]["cost"] == c
        assert a[name]["noise_var"] == m[name]["noise_var"]
        assert a[name]["horizon"] == 600
    assert m["shekel"]["near_constant"] and m["temperature"]["quasi_static"]


@pytest.mark.parametrize("name", NAMES)
def test_make_reads_table(name):
    default = B.make(name)
    row = B.COST_TABLES["metronome"][name]
    assert (default.noise_var, default.cost, default.horizon) == (
        row["noise_var"],
        row["cost"],
        row["horizon"],
    )
    icml = B.make(name, cost_table="icml")
    assert icml.cost == B.COST_TABLES["icml"][name]["cost"]
    assert icml.lengthscale_time is None
    over = B.make(name, cost=2.5, noise_var=0.5, horizon=300.0)
    assert (over.cost, over.noise_var, over.horizon) == (2.5, 0.5, 300.0)
    # the time axis is stretched over H, so a lengthscale in seconds scales with H
    assert over.lengthscale_time == pytest.approx(row["lengthscale_time"] / 2)
    info = default.describe()
    assert info["name"] == name and info["d"] == BOXES[name][0] and info["table"] == "metronome"
    assert info["domain"]["time"] == [BOXES[name][1], BOXES[name][2]]


@pytest.mark.parametrize("name, zmin, value, tol", KNOWN_MINIMA)
def test_raw_hits_published_minimum(name, zmin, value, tol):
    b = B.make(name)
    z = np.array(zmin, float)
    assert float(b.raw(z)) == pytest.approx(value, abs=tol)
    # and it is a local minimiser: a derivative-free local search barely improves on it
    _, lo, hi = BOXES[name]
    res = minimize(
        lambda q: float(b.raw(q)),
        z,
        method="Nelder-Mead",
        bounds=[(lo, hi)] * len(z),
        options={"xatol": 1e-9},
    )
    assert res.fun >= value - tol


def test_shekel_near_4444():
    # "Shekel-10: -10.5364 at (4,4,4,4) approx": the value at the rounded point is close
    assert float(B.make("shekel").raw(np.full(4, 4.0))) == pytest.approx(-10.5364, abs=2e-4)


@pytest.mark.parametrize("name", NAMES)
def test_time_mapping_and_normalisation(name):
    d, lo, hi = BOXES[name]
    b = B.make(name, horizon=450.0)
    rng = np.random.default_rng(1)
    x = rng.uniform(size=(7, d))
    for t, zt in ((0.0, lo), (450.0, hi), (225.0, (lo + hi) / 2)):
        z = np.concatenate([lo + (hi - lo) * x, np.full((7, 1), zt)], axis=1)
        np.testing.assert_allclose(b(x, t), -b.raw(z), rtol=1e-12, atol=1e-12)
    # corners of the spatial box
    for corner, zc in ((np.zeros(d), lo), (np.ones(d), hi)):
        z = np.r_[np.full(d, zc), lo]
        assert b(corner, 0.0) == pytest.approx(-float(b.raw(z)), rel=1e-12, abs=1e-12)


def test_vectorisation_shapes():
    b = B.make("hartmann6")
    x = np.random.default_rng(2).uniform(size=(4, 3, 5))
    t = np.linspace(0, 600, 4)[:, None]
    out = b(x, t)
    assert out.shape == (4, 3)
    assert isinstance(b(x[0, 0], 12.0), float)
    assert out[2, 1] == pytest.approx(b(x[2, 1], t[2, 0]))
    assert b(x[0, 0], np.array([1.0, 2.0])).shape == (2,)


@pytest.mark.parametrize(
    "x, t, word",
    [
        (np.zeros(4), 1.0, "last dimension d=3"),
        (np.array([0.5, 1.2, 0.1]), 1.0, r"\[0, 1\]"),
        (np.array([0.5, 0.2, 0.1]), 601.0, "t must lie"),
        (np.array([0.5, np.nan, 0.1]), 1.0, "finite"),
    ],
)
def test_bad_inputs(x, t, word):
    with pytest.raises(ValueError, match=word):
        B.make("shekel")(x, t)


@pytest.mark.parametrize("name", ["hartmann3", "powell", "griewank"])
def test_sample_noise_variance(name):
    b = B.make(name, noise_var=0.3)
    x = np.full((40000, b.d), 0.37)
    f = b(x[0], 123.0)
    y = b.sample(x, 123.0, np.random.default_rng(3))
    assert np.mean(y) == pytest.approx(f, abs=4 * np.sqrt(0.3 / 40000))
    # sd of the sample variance ~ var * sqrt(2 / n) = 0.3 * 0.007
    assert np.var(y) == pytest.approx(0.3, abs=0.01)
    again = b.sample(x[:5], 123.0, np.random.default_rng(3))
    np.testing.assert_array_equal(again, y[:5])
    assert isinstance(b.sample(x[0], 1.0, np.random.default_rng(0)), float)


@pytest.mark.parametrize("name", NAMES)
def test_analytic_gradient_matches_finite_differences(name):
    b = B.make(name)
    rng = np.random.default_rng(4)
    x = rng.uniform(0.05, 0.95, size=(6, b.d))
    t = rng.uniform(0, 600, size=6)
    g = b._gradient(x, t)
    assert g is not None and g.shape == x.shape
    h = 1e-6
    for j in range(b.d):
        e = np.zeros(b.d)
        e[j] = h
        fd = (b._evaluate(x + e, t) - b._evaluate(x - e, t)) / (2 * h)
        np.testing.assert_allclose(g[:, j], fd, rtol=1e-5, atol=1e-5 * (1 + np.abs(fd).max()))


def test_register_plugs_in_a_factory():
    class Flat(Benchmark):
        name = "flat"
        d = 2

        def _evaluate(self, x, t):
            return -np.sum((x - 0.25) ** 2, axis=-1) + 0.0 * t

        def raw(self, z):
            return np.sum((np.asarray(z)[..., :2] - 0.25) ** 2, axis=-1)

    try:
        B.register("Flat-Test", lambda **o: Flat(horizon=10.0, noise_var=0.0, cost=0.1, **o))
        assert "flat-test" in B.names()
        b = B.make("flat_test", oracle_grid_step=5.0)
        assert b.f_star(3.3) == pytest.approx(0.0, abs=1e-12)
        np.testing.assert_allclose(b.argmax(3.3), [0.25, 0.25], atol=1e-6)
        with pytest.raises(ValueError, match="already registered"):
            B.register("flattest", lambda **o: None)
    finally:
        B._REGISTRY.pop("flattest", None)
        B._DISPLAY.pop("flattest", None)
    assert "flat-test" not in B.names()


@pytest.mark.parametrize("name", [*NAMES, "wlan", "moving-bump", "rastrigin"])
def test_observe_is_the_value_and_the_sample_of_one_evaluation(name: str) -> None:
    """The engine's one-evaluation ``observe`` returns exactly ``(f(x, t), sample(x, t, rng))``
    with the same generator state: the same floats the engine's two calls gave before."""
    bench = B.make(name, horizon=60.0)
    rng = np.random.default_rng(3)
    for x, t in zip(rng.uniform(size=(5, bench.d)), (0.0, 1.25, 17.0, 42.5, 60.0), strict=True):
        f, y = bench.observe(x, t, np.random.default_rng(11))
        assert f == float(bench(x, t))
        assert y == float(bench.sample(x, t, np.random.default_rng(11)))
        assert y != f  # the noise draw is in y, not in f
