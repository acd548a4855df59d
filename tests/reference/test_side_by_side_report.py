"""examples/wdbo_public/report.py: the side-by-side page regenerated from run files.

Short counted runs stand in for both sides (the page reads only run files, so this needs no
extra): the page states the runs and seeds per side, mean ± s.e., the tests, the agreement per
benchmark, and judges the predictions of an explanations file; bad input is one line, exit 2.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

import tvbo
from tvbo.analysis.reproduction.published_code import fmt, judge, mean_se, read_runs_table
from tvbo.analysis.reproduction.published_spec import SidePrediction
from tvbo.results.io import write_run

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "wdbo_public"
RUN = {"max_iterations": 18, "cost_table": "metronome", "warmup": 15,
       "profile": "botorch-i9-laptop"}


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two 'public' and three 'paper' runs on Hartmann-3 (the public side played by
    w-dbo-paper on hardware ten times faster, so its compute per iteration is a tenth)."""
    folder = tmp_path_factory.mktemp("side_by_side")
    for side, speed, seeds in (("public", 10.0, (0, 1)), ("paper", 1.0, (0, 1, 2))):
        (folder / side).mkdir()
        for seed in seeds:
            write_run(tvbo.simulate("hartmann3", "w-dbo-paper", seed=seed, speed=speed, **RUN),
                      folder / side / f"hartmann3_s{seed}.nc")
    return folder


