"""Tests of the real-data benchmarks (temperature, temperature-sensors, ozone, ozone-sensors).

The fields are prepared once per session from the offline mirror with the tvbo.data pipeline.
Every expected value is recomputed independently from the netCDF file with numpy (bin values,
np.interp in time, a direct inverse-distance formula, brute-force nearest sensor), never taken
from the benchmark under test.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from scipy.optimize import minimize

import tvbo.benchmarks as B
from tests.mirror import MIRROR_ROOT
from tvbo.benchmarks.ozone import fill_missing
from tvbo.data.download import sha256_file
from tvbo.data.intel import parse_intel, prepare_intel, read_mote_locations, write_netcdf
from tvbo.data.ozone import MIRROR_CBSA, prepare_ozone_files

MIRROR = MIRROR_ROOT
INTEL_RAW = MIRROR / "intel" / "data_2004-03-04_to_08.txt.gz"
INTEL_LOCS = MIRROR / "intel" / "mote_locs.txt"
OZONE_ZIP = MIRROR / "ozone" / "daily_44201_2006_nys_subset.zip"

pytestmark = pytest.mark.skipif(
    not (INTEL_RAW.is_file() and INTEL_LOCS.is_file() and OZONE_ZIP.is_file()),
    reason="offline data mirror not available",
)


@pytest.fixture(scope="session")
def fields(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Prepared netCDF fields: one Intel day, two Intel days, ozone filled and unfilled."""
    out = tmp_path_factory.mktemp("realdata")
    readings, dropped = parse_intel(INTEL_RAW)
    locs = read_mote_locations(INTEL_LOCS)
    paths = {
        "intel": out / "intel_2004-03-06.nc",
        "intel2": out / "intel_2004-03-05_06.nc",
        "ozone": out / "ozone_nys-2006.nc",
        "ozone_nan": out / "ozone_nys-2006-nan.nc",
    }
    sha = sha256_file(INTEL_RAW)
    for key, dates in (("intel", ["2004-03-06"]), ("intel2", ["2004-03-05", "2004-03-06"])):
        ds = prepare_intel(readings, locs, dates=dates, dropped=dropped, source_sha256=sha)
        write_netcdf(ds, paths[key])
    prepare_ozone_files([OZONE_ZIP], paths["ozone"], years=[2006], cbsa=MIRROR_CBSA)
    prepare_ozone_files([OZONE_ZIP], paths["ozone_nan"], years=[2006], cbsa=MIRROR_CBSA, fill=False)
    return paths


def _open(path: Path) -> xr.Dataset:
    with xr.open_dataset(path) as ds:
        return ds.load()


@pytest.fixture(scope="session")
def intel(fields) -> xr.Dataset:
    return _open(fields["intel"])


@pytest.fixture(scope="session")
def ozone(fields) -> xr.Dataset:
    return _open(fields["ozone"])


@pytest.fixture(scope="session")
def temperature(fields) -> B.Benchmark:
    return B.make("temperature", path=str(fields["intel"]))


def interp_sensors(ds: xr.Dataset, s: float) -> np.ndarray:
    """Each sensor's temperature at data second ``s``, by np.interp (independent of tvbo)."""
    el = ds["elapsed"].values
    T = ds["temperature"].values
    return np.array([np.interp(s, el, T[:, i]) for i in range(T.shape[1])])


def idw(coords: np.ndarray, v: np.ndarray, x: np.ndarray, p: float = 2.0) -> np.ndarray:
    """Textbook Shepard interpolation, for points away from the sensors."""
    d = np.linalg.norm(x[:, None, :] - coords[None], axis=-1)
    w = d**-p
    return (w @ v) / w.sum(axis=1)


# -- temperature --------------------------------------------------------------------------------
def test_registered_names_and_aliases(fields) -> None:
    for name in ("temperature", "temperature-sensors", "ozone", "ozone-sensors"):
        assert name in B.names()
    b = B.make("Temperature_Sensors", path=str(fields["intel"]))
    assert b.name == "temperature-sensors" and b.is_discrete


