"""EPA daily ozone (AirData ``daily_44201_YYYY.zip``): parse, select, prepare a site x day field.

The EPA daily file has 29 columns with a quoted header; codes (State Code, County Code, Site Num,
Parameter Code) are zero-padded strings and must be read as strings, and the Event Type value
``"None"`` must not be read as a missing value (pandas does that by default). A site is
``"State-County-Site"``, e.g. ``36-061-0135``.

Which value: rows with Sample Duration ``8-HR RUN AVG BEGIN HOUR`` hold the 8-hour running
averages of one day; their ``1st Max Value`` is the daily MAXIMUM 8-hour average (ppm, the
quantity of the ozone standard and of spTimer's ``o8hrmax``), while ``Arithmetic Mean`` is the
mean of the day's 8-hour averages. So ``1st Max Value`` is used.

Several rows can exist per site and day; one value per site and day is kept by these rules:

* pollutant standard: rows are ranked by ``standards`` (default prefers ``Ozone 8-hour 2015``,
  then the 2008 and 1997 standards); per site and day only the best-ranked standard present is
  kept, other standards are dropped (the daily 8-hour maximum is the same for all 8-hour
  standards; only exceedance bookkeeping differs);
* event type: ``None`` (no exceptional event) and ``Included`` (events flagged, data included)
  are kept, ``Excluded`` (the same day with the flagged hours removed) is dropped, because the
  field should be what the sensors measured (configurable with ``event_types``);
* several instruments (POC) at one site: the lowest POC is kept (``poc="min"``), or the POCs are
  averaged (``poc="mean"``).

Region: a CBSA name (default ``New York-Newark-Jersey City, NY-NJ-PA``) and/or a lon/lat box.
Days: every calendar day from the first to the last date with a value in the region and years
(or ``start``/``end``). Sites are kept if they have a value on >= ``coverage`` of those days
(default 0.9), optionally only the ``max_sites`` best covered. Remaining gaps are filled by
linear interpolation in time per site (constant at the edges) unless ``fill=False``; the
``observed`` mask records them. Coordinates: latitude/longitude (degrees) and x (from longitude),
y (from latitude) min-max normalised to [0, 1] over the selected sites.
"""

from __future__ import annotations

import gzip
import json
import os
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from tvbo.data.download import sha256_file
from tvbo.data.intel import write_netcdf

__all__ = [
    "DEFAULT_CBSA",
    "DEFAULT_EVENT_TYPES",
    "DEFAULT_STANDARDS",
    "EPA_COLUMNS",
    "MIRROR_CBSA",
    "VALUE_COLUMN",
    "daily_values",
    "nydata_field",
    "ozone_url",
    "prepare_ozone",
    "prepare_ozone_files",
    "read_epa_daily",
    "read_nydata",
]

EPA_COLUMNS = (
    "State Code", "County Code", "Site Num", "Parameter Code", "POC", "Latitude", "Longitude",
    "Datum", "Parameter Name", "Sample Duration", "Pollutant Standard", "Date Local",
    "Units of Measure", "Event Type", "Observation Count", "Observation Percent",
    "Arithmetic Mean", "1st Max Value", "1st Max Hour", "AQI", "Method Code", "Method Name",
    "Local Site Name", "Address", "State Name", "County Name", "City Name", "CBSA Name",
    "Date of Last Change",
)  # fmt: skip
DEFAULT_CBSA = "New York-Newark-Jersey City, NY-NJ-PA"
#: CBSA placeholder of the offline mirror's EPA-layout subset of spTimer's NYdata.
MIRROR_CBSA = "NY State subset (spTimer NYdata)"
DEFAULT_STANDARDS = ("Ozone 8-hour 2015", "Ozone 8-hour 2008", "Ozone 8-hour 1997")
DEFAULT_EVENT_TYPES = ("None", "Included")
EVENT_TYPES = ("None", "Included", "Excluded")
VALUE_COLUMN = "1st Max Value"
EIGHT_HOUR = "8-HR RUN AVG BEGIN HOUR"
OZONE_PARAMETER = "44201"
FIRST_YEAR = 1980  # first year of EPA AirData pre-generated daily files
URL_TEMPLATE = "https://aqs.epa.gov/aqsweb/airdata/daily_44201_{year}.zip"
POC_RULES = ("min", "mean")
_REFETCH = (
    "expected a complete EPA daily file: delete it (and its .manifest.json) and download again"
)


