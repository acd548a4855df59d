"""Intel Berkeley Research Lab temperature (2004): parse ``data.txt(.gz)`` and prepare a field.

The raw format is one reading per line, fields separated by ONE space::

    date(yyyy-mm-dd) time(hh:mm:ss.xxx) epoch moteid temperature humidity light voltage

Traps of the real file, and how this module handles them:

* a missing value is an EMPTY field (two spaces in a row), so lines are split on single spaces,
  never on runs of whitespace (that would shift every later column);
* lines with fewer than 8 fields ("short"), more than 8 non-empty fields, an unparsable
  timestamp, a non-integer mote id, a mote id outside 1..54 ("junk", e.g. 65407) or an empty
  temperature are dropped, and each reason is counted;
* the full file is not in time order: readings are sorted by time (then mote id);
* dying motes report absurd temperatures (e.g. 122.153 C): readings outside a plausible range
  (default [-10, 60] C, configurable) are dropped and counted in :func:`prepare_intel`.

Preparation (:func:`prepare_intel`): the readings of the selected calendar day(s) are averaged
per mote in fixed bins (default 10 minutes, bin ``[start, start + bin)``, labelled by its start).
Selection rule: a mote is kept if it has at least one plausible reading in >= ``coverage``
(default 0.9) of the bins of the selected day(s) and a known location. Remaining empty bins of
the kept motes are filled by linear interpolation in time (constant extrapolation at the edges);
the ``observed`` mask and the ``n_filled`` count record them. Coordinates come from
``mote_locs.txt`` (metres) and are min-max normalised to [0, 1]^2 over ALL motes of that file by
default (stable across days and selections, so fields of different days share one frame), or
over the selected motes (``normalise="selected"``).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from tvbo.data.download import sha256_file

__all__ = [
    "DEFAULT_TEMPERATURE_RANGE",
    "DROP_REASONS",
    "VALID_MOTE_IDS",
    "parse_intel",
    "prepare_intel",
    "prepare_intel_file",
    "read_mote_locations",
    "write_netcdf",
]

VALID_MOTE_IDS = range(1, 55)
DEFAULT_TEMPERATURE_RANGE = (-10.0, 60.0)
N_FIELDS = 8
COLUMNS = ("date", "time", "epoch", "moteid", "temperature", "humidity", "light", "voltage")
#: Reasons a raw line is dropped, in the order they are tested (a line counts once).
DROP_REASONS = (
    "short_line",
    "too_many_fields",
    "bad_timestamp",
    "bad_mote_id",
    "junk_mote_id",
    "missing_temperature",
)
NORMALISATIONS = ("all", "selected")


def _read_bytes(source: str | os.PathLike[str] | bytes) -> bytes:
    """Raw bytes of a (possibly gzipped) file, or the bytes themselves.

    A truncated or corrupt gzip raises :class:`ValueError` naming the file (a half-downloaded
    ``data.txt.gz`` is the usual cause), not the EOFError/zlib.error of :mod:`gzip`.
    """
    label = "the given bytes" if isinstance(source, bytes) else str(source)
    raw = source if isinstance(source, bytes) else Path(source).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise ValueError(
                f"{label}: corrupt or truncated gzip file ({_one_line(exc)}); expected a "
                "complete data.txt.gz: delete it (and its .manifest.json) and download it again"
            ) from None
    return raw


def _one_line(exc: BaseException) -> str:
    text = "; ".join(p.strip() for p in str(exc).splitlines() if p.strip())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def parse_intel(
    source: str | os.PathLike[str] | bytes, *, chunk_lines: int = 250_000
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Parse raw Intel lines; return (readings sorted by time, dropped-line counts per reason).

    ``source`` is a path to ``data.txt`` or ``data.txt.gz`` or the raw bytes. The readings frame
    has columns ``time`` (datetime64), ``mote_id`` (int), ``epoch`` (float, NaN if empty),
    ``temperature``, ``humidity``, ``light``, ``voltage`` (float, NaN if the field was empty).
    Parsing is vectorised: fields per line are counted with numpy on the byte buffer, then pandas
    splits on single spaces, ``chunk_lines`` lines at a time (bounds the memory of the string
    columns: the full 150 MB file has 2.3 million lines).
    """
    raw = _read_bytes(source)
    if raw and not raw.endswith(b"\n"):
        raw += b"\n"
    counts = {reason: 0 for reason in DROP_REASONS}
    if not raw:
        return _empty_readings(), {**counts, "lines": 0, "kept": 0}
    buf = np.frombuffer(raw, dtype=np.uint8)
    newlines = np.flatnonzero(buf == ord("\n"))
    starts = np.concatenate(([0], newlines[:-1] + 1))
    spaces = np.flatnonzero(buf == ord(" "))  # positions; spaces per line by binary search
    before_end = np.searchsorted(spaces, newlines)
    n_fields = np.diff(np.concatenate(([0], before_end))) + 1
    lengths = newlines - starts
    n_fields[lengths == 0] = 0  # a blank line has no field at all
    width = int(max(n_fields.max(), N_FIELDS))
    reader = pd.read_csv(
        io.BytesIO(raw),
        sep=" ",
        header=None,
        names=list(range(width)),
        dtype=str,
        keep_default_na=False,
        skip_blank_lines=False,
        quoting=csv.QUOTE_NONE,
        engine="c",
        chunksize=chunk_lines,
    )
    parts, offset = [], 0
    with reader:
        for frame in reader:
            nf = n_fields[offset : offset + len(frame)]
            offset += len(frame)
            part, part_counts = _parse_chunk(frame, nf, width)
            parts.append(part)
            for reason, n in part_counts.items():
                counts[reason] += n
    if offset != len(n_fields):  # defensive: rows must align with lines
        raise ValueError(f"parsed {offset} rows from {len(n_fields)} lines; malformed input")
    readings = pd.concat(parts, ignore_index=True) if parts else _empty_readings()
    readings = readings.sort_values(["time", "mote_id"], kind="mergesort", ignore_index=True)
    counts["lines"] = int(len(n_fields))
    counts["kept"] = int(len(readings))
    return readings, counts


