"""tvbo.data.download against the offline mirror, over HTTP on 127.0.0.1 and via file:// URLs."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from datetime import datetime
from pathlib import Path

import pytest

from tests.mirror import MIRROR_ROOT
from tvbo.data.__main__ import main
from tvbo.data.download import (
    ChecksumError,
    DownloadError,
    IntegrityError,
    MirrorError,
    fetch,
    fetch_source,
    manifest_path,
    resolve_source,
    sha256_file,
)
from tvbo.data.ozone import ozone_url

MIRROR = MIRROR_ROOT
INTEL_NAME = "intel/data_2004-03-04_to_08.txt.gz"
INTEL_SHA = "5efc3a851e60e5ac700f0abca3cdd9478b19b28f39c5d432aa1bd39da8b5a7d9"
INTEL_SIZE = 6_778_602
LOCS_SHA = "3865c0263110c24c40e3377690cecaa552e0575cf56cdb9f5f8bd17130b6bf04"
OZONE_NAME = "ozone/daily_44201_2006_nys_subset.zip"
OZONE_SHA = "41aff39bc2c5b29326cb61a1bbecf05a2ac350492ae19aa37abcf3ef17031a25"
ORIGINAL_INTEL = "http://db.csail.mit.edu/labdata/data.txt.gz"
ORIGINAL_LOCS = "http://db.csail.mit.edu/labdata/mote_locs.txt"

pytestmark = pytest.mark.skipif(not MIRROR.is_dir(), reason="offline data mirror not present")


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Path:
    """A folder served by the test server: the mirror (symlinked) plus broken copies."""
    root = tmp_path_factory.mktemp("served")
    (root / "intel").symlink_to(MIRROR / "intel")
    (root / "ozone").symlink_to(MIRROR / "ozone")
    broken = root / "broken"
    broken.mkdir()
    gz = (MIRROR / INTEL_NAME).read_bytes()
    (broken / "truncated.txt.gz").write_bytes(gz[: len(gz) // 2])
    zipped = (MIRROR / OZONE_NAME).read_bytes()
    (broken / "truncated.zip").write_bytes(zipped[: len(zipped) - 200])
    corrupt = bytearray(zipped)
    corrupt[len(zipped) // 3] ^= 0xFF  # inside the compressed member: CRC/inflate error
    (broken / "corrupt.zip").write_bytes(bytes(corrupt))
    return root


@pytest.fixture(scope="module")
def server(served):
    """``(base_url, requests)``: an HTTP server on 127.0.0.1 that logs request paths."""
    requests: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(served), **kwargs)

        def do_GET(self):  # noqa: N802 - http.server API
            requests.append(self.path)
            super().do_GET()

        def log_message(self, *args):  # keep test output quiet
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", requests
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def _leftovers(dest: Path) -> list[Path]:
    """Everything in ``dest``'s folder: pooch's temporary file has a name of its own (tmp...)."""
    return sorted(dest.parent.iterdir()) if dest.parent.is_dir() else []


def test_http_download_is_verified_and_writes_manifest(server, tmp_path):
    base, requests = server
    dest = tmp_path / "raw" / "data.txt.gz"
    before = len(requests)
    out = fetch(f"{base}/{INTEL_NAME}", dest, sha256=INTEL_SHA, size=INTEL_SIZE)
    assert out == dest and dest.stat().st_size == INTEL_SIZE
    assert len(requests) == before + 1
    manifest = json.loads(manifest_path(dest).read_text())
    assert manifest["url"] == f"{base}/{INTEL_NAME}"
    assert manifest["bytes"] == INTEL_SIZE and manifest["sha256"] == INTEL_SHA
    assert datetime.fromisoformat(manifest["date"]).utcoffset().total_seconds() == 0
    assert _leftovers(dest) == [dest, manifest_path(dest)]  # no temporary file


def test_second_run_downloads_nothing_and_tampering_forces_a_new_download(server, tmp_path):
    base, requests = server
    url = f"{base}/{OZONE_NAME}"
    dest = tmp_path / "daily_44201_2006.zip"
    fetch(url, dest)  # no known checksum: the manifest is the reference
    first = len(requests)
    fetch(url, dest)
    fetch(url, dest, sha256=OZONE_SHA)
    assert len(requests) == first
    dest.write_bytes(dest.read_bytes() + b"tampered")  # no longer matches its manifest
    fetch(url, dest)
    assert len(requests) == first + 1
    assert sha256_file(dest) == OZONE_SHA


def test_valid_file_without_manifest_is_kept_when_checksum_is_known(server, tmp_path):
    base, requests = server
    dest = tmp_path / "mote_locs.txt"
    dest.write_bytes((MIRROR / "intel" / "mote_locs.txt").read_bytes())
    before = len(requests)
    fetch(f"{base}/intel/mote_locs.txt", dest, sha256=LOCS_SHA)
    assert len(requests) == before
    assert json.loads(manifest_path(dest).read_text())["sha256"] == LOCS_SHA


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_checksum_mismatch_is_rejected_and_nothing_is_left(server, scheme, tmp_path):
    base = server[0] if scheme == "http" else MIRROR.as_uri()
    dest = tmp_path / "data.txt.gz"
    wrong = "0" * 64
    with pytest.raises(ChecksumError) as info:
        fetch(f"{base}/{INTEL_NAME}", dest, sha256=wrong)
    message = str(info.value)
    assert "data.txt.gz" in message and wrong in message and INTEL_SHA in message
    assert _leftovers(dest) == []


def test_size_mismatch_is_rejected(server, tmp_path):
    dest = tmp_path / "mote_locs.txt"
    with pytest.raises(ChecksumError, match="expected 553 bytes, got 552"):
        fetch(f"{server[0]}/intel/mote_locs.txt", dest, size=553)
    assert _leftovers(dest) == []


@pytest.mark.parametrize("scheme", ["http", "file"])
@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("truncated.txt.gz", "truncated gzip"),
        ("truncated.zip", "truncated zip"),
        ("corrupt.zip", "zip"),
    ],
)
def test_broken_archives_are_rejected(server, served, scheme, name, message, tmp_path):
    base = server[0] if scheme == "http" else served.as_uri()
    dest = tmp_path / name
    with pytest.raises(IntegrityError, match=message) as info:
        fetch(f"{base}/broken/{name}", dest)
    assert name in str(info.value)
    assert _leftovers(dest) == []


def test_unreachable_url_names_url_and_cause_after_retries(tmp_path):
    with socket.socket() as sock:  # a port that was free a moment ago: closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/data.txt.gz"
    dest = tmp_path / "data.txt.gz"
    with pytest.raises(DownloadError) as info:
        fetch(url, dest, retries=2, timeout=5)
    message = str(info.value)
    assert url in message and "refused" in message.lower() and "2 attempt" in message
    assert _leftovers(dest) == []


def test_http_404_fails_at_once_with_the_status(server, tmp_path):
    base, requests = server
    before = len(requests)
    url = f"{base}/ozone/daily_44201_2007.zip"
    with pytest.raises(DownloadError, match="404") as info:
        fetch(url, tmp_path / "daily_44201_2007.zip", retries=3)
    assert url in str(info.value)
    assert len(requests) == before + 1  # a permanent error is not retried


def test_mirror_overrides_name_and_checksum(server, tmp_path):
    base, _ = server
    files = {"data.txt.gz": {"name": INTEL_NAME, "sha256": INTEL_SHA, "size": INTEL_SIZE}}
    for mirror in (base, MIRROR.as_uri(), str(MIRROR)):
        source = resolve_source(
            ORIGINAL_INTEL, sha256="d" * 64, size=1, mirror=mirror, mirror_files=files
        )
        assert source.url.endswith(INTEL_NAME) and source.sha256 == INTEL_SHA
        assert source.size == INTEL_SIZE
    dest = fetch_source(
        ORIGINAL_INTEL, tmp_path / "data.txt.gz", mirror=base, mirror_files=files, retries=1
    )
    assert sha256_file(dest) == INTEL_SHA
    # Without a mirror the original URL and checksum are used unchanged.
    assert resolve_source(ORIGINAL_INTEL, sha256=INTEL_SHA).url == ORIGINAL_INTEL
    # A renamed file without its own checksum must not inherit the original's.
    renamed = resolve_source(
        ORIGINAL_LOCS,
        sha256="e" * 64,
        mirror=str(MIRROR),
        mirror_files={"mote_locs.txt": {"name": "intel/mote_locs.txt"}},
    )
    assert renamed.sha256 is None


def test_wrong_mirror_path_and_missing_year_are_clear(tmp_path):
    with pytest.raises(MirrorError, match="does not exist"):
        resolve_source(ORIGINAL_LOCS, mirror=str(tmp_path / "nowhere"))
    with pytest.raises(MirrorError, match="unknown keys"):
        resolve_source(
            ORIGINAL_LOCS, mirror=str(MIRROR), mirror_files={"mote_locs.txt": {"path": "x"}}
        )
    with pytest.raises(MirrorError) as info:
        fetch_source(ozone_url(2007), tmp_path / "z.zip", mirror=(MIRROR / "ozone").as_uri())
    assert "daily_44201_2007.zip" in str(info.value)
    assert "daily_44201_2006_nys_subset.zip" in str(info.value)  # lists what is there
    with pytest.raises(ValueError, match="1970"):
        ozone_url(1970)
    with pytest.raises(DownloadError, match="unsupported URL scheme"):
        fetch("ftp://example.org/x", tmp_path / "x")


def test_cli_download_and_error_exit(server, tmp_path, capsys):
    base, _ = server
    files = repr({"daily_44201_2006.zip": {"name": OZONE_NAME, "sha256": OZONE_SHA}})
    dest = tmp_path / "daily_44201_2006.zip"
    args = [
        "download",
        "--url-template",
        "https://aqs.epa.gov/aqsweb/airdata/daily_44201_{year}.zip",
    ]
    assert main([*args, "--year", "2006", "--dest", str(dest), "--mirror", base,
                 "--mirror-files", files, "--sha256", "None", "--size", "None"]) == 0  # fmt: skip
    assert sha256_file(dest) == OZONE_SHA
    assert main([*args, "--year", "2006", "--dest", str(tmp_path / "b.zip"),
                 "--mirror", str(tmp_path / "nowhere")]) == 2  # fmt: skip
    assert "does not exist" in capsys.readouterr().err
