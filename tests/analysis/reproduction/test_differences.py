"""Disagreeing pairs: explained, contradicted or unexplained by the spec's predictions
(tvbo/analysis/reproduction/differences.py and predict.py)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.analysis.reproduction.fakes import (
    TVBO,
    _campaign,
    _run,
    _spec,
    _table_campaign,
)
from tvbo.analysis.reproduction.report import build_report


def test_explained_and_unexplained_differences(built) -> None:
    result = built.tables["bolt-metronome"]
    # the one disagreement, Shekel (r-gp-ucb, bolt), is explained; the paper ties are not listed
    assert result.explained == [("shekel", "r-gp-ucb", "bolt")]
    assert result.unexplained == []
    assert not any(x.startswith("- gp-ucb vs bolt") for x in built.text.splitlines())
    assert "1. a test cause" in built.text
    # the variant evidence: r-gp-ucb 2.50 ± 0.02 vs bolt 3.00 ± 0.02, ratio 1.20
    assert "average regret r-gp-ucb 2.50 ± 0.02 (n = 3) vs bolt 3.00 ± 0.02 (n = 3); " \
           "bolt / r-gp-ucb = 1.20" in built.text
    assert "fit records absent in these runs" in built.text
    assert "state (never_run): not yet run: campaign `never_run`" in built.text


def test_a_disagreement_without_an_explanation_is_listed_unexplained(
    fake: Path, tmp_path: Path
) -> None:
    report = build_report(_spec(tmp_path, explanations=[]), fake / "results")
    result = report.tables["bolt-metronome"]
    assert result.explained == []
    assert result.unexplained == [("shekel", "r-gp-ucb", "bolt")]
    line = next(x for x in report.text.splitlines() if x.startswith("- r-gp-ucb vs bolt"))
    assert line.endswith("**unexplained** (no specific entry names this pair)")


def _explained_with(fake: Path, tmp_path: Path, results: Path | None = None, **entry):
    """The fake table's one disagreement (Shekel, r-gp-ucb 2.5 < bolt 3.0 in tvbo, the paper
    bolt 2.51 < r-gp-ucb 2.58) under an edited explanation entry."""
    edits = {f"explanations.0.{k}": v for k, v in entry.items()}
    report = build_report(_spec(tmp_path, **edits), results or fake / "results")
    return report, report.tables["bolt-metronome"]


def test_holding_predictions_explain_on_both_replicates(fake: Path, tmp_path: Path) -> None:
    report, result = _explained_with(fake, tmp_path)
    assert result.explained == [("shekel", "r-gp-ucb", "bolt")] and not result.contradicted
    # time-integrated regret 25 vs 30 (s.e. 0.17 each) on seeds 0-2 and on held-out seeds 3-5
    assert "seeds 0-2, shekel: holds: r-gp-ucb 25.0 ± 0.2 (n = 3) < bolt 30.0 ± 0.2" in report.text
    assert "seeds 3-5, shekel: holds: r-gp-ucb 25.0 ± 0.2 (n = 3) < bolt 30.0 ± 0.2" in report.text
    # the table's orderings on the replicate (the same values: the same counts)
    assert ("Held-out replicate `heldout` (seeds 3-5): 2 agree, 3 tie, 1 disagree of 6 "
            "orderings; of this campaign's 1 disagreements, 1 disagree there too.") in report.text


def test_a_failing_prediction_makes_the_pair_contradicted(fake: Path, tmp_path: Path) -> None:
    report, result = _explained_with(
        fake, tmp_path, predictions=[{"quantity": "time_integrated_regret",
                                      "order": "bolt < r-gp-ucb"}])
    assert result.explained == [] and result.unexplained == []
    assert result.contradicted == [("shekel", "r-gp-ucb", "bolt")]
    assert "#### Contradicted predictions" in report.text
    line = next(x for x in report.text.splitlines() if x.startswith("- spec explanations[0], "))
    assert "time_integrated_regret: bolt < r-gp-ucb" in line and "bolt 30.0 ± 0.2" in line
    assert ("Table 2: 6 orderings, 1 disagree: 0 explained, 1 contradicted, 0 unexplained (0 of "
            "them named only by a broad entry)") in report.text


def test_a_wrong_direction_is_contradicted(fake: Path, tmp_path: Path) -> None:
    _, result = _explained_with(fake, tmp_path, explains=["bolt < r-gp-ucb"])
    assert result.contradicted == [("shekel", "r-gp-ucb", "bolt")]


def test_missing_evidence_leaves_the_pair_unexplained(fake: Path, tmp_path: Path) -> None:
    # the fake runs record no resets: the prediction cannot be evaluated
    report, result = _explained_with(
        fake, tmp_path, predictions=[{"quantity": "resets", "order": "r-gp-ucb < bolt"}])
    assert result.unexplained == [("shekel", "r-gp-ucb", "bolt")] and not result.explained
    assert "**unexplained** (evidence missing, 1)" in report.text
    assert "state_resets not recorded in these runs" in report.text


def test_without_a_held_out_replicate_the_pair_is_unexplained(fake: Path, tmp_path: Path) -> None:
    spec = yaml.safe_load(_spec(tmp_path).read_text())
    del spec["campaigns"]["bolt_fake"]["replicate"]
    path = tmp_path / "config" / "reproduction.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    report = build_report(path, fake / "results")
    assert report.tables["bolt-metronome"].unexplained == [("shekel", "r-gp-ucb", "bolt")]
    assert "no held-out replicate of bolt_fake" in report.text


def test_held_out_seeds_that_reverse_the_order_contradict(fake: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    _table_campaign(results)
    swapped = {**TVBO, ("shekel", "r-gp-ucb"): TVBO[("shekel", "bolt")],
               ("shekel", "bolt"): TVBO[("shekel", "r-gp-ucb")]}
    runs = [_run(b, a, seed, m + (i - 1) * d) for (b, a), (m, d) in swapped.items()
            for i, seed in enumerate((3, 4, 5))]
    _campaign(results / "bolt_fake_heldout" / "campaign.nc", runs)
    report, result = _explained_with(fake, tmp_path, results=results)
    assert result.contradicted == [("shekel", "r-gp-ucb", "bolt")]
    assert "seeds 3-5, shekel: fails: r-gp-ucb 30.0 ± 0.2 (n = 3) > bolt 25.0" in report.text


def test_towards_paper_prediction(fake: Path, tmp_path: Path) -> None:
    # paper bolt 2.51; switching bolt (3.0, 0.49 away) to r-gp-ucb (2.5, 0.01 away): 0.48 > 0.035
    report, result = _explained_with(
        fake, tmp_path, predictions=[{"quantity": "average_regret",
                                      "towards_paper": "bolt -> r-gp-ucb"}])
    assert result.explained == [("shekel", "r-gp-ucb", "bolt")]
    assert "paper 2.51; bolt 3.00 ± 0.02 (n = 3) -> r-gp-ucb 2.50 ± 0.02 (n = 3): closer by 0.48"\
        in report.text
    _, result = _explained_with(
        fake, tmp_path, predictions=[{"quantity": "average_regret",
                                      "towards_paper": "r-gp-ucb -> bolt"}])
    assert result.contradicted == [("shekel", "r-gp-ucb", "bolt")]


def test_a_broad_entry_alone_does_not_explain(fake: Path, tmp_path: Path) -> None:
    report, result = _explained_with(fake, tmp_path, benchmarks="all", explains=[])
    assert result.explained == [] and result.unexplained == [("shekel", "r-gp-ucb", "bolt")]
    assert result.broad_only == 1
    line = next(x for x in report.text.splitlines() if x.startswith("- r-gp-ucb vs bolt"))
    assert line.endswith("**unexplained** (no specific entry names this pair); context: 1")
    assert "1. a test cause (context only; spec explanations[0])" in report.text
