"""The published code's section of the report (tvbo/analysis/reproduction/published_section.py,
published_code.py, published_spec.py): a fake runs table beside a fake campaign.

The campaign is the fakes' ``bolt_fake``: its ``gp-ucb`` has average regret (m - d, m, m + d) per
benchmark, Shekel m = 2.0, d = 0.03 (s.e. 0.0173) and Eggholder m = 500, d = 3 (s.e. 1.73);
time-integrated regret is ten times the average. The measured side ``pub`` is written by hand
below: on Shekel it agrees (2.0 ± 0.0173 against the same), on Eggholder it is lower (400 ±
1.73 against 500 ± 1.73: the intervals are 100 apart), so Eggholder differs and is judged by
the explanations file. The campaign's held-out replicate (``bolt_fake_heldout``, seeds 3-5) has
the same values, and so do the measured side's runs on seeds 3-5 unless a test says otherwise:
every prediction is judged on both seed sets.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.analysis.reproduction.fakes import REPO, _spec, _table_campaign
from tvbo.analysis.reproduction.published_code import (
    QUARTERS,
    RunValues,
    read_runs_table,
    write_runs_table,
)
from tvbo.analysis.reproduction.published_section import held_out_seeds
from tvbo.analysis.reproduction.report import build_report
from tvbo.analysis.reproduction.spec_yaml import load_spec

#: the measured side's average regret per seed (time-integrated: ten times)
PUBLISHED = {"shekel": (1.97, 2.0, 2.03), "eggholder": (397.0, 400.0, 403.0)}


#: the held-out seeds: those of the fake campaign's replicate (fakes._spec)
HELD_OUT = (3, 4, 5)


def _runs_table(path: Path, held: dict[str, tuple[float, ...]] | None = PUBLISHED) -> Path:
    """The measured side's runs table: seeds 0-2 with PUBLISHED, the held-out seeds with
    ``held`` (None: no held-out runs)."""
    runs = []
    sets = [(range(3), PUBLISHED)] + ([(HELD_OUT, held)] if held is not None else [])
    for seeds, table in sets:
        runs += _measured_runs(seeds, table)
    return write_runs_table(runs, path)


def _measured_runs(seeds, table: dict[str, tuple[float, ...]]) -> list[RunValues]:
    runs = []
    for bench, values in table.items():
        for seed, avg in zip(seeds, values, strict=True):
            quantities = {"avg": avg, "tir": 10 * avg, "queries": 12.0 + seed, "compute": 0.5,
                          "mean_size": 6.0, "collapsed": float(seed == 0)}
            runs.append(RunValues("pub", bench, seed, quantities,
                                  tuple(3.0 * (i + 1) for i in range(len(QUARTERS))),
                                  (2.0, 4.0, 6.0, 8.0), 60.0,
                                  {"algorithm": "outside", "compute_model": "measured",
                                   "machine": "a test box", "versions": "tvbo 0"}))
    return runs


def _explanations(path: Path, order: str = "pub < tv") -> Path:
    path.write_text(yaml.safe_dump([{
        "pair": "cmp", "benchmarks": ["eggholder"], "explains": ["avg", "tir"],
        "cause": "the outside code is lower", "predictions": [{"quantity": "avg",
                                                                "order": order}]}]))
    return path


def _section(**edits) -> dict:
    section = {
        "runs": "runs.csv", "explanations": "explanations.yaml", "page": "side-by-side.md",
        "sides": {"pub": {"measured": "pub", "label": "outside (measured)"},
                  "tv": {"campaign": "bolt_fake", "algorithm": "gp-ucb",
                         "label": "gp-ucb (counted)"},
                  "never": {"campaign": "missing", "algorithm": "gp-ucb", "label": "never"}},
        "comparisons": [{"name": "cmp", "title": "GP-UCB: outside vs tvbo", "published": "pub",
                         "tvbo": "tv"}],
    }
    section.update(edits)
    return section


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fake campaigns, built once (the tests change only the spec and its files)."""
    folder = tmp_path_factory.mktemp("published") / "results"
    _table_campaign(folder)
    _table_campaign(folder, "bolt_fake_heldout", (3, 4, 5))
    return folder


@pytest.fixture
def folder(tmp_path: Path, results: Path) -> Path:
    (tmp_path / "config").mkdir()
    (tmp_path / "results").symlink_to(results, target_is_directory=True)
    _runs_table(tmp_path / "config" / "runs.csv")
    _explanations(tmp_path / "config" / "explanations.yaml")
    return tmp_path


