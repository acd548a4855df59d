"""Tests of the WLAN simulator benchmark (tvbo.benchmarks.wlan).

Physics is checked against an independent per-link computation in dB (path loss formula, noise
floor from the thermal density), not against the simulator's vectorised linear-gain path; the
oracle against 10,000 random power vectors and the first-order optimality (KKT) conditions.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tvbo.benchmarks.base import Benchmark
from tvbo.benchmarks.wlan import WLAN, WLANConfig, make_wlan

TIMES = (0.0, 37.5, 123.4, 301.0, 599.9, 600.0)


@pytest.fixture(scope="module")
def bench() -> WLAN:
    return make_wlan()


@pytest.fixture(scope="module")
def short() -> WLAN:
    """A short horizon and coarse oracle grid keep the oracle build fast in tests."""
    return make_wlan(horizon=40.0, oracle_grid_step=20.0)


def reference_sinr(b: WLAN, x: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-user SINR from first principles, one link at a time, in dBm."""
    cfg = b.config
    p_dbm = 10 * np.log10(b.powers(x))
    noise_dbm = cfg.thermal_noise_dbm_hz + 10 * math.log10(cfg.bandwidth_hz) + cfg.noise_figure_db
    users = b.positions(t)
    dz = cfg.node_height - cfg.user_height
    m, n = cfg.n_users, cfg.n_nodes
    rx = np.empty((n, m))  # received power (mW)
    for i in range(n):
        for j in range(m):
            d = math.sqrt(float(np.sum((users[j] - b.nodes[i]) ** 2)) + dz * dz)
            rx[i, j] = 10 ** ((p_dbm[i] - float(cfg.path_loss_db(d))) / 10)
    if cfg.association == "dynamic":
        dist = np.linalg.norm(users[None, :, :] - b.nodes[:, None, :], axis=-1)
        assoc = np.argmin(dist, axis=0)
    else:
        u0 = b.positions(0.0)
        assoc = np.argmin(np.linalg.norm(u0[None] - b.nodes[:, None], axis=-1), axis=0)
    noise = 10 ** (noise_dbm / 10)
    sinr = np.array(
        [rx[assoc[j], j] / (noise + rx[:, j].sum() - rx[assoc[j], j]) for j in range(m)]
    )
    return sinr, assoc


# -- the physics --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "opts",
    [{}, {"power_scale": "linear"}, {"path_loss": "dual_slope"}, {"association": "static"}],
)
def test_sinr_and_throughput_match_first_principles(opts: dict) -> None:
    b = make_wlan(**opts)
    rng = np.random.default_rng(3)
    for t in (0.0, 250.0, 600.0):
        x = rng.random(6)
        sinr, assoc = b.sinr(x, t)
        ref, ref_assoc = reference_sinr(b, x, t)
        np.testing.assert_array_equal(assoc, ref_assoc)
        np.testing.assert_allclose(sinr, ref, rtol=1e-10)
        cfg = b.config
        capacity_bps = cfg.bandwidth_hz * np.sum(np.log2(1 + ref))
        assert b(x, t) == pytest.approx(capacity_bps / cfg.throughput_unit_bps, rel=1e-12)


def test_power_of_one_node_raises_own_users_and_lowers_others(bench: WLAN) -> None:
    rng = np.random.default_rng(4)
    for t in (10.0, 222.0, 480.5):
        x = rng.uniform(0.1, 0.8, 6)
        s0, a = bench.sinr(x, t)
        for i in range(6):
            up = x.copy()
            up[i] += 0.15
            s1, a1 = bench.sinr(up, t)
            np.testing.assert_array_equal(a1, a)  # association never depends on power
            own = a == i
            assert np.all(s1[own] > s0[own])
            assert np.all(s1[~own] < s0[~own])


