"""Refactorings do not change results: every algorithm's run files on a fixed small grid keep the
digests recorded in tests/fixtures/preset_digests.json (tvbo.testing.preset_grid)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from tvbo.registry import names
from tvbo.testing.preset_grid import digest_dataset, grid, run

FIXTURE = Path(__file__).parents[1] / "fixtures" / "preset_digests.json"
RECORDED = json.loads(FIXTURE.read_text())


def test_every_registered_algorithm_is_in_the_recorded_grid():
    recorded = {key.split("/")[1] for key in RECORDED}
    missing = sorted(set(names("algorithms")) - recorded)
    command = "python scripts/record_preset_digests.py"
    assert not missing, f"record their digests: {command} {' '.join(missing)}"


@pytest.mark.parametrize("algorithm", names("algorithms"))
def test_run_files_keep_their_recorded_digests(algorithm):
    for entry in grid([algorithm]):
        if entry.key not in RECORDED:
            pytest.fail(f"{entry.key} has no recorded digest")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = digest_dataset(run(entry))
        expected = RECORDED[entry.key]
        changed = sorted(name for name in expected.keys() | got.keys()
                         if expected.get(name) != got.get(name))
        assert not changed, f"{entry.key}: data variables changed: {', '.join(changed)}"
