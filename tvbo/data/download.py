"""Download real data files reproducibly: pooch for the transfer, plus what pooch lacks.

Why this module exists: the workflow must fetch the original Intel Berkeley and EPA files from their
public URLs, yet every test and offline run uses a local mirror whose files have different names
and checksums. :func:`fetch` is the one place where bytes arrive on disk. It is a thin layer over
pooch (:func:`pooch.create` / :meth:`pooch.Pooch.fetch`), which provides the retries
(``retry_if_failed``: waits of 1 s, 2 s, ... at most 10 s), the temporary file in the
destination folder that is moved into place only when the attempt succeeded and removed on any
failure, Ctrl-C included, and the hashing (:func:`pooch.file_hash`). Kept by hand, only where
pooch cannot do the job:

* the transfer of one attempt, with a total deadline (:mod:`tvbo.data.transfer`), called by
  :class:`_Attempt`, pooch's downloader protocol: pooch's ``HTTPDownloader`` bounds each
  socket read only and cannot read a ``file://`` mirror;
* the checks (:mod:`tvbo.data.checks`): every argument before anything is fetched or written,
  and the bytes of every attempt (size, sha256, empty file, archive integrity) inside the
  downloader, so that pooch moves only verified bytes into place and a failed check is not
  retried (pooch retries a registered hash's mismatch: the server would send the same bytes
  again; tests/data/test_download_args.py::test_checksum_mismatch_is_not_retried); HTTP 4xx is
  not retried either;
* a manifest ``dest.manifest.json`` (url, UTC date, bytes, sha256) that records where every file
  came from, which matters for EPA files that are regenerated (their checksums change over
  time); pooch keeps no such record. A second call with a valid file and manifest downloads
  nothing.

:func:`resolve_source` turns an original URL into the URL actually fetched when a mirror (a base
URL or a local folder) is configured, applying per-file name/checksum overrides.
"""

from __future__ import annotations

import http.client
import json
import math
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pooch

from tvbo.data.checks import (
    check_archive,
    check_dest,
    check_mirror_files,
    check_sha256,
    check_size,
    check_url,
    sha256_file,
    verify,
)
from tvbo.data.errors import (
    ChecksumError,
    DownloadError,
    IntegrityError,
    MirrorError,
    TransferError,
)
from tvbo.data.transfer import download_once

__all__ = [
    "ChecksumError",
    "DownloadError",
    "IntegrityError",
    "MirrorError",
    "Source",
    "TransferError",
    "check_archive",
    "check_mirror_files",
    "check_sha256",
    "check_size",
    "check_url",
    "fetch",
    "fetch_source",
    "manifest_path",
    "resolve_source",
    "sha256_file",
]


@dataclass(frozen=True)
class Source:
    """What to fetch: the URL actually requested and the checks its bytes must pass."""

    url: str
    sha256: str | None = None
    size: int | None = None


def manifest_path(dest: str | os.PathLike[str]) -> Path:
    """The manifest written beside ``dest``: ``<dest>.manifest.json``."""
    dest = Path(dest)
    return dest.with_name(dest.name + ".manifest.json")


def _existing_is_valid(dest: Path, url: str, sha256: str | None, size: int | None) -> bool:
    """True if ``dest`` already holds the verified file, so no download is needed.

    With a known checksum the file itself is the proof (a manifest is (re)written if missing).
    Without one, the manifest must name the same URL and the file must still match the
    manifest's sha256, so a mirror subset is never mistaken for the original and vice versa.
    """
    if not dest.is_file():
        return False
    mpath = manifest_path(dest)
    manifest: dict[str, Any] | None = None
    if mpath.is_file():
        try:
            manifest = json.loads(mpath.read_text())
        except (OSError, ValueError):
            manifest = None
    if sha256 is None and (manifest is None or manifest.get("url") != url):
        return False
    if size is not None and dest.stat().st_size != size:
        return False
    digest = sha256_file(dest)
    if sha256 is not None and digest != sha256.lower():
        return False
    if manifest is not None and manifest.get("sha256") not in (None, digest):
        return False
    return True