def _parse_chunk(
    frame: pd.DataFrame, n_fields: np.ndarray, width: int
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Validate one block of string rows; return the kept readings and drops per reason."""
    extra = np.zeros(len(frame), dtype=bool)
    for col in range(N_FIELDS, width):
        extra |= (frame[col] != "").to_numpy()
    fields = {name: frame[i] for i, name in enumerate(COLUMNS)}
    time = pd.to_datetime(
        fields["date"] + " " + fields["time"], format="ISO8601", errors="coerce"
    ).to_numpy(dtype="datetime64[ns]")
    mote = pd.to_numeric(fields["moteid"], errors="coerce").to_numpy(dtype=float)
    temperature = pd.to_numeric(fields["temperature"], errors="coerce").to_numpy(dtype=float)

    counts: dict[str, int] = {}
    bad = np.zeros(len(frame), dtype=bool)
    tests = (
        ("short_line", n_fields < N_FIELDS),
        ("too_many_fields", extra),
        ("bad_timestamp", np.isnat(time)),
        ("bad_mote_id", ~np.isfinite(mote) | (mote != np.round(mote))),
        ("junk_mote_id", (mote < VALID_MOTE_IDS.start) | (mote >= VALID_MOTE_IDS.stop)),
        ("missing_temperature", ~np.isfinite(temperature)),
    )
    for reason, mask in tests:
        hit = mask & ~bad
        counts[reason] = int(hit.sum())
        bad |= hit
    keep = ~bad
    readings = pd.DataFrame(
        {
            "time": time[keep],
            "mote_id": mote[keep].astype(np.int64),
            "epoch": pd.to_numeric(fields["epoch"][keep], errors="coerce").to_numpy(dtype=float),
            "temperature": temperature[keep],
        }
    )
    for name in ("humidity", "light", "voltage"):
        readings[name] = pd.to_numeric(fields[name][keep], errors="coerce").to_numpy(dtype=float)
    return readings, counts


def _empty_readings() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "time": pd.Series([], dtype="datetime64[ns]"),
            "mote_id": pd.Series([], dtype=np.int64),
            **{c: pd.Series([], dtype=float) for c in ("epoch", *COLUMNS[4:])},
        }
    )


def read_mote_locations(path: str | os.PathLike[str]) -> pd.DataFrame:
    """``mote_locs.txt`` (``mote_id x y`` in metres, no header) as a frame indexed by mote id.

    An empty file, a non-numeric value, a gap or a repeated mote id raise :class:`ValueError`
    naming the file: without locations no mote can be selected, and the selection step's
    message ("no mote has enough coverage") would point at the wrong cause.
    """
    expected = "expected rows 'mote_id x y' (integer id, coordinates in metres)"
    try:
        locs = pd.read_csv(path, sep=r"\s+", header=None, names=["mote_id", "x_m", "y_m"])
    except pd.errors.EmptyDataError:
        locs = pd.DataFrame(columns=["mote_id", "x_m", "y_m"])
    except pd.errors.ParserError as exc:
        raise ValueError(
            f"{path}: unreadable mote locations ({_one_line(exc)}); {expected}"
        ) from None
    if locs.empty:
        raise ValueError(f"{path}: empty mote locations file (no rows); {expected}")
    numeric = locs.apply(pd.to_numeric, errors="coerce")
    if numeric.isna().any().any():
        row = int(np.flatnonzero(numeric.isna().any(axis=1).to_numpy())[0])
        values = " ".join("" if pd.isna(v) else str(v) for v in locs.iloc[row])
        raise ValueError(
            f"{path}: row {row + 1} {values!r} is not numeric or incomplete; {expected}"
        )
    ids = numeric["mote_id"]
    if (ids != np.round(ids)).any() or ids.duplicated().any():
        raise ValueError(
            f"{path}: mote ids must be unique integers, got {ids.tolist()}; {expected}"
        )
    return numeric.astype({"mote_id": np.int64}).set_index("mote_id").sort_index()


def _day_bins(dates: Sequence[str], bin_minutes: int) -> pd.DatetimeIndex:
    """Bin starts covering each selected calendar day completely."""
    if bin_minutes <= 0 or 1440 % bin_minutes:
        raise ValueError(f"bin_minutes must divide a day (1440 min), got {bin_minutes}")
    if not dates:
        raise ValueError("dates must name at least one day, e.g. ['2004-03-06']")
    days = []
    for day in dates:
        try:
            start = pd.Timestamp(day)
        except ValueError as exc:
            raise ValueError(f"bad date {day!r}: use yyyy-mm-dd") from exc
        if start != start.normalize():
            raise ValueError(f"bad date {day!r}: a calendar day yyyy-mm-dd, without a time")
        days.append(pd.date_range(start, periods=1440 // bin_minutes, freq=f"{bin_minutes}min"))
    bins = days[0].append(days[1:]) if len(days) > 1 else days[0]
    if bins.has_duplicates:
        raise ValueError(f"dates contain duplicates: {list(dates)}")
    return bins.sort_values()


def prepare_intel(
    readings: pd.DataFrame,
    locations: pd.DataFrame,
    *,
    dates: Sequence[str],
    bin_minutes: int = 10,
    coverage: float = 0.9,
    temperature_range: tuple[float, float] = DEFAULT_TEMPERATURE_RANGE,
    normalise: str = "all",
    dropped: dict[str, int] | None = None,
    source_sha256: str | None = None,
) -> xr.Dataset:
    """Bin, select, fill and locate: the tidy ``(time, sensor)`` temperature field.

    See the module docstring for the rules. ``dropped`` (from :func:`parse_intel`) is copied
    into the attributes together with the readings dropped here as implausible.
    """
    low, high = (float(v) for v in temperature_range)
    if not low < high:
        raise ValueError(f"temperature_range must be [low, high] with low < high, got {low, high}")
    if not 0.0 < coverage <= 1.0:
        raise ValueError(f"coverage must be in (0, 1], got {coverage}")
    if normalise not in NORMALISATIONS:
        raise ValueError(f"normalise must be one of {NORMALISATIONS}, got {normalise!r}")
    bins = _day_bins(dates, bin_minutes)
    width = pd.Timedelta(minutes=bin_minutes)
    in_days = readings["time"].dt.floor(f"{bin_minutes}min").isin(bins).to_numpy()
    day_readings = readings[in_days]
    if day_readings.empty:
        span = (readings["time"].min(), readings["time"].max()) if len(readings) else None
        raise ValueError(f"no readings on dates {list(dates)}; the data cover {span}")
    temp = day_readings["temperature"].to_numpy()
    plausible = (temp >= low) & (temp <= high)
    motes_present = np.unique(day_readings["mote_id"].to_numpy())
    kept = day_readings[plausible]
    binned = (
        kept.assign(bin=kept["time"].dt.floor(f"{bin_minutes}min"))
        .groupby(["bin", "mote_id"])["temperature"]
        .agg(["mean", "size"])
    )
    mean = binned["mean"].unstack("mote_id").reindex(index=bins, columns=motes_present)
    count = binned["size"].unstack("mote_id").reindex(index=bins, columns=motes_present)
    cover = mean.notna().mean(axis=0)
    located = cover.index.isin(locations.index)
    selected = cover.index[(cover.to_numpy() >= coverage) & located]
    covered = cover.index[cover.to_numpy() >= coverage]
    if len(selected) == 0 and len(covered) > 0:
        raise ValueError(
            f"none of the {len(covered)} motes with >= {coverage:.0%} bin coverage on "
            f"{list(dates)} (ids {covered.min()}..{covered.max()}) has a location in the mote "
            f"locations ({len(locations)} motes: {list(locations.index[:10])}...)"
        )
    if len(selected) == 0:
        raise ValueError(
            f"no mote has >= {coverage:.0%} bin coverage on {list(dates)}; best coverage "
            f"{cover.max():.3f}; lower 'coverage'"
        )
    values = mean[selected].to_numpy(dtype=float)
    observed = np.isfinite(values)
    seconds = ((bins - bins[0]) / pd.Timedelta(seconds=1)).to_numpy(dtype=float)
    filled = values.copy()
    for j in range(filled.shape[1]):
        ok = observed[:, j]
        filled[~ok, j] = np.interp(seconds[~ok], seconds[ok], values[ok, j])
    loc = locations.loc[selected]
    frame = locations if normalise == "all" else loc
    x = (loc["x_m"] - frame["x_m"].min()) / (frame["x_m"].max() - frame["x_m"].min())
    y = (loc["y_m"] - frame["y_m"].min()) / (frame["y_m"].max() - frame["y_m"].min())

    drops = {k: v for k, v in (dropped or {}).items() if k not in ("lines", "kept")}
    drops["implausible_temperature"] = int((~plausible).sum())
    rule = (
        f"mote kept if it has >= 1 reading in [{low}, {high}] C in >= {coverage:.0%} of the "
        f"{bin_minutes}-minute bins of {', '.join(dates)} and a location in mote_locs.txt"
    )
    ds = xr.Dataset(
        {
            "temperature": (("time", "sensor"), filled, {"units": "degC"}),
            "observed": (("time", "sensor"), observed.astype(np.int8)),
            "n_readings": (("time", "sensor"), count[selected].fillna(0).to_numpy(np.int32)),
        },
        coords={
            "time": ("time", bins.to_numpy()),
            "elapsed": ("time", seconds, {"units": "s", "long_name": "seconds since first bin"}),
            "sensor": ("sensor", np.arange(len(selected))),
            "mote_id": ("sensor", selected.to_numpy(np.int64)),
            "x": ("sensor", x.to_numpy(float)),
            "y": ("sensor", y.to_numpy(float)),
            "x_m": ("sensor", loc["x_m"].to_numpy(float), {"units": "m"}),
            "y_m": ("sensor", loc["y_m"].to_numpy(float), {"units": "m"}),
            "coverage": ("sensor", cover[selected].to_numpy(float)),
        },
    )
    ds["observed"].attrs["long_name"] = "1 if the bin had a plausible reading, 0 if interpolated"
    ds["time"].attrs["long_name"] = f"start of the {bin_minutes}-minute bin [start, start+bin)"
    ds.attrs.update(
        {
            "title": "Intel Berkeley Research Lab temperature, binned per mote",
            "source": "http://db.csail.mit.edu/labdata/labdata.html",
            "source_sha256": source_sha256 or "",
            "dates": ",".join(dates),
            "bin_minutes": int(bin_minutes),
            "bin_width_s": float(width.total_seconds()),
            "temperature_min": low,
            "temperature_max": high,
            "coverage_threshold": float(coverage),
            "selection_rule": rule,
            "fill_rule": "linear interpolation in time, constant at the edges",
            "n_filled": int((~observed).sum()),
            "normalisation": f"min-max of mote_locs.txt coordinates over {normalise} motes",
            "motes_present": ",".join(str(m) for m in motes_present),
            "n_motes_present": len(motes_present),
            "motes_rejected": json.dumps(
                {str(m): round(float(cover[m]), 4) for m in motes_present if m not in selected}
            ),
            "n_lines": int((dropped or {}).get("lines", -1)),
            "n_readings_on_dates": int(len(day_readings)),
            "dropped": json.dumps(drops, sort_keys=True),
            **{f"dropped_{k}": int(v) for k, v in drops.items()},
        }
    )
    return ds


def prepare_intel_file(
    data_path: str | os.PathLike[str],
    locs_path: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    **options,
) -> xr.Dataset:
    """Parse ``data_path``, prepare with ``options`` (see :func:`prepare_intel`), write ``out``."""
    readings, dropped = parse_intel(data_path)
    if dropped["lines"] == 0:
        raise ValueError(
            f"{data_path}: empty file (no lines); expected Intel readings "
            f"'{' '.join(COLUMNS)}'"
        )
    if readings.empty:
        causes = {k: v for k, v in dropped.items() if k in DROP_REASONS and v}
        raise ValueError(
            f"{data_path}: none of its {dropped['lines']} lines is an Intel reading "
            f"'{' '.join(COLUMNS)}' (dropped per reason: {causes})"
        )
    locations = read_mote_locations(locs_path)
    present = np.unique(readings["mote_id"].to_numpy())
    if not np.isin(present, locations.index.to_numpy()).any():
        raise ValueError(
            f"{locs_path}: none of the {len(present)} motes of {data_path} (ids "
            f"{present.min()}..{present.max()}) has a location; the file lists motes "
            f"{locations.index.min()}..{locations.index.max()} ({len(locations)} rows)"
        )
    ds = prepare_intel(
        readings,
        locations,
        dropped=dropped,
        source_sha256=sha256_file(data_path),
        **options,
    )
    ds.attrs["source_file"] = Path(data_path).name
    ds.attrs["locs_sha256"] = sha256_file(locs_path)
    if out is not None:
        write_netcdf(ds, out)
    return ds


def write_netcdf(ds: xr.Dataset, out: str | os.PathLike[str]) -> None:
    """Write atomically (``.part`` then rename) so a killed job never leaves a half file."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(out.name + ".part")
    try:
        ds.to_netcdf(part)
        os.replace(part, out)
    finally:
        part.unlink(missing_ok=True)
