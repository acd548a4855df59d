"""The W-DBO paper's Rastrigin, Styblinski-Tang and Rosenbrock, and the W-DBO noise protocol.

Every check compares against an independent computation: textbook formulas written out here
term by term, published minima, brute-force grids polished by scipy, finite differences and a
Monte-Carlo variance.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from scipy.optimize import minimize

import tvbo
from tvbo import benchmarks as B
from tvbo.benchmarks.noise import WDBO_NOISE_FRACTION
from tvbo.benchmarks.tables import COST_TABLES

NEW = ["rastrigin", "styblinski-tang", "rosenbrock"]

#: name -> (d, box of every coordinate), from W-DBO App. H.2 (independent of the code)
BOXES = {
    "rastrigin": (4, -4.0, 4.0),
    "styblinski-tang": (3, -5.0, 5.0),
    "rosenbrock": (2, -1.0, 1.5),
}


def textbook(name: str, z) -> float:
    """The published definitions, one term at a time (minimisation form)."""
    z = [float(v) for v in z]
    if name == "rastrigin":
        return 10.0 * len(z) + sum(v * v - 10.0 * np.cos(2.0 * np.pi * v) for v in z)
    if name == "styblinski-tang":
        return 0.5 * sum(v**4 - 16.0 * v**2 + 5.0 * v for v in z)
    return sum(100.0 * (z[i + 1] - z[i] ** 2) ** 2 + (z[i] - 1.0) ** 2 for i in range(len(z) - 1))


def original(name: str, x, t: float, horizon: float) -> np.ndarray:
    """z = (lo + span x, lo + span t / H): W-DBO's normalisation, time last."""
    _, lo, hi = BOXES[name]
    return np.r_[lo + (hi - lo) * np.asarray(x, float), lo + (hi - lo) * t / horizon]


@pytest.fixture(scope="module")
def benches():
    # a coarse cached grid: the checked times are then mostly solved one by one, exactly
    return {name: B.make(name, oracle_grid_step=60.0) for name in NEW}


def test_registry_names_aliases_and_the_static_rosenbrock():
    assert set(NEW) <= set(B.names())
    for label, name in [
        ("Rastrigin (5)", "rastrigin"),
        ("Styblinski-Tang (4)", "styblinski-tang"),
        ("styblinski_tang", "styblinski-tang"),
        ("Rosenbrock (3)", "rosenbrock"),
    ]:
        assert B.make(label).name == name
    # BOKE's static 4-D Rosenbrock keeps its name and its meaning
    static = B.make("rosenbrock4")
    assert static.d == 4 and static.describe()["domain"].get("time_invariant")
    assert B.make("rosenbrock").d == 2
    with pytest.raises(TypeError, match="valid options: horizon"):
        B.make("rastrigin", colour="red")


@pytest.mark.parametrize("name", NEW)
def test_dimensions_domains_and_description(benches, name):
    b = benches[name]
    d, lo, hi = BOXES[name]
    assert b.d == d and b.horizon == 600.0
    dom = b.describe()["domain"]
    assert dom["spatial"] == [[lo, hi]] * d and dom["time"] == [lo, hi]
    assert b.describe()["objective"].startswith("maximise")


def test_raw_at_published_points(benches):
    r, s, k = benches["rastrigin"], benches["styblinski-tang"], benches["rosenbrock"]
    assert r.raw(np.zeros(5)) == 0.0
    assert r.raw(np.ones(5)) == pytest.approx(5.0, abs=1e-12)  # 50 + 5 (1 - 10)
    assert s.raw(np.full(4, -2.903534)) == pytest.approx(-39.16617 * 4, abs=1e-4)
    assert s.raw(np.zeros(4)) == 0.0
    assert k.raw(np.ones(3)) == 0.0
    assert k.raw(np.zeros(3)) == 2.0


