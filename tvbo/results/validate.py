"""Check result files before they are merged or analysed: readable, and comparable with each other.

Why: ``tvbo merge``, ``tvbo table``, ``tvbo figures`` (and every command reading a campaign)
used to hand a truncated, empty or foreign file straight to the netCDF library, which answers
with a traceback; and ``merge`` silently combined runs made under different conditions, so a
table could compare an algorithm run for 600 s with one run for 120 s, or counted with measured
compute time, without a trace in the output. This module is the one place that

* opens a run or campaign file and turns every failure into ONE :class:`ValueError` line that
  names the file and what is wrong (empty, not netCDF, truncated or corrupt, not a run);
* compares the conditions of the runs (:data:`MIXABLE`) and refuses a mix, naming the field,
  the two values and the two files, unless the caller allows that field explicitly.

The fields, and why each must agree (the run's attributes are written by
:func:`tvbo.api.simulate`; see :mod:`tvbo.results.schema`):

``horizon``
    the virtual horizon H. It is compared among the runs of the SAME benchmark only: the papers'
    tables give each benchmark its own horizon, so different benchmarks legitimately differ.
``compute``
    the compute model (``counted`` / ``measured`` / ``polynomial``) and its parameters: the
    hardware profile's name and coefficients, the polynomial's coefficients. The speed factor is
    left out: it is a run key, and a what-if campaign varies it on purpose (but a run whose
    recorded speed differs from its ``speed`` coordinate is refused: the file is inconsistent).
    One exception: runs replayed through a response-time model (``polynomial`` with a model
    from ``tvbo calibrate --from-runs``, an outside algorithm's measured cost made
    deterministic) merge with ``counted`` runs, each algorithm with one model; the tables say
    so in a caveat line. ``measured`` runs still merge with nothing else.
``cost_table``
    the published noise/cost table (``metronome`` or ``icml``) the benchmark settings came from.
``tvbo_version``
    the version of tvbo that made the run (numerics may change between versions).

A campaign merged with an allowance records it in its ``mixed_allowed`` attribute; the checks of
:func:`load_campaign` honour it, so a campaign made by an older ``merge`` (or by hand) with a
silent mix is refused by ``table``/``figures`` too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from tvbo.results.io import NETCDF_ENGINE, validate_run
from tvbo.results.schema import ATTRIBUTE_PREFIX, PRESENT_VARIABLE, RUN_KEYS

__all__ = [
    "MIXABLE",
    "MIXED_ALLOWED_ATTRIBUTE",
    "MixedRunsError",
    "check_consistent",
    "load_campaign",
    "load_runs",
    "open_netcdf",
    "parse_allow_mixed",
    "run_conditions",
]

#: conditions that must agree between the runs of a campaign unless explicitly allowed
MIXABLE: tuple[str, ...] = ("horizon", "compute", "cost_table", "tvbo_version")
#: campaign attribute listing the fields a merge was allowed to mix (comma-separated)
MIXED_ALLOWED_ATTRIBUTE = "mixed_allowed"
_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
_CLASSIC_MAGIC = (b"CDF\x01", b"CDF\x02", b"CDF\x05")


class MixedRunsError(ValueError):
    """Runs made under different conditions (a :data:`MIXABLE` field differs)."""


def parse_allow_mixed(values: str | Iterable[str] | None) -> tuple[str, ...]:
    """``"horizon,compute"`` (or a list of such strings) -> the fields; unknown names raise.

    The message lists the valid fields, so a typo is fixed in one round trip.
    """
    if values is None:
        return ()
    items = [values] if isinstance(values, str) else list(values)
    fields = [f.strip() for item in items for f in str(item).split(",") if f.strip()]
    unknown = [f for f in fields if f not in MIXABLE]
    if unknown:
        raise ValueError(
            f"unknown field(s) {', '.join(repr(f) for f in unknown)} in --allow-mixed; "
            f"valid fields: {', '.join(MIXABLE)}"
        )
    return tuple(dict.fromkeys(fields))


def open_netcdf(path: str | Path, kind: str = "run", *, lazy: bool = False) -> xr.Dataset:
    """Load a netCDF file into memory; any failure is ONE ValueError naming the file.

    The first bytes are checked before the netCDF library sees the file, so an empty file, a
    CSV or a PNG passed by mistake gets a plain answer rather than "NetCDF: Unknown file
    format"; a file that starts like netCDF but cannot be read is reported as truncated or
    corrupt (an interrupted copy, or a write by a tool that does not write atomically).

    ``lazy``: read a variable's values only when they are first used (then kept, no dask).
    Why: a campaign is stored compressed and padded to its longest run; a 700-run campaign of
    50 MB is ~2 GB in memory, and an analysis that reads a few per-run summaries loaded all of
    it (analysis jobs of a 2,100-run campaign were killed by the OOM killer when two ran at
    once). The file's structure (header, every variable's metadata) is still read at once, so
    a truncated or foreign file is refused here as before.
    """
    path = Path(path)
    written_by = "tvbo run" if kind == "run" else "tvbo merge"
    try:
        with open(path, "rb") as handle:
            head = handle.read(8)
        size = path.stat().st_size
    except OSError as err:
        raise ValueError(f"{path}: cannot read the {kind} file ({err.strerror or err})") from None
    if size == 0:
        raise ValueError(f"{path}: empty file (0 bytes); expected a netCDF {kind} file")
    if not (head.startswith(_HDF5_MAGIC) or head[:4] in _CLASSIC_MAGIC):
        raise ValueError(
            f"{path}: not a netCDF file (starts with {head!r}); expected a netCDF {kind} file "
            f"written by '{written_by}'"
        )
    try:
        if lazy:
            return xr.open_dataset(path, engine=NETCDF_ENGINE, decode_timedelta=False)
        return xr.load_dataset(path, engine=NETCDF_ENGINE, decode_timedelta=False)
    except (OSError, RuntimeError, ValueError, KeyError, IndexError) as err:
        cause = str(err).replace(repr(str(path)), "").replace(str(path), "").rstrip(": ")
        cause = " ".join(cause.split()) or type(err).__name__
        raise ValueError(
            f"{path}: truncated or corrupt netCDF file ({size} bytes; {cause}); "
            f"expected a complete {kind} file: write it again with '{written_by}'"
        ) from None


def _json(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(str(text))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _compute_identity(model: Any, parameters: dict[str, Any]) -> str:
    """What makes compute times comparable: model and parameters, without speed and prose."""
    identity = {k: v for k, v in parameters.items() if k != "speed"}
    identity["model"] = str(parameters.get("model", model))
    profile = identity.get("profile")
    if isinstance(profile, dict):  # description and machine are provenance, not semantics
        identity["profile"] = {k: profile[k] for k in ("name", "coefficients") if k in profile}
    return json.dumps(identity, sort_keys=True)


def run_conditions(attrs: dict[str, Any]) -> dict[str, Any]:
    """The :data:`MIXABLE` conditions of one run, from its global attributes.

    A condition a file does not record (older runs) is ``None`` and compares equal only to
    ``None``.
    """
    config = _json(attrs.get("config_json", "{}"))
    compute = _json(attrs.get("compute_model_json", "{}"))
    bench = config.get("benchmark") if isinstance(config.get("benchmark"), dict) else {}
    cost_table = config.get("cost_table", bench.get("table"))
    horizon = attrs.get("horizon")
    return {
        "horizon": None if horizon is None else float(np.asarray(horizon).item()),
        "compute": _compute_identity(attrs.get("compute_model"), compute)
        if ("compute_model" in attrs or compute)
        else None,
        "cost_table": cost_table,
        "tvbo_version": attrs.get("tvbo_version"),
        "_speed": compute.get("speed"),
        "_replay": isinstance(compute.get("replay"), dict),
    }


def _show(field: str, value: Any, other: Any = None) -> str:
    """A value for the message; a profile's coefficients only when both name the same profile."""
    if field != "compute" or not isinstance(value, str):
        return repr(value)
    identity = json.loads(value)
    other_profile = json.loads(other).get("profile") if isinstance(other, str) else None
    profile = identity.get("profile")
    parts = [str(identity.get("model", "?"))]
    if isinstance(profile, dict):
        parts.append(f"profile {profile.get('name', '?')}")
        same_name = isinstance(other_profile, dict) and other_profile.get("name") == profile.get(
            "name"
        )
        if same_name and "coefficients" in profile:
            parts.append(f"coefficients {json.dumps(profile['coefficients'], sort_keys=True)}")
    elif profile is not None:
        parts.append(f"profile {profile}")
    for key in sorted(set(identity) - {"model", "profile"}):
        parts.append(f"{key} {json.dumps(identity[key])}")
    return repr(", ".join(parts))


