"""Tests of the reproduction report (tvbo/analysis/reproduction.py, tvbo reproduce).

Campaigns are hand-built from tests/fake_runs.py with chosen per-seed values, so every expected
number (ranks, pairwise counts, ratios, verdicts) is worked out by hand in the comments below,
not taken from the code under test. The published numbers are BOLT [B] Table 2's:
Shekel GP-UCB 2.57, R-GP-UCB 2.58, BOLT 2.51; Eggholder GP-UCB 517, R-GP-UCB 298, BOLT 262.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.fake_runs import make_run
from tvbo.analysis.reproduction import (
    build_report,
    claim_result,
    ordering,
    speed_sensitivity,
    verdict,
)
from tvbo.analysis.reproduction_spec import load_spec
from tvbo.cli import main
from tvbo.results.campaign import merge_runs, write_campaign
from tvbo.results.io import write_run

REPO = Path(__file__).resolve().parents[2]
SEEDS_DIR = Path("/work/shared/seeds")

# tvbo's per-benchmark means; each algorithm gets seeds (m - d, m, m + d): mean m, se d / sqrt(3)
TVBO = {
    ("shekel", "gp-ucb"): (2.0, 0.03),
    ("shekel", "r-gp-ucb"): (2.5, 0.03),
    ("shekel", "bolt"): (3.0, 0.03),
    ("eggholder", "gp-ucb"): (500.0, 3.0),
    ("eggholder", "r-gp-ucb"): (310.0, 30.0),
    ("eggholder", "bolt"): (300.0, 30.0),
}


def _run(benchmark: str, algorithm: str, seed: int, average: float, *, regret=None,
         speed: float = 1.0):
    """A fake run renamed to ``algorithm`` whose summaries (and regret) are set by hand."""
    ds = make_run(benchmark, "bolt" if algorithm == "bolt" else "gp_ucb", seed, speed,
                  n_iterations=12)
    ds = ds.assign_coords(algorithm=[algorithm])
    ds["average_regret"] = (ds["average_regret"].dims, np.full(ds["average_regret"].shape,
                                                                average))
    ds["time_integrated_regret"] = (ds["average_regret"].dims,
                                    np.full(ds["average_regret"].shape, 10 * average))
    if regret is not None:
        ds["regret"] = (ds["regret"].dims, np.broadcast_to(regret, ds["regret"].shape).copy())
    return ds


def _campaign(path: Path, runs) -> Path:
    files = []
    for i, ds in enumerate(runs):
        files.append(write_run(ds, path.parent / "runs" / f"{i}.nc"))
    return write_campaign(merge_runs(files), path)


def _table_campaign(results: Path, name: str = "bolt_fake", seeds=(0, 1, 2)) -> Path:
    runs = [
        _run(b, a, seed, m + (i - 1) * d)
        for (b, a), (m, d) in TVBO.items()
        for i, seed in enumerate(seeds)
    ]
    return _campaign(results / name / "campaign.nc", runs)


def _claim_campaign(results: Path) -> Path:
    # claimed bolt: regret 0.1 + 0.01 seed at every query; gp-ucb 1.0 + 0.01 seed
    runs = [
        _run("shekel", a, seed, 0.0, regret=base + 0.01 * seed)
        for a, base in (("bolt", 0.1), ("gp-ucb", 1.0))
        for seed in (0, 1, 2)
    ]
    return _campaign(results / "claims_fake" / "campaign.nc", runs)


def _spec(tmp_path: Path, **edits) -> Path:
    """A spec in tmp_path/config with two fake campaigns and one never run (``missing``)."""
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    grid = {"benchmarks": ["shekel", "eggholder"], "algorithms": ["gp-ucb", "r-gp-ucb", "bolt"]}
    (config / "bolt_fake.yaml").write_text(yaml.safe_dump({"campaign": "bolt_fake", **grid}))
    (config / "claims_fake.yaml").write_text(yaml.safe_dump({"campaign": "claims_fake", **grid}))
    (config / "missing.yaml").write_text(yaml.safe_dump({"campaign": "never_run", **grid}))
    spec = {
        "campaigns": {
            "bolt_fake": {"config": "bolt_fake.yaml", "replicate": "heldout"},
            "heldout": {"config": "bolt_fake.yaml",
                        "overrides": {"campaign": "bolt_fake_heldout", "seeds": [3, 4, 5]}},
            "claims_fake": {"config": "claims_fake.yaml"},
            "missing": {"config": "missing.yaml", "overrides": {"cost_table": "icml"}},
        },
        "tables": [
            {"paper": "bolt-metronome", "campaign": "bolt_fake",
             "head_to_head": ["bolt", "gp-ucb"]},
            {"paper": "bolt-icml", "campaign": "missing"},
        ],
        "sensitivity": [{"paper": "bolt-metronome", "campaign": "bolt_fake"}],
        "explanations": [
            {
                "table": "bolt-metronome",
                "benchmarks": ["shekel"],
                "algorithms": ["r-gp-ucb", "bolt"],
                "cause": "a test cause",
                "explains": ["r-gp-ucb < bolt"],
                "predictions": [{"quantity": "time_integrated_regret",
                                 "order": "r-gp-ucb < bolt"}],
                "evidence": [
                    {"kind": "variant", "campaign": "bolt_fake", "algorithm_a": "r-gp-ucb",
                     "algorithm_b": "bolt"},
                    {"kind": "fit_health", "campaign": "bolt_fake"},
                    {"kind": "state", "campaign": "missing", "variable": "state_n_star"},
                ],
            }
        ],
        "claims": [
            {
                "id": "bolt beats gp-ucb", "paper": "a paper", "source": "x.txt",
                "quote": "BOLT is better.", "campaign": "claims_fake", "benchmarks": ["shekel"],
                "algorithms": ["bolt"], "baselines": ["gp-ucb"],
                "measure": {"curve": "average", "at": "final"}, "relation": "better",
                "reason": "a reason",
            },
            {
                "id": "never run", "paper": "a paper", "source": "x.txt", "quote": "q",
                "campaign": "missing", "benchmarks": ["shekel"], "algorithms": ["bolt"],
                "baselines": ["gp-ucb"], "measure": {"curve": "simple", "at": "final"},
                "relation": "not_worse", "reason": "r",
            },
        ],
    }
    for path, value in edits.items():
        target = spec
        *head, last = path.split(".")
        for key in head:
            target = target[int(key)] if isinstance(target, list) else target[key]
        target[last] = value
    path = config / "reproduction.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def fake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the spec (config/) and the two fake campaigns (results/), built once."""
    tmp_path = tmp_path_factory.mktemp("reproduction")
    _table_campaign(tmp_path / "results")
    _table_campaign(tmp_path / "results", "bolt_fake_heldout", (3, 4, 5))
    _claim_campaign(tmp_path / "results")
    _spec(tmp_path)
    return tmp_path


