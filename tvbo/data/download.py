"""Download real data files reproducibly: pooch for the transfer, plus the checks pooch lacks.

Why this module exists: the workflow must fetch the original Intel Berkeley and EPA files from their
public URLs, yet every test and offline run uses a local mirror whose files have different names
and checksums. :func:`fetch` is the one place where bytes arrive on disk. It is a thin layer over
pooch (:func:`pooch.create` / :meth:`pooch.Pooch.fetch`), which provides the retries
(``retry_if_failed``: waits of 1 s, 2 s, ... at most 10 s), the temporary file in the
destination folder that is moved into place only when the attempt succeeded and removed on any
failure, Ctrl-C included, and the hashing (:func:`pooch.file_hash`). On top of pooch, and only
where pooch cannot do the job, this module keeps:

* a downloader (:class:`_Attempt`, pooch's downloader protocol) on :mod:`urllib.request`, not
  pooch's ``HTTPDownloader``: that one uses ``requests``, whose timeout bounds each socket read
  only, so a server that trickles a byte now and then holds a job forever, and which cannot
  read a ``file://`` mirror. Every attempt has a total deadline (``timeout``): connecting,
  reading the headers and the whole body must finish within it (tests/data/test_hardening.py,
  ``test_deadline_*``);
* the checks of every attempt, made inside the downloader so that pooch moves only verified
  bytes into place: size, sha256 (a mismatch is not retried, while pooch retries a mismatch of a
  registered hash: the server would send the same bytes again; ``test_checksum_mismatch_*``),
  a body shorter than its ``Content-Length`` (:mod:`http.client` returns it silently when read
  in chunks), an empty file and an archive without content (a 0-byte or empty gzip, a zip
  without members), even when no checksum is pinned (EPA files); HTTP 4xx is not retried;
* a manifest ``dest.manifest.json`` (url, UTC date, bytes, sha256) that records where every file
  came from, which matters for EPA files that are regenerated (their checksums change over
  time); pooch keeps no such record;
* a second call with a valid file and manifest downloads nothing;
* every argument (URL scheme, sha256, size, destination, timeout, retries) is checked before
  anything is fetched or written (:func:`check_sha256`, :func:`check_size`, ...).

:func:`resolve_source` turns an original URL into the URL actually fetched when a mirror (a base
URL or a local folder) is configured, applying per-file name/checksum overrides.
"""

from __future__ import annotations

import gzip
import http.client
import json
import math
import os
import re
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pooch

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

_CHUNK = 1 << 20
_SCHEMES = ("http", "https", "file")


class DownloadError(RuntimeError):
    """A file could not be fetched (unreachable URL, HTTP error, missing mirror file)."""


class TransferError(DownloadError):
    """An attempt failed mid-transfer (deadline passed, body shorter than announced); retried."""


class ChecksumError(DownloadError):
    """The fetched bytes do not match the expected size or sha256."""


class IntegrityError(DownloadError):
    """A fetched file is empty, or a .gz or .zip archive is truncated, corrupt or empty."""


class MirrorError(DownloadError):
    """The configured mirror is unusable (folder missing, file missing, bad scheme)."""


@dataclass(frozen=True)
class Source:
    """What to fetch: the URL actually requested and the checks its bytes must pass."""

    url: str
    sha256: str | None = None
    size: int | None = None


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


def _check_dest(dest: str | os.PathLike[str]) -> Path:
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


def manifest_path(dest: str | os.PathLike[str]) -> Path:
    """The manifest written beside ``dest``: ``<dest>.manifest.json``."""
    dest = Path(dest)
    return dest.with_name(dest.name + ".manifest.json")


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


def _verify(path: Path, name: str, sha256: str | None, size: int | None) -> str:
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


