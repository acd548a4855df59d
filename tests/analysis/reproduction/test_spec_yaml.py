"""Reading and validating the reproduction spec (tvbo/analysis/reproduction/spec_yaml.py),
and the repository's own spec."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.analysis.reproduction.fakes import (
    REPO,
    SEEDS_DIR,
    _spec,
)
from tvbo.analysis.reproduction.spec import CURVE_NAMES, NUMERAL
from tvbo.analysis.reproduction.spec_yaml import load_spec


def test_spec_curves_are_the_paper_figures_curves() -> None:
    from tvbo.analysis.paper_figures import CURVES

    assert CURVE_NAMES == tuple(CURVES)


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
        ({"explanations.0.predictions": [{"quantity": "face_share", "bound": "bolt > many"}]},
         ["explanations[0].predictions[0].bound", "'many'"]),
        ({"explanations.0.predictions": [{"quantity": "face_share", "bound": "nope > 0.5"}]},
         ["explanations[0].predictions[0].bound", "'nope'", "valid algorithms:"]),
        ({"explanations.0.predictions": [{"quantity": "face_share", "order": "bolt << gp-ucb"}]},
         ["explanations[0].predictions[0].order", "expected 'A < B'"]),
        ({"explanations.0.predictions": [{"quantity": "face_share",
                                          "order": "bolt <= gp-ucb <= nope"}]},
         ["explanations[0].predictions[0].order", "'nope'"]),
        ({"explanations.0.predictions": [{"quantity": "face_share", "order": "bolt < gp-ucb",
                                          "bound": "bolt > 1"}]},
         ["explanations[0].predictions[0]", "exactly one of 'order'"]),
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


def test_repository_spec_is_valid_and_quotes_are_exact() -> None:
    spec = load_spec(REPO / "config" / "reproduction.yaml")
    assert [t.paper for t in spec.tables] == ["bolt-metronome", "bolt-icml", "wdbo"]
    # the sensitivity grid compares the faithful variants under the paper's names, as the table
    # does (without the campaign's paper_aliases W-DBO and BOLT would drop out of it)
    assert spec.sensitivity[0].aliases == {"w-dbo": "w-dbo-paper", "bolt": "bolt-paper"}
    assert spec.sensitivity[0].aliases == spec.tables[0].aliases
    sensitivity = spec.campaigns[spec.sensitivity[0].campaign].merged
    # speeds 0.7 and 1.3; speed 1 is bolt_paper's own runs (the sensitivity entry's base)
    assert sensitivity["speeds"] == [0.7, 1.3] and spec.sensitivity[0].base == "bolt_paper"
    assert sensitivity["profile"] == "botorch-i9-laptop"
    # bolt_paper's paper-table algorithms at the other speeds, nothing else changed; and a valid
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

    assert validate_config(dict(sensitivity))["speeds"] == [0.7, 1.3]
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

    spec = load_spec(REPO / "config" / "reproduction.yaml")
    for entry in [*spec.explanations, *spec.fit_causes]:
        assert not NUMERAL.findall(entry.cause), entry.cause
    bolt = [e for e in spec.explanations if e.table == "bolt-metronome"]
    assert bolt and not any(e.broad for e in bolt)
    assert all(e.explains and e.predictions for e in bolt)
    # the folded entries (Griewank, BOKE, PE-GP-UCB) use the quantities read from the queries
    used = {p.quantity for e in spec.explanations for p in e.predictions}
    assert {"bowl_share", "bowl_median", "face_share", "beats_warmup", "simple_regret",
            "cumulative_regret", "true_prior_share"} <= used
    assert {e.claim for e in spec.explanations if e.claim} == {
        "BOKE per iteration (Figure 6)", "PE-GP-UCB on the toy problem (Figure 2)"}
    # every campaign a table's prediction reads has its held-out replicate
    for e in bolt:
        for p in e.predictions:
            for term in (p.lower, p.higher):
                assert spec.replicate(term.campaign), (e.where, p.text)
    assert not (REPO / "config" / "proposed").exists()
    replicate = spec.campaigns[spec.replicate("bolt_paper")].merged
    assert replicate["seeds"] == list(range(10, 20))
    assert {k: v for k, v in replicate.items() if k not in ("seeds", "campaign")} == {
        k: v for k, v in spec.campaigns["bolt_paper"].merged.items()
        if k not in ("seeds", "campaign")}


def test_table_aliases_default_to_the_campaign_paper_aliases(tmp_path: Path) -> None:
    path = _spec(tmp_path)
    config = tmp_path / "config" / "bolt_fake.yaml"
    grid = yaml.safe_load(config.read_text())
    # [B] has no bolt-icml: that alias is for another paper
    grid["paper_aliases"] = {"w-dbo": "w-dbo-reference", "bolt-icml": "bolt"}
    config.write_text(yaml.safe_dump(grid))
    spec = load_spec(path)
    assert spec.tables[0].aliases == {"w-dbo": "w-dbo-reference"}
