"""Faults at the write (issue 24): a full disk, a read-only results folder, ``kill -9``.

A full disk and a read-only folder are real small tmpfs mounts where this process may mount
(root on Linux), and else an ``OSError`` injected at the write; every case ends with exit status
2, one line naming the path and the cause, and nothing left behind. The ``kill -9`` tests
interrupt ``tvbo run-many`` and ``tvbo merge`` and resume them: every finished file is
byte-identical to an uninterrupted one and no input changes (slow: real simulations).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import xarray as xr

from tvbo import cli

RUN = ["--benchmark", "eggholder", "--algorithm", "gp-ucb", "--horizon", "3", "--warmup", "2",
       "--max-iterations", "4", "--quiet"]


def one_line_error(capsys, argv: list[str]) -> str:
    """Run ``tvbo argv`` in-process: exit status 2 and ONE line ``tvbo: error: ...`` on stderr,
    no traceback (shared with tests/test_bad_input_catalogue.py); returns the line."""
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tvbo: error: "), err
    assert "Traceback" not in err
    return lines[0]


@contextlib.contextmanager
def tmpfs(folder: Path, size: str, *, read_only: bool = False) -> Iterator[Path]:
    """A small tmpfs at ``folder`` (skip the test where mounting is not allowed)."""
    folder.mkdir(parents=True, exist_ok=True)
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root on Linux")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        if read_only:
            subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _fill(folder: Path) -> None:
    """Fill ``folder``'s file system to the last byte."""
    with open(folder / "filler", "wb", buffering=0) as handle:
        with contextlib.suppress(OSError):
            while True:
                handle.write(b"\0" * 4096)
                handle.flush()


# -- a full disk -----------------------------------------------------------------------------------
def test_full_disk_tmpfs_run(tmp_path, capsys) -> None:
    with tmpfs(tmp_path / "disk", "256k") as disk:
        _fill(disk)
        line = one_line_error(capsys, ["run", *RUN, "--out", str(disk / "r.nc")])
        assert str(disk) in line and "the disk holding it is full" in line, line
        assert sorted(p.name for p in disk.iterdir()) == ["filler"]  # no run file, no temp


@pytest.mark.parametrize("cause", [OSError(errno.ENOSPC, "No space left on device"),
                                   OSError(-101, "NetCDF: HDF error")])
def test_full_disk_injected_at_the_write(tmp_path, capsys, monkeypatch, cause) -> None:
    """The OSError the netCDF writer raises on a full disk, injected: one line, no file."""
    def full(self, path, *args, **kwargs):
        raise type(cause)(cause.errno, cause.strerror, str(path))

    monkeypatch.setattr(xr.Dataset, "to_netcdf", full)
    line = one_line_error(capsys, ["run", *RUN, "--out", str(tmp_path / "r.nc")])
    assert cause.strerror in line and str(tmp_path) in line, line
    assert list(tmp_path.iterdir()) == []


def test_run_many_is_all_or_nothing(tmp_path, capsys, monkeypatch) -> None:
    """The second seed's write fails: the first seed's file is removed too (the job is redone
    as a whole), and the error is one line."""
    real = xr.Dataset.to_netcdf
    calls = []

    def second_fails(self, path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(xr.Dataset, "to_netcdf", second_fails)
    outs = [str(tmp_path / "s0.nc"), str(tmp_path / "s1.nc")]
    line = one_line_error(capsys, ["run-many", *RUN, "--seeds", "0", "1", "--out", *outs])
    assert "No space left" in line
    assert list(tmp_path.iterdir()) == []


def test_figures_leave_no_empty_folder(tmp_path, capsys, monkeypatch) -> None:
    """figures on a full disk: the folder it created is removed again."""
    assert cli.main(["run", *RUN, "--out", str(tmp_path / "r.nc")]) == 0
    assert cli.main(["merge", str(tmp_path / "r.nc"), "--out", str(tmp_path / "c.nc")]) == 0
    capsys.readouterr()
    import tvbo.analysis.figures as figures

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "figs" / "a.png"))

    monkeypatch.setattr(figures, "write_figures", full)
    line = one_line_error(capsys, ["figures", str(tmp_path / "c.nc"), "--outdir",
                                    str(tmp_path / "figs" / "deeper")])
    assert "No space left" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.nc", "r.nc"]


