"""The papers' table layout: bold, underline (overlapping intervals), Overall row, LaTeX, files.

Every expected number and mark is worked out by hand on small crafted tables.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.analysis.test_compare import make_campaign
from tvbo import cli
from tvbo.analysis.metrics import OVERALL_LABEL
from tvbo.analysis.tables import (
    TABLE_FORMATS,
    latex_escape,
    mark_best,
    summary_table,
    table_files,
    to_latex,
    to_markdown,
    with_overall,
    write_tables,
)


def long_table(means: dict[str, list[float]], ses: dict[str, list[float]],
               algorithms: list[str]) -> pd.DataFrame:
    rows = [
        {"benchmark": b, "speed": 1.0, "algorithm": a, "mean": m, "se": s, "n": 5}
        for b in means
        for a, m, s in zip(algorithms, means[b], ses[b], strict=True)
    ]
    return pd.DataFrame(rows)


ALGOS = ["a", "b_x", "c&d"]
MEANS = {"b1": [1.0, 2.0, 3.0], "b2": [10.0, 30.0, 20.0]}
SES = {"b1": [0.3, 0.8, 0.1], "b2": [1.0, 1.0, 9.5]}
# b1: best a [0.7, 1.3]; b_x [1.2, 2.8] overlaps; c&d [2.9, 3.1] does not.
# b2: best a [9, 11]; b_x [29, 31] does not; c&d [10.5, 29.5] overlaps.
UNDERLINED = {("b1", "b_x"), ("b2", "c&d")}  # the papers' rule (best_and_overlapping)
# tvbo's rule (separated_best): a is not separated in b1 or b2, so no bold there and the tied
# set (a and the overlapping cell) is underlined; in Overall a (0 ± 0) is separated from
# b_x and c&d ([0.5, 1.0]): bold.
TIED = {("b1", "a"), ("b1", "b_x"), ("b2", "a"), ("b2", "c&d")}


def test_normalised_overall_row_by_hand() -> None:
    table = with_overall(long_table(MEANS, SES, ALGOS))
    overall = table[table["benchmark"] == OVERALL_LABEL].set_index("algorithm")
    # b1 -> (0, 0.5, 1); b2 -> (0, 1, 0.5): a 0 ± 0, b_x and c&d 0.75 ± std(.5, 1)/sqrt(2)
    np.testing.assert_allclose(overall.loc[ALGOS, "mean"], [0.0, 0.75, 0.75])
    np.testing.assert_allclose(overall.loc[ALGOS, "se"], [0.0, 0.25, 0.25])
    assert (overall["n"] == 2).all()
    marked = mark_best(table).set_index(["benchmark", "algorithm"])
    assert marked.loc[(OVERALL_LABEL, "a"), "best"]
    assert not marked.loc[(OVERALL_LABEL, "b_x"), "tied"]  # [0.5, 1] vs [0, 0]
    assert {i for i, r in marked.iterrows() if r["tied"]} == TIED
    assert {i for i, r in marked.iterrows() if r["best"]} == {(OVERALL_LABEL, "a")}


def test_markdown_marks_the_same_cells() -> None:
    text = to_markdown(with_overall(long_table(MEANS, SES, ALGOS)), digits=2)
    lines = text.splitlines()
    assert lines[0] == "| benchmark | a | b_x | c&d |"
    assert lines[2] == "| b1 | <u>1.0 ± 0.3</u> | <u>2.0 ± 0.8</u> | 3.0 ± 0.1 |"
    assert lines[3] == "| b2 | <u>10 ± 1</u> | 30 ± 1 | <u>20 ± 10</u> |"  # 9.5 to 0 decimals
    assert lines[4] == "| Overall | **0.0 ± 0.0** | 0.75 ± 0.25 | 0.75 ± 0.25 |"
    assert "best mean + 1 s.e. < other mean − 1 s.e. for all others" in lines[-1]
    assert "over 5 seeds" in lines[-1]
    # with ci = 0 every lowest mean is separated: bold, nothing underlined
    point = to_markdown(long_table(MEANS, SES, ALGOS), ci=0)
    assert "<u>" not in point and point.count("**") == 4


def test_latex_underlines_exactly_the_overlapping_cells() -> None:
    latex = to_latex(with_overall(long_table(MEANS, SES, ALGOS)), digits=2, label="tab:x")
    assert latex.count(r"\underline{") == len(TIED)
    rows = {line.split(" & ")[0]: line.split(" & ")[1:] for line in latex.splitlines()
            if " & " in line}
    header = [h.removesuffix(r" \\") for h in rows.pop("Benchmark")]
    assert header == ["a", r"b\_x", r"c\&d"]  # escaped
    for benchmark in ("b1", "b2"):
        cells = [c.removesuffix(r" \\") for c in rows[benchmark]]
        for algorithm, cell in zip(ALGOS, cells, strict=True):
            assert cell.startswith(r"\underline{") == ((benchmark, algorithm) in TIED)
            assert not cell.startswith(r"\textbf{")
    assert rows["b1"][0] == r"\underline{1.0 $\pm$ 0.3}"
    assert rows["Overall"][0] == r"\textbf{0.0 $\pm$ 0.0}"
    assert rows["b2"][2] == r"\underline{20 $\pm$ 10} \\"
    lines = latex.splitlines()
    assert lines[lines.index(next(ln for ln in lines if ln.startswith("Overall"))) - 1] == (
        r"\midrule"
    )
    for command in (r"\toprule", r"\bottomrule", r"\begin{tabular}{lccc}", r"\label{tab:x}"):
        assert command in latex
    assert "±" not in latex and "–" not in latex


def test_latex_escape() -> None:
    assert latex_escape(r"a_b&c%d$e#f{g}h~i^j\k") == (
        r"a\_b\&c\%d\$e\#f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k"
    )


def test_write_tables_every_format(tmp_path: Path) -> None:
    campaign = make_campaign({
        ("b1", "a"): [1.0, 1.2, 0.8], ("b1", "b"): [2.0, 2.5, 1.5],
        ("b2", "a"): [5.0, 5.0, 5.0], ("b2", "b"): [4.0, 4.2, 3.8],
    })
    formats = list(TABLE_FORMATS)
    paths = write_tables(campaign, tmp_path, formats=formats, ci=1.0)
    names = table_files("average_regret", formats) + table_files("time_integrated_regret", formats)
    assert [p.name for p in paths] == names
    csv = pd.read_csv(tmp_path / "average_regret.csv")
    assert list(csv.columns) == [
        "benchmark", "speed", "algorithm", "label", "mean", "se", "n", "best", "tied",
        "time_integrated_regret_mean", "time_integrated_regret_se",
        "time_integrated_regret_best", "time_integrated_regret_tied",
    ]  # the campaign records no n_iterations, so no query columns
    best = csv[csv["best"]].set_index("benchmark")["algorithm"].to_dict()
    assert best == {"b1": "a", "b2": "b"}
    normalised = pd.read_csv(tmp_path / "average_regret_normalised.csv")
    overall = normalised[normalised["benchmark"] == OVERALL_LABEL].set_index("algorithm")
    assert overall.at["a", "mean"] == 0.5 and overall.at["b", "mean"] == 0.5
    assert overall.at["a", "se"] == pytest.approx(0.5)  # std(0, 1) / sqrt(2)
    tex = (tmp_path / "time_integrated_regret.tex").read_text()
    assert r"\label{tab:time_integrated_regret}" in tex
    assert r"\caption{Time-integrated regret ((1/H) $\int$ f*(t) $-$ f(x\_held(t), t) dt" in tex
    md = (tmp_path / "time_integrated_regret.md").read_text()
    # 2 x the average regret, first in its own file; the average regret is the second row
    assert "| b1 | time-integrated regret | **2.00 ± 0.23** | 4.00 ± 0.58 |" in md
    assert "|  | avg. query regret | **1.00 ± 0.12** | 2.00 ± 0.29 |" in md
    with pytest.raises(ValueError, match="unknown table formats"):
        write_tables(campaign, tmp_path, formats=["pdf"])
    with pytest.raises(ValueError, match="finite number >= 0"):
        write_tables(campaign, tmp_path, ci=float("nan"))


def test_cli_table_formats_and_ci(tmp_path: Path, capsys) -> None:
    path = tmp_path / "campaign.nc"
    make_campaign({("b1", "a"): [1.0, 1.2], ("b1", "b"): [1.5, 1.7]}).to_netcdf(path)
    out = tmp_path / "t"
    assert cli.main(["table", str(path), "--outdir", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(
        table_files("average_regret", list(TABLE_FORMATS))
        + table_files("time_integrated_regret", list(TABLE_FORMATS))
    )
    # a: [1.0, 1.2] -> 1.1 ± 0.1; b: 1.6 ± 0.1: underlined only when 1.6 - K 0.1 < 1.2, K > 4
    assert "<u>" not in (out / "average_regret.md").read_text()
    assert cli.main(["table", str(path), "--outdir", str(out), "--ci", "4.5", "--format",
                     "tex"]) == 0
    assert r"\underline{1.60 $\pm$ 0.10}" in (out / "average_regret.tex").read_text()
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        cli.main(["table", str(path), "--outdir", str(out), "--ci", "-1"])
    assert info.value.code == 2 and "--ci" in capsys.readouterr().err


def test_summary_of_a_campaign_keeps_its_metric_name() -> None:
    campaign = make_campaign({("b1", "a"): [1.0, 2.0], ("b1", "b"): [3.0, 4.0]})
    table = summary_table(campaign, "time_integrated_regret")
    text = to_markdown(table)
    caption = text.splitlines()[-1]
    assert re.search(r"^Time-integrated regret \(\(1/H\).*mean ± s.e. over 2 seeds ", caption)
