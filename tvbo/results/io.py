"""Reading, validating and atomically writing run files (netCDF4, zlib-compressed).

A run file is written *atomically*: to a temporary file in the destination directory, fsync'ed,
then moved into place with :func:`os.replace`. A run that crashes while writing therefore leaves
either the previous complete file or nothing -- never a truncated file that Snakemake would
mistake for a finished output.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from tvbo.results.schema import (
    ITERATION_VARIABLES,
    REQUIRED_ATTRIBUTES,
    RUN_KEYS,
    TIME_VARIABLES,
)

#: 0-d per-run summaries (they carry the run-key dimensions after ``expand_dims``).
SUMMARY_VARIABLES: tuple[str, ...] = (
    "average_regret",
    "time_integrated_regret",
    "n_iterations",
    "final_dataset_size",
)

#: dimensions every run has besides the run keys
RUN_DIMENSIONS: tuple[str, ...] = ("iteration", "dim", "time")

NETCDF_ENGINE = "netcdf4"
COMPRESSION: dict[str, Any] = {"zlib": True, "complevel": 4, "shuffle": True}


def _check_attribute_types(attrs: Mapping[str, Any], where: str) -> list[str]:
    """Names (with reasons) of attributes netCDF cannot store: bool, None, dict (ecosystem §4.2)."""
    bad = []
    for name, value in attrs.items():
        if value is None or isinstance(value, bool | np.bool_ | dict):
            bad.append(f"{where}{name}={value!r} ({type(value).__name__})")
    return bad


def validate_run(ds: xr.Dataset) -> None:
    """Check that ``ds`` follows the run layout of :mod:`tvbo.results.schema`.

    Raises one :class:`ValueError` that lists *everything* missing or malformed (run keys that
    are not length-1 dimension coordinates, missing dimensions, variables, attributes, and
    attributes of a type netCDF rejects), so a broken engine is fixed in one round trip.
    """
    problems: list[str] = []
    bad_keys = [k for k in RUN_KEYS if k not in ds.dims or k not in ds.coords or ds.sizes[k] != 1]
    if bad_keys:
        problems.append(
            f"run keys that are not length-1 dimension coordinates: {bad_keys} "
            f"(expected all of {list(RUN_KEYS)})"
        )
    missing_dims = [d for d in RUN_DIMENSIONS if d not in ds.dims]
    if missing_dims:
        problems.append(f"missing dimensions: {missing_dims}")
    if "time" in ds.dims and "time" not in ds.coords:
        problems.append("dimension 'time' has no coordinate (the time grid values)")
    required_vars = [*ITERATION_VARIABLES, *TIME_VARIABLES, *SUMMARY_VARIABLES]
    missing_vars = [v for v in required_vars if v not in ds.data_vars]
    if missing_vars:
        problems.append(f"missing variables: {missing_vars}")
    for name, (dims, _, _) in {**ITERATION_VARIABLES, **TIME_VARIABLES}.items():
        if name in ds.data_vars and not set(dims) <= set(ds[name].dims):
            problems.append(f"variable {name!r} has dims {ds[name].dims}, expected {dims}")
    missing_attrs = [a for a in REQUIRED_ATTRIBUTES if a not in ds.attrs]
    if missing_attrs:
        problems.append(f"missing attributes: {missing_attrs}")
    bad_types = _check_attribute_types(ds.attrs, "")
    for name, var in ds.variables.items():
        bad_types += _check_attribute_types(var.attrs, f"{name}.")
    if bad_types:
        problems.append(
            f"attributes netCDF cannot store (use 0/1 ints, strings or JSON): {bad_types}"
        )
    if problems:
        raise ValueError("invalid run dataset: " + "; ".join(problems))


def _encoding(ds: xr.Dataset) -> dict[str, dict[str, Any]]:
    """zlib for numeric data variables; strings (vlen) cannot take netCDF filters."""
    return {
        name: dict(COMPRESSION)
        for name, var in ds.data_vars.items()
        if var.dtype.kind in "biuf" and var.ndim > 0
    }


def _umask() -> int:
    """The process umask (reading it requires setting it; restored at once)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_directory(directory: Path) -> None:
    """Persist the rename itself; best effort (not every platform can open a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_netcdf_atomic(ds: xr.Dataset, path: str | Path) -> Path:
    """Write ``ds`` to ``path`` (netCDF4, zlib) through a temp file + fsync + :func:`os.replace`.

    On any error the temporary file is removed and the exception re-raised; an existing file at
    ``path`` is left untouched. Parent directories are created.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    # Forget encodings inherited from files these data were read from: a string coordinate
    # loaded from one run keeps e.g. dtype '<U6' ("ackley") and would truncate longer names
    # ("eggholder" -> "egghol") when a merged campaign is written.
    ds = ds.copy(deep=False)
    for var in ds.variables.values():
        var.encoding = {}
    try:
        ds.to_netcdf(tmp, engine=NETCDF_ENGINE, format="NETCDF4", encoding=_encoding(ds))
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; results are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)
    return path


def write_run(ds: xr.Dataset, path: str | Path) -> Path:
    """Validate a run Dataset and write it atomically; returns the path written."""
    validate_run(ds)
    return write_netcdf_atomic(ds, path)


def read_run(path: str | Path) -> xr.Dataset:
    """Load a run file fully into memory (no dask, file closed on return) and validate it.

    ``decode_timedelta=False`` keeps virtual times (units "s") as float64 seconds.
    """
    ds = xr.load_dataset(path, engine=NETCDF_ENGINE, decode_timedelta=False)
    try:
        validate_run(ds)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    return ds
