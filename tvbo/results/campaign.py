"""Merging run files into one campaign Dataset (run keys as full dimensions).

Why not a bare ``xr.combine_by_coords(parts, join="outer")``: it infers the concatenation
dimensions from *every* dimension coordinate whose values differ between runs. Ragged
``iteration`` coordinates and per-benchmark ``time`` grids differ, so it treats them as concat
dimensions too and (with the default ``data_vars="all"``) broadcasts every variable over every
dimension -- verified with xarray 2026.9: a 25 kB campaign became 13 MB with ``t_decide`` along
``time``. It also refuses run grids that are not a full hypercube (a missing seed). So
:func:`merge_runs`

1. loads each run fully (no dask) and gives every data variable the run-key dimensions;
2. moves global attributes that differ between runs (``config_json``, ``horizon``, ...) into
   per-run variables ``attr_<name>`` so nothing is silently dropped (attributes shared by all
   runs stay global; the list of moved ones is in the ``per_run_attributes`` attribute);
3. gives every run every variable (algorithm-specific ``state_*`` and ``fit_*`` variables are
   NaN elsewhere; a run without a ``fit`` dimension gets it with length 0) and fills the cells
   of the run grid that have no run with all-NaN placeholder runs (``run_present == 0``), so
   the grid is a full hypercube; string ``fit_*`` variables become int16 codes into one
   category list per variable (attribute ``categories_json``; :func:`decode_categories`);
4. combines with :func:`xarray.combine_nested` along the run keys *only*, ``join="outer"``
   (ragged runs are NaN-padded) and ``combine_attrs="drop_conflicts"``: first each benchmark's
   block of the grid, then the blocks (:func:`_combine_grid`; the same campaign as one combine
   over the whole grid, which tests/results/test_merge_blocks.py checks).

Speed (issue 14): steps 1-3 work on :class:`xarray.Variable` objects and rebuild each run once
(:class:`_Run`); with ``jobs`` > 1, worker processes read the run files and combine the blocks
(a 700-run campaign is ~80 variables x 700 netCDF4 files to decode, then ~70,000 small
re-indexings, both independent per file/block). The result does not depend on ``jobs``.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from tvbo.results.io import NETCDF_ENGINE, write_netcdf_atomic
from tvbo.results.schema import (
    ATTRIBUTE_PREFIX,
    FIT_DIMENSION,
    FIT_PREFIX,
    PRESENT_VARIABLE,
    RUN_FILE_ONLY_ATTRIBUTES,
    RUN_KEYS,
)
from tvbo.results.validate import MIXED_ALLOWED_ATTRIBUTE, load_runs, parse_allow_mixed

PER_RUN_ATTRIBUTES = "per_run_attributes"
#: runs with more queries than this keep only their per-run metrics and time-grid curves in a
#: campaign; their per-query record (every variable along ``iteration``) stays in the run file.
#: Why: the campaign pads every run's per-query variables to its longest run, and the floor
#: rows make H / c queries (180,001 on BOLT [B]'s Temperature): padded, BOLT [B]'s 1,400 runs
#: would need tens of GB. The longest algorithm runs of the papers' campaigns make ~2,200.
MAX_QUERIES = 5000
#: campaign attribute: the cap, and the runs (benchmark/algorithm/seed/speed) it left out
PER_QUERY_OMITTED = "per_query_omitted_json"
#: variable attribute of a string fit variable stored as codes: the JSON list of its values
CATEGORIES = "categories_json"
#: variable attribute recording the integer dtype a variable had before NaN padding made it float
ORIGINAL_DTYPE = "original_dtype"

RunKey = tuple[Hashable, ...]

#: run dimensions whose length differs between runs; they get index coordinates so the outer
#: join NaN-pads them. A run without one of them (a run file written before fit recording has no
#: ``fit``) gets it with length 0 when another run's variable needs it.
RAGGED_DIMENSIONS: tuple[str, ...] = ("iteration", "dim", FIT_DIMENSION)


def _run_key(ds: xr.Dataset, path: str | Path) -> RunKey:
    """The (benchmark, algorithm, seed, speed) of one run file."""
    bad = [k for k in RUN_KEYS if k not in ds.dims or ds.sizes[k] != 1 or k not in ds.coords]
    if bad:
        raise ValueError(
            f"{path}: run keys {bad} are not length-1 dimension coordinates "
            f"(a run file needs all of {list(RUN_KEYS)})"
        )
    return tuple(ds[k].values[0].item() for k in RUN_KEYS)


def _with_run_dims(ds: xr.Dataset) -> xr.Dataset:
    """Every data variable carries the run keys; ``iteration``/``dim`` get index coordinates.

    Without an index the outer join cannot align ragged runs along a dimension.
    """
    missing_index = {d: np.arange(ds.sizes[d]) for d in RAGGED_DIMENSIONS if d in ds.dims}
    ds = ds.assign_coords({d: v for d, v in missing_index.items() if d not in ds.coords})
    updates = {}
    for name in ds.data_vars:
        absent = [k for k in RUN_KEYS if k not in ds.variables[name].dims]
        if absent:
            updates[name] = ds[name].expand_dims({k: ds[k].values for k in absent})
    return ds.assign(updates) if updates else ds


def _same(a: Any, b: Any) -> bool:
    """Equality for attribute values that may be numpy arrays."""
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except (TypeError, ValueError):
        return False


def _attribute_value(value: Any) -> Any:
    """A per-run attribute as a scalar a netCDF variable can hold."""
    if isinstance(value, str | bytes):
        return value.decode() if isinstance(value, bytes) else value
    array = np.asarray(value)
    if array.ndim == 0 and array.dtype.kind in "biuf":
        return array.item()
    return json.dumps(array.tolist() if array.ndim else array.item())


class _Run:
    """One run on its way into the campaign: the dataset as read, plus what the merge changes.

    Why not a Dataset per step: every ``ds[name] = ...``, ``ds.assign`` or ``ds.copy`` aligns
    and re-indexes the whole run, and iterating ``ds.data_vars.items()`` builds a DataArray
    (with all its coordinates) per variable; over hundreds of runs and ~100 variables that was
    most of the merge's time. The steps below work on plain :class:`xarray.Variable` objects
    and :meth:`dataset` applies them with ONE ``assign``: variables the merge replaces keep their
    place, new ones follow in the order the steps add them (as the former step-by-step
    ``assign`` calls did, so the campaign is the same, variable order included).
    """

    def __init__(self, ds: xr.Dataset) -> None:
        self.ds = ds
        self.attrs: dict[Hashable, Any] = dict(ds.attrs)
        #: name -> variable of every data variable: the run's own first, then the added ones
        self.variables: dict[Hashable, xr.Variable] = {n: ds.variables[n] for n in ds.data_vars}
        self.changed: dict[Hashable, xr.Variable] = {}

    def set(self, name: Hashable, variable: xr.Variable) -> None:
        """Add or replace a data variable (applied by :meth:`dataset`)."""
        self.variables[name] = variable
        self.changed[name] = variable

    def sizes(self) -> dict[Hashable, int]:
        """Dimension lengths of the run with the variables added so far."""
        sizes = dict(self.ds.sizes)
        for variable in self.changed.values():
            sizes.update(variable.sizes)
        return sizes

    def dataset(self) -> xr.Dataset:
        """The run as a Dataset with every change applied (a ``fit`` dimension added by a blank
        variable gets its index coordinate, as ragged dimensions need one)."""
        ds = self.ds.assign(self.changed) if self.changed else self.ds.copy()
        ds.attrs = self.attrs
        if FIT_DIMENSION in ds.dims and FIT_DIMENSION not in ds.coords:
            ds = ds.assign_coords({FIT_DIMENSION: np.arange(ds.sizes[FIT_DIMENSION])})
        return ds


def _move_conflicting_attributes(runs: list[_Run]) -> list[str]:
    """Turn global attributes whose value differs between runs into ``attr_<name>`` variables.

    Attributes that shadow a run-level data variable of the same name (``average_regret``,
    ``n_iterations``, ...) are dropped instead: the variable already holds the per-run value.
    Returns the names moved to variables. The machine's cost of each run and the code it
    recorded (:data:`~tvbo.results.schema.RUN_FILE_ONLY_ATTRIBUTES`) are dropped first: they
    differ between two makings of the same run, and a campaign must not.
    """
    for run in runs:
        for name in RUN_FILE_ONLY_ATTRIBUTES:
            run.attrs.pop(name, None)
    names = sorted({n for run in runs for n in run.attrs})
    conflicting = []
    for name in names:
        values = [run.attrs.get(name, None) for run in runs]
        if all(v is not None for v in values) and all(_same(v, values[0]) for v in values):
            continue
        conflicting.append(name)
    moved = [n for n in conflicting if n not in runs[0].variables]
    shape = tuple(1 for _ in RUN_KEYS)
    for run in runs:
        for name in conflicting:
            value = run.attrs.pop(name, None)
            if name in moved and value is not None:
                converted = _attribute_value(value)
                data = np.full(
                    shape, converted, dtype=object if isinstance(converted, str) else None
                )
                run.set(ATTRIBUTE_PREFIX + name, xr.Variable(RUN_KEYS, data))
    return moved


def _blank_like(var: xr.Variable, sizes: dict[Hashable, int]) -> xr.Variable:
    """An all-missing copy of ``var`` (NaN, or "" for strings), sized by ``sizes``."""
    shape = tuple(sizes[d] for d in var.dims)
    if var.dtype.kind in "OUS":
        data = np.full(shape, "", dtype=object)
    else:
        data = np.full(shape, np.nan)
    return xr.Variable(var.dims, data, attrs=var.attrs)


def _complete_variables(runs: list[_Run]) -> None:
    """Give every run every data variable of the campaign (missing ones blank)."""
    templates: dict[Hashable, xr.Variable] = {}
    for run in runs:
        for name, var in run.variables.items():
            templates.setdefault(name, var)
    for run in runs:
        sizes = {FIT_DIMENSION: 0, **run.sizes()}
        placeable = set(sizes)
        unplaceable = [n for n, v in templates.items() if not set(v.dims) <= placeable]
        if unplaceable:
            raise ValueError(
                f"run {_run_key(run.ds, '<run>')} lacks dimensions needed by variables "
                f"{unplaceable}"
            )
        for name, var in templates.items():
            if name not in run.variables:
                run.set(name, _blank_like(var, sizes))


def _string_values(values: np.ndarray) -> np.ndarray:
    """The distinct non-empty strings of an array (fixed-width or object; others skipped)."""
    if values.dtype.kind == "U":  # bytes are no strings here (as before: code -1)
        distinct = np.unique(values)
        return distinct[distinct != distinct.dtype.type()]
    return np.array(sorted({v for v in np.ravel(values) if isinstance(v, str) and v}), object)


def _codes(values: np.ndarray, lookup: dict[str, int]) -> np.ndarray:
    """int16 index of every cell's string in ``lookup``; -1 for "" and non-strings."""
    if values.dtype.kind == "U":
        distinct, inverse = np.unique(values, return_inverse=True)
        table = np.array([lookup.get(str(v), -1) for v in distinct], np.int16)
        return table[inverse].reshape(values.shape)
    return np.array(
        [lookup.get(v, -1) if isinstance(v, str) else -1 for v in np.ravel(values)], np.int16
    ).reshape(values.shape)