def check_consistent(
    runs: Sequence[tuple[str, tuple[Any, ...], dict[str, Any]]],
    allow_mixed: Iterable[str] = (),
) -> None:
    """Refuse runs whose conditions differ in a field not in ``allow_mixed``.

    ``runs`` holds ``(label, run key, conditions)`` with conditions from
    :func:`run_conditions`; ``label`` names the file in the message. ``horizon`` is compared
    within a benchmark (the first run key), the other fields across all runs.
    """
    allowed = set(parse_allow_mixed(list(allow_mixed)))
    bench_axis = RUN_KEYS.index("benchmark")
    speed_axis = RUN_KEYS.index("speed")
    for label, key, cond in runs:
        recorded = cond.get("_speed")
        if recorded is not None and not np.isclose(float(recorded), float(key[speed_axis])):
            raise ValueError(
                f"{label}: inconsistent run: speed coordinate {key[speed_axis]!r} but its compute "
                f"model records speed {recorded!r}"
            )
    if "compute" not in allowed:
        _check_replays(runs)
    for field in MIXABLE:
        if field in allowed:
            continue
        first: dict[Any, tuple[str, Any]] = {}
        for label, key, cond in runs:
            if field == "compute" and cond.get("_replay"):
                continue  # judged by _check_replays
            group = key[bench_axis] if field == "horizon" else None
            value = cond.get(field)
            if group not in first:
                first[group] = (label, value)
                continue
            label0, value0 = first[group]
            if value != value0:
                scope = f"runs of benchmark {group!r}" if field == "horizon" else "runs"
                raise MixedRunsError(
                    f"{scope} differ in {field}: {_show(field, value0, value)} in {label0} vs "
                    f"{_show(field, value, value0)} in {label}; a campaign compares like with like "
                    f"(pass --allow-mixed {field} to merge them anyway)"
                )