@pytest.mark.parametrize("name", NEW)
def test_values_follow_the_textbook_and_the_time_map(benches, name):
    b = benches[name]
    rng = np.random.default_rng(1)
    X = rng.random((20, b.d))
    T = rng.random(20) * b.horizon
    got = b(X, T)
    for x, t, f in zip(X, T, got, strict=True):
        assert f == pytest.approx(-textbook(name, original(name, x, t, b.horizon)), rel=1e-12)
    # t = 0 reads the box's lower end of the time coordinate, t = H its upper end
    x = np.full(b.d, 0.5)
    _, lo, hi = BOXES[name]
    assert b(x, 0.0) == pytest.approx(-textbook(name, np.r_[original(name, x, 0, 1)[:-1], lo]))
    assert b(x, b.horizon) == pytest.approx(
        -textbook(name, np.r_[original(name, x, 0, 1)[:-1], hi])
    )


@pytest.mark.parametrize("name", NEW)
def test_gradients_match_finite_differences(benches, name):
    b = benches[name]
    rng = np.random.default_rng(2)
    X = 0.05 + 0.9 * rng.random((8, b.d))
    for t in (0.0, 237.0, 600.0):
        g = b._gradient(X, np.float64(t))
        h = 1e-6
        fd = np.empty_like(X)
        for j in range(b.d):
            e = np.zeros(b.d)
            e[j] = h
            fd[:, j] = (b(X + e, t) - b(X - e, t)) / (2 * h)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-4 * (1 + np.abs(fd).max()))
    # the raw gradient includes the time coordinate; check it too
    z = original(name, X[0], 237.0, b.horizon)
    gz = b.raw_gradient(z)
    for j in range(len(z)):
        e = np.zeros(len(z))
        e[j] = 1e-6
        fd_j = (textbook(name, z + e) - textbook(name, z - e)) / 2e-6
        assert gz[j] == pytest.approx(fd_j, rel=1e-6, abs=1e-4)


def _brute_force_f_star(b, t: float, n: int) -> float:
    """max_x f(x, t) by a full grid of n points per coordinate, the 5 best polished by scipy."""
    axes = [np.linspace(0.0, 1.0, n)] * b.d
    grid = np.array(list(itertools.product(*axes)))
    vals = b(grid, t)
    best = -np.inf
    for i in np.argsort(-vals)[:5]:
        res = minimize(
            lambda x: -float(b(x, t)),
            grid[i],
            method="L-BFGS-B",
            bounds=[(0.0, 1.0)] * b.d,
            options={"ftol": 1e-15, "gtol": 1e-12},
        )
        best = max(best, -float(res.fun), float(vals[i]))
    return best


@pytest.mark.parametrize(
    "name, n", [("rastrigin", 17), ("styblinski-tang", 41), ("rosenbrock", 501)]
)
def test_f_star_against_brute_force(benches, name, n):
    b = benches[name]
    for t in (0.0, 111.1, 480.0, 600.0):
        brute = _brute_force_f_star(b, t, n)
        f_star = b.f_star(t)
        # the oracle is never beaten, and the brute force finds the same optimum
        assert f_star >= brute - 1e-9 * (1 + abs(brute))
        assert f_star == pytest.approx(brute, rel=1e-7, abs=1e-7)
        assert b(b.argmax(t), t) == pytest.approx(f_star, abs=1e-12)


def test_separable_oracles_are_the_published_coordinates(benches):
    r, s = benches["rastrigin"], benches["styblinski-tang"]
    for t in (0.0, 300.0):
        np.testing.assert_allclose(r.argmax(t), 0.5)
        # z_i = -2.903534 on [-5, 5]: x = (z + 5) / 10
        np.testing.assert_allclose(s.argmax(t), (5.0 - 2.903534) / 10.0, atol=1e-7)
    # f*(t) = -(the time coordinate's own term): the spatial part is at its minimum
    zt = -4.0 + 8.0 * 300.0 / 600.0
    assert r.f_star(300.0) == pytest.approx(-(zt**2 - 10 * np.cos(2 * np.pi * zt) + 10))


