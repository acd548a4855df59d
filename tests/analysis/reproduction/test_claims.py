"""The seed papers' claims and their verdicts (tvbo/analysis/reproduction/claims.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import xarray as xr

from tvbo.analysis.reproduction.claims import claim_result, verdict
from tvbo.analysis.reproduction.spec_yaml import load_spec


def test_claim_verdict_from_runs(built) -> None:
    # bolt: average regret 0.1 + 0.01 seed -> mean 0.11, se 0.01/sqrt(3); gp-ucb mean 1.01: win
    assert built.claims["bolt beats gp-ucb"] == "reproduced"
    assert "| shekel | bolt | 0.110 ± 0.006 | 3 | step 12 |" in built.text
    assert "| shekel | gp-ucb | 1.01 ± 0.01 | 3 | step 12 |" in built.text


def test_claim_on_a_smaller_grid_names_the_absent_benchmarks(fake: Path) -> None:
    import dataclasses


    spec = load_spec(fake / "config" / "reproduction.yaml")
    claim = dataclasses.replace(spec.claims[0], benchmarks=("shekel", "eggholder"),
                                relation="not_worse")
    ds = xr.load_dataset(fake / "results" / "claims_fake" / "campaign.nc")
    values, comparisons, result = claim_result(ds, claim)
    assert result == "reproduced (absent: eggholder)"
    assert list(comparisons["outcome"]) == ["win"]
    with pytest.raises(LookupError, match="r-gp-ucb absent"):
        claim_result(ds, dataclasses.replace(claim, baselines=("r-gp-ucb",)))


def test_a_claim_on_a_grid_with_a_hole_names_it(tmp_path: Path) -> None:
    import dataclasses

    from tests.analysis.reproduction.fakes import _campaign, _run, _spec

    runs = [_run(b, a, seed, 0.0, regret=1.0 + seed) for b, a in
            (("shekel", "bolt"), ("shekel", "gp-ucb"), ("eggholder", "bolt"))
            for seed in (0, 1)]
    path = _campaign(tmp_path / "holes" / "campaign.nc", runs)
    claim = dataclasses.replace(load_spec(_spec(tmp_path)).claims[0],
                                benchmarks=("shekel", "eggholder"))
    with xr.open_dataset(path) as ds, pytest.raises(LookupError,
                                                    match="no run of gp-ucb on eggholder"):
        claim_result(ds, claim)


def test_verdict_rule() -> None:
    assert verdict(3, 3) == "reproduced"
    assert verdict(1, 3) == "partly"
    assert verdict(0, 3) == "not reproduced"
    with pytest.raises(ValueError, match="at least one comparison"):
        verdict(0, 0)


# -- a claim that fails, explained by predictions (claim entries of the spec) ---------------------
def _failing_claim(fake: Path, tmp_path: Path, **entry):
    """The fake claim turned round (gp-ucb claimed better than bolt: a loss) and one claim entry.

    Cumulative regret of the 8 post-warm-up queries: bolt 8 (0.1 + 0.01 seed) = 0.80, 0.88, 0.96;
    gp-ucb 8 (1.0 + 0.01 seed) = 8.00, 8.08, 8.16."""
    from tests.analysis.reproduction.fakes import _spec
    from tvbo.analysis.reproduction.report import build_report

    base = {"claim": "bolt beats gp-ucb", "benchmarks": ["shekel"],
            "algorithms": ["gp-ucb", "bolt"], "explains": ["shekel: bolt < gp-ucb"],
            "predictions": [{"quantity": "cumulative_regret", "order": "bolt < gp-ucb"}],
            "cause": "a claim's cause"}
    edits = {"claims.0.algorithms": ["gp-ucb"], "claims.0.baselines": ["bolt"],
             "explanations": [{**base, **entry}]}
    return build_report(_spec(tmp_path, **edits), fake / "results")


def _line(text: str) -> str:
    return next(x for x in text.splitlines() if x.startswith("- shekel, gp-ucb vs bolt"))


def test_a_claim_entry_whose_predictions_hold_explains(fake: Path, tmp_path: Path) -> None:
    report = _failing_claim(fake, tmp_path)
    assert report.claims["bolt beats gp-ucb"] == "not reproduced"
    assert _line(report.text) == "- shekel, gp-ucb vs bolt (loss): explained (1)"
    assert ("Comparisons that do not succeed: 1: 1 explained, 0 contradicted, 0 unexplained."
            in report.text)
    assert "seeds 0-2, shekel: holds: bolt 0.880 ± 0.046 (n = 3) < gp-ucb 8.08 ± 0.05" \
        in report.text
    assert "the spec gives this campaign no held-out replicate" in report.text


def test_a_claim_entry_can_be_contradicted_or_unexplained(fake: Path, tmp_path: Path) -> None:
    failing = _failing_claim(fake, tmp_path, predictions=[
        {"quantity": "cumulative_regret", "order": "gp-ucb < bolt"}])
    assert _line(failing.text).endswith("**contradicted** (1)")
    wrong_way = _failing_claim(fake, tmp_path, explains=["gp-ucb < bolt"])
    assert _line(wrong_way.text).endswith("**contradicted** (1)")
    missing = _failing_claim(fake, tmp_path, predictions=[
        {"quantity": "true_prior_share", "order": "gp-ucb < bolt"}])
    assert _line(missing.text).endswith("**unexplained** (evidence missing, 1)")
    assert "state_selected_prior not recorded in these runs" in missing.text


def test_a_failing_claim_without_an_entry_is_unexplained(fake: Path, tmp_path: Path) -> None:
    from tests.analysis.reproduction.fakes import _spec
    from tvbo.analysis.reproduction.report import build_report

    report = build_report(_spec(tmp_path, **{"claims.0.algorithms": ["gp-ucb"],
                                             "claims.0.baselines": ["bolt"]}), fake / "results")
    assert _line(report.text).endswith("**unexplained** (no entry names this comparison)")


@pytest.mark.parametrize(("entry", "fragments"), [
    ({"claim": "no such claim"}, ["explanations[0].claim", "'no such claim'",
                                  "valid claim ids: bolt beats gp-ucb, never run"]),
    ({"explains": ["gp-ucb < r-gp-ucb"], "algorithms": ["gp-ucb", "r-gp-ucb"]},
     ["explanations[0].algorithms", "'r-gp-ucb'"]),
    ({"predictions": [{"quantity": "vibes", "order": "bolt < gp-ucb"}]},
     ["explanations[0].predictions[0].quantity", "'vibes'", "face_share"]),
    ({"predictions": [{"quantity": "face_share", "bound": "bolt > lots"}]},
     ["explanations[0].predictions[0].bound", "'lots'"]),
    ({"table": "bolt-metronome"}, ["explanations[0]", "exactly one of 'table'"]),
    ({"explains": []}, ["explanations[0].explains", "names the comparisons"]),
])
def test_bad_claim_entries_name_the_entry(tmp_path: Path, entry, fragments) -> None:
    from tests.analysis.reproduction.fakes import _spec

    base = {"claim": "bolt beats gp-ucb", "benchmarks": ["shekel"],
            "algorithms": ["gp-ucb", "bolt"], "explains": ["shekel: bolt < gp-ucb"],
            "predictions": [{"quantity": "cumulative_regret", "order": "bolt < gp-ucb"}],
            "cause": "a claim's cause"}
    path = _spec(tmp_path, explanations=[{**base, **entry}])
    with pytest.raises(ValueError) as err:
        load_spec(path)
    message = str(err.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message