def _check_replays(runs: Sequence[tuple[str, tuple[Any, ...], dict[str, Any]]]) -> None:
    """Replayed runs (``polynomial`` through a response-time model of ``tvbo calibrate
    --from-runs``) merge with ``counted`` runs: both are deterministic virtual compute, priced
    from the algorithm's own reported work or from its own measured response time. Each
    algorithm's replayed runs must share one model; a replay beside ``measured`` or an explicit
    polynomial is refused (those are not comparable prices). Tables carry a caveat line
    (:func:`tvbo.analysis.context.setting_text`)."""
    algorithm_axis = RUN_KEYS.index("algorithm")
    models: dict[Any, tuple[str, Any]] = {}
    other: tuple[str, Any] | None = None  # the first run neither replayed nor counted
    for label, key, cond in runs:
        if cond.get("_replay"):
            algorithm = key[algorithm_axis]
            if algorithm in models and models[algorithm][1] != cond.get("compute"):
                raise MixedRunsError(
                    f"runs of {algorithm!r} replay different response-time models in "
                    f"{models[algorithm][0]} and {label}; a campaign compares like with like "
                    "(pass --allow-mixed compute to merge them anyway)")
            models.setdefault(algorithm, (label, cond.get("compute")))
        elif other is None:
            model = json.loads(cond["compute"]).get("model") if cond.get("compute") else None
            if model != "counted":
                other = (label, cond.get("compute"))
    if models and other is not None:
        first = next(iter(models.values()))[0]
        raise MixedRunsError(
            f"runs differ in compute: a replayed response-time model in {first} vs "
            f"{_show('compute', other[1])} in {other[0]}; replayed runs merge only with counted "
            "runs (pass --allow-mixed compute to merge them anyway)")


def _run_key(ds: xr.Dataset, path: str | Path) -> tuple[Any, ...]:
    bad = [k for k in RUN_KEYS if k not in ds.dims or k not in ds.coords or ds.sizes[k] != 1]
    if bad:
        raise ValueError(
            f"{path}: not a run file: run keys {bad} are not length-1 dimension coordinates "
            f"(a run file needs all of {list(RUN_KEYS)}; is it a campaign?)"
        )
    return tuple(ds[k].values[0].item() for k in RUN_KEYS)


