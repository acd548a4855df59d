"""Which code a run executed, and which run files a later change of the code makes stale.

Why: Snakemake decides what to rebuild from files and parameters, never from the Python modules
a job imports. After an edit of tvbo's source, ``snakemake`` finds every run file up to date, so
a regenerated report could silently mix runs of two versions of the code; and the one way to be
safe was to rebuild everything (the whole reproduction: hours) after a one-line change to one
algorithm. A run file therefore records the code it ran (``code_sha256``,
:data:`tvbo.results.schema.CODE_ATTRIBUTE`), and ``tvbo stale`` compares that record with the
source as it is now: a run is stale when a module it loaded has changed or is gone. An f*(t)
table records the code that built it the same way, in its header (``tvbo oracle``). Deleting
the stale files (``tvbo stale --delete``) makes the next ``snakemake`` rebuild exactly those
runs and tables, and the merges and reports above them.

What is recorded: the sha256 (first :data:`DIGEST_CHARS` hex digits) of the source file of every
module loaded in the process when the run ended whose top-level package is tvbo or the package
of the algorithm's or the benchmark's class (a plugin's). Read from ``sys.modules`` at run time,
not derived from the import statements: an algorithm's parts are imported by name from the
catalogue, and only the modules actually loaded could have run. A run of BOLT loads BOLT's and
W-DBO's paper packages and tvbo's shared core (the GP, the acquisition, the engine, the
benchmark), not SparQ's, so an edit of ``tvbo/algorithms/sparq`` leaves it current. The record
is a superset when the process had loaded more (a second run of a ``tvbo run-many`` job, a
notebook): a change to such a module marks the run stale too, never the reverse.

What it does not see: code outside those packages (numpy, scipy: the run's ``versions_json``
records their versions), data files a run reads (the hardware profiles' YAML is recorded in
``compute_model_json``; a benchmark's prepared data file is an input Snakemake tracks).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["DIGEST_CHARS", "campaign_folder", "changed_modules", "check_runs", "code_of",
           "file_digest", "loaded_code", "parse", "run_files", "source_file"]

#: hex digits of a module file's sha256 kept in the record (64 bits: no accidental collision)
DIGEST_CHARS = 16

_digests: dict[tuple[str, int, int], str] = {}


def file_digest(path: str | Path) -> str:
    """sha256 of a file's bytes (first :data:`DIGEST_CHARS` hex digits), cached per process by
    path, size and modification time (a ``tvbo run-many`` job hashes each file once)."""
    path = Path(path)
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _digests:
        _digests[key] = hashlib.sha256(path.read_bytes()).hexdigest()[:DIGEST_CHARS]
    return _digests[key]


def code_of(*objects: object) -> dict[str, str]:
    """The record of what made ``objects`` (a run's algorithm and benchmark, a table's
    benchmark): :func:`loaded_code` of tvbo and of each object's own top-level package (a
    plugin's)."""
    return loaded_code({"tvbo", *(type(obj).__module__.partition(".")[0] for obj in objects)})


def loaded_code(packages: Iterable[str]) -> dict[str, str]:
    """``{module: digest}`` of every loaded module (``sys.modules``) whose top-level package is
    one of ``packages`` and whose code is a Python source file, sorted by name."""
    tops = set(packages)
    out: dict[str, str] = {}
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] not in tops:
            continue
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.endswith(".py") and Path(path).is_file():
            out[name] = file_digest(path)
    return dict(sorted(out.items()))


def parse(value: str | dict) -> dict[str, str]:
    """A record as stored: a run file's attribute (JSON text) or a table header's field (the
    decoded object); ValueError when it is not ``{module: digest}``."""
    record = value
    if isinstance(value, str):
        try:
            record = json.loads(value)
        except json.JSONDecodeError as err:
            raise ValueError(f"not a code record (JSON {{module: digest}}): {err}") from None
    if not isinstance(record, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in record.items()):
        raise ValueError("not a code record (JSON {module: digest})")
    return record