@pytest.fixture
def report(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    for name in ("report", "compare", "side_by_side"):
        sys.modules.pop(name, None)
    import report

    return report


def test_the_page_is_made_from_the_run_files(out: Path, report, tmp_path: Path) -> None:
    explanations = tmp_path / "explanations.yaml"
    explanations.write_text(
        "- pair: w-dbo\n  benchmarks: [hartmann3]\n  explains: [avg, tir]\n"
        "  cause: the stand-in runs on faster hardware\n  predictions:\n"
        "    - {quantity: compute, order: public < paper}\n")
    page = tmp_path / "docs" / "side.md"
    assert report.main([str(out), "--page", str(page), "--explanations",
                        str(explanations)]) == 0
    text = page.read_text()
    assert report.MARK in text and "Runs per side: public 2, paper 3," in text
    assert "| hartmann3 | W-DBO (public code, measured) | 2 (0-1) |" in text
    assert "| hartmann3 | w-dbo-paper (counted) | 3 (0-2) |" in text
    assert "Welch p = " in text and "Mann-Whitney p = " in text
    assert "on both regrets on" in text and "of 1 benchmarks with 2 or more runs a side" in text
    assert (page.parent / "side" / "w-dbo_over_time.png").is_file()
    # the numbers are the run files' own
    runs = report.read_sides(out, ("paper",))[0]["paper"]["hartmann3"]
    m, se = mean_se([r.values["avg"] for r in runs])
    assert fmt(m, se) in text and math.isfinite(se)
    if "### Where they differ" in text:  # a judged prediction, with its values
        assert "prediction compute per iteration (s): public < paper: holds" in text


def test_a_prediction_is_judged_by_its_intervals(out: Path, report) -> None:
    runs = report.read_sides(out, ("public", "paper"))[0]
    cheaper = SidePrediction("compute", "public", "<", "paper")
    dearer = SidePrediction("compute", "public", ">", "paper")
    assert judge(cheaper, runs, "hartmann3")[0] == "holds"  # ten times faster hardware
    assert judge(dearer, runs, "hartmann3")[0] == "fails"
    assert judge(cheaper, runs, "shekel")[0] == "no evidence"


def test_the_runs_table_gives_the_page_s_numbers(out: Path, report, tmp_path: Path) -> None:
    """--export-runs writes the published code's sides; read back, every number is the run
    files' own (the reproduction report renders the section from this table)."""
    table = tmp_path / "runs.csv"
    assert report.main([str(out), "--export-runs", str(table), "--machine", "a test box"]) == 0
    from_files = report.read_sides(out, ("public",), "a test box")[0]
    assert read_runs_table(table) == from_files
    assert "a test box" in table.read_text()


def test_the_runs_table_grows_by_merging(out: Path, report, tmp_path: Path, capsys) -> None:
    """A measured run's file need not outlive its machine: exporting from a folder that holds
    only some of the table's runs keeps the others, adds the new ones, and refuses a run that
    comes back with other numbers (it names the run; the table is left as it was)."""
    table = tmp_path / "runs.csv"
    first = tmp_path / "first"
    (first / "public").mkdir(parents=True)
    (first / "public" / "hartmann3_s0.nc").symlink_to(out / "public" / "hartmann3_s0.nc")
    assert report.main([str(first), "--export-runs", str(table), "--machine", "box"]) == 0
    second = tmp_path / "second"
    (second / "public").mkdir(parents=True)
    (second / "public" / "hartmann3_s1.nc").symlink_to(out / "public" / "hartmann3_s1.nc")
    assert report.main([str(second), "--export-runs", str(table), "--machine", "box"]) == 0
    assert read_runs_table(table) == report.read_sides(out, ("public",), "box")[0]
    before = table.read_bytes()
    clash = tmp_path / "clash"
    (clash / "public").mkdir(parents=True)  # seed 1 of the other side: other numbers
    (clash / "public" / "hartmann3_s1.nc").symlink_to(out / "paper" / "hartmann3_s1.nc")
    capsys.readouterr()
    assert report.main([str(clash), "--export-runs", str(table), "--machine", "box"]) == 2
    err = capsys.readouterr().err
    assert "public hartmann3 seed" in err and "other numbers" in err
    assert table.read_bytes() == before


def test_the_page_from_the_runs_table(out: Path, report, tmp_path: Path) -> None:
    """With --runs-table, the published code's runs without a file under OUT come from the
    table: the same numbers as from the files; the figure takes that side's curves at the
    quarters of the horizon."""
    table = tmp_path / "runs.csv"
    assert report.main([str(out), "--export-runs", str(table), "--machine", "box"]) == 0
    only_tvbo = tmp_path / "only_tvbo"
    (only_tvbo / "paper").mkdir(parents=True)
    for path in (out / "paper").glob("*.nc"):
        (only_tvbo / "paper" / path.name).symlink_to(path)
    pages = {}
    for name, folder, extra in (("files", out, []),
                                ("table", only_tvbo, ["--runs-table", str(table)])):
        page = tmp_path / name / "side.md"
        assert report.main([str(folder), "--page", str(page), "--machine", "box", *extra]) == 0
        pages[name] = page.read_text()
        assert (page.parent / "side" / "w-dbo_over_time.png").is_file()
    assert "2 of them rows of the committed runs table" in pages["table"]
    table_rows = [line for line in pages["table"].splitlines() if line.startswith("| hartmann3")]
    file_rows = [line for line in pages["files"].splitlines() if line.startswith("| hartmann3")]
    assert table_rows == file_rows and table_rows
    runs = report.read_sides(out, ("public",), "box")[0]["public"]["hartmann3"]
    quarters = report.side_curves(runs, {})
    assert [c.queries[1:].tolist() for c in quarters] == [list(r.queries_at) for r in runs]
    assert all(c.queries[0] == 0.0 and len(c.queries) == 5 for c in quarters)


@pytest.mark.parametrize(("entry", "cause"), [
    ("- pair: w-dbo\n  benchmarks: [hartmann3]\n  explains: [avg]\n  cause: c\n"
     "  predictions: [{quantity: speed, order: public > paper}]\n", "unknown quantity 'speed'"),
    ("- pair: w-dbo\n  benchmarks: [hartmann3]\n  explains: [avg]\n  cause: c\n"
     "  predictions: [{quantity: avg, order: public >> paper}]\n", "is not 'SIDE < SIDE'"),
    ("- pair: nope\n  benchmarks: [hartmann3]\n  explains: [avg]\n  cause: c\n"
     "  predictions: [{quantity: avg, order: public > paper}]\n", "unknown pair 'nope'"),
])
def test_bad_explanations_are_one_line(out: Path, report, tmp_path: Path, capsys,
                                       entry: str, cause: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(entry)
    page = tmp_path / "page.md"
    assert report.main([str(out), "--page", str(page), "--explanations", str(bad)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and cause in err
    assert not page.exists()


def _runs(side: str, values: dict[str, list[float]]) -> dict[str, list]:
    from tvbo.analysis.reproduction.published_code import RunValues

    count = len(next(iter(values.values())))
    return {"egg": [RunValues(side, "egg", seed, {q: v[seed] for q, v in values.items()},
                              (), (), 600.0, {}) for seed in range(count)]}


def test_each_regret_that_differs_is_judged_on_its_own() -> None:
    """An entry naming only time-integrated regret judges that one (here it holds on both seed
    sets); average regret, which no entry names, stays unexplained, and so does the difference
    as a whole: it is explained only when every regret that differs is, contradicted when one
    is."""
    from tvbo.analysis.reproduction.published_code import HeldOut, explain
    from tvbo.analysis.reproduction.published_spec import SideExplanation

    runs = {"cheap": _runs("cheap", {"tir": [1.0, 1.1, 0.9]}),
            "dear": _runs("dear", {"tir": [5.0, 5.2, 4.8]})}
    held = HeldOut(runs=runs, seeds=(10, 11, 12))
    holds = SideExplanation("p", ("egg",), ("tir",), "the price", (
        SidePrediction("tir", "cheap", "<", "dear"),), "entry 1")
    fails = SideExplanation("p", ("egg",), ("tir",), "the other way", (
        SidePrediction("tir", "dear", "<", "cheap"),), "entry 2")
    status, lines = explain("p", "egg", ["avg", "tir"], runs, held, [holds], "e.yaml")
    assert status == "unexplained"
    assert lines[0].startswith("- **egg**, time-integrated regret: explained (entry 1)")
    assert lines[-1] == "- **egg**, average regret: **unexplained** (no entry of e.yaml)"
    assert explain("p", "egg", ["tir"], runs, held, [holds], "e.yaml")[0] == "explained"
    assert explain("p", "egg", ["avg", "tir"], runs, held, [fails], "e.yaml")[0] == "contradicted"
    # an entry naming the other regret only leaves this one without an entry
    status, lines = explain("p", "egg", ["avg"], runs, held, [holds], "e.yaml")
    assert status == "unexplained" and lines == [
        "- **egg**, average regret: **unexplained** (no entry of e.yaml)"]