def test_temperature_parameters_from_tables(fields, temperature) -> None:
    assert (temperature.noise_var, temperature.cost, temperature.horizon) == (0.16, 0.01, 1800.0)
    assert temperature.lengthscale_time == 396.0 and not temperature.is_discrete
    icml = B.make("temperature", path=str(fields["intel"]), cost_table="icml")
    assert (icml.noise_var, icml.cost, icml.horizon) == (0.16, 1.0, 600.0)


def test_temperature_equals_bin_value_at_sensor_and_bin_time(intel, temperature) -> None:
    coords = np.c_[intel["x"].values, intel["y"].values]
    T = intel["temperature"].values
    m = T.shape[0]
    H = temperature.horizon
    for k in (0, 1, 37, 100, m - 2, m - 1):
        t = k * H / (m - 1)
        np.testing.assert_allclose(temperature(coords, t), T[k], rtol=0, atol=1e-12)
    # t = 0 and t = H read exactly the first and the last bin
    np.testing.assert_array_equal(temperature(coords, 0.0), T[0])
    np.testing.assert_array_equal(temperature(coords, H), T[-1])


def test_temperature_interpolant_is_linear_in_time_and_idw_in_space(intel, temperature) -> None:
    coords = np.c_[intel["x"].values, intel["y"].values]
    span = intel["elapsed"].values[-1]
    rng = np.random.default_rng(1)
    for t in (13.7, 901.3, 1777.0):
        v = interp_sensors(intel, t / temperature.horizon * span)
        x = rng.uniform(size=(50, 2))
        np.testing.assert_allclose(temperature(x, t), idw(coords, v, x), rtol=1e-12)
        np.testing.assert_allclose(temperature(coords, t), v, rtol=0, atol=1e-12)


def test_temperature_f_star_is_max_over_sensors_and_never_beaten(intel, temperature) -> None:
    span = intel["elapsed"].values[-1]
    coords = np.c_[intel["x"].values, intel["y"].values]
    rng = np.random.default_rng(0)
    times = np.r_[0.0, np.sort(rng.uniform(0, 1800.0, 8)), 1800.0]
    f_star = temperature.f_star(times)
    for t, fs in zip(times, f_star, strict=True):
        v = interp_sensors(intel, t / 1800.0 * span)
        assert fs == pytest.approx(v.max(), abs=1e-10)
        np.testing.assert_array_equal(temperature.argmax(t), coords[np.argmax(v)])
        X = rng.uniform(size=(1000, 2))
        vals = temperature(X, t)
        assert vals.max() <= fs + 1e-9
        for x0 in X[np.argsort(-vals)[:3]]:  # polish the best random points with scipy
            res = minimize(
                lambda x, t=t: -temperature(x, t), x0, bounds=[(0, 1)] * 2, method="L-BFGS-B"
            )
            assert -res.fun <= fs + 1e-9
        assert temperature.refine_f_star(t, X[0]) == pytest.approx(fs, abs=1e-12)


def test_temperature_data_window_and_date_selection(fields, intel) -> None:
    T = intel["temperature"].values
    coords = np.c_[intel["x"].values, intel["y"].values]
    half = B.make("temperature", path=str(fields["intel"]), data_window=(0.5, 1.0))
    # t = 0 reads fractional bin 0.5 * 143 = 71.5: the mean of bins 71 and 72
    np.testing.assert_allclose(half(coords, 0.0), 0.5 * (T[71] + T[72]), rtol=1e-13)
    np.testing.assert_array_equal(half(coords, half.horizon), T[-1])
    assert half.lengthscale_time == pytest.approx(2 * 396.0)
    two = B.make("temperature", path=str(fields["intel2"]), date="2004-03-06")
    np.testing.assert_array_equal(two(coords, 0.0), T[0])
    both = B.make("temperature", path=str(fields["intel2"]), date=["2004-03-05", "2004-03-06"])
    assert both.field.n_times == 288
    with pytest.raises(ValueError, match="available days"):
        B.make("temperature", path=str(fields["intel2"]), date="2004-03-07")