class _Retry(ValueError):
    """A transient failure of one attempt, to be retried by pooch; ``error`` is what it was.

    Pooch's :func:`pooch.core.stream_download` retries an attempt that raises ``ValueError`` or
    a ``requests`` exception and lets every other exception through at once; ``ValueError``
    keeps ``requests`` (0.3 s to import) out of ``import tvbo.data``.
    """

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class _Attempt:
    """pooch's downloader protocol: one attempt of ``url`` into pooch's temporary file, checked.

    Transient failures (connection refused or reset, deadline passed, a body shorter than its
    ``Content-Length``, HTTP 5xx, a local write error) raise :class:`_Retry`; permanent ones
    (HTTP 4xx such as a year without an EPA file, a missing local file) and failed checks (size,
    sha256, archive) raise :class:`DownloadError`, which pooch does not retry. Any exception
    leaves pooch to delete its temporary file. :attr:`digest` is the sha256 of the bytes that
    passed, :attr:`attempts` the number of calls.
    """

    def __init__(self, name: str, *, sha256: str | None, size: int | None,
                 timeout: float) -> None:
        self.name, self.sha256, self.size, self.timeout = name, sha256, size, timeout
        self.attempts = 0
        self.digest = ""

    def __call__(self, url: str, output_file: str, pup: object, check_only: bool = False) -> None:
        if check_only:  # pooch's is_available(): not used by tvbo
            raise NotImplementedError("tvbo's downloader does not check availability")
        self.attempts += 1
        try:
            download_once(url, Path(output_file), self.timeout)
        except urllib.error.HTTPError as exc:
            if 400 <= exc.code < 500:  # never heals: fail at once
                raise _failure(url, self.attempts, exc) from exc
            raise _Retry(exc) from exc
        except DownloadError as exc:
            if isinstance(exc, TransferError):
                raise _Retry(exc) from exc
            raise
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            raise _Retry(exc) from exc
        self.digest = verify(Path(output_file), self.name, self.sha256, self.size)


def _failure(url: str, attempts: int, cause: BaseException) -> DownloadError:
    """The one-line error of a download that failed after ``attempts`` attempts."""
    if isinstance(cause, urllib.error.HTTPError):
        reason: object = f"HTTP {cause.code} {cause.reason}"
    elif isinstance(cause, DownloadError):
        reason = cause
    else:
        reason = f"{type(cause).__name__}: {getattr(cause, 'reason', cause)}"
    error_class = TransferError if isinstance(cause, TransferError) else DownloadError
    error = error_class(f"cannot fetch {url} after {attempts} attempt(s): {reason}")
    error.__cause__ = cause
    return error


def _default_file_mode() -> int:
    """The mode ``open()`` gives a new file here: 0o666 less the umask.

    pooch's temporary file is made by :func:`tempfile.mkstemp` (mode 0o600) and keeps that mode
    when moved into place; a data folder shared with a group needs the usual mode
    (``test_download_gets_the_usual_file_mode``).
    """
    umask = os.umask(0o22)
    os.umask(umask)
    return 0o666 & ~umask


def _write_manifest(dest: Path, url: str, digest: str) -> None:
    """Record where ``dest`` came from (pooch keeps no such record), written atomically."""
    record = {
        "file": dest.name,
        "url": url,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "bytes": dest.stat().st_size,
        "sha256": digest,
    }
    tmp = manifest_path(dest).with_name(manifest_path(dest).name + ".part")
    try:
        tmp.write_text(json.dumps(record, indent=2) + "\n")
        os.replace(tmp, manifest_path(dest))
    finally:
        tmp.unlink(missing_ok=True)


def fetch(
    url: str,
    dest: str | os.PathLike[str],
    *,
    sha256: str | None = None,
    size: int | None = None,
    timeout: float = 60,
    retries: int = 3,
    manifest: bool = True,
) -> Path:
    """Download ``url`` to ``dest`` atomically and verified; return ``dest``.

    ``timeout`` is the total deadline of ONE attempt in seconds: connecting, the headers and the
    whole body (see :mod:`tvbo.data.transfer`); a large file over a slow link needs a large timeout.
    ``retries`` is the number of attempts (>= 1); transient failures (connection refused,
    deadline passed, a body shorter than its ``Content-Length``, HTTP 5xx) are retried by pooch
    after 1 s, 2 s, ... (at most 10 s), permanent ones (HTTP 4xx, a missing local file) fail at
    once. Size, sha256 and archive check failures (including an empty file or archive) are not
    retried: the server would send the same bytes again. Every argument is checked before
    anything is fetched or written (``ValueError`` or :class:`DownloadError` naming it). Nothing
    is left beside ``dest`` after a failure, an exception or a KeyboardInterrupt. If ``dest``
    already holds a valid file (see :func:`_existing_is_valid`) nothing is downloaded; a stale
    one (wrong checksum, or the manifest of another URL) is removed and downloaded again.
    """
    sha256, size = check_sha256(sha256), check_size(size)
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 1:
        raise ValueError(f"retries must be an integer >= 1, got {retries!r}")
    if isinstance(timeout, bool) or not (
        isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0
    ):
        raise ValueError(f"timeout must be a finite number of seconds > 0, got {timeout!r}")
    check_url(url)
    dest = check_dest(dest)
    if _existing_is_valid(dest, url, sha256, size):
        if manifest and not manifest_path(dest).is_file():
            _write_manifest(dest, url, sha256_file(dest))
        return dest
    # pooch keeps any existing file when no hash is registered (here: never, see _Attempt)
    dest.unlink(missing_ok=True)
    manifest_path(dest).unlink(missing_ok=True)
    attempt = _Attempt(dest.name, sha256=sha256, size=size, timeout=timeout)
    store = pooch.create(path=dest.parent, base_url=url, registry={dest.name: None},
                         urls={dest.name: url}, retry_if_failed=retries - 1)
    # pooch creates the destination's folders before the first attempt: a failed download
    # removes those it created (when still empty), so that it leaves nothing behind
    created = [folder for folder in (dest.parent, *dest.parent.parents) if not folder.exists()]
    try:
        store.fetch(dest.name, downloader=attempt)
    except _Retry as exc:  # the last attempt's transient failure
        _remove_empty(created)
        raise _failure(url, attempt.attempts, exc.error) from exc.error
    except BaseException:
        _remove_empty(created)
        raise
    os.chmod(dest, _default_file_mode())
    if manifest:
        _write_manifest(dest, url, attempt.digest)
    return dest


