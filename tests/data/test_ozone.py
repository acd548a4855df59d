"""tvbo.data.ozone: EPA daily rows (real + modified copies), the mirror field, NYdata agreement."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from tests.mirror import MIRROR_ROOT
from tvbo.data.__main__ import main
from tvbo.data.ozone import (
    EPA_COLUMNS,
    MIRROR_CBSA,
    daily_values,
    nydata_field,
    prepare_ozone,
    prepare_ozone_files,
    read_epa_daily,
    read_nydata,
)

FIXTURE = Path(__file__).parents[1] / "fixtures" / "data" / "epa_daily_rows.csv"
MIRROR = MIRROR_ROOT / "ozone"
MIRROR_ZIP = MIRROR / "daily_44201_2006_nys_subset.zip"
NYDATA = MIRROR / "NYdata.txt.gz"
needs_mirror = pytest.mark.skipif(not MIRROR.is_dir(), reason="offline data mirror not present")
OPTS = {"years": [2006], "cbsa": MIRROR_CBSA}


@pytest.fixture
def rows() -> pd.DataFrame:
    return read_epa_daily(FIXTURE)


def _row(frame: pd.DataFrame, site: str, day: str) -> pd.DataFrame:
    return frame[(frame["Site Num"] == site) & (frame["Date Local"] == day)].copy()


def test_reader_keeps_codes_and_event_none_as_strings(rows):
    assert tuple(rows.columns) == EPA_COLUMNS and len(EPA_COLUMNS) == 29
    assert set(rows["Site Num"]) == {"0001", "0002"}
    assert set(rows["Event Type"]) == {"None"}
    values, counts = daily_values(rows, **OPTS)
    assert list(values.site_id.unique()) == ["36-999-0001", "36-999-0002"]
    assert counts["rows"] == 6 and len(values) == 6


def test_one_value_per_site_and_day(rows):
    extra = []
    poc2 = _row(rows, "0001", "2006-07-01").assign(POC="2", **{"1st Max Value": "0.099"})
    std08 = _row(rows, "0002", "2006-07-02").assign(
        **{"Pollutant Standard": "Ozone 8-hour 2008", "1st Max Value": "0.011"}
    )
    only08 = _row(rows, "0002", "2006-07-03").assign(
        **{"Pollutant Standard": "Ozone 8-hour 2008", "1st Max Value": "0.022"}
    )
    included = _row(rows, "0001", "2006-07-03").assign(
        **{"Event Type": "Included", "1st Max Value": "0.081"}
    )
    excluded = included.assign(**{"Event Type": "Excluded", "1st Max Value": "0.041"})
    hourly = _row(rows, "0001", "2006-07-02").assign(
        **{"Sample Duration": "1 HOUR", "Pollutant Standard": "Ozone 1-hour 1979",
           "1st Max Value": "0.120"}
    )  # fmt: skip
    elsewhere = _row(rows, "0002", "2006-07-01").assign(**{"CBSA Name": "Albany, NY"})
    extra = [poc2, std08, only08, included, excluded, hourly, elsewhere]
    base = rows[
        ~((rows["Site Num"] == "0002") & (rows["Date Local"] == "2006-07-03"))
        & ~((rows["Site Num"] == "0001") & (rows["Date Local"] == "2006-07-03"))
    ]
    frame = pd.concat([base, *extra], ignore_index=True)
    values, counts = daily_values(frame, **OPTS)
    got = {(r.site_id[-1], str(r.date.date())): r.value for r in values.itertuples()}
    original = {
        (r["Site Num"][-1], r["Date Local"]): float(r["1st Max Value"]) for _, r in rows.iterrows()
    }
    assert len(got) == 6
    assert got[("1", "2006-07-01")] == original[("1", "2006-07-01")]  # lowest POC
    assert got[("2", "2006-07-02")] == original[("2", "2006-07-02")]  # 2015 beats 2008
    assert got[("2", "2006-07-03")] == 0.022  # 2008 when it is the only 8-hour standard
    assert got[("1", "2006-07-03")] == 0.081  # Included kept, Excluded dropped
    assert got[("1", "2006-07-02")] == original[("1", "2006-07-02")]  # 1-hour row ignored
    assert counts["not_8_hour"] == 1 and counts["outside_region"] == 1
    assert counts["event_type"] == 1 and counts["lower_ranked_standard"] == 1
    assert counts["other_poc"] == 1
    mean, _ = daily_values(frame, poc="mean", **OPTS)
    avg = mean[(mean.site_id == "36-999-0001") & (mean.date == "2006-07-01")].value.item()
    assert avg == pytest.approx((original[("1", "2006-07-01")] + 0.099) / 2)


def test_value_is_the_daily_max_not_the_mean(rows):
    frame = rows.assign(**{"Arithmetic Mean": "0.001"})
    values, _ = daily_values(frame, **OPTS)
    assert np.allclose(values.value, rows["1st Max Value"].astype(float))


def test_region_filters_and_errors(rows):
    box = [-74.0, 40.5, -73.5, 41.0]  # around site 0002 (40.866 N, -73.881 E) only
    ds = prepare_ozone(rows, years=[2006], cbsa=None, bbox=box)
    assert list(ds.site_id.values) == ["36-999-0002"]
    with pytest.raises(ValueError, match="similar names"):
        daily_values(rows, years=[2006], cbsa="New York-Newark-Jersey City, NY-NJ-PA")
    with pytest.raises(ValueError, match="no 8-hour ozone rows"):
        daily_values(rows, years=[2007], cbsa=MIRROR_CBSA)
    with pytest.raises(ValueError, match="bbox"):
        daily_values(rows, years=[2006], cbsa=None, bbox=[1, 2, 0, 3])
    with pytest.raises(ValueError, match="event types"):
        daily_values(rows, event_types=["Maybe"], **OPTS)


def test_coverage_and_fill_on_a_gap(rows):
    gap = rows[~((rows["Site Num"] == "0002") & (rows["Date Local"] == "2006-07-02"))]
    ds = prepare_ozone(gap, coverage=0.6, **OPTS)
    site2 = ds.sel(site=1)
    v = rows[rows["Site Num"] == "0002"]["1st Max Value"].astype(float).to_numpy()
    assert site2.observed.values.tolist() == [1, 0, 1]
    assert site2.ozone.values[1] == pytest.approx((v[0] + v[2]) / 2)
    assert ds.attrs["n_filled"] == 1
    strict = prepare_ozone(gap, coverage=1.0, **OPTS)
    assert list(strict.site_id.values) == ["36-999-0001"]
    raw = prepare_ozone(gap, coverage=0.6, fill=False, **OPTS)
    assert np.isnan(raw.ozone.values[1, 1])


@needs_mirror
def test_mirror_field_is_28_sites_by_62_days_and_agrees_with_nydata():
    ds = prepare_ozone_files([MIRROR_ZIP], **OPTS)
    assert ds.sizes == {"site": 28, "day": 62}
    assert (
        str(ds.day.values[0])[:10] == "2006-07-01" and str(ds.day.values[-1])[:10] == "2006-08-31"
    )
    ny = nydata_field(NYDATA)
    assert ny.sizes == {"site": 28, "day": 62}
    # match sites by coordinates (independent of the placeholder site numbers)
    order = [
        int(np.flatnonzero((ny.latitude.values == la) & (ny.longitude.values == lo))[0])
        for la, lo in zip(ds.latitude.values, ds.longitude.values, strict=True)
    ]
    ppb = ny.o8hrmax.values[order]
    missing = np.isnan(ppb)
    assert missing.sum() == 24
    assert np.array_equal(ds.observed.values == 0, missing)
    # EPA '1st Max Value' is rounded to 0.001 ppm = 1 ppb, NYdata has 0.01 ppb.
    diff = np.abs(ds.ozone.values[~missing] * 1000 - ppb[~missing])
    assert diff.max() <= 0.5 + 1e-9
    assert np.all((ds.x >= 0) & (ds.x <= 1)) and float(ds.x.max()) == 1.0


@needs_mirror
def test_nydata_reader_matches_a_plain_text_scan():
    with gzip.open(NYDATA, "rt") as fh:
        body = fh.read().splitlines()[1:]
    frame = read_nydata(NYDATA)
    assert len(frame) == len(body) == 1736
    assert int(frame.o8hrmax.isna().sum()) == sum(ln.split()[6] == "NA" for ln in body)
    assert frame.o8hrmax.iloc[2] == float(body[2].split()[6])


@needs_mirror
def test_max_sites_keeps_the_best_covered():
    ds = prepare_ozone_files([MIRROR_ZIP], max_sites=5, **OPTS)
    full = prepare_ozone_files([MIRROR_ZIP], **OPTS)
    assert ds.sizes["site"] == 5
    assert ds.coverage.min() >= np.sort(full.coverage.values)[-5]


@needs_mirror
def test_cli_prepare_ozone(tmp_path):
    out = tmp_path / "ozone_nys-2006.nc"
    code = main(["prepare-ozone", "--inputs", str(MIRROR_ZIP), "--years", "2006",
                 "--cbsa", MIRROR_CBSA, "--bbox", "None", "--max-sites", "None",
                 "--start", "None", "--end", "None", "--out", str(out)])  # fmt: skip
    assert code == 0
    with xr.open_dataset(out) as ds:
        assert ds.ozone.dims == ("site", "day") and ds.ozone.attrs["units"] == "ppm"
        assert {"latitude", "longitude", "x", "y", "site_id"} <= set(ds.coords)
        assert ds.attrs["value_column"] == "1st Max Value"
        assert ds.attrs["source_sha256"].startswith("41aff39b")