def test_temperature_raw_uses_metres_and_data_seconds(intel, temperature) -> None:
    T = intel["temperature"].values
    for i, k in ((0, 0), (7, 50), (51, 143)):
        z = [intel["x_m"].values[i], intel["y_m"].values[i], intel["elapsed"].values[k]]
        assert temperature.raw(np.array(z)) == pytest.approx(-T[k, i], abs=1e-12)
    with pytest.raises(ValueError, match="outside"):
        temperature.raw(np.array([1e4, 0.0, 0.0]))


def test_temperature_bad_path_and_options(tmp_path, fields) -> None:
    missing = tmp_path / "intel_2004-02-28.nc"
    with pytest.raises(FileNotFoundError) as err:
        B.make("temperature", path=str(missing))
    msg = str(err.value)
    assert str(missing) in msg and "prepare-intel" in msg and "snakemake" in msg
    assert "--dates 2004-02-28" in msg
    with pytest.raises(TypeError, match="valid options: .*idw_power"):
        B.make("temperature", path=str(fields["intel"]), step_seconds=3.0)
    with pytest.raises(ValueError, match="data_window"):
        B.make("temperature", path=str(fields["intel"]), data_window=(0.7, 0.2))
    with pytest.raises(ValueError, match="idw_power"):
        B.make("temperature", path=str(fields["intel"]), idw_power=0.0)


def test_describe_records_file_provenance(fields, temperature) -> None:
    info = json.loads(json.dumps(temperature.describe()))
    data = info["data"]
    expected = hashlib.sha256(fields["intel"].read_bytes()).hexdigest()
    assert data["sha256"] == expected and data["path"] == str(fields["intel"])
    assert data["attrs"]["source_sha256"] == sha256_file(INTEL_RAW)
    assert data["n_sensors"] == 52 and info["interpolation"]["space"].startswith("inverse")


# -- temperature-sensors ------------------------------------------------------------------------
def test_temperature_sensors_candidates_values_and_regret(fields, intel) -> None:
    b = B.make("temperature-sensors", path=str(fields["intel"]))
    T = intel["temperature"].values
    coords = np.c_[intel["x"].values, intel["y"].values]
    assert b.candidates.shape == (52, 2)
    np.testing.assert_array_equal(b.candidates, coords)
    assert b.step_seconds == 1800.0 / 144 and b.horizon == 1800.0
    for k in (0, 5, 77, 143):
        for frac in (0.0, 0.4, 0.999):
            t = (k + frac) * b.step_seconds
            np.testing.assert_array_equal(b(coords, t), T[k])
            assert b.f_star(t) == T[k].max()
            assert b(b.argmax(t), t) == b.f_star(t)  # regret of the argmax is 0
    np.testing.assert_array_equal(b(coords, b.horizon), T[-1])  # t = H: the last bin
    # any x selects the nearest sensor (brute force)
    x = np.random.default_rng(3).uniform(size=(200, 2))
    nearest = np.argmin(((x[:, None] - coords[None]) ** 2).sum(-1), axis=1)
    np.testing.assert_array_equal(b(x, 100.0), T[8, nearest])


def test_temperature_sensors_step_and_horizon(fields) -> None:
    short = B.make("temperature-sensors", path=str(fields["intel"]), step_seconds=5.0)
    assert short.horizon == 720.0 and short.lengthscale_time == pytest.approx(396.0 * 720 / 1800)
    h = B.make("temperature-sensors", path=str(fields["intel"]), horizon=288.0)
    assert h.step_seconds == 2.0
    with pytest.raises(ValueError, match="exceeds"):
        B.make("temperature-sensors", path=str(fields["intel"]), horizon=800.0, step_seconds=5.0)
    z = np.array([short.field.original[3, 0], short.field.original[3, 1], 600.0 * 9 + 1.0])
    assert short.raw(z) == -short.field.values[9, 3]