# Kept by hand: pooch's HTTPDownloader passes a timeout to requests, which bounds each socket read
# only (tests/data/test_hardening.py::test_deadline_bounds_the_whole_attempt trickles a byte per
# 0.1 s and must end at a 0.5 s deadline).
class _Deadline:
    """A watchdog that ends an attempt when its total time is up.

    Socket timeouts bound each blocking call only, so a server sending a byte now and then
    keeps a transfer alive forever. This thread waits ``seconds``; when they pass it sets
    :attr:`expired` and shuts down the sockets of the attempt's connections (repeatedly, until
    stopped; a socket connected after the deadline is cut as it connects). A blocked read then
    returns or fails at once, and :func:`_download_once` reports the deadline. ``file://`` reads
    have no socket; their deadline is checked between chunks.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = threading.Event()
        self.sockets: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="tvbo-download-deadline")
        self._thread.daemon = True

    def __enter__(self) -> _Deadline:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        if self._stop.wait(self.seconds):
            return
        self.expired.set()
        while True:
            for sock in list(self.sockets):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:  # already closed or not connected
                    pass
            if self._stop.wait(0.05):
                return

    def track(self, connection_class: type) -> Any:
        """A drop-in for ``connection_class`` that registers the socket of every connection.

        The socket itself is kept, not the connection: :mod:`urllib.request` detaches it from
        the connection once the headers are read (the response keeps reading from it).
        """

        def make(*args: Any, **kwargs: Any) -> Any:
            conn = connection_class(*args, **kwargs)
            connect = conn.connect

            def tracked_connect() -> None:
                connect()
                self.sockets.append(conn.sock)
                if self.expired.is_set():  # connected after the deadline: cut at once
                    conn.sock.shutdown(socket.SHUT_RDWR)

            conn.connect = tracked_connect
            return conn

        return make


class _TrackedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
        return super().do_open(self._deadline.track(http_class), req, **kwargs)


class _TrackedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
        return super().do_open(self._deadline.track(http_class), req, **kwargs)


def _open_url(url: str, timeout: float, deadline: _Deadline):
    """Open ``url`` (checked by :func:`check_url`) with a timeout; errors name URL and cause.

    The HTTP(S) connections are registered with ``deadline`` so that it can cut them.
    """
    if urllib.parse.urlsplit(url).scheme == "file":
        local = Path(urllib.request.url2pathname(urllib.parse.urlsplit(url).path))
        if not local.is_file():
            raise DownloadError(f"cannot fetch {url}: no such file {local}")
    request = urllib.request.Request(url, headers={"User-Agent": "tvbo-data/0.1"})
    opener = urllib.request.build_opener(
        _TrackedHTTPHandler(deadline), _TrackedHTTPSHandler(deadline)
    )
    return opener.open(request, timeout=timeout)


def _announced_length(response: Any) -> int | None:
    """The ``Content-Length`` of a response, or None (absent, chunked or unparsable)."""
    value = response.headers.get("Content-Length")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _download_once(url: str, part: Path, timeout: float) -> int:
    """One attempt: stream ``url`` into ``part`` within ``timeout`` seconds; return the bytes.

    Raises :class:`TransferError` if the deadline passes or the body is shorter than its
    ``Content-Length``; other errors (HTTP, socket) propagate. pooch removes ``part``.
    """
    received = 0
    with _Deadline(timeout) as deadline:
        try:
            with _open_url(url, timeout, deadline) as response, open(part, "wb") as out:
                announced = _announced_length(response)
                while chunk := response.read(_CHUNK):
                    out.write(chunk)
                    received += len(chunk)
                    if deadline.expired.is_set():
                        break
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            if deadline.expired.is_set():
                raise TransferError(_late(timeout, received)) from exc
            raise
        if deadline.expired.is_set():
            raise TransferError(_late(timeout, received))
    if announced is not None and received < announced:
        raise TransferError(
            f"body has {received} of the {announced} bytes announced by Content-Length "
            "(connection closed early)"
        )
    return received


def _late(timeout: float, received: int) -> str:
    return (
        f"attempt exceeded its {timeout:g} s deadline after {received} bytes "
        "(the timeout bounds connecting and the whole transfer)"
    )


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
            _download_once(url, Path(output_file), self.timeout)
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
        self.digest = _verify(Path(output_file), self.name, self.sha256, self.size)


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
    whole body (see :class:`_Deadline`); a large file over a slow link needs a large timeout.
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
    dest = _check_dest(dest)
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
    try:
        store.fetch(dest.name, downloader=attempt)
    except _Retry as exc:  # the last attempt's transient failure
        raise _failure(url, attempt.attempts, exc.error) from exc.error
    os.chmod(dest, _default_file_mode())
    if manifest:
        _write_manifest(dest, url, attempt.digest)
    return dest


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
