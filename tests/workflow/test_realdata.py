"""The offline real-data study end to end: the data rules fetch from the local mirror, verify,
prepare the fields, and GP-UCB runs on temperature, temperature-sensors, ozone-sensors and wlan."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.mirror import MIRROR_ROOT

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")


@pytest.mark.skipif(not MIRROR_ROOT.is_dir(), reason="offline data mirror not present")
def test_realdata_study_runs_offline_from_the_mirror(tmp_path):
    config = yaml.safe_load((REPO / "config" / "realdata_offline.yaml").read_text())
    config["data"]["mirror"] = str(MIRROR_ROOT)
    config.update(seeds=[0], horizon=40.0, max_iterations=40)
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(config))
    result = subprocess.run(
        [str(SNAKEMAKE), "-s", str(REPO / "workflow" / "Snakefile"), "--directory", str(tmp_path),
         "--configfile", str(path), "--cores", "2", "--quiet", "rules"],
        capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    table = (tmp_path / "results" / "realdata" / "tables" / "average_regret.md").read_text()
    for benchmark in ("temperature", "temperature-sensors", "ozone-sensors", "wlan"):
        assert f"| {benchmark} |" in table
    for raw in ("intel/data.txt.gz", "intel/mote_locs.txt", "ozone/daily_44201_2006.zip"):
        assert (tmp_path / "data" / "raw" / f"{raw}.manifest.json").is_file()