def _report(folder: Path, **edits) -> str:
    spec = _spec(folder, published_code=_section(**edits))
    return build_report(spec, folder / "results").text


def test_the_runs_table_reads_back_exactly(tmp_path: Path) -> None:
    path = _runs_table(tmp_path / "runs.csv")
    runs = read_runs_table(path)
    assert sorted(runs) == ["pub"] and sorted(runs["pub"]) == ["eggholder", "shekel"]
    assert [r.values["avg"] for r in runs["pub"]["shekel"]] == list(PUBLISHED["shekel"]) * 2
    assert runs["pub"]["shekel"][0].provenance["machine"] == "a test box"
    assert write_runs_table([r for rs in runs["pub"].values() for r in rs],
                            tmp_path / "again.csv").read_bytes() == path.read_bytes()


def test_the_section_from_a_runs_table_and_a_campaign(folder: Path) -> None:
    text = _report(folder)
    section = text[text.index("## The published code"):]
    assert "### GP-UCB: outside vs tvbo" in section
    # runs and seeds per side; mean ± s.e. (the fakes' gp-ucb on Eggholder: 500 ± 3/sqrt(3))
    assert "| eggholder | outside (measured) | 3 (0-2) | 400.000 ± 1.732 |" in section
    assert "| eggholder | gp-ucb (counted) | 3 (0-2) | 500.000 ± 1.732 |" in section
    assert "| shekel | gp-ucb (counted) | 3 (0-2) | 2.000 ± 0.017 |" in section
    assert "| 3/6/9/12 | 2.0/4.0/6.0/8.0 | 0.50 | 1/3 |" in section  # quarters, collapsed
    assert "- **shekel** (3 vs 3 runs): average regret agree" in section
    assert "- **eggholder** (3 vs 3 runs): average regret **differ** (difference -100.000" in text
    assert "Welch p = " in section and "Mann-Whitney p = " in section
    # pub < tv holds: 400 + 1.7 < 500 - 1.7
    assert ("- **eggholder**, average regret, time-integrated regret: explained "
            "(explanations.yaml entry 1). the outside code is lower") in section
    assert ("prediction average regret: pub < tv: holds (holds, pub 400.000 ± 1.732 vs tv "
            "500.000 ± 1.732; held-out seeds 3-5: holds, pub 400.000 ± 1.732 vs tv 500.000 ± "
            "1.732)") in section
    # the tables are the comparison's seeds; the held-out seeds' runs are shown apart
    assert "| eggholder | outside (measured) | 3 (3-5) | 400.000 ± 1.732 |" in section
    assert "Measured runs: 12 runs on a test box (tvbo 0)." in section
    assert "[side-by-side.md](side-by-side.md)" in section  # figures, R(n), replay
    summary = next(line for line in text.splitlines() if line.startswith("Summary: "))
    assert ("published code, GP-UCB: agree within the s.e. on both regrets on 1 of 2 benchmarks "
            "with 2 or more runs a side (1 differ: 1 explained, 0 contradicted, 0 unexplained)"
            in summary)


def test_a_failing_prediction_contradicts(folder: Path) -> None:
    _explanations(folder / "config" / "explanations.yaml", "pub > tv")
    text = _report(folder)
    assert ("- **eggholder**, average regret, time-integrated regret: **contradicted** "
            "(explanations.yaml entry 1).") in text
    assert ("prediction average regret: pub > tv: fails (fails, pub 400.000 ± 1.732 vs tv "
            "500.000 ± 1.732;") in text
    assert "(1 differ: 0 explained, 1 contradicted, 0 unexplained)" in text


def test_a_prediction_failing_on_the_held_out_seeds_contradicts(folder: Path) -> None:
    """Written from seeds 0-2 it holds there; on the held-out seeds the measured side is above
    tvbo's, so the explanation is contradicted."""
    _runs_table(folder / "config" / "runs.csv",
                {"shekel": (1.97, 2.0, 2.03), "eggholder": (597.0, 600.0, 603.0)})
    text = _report(folder)
    assert ("prediction average regret: pub < tv: fails (holds, pub 400.000 ± 1.732 vs tv "
            "500.000 ± 1.732; held-out seeds 3-5: fails, pub 600.000 ± 1.732 vs tv 500.000 ± "
            "1.732)") in text
    assert "(1 differ: 0 explained, 1 contradicted, 0 unexplained)" in text
    # the comparison's table and agreement are still seeds 0-2's
    assert "- **eggholder** (3 vs 3 runs): average regret **differ** (difference -100.000" in text


