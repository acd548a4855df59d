"""The f*(t) grid of a benchmark's oracle, computed once and shared by every run as a file.

Why: building the grid (:meth:`TimeGridOracle._build`, a multistart per grid time plus
re-polishing sweeps) costs seconds and is identical for every run of one benchmark
configuration; a campaign of hundreds of runs would rebuild it hundreds of times. ``tvbo oracle``
(or :func:`write_oracle_table`) builds it once; a run given the file (``tvbo run --oracle-table``,
``tvbo.simulate(..., oracle_table=...)``) loads it instead of building. The loaded grid is the
same float64 array the run would have built, so results are bit-identical with or without it.

A table is trusted only for the benchmark configuration it was built for. The file (numpy
``.npz``, no pickles) holds ``times``, ``f_star``, ``argmax`` and a JSON header with

* ``benchmark``: the benchmark's name;
* ``options``: the benchmark's full description (``Benchmark.describe()``: horizon, cost, noise,
  cost table, grid step, data path, ...) as canonical JSON. All of it must match, even entries
  that do not move f* (cost, noise): which entries matter differs between benchmarks, and a
  strict match can never pair a table with the wrong objective;
* ``horizon``;
* ``settings_sha256``: a hash of the oracle settings (:func:`oracle_settings`: grid size and
  step, the benchmark class's ``oracle_*`` sample counts, the sweep/scan schedule, the L-BFGS-B
  tolerances and :data:`~tvbo.benchmarks.oracle.ORACLE_CODE_VERSION`, which is bumped whenever
  the oracle's numerics change) -- the settings themselves are stored too, so a mismatch names
  the setting;
* ``data_sha256``: a hash of the three arrays, so a file damaged in a way the zip checksums miss
  is still caught.

Any mismatch or damage raises :class:`OracleTableError` (a ``ValueError``: the CLI reports it as
one line and exit status 2) naming the field, the expected and the found value. A run never falls
back silently to building its own grid when a table was given.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tvbo.benchmarks.base import Benchmark
from tvbo.benchmarks.oracle import _LBFGSB_OPTIONS, ORACLE_CODE_VERSION, TimeGridOracle
from tvbo.version import __version__

#: identifies the file kind and its layout version
FORMAT = "tvbo-oracle-table"
FORMAT_VERSION = 1

#: benchmarks whose grid costs (far) less than reading a table: exact closed-form or data
#: maxima (Ackley's and Schwefel's fixed argmax, the static BOKE functions, the discrete hills,
#: the sprinkler's stored optimum, the real-data fields' sensor maxima). The workflow builds no
#: table for them (``tvbo oracle`` still accepts them). Every other benchmark, including new
#: ones, gets a table by default.
NO_TABLE_NEEDED: frozenset[str] = frozenset(
    {
        "ackley", "schwefel", "forrester", "goldstein-price", "hartmann3-static", "hills",
        "rosenbrock4", "six-hump-camel", "sphere6", "sprinkler", "temperature",
        "temperature-sensors", "ozone", "ozone-sensors",
    }
)


class OracleTableError(ValueError):
    """A table that cannot be used for this run (damaged, or built for something else)."""


@dataclass(frozen=True)
class OracleTable:
    """One benchmark configuration's f*(t) grid and the header that identifies it."""

    times: np.ndarray
    f_star: np.ndarray
    argmax: np.ndarray
    header: dict[str, Any]


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def canonical_json(value: Any) -> str:
    """Sorted-key, compact JSON; numpy scalars as numbers, anything else unknown as text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_jsonable)


def oracle_settings(benchmark: Benchmark) -> dict[str, Any]:
    """Everything besides the benchmark's options that decides the grid the oracle builds.

    Collected generically: every scalar class attribute named ``oracle_*`` of the benchmark
    (sample counts, ``oracle_exact``, ...), so a new benchmark's settings are hashed without
    changes here.
    """
    cls = type(benchmark)
    own = {}
    for name in dir(cls):
        if name.startswith("oracle_"):
            value = getattr(benchmark, name)
            if isinstance(value, bool | int | float | str | np.generic):
                own[name] = _jsonable(value) if isinstance(value, np.generic) else value
    oracle = benchmark.oracle
    return {
        "oracle_code_version": ORACLE_CODE_VERSION,
        "class": f"{cls.__module__}.{cls.__qualname__}",
        "benchmark_settings": own,
        "grid_step": float(benchmark.oracle_grid_step),
        "grid_points": len(oracle.times),
        "max_sweeps": int(oracle.max_sweeps),
        "scan_every": int(oracle.scan_every),
        "lbfgsb": dict(_LBFGSB_OPTIONS),
    }


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _data_sha256(times: np.ndarray, f_star: np.ndarray, argmax: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in (times, f_star, argmax):
        a = np.ascontiguousarray(a, dtype="<f8")
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def expected_header(benchmark: Benchmark) -> dict[str, Any]:
    """The header a table for ``benchmark`` (as configured) must carry."""
    settings = oracle_settings(benchmark)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "benchmark": benchmark.name,
        "options": canonical_json(benchmark.describe()),
        "horizon": float(benchmark.horizon),
        "settings": canonical_json(settings),
        "settings_sha256": _sha256(canonical_json(settings)),
    }


def build_oracle_table(benchmark: Benchmark) -> OracleTable:
    """Build ``benchmark``'s grid from scratch (on a fresh oracle: no run's refinements)."""
    fresh = TimeGridOracle(benchmark, benchmark.oracle_grid_step)
    cpu = time.process_time()
    times, argmax, f_star = fresh.grid()
    cpu = time.process_time() - cpu
    header = expected_header(benchmark)
    header["tvbo_version"] = __version__
    # what the build cost (informational, never checked): the campaign-time model's table price
    # (tvbo.campaign_time, scripts/fit_campaign_time.py)
    header["build_cpu_seconds"] = float(cpu)
    header["data_sha256"] = _data_sha256(times, f_star, argmax)
    return OracleTable(times=times, f_star=f_star, argmax=argmax, header=header)


def write_oracle_table(table: OracleTable, path: str | Path) -> Path:
    """Write ``table`` atomically (temporary file in the target folder, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez(
        buffer,
        times=np.asarray(table.times, "<f8"),
        f_star=np.asarray(table.f_star, "<f8"),
        argmax=np.asarray(table.argmax, "<f8"),
        header=np.array(canonical_json(table.header)),
    )
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(buffer.getvalue())
            handle.flush()
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would hide the table from other users
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_oracle_table(path: str | Path) -> OracleTable:
    """Read a table and check its integrity (not yet whether it fits a benchmark)."""
    path = Path(path)
    where = f"oracle table {path}"
    if not path.is_file():
        raise OracleTableError(f"{where}: no such file")
    try:
        with np.load(path, allow_pickle=False) as npz:
            names = set(npz.files)
            missing = sorted({"times", "f_star", "argmax", "header"} - names)
            if missing:
                raise OracleTableError(
                    f"{where}: field(s) {', '.join(missing)} missing (not an oracle table)"
                )
            times, f_star, argmax = (
                np.asarray(npz[k], float) for k in ("times", "f_star", "argmax")
            )
            header_text = str(npz["header"])
    except OracleTableError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as err:
        raise OracleTableError(
            f"{where}: unreadable (truncated or not an oracle table): {err}"
        ) from None
    try:
        header = json.loads(header_text)
    except json.JSONDecodeError as err:
        raise OracleTableError(f"{where}: header is not JSON ({err})") from None
    if not isinstance(header, dict):
        raise OracleTableError(f"{where}: header must be a JSON object, found {header_text!r}")
    fmt = header.get("format")
    if fmt != FORMAT:
        raise OracleTableError(f"{where}: format expected {FORMAT!r}, found {fmt!r}")
    version = header.get("format_version")
    if version != FORMAT_VERSION:
        raise OracleTableError(
            f"{where}: format_version expected {FORMAT_VERSION}, found {version!r}"
        )
    n = len(times)
    if times.ndim != 1 or f_star.shape != (n,) or argmax.ndim != 2 or len(argmax) != n:
        raise OracleTableError(
            f"{where}: array shapes inconsistent: times {times.shape}, f_star {f_star.shape}, "
            f"argmax {argmax.shape}"
        )
    digest = _data_sha256(times, f_star, argmax)
    if header.get("data_sha256") != digest:
        raise OracleTableError(
            f"{where}: data_sha256 expected {header.get('data_sha256')!r} (header), found "
            f"{digest!r} (arrays): the file is damaged"
        )
    if not (np.all(np.isfinite(times)) and np.all(np.isfinite(f_star))
            and np.all(np.isfinite(argmax))):
        raise OracleTableError(f"{where}: non-finite values in the arrays")
    return OracleTable(times=times, f_star=f_star, argmax=argmax, header=header)


def _first_difference(expected: Any, found: Any, prefix: str = "") -> tuple[str, Any, Any]:
    """The first key path where two decoded JSON values differ (dotted), and both values."""
    if isinstance(expected, dict) and isinstance(found, dict):
        for key in sorted(set(expected) | set(found)):
            if expected.get(key, "<absent>") != found.get(key, "<absent>"):
                return _first_difference(
                    expected.get(key, "<absent>"), found.get(key, "<absent>"), f"{prefix}{key}."
                )
    return prefix.rstrip("."), expected, found


def check_oracle_table(table: OracleTable, benchmark: Benchmark, source: str = "") -> None:
    """Raise :class:`OracleTableError` unless ``table`` was built for ``benchmark`` as configured.

    Fields are checked in the order benchmark, horizon, options, settings, grid times; the error
    names the first mismatching one with the expected (this run's) and the found (file) value.
    """
    where = f"oracle table {source}" if source else "oracle table"
    want = expected_header(benchmark)
    got = table.header
    if got.get("benchmark") != want["benchmark"]:
        raise OracleTableError(
            f"{where}: benchmark expected {want['benchmark']!r}, found {got.get('benchmark')!r}"
        )
    if got.get("horizon") != want["horizon"]:
        raise OracleTableError(
            f"{where}: horizon expected {want['horizon']!r}, found {got.get('horizon')!r}"
        )
    for field, label in (("options", "benchmark option"), ("settings", "oracle setting")):
        if got.get(field) != want[field]:
            try:
                key, a, b = _first_difference(json.loads(want[field]), json.loads(got.get(field)))
            except (TypeError, json.JSONDecodeError):
                key, a, b = "", want[field], got.get(field)
            raise OracleTableError(
                f"{where}: {label} {key or field!r} expected {a!r}, found {b!r}"
            )
    if got.get("settings_sha256") != want["settings_sha256"]:
        raise OracleTableError(
            f"{where}: settings_sha256 expected {want['settings_sha256']!r}, found "
            f"{got.get('settings_sha256')!r}"
        )
    grid = benchmark.oracle.times
    if table.times.shape != grid.shape or not np.array_equal(table.times, grid):
        raise OracleTableError(
            f"{where}: grid times expected {len(grid)} points on [0, {grid[-1]:g}], found "
            f"{len(table.times)} points that differ"
        )
    if table.argmax.shape[1] != benchmark.d:
        raise OracleTableError(
            f"{where}: argmax dimension expected {benchmark.d}, found {table.argmax.shape[1]}"
        )


def load_oracle_table(benchmark: Benchmark, path: str | Path) -> OracleTable:
    """Read ``path``, check it fits ``benchmark`` and install its grid in the benchmark's oracle."""
    table = read_oracle_table(path)
    check_oracle_table(table, benchmark, str(path))
    benchmark.oracle.set_grid(table.argmax, table.f_star)
    return table
