"""Orderings across emulated hardware speeds (tvbo/analysis/reproduction/sensitivity.py)."""

from __future__ import annotations

import pandas as pd

from tvbo.analysis.reproduction.sensitivity import speed_sensitivity


def test_sensitivity_section_of_a_one_speed_campaign(built) -> None:
    result = built.sensitivity["bolt-metronome"]
    # one speed: a strict order "holds", the (r-gp-ucb, bolt) tie on Eggholder stays a tie
    assert result["status"].value_counts().to_dict() == {"holds": 5, "tie": 1}
    # the agreement with the paper at speed 1 is the table's: 2 agree, 3 ties, 1 disagrees
    assert "| 1 | 2 | 3 | 1 | 6 |" in built.text


def test_speed_sensitivity_flips_holds_ties() -> None:
    rows = []
    for speed, gp, bolt, r in ((0.7, 2.0, 3.0, 3.0), (1.0, 2.0, 3.0, 2.5), (1.3, 3.0, 2.0, 2.0)):
        for algorithm, mean in (("gp-ucb", gp), ("bolt", bolt), ("r-gp-ucb", r), ("w-dbo", 9.0)):
            rows.append({"benchmark": "shekel", "speed": speed, "algorithm": algorithm,
                         "mean": mean, "se": 0.01, "n": 3})
    result = speed_sensitivity(pd.DataFrame(rows)).set_index(["a", "b"])
    assert result.loc[("gp-ucb", "bolt"), "status"] == "flips"  # -1, -1, +1
    assert result.loc[("gp-ucb", "r-gp-ucb"), "status"] == "flips"  # -1, -1, +1
    assert result.loc[("bolt", "r-gp-ucb"), "status"] == "tie"  # 0, +1, 0
    assert result.loc[("gp-ucb", "w-dbo"), "status"] == "holds"  # -1 at every speed
    assert result.loc[("gp-ucb", "bolt"), "speed 1.3"] == 1


def test_a_base_campaign_supplies_the_speeds_the_sensitivity_campaign_does_not_run(
        tmp_path) -> None:
    """The sensitivity campaign runs speed 0.7 only; speed 1 comes from the table's campaign
    (same settings), so its runs are not made twice. At 0.7 Shekel's GP-UCB and BOLT swap."""
    import yaml

    from tests.analysis.reproduction.fakes import TVBO, _campaign, _run, _spec, _table_campaign
    from tvbo.analysis.reproduction.report import build_report

    results = tmp_path / "results"
    _table_campaign(results)
    swapped = {**TVBO, ("shekel", "gp-ucb"): (3.0, 0.03), ("shekel", "bolt"): (2.0, 0.03)}
    _campaign(results / "sens_fake" / "campaign.nc", [
        _run(b, a, seed, m + (i - 1) * d, speed=0.7)
        for (b, a), (m, d) in swapped.items() for i, seed in enumerate((0, 1, 2))])
    spec = _spec(tmp_path, sensitivity=[
        {"paper": "bolt-metronome", "campaign": "sens", "base": "bolt_fake"}])
    raw = yaml.safe_load(spec.read_text())
    raw["campaigns"]["sens"] = {"config": "bolt_fake.yaml",
                                "overrides": {"campaign": "sens_fake", "speeds": [0.7]}}
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    report = build_report(spec, results)
    result = report.sensitivity["bolt-metronome"].set_index(["benchmark", "a", "b"])
    assert list(result.filter(like="speed").columns) == ["speed 0.7", "speed 1"]
    assert result.loc[("shekel", "bolt", "gp-ucb"), "status"] == "flips"
    assert result.loc[("eggholder", "bolt", "gp-ucb"), "status"] == "holds"
    assert ("Campaign `sens_fake` with speed 1 from campaign `bolt_fake` (the same settings: "
            "those runs are not made twice), speeds 0.7, 1") in report.text


def test_a_base_campaign_of_other_settings_is_rejected(tmp_path) -> None:
    import pytest

    from tests.analysis.reproduction.fakes import _spec
    from tvbo.analysis.reproduction.spec_yaml import load_spec

    spec = _spec(tmp_path, sensitivity=[
        {"paper": "bolt-metronome", "campaign": "bolt_fake", "base": "missing"}])
    with pytest.raises(ValueError, match=r"sensitivity\[0\]\.base.*'missing' differs from "
                       r"'bolt_fake' in cost_table"):
        load_spec(spec)