def _encode_fit_strings(runs: list[_Run]) -> None:
    """String ``fit_*`` variables as int16 codes into one campaign-wide category list.

    A campaign holds one entry per fit of every run, padded to the longest run: as Python
    strings (``fit_source``, ``fit_mode``, ...) that is one object per cell, several times the
    memory of a number. Codes index the JSON list in the attribute :data:`CATEGORIES`; -1 (and
    NaN after padding) is "no value". :func:`decode_categories` turns them back into strings.
    """
    names = sorted({
        n for run in runs for n, v in run.variables.items()
        if str(n).startswith(FIT_PREFIX) and FIT_DIMENSION in v.dims and v.dtype.kind in "OUS"
    })
    if not names:
        return
    categories = {
        n: sorted({str(v) for run in runs if n in run.variables
                   for v in _string_values(run.variables[n].values)})
        for n in names
    }
    lookups = {n: {c: i for i, c in enumerate(categories[n])} for n in names}
    for run in runs:
        for n in names:
            if n not in run.variables:
                continue
            var = run.variables[n]
            attrs = {**var.attrs, CATEGORIES: json.dumps(categories[n])}
            run.set(n, xr.Variable(var.dims, _codes(var.values, lookups[n]), attrs=attrs))


def decode_categories(var: xr.DataArray) -> np.ndarray:
    """The strings of a variable coded by :func:`merge_runs` ("" for a missing value); other
    variables are returned as they are (``.values``)."""
    if CATEGORIES not in var.attrs:
        return var.values
    categories = np.array(["", *json.loads(var.attrs[CATEGORIES])], dtype=object)
    codes = np.asarray(var.values, float)
    index = np.where(np.isfinite(codes), codes, -1).astype(np.int64) + 1
    return categories[index]