@pytest.fixture(scope="module")
def built(fake: Path):
    """The report of the fake campaigns, built once for the tests that read it."""
    return build_report(fake / "config" / "reproduction.yaml", fake / "results")


def test_cells_ranks_and_ratios(built) -> None:
    table = built.tables["bolt-metronome"].comparison.set_index(["benchmark", "algorithm"])
    # Shekel: paper BOLT 2.51 < GP-UCB 2.57 < R-GP-UCB 2.58; tvbo 2.0 < 2.5 < 3.0 (gp, r, bolt)
    assert table.loc[("shekel", "bolt"), "paper_rank"] == 1
    assert table.loc[("shekel", "bolt"), "tvbo_rank"] == 3
    assert table.loc[("shekel", "gp-ucb"), "tvbo_rank"] == 1
    assert table.loc[("shekel", "bolt"), "ratio"] == pytest.approx(3.0 / 2.51)
    assert table.loc[("eggholder", "gp-ucb"), "ratio"] == pytest.approx(500.0 / 517.0)
    assert table.loc[("shekel", "bolt"), "tvbo_se"] == pytest.approx(0.03 / math.sqrt(3))
    assert "| SHEKEL (4) (`shekel`) | bolt | 2.51 ± 0.02 | 3.00 ± 0.02 (n = 3) | 1.20 | " \
           "**1 → 3** | 30.0 ± 0.2 (rank 3) |" in built.text