def ozone_url(year: int, template: str = URL_TEMPLATE) -> str:
    """URL of the EPA daily ozone file of ``year``; years before 1980 have no file."""
    year = int(year)
    this_year = pd.Timestamp.now(tz="UTC").year
    if not FIRST_YEAR <= year <= this_year:
        raise ValueError(
            f"no EPA daily ozone file for year {year}: files exist for {FIRST_YEAR}..{this_year}"
        )
    if "{year}" not in template:
        raise ValueError(f"url_template must contain '{{year}}', got {template!r}")
    try:
        return template.format(year=year)
    except (KeyError, IndexError, ValueError) as exc:  # another {field}, a stray brace
        raise ValueError(
            f"url_template may hold no placeholder but '{{year}}', got {template!r} ({exc!r})"
        ) from None


def read_epa_daily(path: str | os.PathLike[str]) -> pd.DataFrame:
    """All rows of an EPA daily file (``.zip`` holding one ``.csv``, or the ``.csv``), as strings.

    Every column is read as a string, so zero-padded codes survive and ``"None"`` stays a value.
    """
    path = Path(path)
    options = {"dtype": str, "keep_default_na": False}
    if path.suffix == ".zip":
        try:
            with zipfile.ZipFile(path) as zf:
                members = [n for n in zf.namelist() if n.lower().endswith(".csv")]
                if len(members) != 1:
                    raise ValueError(
                        f"{path}: expected one .csv member in the zip, found {zf.namelist()}"
                    )
                # CRCs first: a corrupt member otherwise surfaces as a pandas tokenizer error
                bad = zf.testzip()
                if bad is not None:
                    raise ValueError(f"{path}: zip member {bad!r} fails its CRC check; {_REFETCH}")
                with zf.open(members[0]) as fh:
                    frame = pd.read_csv(fh, **options)
        except (zipfile.BadZipFile, EOFError, zlib.error) as exc:
            size = path.stat().st_size
            raise ValueError(
                f"{path}: corrupt or truncated zip file ({size} bytes; {type(exc).__name__}: "
                f"{exc}); {_REFETCH}"
            ) from None
    else:
        try:
            frame = pd.read_csv(path, **options)
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise ValueError(
                f"{path}: corrupt or truncated compressed file ({type(exc).__name__}: {exc}); "
                f"{_REFETCH}"
            ) from None
        except pd.errors.EmptyDataError:
            raise ValueError(f"{path}: empty file; expected an EPA daily CSV") from None
    missing = [c for c in EPA_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: not an EPA daily file; missing columns {missing}")
    return frame


def _region_mask(frame: pd.DataFrame, cbsa: str | None, bbox: Sequence[float] | None) -> np.ndarray:
    mask = np.ones(len(frame), dtype=bool)
    if cbsa is not None:
        mask &= (frame["CBSA Name"] == cbsa).to_numpy()
        if not mask.any():
            names = sorted(n for n in frame["CBSA Name"].unique() if n)
            hint = [n for n in names if cbsa.split(",")[0].split("-")[0].lower() in n.lower()]
            raise ValueError(
                f"no rows with CBSA Name {cbsa!r}; similar names: {hint[:10] or names[:10]}"
            )
    if bbox is not None:
        if len(bbox) != 4 or not (bbox[0] < bbox[2] and bbox[1] < bbox[3]):
            raise ValueError(
                f"bbox must be [lon_min, lat_min, lon_max, lat_max] with min < max, got {bbox}"
            )
        lat = pd.to_numeric(frame["Latitude"], errors="coerce").to_numpy()
        lon = pd.to_numeric(frame["Longitude"], errors="coerce").to_numpy()
        mask &= (lon >= bbox[0]) & (lon <= bbox[2]) & (lat >= bbox[1]) & (lat <= bbox[3])
    return mask


def daily_values(
    frame: pd.DataFrame,
    *,
    years: Sequence[int],
    cbsa: str | None = DEFAULT_CBSA,
    bbox: Sequence[float] | None = None,
    standards: Sequence[str] = DEFAULT_STANDARDS,
    event_types: Sequence[str] = DEFAULT_EVENT_TYPES,
    poc: str = "min",
) -> tuple[pd.DataFrame, dict[str, int]]:
    """One daily 8-hour maximum (ppm) per site and day, and the rows dropped per rule.

    Returns columns ``site_id, date, value, latitude, longitude, site_name`` sorted by site and
    date. See the module docstring for the rules.
    """
    if poc not in POC_RULES:
        raise ValueError(f"poc must be one of {POC_RULES}, got {poc!r}")
    bad_events = set(event_types) - set(EVENT_TYPES)
    if bad_events:
        raise ValueError(f"unknown event types {sorted(bad_events)}; valid: {EVENT_TYPES}")
    if not standards:
        raise ValueError(f"standards must name at least one, e.g. {DEFAULT_STANDARDS}")
    counts: dict[str, int] = {"rows": len(frame)}
    steps = (
        ("other_parameter", (frame["Parameter Code"] == OZONE_PARAMETER).to_numpy()),
        ("not_8_hour", (frame["Sample Duration"] == EIGHT_HOUR).to_numpy()),
        ("outside_region", _region_mask(frame, cbsa, bbox)),
        (
            "outside_years",
            frame["Date Local"].str[:4].isin([str(int(y)) for y in years]).to_numpy(),
        ),
        ("event_type", frame["Event Type"].isin(list(event_types)).to_numpy()),
        ("other_standard", frame["Pollutant Standard"].isin(list(standards)).to_numpy()),
    )
    keep = np.ones(len(frame), dtype=bool)
    for reason, ok in steps:
        counts[reason] = int((keep & ~ok).sum())
        keep &= ok
    rows = frame[keep]
    if rows.empty:
        raise ValueError(
            f"no 8-hour ozone rows for years {list(years)}, CBSA {cbsa!r}, bbox {bbox}; "
            f"dropped per rule: {counts}"
        )
    units = set(rows["Units of Measure"])
    if units != {"Parts per million"}:
        raise ValueError(f"expected ozone in 'Parts per million', found units {sorted(units)}")
    rows = pd.DataFrame(
        {
            "site_id": rows["State Code"] + "-" + rows["County Code"] + "-" + rows["Site Num"],
            "date": pd.to_datetime(rows["Date Local"], format="%Y-%m-%d"),
            "poc": pd.to_numeric(rows["POC"]),
            "rank": rows["Pollutant Standard"].map({s: i for i, s in enumerate(standards)}),
            "event": rows["Event Type"].map({e: i for i, e in enumerate(event_types)}),
            "value": pd.to_numeric(rows[VALUE_COLUMN], errors="coerce"),
            "latitude": pd.to_numeric(rows["Latitude"]),
            "longitude": pd.to_numeric(rows["Longitude"]),
            "site_name": rows["Local Site Name"],
        }
    )
    counts["missing_value"] = int(rows["value"].isna().sum())
    rows = rows[rows["value"].notna()]
    best = rows.groupby(["site_id", "date"])["rank"].transform("min")
    counts["lower_ranked_standard"] = int((rows["rank"] != best).sum())
    rows = rows[rows["rank"] == best]
    # Included and Excluded are alternatives of one day: keep the event type listed first.
    before = len(rows)
    rows = rows.sort_values(["site_id", "date", "poc", "event"], kind="mergesort")
    rows = rows.drop_duplicates(["site_id", "date", "poc"], keep="first")
    counts["duplicate_event_rows"] = before - len(rows)
    before = len(rows)
    if poc == "min":
        rows = rows.sort_values(["site_id", "date", "poc"]).drop_duplicates(
            ["site_id", "date"], keep="first"
        )
    else:
        rows = rows.groupby(["site_id", "date"], as_index=False).agg(
            value=("value", "mean"),
            latitude=("latitude", "first"),
            longitude=("longitude", "first"),
            site_name=("site_name", "first"),
        )
    counts["other_poc"] = before - len(rows)
    out = rows[["site_id", "date", "value", "latitude", "longitude", "site_name"]]
    return out.sort_values(["site_id", "date"], ignore_index=True), counts


def prepare_ozone(
    frame: pd.DataFrame,
    *,
    years: Sequence[int],
    cbsa: str | None = DEFAULT_CBSA,
    bbox: Sequence[float] | None = None,
    coverage: float = 0.9,
    max_sites: int | None = None,
    standards: Sequence[str] = DEFAULT_STANDARDS,
    event_types: Sequence[str] = DEFAULT_EVENT_TYPES,
    poc: str = "min",
    fill: bool = True,
    start: str | None = None,
    end: str | None = None,
    source_sha256: Sequence[str] = (),
) -> xr.Dataset:
    """The ``(site, day)`` field of daily 8-hour maximum ozone (ppm); see the module docstring."""
    if not 0.0 < coverage <= 1.0:
        raise ValueError(f"coverage must be in (0, 1], got {coverage}")
    if max_sites is not None and max_sites < 1:
        raise ValueError(f"max_sites must be >= 1 or null, got {max_sites}")
    values, counts = daily_values(
        frame,
        years=years,
        cbsa=cbsa,
        bbox=bbox,
        standards=standards,
        event_types=event_types,
        poc=poc,
    )
    first = pd.Timestamp(start) if start else values["date"].min()
    last = pd.Timestamp(end) if end else values["date"].max()
    days = pd.date_range(first, last, freq="D")
    values = values[values["date"].isin(days)]
    table = values.pivot(index="site_id", columns="date", values="value").reindex(columns=days)
    cover = table.notna().mean(axis=1)
    eligible = cover[cover >= coverage]
    if eligible.empty:
        raise ValueError(
            f"no site has values on >= {coverage:.0%} of the {len(days)} days "
            f"{first.date()}..{last.date()}; best coverage {cover.max():.3f}; lower 'coverage'"
        )
    ranked = sorted(eligible.index, key=lambda s: (-eligible[s], s))
    selected = sorted(ranked[:max_sites] if max_sites is not None else ranked)
    data = table.loc[selected].to_numpy(dtype=float, copy=True)
    observed = np.isfinite(data)
    if fill:
        t = np.arange(len(days), dtype=float)
        for i in range(data.shape[0]):
            ok = observed[i]
            data[i, ~ok] = np.interp(t[~ok], t[ok], data[i, ok])
    sites = values.groupby("site_id")[["latitude", "longitude", "site_name"]].first()
    sites = sites.loc[selected]
    lat = sites["latitude"].to_numpy(float)
    lon = sites["longitude"].to_numpy(float)

    def _unit(v: np.ndarray) -> np.ndarray:
        span = v.max() - v.min()
        return (v - v.min()) / span if span > 0 else np.zeros_like(v)

    ds = xr.Dataset(
        {
            "ozone": (("site", "day"), data, {"units": "ppm", "long_name": "daily max 8-h mean"}),
            "observed": (("site", "day"), observed.astype(np.int8)),
        },
        coords={
            "site": ("site", np.arange(len(selected))),
            "day": ("day", days.to_numpy()),
            "site_id": ("site", np.array(selected, dtype=str)),
            "site_name": ("site", sites["site_name"].to_numpy(dtype=str)),
            "latitude": ("site", lat, {"units": "degrees_north"}),
            "longitude": ("site", lon, {"units": "degrees_east"}),
            "x": ("site", _unit(lon), {"long_name": "longitude min-max normalised over sites"}),
            "y": ("site", _unit(lat), {"long_name": "latitude min-max normalised over sites"}),
            "coverage": ("site", eligible[selected].to_numpy(float)),
        },
    )
    ds["observed"].attrs["long_name"] = "1 if EPA reported the day, 0 if interpolated"
    ds.attrs.update(
        {
            "title": "EPA AirData daily maximum 8-hour ozone",
            "source": "https://aqs.epa.gov/aqsweb/airdata/download_files.html",
            "source_sha256": ",".join(source_sha256),
            "value_column": VALUE_COLUMN,
            "sample_duration": EIGHT_HOUR,
            "years": ",".join(str(int(y)) for y in years),
            "cbsa": cbsa or "",
            "bbox": json.dumps(list(bbox) if bbox is not None else None),
            "standards_preference": json.dumps(list(standards)),
            "event_types_kept": json.dumps(list(event_types)),
            "poc_rule": poc,
            "coverage_threshold": float(coverage),
            "max_sites": -1 if max_sites is None else int(max_sites),
            "selection_rule": (
                f"site kept if it has a value on >= {coverage:.0%} of the {len(days)} days "
                f"{first.date()}..{last.date()}"
                + (f"; the {max_sites} best covered" if max_sites is not None else "")
            ),
            "n_sites_in_region": int(len(cover)),
            "fill_rule": "linear interpolation in time, constant at the edges" if fill else "none",
            "n_filled": int((~observed).sum()) if fill else 0,
            "dropped": json.dumps(counts, sort_keys=True),
            **{f"dropped_{k}": int(v) for k, v in counts.items() if k != "rows"},
            "n_rows": int(counts["rows"]),
        }
    )
    return ds


def prepare_ozone_files(
    paths: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str] | None = None,
    **options,
) -> xr.Dataset:
    """Read the EPA files ``paths`` (one per year), prepare with ``options``, write ``out``."""
    if not paths:
        raise ValueError("no EPA daily files given")
    frame = pd.concat([read_epa_daily(p) for p in paths], ignore_index=True)
    ds = prepare_ozone(frame, source_sha256=[sha256_file(p) for p in paths], **options)
    ds.attrs["source_files"] = ",".join(Path(p).name for p in paths)
    if out is not None:
        write_netcdf(ds, out)
    return ds


