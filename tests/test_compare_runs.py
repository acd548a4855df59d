"""scripts/compare_runs.py: a whole campaign's runs checked bit for bit against a reference."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_runs import make_run
from tests.scripts import load_script
from tvbo.results.io import write_run


@pytest.fixture(scope="module")
def compare_runs():
    return load_script("scripts/compare_runs.py")


def _campaign(directory: Path, runs: dict[str, object]) -> Path:
    for rel, ds in runs.items():
        write_run(ds, directory / rel)
    return directory


def test_identical_campaigns_pass(tmp_path, compare_runs, capsys):
    runs = {"shekel/bolt/seed0_speed1.0.nc": make_run("shekel", "bolt", 0),
            "shekel/bolt/seed1_speed1.0.nc": make_run("shekel", "bolt", 1)}
    old = _campaign(tmp_path / "old", runs)
    new = _campaign(tmp_path / "new", runs)
    assert compare_runs.main([str(old), str(new)]) == 0
    assert "2 runs: 2 identical" in capsys.readouterr().out


def test_one_changed_bit_fails_and_names_the_variable(tmp_path, compare_runs, capsys):
    run = make_run("shekel", "bolt", 0)
    changed = run.copy(deep=True)
    changed["y"].values[0, 0, 0, 0, 3] += 1e-12  # one observation, one ulp-scale change
    old = _campaign(tmp_path / "old", {"shekel/bolt/seed0_speed1.0.nc": run})
    new = _campaign(tmp_path / "new", {"shekel/bolt/seed0_speed1.0.nc": changed})
    assert compare_runs.main([str(old), str(new)]) == 1
    out = capsys.readouterr().out
    assert "1 variables changed (y)" in out
    # the regrets did not move, so a tolerance on the regrets accepts it
    assert compare_runs.main([str(old), str(new), "--rtol", "1e-9"]) == 0


def test_a_missing_run_fails(tmp_path, compare_runs, capsys):
    runs = {"wlan/bolt/seed0_speed1.0.nc": make_run("shekel", "bolt", 0)}
    old = _campaign(tmp_path / "old", runs)
    (tmp_path / "new").mkdir()
    assert compare_runs.main([str(old), str(tmp_path / "new")]) == 1
    assert "missing" in capsys.readouterr().out
