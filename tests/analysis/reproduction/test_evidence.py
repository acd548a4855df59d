"""Evidence lines measured from the run files (tvbo/analysis/reproduction/evidence.py)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from tests.analysis.reproduction.fakes import (
    _campaign,
    _run,
    _spec,
    _table_campaign,
)
from tvbo.analysis.reproduction.campaigns import Campaigns
from tvbo.analysis.reproduction.evidence import evaluate_evidence
from tvbo.analysis.reproduction.spec import Evidence
from tvbo.analysis.reproduction.spec_yaml import load_spec


def test_fit_health_evidence_reads_fit_variables(tmp_path: Path) -> None:

    results = tmp_path / "results"
    path = _table_campaign(results)

    ds = xr.load_dataset(path)
    nan = math.nan
    # bolt on shekel (horizon 60 s), seeds 0..2, four fits each (seed 1 made only two)
    lengthscale = [[1, 2, 3, 100], [1, 2, nan, nan], [70, 80, 90, 50]]  # finals 100, 2, 50
    upper = [[0, 0, 0, 1], [0, 0, nan, nan], [1, 1, 1, 0]]
    lower = [[1, 0, 0, 0], [0, 0, nan, nan], [0, 0, 0, 0]]
    dims = ("benchmark", "algorithm", "seed", "speed", "fit")
    shape = (ds.sizes["benchmark"], ds.sizes["algorithm"], 3, 1, 4)
    iteration = [[0, 1, 2, 3], [0, 1, nan, nan], [0, 1, 2, 3]]
    noise = [[0.1, 0.1, 0.1, 0.1], [0.1, 0.1, nan, nan], [0.1, 0.1, 0.1, 0.1]]
    b = list(ds["benchmark"].values).index("shekel")
    a = list(ds["algorithm"].values).index("bolt")
    for name, values in (("fit_lengthscale_time", lengthscale),
                         ("fit_lengthscale_time_at_upper", upper),
                         ("fit_noise_var_at_lower", lower),
                         ("fit_iteration", iteration),
                         ("fit_noise_var", noise)):
        data = np.full(shape, nan)
        data[b, a, :, 0, :] = values
        ds[name] = (dims, data)
    # the string fields of a fit record, as the recorder writes them ("" where no fit)
    for name, text in (("fit_fitted", "noise_var,lengthscale_time"),
                       ("fit_source", "surrogate:gp"), ("fit_time_unit", "s")):
        data = np.full(shape, "", dtype=object)
        data[b, a, :, 0, :] = [[text if math.isfinite(v) else "" for v in row]
                               for row in iteration]
        ds[name] = (dims, data)
    ds.to_netcdf(path)
    campaigns = Campaigns(load_spec(_spec(tmp_path)), results)
    lines = evaluate_evidence(Evidence("fit_health", "bolt_fake", {}), campaigns,
                              ["shekel"], ["bolt"])
    # fits with a value: 4 + 2 + 4 = 10; at a bound: seed 0 fits 0 and 3, seed 2 fits 0-2 -> 5
    # (the shares come from tvbo.analysis.fit_health.fit_health_table: one definition)
    assert lines == [
        "fit_health (bolt_fake): bolt: 5 of 10 hyperparameter fits (50 %) with a "
        "hyperparameter at a bound (lengthscale_time at upper 40 %, noise_var at lower 10 %); "
        "1 of 3 runs end with l_T above the horizon"
    ]


def test_setting_evidence_puts_the_reference_campaign_beside_the_changed_setting(
    tmp_path: Path,
) -> None:
    """``setting``: the same algorithms in a campaign that changes one open setting, each cell
    beside the reference campaign's, with the order of the algorithms under both."""

    results = tmp_path / "results"
    _table_campaign(results)  # reference: shekel gp-ucb 2.0 < r-gp-ucb 2.5 < bolt 3.0
    # se = 0.03 / sqrt(3) = 0.017 -> "0.02"
    # the changed setting reverses bolt and gp-ucb on shekel: bolt 1.0, gp-ucb 4.0
    _campaign(results / "claims_fake" / "campaign.nc",
              [_run("shekel", a, seed, m + (seed - 1) * 0.03)
               for a, m in (("gp-ucb", 4.0), ("bolt", 1.0)) for seed in (0, 1, 2)])
    campaigns = Campaigns(load_spec(_spec(tmp_path)), results)
    ev = Evidence("setting", "claims_fake", {"reference": "bolt_fake", "setting": "time in [0, 1]"})
    lines = evaluate_evidence(ev, campaigns, ["shekel"], ["gp-ucb", "bolt"])
    assert lines[0] == (
        "setting (claims_fake): shekel, average regret with time in [0, 1]: gp-ucb 4.00 ± 0.02 "
        "(n = 3) [bolt_fake: 2.00 ± 0.02 (n = 3)]; bolt 1.00 ± 0.02 (n = 3) "
        "[bolt_fake: 3.00 ± 0.02 (n = 3)]"
    )
    assert lines[1] == "setting (claims_fake): shekel, order with time in [0, 1]: bolt < gp-ucb"
    assert lines[2] == "setting (claims_fake): shekel, order with bolt_fake: gp-ucb < bolt"


def test_setting_evidence_needs_a_known_reference_campaign(tmp_path: Path) -> None:
    edit = {"explanations.0.evidence": [{"kind": "setting", "campaign": "bolt_fake",
                                         "reference": "nope"}]}
    with pytest.raises(ValueError, match="nope.*valid.*bolt_fake"):
        load_spec(_spec(tmp_path, **edit))
