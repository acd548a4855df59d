"""Download arguments are checked before anything is fetched or written; pooch does the retries.

Issue 24 item 9: ``--sha256 nothex`` and ``--size -5`` were checked only after the download.
Every case here runs against a server on 127.0.0.1 that counts requests and serves a good file,
so a check made after the transfer would show as a request (and as a file written).
"""

from __future__ import annotations

import gzip
import hashlib
import http.server
import os
import stat
import threading
from pathlib import Path

import pytest

from tvbo.data.__main__ import main
from tvbo.data.download import ChecksumError, DownloadError, MirrorError, fetch, resolve_source

BODY = gzip.compress(b"2004-03-06 00:00:01.0 1 1 19.0 38.0 45.0 2.6\n" * 50)
SHA = hashlib.sha256(BODY).hexdigest()


class _Handler(http.server.BaseHTTPRequestHandler):
    """``/ok.txt.gz``: the good file; ``/flaky.txt.gz``: 503 on every odd request, then the file."""

    requests: list[str] = []

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        self.requests.append(self.path)
        flaky = self.path == "/flaky.txt.gz"
        if flaky and self.requests.count(self.path) % 2 == 1:
            self.send_error(503)
            return
        if self.path not in ("/ok.txt.gz", "/flaky.txt.gz"):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)


@pytest.fixture(scope="module")
def base():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


@pytest.fixture
def requests():
    """The paths requested during one test."""
    _Handler.requests.clear()
    return _Handler.requests


def _status(argv: list[str]) -> int:
    """Exit status of ``tvbo data ARGV``: argparse's errors exit, the others return 2."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>"
            for p in sorted(root.rglob("*"))}


def test_the_good_control_downloads(base, tmp_path, requests):
    """The server and arguments the bad cases below start from do work."""
    dest = tmp_path / "raw" / "ok.txt.gz"
    assert main(["download", "--url", f"{base}/ok.txt.gz", "--dest", str(dest),
                 "--sha256", SHA, "--size", str(len(BODY)), "--retries", "1"]) == 0  # fmt: skip
    assert dest.read_bytes() == BODY and requests == ["/ok.txt.gz"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--sha256", "nothex"], ["--sha256", "64 hexadecimal", "nothex"]),
        (["--sha256", "ab" * 31], ["--sha256", "64 hexadecimal"]),
        (["--sha256", "g" * 64], ["--sha256", "64 hexadecimal"]),
        (["--size", "-5"], ["--size", ">= 1", "-5"]),
        (["--size", "0"], ["--size", ">= 1"]),
        (["--size", "1.5"], ["--size", "1.5"]),
        (["--retries", "0"], ["--retries", ">= 1"]),
        (["--retries", "two"], ["--retries", "two"]),
        (["--timeout", "-1"], ["--timeout", "-1"]),
        (["--timeout", "1e308"], ["--timeout", "one day", "1e308"]),
        (["--mirror-files", '{"ok.txt.gz": {"sha256": "nothex"}}'],
         ["--mirror-files", "mirror_files['ok.txt.gz'].sha256", "nothex"]),
        (["--mirror-files", '{"other.zip": {"size": -5}}'],
         ["--mirror-files", "mirror_files['other.zip'].size", "-5"]),
        (["--mirror-files", '{"ok.txt.gz": {"name": ""}}'], ["--mirror-files", ".name"]),
        (["--mirror-files", '{"ok.txt.gz": "x"}'], ["--mirror-files", "mapping"]),
        (["--mirror-files", "[1, 2]"], ["--mirror-files", "mapping"]),
        (["--year", "1970"], ["1970", "1980"]),
    ],
    ids=["sha256-word", "sha256-short", "sha256-not-hex", "size-negative", "size-zero",
         "size-fraction", "retries-zero", "retries-word", "timeout-negative", "timeout-overflow",
         "mirror-sha256", "mirror-size", "mirror-name", "mirror-entry", "mirror-list",
         "year-1970"],
)
def test_cli_checks_arguments_before_downloading(base, tmp_path, capsys, requests, args, words):
    (tmp_path / "keep").write_text("an input that must not change")
    before = _tree(tmp_path)
    dest = tmp_path / "raw" / "ok.txt.gz"
    assert _status(["download", "--url", f"{base}/ok.txt.gz", "--dest", str(dest), *args]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tvbo data: error: "), lines
    assert all(w in lines[0] for w in words), lines[0]
    assert requests == [] and _tree(tmp_path) == before  # nothing fetched, nothing written


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda t, b: ["--url", "ftp://example.org/x.gz", "--dest", str(t / "raw" / "x.gz")],
         ["unsupported URL scheme 'ftp'"]),
        (lambda t, b: ["--url", "http:///x.gz", "--dest", str(t / "raw" / "x.gz")],
         ["no host"]),
        (lambda t, b: ["--url", f"{b}/ok.txt.gz", "--dest", str(t / "keep")],
         ["is a folder"]),
        (lambda t, b: ["--url", f"{b}/ok.txt.gz", "--dest", str(t / "keep" / "x" / "ok.gz")],
         ["is a file, not a folder"]),
        (lambda t, b: ["--url-template", f"{b}/{{year}}-{{month}}.zip", "--year", "2006",
                       "--dest", str(t / "raw" / "x.zip")], ["url_template", "{year}"]),
        (lambda t, b: ["--url-template", f"{b}/{{year}}.zip", "--year", "2006",
                       "--mirror", str(t / "nowhere"), "--dest", str(t / "raw" / "x.zip")],
         ["does not exist"]),
    ],
    ids=["scheme", "no-host", "dest-is-a-folder", "dest-under-a-file", "template-field",
         "mirror-missing"],
)
def test_cli_checks_url_and_dest_before_downloading(base, tmp_path, capsys, requests, make,
                                                    words):
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "x").write_text("a regular file")
    before = _tree(tmp_path)
    assert _status(["download", *make(tmp_path, base)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and all(w in lines[0] for w in words), lines
    assert requests == [] and _tree(tmp_path) == before


def test_api_checks_arguments_before_downloading(base, tmp_path, requests):
    url = f"{base}/ok.txt.gz"
    dest = tmp_path / "raw" / "ok.txt.gz"
    with pytest.raises(ValueError, match="sha256 must be a sha256"):
        fetch(url, dest, sha256="nothex")
    with pytest.raises(ValueError, match="size must be a whole number of bytes >= 1, got -5"):
        fetch(url, dest, size=-5)
    with pytest.raises(ValueError, match="size must be"):
        fetch(url, dest, size=True)
    with pytest.raises(ValueError, match="retries must be"):
        fetch(url, dest, retries=0)
    with pytest.raises(ValueError, match="is a folder"):
        fetch(url, tmp_path)
    with pytest.raises(ValueError, match=r"mirror_files\['a'\]\.size"):
        resolve_source(url, mirror=str(tmp_path), mirror_files={"a": {"size": 0}})
    with pytest.raises(MirrorError, match="unknown keys"):
        resolve_source(url, mirror_files={"a": {"sha": SHA}})
    assert requests == [] and list(tmp_path.iterdir()) == []


def test_checksum_mismatch_is_not_retried(base, tmp_path, requests):
    """Why the checks run in tvbo's downloader: pooch retries a registered hash's mismatch."""
    dest = tmp_path / "ok.txt.gz"
    with pytest.raises(ChecksumError, match="sha256 mismatch"):
        fetch(f"{base}/ok.txt.gz", dest, sha256="0" * 64, retries=3)
    assert requests == ["/ok.txt.gz"] and list(tmp_path.iterdir()) == []


def test_transient_http_error_is_retried(base, tmp_path, requests):
    """HTTP 503, then the file: pooch's second attempt succeeds (1 s wait)."""
    dest = tmp_path / "flaky.txt.gz"
    fetch(f"{base}/flaky.txt.gz", dest, sha256=SHA, retries=2)
    assert requests == ["/flaky.txt.gz"] * 2 and dest.read_bytes() == BODY


