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


def test_verdict_rule() -> None:
    assert verdict(3, 3) == "reproduced"
    assert verdict(1, 3) == "partly"
    assert verdict(0, 3) == "not reproduced"
    with pytest.raises(ValueError, match="at least one comparison"):
        verdict(0, 0)