# -- ozone ----------------------------------------------------------------------------------------
def test_ozone_field_from_mirror(ozone) -> None:
    assert ozone["ozone"].shape == (28, 62)
    assert ozone["ozone"].attrs["units"] == "ppm"


def test_ozone_sensors_candidates_values_and_regret(fields, ozone) -> None:
    b = B.make("ozone-sensors", path=str(fields["ozone"]))
    V = 1000.0 * ozone["ozone"].values.T  # (day, site) in ppb
    coords = np.c_[ozone["x"].values, ozone["y"].values]
    assert b.candidates.shape == (28, 2)
    assert (b.step_seconds, b.horizon, b.cost, b.noise_var) == (10.0, 620.0, 10.0, 1.0)
    for k in (0, 1, 30, 61):
        for frac in (0.0, 0.5):
            t = (k + frac) * 10.0
            np.testing.assert_allclose(b(coords, t), V[k], rtol=1e-15)
            assert b.f_star(t) == pytest.approx(V[k].max(), rel=1e-15)
            assert b(b.argmax(t), t) == b.f_star(t)
    ppm = B.make("ozone-sensors", path=str(fields["ozone"]), units="ppm", horizon=310.0)
    assert ppm.step_seconds == 5.0 and ppm.noise_var == pytest.approx(1e-6)
    np.testing.assert_array_equal(ppm(coords, 0.0), ozone["ozone"].values[:, 0])
    with pytest.raises(ValueError, match="valid units"):
        B.make("ozone-sensors", path=str(fields["ozone"]), units="ug/m3")
    with pytest.raises(ValueError, match="valid cost tables"):
        B.make("ozone-sensors", path=str(fields["ozone"]), cost_table="nope")


def test_ozone_missing_days_are_filled_like_the_pipeline(fields, ozone) -> None:
    raw = _open(fields["ozone_nan"])["ozone"].values
    n_nan = int(np.isnan(raw).sum())
    assert n_nan > 0
    b = B.make("ozone-sensors", path=str(fields["ozone_nan"]), units="ppm")
    np.testing.assert_allclose(b.field.values, ozone["ozone"].values.T, rtol=1e-15)
    assert b.describe()["data"]["n_filled_on_load"] == n_nan
    with pytest.raises(ValueError, match="no ozone value"):
        fill_missing(np.array([[1.0, np.nan], [2.0, np.nan]]))


def test_ozone_continuous_is_exact(fields, ozone) -> None:
    b = B.make("ozone", path=str(fields["ozone"]))
    V = 1000.0 * ozone["ozone"].values.T
    coords = np.c_[ozone["x"].values, ozone["y"].values]
    assert b.horizon == 610.0 and b.cost == 10.0
    np.testing.assert_allclose(b(coords, 0.0), V[0], rtol=1e-15)
    np.testing.assert_allclose(b(coords, 610.0), V[-1], rtol=1e-15)
    rng = np.random.default_rng(5)
    for t in (0.0, 123.4, 335.0, 609.9):
        v = np.array([np.interp(t / 10.0, np.arange(62), V[:, i]) for i in range(28)])
        assert b.f_star(t) == pytest.approx(v.max(), rel=1e-13)
        x = rng.uniform(size=(1000, 2))
        vals = b(x, t)
        np.testing.assert_allclose(vals, idw(coords, v, x), rtol=1e-12)
        assert vals.max() <= b.f_star(t) + 1e-9
    lon, lat = ozone["longitude"].values[4], ozone["latitude"].values[4]
    assert b.raw(np.array([lon, lat, 20.0])) == pytest.approx(-V[20, 4], rel=1e-12)


def test_ozone_bad_path(tmp_path) -> None:
    missing = tmp_path / "ozone_nyc-2022-2023.nc"
    with pytest.raises(FileNotFoundError, match="prepare-ozone"):
        B.make("ozone-sensors", path=str(missing))


