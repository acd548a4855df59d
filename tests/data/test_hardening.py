"""Bad downloads and bad input files are rejected with one line, exit status 2, nothing written.

Downloads (issue 12 item 5) run against a local HTTP server on 127.0.0.1 that trickles, cuts,
lies about the length and serves empty archives; every test keeps its deadline small. Prepare
commands (item 6) get truncated, corrupt and empty files built in ``tmp_path``.
"""

from __future__ import annotations

import _thread
import gzip
import http.server
import io
import signal
import threading
import time
import zipfile
from pathlib import Path

import pytest

from tests.mirror import MIRROR_ROOT
from tvbo.data.__main__ import main
from tvbo.data.download import (
    DownloadError,
    IntegrityError,
    TransferError,
    check_archive,
    fetch,
)

PAYLOAD = b"2004-03-06 00:00:01.0 1 1 19.0 38.0 45.0 2.6\n" * 200
GZ = gzip.compress(PAYLOAD)
SLOW = b"x" * 1000  # trickled: 100 s at one byte per TRICKLE_STEP
TRICKLE_STEP = 0.1  # seconds between trickled bytes
DEADLINE = 0.5  # every deadline test: the attempt must end within about this


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


class _Handler(http.server.BaseHTTPRequestHandler):
    """Routes: a good gzip, trickled body/headers, cut bodies, false lengths, empty archives."""

    protocol_version = "HTTP/1.1"
    stop = threading.Event()  # set at teardown: trickling handlers end

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def _head(self, length: int | None, **headers: str) -> None:
        self.send_response(200)
        if length is not None:
            self.send_header("Content-Length", str(length))
        for key, value in headers.items():
            self.send_header(key.replace("_", "-"), value)
        self.send_header("Connection", "close")
        self.end_headers()

    def _trickle(self, data: bytes) -> None:
        for byte in data:
            if self.stop.wait(TRICKLE_STEP):
                return
            self.wfile.write(bytes([byte]))
            self.wfile.flush()

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        route = self.path.lstrip("/").split("?")[0]
        bodies = {
            "ok.txt.gz": GZ,
            "empty.txt.gz": b"",
            "nothing.txt.gz": gzip.compress(b""),
            "empty.zip": _zip({}),
            "empty.txt": b"",
            "ok.zip": _zip({"daily.csv": b"a,b\n1,2\n"}),
        }
        try:
            if route in bodies:
                self._head(len(bodies[route]))
                self.wfile.write(bodies[route])
            elif route == "trickle.txt.gz":  # 1 byte per step: each read is fast, the whole slow
                self._head(len(SLOW))
                self._trickle(SLOW)
            elif route == "trickle-headers.txt.gz":  # even the headers trickle
                self._trickle(b"HTTP/1.1 200 OK\r\nX-Slow: " + b"y" * 1000)
            elif route == "short.txt.gz":  # announces the whole file, sends half and closes
                self._head(len(GZ))
                self.wfile.write(GZ[: len(GZ) // 2])
            elif route == "understated.txt.gz":  # announces half: the client reads half
                self._head(len(GZ) // 2)
                self.wfile.write(GZ)
            elif route == "chunked-cut.txt.gz":  # chunked body cut inside a chunk
                self._head(None, Transfer_Encoding="chunked")
                self.wfile.write(f"{len(GZ):x}\r\n".encode() + GZ[:100])
            else:
                self.send_error(404)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up, as it should
            pass


@pytest.fixture(scope="module")
def base():
    """Base URL of the bad server; every handler thread ends at teardown."""
    _Handler.stop.clear()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    _Handler.stop.set()
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def _leftovers(dest: Path) -> list[Path]:
    """Everything in ``dest``'s folder: pooch's temporary file has a name of its own (tmp...)."""
    return sorted(dest.parent.iterdir()) if dest.parent.is_dir() else []


# -- downloads ------------------------------------------------------------------------------------
def test_good_download_succeeds(base, tmp_path):
    """The control: the same server and checks accept a good file."""
    dest = tmp_path / "ok.txt.gz"
    fetch(f"{base}/ok.txt.gz", dest, retries=1, timeout=5)
    assert dest.read_bytes() == GZ
    assert [p.name for p in _leftovers(dest)] == ["ok.txt.gz", "ok.txt.gz.manifest.json"]


@pytest.mark.parametrize("route", ["trickle.txt.gz", "trickle-headers.txt.gz"])
def test_deadline_bounds_the_whole_attempt(base, tmp_path, route):
    """Each read gets a byte within TRICKLE_STEP < timeout, yet the attempt ends at the deadline."""
    dest = tmp_path / "data.txt.gz"
    started = time.monotonic()
    with pytest.raises(TransferError) as info:
        fetch(f"{base}/{route}", dest, timeout=DEADLINE, retries=1)
    elapsed = time.monotonic() - started
    assert elapsed < DEADLINE + 1.5, elapsed  # the whole file would take > 100 s
    message = str(info.value)
    assert "deadline" in message and f"{DEADLINE:g} s" in message and route in message
    assert _leftovers(dest) == []


def test_deadline_applies_to_every_attempt(base, tmp_path):
    dest = tmp_path / "data.txt.gz"
    started = time.monotonic()
    with pytest.raises(TransferError, match=r"after 2 attempt\(s\).*deadline"):
        fetch(f"{base}/trickle.txt.gz", dest, timeout=0.3, retries=2)
    assert 0.6 <= time.monotonic() - started < 2.5
    assert _leftovers(dest) == []


def test_body_shorter_than_content_length_is_rejected(base, tmp_path):
    dest = tmp_path / "data.txt.gz"
    with pytest.raises(TransferError) as info:
        fetch(f"{base}/short.txt.gz", dest, timeout=5, retries=1)
    message = str(info.value)
    assert f"{len(GZ) // 2} of the {len(GZ)} bytes" in message and "Content-Length" in message
    assert _leftovers(dest) == []


def test_understated_length_is_caught_by_the_archive_check(base, tmp_path):
    """A server announcing fewer bytes than it sends hands over a truncated gzip."""
    dest = tmp_path / "data.txt.gz"
    with pytest.raises(IntegrityError, match="data.txt.gz: corrupt or truncated gzip"):
        fetch(f"{base}/understated.txt.gz", dest, timeout=5, retries=1)
    assert _leftovers(dest) == []


def test_cut_chunked_body_leaves_nothing(base, tmp_path):
    """http.client raises IncompleteRead (not an OSError) here; it once left a partial file."""
    dest = tmp_path / "data.txt.gz"
    with pytest.raises(DownloadError, match="IncompleteRead"):
        fetch(f"{base}/chunked-cut.txt.gz", dest, timeout=5, retries=1)
    assert _leftovers(dest) == []


@pytest.mark.parametrize(
    ("route", "words"),
    [
        ("empty.txt.gz", "empty"),  # 0 bytes: gzip reads it without complaint
        ("nothing.txt.gz", "empty gzip file"),  # a valid gzip of nothing
        ("empty.zip", "no members"),
        ("empty.txt", "empty (0 bytes)"),
    ],
)
def test_empty_files_and_archives_are_rejected_without_checksum(base, tmp_path, route, words):
    dest = tmp_path / route
    with pytest.raises(IntegrityError) as info:
        fetch(f"{base}/{route}", dest, timeout=5, retries=1)
    assert route in str(info.value) and words in str(info.value)
    assert _leftovers(dest) == []


def test_check_archive_accepts_good_archives(tmp_path):
    (tmp_path / "a.zip").write_bytes(_zip({"daily.csv": b"a\n1\n"}))
    (tmp_path / "a.gz").write_bytes(GZ)
    check_archive(tmp_path / "a.zip")
    check_archive(tmp_path / "a.gz")


def test_keyboard_interrupt_removes_the_partial_file(base, tmp_path):
    """Ctrl-C during the body: the interrupt propagates and no partial file is left."""
    dest = tmp_path / "data.txt.gz"
    # a process started in the background (`cmd &`) inherits SIGINT ignored, and then
    # interrupt_main does nothing: install Python's own Ctrl-C handler for this test
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.4, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            fetch(f"{base}/trickle.txt.gz", dest, timeout=10, retries=1)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert _leftovers(dest) == []


def test_cli_download_errors_are_one_line_exit_2(base, tmp_path, capsys):
    dest = tmp_path / "data.txt.gz"
    args = ["download", "--dest", str(dest), "--retries", "1"]
    assert main([*args, "--url", f"{base}/trickle.txt.gz", "--timeout", str(DEADLINE)]) == 2
    assert main([*args, "--url", f"{base}/short.txt.gz"]) == 2
    assert main(["download", "--dest", str(tmp_path / "a.zip"), "--url", f"{base}/empty.zip"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3 and all(line.startswith("tvbo data: error: ") for line in lines)
    assert "trickle.txt.gz" in lines[0] and "deadline" in lines[0]
    assert "Content-Length" in lines[1] and "a.zip" in lines[2] and "no members" in lines[2]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("timeout", ["0", "-1", "inf", "nan", "soon"])
def test_cli_rejects_a_bad_timeout(tmp_path, capsys, timeout):
    with pytest.raises(SystemExit) as info:
        main(["download", "--url", "http://127.0.0.1:9/x", "--dest", str(tmp_path / "x"),
              "--timeout", timeout])  # fmt: skip
    assert info.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "--timeout" in line and timeout in line
    assert list(tmp_path.iterdir()) == []


# -- prepare commands -----------------------------------------------------------------------------
INTEL_MIRROR = MIRROR_ROOT / "intel" / "data_2004-03-04_to_08.txt.gz"
LOCS_MIRROR = MIRROR_ROOT / "intel" / "mote_locs.txt"
OZONE_MIRROR = MIRROR_ROOT / "ozone" / "daily_44201_2006_nys_subset.zip"
needs_mirror = pytest.mark.skipif(not INTEL_MIRROR.is_file(), reason="offline data mirror absent")
LOCS = "".join(f"{m} {m * 1.5} {40 - m}\n" for m in range(1, 55)).encode()
EPA_CSV = (
    ",".join(f'"{c}"' for c in (
        "State Code", "County Code", "Site Num", "Parameter Code", "POC", "Latitude",
        "Longitude", "Datum", "Parameter Name", "Sample Duration", "Pollutant Standard",
        "Date Local", "Units of Measure", "Event Type", "Observation Count",
        "Observation Percent", "Arithmetic Mean", "1st Max Value", "1st Max Hour", "AQI",
        "Method Code", "Method Name", "Local Site Name", "Address", "State Name", "County Name",
        "City Name", "CBSA Name", "Date of Last Change",
    )) + "\n"
    + "".join(
        f'"36","061","{s:04d}","44201",1,40.{s},-73.{d},"WGS84","Ozone","8-HR RUN AVG BEGIN HOUR",'
        f'"Ozone 8-hour 2015","2006-01-{d:02d}","Parts per million","None",17,100.0,0.0{d},'
        f'0.0{s % 10}{d % 10},10,30,"087","Method","Site {s}","Addr","New York","New York",'
        f'"New York","X","2020-01-01"\n'
        for s in range(1, 40) for d in range(1, 29)
    )
).encode()  # fmt: skip


def _run(capsys, *args: str) -> str:
    """Run ``tvbo data ARGS``; assert exit status 2 and ONE stderr line; return that line."""
    assert main(list(args)) == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tvbo data: error: "), err
    return lines[0]


def _intel(tmp_path: Path, data: Path, locs: Path) -> list[str]:
    out = tmp_path / "out" / "intel_2004-03-06.nc"
    return ["prepare-intel", "--data", str(data), "--locs", str(locs), "--dates", "2004-03-06",
            "--out", str(out)]  # fmt: skip


def _ozone(tmp_path: Path, *inputs: Path) -> list[str]:
    out = tmp_path / "out" / "ozone.nc"
    return ["prepare-ozone", "--inputs", *map(str, inputs), "--years", "2006", "--cbsa", "None",
            "--out", str(out)]  # fmt: skip


def _nothing_written(tmp_path: Path) -> None:
    assert not (tmp_path / "out").exists()


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_prepare_intel_truncated_gzip(tmp_path, capsys):
    data = _write(tmp_path / "data.txt.gz", GZ[: len(GZ) // 2])
    locs = _write(tmp_path / "mote_locs.txt", LOCS)
    line = _run(capsys, *_intel(tmp_path, data, locs))
    assert str(data) in line and "truncated gzip" in line and "download it again" in line
    _nothing_written(tmp_path)


@needs_mirror
def test_prepare_intel_truncated_copy_of_the_mirror_file(tmp_path, capsys):
    raw = INTEL_MIRROR.read_bytes()
    data = _write(tmp_path / "data.txt.gz", raw[: len(raw) * 2 // 3])
    line = _run(capsys, *_intel(tmp_path, data, LOCS_MIRROR))
    assert str(data) in line and "truncated gzip" in line and "EOFError" in line
    _nothing_written(tmp_path)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", "empty file (no lines)"),
        (gzip.compress(b""), "empty file (no lines)"),
        (b"not an intel line\nnor this\n", "none of its 2 lines is an Intel reading"),
    ],
    ids=["zero-bytes", "empty-gzip", "not-intel"],
)
def test_prepare_intel_empty_or_foreign_data(tmp_path, capsys, content, words):
    data = _write(tmp_path / "data.txt.gz", content)
    locs = _write(tmp_path / "mote_locs.txt", LOCS)
    line = _run(capsys, *_intel(tmp_path, data, locs))
    assert str(data) in line and words in line
    _nothing_written(tmp_path)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", "empty mote locations file"),
        (b"\n\n", "empty mote locations file"),
        (b"1 2.0 3.0\n2 x 4.0\n", "row 2 '2 x 4.0' is not numeric"),
        (b"1 2.0 3.0\n1 4.0 5.0\n", "mote ids must be unique integers"),
        (b"98 1.0 2.0\n99 3.0 4.0\n", "none of the 1 motes"),
    ],
    ids=["empty", "blank-lines", "not-numeric", "duplicate-id", "no-match"],
)
def test_prepare_intel_bad_mote_locations(tmp_path, capsys, content, words):
    data = _write(tmp_path / "data.txt.gz", GZ)
    locs = _write(tmp_path / "mote_locs.txt", content)
    line = _run(capsys, *_intel(tmp_path, data, locs))
    assert str(locs) in line and words in line and "mote" in line
    _nothing_written(tmp_path)


def _flip_middle(data: bytes) -> bytes:
    corrupt = bytearray(data)
    corrupt[len(data) // 2] ^= 0xFF
    return bytes(corrupt)


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (lambda z: z[: len(z) // 2], "corrupt or truncated zip file"),
        (lambda z: z[:-10], "corrupt or truncated zip file"),  # the central directory is cut
        (lambda z: b"", "corrupt or truncated zip file (0 bytes"),
        (_flip_middle, "zip"),  # a damaged member: CRC or inflate error, never a pandas one
        (lambda z: _zip({}), "expected one .csv member in the zip, found []"),
    ],
    ids=["half", "tail-cut", "empty", "corrupt-member", "no-members"],
)
def test_prepare_ozone_bad_zip(tmp_path, capsys, damage, words):
    good = _zip({"daily_44201_2006.csv": EPA_CSV})
    bad = _write(tmp_path / "daily_44201_2006.zip", damage(good))
    line = _run(capsys, *_ozone(tmp_path, bad))
    assert str(bad) in line and words in line
    assert "tokeniz" not in line.lower()
    _nothing_written(tmp_path)


def test_prepare_ozone_synthetic_zip_is_good(tmp_path):
    """The control for the damaged copies above: the intact zip prepares a field."""
    good = _write(tmp_path / "daily_44201_2006.zip", _zip({"daily_44201_2006.csv": EPA_CSV}))
    assert main(_ozone(tmp_path, good)) == 0
    assert (tmp_path / "out" / "ozone.nc").is_file()


@needs_mirror
@pytest.mark.parametrize("cut", ["half", "crc"])
def test_prepare_ozone_damaged_copy_of_the_mirror_file(tmp_path, capsys, cut):
    raw = OZONE_MIRROR.read_bytes()
    bad = _write(tmp_path / "daily_44201_2006.zip",
                 raw[: len(raw) // 2] if cut == "half" else _flip_middle(raw))  # fmt: skip
    line = _run(capsys, *_ozone(tmp_path, bad))
    assert str(bad) in line
    assert ("truncated zip" in line) if cut == "half" else ("fails its CRC check" in line)
    _nothing_written(tmp_path)
