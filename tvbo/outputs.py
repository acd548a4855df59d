"""Output paths checked BEFORE any work, and ``OSError`` turned into one line (issue 24 item 1).

A simulation, a merge or a figure set can take minutes; an output path that cannot be written
(under a regular file, in a read-only folder, an existing directory, an empty or over-long name,
the wrong suffix) used to fail only after the work, with a traceback. Every command that writes
calls :func:`check_output_file` / :func:`check_output_dir` on its outputs first, and the command
line's error boundary (:func:`tvbo.cli.main`) turns any remaining ``OSError`` (a full disk, a
folder made read-only meanwhile) into one line naming the path and the cause via
:func:`describe_os_error`.

The checks create nothing: a missing parent folder is fine when its nearest existing ancestor is
a writable directory (the command creates it, and :func:`created_dir` removes it again when the
command fails, so a failed command leaves no empty folder behind).

Layering: standard library only (the command line imports it before numpy).
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = [
    "NAME_MAX",
    "OutputError",
    "check_distinct",
    "check_not_input",
    "check_output_dir",
    "check_output_file",
    "created_dir",
    "describe_os_error",
]

#: the longest file or folder name most file systems take (ext4, xfs, btrfs, tmpfs: 255 bytes)
NAME_MAX = 255


class OutputError(ValueError):
    """An output path that cannot be written: one line naming the path, the cause and the fix."""


def _name_max(folder: Path) -> int:
    """The file system's longest name in ``folder`` (``NAME_MAX`` when it cannot say)."""
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return NAME_MAX


def _nearest_existing(path: Path) -> Path:
    """``path`` or its nearest ancestor that exists (the folder a command would create under)."""
    current = path
    while not os.path.lexists(current):
        parent = current.parent
        if parent == current:
            break
        current = parent
    return current


def _check_names(path: Path, flag: str) -> None:
    """No part of ``path`` is longer than the file system takes (checked before any ``stat``,
    which would fail on it with a less helpful 'File name too long')."""
    limit = NAME_MAX
    for part in path.parts:
        if len(os.fsencode(part)) > limit:
            raise OutputError(
                f"{flag} {str(path)[:60]!r}...: a name of {len(os.fsencode(part))} bytes, more "
                f"than the {limit} a file system takes; choose a shorter name")


def _check_parents(path: Path, flag: str) -> None:
    """Every existing ancestor of ``path`` is a directory, and the nearest one accepts a file:
    probed by creating and removing a temporary file there, since permission bits do not
    tell (root ignores them; a read-only mount or /proc refuses root too)."""
    existing = _nearest_existing(path.parent)
    if not existing.is_dir():
        raise OutputError(
            f"{flag} {str(path)!r}: {str(existing)!r} is a file, not a folder; choose a path "
            "whose folders are folders")
    limit = _name_max(existing)
    for part in path.relative_to(existing).parts if path.is_relative_to(existing) else ():
        if len(os.fsencode(part)) > limit:
            raise OutputError(
                f"{flag} {str(path)[:60]!r}...: a name of {len(os.fsencode(part))} bytes, more "
                f"than the {limit} this file system takes; choose a shorter name")
    try:
        fd, probe = tempfile.mkstemp(prefix=".tvbo-write-probe-", dir=existing)
    except OSError as err:
        raise OutputError(
            f"{flag} {str(path)!r}: cannot write in the folder {str(existing)!r} "
            f"({err.strerror or err}); choose a writable folder") from None
    os.close(fd)
    os.unlink(probe)


def _check_text(path: str | os.PathLike, flag: str) -> Path:
    text = os.fspath(path)
    if not str(text).strip():
        raise OutputError(f"{flag} is empty; give a file name")
    if "\0" in str(text):
        raise OutputError(f"{flag} {str(text)!r} contains a NUL byte; give a file name")
    out = Path(text)
    _check_names(out, flag)
    return out


def check_output_file(path: str | os.PathLike, *, flag: str = "--out",
                      suffixes: Sequence[str] = ()) -> Path:
    """Check that ``path`` can be written as a file, before any work; return it as a Path.

    Refused, each with one line naming ``flag``, the path, the cause and the fix: an empty name,
    an existing directory, a parent that is a file, a non-writable folder, a name longer than
    the file system takes, an existing file that is not writable, and (``suffixes``, e.g.
    ``(".nc",)``) a suffix other than those given -- netCDF written to ``o.txt`` misleads.
    """
    out = _check_text(path, flag)
    if out.is_dir():
        raise OutputError(f"{flag} {str(out)!r} is an existing folder; give a file name "
                          f"inside it, e.g. {str(out / ('out' + (suffixes or ('',))[0]))!r}")
    if suffixes and out.suffix.lower() not in suffixes:
        raise OutputError(
            f"{flag} {str(out)!r}: the file is written as {_format(suffixes)}, so its name must "
            f"end in {' or '.join(suffixes)}; e.g. {str(out.with_suffix(suffixes[0]))!r}")
    _check_parents(out, flag)
    if out.exists() and not os.access(out, os.W_OK) and not os.access(out.parent, os.W_OK):
        raise OutputError(f"{flag} {str(out)!r} exists and is read-only; remove it or choose "
                          "another name")
    return out