def test_reference_constants() -> None:
    cfg = WLANConfig()
    # free-space loss at 1 m, textbook form 20 log10(f_MHz) - 27.55
    fspl1 = 20 * math.log10(5180) - 27.55
    assert float(cfg.path_loss_db(1.0)) == pytest.approx(fspl1, abs=0.01)
    assert float(cfg.path_loss_db(10.0)) == pytest.approx(fspl1 + 30.0, abs=0.01)
    dual = WLANConfig(path_loss="dual_slope")
    assert float(dual.path_loss_db(10.0)) == pytest.approx(fspl1 + 20.0, abs=0.01)
    assert float(dual.path_loss_db(100.0)) == pytest.approx(fspl1 + 55.0, abs=0.01)
    assert cfg.noise_dbm() == pytest.approx(-174 + 73.0103 + 7, abs=1e-3)
    d = np.linspace(0.5, 150, 50)
    for c in (cfg, dual):
        np.testing.assert_allclose(
            c.gain_from_sq_distance(d**2), 10 ** (-c.path_loss_db(d) / 10), rtol=1e-12
        )


def test_power_mapping(bench: WLAN) -> None:
    np.testing.assert_allclose(bench.powers([0.0, 0.5, 1.0]), [10**0.1, 10**1.3, 10**2.5])
    lin = make_wlan(power_scale="linear")
    np.testing.assert_allclose(lin.powers(0.5), (10**0.1 + 10**2.5) / 2)
    x = np.random.default_rng(0).random((7, 6))
    for b in (bench, lin):
        np.testing.assert_allclose(b.normalise(b.powers(x)), x, atol=1e-14)


def test_raw_is_minimisation_form_on_powers_and_seconds(bench: WLAN) -> None:
    rng = np.random.default_rng(5)
    x = rng.random((9, 6))
    t = rng.uniform(0, 600, 9)
    z = np.concatenate([bench.powers(x), t[:, None]], axis=1)
    np.testing.assert_allclose(bench.raw(z), -bench(x, t), rtol=1e-13)
    with pytest.raises(ValueError, match="powers must lie"):
        bench.raw(np.r_[np.full(6, 1000.0), 0.0])
    with pytest.raises(ValueError, match="last dimension"):
        bench.raw(np.ones(6))


@pytest.mark.parametrize("opts", [{}, {"power_scale": "linear", "path_loss": "dual_slope"}])
def test_gradient_matches_finite_differences(opts: dict) -> None:
    b = make_wlan(**opts)
    rng = np.random.default_rng(6)
    x = rng.uniform(0.05, 0.95, (4, 6))
    h = 1e-6
    for t in (np.float64(77.7), rng.uniform(0, 600, 4)):
        g = b._gradient(x, t)
        fd = np.empty_like(x)
        for k in range(6):
            e = np.zeros(6)
            e[k] = h
            fd[:, k] = (b(x + e, t) - b(x - e, t)) / (2 * h)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)


# -- domain, vectorisation, scenario ---------------------------------------------------------
def test_finite_and_positive_everywhere(bench: WLAN) -> None:
    rng = np.random.default_rng(7)
    corners = np.array(np.meshgrid(*[[0.0, 1.0]] * 6)).reshape(6, -1).T
    pts = np.vstack([rng.random((500, 6)), corners])
    times = np.linspace(0, 600, 61)
    F = bench(pts[:, None, :], times[None, :])
    assert F.shape == (len(pts), len(times))
    assert np.all(np.isfinite(F)) and np.all(F > 0)


def test_vectorised_matches_pointwise(bench: WLAN) -> None:
    rng = np.random.default_rng(8)
    x = rng.random((3, 4, 6))
    t = rng.uniform(0, 600, (3, 1))
    F = bench(x, t)
    assert F.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            assert F[i, j] == pytest.approx(bench(x[i, j], float(t[i, 0])), rel=1e-13)
    # repeated times take the per-distinct-time path; must agree too
    tt = np.repeat(t[:, 0], 4).reshape(3, 4)
    np.testing.assert_allclose(bench(x, tt), F, rtol=1e-13)
    assert isinstance(bench(x[0, 0], 1.0), float)