def test_without_held_out_runs_the_evidence_is_missing(folder: Path) -> None:
    _runs_table(folder / "config" / "runs.csv", held=None)
    text = _report(folder)
    assert "held-out seeds 3-5: no evidence, 0 and 3 runs" in text
    assert "unexplained (evidence missing)" in text
    assert "(1 differ: 0 explained, 0 contradicted, 1 unexplained)" in text


def test_a_side_without_runs_leaves_it_unexplained(folder: Path) -> None:
    """The prediction names a side whose campaign is not yet run: evidence is missing."""
    _explanations(folder / "config" / "explanations.yaml", "pub < never")
    text = _report(folder)
    assert "unexplained (evidence missing)" in text
    assert ("prediction average regret: pub < never: no evidence (no evidence, 3 and 0 runs; "
            "held-out seeds 3-5: no evidence, 3 and 0 runs)") in text
    assert "(1 differ: 0 explained, 0 contradicted, 1 unexplained)" in text


def test_no_entry_leaves_it_unexplained(folder: Path) -> None:
    (folder / "config" / "explanations.yaml").write_text("[]\n")
    text = _report(folder)
    assert "**unexplained** (no entry of explanations.yaml)" in text


def test_a_campaign_not_yet_run(folder: Path) -> None:
    text = _report(folder, comparisons=[{"name": "cmp", "title": "GP-UCB: outside vs never",
                                         "published": "pub", "tvbo": "never"}])
    section = text[text.index("## The published code"):]
    assert "### GP-UCB: outside vs never\n\nnot yet run: campaign `never_run`" in section
    assert "GP-UCB: not yet run" in text.split("## Campaigns")[0]


def test_the_report_is_byte_identical_when_rebuilt(folder: Path) -> None:
    assert _report(folder) == _report(folder)


@pytest.mark.parametrize(("edits", "fragments"), [
    ({"comparisons": [{"name": "cmp", "title": "t", "published": "pub", "tvbo": "nope"}]},
     ["published_code.comparisons[0]", "unknown side 'nope'"]),
    ({"sides": {"pub": {"measured": "elsewhere", "label": "x"}}},
     ["published_code.sides.pub", "unknown measured side 'elsewhere'", "holds pub"]),
    ({"sides": {"pub": {"measured": "pub", "label": "x"},
                "tv": {"campaign": "nope", "algorithm": "gp-ucb", "label": "x"}}},
     ["published_code.sides.tv", "unknown campaign 'nope'"]),
    ({"sides": {"pub": {"measured": "pub", "label": "x"},
                "tv": {"campaign": "bolt_fake", "algorithm": "w-dbo", "label": "x"}}},
     ["published_code.sides.tv", "unknown algorithm 'w-dbo' of campaign 'bolt_fake'"]),
    ({"runs": "no.csv"}, ["published_code.runs", "no such file 'no.csv'"]),
    ({"colour": "red"}, ["published_code", "unknown key(s) ['colour']"]),
])
def test_bad_entries_are_one_line_naming_the_entry(folder: Path, edits, fragments) -> None:
    spec = _spec(folder, published_code=_section(**edits))
    with pytest.raises(ValueError) as err:
        load_spec(spec)
    message = str(err.value)
    assert len(message.splitlines()) == 1 and message.startswith("reproduction spec: ")
    assert all(f in message for f in fragments), message


def test_a_cause_with_a_typed_number_is_rejected(folder: Path) -> None:
    path = folder / "config" / "explanations.yaml"
    path.write_text(path.read_text().replace("the outside code is lower",
                                             "the outside code is 20 % lower"))
    with pytest.raises(ValueError) as err:
        load_spec(_spec(folder, published_code=_section()))
    assert "explanations.yaml entry 1: a cause contains no numerals" in str(err.value)
    assert "found 20" in str(err.value)


def test_a_runs_table_missing_a_column_is_rejected(folder: Path) -> None:
    table = folder / "config" / "runs.csv"
    lines = table.read_text().splitlines()
    table.write_text("\n".join(",".join(row.split(",")[:3]) for row in lines) + "\n")
    with pytest.raises(ValueError) as err:
        load_spec(_spec(folder, published_code=_section()))
    message = str(err.value)
    assert len(message.splitlines()) == 1
    assert "published_code.runs: runs.csv: missing column(s) ['avg'," in message
    assert "--export-runs" in message


