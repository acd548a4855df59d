"""The public W-DBO code replayed through its committed response-time model.

``examples/wdbo_public/w-dbo-public.R.yaml`` was fitted by ``tvbo calibrate --from-runs`` to
measured runs of the plugin (docs/side-by-side.md). A run of the plugin under ``compute:
polynomial`` with it must be deterministic (the same seed, the same run bit for bit), record
the model's provenance in the run file, and merge with ``counted`` runs under a caveat line.
The replay tests need the ``reference`` extra and the plugin package; the file test does not.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

import tvbo
from tvbo.analysis.context import campaign_setting, setting_text
from tvbo.results.campaign import merge_runs
from tvbo.results.io import write_run
from tvbo.testing.preset_grid import digest_dataset

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "examples" / "wdbo_public" / "w-dbo-public.R.yaml"
SHORT = {"seed": 3, "max_iterations": 18, "cost_table": "metronome", "warmup": 15}


def test_the_committed_model_states_its_provenance_and_its_errors() -> None:
    text = MODEL.read_text()
    data = yaml.safe_load(text)
    assert data["kind"] == "response-time" and data["algorithm"] == "w-dbo-public"
    source = data["source"]
    assert source["n_runs"] == len(source["runs"]) >= 10
    assert all(re.fullmatch(r"[0-9a-f]{64}", r["sha256"]) for r in source["runs"])
    assert {r["benchmark"] for r in source["runs"]} == set(source["benchmarks"])
    assert "commit" in source["note"] and source["algorithm_options"][0]["wdbo_algo"] == "1.0.7"
    assert not re.search(r"(^|[\s'\"])/(work|root|home|tmp)/", text), "a machine path"
    # the leave-one-run-out check covers every run, and every fitted phase
    totals = data["validation"]["run_totals"]
    assert [t["run"] for t in totals["runs"]] == [r["file"] for r in source["runs"]]
    assert set(data["validation"]["phases"]) == set(data["phases"])


def _replay(plugin):
    """The plugin by its entry-point name, as the workflow and side_by_side.py run it."""
    assert plugin.WDBOPublic.name == "w-dbo-public"
    return tvbo.simulate("hartmann3", "w-dbo-public", compute="polynomial",
                         profile=str(MODEL), **SHORT)


def test_a_replay_is_bit_identical_and_records_the_model() -> None:
    pytest.importorskip("wdbo_algo")
    plugin = pytest.importorskip("tvbo_wdbo_public")
    first, second = _replay(plugin), _replay(plugin)
    assert digest_dataset(first) == digest_dataset(second)
    replay = json.loads(first.attrs["compute_model_json"])["replay"]
    model = yaml.safe_load(MODEL.read_text())
    assert replay["phases"] == model["phases"] and replay["source"] == model["source"]
    assert replay["validation"] == model["validation"]
    # charged from the model: a post-warm-up propose costs the propose phases' R_p(n)
    charged = first["compute_acquisition"].values.ravel()[15:]
    assert (charged > 0).all()


def test_a_replay_merges_with_counted_runs_under_a_caveat(tmp_path: Path) -> None:
    pytest.importorskip("wdbo_algo")
    plugin = pytest.importorskip("tvbo_wdbo_public")
    replay = write_run(_replay(plugin), tmp_path / "replay.nc")
    counted = write_run(tvbo.simulate("hartmann3", "w-dbo-paper", profile="botorch-i9-laptop",
                                      **SHORT), tmp_path / "paper.nc")
    campaign = merge_runs([replay, counted])
    assert sorted(map(str, campaign["algorithm"].values)) == ["w-dbo-paper", "w-dbo-public"]
    assert "Caveat: W-DBO (public code) (fit error" in setting_text(campaign_setting(campaign))
