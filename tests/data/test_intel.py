"""tvbo.data.intel: the parser on real (and corrupted real) lines, preparation on the mirror."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from tests.mirror import MIRROR_ROOT
from tvbo.data.__main__ import main
from tvbo.data.intel import parse_intel, prepare_intel, read_mote_locations

FIXTURE = Path(__file__).parents[1] / "fixtures" / "data" / "intel_lines.txt"
MIRROR = MIRROR_ROOT / "intel"
MIRROR_DATA = MIRROR / "data_2004-03-04_to_08.txt.gz"
LOCS = MIRROR / "mote_locs.txt"
needs_mirror = pytest.mark.skipif(not MIRROR.is_dir(), reason="offline data mirror not present")


def _lines() -> list[str]:
    return FIXTURE.read_text().splitlines()


def _fields(line: str) -> list[str]:
    return line.split(" ")


@pytest.fixture(scope="module")
def locations() -> pd.DataFrame:
    if not LOCS.is_file():
        pytest.skip("offline data mirror not present")
    return read_mote_locations(LOCS)


@pytest.fixture(scope="module")
def mirror_readings():
    if not MIRROR_DATA.is_file():
        pytest.skip("offline data mirror not present")
    return parse_intel(MIRROR_DATA)


def test_real_lines_parse_with_empty_fields_in_place():
    lines = _lines()
    readings, counts = parse_intel("\n".join(lines).encode())
    assert counts["kept"] == counts["lines"] == len(lines) == len(readings)
    assert sum(counts[k] for k in counts if k not in ("lines", "kept")) == 0
    # Mote 28's lines have an EMPTY light field: light is missing, voltage is NOT shifted.
    empty_light = [ln for ln in lines if "  " in ln]
    assert empty_light, "fixture must contain lines with an empty field"
    first = _fields(empty_light[0])
    row = readings[(readings.mote_id == 28)].iloc[0]
    assert np.isnan(row.light)
    assert row.voltage == pytest.approx(float(first[7]))
    assert row.humidity == pytest.approx(float(first[5]))
    assert readings["time"].is_monotonic_increasing


def test_corrupted_real_lines_are_dropped_and_counted():
    lines = _lines()
    good = lines[:]
    base = _fields(lines[3])  # a full 8-field line of mote 1
    corrupted = {
        "short_line": " ".join(base[:5]),
        "too_many_fields": " ".join([*base, "1.5"]),
        "bad_timestamp": " ".join(["2004-13-06", *base[1:]]),
        "bad_mote_id": " ".join([*base[:3], "x1", *base[4:]]),
        "junk_mote_id": " ".join([*base[:3], "65407", *base[4:]]),
        "missing_temperature": " ".join([*base[:4], "", *base[5:]]),
    }
    mixed = good[::-1] + list(corrupted.values()) + [""] + good[:2][::-1]
    readings, counts = parse_intel(("\n".join(mixed) + "\n").encode())
    expected = {reason: 1 for reason in corrupted}
    expected["short_line"] = 2  # the blank line is a short line too (no field at all)
    assert {k: counts[k] for k in expected} == expected
    assert counts["kept"] == len(good) + 2 == len(readings)
    assert readings["time"].is_monotonic_increasing
    assert set(readings.mote_id) == {1, 2, 3, 28, 54}
    # A trailing empty field is tolerated; leading/trailing whitespace is not collapsed.
    readings2, counts2 = parse_intel((lines[3] + " \n").encode())
    assert counts2["kept"] == 1 and readings2.temperature.iloc[0] == float(base[4])


def test_gzip_file_and_bytes_parse_identically(tmp_path):
    raw = FIXTURE.read_bytes()
    gz = tmp_path / "lines.txt.gz"
    gz.write_bytes(gzip.compress(raw))
    a, ca = parse_intel(gz)
    b, cb = parse_intel(raw)
    pd.testing.assert_frame_equal(a, b)
    assert ca == cb


def test_binning_interpolation_and_coordinates_by_hand(locations):
    lines = _lines()
    readings, counts = parse_intel("\n".join(reversed(lines)).encode())
    ds = prepare_intel(readings, locations, dates=["2004-03-06"], coverage=2 / 144, dropped=counts)
    assert list(ds.mote_id.values) == [1, 28]  # only they have 2 of 144 bins
    assert ds.sizes == {"time": 144, "sensor": 2}
    by_mote: dict[tuple[int, str], list[float]] = {}
    for line in lines:
        f = _fields(line)
        by_mote.setdefault((int(f[3]), f[1][:4]), []).append(float(f[4]))  # "00:0" / "00:3"
    for j, mote in enumerate([1, 28]):
        first, later = np.mean(by_mote[(mote, "00:0")]), np.mean(by_mote[(mote, "00:3")])
        col = ds.temperature.values[:, j]
        assert col[0] == pytest.approx(first) and col[3] == pytest.approx(later)
        assert col[1] == pytest.approx(first + (later - first) / 3)  # linear in time
        assert np.allclose(col[4:], later)  # constant after the last reading
        assert list(ds.observed.values[:, j].nonzero()[0]) == [0, 3]
        assert ds.n_readings.values[0, j] == len(by_mote[(mote, "00:0")])
    assert ds.attrs["n_filled"] == 2 * 142
    # 'all': min-max over the 54 motes of mote_locs.txt, recomputed from the file itself.
    table = np.loadtxt(LOCS)
    xs, ys = table[:, 1], table[:, 2]
    x1 = table[table[:, 0] == 1][0]
    assert ds.x.values[0] == pytest.approx((x1[1] - xs.min()) / (xs.max() - xs.min()))
    assert ds.y.values[0] == pytest.approx((x1[2] - ys.min()) / (ys.max() - ys.min()))
    sel = prepare_intel(readings, locations, dates=["2004-03-06"], coverage=2 / 144,
                        normalise="selected")  # fmt: skip
    assert sorted(sel.x.values) == [0.0, 1.0] and sorted(sel.y.values) == [0.0, 1.0]


def test_implausible_readings_are_dropped_and_counted(locations):
    lines = _lines()
    f = _fields(lines[3])
    hot = " ".join([*f[:4], "122.153", *f[5:]])
    readings, counts = parse_intel("\n".join([*lines, hot]).encode())
    ds = prepare_intel(readings, locations, dates=["2004-03-06"], coverage=2 / 144, dropped=counts)
    assert ds.attrs["dropped_implausible_temperature"] == 1
    assert float(ds.temperature.max()) < 60
    wide = prepare_intel(readings, locations, dates=["2004-03-06"], coverage=2 / 144,
                         temperature_range=(-10, 130))  # fmt: skip
    assert wide.attrs["dropped_implausible_temperature"] == 0
    assert float(wide.temperature.max()) > 30


def test_bad_options_give_clear_errors(locations):
    readings, _ = parse_intel(FIXTURE.read_bytes())
    with pytest.raises(ValueError, match="divide a day"):
        prepare_intel(readings, locations, dates=["2004-03-06"], bin_minutes=7)
    with pytest.raises(ValueError, match="no readings on dates"):
        prepare_intel(readings, locations, dates=["2004-02-28"])
    with pytest.raises(ValueError, match="no mote has"):
        prepare_intel(readings, locations, dates=["2004-03-06"], coverage=0.9)
    with pytest.raises(ValueError, match="normalise"):
        prepare_intel(readings, locations, dates=["2004-03-06"], normalise="box")
    with pytest.raises(ValueError, match="bad date"):
        prepare_intel(readings, locations, dates=["2004-03-06T12:00"])


@needs_mirror
def test_mirror_has_52_motes_and_a_complete_2004_03_06(mirror_readings, locations):
    readings, counts = mirror_readings
    assert counts["lines"] == 476_518
    assert sorted(readings.mote_id.unique()) == [m for m in range(1, 55) if m not in (5, 15)]
    ds = prepare_intel(readings, locations, dates=["2004-03-06"], dropped=counts)
    assert ds.attrs["n_motes_present"] == 52
    assert ds.sizes == {"time": 144, "sensor": 52}
    assert int(ds.observed.sum()) == 144 * 52 and ds.attrs["n_filled"] == 0  # no missing bin
    assert np.all(np.diff(ds.time.values) == np.timedelta64(10, "m"))
    assert ds.time.values[0] == np.datetime64("2004-03-06T00:00")
    assert -10 <= float(ds.temperature.min()) and float(ds.temperature.max()) <= 60
    assert np.all((ds.x >= 0) & (ds.x <= 1) & (ds.y >= 0) & (ds.y <= 1))


@needs_mirror
def test_mirror_bin_mean_and_outliers_match_a_plain_text_scan(mirror_readings, locations):
    readings, counts = mirror_readings
    temps_noon, hot = [], 0
    with gzip.open(MIRROR_DATA, "rt") as fh:
        for line in fh:
            if not line.startswith("2004-03-08"):
                continue
            f = line.rstrip("\n").split(" ")
            t = float(f[4])
            hot += not (-10 <= t <= 60)
            if f[3] == "7" and "12:00:00" <= f[1] < "12:10:00" and -10 <= t <= 60:
                temps_noon.append(t)
    ds = prepare_intel(readings, locations, dates=["2004-03-08"], dropped=counts)
    assert ds.attrs["dropped_implausible_temperature"] == hot > 0
    j = int(np.flatnonzero(ds.mote_id.values == 7)[0])
    noon = ds.temperature.sel(time=np.datetime64("2004-03-08T12:00")).values[j]
    assert noon == pytest.approx(np.mean(temps_noon))


@needs_mirror
def test_cli_writes_the_documented_netcdf(tmp_path):
    out = tmp_path / "intel" / "intel_2004-03-07.nc"
    code = main(["prepare-intel", "--data", str(MIRROR_DATA), "--locs", str(LOCS),
                 "--dates", "2004-03-07", "--out", str(out)])  # fmt: skip
    assert code == 0
    with xr.open_dataset(out) as ds:
        assert ds.temperature.dims == ("time", "sensor")
        assert {"x", "y", "mote_id", "elapsed"} <= set(ds.coords)
        assert ds.attrs["source_sha256"].startswith("5efc3a85")
        assert ds.attrs["temperature_min"] == -10 and ds.attrs["temperature_max"] == 60
        assert "90%" in ds.attrs["selection_rule"]
        assert "dropped_junk_mote_id" in ds.attrs
        assert not np.isnan(ds.temperature.values).any()
    assert not list(out.parent.glob("*.part"))
