"""The reproduction report's fit-health subsection (tvbo/analysis/reproduction/fit_section.py
``fit_health_lines``, tvbo/analysis/fit_health.py ``horizon_table``, the spec's ``fit_causes``).

A tiny hand-built campaign (tests/fake_runs.py runs with fit records added by the recorder):
shekel (horizon 60 s) and eggholder (horizon 40 s), three seeds, 12 observations per run.

* bolt fits l_T in seconds, four fits per run; on shekel seed 1 three fits are 100 s (> 60 s),
  every other fit is 5 s: 3 of 24 fits beyond the horizon = 12.5 % > 10 %.
* r-gp-ucb fits eps on the iteration index (l_T in steps, compared with the run's 12
  observations); on shekel seeds 0 and 1 two fits each are 30 steps (> 12 steps, although below
  both horizons in seconds), the others 3 steps: 4 of 24 = 16.7 % > 10 %. Its runs end with
  ``state_resets`` = 2.
* gp-ucb fits no temporal lengthscale.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from tests.analysis.reproduction.fakes import (
    _campaign,
    _run,
    _spec,
)
from tests.fake_runs import with_fit_records
from tvbo.analysis.fit_health import HORIZON_SHARE_LIMIT, horizon_table
from tvbo.analysis.reproduction.report import build_report
from tvbo.analysis.reproduction.spec_yaml import load_spec

SEEDS = (0, 1, 2)


def _bolt_fit(l_t: float) -> dict:
    return {"source": "surrogate:gp", "mode": "lbfgs", "time_unit": "s",
            "fitted": "signal_var,lengthscale_space,lengthscale_time,noise_var",
            "signal_var": 1.0, "lengthscale_space": 0.2, "lengthscale_time": l_t,
            "noise_var": 0.01}


def _eps_fit(l_t: float) -> dict:
    return {"source": "dataset:periodic-reset:eps", "mode": "lbfgs", "time_unit": "step",
            "fitted": "signal_var,lengthscale_space,lengthscale_time,noise_var",
            "signal_var": 1.0, "lengthscale_space": 0.2, "lengthscale_time": l_t,
            "noise_var": 0.01, "epsilon": float(-np.expm1(-2.0 / l_t))}


def _spatial_fit() -> dict:
    return {"source": "surrogate:gp", "mode": "lbfgs", "time_unit": "",
            "fitted": "signal_var,lengthscale_space,noise_var", "signal_var": 1.0,
            "lengthscale_space": 0.2, "noise_var": 0.01}


def _fits(benchmark: str, algorithm: str, seed: int) -> list[dict]:
    if algorithm == "bolt":
        long = benchmark == "shekel" and seed == 1
        return [_bolt_fit(5.0)] + [_bolt_fit(100.0 if long else 5.0) for _ in range(3)]
    if algorithm == "r-gp-ucb":
        long = benchmark == "shekel" and seed in (0, 1)
        return [_eps_fit(3.0), *[_eps_fit(30.0 if long else 3.0)] * 2, _eps_fit(3.0)]
    return [_spatial_fit() for _ in range(4)]


def _fit_campaign(results: Path) -> Path:
    runs = []
    for benchmark in ("shekel", "eggholder"):
        for algorithm in ("gp-ucb", "r-gp-ucb", "bolt"):
            for seed in SEEDS:
                run = _run(benchmark, algorithm, seed, 1.0 + seed)
                if algorithm == "r-gp-ucb":
                    run["state_resets"] = xr.zeros_like(run["state_lengthscale"]) + 2.0
                runs.append(with_fit_records(run, _fits(benchmark, algorithm, seed)))
    return _campaign(results / "bolt_fake" / "campaign.nc", runs)


CAUSE = {"table": "bolt-metronome", "algorithms": ["r-gp-ucb"], "paper_setting": True,
         "source": "a paper's appendix", "quote": "eps is fitted", "cause": "an eps cause"}


@pytest.fixture(scope="module")
def fit_fake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("fit_health_report")
    _fit_campaign(tmp_path / "results")
    return tmp_path


def test_horizon_table_compares_each_unit_with_its_horizon(fit_fake: Path) -> None:
    ds = xr.load_dataset(fit_fake / "results" / "bolt_fake" / "campaign.nc")
    table = horizon_table(ds).set_index("algorithm")
    bolt, reset, gp = table.loc["bolt"], table.loc["r-gp-ucb"], table.loc["gp-ucb"]
    assert bolt["lT_fits"] == 24 and bolt["share_fits_lT_above_horizon"] == pytest.approx(3 / 24)
    # 30 steps > 12 observations although 30 < 40 s and 60 s: the step unit is used
    assert reset["lT_fits"] == 24
    assert reset["share_fits_lT_above_horizon"] == pytest.approx(4 / 24)
    assert reset["runs_lT_above_horizon"] == 2 and reset["runs_final_lT_above_horizon"] == 0
    assert bolt["runs_lT_above_horizon"] == 1 and bolt["runs_final_lT_above_horizon"] == 1
    assert reset["resets_per_run"] == 2.0 and np.isnan(bolt["resets_per_run"])
    assert gp["lT_fits"] == 0 and np.isnan(gp["share_fits_lT_above_horizon"])
    assert list(table["above_limit"]) == [True, False, True]  # bolt, gp-ucb, r-gp-ucb
    assert HORIZON_SHARE_LIMIT == 0.10
    per = horizon_table(ds, by=("benchmark", "algorithm")).set_index(["benchmark", "algorithm"])
    assert per.loc[("shekel", "bolt"), "share_fits_lT_above_horizon"] == pytest.approx(3 / 12)
    assert per.loc[("eggholder", "bolt"), "share_fits_lT_above_horizon"] == 0.0
    with pytest.raises(ValueError, match="by must name 'algorithm'"):
        horizon_table(ds, by=("benchmark",))


def test_report_marks_the_limit_attributes_and_reports_unexplained(fit_fake: Path) -> None:
    spec = _spec(fit_fake, fit_causes=[CAUSE])
    report = build_report(spec, fit_fake / "results")
    result = report.tables["bolt-metronome"]
    assert result.fit_paper_setting == ["r-gp-ucb"]
    assert result.fit_unexplained == ["bolt"] and result.fit_not_paper_setting == []
    text = report.text
    assert "### Fit health" in text
    assert "| bolt | lbfgs | 3 | 12 | 12 | 12 % **> 10 %** |" not in text  # pooled: 24 fits
    assert "| bolt | lbfgs | 6 | 24 | 24 | 12 % **> 10 %** | 0 % | 1 / 1 |  |  |" in text
    assert "| r-gp-ucb | lbfgs | 6 | 24 | 24 | 17 % **> 10 %** | 0 % | 2 / 0 | 2 |  |" in text
    assert "| gp-ucb | lbfgs | 6 | 24 | 0 | no l_T fit | 0 % | 0 / 0 |  |  |" in text
    assert "| algorithm | eggholder | shekel |" in text
    assert "| bolt | 0 % | 25 % |" in text and "| r-gp-ucb | 0 % | 33 % |" in text
    assert "- bolt (12 %): **unexplained**" in text
    assert "- r-gp-ucb (17 %): produced by its paper's own setting (1)" in text
    assert "1. an eps cause (its paper's own setting; source: a paper's appendix)" in text
    summary = next(x for x in text.splitlines() if x.startswith("Summary:"))
    assert ("fit health: 2 of 3 algorithms with l_T beyond the horizon in > 10 % of their fits, "
            "1 of them attributed to their paper's own setting, 0 to a setting that is not "
            "their paper's, 1 unexplained") in summary


def test_a_cause_that_is_not_the_papers_setting_says_so(fit_fake: Path) -> None:
    tvbo_cause = {**CAUSE, "algorithms": ["bolt"], "paper_setting": False, "cause": "tvbo's fit"}
    report = build_report(_spec(fit_fake, fit_causes=[CAUSE, tvbo_cause]), fit_fake / "results")
    result = report.tables["bolt-metronome"]
    assert result.fit_not_paper_setting == ["bolt"] and result.fit_unexplained == []
    assert "- bolt (12 %): **not its paper's setting**" in report.text
    assert "(not its paper's setting; source: a paper's appendix)" in report.text


def test_without_fits_the_section_says_so(tmp_path: Path) -> None:
    from tests.analysis.reproduction.fakes import _table_campaign

    _table_campaign(tmp_path / "results")
    report = build_report(_spec(tmp_path), tmp_path / "results")
    assert "No fit of a temporal lengthscale is recorded in these runs." in report.text
    assert report.tables["bolt-metronome"].fit_exceeding == []


@pytest.mark.parametrize(
    ("edit", "fragments"),
    [
        ({**CAUSE, "algorithms": ["nope"]},
         ["fit_causes[0].algorithms", "'nope'", "valid algorithms:", "r-gp-ucb"]),
        ({**CAUSE, "paper_setting": "yes"}, ["fit_causes[0].paper_setting", "true or false"]),
        ({**CAUSE, "table": "wdbo"}, ["fit_causes[0].table", "'wdbo'", "bolt-metronome"]),
        ({k: v for k, v in CAUSE.items() if k != "source"}, ["fit_causes[0]", "'source'"]),
        # paper_setting only with a quoted source; no numerals in a cause
        ({k: v for k, v in CAUSE.items() if k != "quote"},
         ["fit_causes[0].quote", "paper_setting: true needs the quoted words"]),
        ({**CAUSE, "cause": "l_T beyond 600 s"}, ["fit_causes[0].cause", "no numerals", "600"]),
    ],
)
def test_bad_fit_cause_lists_valid_names(tmp_path: Path, edit, fragments) -> None:
    with pytest.raises(ValueError) as err:
        load_spec(_spec(tmp_path, fit_causes=[edit]))
    message = str(err.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message