def test_determinism_and_scenario_seed() -> None:
    x = np.random.default_rng(9).random((20, 6))
    t = np.linspace(0, 600, 20)
    a, b, c = make_wlan(), make_wlan(scenario_seed=0), make_wlan(scenario_seed=1)
    np.testing.assert_array_equal(a(x, t), b(x, t))
    assert not np.allclose(a(x, t), c(x, t))
    # evaluation order does not matter (positions are a function of t alone)
    np.testing.assert_array_equal(a(x[::-1], t[::-1])[::-1], b(x, t))
    # a user's trajectory depends on the seed and its index only, not on n_users
    few = make_wlan(n_users=5)
    np.testing.assert_array_equal(few.positions(t), a.positions(t)[:, :5])


def test_users_move_within_the_floor_at_walking_speed(bench: WLAN) -> None:
    t = np.linspace(0, 600, 6001)
    pos = bench.positions(t)
    assert np.all(pos >= 0) and np.all(pos[..., 0] <= 100) and np.all(pos[..., 1] <= 60)
    speed = np.linalg.norm(np.diff(pos, axis=0), axis=-1) / np.diff(t)[:, None]
    assert speed.max() <= 1.5 + 1e-9
    # every user walks at some point of the run (pauses last at most 300 s)
    travelled = np.sum(np.linalg.norm(np.diff(pos, axis=0), axis=-1), axis=0)
    assert np.all(travelled > 10.0)
    assert np.mean(np.linalg.norm(pos[3000] - pos[0], axis=-1) > 1.0) > 0.5
    assert not np.allclose(bench(np.full(6, 0.5), 0.0), bench(np.full(6, 0.5), 300.0))


def test_association_dynamic_is_nearest_node_and_static_is_fixed() -> None:
    t = np.linspace(0, 600, 121)
    dyn = make_wlan()
    _, a = dyn.gains(t)
    pos = dyn.positions(t)
    dist = np.linalg.norm(pos[:, None, :, :] - dyn.nodes[None, :, None, :], axis=-1)
    np.testing.assert_array_equal(a, np.argmin(dist, axis=1))
    assert np.any(a[1:] != a[:-1])  # handovers happen
    _, s = make_wlan(association="static").gains(t)
    np.testing.assert_array_equal(s, np.broadcast_to(a[0], s.shape))


def test_node_layout() -> None:
    b = make_wlan()
    np.testing.assert_allclose(np.sort(np.unique(b.nodes[:, 0])), [100 / 6, 50, 500 / 6])
    np.testing.assert_allclose(np.sort(np.unique(b.nodes[:, 1])), [15, 45])
    w = make_wlan(n_nodes=4, n_users=18)  # the W-DBO variant
    assert w.d == 4 and w.nodes.shape == (4, 2)
    np.testing.assert_allclose(np.unique(w.nodes[:, 0]), [25, 75])
    assert w(np.full(4, 0.5), 10.0) > 0
    custom = make_wlan(n_nodes=2, node_positions=[[10, 10], [90, 50]])
    np.testing.assert_allclose(custom.nodes, [[10, 10], [90, 50]])


def test_range_commensurate_with_noise(bench: WLAN) -> None:
    """The spatial range of f at a time is tens of units; noise sd sqrt(1.5) = 1.22 a few %."""
    rng = np.random.default_rng(10)
    x = rng.random((2000, 6))
    sd = math.sqrt(bench.noise_var)
    for t in (0.0, 150.0, 300.0, 450.0, 600.0):
        f = bench(x, t)
        assert 10 < np.ptp(f) / sd < 100
        assert 20 < f.mean() < 150


# -- the oracle -----------------------------------------------------------------------------
def _kkt_residual(b: WLAN, x: np.ndarray, t: float) -> float:
    g = b._gradient(x[None], np.float64(t))[0]
    r = np.where(x <= 1e-9, np.maximum(g, 0), np.where(x >= 1 - 1e-9, np.maximum(-g, 0), g))
    return float(np.max(np.abs(r)))


