"""Tidy (long-format) tables of a campaign, for pandas, R, IOHanalyzer and spreadsheet users.

A campaign file is a netCDF hypercube (run keys x iteration x ...), convenient for xarray and
nobody else. ``tvbo export`` writes it as a *long* table instead: one row per (run, metric), or
with ``per_iteration`` one row per (run, iteration, metric), so that any tool can filter, pivot
and aggregate it without knowing the file's layout. The columns are

=============  ==========================================================================
column         meaning
=============  ==========================================================================
benchmark      benchmark name (run key)
algorithm      algorithm name as in the campaign (run key; registry name or its label)
seed           random seed of the run (run key, integer)
speed          hardware speed factor of the run (run key, float; 2.0 = twice as fast)
iteration      query index, 0-based, warm-up included (``per_iteration`` tables only)
metric         the campaign variable, e.g. ``average_regret``, ``regret``, ``t_sample``
value          its value (float64; integers and 0/1 flags are exact; empty/NaN where the run
               recorded none, e.g. the response time of the last query)
unit           the variable's ``units`` attribute (``s`` for virtual seconds, ``1`` for
               dimensionless), empty where the file records none
=============  ==========================================================================

Which variables become metrics: every numeric per-run variable (``average_regret``,
``time_integrated_regret``, ``n_iterations``, ...) for the per-run table, and every numeric
variable along ``iteration`` alone (regret, times, observation, dataset size, compute per
phase, algorithm state) for the per-iteration table. Left out: the merge's bookkeeping
(``run_present``), per-run attributes (``attr_*``: configuration, not results), vector
variables (the query ``x`` along ``dim``) and the time-grid variables (use xarray for those).
Padding is dropped: cells of the run grid without a run, and iterations past a run's
``n_iterations``, so every row is a value a run produced.

Rows are ordered by the run keys (as sorted in the campaign), then iteration, then metric in
the file's variable order. CSV values are written with the shortest text that reads back to
the same float64; pandas 3's ``read_csv`` reads them back exactly (with pandas 2 pass
``float_precision="round_trip"``: its default parser may differ in the last bit). Parquet
needs pyarrow (``pip install 'tvbo-lab[parquet]'``) and keeps the dtypes.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Hashable
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from tvbo.results.campaign import run_variables
from tvbo.results.schema import ATTRIBUTE_PREFIX, PRESENT_VARIABLE, RUN_KEYS

FORMATS: tuple[str, ...] = ("csv", "parquet")
ITERATION = "iteration"
VALUE_COLUMNS: tuple[str, ...] = ("metric", "value", "unit")


def _numeric(ds: xr.Dataset, name: Hashable) -> bool:
    return ds[name].dtype.kind in "biuf"


def run_metrics(ds: xr.Dataset) -> list[str]:
    """The per-run variables exported as metrics (numeric results, no bookkeeping/attributes)."""
    return [
        str(n) for n in run_variables(ds)
        if n != PRESENT_VARIABLE and not str(n).startswith(ATTRIBUTE_PREFIX) and _numeric(ds, n)
    ]


def iteration_metrics(ds: xr.Dataset) -> list[str]:
    """The numeric variables along ``iteration`` and run keys only (no ``dim``, no ``time``)."""
    keys = set(RUN_KEYS)
    return [
        str(n) for n, v in ds.data_vars.items()
        if ITERATION in v.dims and set(v.dims) - {ITERATION} <= keys and _numeric(ds, n)
    ]


def _keys(ds: xr.Dataset) -> list[str]:
    return [k for k in RUN_KEYS if k in ds.dims]


def _present_runs(ds: xr.Dataset, keys: list[str]) -> pd.Series | None:
    """Boolean Series over the run grid (True: a run exists), or None without the marker."""
    if PRESENT_VARIABLE not in ds.data_vars:
        return None
    return ds[PRESENT_VARIABLE].transpose(*keys).to_series() == 1


def _long(wide: pd.DataFrame, ids: list[str], metrics: list[str], units: dict[str, str]
          ) -> pd.DataFrame:
    """Melt a wide frame (one column per metric) into the long table, rows in the documented
    order (``ids`` as in ``wide``, then metric in ``metrics`` order)."""
    wide = wide.reset_index(drop=True)
    wide["_row"] = np.arange(len(wide))
    long = wide.melt(id_vars=[*ids, "_row"], value_vars=metrics, var_name="metric",
                     value_name="value")
    long["_metric"] = long["metric"].map({m: i for i, m in enumerate(metrics)})
    long = long.sort_values(["_row", "_metric"], kind="stable").drop(columns=["_row", "_metric"])
    long["value"] = long["value"].astype("float64")
    long["unit"] = long["metric"].map(units).astype(str)
    for key in ("benchmark", "algorithm", "metric"):
        if key in long:
            long[key] = long[key].astype(str)
    return long.reset_index(drop=True)[[*ids, *VALUE_COLUMNS]]


def _units(ds: xr.Dataset, metrics: list[str]) -> dict[str, str]:
    return {m: str(ds[m].attrs.get("units", "")) for m in metrics}


def tidy_runs(ds: xr.Dataset) -> pd.DataFrame:
    """One row per (run, metric): the columns of the module docstring without ``iteration``."""
    keys, metrics = _keys(ds), run_metrics(ds)
    if not metrics:
        raise ValueError(f"no numeric per-run variable to export in {sorted(map(str, ds))}")
    wide = ds[metrics].transpose(*keys).to_dataframe()
    present = _present_runs(ds, keys)
    if present is not None:
        wide = wide[present.reindex(wide.index).to_numpy()]
    return _long(wide.reset_index(), keys, metrics, _units(ds, metrics))


def tidy_iterations(ds: xr.Dataset) -> pd.DataFrame:
    """One row per (run, iteration, metric) of every run's own iterations (padding dropped)."""
    keys, metrics = _keys(ds), iteration_metrics(ds)
    if not metrics:
        raise ValueError(f"no numeric per-iteration variable to export in {sorted(map(str, ds))}")
    wide = ds[metrics].transpose(*keys, ITERATION).to_dataframe().reset_index()
    runs = pd.MultiIndex.from_frame(wide[keys])
    present = _present_runs(ds, keys)
    keep = np.ones(len(wide), dtype=bool)
    if present is not None:
        keep &= present.reindex(runs).to_numpy()
    if "n_iterations" in ds.data_vars:  # iterations past the run's own length are padding
        length = ds["n_iterations"].transpose(*keys).to_series().reindex(runs).to_numpy()
        keep &= wide[ITERATION].to_numpy() < np.nan_to_num(length, nan=-1.0)
    else:  # without the length: a padded iteration has no value at all
        keep &= wide[metrics].notna().any(axis=1).to_numpy()
    return _long(wide[keep], [*keys, ITERATION], metrics, _units(ds, metrics))