def _remove_empty(folders: list[Path]) -> None:
    """Remove ``folders`` (deepest first) that are empty; leave any other one alone."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:  # not empty (another job wrote there), or already gone
            pass


def _mirror_base(mirror: str) -> str:
    """Normalise a mirror (http(s)/file URL or local folder) to a base URL ending in '/'."""
    scheme = urllib.parse.urlsplit(mirror).scheme
    if scheme in ("http", "https"):
        return mirror.rstrip("/") + "/"
    if scheme == "file":
        folder = Path(urllib.request.url2pathname(urllib.parse.urlsplit(mirror).path))
    elif scheme == "" or len(scheme) == 1:  # a plain path (len 1: a Windows drive letter)
        folder = Path(mirror).expanduser().resolve()
    else:
        raise MirrorError(
            f"unsupported mirror {mirror!r}: use an http(s):// or file:// URL or a local folder"
        )
    if not folder.is_dir():
        raise MirrorError(f"mirror folder {folder} does not exist (from mirror setting {mirror!r})")
    return folder.as_uri().rstrip("/") + "/"


def resolve_source(
    url: str,
    *,
    sha256: str | None = None,
    size: int | None = None,
    mirror: str | None = None,
    mirror_files: Mapping[str, Mapping[str, Any]] | None = None,
) -> Source:
    """The URL and checks to use for the original file ``url``, given an optional mirror.

    Without a mirror the original URL and checksums are returned. With one, the file is looked
    up as ``<mirror>/<name>``, where ``name`` defaults to the basename of ``url`` and can be
    overridden per file in ``mirror_files`` (keyed by that basename), together with ``sha256``
    and ``size`` of the mirror's copy (a mirror may hold a subset, e.g. the Intel mirror file
    ``intel/data_2004-03-04_to_08.txt.gz``). A mirror entry without ``sha256``/``size`` keeps the
    original's values only when the name is unchanged. Checksums, sizes and every entry of
    ``mirror_files`` are checked first (``ValueError`` / :class:`MirrorError` naming the field).
    """
    sha256, size = check_sha256(sha256), check_size(size)
    files = check_mirror_files(mirror_files)
    if not mirror:
        return Source(url=url, sha256=sha256, size=size)
    basename = Path(urllib.parse.urlsplit(url).path).name
    entry = files.get(basename, {})
    name = entry.get("name") or basename
    renamed = name != basename
    base = _mirror_base(mirror)
    mirrored = urllib.parse.urljoin(base, urllib.parse.quote(name))
    if base.startswith("file:"):
        local = Path(urllib.request.url2pathname(urllib.parse.urlsplit(mirrored).path))
        if not local.is_file():
            folder = Path(urllib.request.url2pathname(urllib.parse.urlsplit(base).path))
            listing = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
            raise MirrorError(
                f"mirror {mirror!r} has no file {name!r} (for {url}); files in the mirror: "
                + (", ".join(listing) if listing else "none")
            )
    return Source(
        url=mirrored,
        sha256=entry.get("sha256", None if renamed else sha256),
        size=entry.get("size", None if renamed else size),
    )


def fetch_source(
    url: str,
    dest: str | os.PathLike[str],
    *,
    sha256: str | None = None,
    size: int | None = None,
    mirror: str | None = None,
    mirror_files: Mapping[str, Mapping[str, Any]] | None = None,
    timeout: float = 60,
    retries: int = 3,
) -> Path:
    """:func:`resolve_source` then :func:`fetch`: what the CLI and the Snakemake rules call."""
    source = resolve_source(url, sha256=sha256, size=size, mirror=mirror, mirror_files=mirror_files)
    return fetch(
        source.url,
        dest,
        sha256=source.sha256,
        size=source.size,
        timeout=timeout,
        retries=retries,
    )