def _format(suffixes: Sequence[str]) -> str:
    names = {".nc": "netCDF", ".csv": "CSV", ".md": "Markdown", ".yaml": "YAML",
             ".yml": "YAML", ".npz": "a numpy archive"}
    return names.get(suffixes[0], f"{suffixes[0]} files")


def check_output_dir(path: str | os.PathLike, *, flag: str = "--outdir") -> Path:
    """Check that ``path`` is, or can be created as, a writable folder, before any work."""
    out = _check_text(path, flag)
    if out.exists() and not out.is_dir():
        raise OutputError(f"{flag} {str(out)!r} is an existing file, not a folder; give a "
                          "folder name")
    if out.is_dir():
        if not os.access(out, os.W_OK | os.X_OK):
            raise OutputError(f"{flag} {str(out)!r}: the folder is not writable (permission "
                              "denied); choose a writable folder or change its permissions")
        return out
    _check_parents(out, flag)
    return out


def check_not_input(out: Path, inputs: Sequence[Path], *, flag: str = "--out") -> None:
    """Refuse an output that is one of the inputs: same resolved path or the same file (a hard
    link, a symbolic link; :func:`os.path.samefile`). Writing it would destroy that input."""
    for path in inputs:
        same = Path(os.path.realpath(out)) == Path(os.path.realpath(path))
        if not same and out.exists():
            with contextlib.suppress(OSError):
                same = os.path.samefile(out, path)
        if same:
            raise OutputError(f"{flag} {str(out)!r} is the input {str(path)!r}; writing it would "
                              "destroy that input: choose another output file")


def check_distinct(outs: Sequence[Path], *, flag: str = "--out") -> None:
    """Refuse two outputs that are the same file (resolved), which one would overwrite."""
    seen: dict[str, Path] = {}
    for out in outs:
        key = os.path.realpath(out)
        if key in seen:
            raise OutputError(f"{flag} names the same file twice ({str(seen[key])!r} and "
                              f"{str(out)!r}); give each output once")
        seen[key] = out


@contextlib.contextmanager
def created_dir(path: Path) -> Iterator[Path]:
    """Create the folder ``path`` (and its missing parents) for a command's outputs; if the
    command fails, remove the folders this call created when they are still empty, so a failed
    command (a full disk) leaves no empty folder behind."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    path.mkdir(parents=True, exist_ok=True)
    try:
        yield path
    except BaseException:
        for folder in missing:  # deepest first
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty: written files are the command's to clean
        raise


def _disk_full(path: str) -> bool:
    """Whether the file system of ``path`` (or of its nearest existing folder) has less than
    64 KiB left for an unprivileged writer."""
    try:
        stats = os.statvfs(_nearest_existing(Path(path)))
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < 64 * 1024


def describe_os_error(err: OSError) -> str:
    """One line for an ``OSError``: the path(s), the cause and, for the usual causes, the fix."""
    cause = err.strerror or str(err) or type(err).__name__
    where = " -> ".join(repr(os.fsdecode(p)) for p in (err.filename, err.filename2)
                        if p is not None)
    fixes = {
        errno.ENOSPC: "free space on that disk or write elsewhere",
        errno.EDQUOT: "free space within your quota or write elsewhere",
        errno.EACCES: "choose a writable location or change its permissions",
        errno.EPERM: "choose a writable location or change its permissions",
        errno.EROFS: "the file system is read-only; write elsewhere",
        errno.ENAMETOOLONG: "choose a shorter name",
        errno.EISDIR: "give a file name, not a folder",
        errno.ENOTDIR: "a part of the path is a file, not a folder",
        errno.ENOENT: "check the path",
    }
    fix = fixes.get(err.errno or -1, "")
    if err.filename is not None and _disk_full(os.fsdecode(err.filename)):
        # HDF5 reports a full disk as 'Permission denied' or 'HDF error': say what it is
        return (f"{where}: {cause}: the disk holding it is full; free space on that disk or "
                "write elsewhere")
    if "HDF error" in cause:  # netCDF's only words for a bad file or a failed write
        fix = ("the netCDF file is truncated or corrupt (an interrupted write, a full disk): "
               "write it again")
    text = f"{where}: {cause}" if where else cause
    return f"{text}; {fix}" if fix else text
