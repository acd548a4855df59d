"""The campaigns a report reads and the stand-ins' differences
(tvbo/analysis/reproduction/campaigns.py)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tvbo.analysis.reproduction.campaigns import stand_in_differences


def test_stand_in_differences_name_each_setting_that_differs(tmp_path: Path) -> None:

    expected = {"campaign": "bolt_paper", "seeds": [0, 1, 2], "benchmarks": ["shekel", "wlan"],
                "cost_table": "metronome", "data": {"intel": {"dates": ["2004-02-28"]}},
                "runs_per_job": 5}
    path = tmp_path / "config.yaml"
    assert stand_in_differences(expected, path) is None  # no recorded config
    recorded = {**expected, "campaign": "other", "runs_per_job": 1,
                "benchmarks": ["wlan", "shekel"],  # the same set in another order
                "seeds": [0, 1], "data": {"intel": {"dates": ["2004-03-06"]}}}
    path.write_text(yaml.safe_dump(recorded))
    assert stand_in_differences(expected, path) == [
        "data.intel.dates: ['2004-03-06'] instead of ['2004-02-28']",
        "seeds: [0, 1] instead of [0, 1, 2]",
    ]
    path.write_text(yaml.safe_dump({**expected, "campaign": "renamed"}))
    assert stand_in_differences(expected, path) == []