def read_nydata(path: str | os.PathLike[str]) -> pd.DataFrame:
    """spTimer's ``NYdata.txt(.gz)``: daily 8-hour maximum ozone ``o8hrmax`` in ppb.

    Returns columns ``site, longitude, latitude, date, o8hrmax`` (NaN where NA).
    """
    try:
        raw = pd.read_csv(path, sep=r"\s+", na_values=["NA"])
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise ValueError(
            f"{path}: corrupt or truncated gzip file ({type(exc).__name__}: {exc})"
        ) from None
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path}: empty file; expected spTimer's NYdata table") from None
    expected = {"s.index", "Longitude", "Latitude", "Year", "Month", "Day", "o8hrmax"}
    if not expected <= set(raw.columns):
        raise ValueError(f"{path}: missing NYdata columns {sorted(expected - set(raw.columns))}")
    date = pd.to_datetime(raw[["Year", "Month", "Day"]].rename(columns=str.lower))
    return pd.DataFrame(
        {
            "site": raw["s.index"].astype(np.int64),
            "longitude": raw["Longitude"].astype(float),
            "latitude": raw["Latitude"].astype(float),
            "date": date,
            "o8hrmax": raw["o8hrmax"].astype(float),
        }
    )


def nydata_field(path: str | os.PathLike[str]) -> xr.Dataset:
    """NYdata as a ``(site, day)`` field of ``o8hrmax`` (ppb, NaN where missing), for checks."""
    frame = read_nydata(path)
    table = frame.pivot(index="site", columns="date", values="o8hrmax")
    sites = frame.groupby("site")[["latitude", "longitude"]].first().loc[table.index]
    return xr.Dataset(
        {"o8hrmax": (("site", "day"), table.to_numpy(float), {"units": "ppb"})},
        coords={
            "site": ("site", table.index.to_numpy()),
            "day": ("day", table.columns.to_numpy()),
            "latitude": ("site", sites["latitude"].to_numpy(float)),
            "longitude": ("site", sites["longitude"].to_numpy(float)),
        },
    )