def test_rosenbrock_optimum_moves_with_time_and_is_one_only_at_z3_one(benches):
    k = benches["rosenbrock"]
    # z3 = 1 at t = 0.8 H: then the static minimiser (1, 1) is optimal with f* = 0
    np.testing.assert_allclose(k.argmax(480.0), [0.8, 0.8], atol=1e-6)
    assert k.f_star(480.0) == pytest.approx(0.0, abs=1e-12)
    # elsewhere the chain's optimum is not (1, 1): fixing the time coordinate moves it
    x0 = k.argmax(0.0)
    assert np.max(np.abs(x0 - 0.8)) > 0.1
    assert k.f_star(0.0) > k(np.array([0.8, 0.8]), 0.0) + 1.0


def test_rosenbrock_inner_minimum_against_numpy_roots_and_a_grid():
    from tvbo.benchmarks.wdbo_functions import _chain_link_min, _depressed_cubic_roots

    z2 = np.array([-1.0, -0.3, 0.0, 0.004, 0.2, 0.7, 1.0, 1.5])
    p, q = (2.0 - 400.0 * z2) / 400.0, -2.0 / 400.0
    roots = _depressed_cubic_roots(p, q)
    for row, pk in zip(roots, p, strict=True):
        ref = np.roots([1.0, 0.0, pk, q])
        real = ref[np.abs(ref.imag) < 1e-9].real
        for r in real:  # every real root is found
            assert np.min(np.abs(row - r)) < 1e-9
    z1, g = _chain_link_min(z2, -1.0, 1.5)
    grid = np.linspace(-1.0, 1.5, 200_001)
    brute = np.min(100.0 * (z2[:, None] - grid**2) ** 2 + (grid - 1.0) ** 2, axis=1)
    assert np.all(g <= brute + 1e-12) and np.all(brute - g < 1e-6)
    np.testing.assert_allclose(g, 100.0 * (z2 - z1**2) ** 2 + (z1 - 1.0) ** 2, rtol=1e-14)


@pytest.mark.parametrize("name", NEW)
def test_short_gp_ucb_run_has_no_negative_regret(name):
    ds = tvbo.simulate(name, "gp-ucb", seed=0, horizon=8.0, cost=0.2, warmup=5)
    run = ds.squeeze()
    assert run["regret"].min() >= -1e-9
    np.testing.assert_allclose(run["regret"], run["f_star"] - run["f"])
    assert float(ds.attrs["average_regret"]) >= 0.0


# -- the noise protocol --------------------------------------------------------------------------
@pytest.mark.parametrize("name", [*NEW, "ackley", "hartmann3"])
def test_wdbo_noise_is_five_percent_of_the_signal_variance(name):
    b = B.make(name, noise_protocol="wdbo")
    # independent estimate: plain Monte Carlo over the normalised space-time domain
    rng = np.random.default_rng(7)
    X = rng.random((200_000, b.d))
    T = rng.random(200_000) * b.horizon
    var = float(np.var(b(X, T)))
    assert b.signal_var == pytest.approx(var, rel=0.02)
    assert b.noise_var == pytest.approx(WDBO_NOISE_FRACTION * b.signal_var, rel=1e-12)
    info = b.describe()
    assert info["noise_protocol"] == "wdbo" and info["signal_var"] == b.signal_var
    assert info["noise_var"] == b.noise_var


@pytest.mark.parametrize("name", NEW)
def test_table_rows_hold_the_wdbo_noise(name):
    measured = B.make(name, noise_protocol="wdbo").noise_var
    for table in ("metronome", "icml"):
        row = COST_TABLES[table][name]
        assert row["noise_var"] == pytest.approx(measured, rel=5e-3)  # 3 significant digits
        assert (row["cost"], row["horizon"]) == (0.05, 600.0)


def test_default_noise_protocol_changes_nothing():
    plain = B.make("ackley")
    table = B.make("ackley", noise_protocol="table")
    assert plain.noise_var == table.noise_var == COST_TABLES["metronome"]["ackley"]["noise_var"]
    assert "noise_protocol" not in plain.describe()
    assert plain.describe() == table.describe()


def test_noise_protocol_bad_input():
    with pytest.raises(
        ValueError, match="unknown noise_protocol 'paper'; valid noise protocols: table, wdbo"
    ):
        B.make("rastrigin", noise_protocol="paper")
    with pytest.raises(ValueError, match="noise_var and noise_protocol='wdbo'"):
        B.make("rastrigin", noise_protocol="wdbo", noise_var=1.0)
    with pytest.raises(ValueError, match="discrete"):
        B.make("hills", noise_protocol="wdbo")