def _load_run(path: str | Path) -> tuple[xr.Dataset, tuple[Any, ...], dict[str, Any]]:
    """One run file opened, its layout checked: ``(dataset, run key, conditions)``.

    A module-level function so that a worker process of :func:`load_runs` can run it.
    """
    ds = open_netcdf(path, "run")
    key = _run_key(ds, path)
    try:
        validate_run(ds)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    return ds, key, run_conditions(dict(ds.attrs))


def _check_jobs(jobs: int) -> int:
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer (worker processes), got {jobs!r}")
    return jobs


def load_runs(
    paths: Sequence[str | Path], allow_mixed: Iterable[str] = (), jobs: int = 1
) -> list[xr.Dataset]:
    """Open every run file, check its layout and that the runs are comparable; return them.

    All files are opened and checked before anything is merged or written. Raises one
    :class:`ValueError` (:class:`MixedRunsError` for a mix) naming the file(s); with several
    bad files, the first one in ``paths`` order is named, whatever ``jobs`` is.

    ``jobs`` > 1 reads the files in that many worker processes. Why: opening a netCDF4/HDF5 run
    file and decoding its ~80 variables costs tens of milliseconds in the netCDF library and
    xarray's decoding, the largest part of merging a campaign of hundreds of runs, and it is
    independent per file. The datasets come back in ``paths`` order and are the same objects
    (values, attributes, encodings) as a sequential read gives.
    """
    paths = list(paths)
    jobs = min(_check_jobs(jobs), max(len(paths), 1))
    if jobs == 1:
        loaded = [_load_run(path) for path in paths]
    else:
        from concurrent.futures import ProcessPoolExecutor

        # chunks of files per task: one pickled dataset per file, few round trips
        chunksize = max(1, len(paths) // (4 * jobs))
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            loaded = list(pool.map(_load_run, paths, chunksize=chunksize))
    check_consistent(
        [(str(path), key, cond) for path, (_, key, cond) in zip(paths, loaded, strict=True)],
        allow_mixed,
    )
    return [ds for ds, _, _ in loaded]


def _campaign_runs(ds: xr.Dataset, path: str | Path) -> list[tuple[str, tuple, dict]]:
    """``(label, key, conditions)`` of every present run of a campaign (labels name the cell)."""
    if not all(k in ds.dims for k in RUN_KEYS):
        return []  # a single run file read as a campaign: nothing to compare
    names = ("tvbo_version", "config_json", "compute_model", "compute_model_json", "horizon")
    per_run = {n: ds[ATTRIBUTE_PREFIX + n].transpose(*RUN_KEYS).values
               for n in names if ATTRIBUTE_PREFIX + n in ds.data_vars}  # fmt: skip
    shared = {n: ds.attrs[n] for n in names if n in ds.attrs}
    if PRESENT_VARIABLE in ds.data_vars:
        present = ds[PRESENT_VARIABLE].transpose(*RUN_KEYS).values == 1
    else:
        present = np.ones(tuple(ds.sizes[k] for k in RUN_KEYS), dtype=bool)
    axes = [ds[k].values for k in RUN_KEYS]
    runs = []
    for index in zip(*np.nonzero(present), strict=True):
        key = tuple(axis[i].item() for axis, i in zip(axes, index, strict=True))
        attrs = dict(shared)
        for name, values in per_run.items():
            value = values[index]
            if not (isinstance(value, float) and np.isnan(value)) and value != "":
                attrs[name] = value
        label = f"{path} run {dict(zip(RUN_KEYS, key, strict=True))}"
        runs.append((label, key, run_conditions(attrs)))
    return runs


def load_campaign(path: str | Path) -> xr.Dataset:
    """Open a campaign file for ``table``/``figures``/...: readable, and not a silent mix.

    The values are read lazily (:func:`open_netcdf`): an analysis holds in memory only the
    variables it uses. Fields the merge was allowed to mix (attribute
    :data:`MIXED_ALLOWED_ATTRIBUTE`) are not checked again.
    """
    ds = open_netcdf(path, "campaign", lazy=True)
    if "average_regret" not in ds.data_vars:  # every run file records it: not a tvbo campaign
        raise ValueError(f"{path}: not a tvbo campaign or run file: it has no 'average_regret' "
                         "(merge run files with `tvbo merge runs/*.nc --out campaign.nc`)")
    allowed = parse_allow_mixed(str(ds.attrs.get(MIXED_ALLOWED_ATTRIBUTE, "")))
    check_consistent(_campaign_runs(ds, path), allowed)
    return ds