# -- end to end ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "key", "horizon"),
    [
        ("temperature-sensors", "intel", 300.0),
        ("temperature", "intel", 300.0),
        ("ozone-sensors", "ozone", 310.0),
    ],
)
def test_simulate_end_to_end(fields, name, key, horizon) -> None:
    import tvbo

    ds = tvbo.simulate(
        name,
        "gp-ucb",
        horizon=horizon,
        seed=1,
        max_iterations=25,
        benchmark_options={"path": str(fields[key])},
    )
    regret = ds["regret"].values.ravel()
    regret = regret[np.isfinite(regret)]
    assert len(regret) > 15
    assert regret.min() >= -1e-9
    assert np.all(np.isfinite(ds["regret_held"].values)) and ds["regret_held"].values.min() >= -1e-9
    config = json.loads(ds.attrs["config_json"])
    assert config["benchmark"]["data"]["path"] == str(fields[key])


# -- the generic field ----------------------------------------------------------------------------
def _toy_field(**changes):
    from tvbo.benchmarks.realdata import SensorField

    spec = dict(
        values=np.array([[1.0, 3.0, 2.0], [4.0, 0.0, 1.0]]),
        coords=np.array([[0.0, 0.0], [1.0, 0.5], [0.25, 1.0]]),
        original=np.array([[10.0, 0.0], [30.0, 5.0], [15.0, 10.0]]),
        times=np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]"),
        time_step=1.0,
        time_unit="day",
        sensor_ids=("a", "b", "c"),
        value_name="v",
        value_unit="u",
        coord_names=("e", "n"),
        coord_units=("m", "m"),
    )
    spec.update(changes)
    return SensorField(**spec)


def test_sensor_field_validation_and_idw_power() -> None:
    from tvbo.benchmarks.realdata import InterpolatedField

    with pytest.raises(ValueError, match="share a location"):
        _toy_field(coords=np.array([[0.0, 0.0], [0.0, 0.0], [0.5, 0.5]]))
    with pytest.raises(ValueError, match="finite"):
        _toy_field(values=np.array([[1.0, np.nan, 2.0], [4.0, 0.0, 1.0]]))
    data = _toy_field()
    np.testing.assert_allclose(data.to_normalised(data.original), data.coords, atol=1e-15)
    assert data.original_bounds() == [[10.0, 30.0], [0.0, 10.0]]
    b = InterpolatedField(
        data,
        name="toy",
        idw_power=1.0,
        index_rate=1.0 / 10.0,
        horizon=10.0,
        noise_var=0.0,
        cost=0.0,
        oracle_grid_step=5.0,
    )
    x = np.random.default_rng(2).uniform(size=(500, 2))
    for t, v in ((0.0, [1.0, 3.0, 2.0]), (5.0, [2.5, 1.5, 1.5]), (10.0, [4.0, 0.0, 1.0])):
        np.testing.assert_allclose(b(x, t), idw(data.coords, np.array(v), x, p=1.0), rtol=1e-12)
        assert b.f_star(t) == max(v)
    with pytest.raises(ValueError, match="samples"):
        InterpolatedField(data, name="toy", index_rate=1.0, horizon=10.0, noise_var=0.0, cost=0.0)


# -- the oracle's batched refinement at a run's query times -------------------------------------
def _realdata_benchmarks(fields) -> list[B.Benchmark]:
    return [B.make("temperature", path=str(fields["intel"])),
            B.make("temperature-sensors", path=str(fields["intel"])),
            B.make("ozone", path=str(fields["ozone"])),
            B.make("ozone-sensors", path=str(fields["ozone"]))]