def test_the_run_file_records_the_noise_protocol():
    ds = tvbo.simulate(
        "styblinski-tang",
        "gp-ucb",
        seed=0,
        horizon=6.0,
        cost=0.2,
        warmup=4,
        benchmark_options={"noise_protocol": "wdbo"},
    )
    bench = json.loads(ds.attrs["config_json"])["benchmark"]
    assert bench["noise_protocol"] == "wdbo"
    assert float(ds.attrs["noise_var"]) == pytest.approx(0.05 * bench["signal_var"])


# -- the Temperature day in the workflow ---------------------------------------------------------
@pytest.mark.parametrize(
    "dates, used, substitute", [(None, "2004-02-28", "no"), (["2004-03-06"], "2004-03-06", "yes")]
)
def test_workflow_reports_the_temperature_day(tmp_path, dates, used, substitute):
    from tests.workflow.test_workflow import load_test_config, snakemake

    config = load_test_config()
    config.update(benchmarks=["ackley", "temperature"], campaign="day")
    if dates is not None:
        config.setdefault("data", {}).setdefault("intel", {})["dates"] = dates
    target = "results/day/tables/temperature_day.csv"
    proc = snakemake(tmp_path, config, "--cores", "1", target)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    lines = (tmp_path / target).read_text().splitlines()
    assert lines[0] == "benchmark,paper_day,day_used,substitute,data_file"
    assert lines[1:] == [f"temperature,2004-02-28,{used},{substitute},data/intel/intel_{used}.nc"]
    # the file is a default target only when the grid has an Intel benchmark
    dry = snakemake(tmp_path, config, "-n", "--cores", "1")
    assert dry.returncode == 0 and "temperature_day" in dry.stdout + dry.stderr
    config.update(benchmarks=["ackley"])
    dry = snakemake(tmp_path, config, "-n", "--cores", "1")
    assert dry.returncode == 0 and "temperature_day" not in dry.stdout + dry.stderr


@pytest.mark.parametrize(
    "overrides, fragment",
    [
        ({"options": {"noise_protocol": "paper"}}, "valid noise protocols: table, wdbo"),
        ({"noise_var": 1.0, "options": {"noise_protocol": "wdbo"}}, "give one of them"),
    ],
)
def test_workflow_checks_the_noise_protocol_before_any_job(tmp_path, overrides, fragment):
    from tests.workflow.test_workflow import load_test_config, snakemake

    config = load_test_config()
    config.update(benchmarks=["rastrigin"], benchmark_options={"rastrigin": overrides})
    proc = snakemake(tmp_path, config, "-n", "--cores", "1")
    assert proc.returncode != 0
    assert fragment in proc.stdout + proc.stderr
    assert not (tmp_path / "results").exists()


def test_wdbo_paper_config_covers_the_papers_whole_table(tmp_path):
    import yaml

    from tests.workflow.test_workflow import REPO, snakemake
    from tvbo.analysis.published import paper_table, published

    path = REPO / "config" / "wdbo_paper.yaml"
    config = yaml.safe_load(path.read_text())
    cells = published("wdbo").query("not overall")
    assert cells["benchmark"].nunique() == 12 and (cells["tvbo_benchmark"] != "").all()
    assert set(config["benchmarks"]) == set(paper_table("wdbo")["benchmark"])
    for name in config["benchmarks"]:
        assert config["benchmark_options"][name]["options"]["noise_protocol"] == "wdbo"
    assert config["data"]["intel"]["dates"] == ["2004-02-28"]  # the papers' day stays the default
    target = "results/wdbo_paper/runs/rosenbrock/w-dbo/seed0_speed1.0.nc"
    args = ("-n", "-p", "--configfile", str(path), "--replace-workflow-config")
    proc = snakemake(tmp_path, None, *args, target)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    out = proc.stdout + proc.stderr
    assert "--benchmark rosenbrock" in out and '{"noise_protocol": "wdbo"}' in out