def _placeholder(template: xr.Dataset, key: RunKey) -> xr.Dataset:
    """An all-missing run at ``key``, shaped like ``template`` (a run of the same benchmark)."""
    ds = template.assign_coords({k: [v] for k, v in zip(RUN_KEYS, key, strict=True)})
    blank: dict[Hashable, Any] = {
        name: _blank_like(ds.variables[name], dict(ds.sizes)) for name in ds.data_vars
    }
    blank[PRESENT_VARIABLE] = xr.zeros_like(ds[PRESENT_VARIABLE])
    return ds.assign(blank)


def _sorted_values(values: set[Hashable]) -> list[Hashable]:
    try:
        return sorted(values)
    except TypeError:  # mixed types: keep a deterministic order anyway
        return sorted(values, key=repr)


def _combine(nested: list[Any], concat_dim: Sequence[str]) -> xr.Dataset:
    """:func:`xarray.combine_nested` along run keys only: outer join (ragged runs NaN-padded),
    global attributes that conflict dropped."""
    return xr.combine_nested(
        nested,
        concat_dim=list(concat_dim),
        data_vars="all",
        coords="different",
        compat="no_conflicts",
        join="outer",
        combine_attrs="drop_conflicts",
    )


def _combine_block(nested: list[Any]) -> xr.Dataset:
    """The runs of one value of the first run key, nested along the other keys, combined."""
    return _combine(nested, RUN_KEYS[1:])


