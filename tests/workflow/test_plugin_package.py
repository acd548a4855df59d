"""A plugin PACKAGE, installed with pip, is found by `tvbo list` and runs in a real Snakemake
campaign with its display name in every table, without any tvbo file edited or any flag given
(its entry points tvbo.algorithms / tvbo.benchmarks are enough).

The package is examples/ask_tell_example (an ask/tell optimiser wrapped as a tvbo Algorithm,
and a benchmark). It is built and installed into a temporary folder (``pip install --no-deps
--no-build-isolation --target``, from a copy, so the checkout gets no build files) and put on
PYTHONPATH: what a fresh environment with the package installed sees.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.workflow.test_workflow import REPO, snakemake

EXAMPLE = REPO / "examples" / "ask_tell_example"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example package pip-installed into a temporary site folder (returned)."""
    root = tmp_path_factory.mktemp("plugin")
    source = root / "src"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    site = root / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(site), str(source)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert list(site.glob("tvbo_ask_tell_example-*.dist-info/entry_points.txt"))
    return site


def _env(site: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}


def test_installed_package_is_listed(installed: Path, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "tvbo", "list"], capture_output=True,
                          text=True, env=_env(installed), cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(x.strip().startswith("ask-tell-es ") and "ask/tell" in x for x in lines)
    assert any(x.strip().startswith("drifting-peak ") for x in lines)


def test_installed_package_runs_in_a_campaign(installed: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The honest path for code tvbo cannot count, end to end in the workflow: a campaign
    measures the plugin algorithm, `tvbo calibrate --from-runs` fits its response time, and a
    second campaign replays it (compute_per_algorithm) beside a counted built-in; the tables
    show its display name and the caveat."""
    monkeypatch.setenv("PYTHONPATH", str(installed))  # snakemake() prepends the checkout
    base = {"benchmarks": ["drifting-peak"], "seeds": [0, 1], "horizon": 20, "warmup": 3}
    measure = {**base, "campaign": "measure", "algorithms": ["ask-tell-es"],
               "compute": "measured"}
    proc = snakemake(tmp_path, measure, "--cores", "2", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    model = tmp_path / "ask-tell-es.yaml"
    proc = subprocess.run(
        [sys.executable, "-m", "tvbo", "calibrate", "--from-runs",
         "results/measure/runs/drifting-peak/ask-tell-es", "--out", str(model)],
        capture_output=True, text=True, env=_env(installed), cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    replay = {**base, "campaign": "plug", "algorithms": ["ask-tell-es", "gp-ucb"],
              "compute_per_algorithm": {"ask-tell-es": {"compute": "polynomial",
                                                        "profile": str(model)}}}
    proc = snakemake(tmp_path, replay, "--cores", "2", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tables = tmp_path / "results" / "plug" / "tables"
    for name in ("average_regret.md", "average_regret.csv", "time_integrated_regret.md"):
        text = (tables / name).read_text()
        assert "(1+1)-ES (public code)" in text and "GP-UCB" in text, name
    assert "Caveat: (1+1)-ES (public code) (fit error" in (tables / "average_regret.md").read_text()