# -- a read-only results folder --------------------------------------------------------------------
def test_read_only_results_folder(tmp_path, capsys) -> None:
    with tmpfs(tmp_path / "ro", "64k", read_only=True) as folder:
        (tmp_path / "r.nc").write_bytes(b"")  # exists: the output is checked before reading
        for argv in (["run", *RUN, "--out", str(folder / "runs" / "r.nc")],
                     ["figures", "c.nc", "--outdir", str(folder / "figs")],
                     ["merge", str(tmp_path / "r.nc"), "--out", str(folder / "c.nc")]):
            line = one_line_error(capsys, argv)
            assert "cannot write" in line and "Read-only file system" in line, line
        assert list(folder.iterdir()) == []


# -- kill -9 and resume ----------------------------------------------------------------------------
def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _kill_when(argv: list[str], ready, cwd: Path, timeout: float = 300) -> None:
    """Start ``tvbo argv``, SIGKILL it as soon as ``ready()`` holds (or it ends)."""
    proc = subprocess.Popen([sys.executable, "-m", "tvbo", *argv], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while proc.poll() is None and not ready() and time.monotonic() < deadline:
        time.sleep(0.02)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait()


@pytest.mark.slow
def test_kill_9_during_run_many_then_resume(tmp_path) -> None:
    seeds = ["0", "1", "2"]
    ref, cut = tmp_path / "ref", tmp_path / "cut"
    ref.mkdir(), cut.mkdir()
    outs = [f"s{s}.nc" for s in seeds]
    argv = ["run-many", *RUN, "--seeds", *seeds, "--out", *outs]
    subprocess.run([sys.executable, "-m", "tvbo", *argv], cwd=ref, check=True)
    _kill_when(argv, lambda: (cut / "s0.nc").exists(), cut)
    finished = [o for o in outs if (cut / o).exists()]
    for name in finished:  # whatever the kill left is complete
        assert _sha(cut / name) == _sha(ref / name)
    assert not [p for p in cut.iterdir() if p.suffix == ".nc" and p.name not in outs]
    subprocess.run([sys.executable, "-m", "tvbo", *argv], cwd=cut, check=True)  # resume
    for name in outs:
        assert _sha(cut / name) == _sha(ref / name)
    assert sorted(p.name for p in cut.iterdir() if not p.name.endswith(".tmp")) == sorted(outs)


@pytest.mark.slow
def test_kill_9_during_merge_then_resume(tmp_path) -> None:
    seeds = ["0", "1", "2"]
    outs = [f"s{s}.nc" for s in seeds]
    subprocess.run([sys.executable, "-m", "tvbo", "run-many", *RUN, "--seeds", *seeds,
                    "--out", *outs], cwd=tmp_path, check=True)
    inputs = {name: _sha(tmp_path / name) for name in outs}
    merge = ["merge", *outs, "--out", "ref.nc"]
    subprocess.run([sys.executable, "-m", "tvbo", *merge], cwd=tmp_path, check=True)
    cut = ["merge", *outs, "--out", "cut.nc"]
    started = time.monotonic()
    _kill_when(cut, lambda: time.monotonic() - started > 1.0, tmp_path)
    assert {name: _sha(tmp_path / name) for name in outs} == inputs  # no input lost
    assert not (tmp_path / "cut.nc").exists() or _sha(tmp_path / "cut.nc") == _sha(
        tmp_path / "ref.nc")  # never a partial campaign file under its name
    subprocess.run([sys.executable, "-m", "tvbo", *cut], cwd=tmp_path, check=True)  # resume
    assert _sha(tmp_path / "cut.nc") == _sha(tmp_path / "ref.nc")