def _check_oracle(b: WLAN, times: tuple[float, ...], seed: int) -> None:
    rng = np.random.default_rng(seed)
    for t in times:
        fs = b.f_star(t)
        xs = b.argmax(t)
        assert b(xs, t) == pytest.approx(fs, rel=1e-12)
        X = rng.random((10_000, 6))
        assert b(X, t).max() <= fs + 1e-9
        assert _kkt_residual(b, xs, t) < 1e-4  # f is ~100 here: 1e-6 relative


def test_oracle_never_beaten_by_random_power_vectors(short: WLAN) -> None:
    """Grid and off-grid times; ``short`` is the default scenario restricted to [0, 40] s."""
    _check_oracle(short, (0.0, 7.3, 20.0, 33.3, 40.0), seed=11)


def test_oracle_off_grid_over_the_whole_run() -> None:
    """A 300 s grid: every query is answered by the off-grid path, far from warm starts."""
    b = make_wlan(oracle_grid_step=300.0)
    _check_oracle(b, (61.0, 187.5, 299.0, 444.4, 577.7), seed=13)


def test_refine_f_star_never_lowers(short: WLAN) -> None:
    t = 12.5
    fs = short.f_star(t)
    x = np.random.default_rng(12).random(6)
    assert short.refine_f_star(t, x) >= fs
    assert short.f_star(t) >= fs


# -- options and metadata -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("opts", "match"),
    [
        ({"bandwidth_hz": -20e6}, "bandwidth_hz"),
        ({"power_scale": "dbm"}, "valid choices: db, linear"),
        ({"path_loss": "free"}, "log_distance, dual_slope"),
        ({"association": "best"}, "dynamic, static"),
        ({"n_users": 0}, "n_users must be >= 1"),
        ({"n_nodes": 0}, "n_nodes must be >= 1"),
        ({"speed_min": 0.0}, "speed_min"),
        ({"speed_min": 2.0, "speed_max": 1.0}, "speed_max"),
        ({"power_min_mw": 10.0, "power_max_mw": 5.0}, "power_max_mw"),
        ({"area": (100.0, -1.0)}, "area"),
        ({"node_positions": [[0, 0]]}, "node_positions"),
        ({"scenario_seed": -1}, "scenario_seed"),
        ({"pause_max": float("nan")}, "pause_max"),
        ({"horizon": 0.0}, "horizon"),
        ({"cost_table": "nope"}, "valid cost tables"),
    ],
)
def test_bad_options_give_clear_errors(opts: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make_wlan(**opts)


def test_type_errors() -> None:
    with pytest.raises(TypeError, match="valid options: .*n_users"):
        make_wlan(n_user=3)
    with pytest.raises(TypeError, match="n_users must be an integer"):
        make_wlan(n_users=2.5)


def test_parameters_and_metadata(bench: WLAN) -> None:
    assert isinstance(bench, Benchmark)
    assert (bench.name, bench.d, bench.temporal_kernel) == ("wlan", 6, "matern12")
    assert (bench.noise_var, bench.cost, bench.horizon) == (1.5, 0.1, 600.0)
    assert bench.lengthscale_time == 120.0
    icml = make_wlan(cost_table="icml", horizon=None, cost=None, noise_var=None)
    assert (icml.noise_var, icml.cost, icml.horizon) == (1.5, 0.1, 600.0)
    info = json.loads(json.dumps(bench.describe()))
    assert info["simulator"]["n_users"] == 27 and len(info["simulator"]["node_positions"]) == 6
    assert info["domain"]["power_mw"][0] == pytest.approx([10**0.1, 10**2.5])
    with pytest.raises(ValueError, match="x must lie in"):
        bench(np.full(6, 1.5), 0.0)
    with pytest.raises(ValueError, match="t must lie in"):
        bench(np.full(6, 0.5), 601.0)