def format_of(out: str | Path, fmt: str | None) -> str:
    """The export format: ``fmt``, else the suffix of ``out``; a conflict is an error."""
    suffix = Path(out).suffix.lower().lstrip(".")
    if fmt is None:
        if suffix not in FORMATS:
            raise ValueError(f"cannot tell the format of {str(out)!r} from its suffix: "
                             f"give --format {'|'.join(FORMATS)}")
        return suffix
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (known: {', '.join(FORMATS)})")
    if suffix in FORMATS and suffix != fmt:
        raise ValueError(f"--format {fmt} but the output {str(out)!r} ends in .{suffix}")
    return fmt


def write_table(table: pd.DataFrame, out: str | Path, fmt: str) -> Path:
    """Write ``table`` as CSV or parquet, atomically (a ``.part`` file renamed into place)."""
    if fmt == "parquet" and importlib.util.find_spec("pyarrow") is None:
        raise ValueError("parquet export needs pyarrow: pip install 'tvbo-lab[parquet]' "
                         "(or export --format csv)")
    out = Path(out)
    if out.is_dir():
        raise ValueError(f"output {str(out)!r} is a directory; give a file name")
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(out.name + ".part")
    try:
        if fmt == "csv":
            table.to_csv(part, index=False)
        else:
            table.to_parquet(part, index=False, engine="pyarrow")
        os.replace(part, out)
    finally:
        part.unlink(missing_ok=True)
    return out


def export_campaign(ds: xr.Dataset, out: str | Path, fmt: str | None = None, *,
                    per_iteration: bool = False) -> Path:
    """Write the campaign's tidy table (:func:`tidy_runs` or :func:`tidy_iterations`)."""
    fmt = format_of(out, fmt)
    table = tidy_iterations(ds) if per_iteration else tidy_runs(ds)
    return write_table(table, out, fmt)