def _prepared_grid(
    paths: list[str | Path], allow_mixed: Sequence[str], jobs: int,
    max_queries: int | None = MAX_QUERIES,
) -> tuple[list[Any], list[str], dict[Hashable, str], list[str]]:
    """Read, check and prepare the runs (steps 1-3 of the module docstring).

    Returns the run grid nested along :data:`RUN_KEYS` (placeholders in empty cells), the
    attributes moved to variables, the integer dtypes of variables padding may make float and
    the runs whose per-query record was left out (more than ``max_queries`` queries).
    """
    parts = load_runs(paths, allow_mixed, jobs)  # one-line errors; refuses a silent mix
    keys = [_run_key(ds, p) for ds, p in zip(parts, paths, strict=True)]
    omitted = []
    if max_queries is not None:
        for i, ds in enumerate(parts):
            if ds.sizes.get("iteration", 0) > max_queries:
                parts[i] = ds.isel(iteration=slice(0, 0))  # padded with NaN like a short run
                omitted.append("/".join(str(k) for k in keys[i]))
    seen: dict[RunKey, list[str]] = {}
    for key, path in zip(keys, paths, strict=True):
        seen.setdefault(key, []).append(str(path))
    duplicates = {k: v for k, v in seen.items() if len(v) > 1}
    if duplicates:
        listing = "; ".join(
            f"{dict(zip(RUN_KEYS, k, strict=True))} in {v}" for k, v in duplicates.items()
        )
        raise ValueError(f"duplicate run keys: {listing}")

    runs = [_Run(_with_run_dims(ds)) for ds in parts]
    del parts
    moved = _move_conflicting_attributes(runs)
    for run in runs:
        run.set(PRESENT_VARIABLE, xr.Variable(RUN_KEYS, np.ones((1,) * len(RUN_KEYS), np.int8)))
    _complete_variables(runs)
    _encode_fit_strings(runs)
    integer_dtypes = {
        name: str(var.dtype)
        for run in runs
        for name, var in run.variables.items()
        if var.dtype.kind in "iu" and name != PRESENT_VARIABLE
    }
    by_key = {key: run.dataset() for key, run in zip(keys, runs, strict=True)}
    del runs

    axes = [_sorted_values({k[i] for k in keys}) for i in range(len(RUN_KEYS))]
    bench_axis = RUN_KEYS.index("benchmark")
    template_for = {}
    for key, ds in by_key.items():
        template_for.setdefault(key[bench_axis], ds)

    def cell(key: RunKey) -> xr.Dataset:
        if key in by_key:
            return by_key[key]
        return _placeholder(template_for[key[bench_axis]], key)

    def nest(prefix: RunKey, depth: int) -> Any:
        if depth == len(RUN_KEYS):
            return cell(prefix)
        return [nest((*prefix, value), depth + 1) for value in axes[depth]]

    return nest((), 0), moved, integer_dtypes, omitted