def test_pairwise_agreement_counts(built) -> None:
    counts = built.tables["bolt-metronome"].counts
    # Shekel, paper 2.57 ± 0.05 / 2.58 ± 0.02 / 2.51 ± 0.02 (gp, r, bolt): the paper's own
    # intervals overlap for (gp, r) (0.01 <= 0.07) and (gp, bolt) (0.06 <= 0.07): paper ties,
    # although tvbo orders both; (r, bolt): paper bolt < r (0.07 > 0.04), tvbo r < bolt: disagree.
    assert counts.loc["shekel"].to_dict() == {"agree": 0, "tie": 2, "disagree": 1,
                                              "orderings": 3, "paper tie": 2,
                                              "paper without s.e.": 0}
    # Eggholder: (gp, r), (gp, bolt) agree; (r, bolt): |310 - 300| = 10 <= 2 x 30/sqrt(3): a
    # tvbo tie (the paper's 298 ± 4.3 vs 262 ± 7.1 is strict)
    assert counts.loc["eggholder"].to_dict() == {"agree": 2, "tie": 1, "disagree": 0,
                                                 "orderings": 3, "paper tie": 0,
                                                 "paper without s.e.": 0}
    assert counts.loc["Overall"].to_dict() == {"agree": 2, "tie": 3, "disagree": 1,
                                               "orderings": 6, "paper tie": 2,
                                               "paper without s.e.": 0}
    assert "| Overall | 2 | 3 | 2 | 1 | 6 |" in built.text
    pairs = built.tables["bolt-metronome"].pairs
    tied_by = {(r.benchmark, r.a, r.b): r.tied_by for r in pairs.itertuples()}
    assert tied_by[("shekel", "gp-ucb", "r-gp-ucb")] == "paper"
    assert tied_by[("eggholder", "r-gp-ucb", "bolt")] == "tvbo"


def test_head_to_head_counts_both_sides(built) -> None:
    table = built.tables["bolt-metronome"].head_to_head.set_index("benchmark")
    # Shekel: paper bolt 2.51 ± 0.02 vs gp-ucb 2.57 ± 0.05 overlap (0.06 <= 0.07): tie;
    # tvbo bolt 3.0 vs gp-ucb 2.0 (s.e. 0.017 each): worse. Eggholder: paper 262 ± 7.1 vs
    # 517 ± 16.4 and tvbo 300 ± 17 vs 500 ± 1.7: better on both sides.
    assert table.loc["shekel"].to_dict() == {"paper": "tie", "tvbo": "worse",
                                             "paper_lower": True, "tvbo_lower": False}
    assert table.loc["eggholder"].to_dict() == {"paper": "better", "tvbo": "better",
                                                "paper_lower": True, "tvbo_lower": True}
    assert ("Head to head, bolt vs gp-ucb (better: a lower mean whose interval mean ± 1 s.e. "
            "does not overlap the other's): tvbo better beyond the s.e. on 1 of 2 benchmarks "
            "(tie 0, worse 1; lower mean on 1); paper better beyond the s.e. on 1 of 2 "
            "benchmarks (tie 1, worse 0; lower mean on 2).") in built.text


def test_sensitivity_section_of_a_one_speed_campaign(built) -> None:
    result = built.sensitivity["bolt-metronome"]
    # one speed: a strict order "holds", the (r-gp-ucb, bolt) tie on Eggholder stays a tie
    assert result["status"].value_counts().to_dict() == {"holds": 5, "tie": 1}
    # the agreement with the paper at speed 1 is the table's: 2 agree, 3 ties, 1 disagrees
    assert "| 1 | 2 | 3 | 1 | 6 |" in built.text


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


def test_missing_campaign_is_not_yet_run_with_its_command(built) -> None:
    assert built.tables["bolt-icml"].comparison is None
    assert ("not yet run: campaign `never_run` (" in built.text
            and "run `snakemake --cores N results/never_run/campaign.nc` (config: "
                "`config/missing.yaml with cost_table: icml`)" in built.text)
    assert built.claims["never run"] == "not yet run"


