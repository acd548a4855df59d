"""One download attempt with a total deadline, on :mod:`urllib.request`: pooch's downloader.

Kept by hand because pooch cannot do it: pooch's ``HTTPDownloader`` passes a timeout to
``requests``, which bounds each socket read only, so a server that trickles a byte now and then
holds a job forever (tests/data/test_hardening.py::test_deadline_bounds_the_whole_attempt
trickles a byte per 0.1 s and must end at a 0.5 s deadline); and it cannot read the offline
mirror's ``file://`` URLs. :func:`download_once` is what :class:`tvbo.data.download._Attempt`
calls inside pooch's retry loop.
"""

from __future__ import annotations

import http.client
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from tvbo.data.errors import DownloadError, TransferError

__all__ = ["download_once"]

_CHUNK = 1 << 20


class _Deadline:
    """A watchdog that ends an attempt when its total time is up.

    Socket timeouts bound each blocking call only, so a server sending a byte now and then
    keeps a transfer alive forever. This thread waits ``seconds``; when they pass it sets
    :attr:`expired` and shuts down the sockets of the attempt's connections (repeatedly, until
    stopped; a socket connected after the deadline is cut as it connects). A blocked read then
    returns or fails at once, and :func:`download_once` reports the deadline. ``file://`` reads
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


class _Tracked:
    """Mixin for urllib's HTTP(S) handlers: every connection they open is tracked by a deadline."""

    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
        return super().do_open(self._deadline.track(http_class), req, **kwargs)  # type: ignore[misc]


class _TrackedHTTPHandler(_Tracked, urllib.request.HTTPHandler):
    pass


class _TrackedHTTPSHandler(_Tracked, urllib.request.HTTPSHandler):
    pass


def _open_url(url: str, timeout: float, deadline: _Deadline):
    """Open ``url`` with a timeout; errors name URL and cause.

    ``url`` was checked by :func:`tvbo.data.checks.check_url`. The HTTP(S) connections are
    registered with ``deadline`` so that it can cut them.
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


def download_once(url: str, part: Path, timeout: float) -> int:
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