def test_transient_http_error_on_the_last_attempt_names_it(base, tmp_path, requests):
    with pytest.raises(DownloadError, match=r"after 1 attempt\(s\): HTTP 503"):
        fetch(f"{base}/flaky.txt.gz", tmp_path / "flaky.txt.gz", retries=1)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("route", ["missing.txt.gz", "flaky.txt.gz"])
def test_failed_download_removes_the_folders_it_created(base, tmp_path, requests, route):
    """A 404 (at once) or a 503 (pooch's last attempt) leaves no empty raw/ozone/ behind."""
    (tmp_path / "data").mkdir()
    with pytest.raises(DownloadError, match="HTTP 404" if route.startswith("m") else "HTTP 503"):
        fetch(f"{base}/{route}", tmp_path / "data" / "raw" / "ozone" / route, retries=1)
    assert _tree(tmp_path) == {"data": b"<dir>"} and len(requests) == 1


def test_download_gets_the_usual_file_mode(base, tmp_path, requests):
    """pooch's temporary file is 0o600; the downloaded file gets what open() would give."""
    dest = tmp_path / "ok.txt.gz"
    fetch(f"{base}/ok.txt.gz", dest)
    reference = tmp_path / "reference"
    reference.write_bytes(b"")
    assert stat.S_IMODE(dest.stat().st_mode) == stat.S_IMODE(reference.stat().st_mode)
    assert stat.S_IMODE(os.stat(dest).st_mode) & 0o044  # group/other can read (umask 022)