def _combine_grid(grid: list[Any], jobs: int = 1) -> xr.Dataset:
    """The nested run grid combined along :data:`RUN_KEYS` (step 4 of the module docstring).

    One block per value of the first run key (benchmark) is combined along the other keys, in
    ``jobs`` worker processes, then the blocks along the first key: the same outer joins as one
    :func:`xarray.combine_nested` over the whole grid (which concatenates along the first key
    first, padding every run to the campaign's lengths at once), in an order whose blocks are
    independent, so both cores of a laptop work. The result equals the whole-grid combine,
    variable order included (tests/results/test_campaign.py checks both against it). Only the
    order of the coordinates depends on the order of the concatenations; it is put in the
    whole-grid combine's: the other coordinates as they come, then the run keys concatenated
    before the last one, in :data:`RUN_KEYS` order.
    """
    if jobs > 1 and len(grid) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=min(jobs, len(grid))) as pool:
            blocks = list(pool.map(_combine_block, grid))
    else:
        blocks = [_combine_block(block) for block in grid]
    grid.clear()  # the blocks hold the data now: let the runs go
    campaign = _combine(blocks, RUN_KEYS[:1])
    del blocks
    moved_last = list(RUN_KEYS[:-1])
    coordinates = [*(n for n in campaign.coords if n not in moved_last), *moved_last]
    order = [*campaign.data_vars, *coordinates]
    reordered = xr.Dataset({n: campaign.variables[n] for n in order}, attrs=campaign.attrs)
    reordered.encoding = campaign.encoding
    return reordered


def merge_runs(
    paths: Sequence[str | Path], allow_mixed: Sequence[str] = (), jobs: int = 1,
    max_queries: int | None = MAX_QUERIES,
) -> xr.Dataset:
    """Merge run files into one campaign Dataset with dimensions ``RUN_KEYS`` + run dimensions.

    Ragged runs are NaN-padded along ``iteration``; benchmarks with different spatial dimension
    or time grid are NaN-padded along ``dim``/``time`` (the ``time`` coordinate is the union of
    all grids). Cells of the run grid without a run (e.g. a missing seed) are NaN with
    ``run_present == 0``. Integer variables that get padded become float64.

    Raises ValueError on an empty list or on two files with the same run key, and (via
    :func:`tvbo.results.validate.load_runs`) on an unreadable file or runs made under different
    conditions (horizon, compute model, cost table, tvbo version) unless ``allow_mixed`` names
    the field; the allowed fields are recorded in the ``mixed_allowed`` attribute.

    ``jobs`` worker processes read the run files and combine the benchmarks' blocks of the run
    grid; the campaign does not depend on it (the same file, byte for byte).
    """
    paths = list(paths)
    if not paths:
        raise ValueError("merge_runs needs at least one run file, got an empty list")
    grid, moved, integer_dtypes, omitted = _prepared_grid(paths, allow_mixed, jobs, max_queries)
    campaign = _combine_grid(grid, jobs)
    for name in campaign.data_vars:
        if campaign.variables[name].dtype == object:
            values = campaign.variables[name].values
            mask = pd.isna(values)
            if mask.any():
                values = values.copy()
                values[mask] = ""
                campaign[name] = campaign[name].copy(data=values)
    for name, dtype in integer_dtypes.items():
        if campaign[name].dtype.kind == "f":
            campaign[name].attrs[ORIGINAL_DTYPE] = dtype
    campaign[PRESENT_VARIABLE] = campaign[PRESENT_VARIABLE].fillna(0).astype(np.int8)
    campaign[PRESENT_VARIABLE].attrs.update(
        units="1", long_name="1 for a run that exists, 0 for a padding cell of the run grid"
    )
    campaign.attrs[PER_RUN_ATTRIBUTES] = ",".join(moved)
    campaign.attrs["n_runs"] = len(paths)
    if omitted:
        campaign.attrs[PER_QUERY_OMITTED] = json.dumps({"max_queries": max_queries,
                                                        "runs": omitted})
    if allow_mixed:
        campaign.attrs[MIXED_ALLOWED_ATTRIBUTE] = ",".join(parse_allow_mixed(list(allow_mixed)))
    return campaign.transpose(*RUN_KEYS, ...)