def _queries(bench: B.Benchmark, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """Query times with repeats and grid times, and points with sensor locations among them."""
    rng = np.random.default_rng(5)
    t = np.sort(rng.uniform(0.0, bench.horizon, n))
    t[10:14] = t[10]  # one time queried four times
    t[20] = bench.oracle.times[3]  # grid times
    t[-1] = bench.horizon
    X = rng.uniform(size=(n, bench.d))
    X[::7] = bench.exact_argmax_many(t[::7])  # on the best sensor: a tie with f*
    X[20] = bench.exact_argmax(t[20])
    return t, X


def test_batched_rows_are_the_single_values(fields) -> None:
    """``batch_rows_exact``: one evaluation of a batch gives each row's single float, the
    premise of the oracle's batched refinement; and the vectorised argmax is the per-time one."""
    for bench in _realdata_benchmarks(fields):
        assert bench.batch_rows_exact
        t, X = _queries(bench)
        single = np.array([bench.oracle_value(x, ti) for x, ti in zip(X, t, strict=True)])
        assert np.array_equal(bench.oracle_values(X, t), single), bench.name
        per_time = np.array([bench.exact_argmax(ti) for ti in t])
        assert np.array_equal(bench.exact_argmax_many(t), per_time), bench.name
        # the engine's open-loop path: observe_many is one observe per row, noise included
        rng_rows, rng_one = np.random.default_rng(2), np.random.default_rng(2)
        f, y = bench.observe_many(X, t, rng_rows)
        pairs = np.array([bench.observe(x, ti, rng_one) for x, ti in zip(X, t, strict=True)])
        assert np.array_equal(f, pairs[:, 0]) and np.array_equal(y, pairs[:, 1]), bench.name


def test_open_loop_runs_on_real_data_are_the_event_loop_runs(fields, monkeypatch) -> None:
    """Temperature's floor rows take the open-loop path with batched observations: the run
    files equal the event loop's (tests/sim/test_open_loop.py for the synthetic ones)."""
    import xarray.testing

    from tests.sim.test_open_loop import run_both

    for name in ("temperature", "temperature-sensors"):
        fast, loop = run_both(monkeypatch, name, "centre", horizon=3.0,
                              benchmark_options={"path": str(fields["intel"])})
        monkeypatch.undo()
        assert fast.sizes["iteration"] > 100
        xarray.testing.assert_identical(fast, loop)


def test_batched_exact_refinement_is_refine_query_by_query(fields) -> None:
    """f* at a run's query times from the batched exact path equals one ``refine`` per query in
    query order, bit for bit, and leaves the same caches: also when a query beats a cached
    maximum (a grid value lowered on purpose), which the next query at that time must see."""
    for batched, one_by_one in zip(_realdata_benchmarks(fields), _realdata_benchmarks(fields),
                                   strict=True):
        t, X = _queries(batched)
        k = batched.oracle._grid_index(float(t[20]))
        lowered = float(batched.oracle.grid()[2][k]) - 1.0
        for b in (batched, one_by_one):
            b.oracle.grid()  # build, then lower the grid maximum at the queried grid time
            b.oracle._F[k] = lowered
        got = batched.refine_f_star_many(t, X)
        want = np.array([one_by_one.refine_f_star(ti, x) for ti, x in zip(t, X, strict=True)])
        assert np.array_equal(got, want), batched.name
        assert batched.oracle._F[k] > lowered  # the query beat it and was stored
        assert np.array_equal(batched.oracle._F, one_by_one.oracle._F)
        assert batched.oracle._off.keys() == one_by_one.oracle._off.keys()
        for key, (x, f) in one_by_one.oracle._off.items():
            x_batched, f_batched = batched.oracle._off[key]
            assert f == f_batched and np.array_equal(x, x_batched)


def test_the_batch_capability_is_not_an_oracle_setting(fields) -> None:
    """``batch_rows_exact`` decides no f* value: f* tables built before it existed stay valid
    (a setting named ``oracle_*`` would be hashed into the tables' check and reject them)."""
    from tvbo.benchmarks.oracle_table import oracle_settings

    settings = oracle_settings(B.make("temperature", path=str(fields["intel"])))
    assert "batch_rows_exact" not in settings["benchmark_settings"]
    assert settings["benchmark_settings"]["oracle_exact"] is True