def test_claim_verdict_from_runs(built) -> None:
    # bolt: average regret 0.1 + 0.01 seed -> mean 0.11, se 0.01/sqrt(3); gp-ucb mean 1.01: win
    assert built.claims["bolt beats gp-ucb"] == "reproduced"
    assert "| shekel | bolt | 0.110 ± 0.006 | 3 | step 12 |" in built.text
    assert "| shekel | gp-ucb | 1.01 ± 0.01 | 3 | step 12 |" in built.text


def test_claim_on_a_smaller_grid_names_the_absent_benchmarks(fake: Path) -> None:
    import dataclasses

    import xarray as xr

    spec = load_spec(fake / "config" / "reproduction.yaml")
    claim = dataclasses.replace(spec.claims[0], benchmarks=("shekel", "eggholder"),
                                relation="not_worse")
    ds = xr.load_dataset(fake / "results" / "claims_fake" / "campaign.nc")
    values, comparisons, result = claim_result(ds, claim)
    assert result == "reproduced (absent: eggholder)"
    assert list(comparisons["outcome"]) == ["win"]
    with pytest.raises(LookupError, match="r-gp-ucb absent"):
        claim_result(ds, dataclasses.replace(claim, baselines=("r-gp-ucb",)))


def test_spec_curves_are_the_paper_figures_curves() -> None:
    from tvbo.analysis.paper_figures import CURVES
    from tvbo.analysis.reproduction_spec import CURVE_NAMES

    assert CURVE_NAMES == tuple(CURVES)


def test_verdict_rule() -> None:
    assert verdict(3, 3) == "reproduced"
    assert verdict(1, 3) == "partly"
    assert verdict(0, 3) == "not reproduced"
    with pytest.raises(ValueError, match="at least one comparison"):
        verdict(0, 0)


def test_ordering_tie_rule() -> None:
    assert ordering(1.0, 0.1, 1.2, 0.1) == 0  # |0.2| <= 0.2: intervals touch -> tie
    assert ordering(1.0, 0.1, 1.25, 0.1) == -1
    assert ordering(2.0, math.nan, 1.0, math.nan) == 1  # no s.e.: only equal means tie


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