def source_file(module: str) -> Path | None:
    """The source file ``module`` would be imported from now (None: no such module, or not a
    Python source file). Its parent packages are imported to find it, the module itself is not.
    """
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = getattr(spec, "origin", None) if spec is not None else None
    if not isinstance(origin, str) or not origin.endswith(".py") or not Path(origin).is_file():
        return None
    return Path(origin)


def changed_modules(record: Mapping[str, str], _files: dict[str, Path | None] | None = None
                    ) -> list[str]:
    """The modules of ``record`` whose source is gone or differs from what the run executed.

    ``_files`` caches :func:`source_file` across the runs of one check (a campaign's runs share
    most modules)."""
    files = {} if _files is None else _files
    out = []
    for module, digest in record.items():
        if module not in files:
            files[module] = source_file(module)
        path = files[module]
        if path is None or file_digest(path) != digest:
            out.append(module)
    return out


#: the attribute that marks a netCDF file as a run file (written by every run, tvbo.api)
_RUN_MARK = "config_json"


def run_files(paths: Iterable[str | Path]) -> list[Path]:
    """The files of ``paths``, and the run files (``*.nc``; campaign files excluded: they hold no
    code record) and f*(t) tables (``*.npz``) below each folder, sorted; FileNotFoundError names
    a path that does not exist."""
    out: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.update(p for p in path.rglob("*.nc") if p.name != "campaign.nc")
            out.update(path.rglob("*.npz"))
        elif path.is_file():
            out.add(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {raw}")
    return sorted(out)


def check_runs(paths: Iterable[str | Path]) -> dict[Path, list[str] | None]:
    """``{file: changed modules}`` for every run file and f*(t) table of ``paths``
    (:func:`run_files`): an empty list for a current one, None for one made before tvbo
    recorded its code. Other netCDF and npz files are left out. Reads the attributes and the
    tables' headers only."""
    import netCDF4  # lazy: `tvbo --help` loads no netCDF4 (tests/test_startup.py)

    from tvbo.results.schema import CODE_ATTRIBUTE

    files: dict[str, Path | None] = {}
    out: dict[Path, list[str] | None] = {}
    for path in run_files(paths):
        if path.suffix == ".npz":  # an f*(t) table (tvbo.benchmarks.oracle_table)
            record = _table_record(path)
            if record is not False:
                out[path] = None if record is None else changed_modules(record, files)
            continue
        with netCDF4.Dataset(path) as ds:
            names = ds.ncattrs()
            if _RUN_MARK not in names:
                continue
            text = ds.getncattr(CODE_ATTRIBUTE) if CODE_ATTRIBUTE in names else None
        if text is None:
            out[path] = None
            continue
        try:
            record = parse(str(text))
        except ValueError as err:
            raise ValueError(f"{path}: {err}") from None
        out[path] = changed_modules(record, files)
    return out


def _table_record(path: Path) -> dict[str, str] | None | bool:
    """The code record in an f*(t) table's header: None when the table has none (built before
    tables recorded it), False when the file is not an f*(t) table."""
    import numpy as np  # lazy: `tvbo --help` loads no numpy (tests/test_startup.py)

    from tvbo.results.schema import CODE_ATTRIBUTE

    with np.load(path, allow_pickle=False) as npz:
        if "header" not in npz.files or "f_star" not in npz.files:
            return False
        header = json.loads(str(npz["header"]))
    record = header.get(CODE_ATTRIBUTE) if isinstance(header, dict) else None
    if record is None:
        return None
    try:
        return parse(record)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


def campaign_folder(run: Path) -> Path | None:
    """The campaign folder of a run file laid out by the workflow
    (``<campaign>/runs/<benchmark>/<algorithm>/<file>``), or None."""
    for parent in run.parents:
        if parent.name == "runs":
            return parent.parent
    return None