def write_campaign(ds: xr.Dataset, path: str | Path) -> Path:
    """Write a campaign Dataset atomically (netCDF4, zlib); returns the path written."""
    missing = [k for k in RUN_KEYS if k not in ds.dims]
    if missing:
        raise ValueError(f"not a campaign: missing run-key dimensions {missing}")
    return write_netcdf_atomic(ds, path)


def read_campaign(path: str | Path) -> xr.Dataset:
    """Open a campaign file, virtual times as float seconds; values are read when first used.

    Lazily (no dask; a variable once read stays in memory): a campaign is stored compressed and
    padded to its longest run, so loading all of it costs ~2 GB and ~10 s for 700 runs while
    e.g. the closing summary of the workflow reads only per-run summaries.
    """
    return xr.open_dataset(path, engine=NETCDF_ENGINE, decode_timedelta=False)


def run_variables(ds: xr.Dataset) -> list[Hashable]:
    """Data variables that hold one value per run (their dims are a subset of the run keys)."""
    return [n for n, v in ds.data_vars.items() if v.dims and set(v.dims) <= set(RUN_KEYS)]


def runs_table(ds: xr.Dataset) -> pd.DataFrame:
    """One row per existing run: the run keys and every per-run variable (summaries, attr_*).

    Padding cells of a campaign (``run_present == 0``) are left out; without that marker
    (e.g. a single run file) a row is kept when any numeric summary is finite.
    """
    names = run_variables(ds)
    if not names:
        raise ValueError(
            f"no per-run variables (dims within {list(RUN_KEYS)}) in dataset with variables "
            f"{list(ds.data_vars)}"
        )
    present_dims = [k for k in RUN_KEYS if k in ds.dims]
    frame = ds[names].transpose(*present_dims).to_dataframe().reset_index()
    if PRESENT_VARIABLE in frame.columns:
        frame = frame[frame[PRESENT_VARIABLE] == 1].drop(columns=PRESENT_VARIABLE)
    else:
        numeric = frame[[n for n in names if ds[n].dtype.kind in "biuf"]]
        frame = frame[numeric.notna().any(axis=1)] if numeric.shape[1] else frame
    frame = frame.reset_index(drop=True)
    # padding made integer summaries (n_iterations, ...) float; restore them once padding is gone
    for name in names:
        original = ds[name].attrs.get(ORIGINAL_DTYPE)
        if original is not None and frame[name].notna().all():
            frame[name] = frame[name].astype(original)
    return frame


def run_configs(campaign: xr.Dataset) -> list[dict]:
    """The recorded configuration (``config_json``) of every present run of a campaign.

    A run records its configuration as the JSON attribute ``config_json``; in a merged campaign
    it is a global attribute when every run has the same, else the per-run variable
    ``attr_config_json`` (cells without a run are skipped). Unparsable texts are skipped.
    """
    texts: list[str] = []
    if "config_json" in campaign.attrs:
        texts.append(str(campaign.attrs["config_json"]))
    variable = ATTRIBUTE_PREFIX + "config_json"
    if variable in campaign.data_vars:
        values = campaign[variable].values
        if PRESENT_VARIABLE in campaign.data_vars:
            present = campaign[PRESENT_VARIABLE].transpose(*campaign[variable].dims).values == 1
            values = values[present]
        texts += [str(v) for v in np.ravel(values) if str(v)]
    configs = []
    for text in texts:
        try:
            config = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(config, dict):
            configs.append(config)
    return configs
