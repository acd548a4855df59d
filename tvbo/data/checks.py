"""The checks of a download's arguments and bytes, made before and after each transfer.

Arguments are checked before anything is fetched or written (issue 24: ``--sha256 nothex`` and
``--size -5`` used to fail only after the download); the bytes of every attempt are checked by
:func:`verify` inside tvbo's pooch downloader, so that only verified files are moved into place
and a failed check is not retried. Hashing is pooch's (:func:`pooch.file_hash`).
"""

from __future__ import annotations

import gzip
import os
import re
import urllib.parse
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pooch

from tvbo.data.errors import ChecksumError, DownloadError, IntegrityError, MirrorError

__all__ = [
    "check_archive",
    "check_dest",
    "check_mirror_files",
    "check_sha256",
    "check_size",
    "check_url",
    "sha256_file",
    "verify",
]

_CHUNK = 1 << 20
_SCHEMES = ("http", "https", "file")


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file, read in chunks by :func:`pooch.file_hash` (the Intel file is 34 MB)."""
    return pooch.file_hash(os.fspath(path), alg="sha256")


def check_sha256(value: object, field: str = "sha256") -> str | None:
    """``value`` as a lower-case sha256, or None; ``ValueError`` naming ``field`` otherwise.

    Called before any download, so that ``--sha256 nothex`` fails at once and writes nothing.
    """
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(r"[0-9a-fA-F]{64}", value):
        raise ValueError(f"{field} must be a sha256 (64 hexadecimal digits), got {value!r}")
    return value.lower()


def check_size(value: object, field: str = "size") -> int | None:
    """``value`` as a size in bytes (an integer >= 1: no data file is empty), or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{field} must be a whole number of bytes >= 1, got {value!r}")
    return value


def check_url(url: object) -> str:
    """``url`` if it is an http(s) URL with a host or a file:// URL; ``DownloadError`` otherwise."""
    if not isinstance(url, str) or not url:
        raise DownloadError(f"URL must be a non-empty string, got {url!r}")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in _SCHEMES:
        raise DownloadError(
            f"unsupported URL scheme {parts.scheme!r} in {url}; use {', '.join(_SCHEMES)}"
        )
    if parts.scheme != "file" and not parts.hostname:
        raise DownloadError(f"URL {url} has no host")
    return url


def check_mirror_files(mirror_files: object) -> dict[str, dict[str, Any]]:
    """Every entry ``{basename: {name, sha256, size}}`` checked; ``MirrorError``/``ValueError``.

    All entries are checked, not only the one a download uses, so that a typo in the mapping
    fails the first download, not the one of another file later.
    """
    if mirror_files is None:
        return {}
    if not isinstance(mirror_files, Mapping):
        raise MirrorError(f"mirror_files must be a mapping, got {mirror_files!r}")
    checked: dict[str, dict[str, Any]] = {}
    for basename, entry in mirror_files.items():
        where = f"mirror_files[{basename!r}]"
        if not isinstance(entry, Mapping):
            raise MirrorError(f"{where} must be a mapping with keys name, sha256, size")
        unknown = set(entry) - {"name", "sha256", "size"}
        if unknown:
            raise MirrorError(
                f"{where} has unknown keys {sorted(unknown)}; valid keys: name, sha256, size"
            )
        name = entry.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise MirrorError(f"{where}.name must be a file name in the mirror, got {name!r}")
        checked[str(basename)] = dict(entry)
        if "sha256" in entry:
            checked[str(basename)]["sha256"] = check_sha256(entry["sha256"], f"{where}.sha256")
        if "size" in entry:
            checked[str(basename)]["size"] = check_size(entry["size"], f"{where}.size")
    return checked


def check_dest(dest: str | os.PathLike[str]) -> Path:
    """``dest`` as a Path if a file can be written there; ``ValueError`` naming it otherwise.

    Checked before any transfer: pooch would move the file INTO an existing folder, and a
    parent that is a regular file or not writable would only fail after the download.
    """
    dest = Path(dest)
    if not dest.name:
        raise ValueError(f"dest {str(dest)!r} names no file")
    if dest.is_dir():
        raise ValueError(f"dest {dest} is a folder; give the path of the file to write")
    folder = dest.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise ValueError(f"dest {dest}: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"dest {dest}: folder {folder} is not writable")
    return dest


def check_archive(path: str | os.PathLike[str], name: str | None = None) -> None:
    """Reject a truncated, corrupt or empty archive, chosen by the suffix of ``name`` (or path).

    A truncated gzip is only detected at its end (missing end-of-stream marker, CRC), so it is
    decompressed to the end; a zip is opened (truncation loses the central directory) and every
    member's CRC is checked with :meth:`zipfile.ZipFile.testzip`. A gzip that decompresses to
    nothing (including a 0-byte file, which :mod:`gzip` reads without complaint) and a zip
    without members are rejected: no data file of this project is empty, and such a file is
    what a failed server-side export looks like. Other suffixes pass unchecked.
    """
    path = Path(path)
    label = name if name is not None else path.name
    if label.endswith(".gz"):
        content = 0
        try:
            with gzip.open(path, "rb") as fh:
                while chunk := fh.read(_CHUNK):
                    content += len(chunk)
        except (EOFError, OSError, zlib.error) as exc:
            raise IntegrityError(
                f"{label}: corrupt or truncated gzip file ({type(exc).__name__}: {exc})"
            ) from exc
        if content == 0:
            raise IntegrityError(
                f"{label}: empty gzip file ({path.stat().st_size} bytes, no content); "
                "expected a gzip stream with data"
            )
    elif label.endswith(".zip"):
        try:
            with zipfile.ZipFile(path) as zf:
                members = zf.namelist()
                bad = zf.testzip()
        except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
            raise IntegrityError(
                f"{label}: corrupt or truncated zip file ({type(exc).__name__}: {exc})"
            ) from exc
        if bad is not None:
            raise IntegrityError(f"{label}: zip member {bad!r} fails its CRC check")
        if not members:
            raise IntegrityError(f"{label}: zip file has no members; expected at least one file")


def verify(path: Path, name: str, sha256: str | None, size: int | None) -> str:
    """Check size, sha256 and archive integrity of ``path``; return its sha256."""
    actual_size = path.stat().st_size
    if size is not None and actual_size != size:
        raise ChecksumError(f"{name}: expected {size} bytes, got {actual_size} bytes")
    if actual_size == 0:
        raise IntegrityError(f"{name}: the download is empty (0 bytes); expected a data file")
    digest = sha256_file(path)
    if sha256 is not None and digest != sha256.lower():
        raise ChecksumError(f"{name}: sha256 mismatch: expected {sha256.lower()}, actual {digest}")
    check_archive(path, name)
    return digest
