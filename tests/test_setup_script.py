"""scripts/setup.sh reinstalls only when the environment is stale; the build metadata is clean.

The quickstart and the test command both call setup.sh; an editable install needs no reinstall
for code changes, only for a changed pyproject.toml (dependencies, entry points) or interpreter.
These tests run setup.sh in a scratch copy with a stand-in interpreter that records every pip call,
so they check the script's logic without touching the real environment or the network.
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: a stand-in .venv/bin/python: prints a version, "imports" tvbo, logs pip invocations
FAKE_PYTHON = """#!/usr/bin/env bash
if [ "$1" = "-c" ]; then
  case "$2" in
    *sys.version*) echo "3.11.fake" ;;
    *"import tvbo"*) exit 0 ;;
  esac
  exit 0
fi
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
  echo "$@" >> "$(dirname "$0")/../pip_calls.log"
  exit 0
fi
exit 0
"""


def _scratch(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "setup.sh", root / "scripts" / "setup.sh")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return root


def _setup(root: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(root / "scripts" / "setup.sh")], capture_output=True,
                          text=True, timeout=60, env={"PATH": "/usr/bin:/bin", **env})


def _pip_calls(root: Path) -> list[str]:
    log = root / ".venv" / "pip_calls.log"
    return log.read_text().splitlines() if log.exists() else []


def test_setup_installs_once_then_skips_until_pyproject_changes(tmp_path) -> None:
    root = _scratch(tmp_path)
    first = _setup(root)
    assert first.returncode == 0, first.stderr
    assert any("install" in call and "-e" in call for call in _pip_calls(root))
    calls = len(_pip_calls(root))

    second = _setup(root)
    assert second.returncode == 0
    assert "skipping install" in second.stdout
    assert len(_pip_calls(root)) == calls  # no pip at all

    (root / "pyproject.toml").write_text((root / "pyproject.toml").read_text() + "\n# changed\n")
    third = _setup(root)
    assert third.returncode == 0 and "skipping" not in third.stdout
    assert len(_pip_calls(root)) > calls


def test_setup_reinstalls_when_forced(tmp_path) -> None:
    root = _scratch(tmp_path)
    _setup(root)
    calls = len(_pip_calls(root))
    forced = _setup(root, TVBO_FORCE_INSTALL="1")
    assert forced.returncode == 0 and "skipping" not in forced.stdout
    assert len(_pip_calls(root)) > calls


def test_licence_metadata_is_an_spdx_string() -> None:
    """A TOML-table licence makes setuptools >= 77 print a deprecation warning on every build."""
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert meta["project"]["license"] == "MIT"
    requires = " ".join(meta["build-system"]["requires"])
    assert "setuptools>=77" in requires  # the first release that reads an SPDX string