def test_explanations_naming_an_unknown_side_are_rejected(folder: Path) -> None:
    _explanations(folder / "config" / "explanations.yaml", "pub < elsewhere")
    with pytest.raises(ValueError) as err:
        load_spec(_spec(folder, published_code=_section()))
    message = str(err.value)
    assert len(message.splitlines()) == 1
    assert "published_code.explanations: explanations.yaml entry 1" in message
    assert "'pub < elsewhere'" in message


@pytest.mark.parametrize(("campaign", "side", "model", "algorithm"), [
    ("wdbo_public_price", "paper-r", "wdbo_public/w-dbo-public.R.yaml", "w-dbo-paper"),
    ("botorch_price", "gp-ucb-r", "botorch_gpucb/botorch-gp-ucb.R.yaml", "gp-ucb"),
    ("botorch_priors", "gp-ucb-rp", "botorch_gpucb/botorch-gp-ucb.R.yaml", "gp-ucb"),
])
def test_the_price_campaign_charges_the_calibrated_model(monkeypatch, campaign: str, side: str,
                                                         model: str, algorithm: str) -> None:
    """A price campaign's polynomial is the published code's R(n), every phase summed, as
    side_by_side.py charges tvbo's side (paper-r: the public W-DBO code's model on w-dbo-paper;
    gp-ucb-r: BoTorch's on gp-ucb; gp-ucb-rp: the same with BoTorch's stock priors, whose typed
    surrogate options are the side's too): the typed numbers cannot drift from their source."""
    example = REPO / "examples" / "wdbo_public"
    monkeypatch.syspath_prepend(str(example))
    import side_by_side

    config = yaml.safe_load((REPO / "config" / f"{campaign}.yaml").read_text())
    d = 3 if side == "gp-ucb-rp" else None  # its campaign's one benchmark, Ackley
    options = side_by_side.run_options(side_by_side.SIDES[side], REPO / "examples" / model, d)
    if side_by_side.SIDES[side].stock_priors:  # the variant's surrogate is the side's priors
        variant = config["algorithm_options"][config["algorithms"][0]]
        assert variant["preset"] == algorithm and config["benchmarks"] == ["ackley"]
        assert {"surrogate": variant["surrogate"]} == options["algorithm_options"]
    assert side_by_side.SIDES[side].algorithm == algorithm
    entry = config["compute_per_algorithm"][config["algorithms"][0]]
    assert entry == {"compute": "polynomial", "polynomial": options["polynomial"]}
    assert {k: config[k] for k in ("cost_table", "warmup", "speeds")} == {
        "cost_table": options["cost_table"], "warmup": options["warmup"],
        "speeds": [options["speed"]]}


def test_the_shipped_spec_names_the_committed_runs() -> None:
    spec = load_spec(REPO / "config" / "reproduction.yaml")
    section = spec.published_code
    assert section is not None and section.runs.is_file()
    measured = {s.measured for s in section.sides.values() if s.measured}
    assert measured <= set(read_runs_table(section.runs))
    assert spec.campaigns[section.sides["paper-r"].campaign].name == "wdbo_public_price"
    assert spec.campaigns[section.sides["gp-ucb-r"].campaign].name == "botorch_price"


def test_the_spec_and_the_page_name_the_same_sides(monkeypatch) -> None:
    """One explanations file serves the report's section and docs/side-by-side.md: the spec's
    sides and comparisons are the page's (examples/wdbo_public/side_by_side.py, report.py)."""
    monkeypatch.syspath_prepend(str(REPO / "examples" / "wdbo_public"))
    import report
    import side_by_side

    section = load_spec(REPO / "config" / "reproduction.yaml").published_code
    assert {n: s.label for n, s in section.sides.items()} == {
        n: s.label for n, s in side_by_side.SIDES.items()}
    assert {c.name: c for c in section.comparisons} == report.COMPARISONS
    exported = {s.measured for s in section.sides.values() if s.measured}
    assert exported == set(report.EXPORTED)


def test_the_shipped_held_out_seeds_are_the_replicates() -> None:
    """The predictions are judged on BOLT [B]'s held-out replicate's seeds (10-19), the same
    for the paper side's campaign and the price campaign's replicate."""
    spec = load_spec(REPO / "config" / "reproduction.yaml")
    assert held_out_seeds(spec) == tuple(range(10, 20))
    section = spec.published_code
    for side in ("paper", "paper-r", "gp-ucb"):
        campaign = section.sides[side].campaign
        assert spec.replicate(campaign) is not None, campaign