@pytest.mark.parametrize(
    ("edit", "fragments"),
    [
        ({"explanations.0.algorithms": ["gp-ucb", "nope"]},
         ["explanations[0].algorithms", "'nope'", "valid algorithms:", "gp-ucb"]),
        ({"explanations.0.benchmarks": ["rastrigin-x"]},
         ["explanations[0].benchmarks", "'rastrigin-x'", "valid benchmarks:", "shekel"]),
        ({"explanations.0.evidence": [{"kind": "vibes", "campaign": "bolt_fake"}]},
         ["explanations[0].evidence[0].kind", "'vibes'", "variant, fit_health, metric, state"]),
        ({"explanations.0.evidence": [{"kind": "metric", "campaign": "elsewhere"}]},
         ["'elsewhere'", "valid campaigns: bolt_fake, heldout, claims_fake, missing"]),
        # predictions naming an unknown quantity, algorithm or benchmark; a direction on a pair
        # the entry does not cover; a broad entry that explains; numerals in a cause
        ({"explanations.0.predictions": [{"quantity": "vibes", "order": "bolt < gp-ucb"}]},
         ["explanations[0].predictions[0].quantity", "'vibes'", "valid quantitys:", "resets"]),
        ({"explanations.0.predictions": [{"quantity": "resets", "order": "bolt < nope"}]},
         ["explanations[0].predictions[0].order", "'nope'", "valid algorithms:"]),
        ({"explanations.0.predictions": [{"quantity": "resets", "order": "bolt < gp-ucb",
                                          "benchmarks": ["powell"]}]},
         ["explanations[0].predictions[0].benchmarks", "'powell'", "valid benchmarks:"]),
        ({"explanations.0.explains": ["gp-ucb < bolt"]},
         ["explanations[0].explains[0]", "does not cover", "'gp-ucb'"]),
        ({"explanations.0.explains": ["eggholder: r-gp-ucb < bolt"]},
         ["explanations[0].explains[0]", "does not cover", "'eggholder'"]),
        ({"explanations.0.benchmarks": "all"},
         ["explanations[0].explains", "context only"]),
        ({"explanations.0.cause": "slower by a factor 10"},
         ["explanations[0].cause", "no numerals", "10"]),
        ({"explanations.0.predictions": []},
         ["explanations[0].predictions", "at least one measured quantity"]),
        ({"claims.0.relation": "much better"}, ["claims[0].relation", "better, not_worse"]),
        ({"tables.0.paper": "bolt-2025"}, ["tables[0].paper", "bolt-metronome, bolt-icml, wdbo"]),
        ({"tables.0.head_to_head": ["bolt", "w-dbo-robust"]},
         ["tables[0].head_to_head", "'w-dbo-robust'", "valid algorithm of the tables:", "bolt"]),
        ({"tables.0.head_to_head": ["bolt"]}, ["tables[0].head_to_head", "two different"]),
    ],
)
def test_bad_spec_lists_valid_names(tmp_path: Path, edit, fragments) -> None:
    with pytest.raises(ValueError) as err:
        load_spec(_spec(tmp_path, **edit))
    message = str(err.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message


def test_cli_writes_report_and_rejects_unknown_stand_in(tmp_path: Path, capsys) -> None:
    results = tmp_path / "results"
    campaign = _table_campaign(results)
    spec = _spec(tmp_path)
    out = tmp_path / "docs" / "reproduction.md"
    with pytest.raises(SystemExit) as exit_:
        main(["reproduce", "--spec", str(spec), "--results", str(results), "--out", str(out),
              "--campaign", f"nope={campaign}"])
    assert exit_.value.code == 2 and not out.exists()
    assert "valid keys: bolt_fake, heldout, claims_fake, missing" in capsys.readouterr().err
    assert main(["reproduce", "--spec", str(spec), "--results", str(tmp_path / "none"),
                 "--out", str(out), "--campaign", f"bolt_fake={campaign}"]) == 0
    text = out.read_text()
    assert "**Stand-in campaigns.**" in text and "stands in for `bolt_fake`" in text
    assert "| Overall | 2 | 3 | 2 | 1 | 6 |" in text


def test_repository_spec_is_valid_and_quotes_are_exact() -> None:
    spec = load_spec(REPO / "config" / "reproduction.yaml")
    assert [t.paper for t in spec.tables] == ["bolt-metronome", "bolt-icml", "wdbo"]
    # the sensitivity grid compares the faithful variants under the paper's names, as the table
    # does (without the campaign's paper_aliases W-DBO and BOLT would drop out of it)
    assert spec.sensitivity[0].aliases == {"w-dbo": "w-dbo-paper", "bolt": "bolt-paper"}
    assert spec.sensitivity[0].aliases == spec.tables[0].aliases
    sensitivity = spec.campaigns[spec.sensitivity[0].campaign].merged
    assert sensitivity["speeds"] == [0.7, 1.0, 1.3]
    assert sensitivity["profile"] == "botorch-i9-laptop"
    # bolt_paper's paper-table algorithms at three speeds, nothing else changed; and a valid
    # workflow config
    bolt = spec.campaigns["bolt_paper"].merged  # with the offline-day overlay, as the grid
    rest = ("campaign", "speeds", "algorithms")
    assert {k: v for k, v in sensitivity.items() if k not in rest} == {
        k: v for k, v in bolt.items() if k not in rest
    }
    compared = set(sensitivity["algorithms"])
    assert compared <= set(bolt["algorithms"])
    assert set(bolt["paper_aliases"].values()) <= compared and len(compared) == 7
    from tests.workflow.test_workflow import validate_config

    assert validate_config(dict(sensitivity))["speeds"] == [0.7, 1.0, 1.3]
    # every composed campaign is a valid workflow config too
    for campaign in spec.campaigns.values():
        validate_config(dict(campaign.merged))
    if not SEEDS_DIR.is_dir():
        pytest.skip("the seed papers' texts are not on this machine")
    for claim in spec.claims:
        text = " ".join((SEEDS_DIR / claim.source).read_text(encoding="utf-8").split())
        assert claim.quote in text, claim.id
    # paper_setting only with a quoted source: the quote is in a seed paper or in the shared
    # notes on the reference code
    sources = [*SEEDS_DIR.glob("*.txt"), *(SEEDS_DIR.parent / "spec").glob("*.md")]
    texts = [" ".join(p.read_text(encoding="utf-8").split()) for p in sources]
    for cause in spec.fit_causes:
        if cause.paper_setting:
            assert any(cause.quote in t for t in texts), cause.quote


def test_repository_spec_predictions_and_causes() -> None:
    """No numerals in any cause; BOLT [B]'s entries explain with predictions only (no broad
    entry), and its campaign has the held-out replicate on seeds 10-19."""
    from tvbo.analysis.reproduction_spec import NUMERAL

    spec = load_spec(REPO / "config" / "reproduction.yaml")
    for entry in [*spec.explanations, *spec.fit_causes]:
        assert not NUMERAL.findall(entry.cause), entry.cause
    bolt = [e for e in spec.explanations if e.table == "bolt-metronome"]
    assert bolt and not any(e.broad for e in bolt)
    assert all(e.explains and e.predictions for e in bolt)
    replicate = spec.campaigns[spec.replicate("bolt_paper")].merged
    assert replicate["seeds"] == list(range(10, 20))
    assert {k: v for k, v in replicate.items() if k not in ("seeds", "campaign")} == {
        k: v for k, v in spec.campaigns["bolt_paper"].merged.items()
        if k not in ("seeds", "campaign")}


def test_workflow_plans_the_reproduction_target(tmp_path: Path) -> None:
    from tests.workflow.test_workflow import load_test_config, snakemake

    proc = snakemake(tmp_path, load_test_config(), "-n", "--cores", "1", "reproduction")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert re.search(r"^reproduction\s+1$", proc.stdout, flags=re.M), proc.stdout[-3000:]


def test_fit_health_evidence_reads_fit_variables(tmp_path: Path) -> None:
    from tvbo.analysis.reproduction import Campaigns
    from tvbo.analysis.reproduction_evidence import evaluate_evidence
    from tvbo.analysis.reproduction_spec import Evidence

    results = tmp_path / "results"
    path = _table_campaign(results)
    import xarray as xr

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


@pytest.mark.slow
def test_workflow_builds_every_campaign_and_the_same_bytes_twice(tmp_path: Path) -> None:
    """`snakemake reproduction` with the tiny spec of .test/ from a clean results folder builds
    both of its campaigns (the workflow's own and, by the driver rule, its held-out replicate),
    then the report; forced again, the report's bytes are the same, and name no machine path."""
    from tests.workflow.test_workflow import _tvbo_on_path, load_test_config, snakemake

    _tvbo_on_path(tmp_path)
    config = {**load_test_config(), "reproduction_spec": ".test/reproduction.yaml"}
    proc = snakemake(tmp_path, config, "--cores", "2", "reproduction", timeout=900)
    assert proc.returncode == 0, proc.stderr[-5000:]
    for name in ("test", "test_heldout"):
        assert (tmp_path / "results" / name / "campaign.nc").is_file()
    first = (tmp_path / "docs" / "reproduction.md").read_bytes()
    recorded = yaml.safe_load((tmp_path / "results" / "reproduction_provenance.yaml").read_text())
    assert recorded["command"] == "snakemake --cores N reproduction"
    assert recorded["wall_time_s"] > 0
    proc = snakemake(tmp_path, config, "--cores", "2", "--forcerun", "reproduction",
                     "reproduction", timeout=900)
    assert proc.returncode == 0, proc.stderr[-5000:]
    assert (tmp_path / "docs" / "reproduction.md").read_bytes() == first
    text = first.decode()
    assert str(tmp_path) not in text and str(REPO) not in text
    assert "Campaign `tiny` (`results/test`)" in text
    assert ("| tiny_heldout | `results/test_heldout`: `snakemake --cores N "
            "results/test_heldout/campaign.nc` (config: `.test/config.yaml with campaign: "
            "test_heldout, seeds: [2, 3]`)") in text
    assert "| 2 (2, 3) |" in text  # the held-out replicate was read


def test_table_aliases_default_to_the_campaign_paper_aliases(tmp_path: Path) -> None:
    path = _spec(tmp_path)
    config = tmp_path / "config" / "bolt_fake.yaml"
    grid = yaml.safe_load(config.read_text())
    # [B] has no bolt-icml: that alias is for another paper
    grid["paper_aliases"] = {"w-dbo": "w-dbo-reference", "bolt-icml": "bolt"}
    config.write_text(yaml.safe_dump(grid))
    spec = load_spec(path)
    assert spec.tables[0].aliases == {"w-dbo": "w-dbo-reference"}


def test_setting_evidence_puts_the_reference_campaign_beside_the_changed_setting(
    tmp_path: Path,
) -> None:
    """``setting``: the same algorithms in a campaign that changes one open setting, each cell
    beside the reference campaign's, with the order of the algorithms under both."""
    from tvbo.analysis.reproduction import Campaigns
    from tvbo.analysis.reproduction_evidence import evaluate_evidence
    from tvbo.analysis.reproduction_spec import Evidence

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


def test_stand_in_differences_name_each_setting_that_differs(tmp_path: Path) -> None:
    from tvbo.analysis.reproduction import stand_in_differences

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


# -- predictions (issue 22: explanations that can be wrong) ----------------------------------------
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


def test_report_bytes_are_identical_when_built_twice(fake: Path, tmp_path: Path) -> None:
    from tvbo.analysis.reproduction import write_report

    spec = fake / "config" / "reproduction.yaml"
    first = write_report(tmp_path / "a.md", spec, fake / "results").read_bytes()
    second = write_report(tmp_path / "b.md", spec, fake / "results").read_bytes()
    assert first == second and str(tmp_path) not in first.decode()


def test_a_paper_without_se_gives_no_strict_order() -> None:
    from tvbo.analysis.reproduction import NO_PAPER_SE, agreement_counts, pairwise_orderings

    # W-DBO's table prints no s.e.: means 1.00 and 1.01 (a 1 % gap) are no strict order
    nan = math.nan
    comparison = pd.DataFrame({
        "benchmark": ["shekel"] * 2, "algorithm": ["gp-ucb", "bolt"],
        "paper_mean": [1.00, 1.01], "paper_se": [nan, nan],
        "tvbo_mean": [2.0, 1.0], "tvbo_se": [0.01, 0.01],
    })
    pairs = pairwise_orderings(comparison)
    assert pairs.iloc[0][["paper", "status", "tied_by"]].tolist() == [0, "tie", NO_PAPER_SE]
    counts = agreement_counts(pairs)
    assert counts.loc["Overall", NO_PAPER_SE] == 1 and counts.loc["Overall", "disagree"] == 0


def test_reference_policies_are_floor_rows_outside_the_tallies(fake: Path, tmp_path: Path) -> None:
    from tvbo.analysis.reproduction import REFERENCE_POLICIES

    results = tmp_path / "results"
    policy = REFERENCE_POLICIES[0]
    runs = [_run(b, a, seed, m + (seed - 1) * d) for (b, a), (m, d) in
            {**TVBO, ("shekel", policy): (9.0, 0.3)}.items() for seed in (0, 1, 2)]
    _campaign(results / "bolt_fake" / "campaign.nc", runs)
    _table_campaign(results, "bolt_fake_heldout", (3, 4, 5))
    report = build_report(_spec(tmp_path), results)
    result = report.tables["bolt-metronome"]
    assert len(result.pairs) == 6 and policy not in set(result.pairs["a"]) | set(result.pairs["b"])
    assert (f"| SHEKEL (4) (`shekel`) | {policy} (reference policy) | — | 9.00 ± 0.17 (n = 3) |  "
            "| reference | 90.0 ± 1.7 |") in report.text
