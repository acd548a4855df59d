"""Every figure of a tiny real campaign names algorithms and benchmarks by their display names.

Renders every campaign figure (``tvbo figures``, ``whatif``, ``parallel-whatif``, ``compare``,
``fit-health``, ``paper-figures``) through the writers the CLI calls, captures each figure at
:meth:`FigureOptions.save`, and reads every text artist (titles, suptitles, legends, axis labels,
tick labels, annotations): no registry key (``w-dbo``, ``hartmann3``) may appear, and the
display names must.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import xarray as xr
from matplotlib.figure import Figure
from matplotlib.text import Text

from tvbo import simulate
from tvbo.algorithms.display import algorithm_labels, benchmark_display_name
from tvbo.analysis import figure_output
from tvbo.analysis.aggregate import AGGREGATES
from tvbo.analysis.compare import write_comparison
from tvbo.analysis.figure_output import FigureOptions
from tvbo.analysis.figures import write_figures
from tvbo.analysis.fit_health import write_fit_health
from tvbo.analysis.paper_figures import write_paper_figures
from tvbo.analysis.parallel_whatif import write_parallel_whatif
from tvbo.analysis.whatif import write_whatif
from tvbo.results.campaign import merge_runs
from tvbo.results.io import write_run

BENCHMARKS = ("hartmann3", "eggholder")
ALGORITHMS = ("gp-ucb", "w-dbo")
SEEDS = (0, 1)
SPEEDS = (1.0, 10.0)
RUN = {"horizon": 8.0, "cost": 2.0, "warmup": 2, "profile": "botorch-i9-laptop"}


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("figure_text")


@pytest.fixture(scope="module")
def campaign(runs_dir: Path) -> xr.Dataset:
    paths = []
    for benchmark in BENCHMARKS:
        for algorithm in ALGORITHMS:
            for seed in SEEDS:
                for speed in SPEEDS:
                    ds = simulate(benchmark, algorithm, seed=seed, speed=speed, **RUN)
                    paths.append(write_run(ds, runs_dir / f"{benchmark}_{algorithm}_{seed}"
                                                          f"_{speed}.nc"))
    return merge_runs(paths)


@pytest.fixture(scope="module")
def parallel_campaign(runs_dir: Path) -> xr.Dataset:
    paths = []
    for algorithm in ALGORITHMS:
        for seed in SEEDS:
            for k, overlap in ((1, False), (2, True)):
                ds = simulate("hartmann3", algorithm, seed=seed, evaluators=k, overlap=overlap,
                              recommendation="latest", **RUN)
                paths.append(write_run(ds, runs_dir / f"par_{algorithm}_{seed}_{k}{overlap:d}.nc"))
    return merge_runs(paths)


@pytest.fixture
def captured(monkeypatch) -> list[tuple[str, Figure]]:
    """Every figure the writers save, with its file stem."""
    figures: list[tuple[str, Figure]] = []
    original = figure_output.FigureOptions.save

    def save(self, fig, outdir, stem):
        figures.append((stem, fig))
        return original(self, fig, outdir, stem)

    monkeypatch.setattr(figure_output.FigureOptions, "save", save)
    return figures


def texts(fig: Figure) -> list[str]:
    """Every non-empty text of ``fig``: titles, labels, tick labels, legends, annotations."""
    out = [t.get_text() for t in fig.findobj(Text) if t.get_text().strip()]
    for ax in fig.axes:  # tick labels are created lazily; ask the axes for them
        out += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
    return out


def _pattern(key: str) -> re.Pattern:
    # a registry key as a whole token (case-sensitive: "BOLT" is a display name, "bolt" a key)
    return re.compile(rf"(?<![\w-]){re.escape(key)}(?![\w-])")


KEYS = [k for k in (*ALGORITHMS, *BENCHMARKS)
        if k not in set(algorithm_labels(ALGORITHMS).values())
        | {benchmark_display_name(b) for b in BENCHMARKS}]


def check_display_names(figures: list[tuple[str, Figure]]) -> None:
    assert figures
    for stem, fig in figures:
        shown = texts(fig)
        for text in shown:
            for key in KEYS:
                assert not _pattern(key).search(text), (stem, key, text)
        joined = "\n".join(shown)
        assert any(benchmark_display_name(b) in joined for b in BENCHMARKS) or stem in {
            "regret_target_ecdf", "normalised_regret"} or "Hartmann-3" in joined, stem


def test_every_campaign_figure_uses_display_names(campaign, captured, tmp_path) -> None:
    options = FigureOptions(dpi=30)
    write_figures(campaign, tmp_path / "figures", options=options)
    write_whatif(campaign, tmp_path / "whatif", options=options)
    write_comparison(campaign, tmp_path / "compare", paper="none", options=options)
    write_fit_health(campaign, tmp_path / "fit", options=options)
    for paper in ("sparq", "boke"):
        write_paper_figures(campaign, tmp_path / paper, paper, options=options)
    stems = [stem for stem, _ in captured]
    assert {"regret_vs_time", "dataset_size_vs_time", "response_time_vs_dataset_size",
            "regret_target_ecdf", "regret_vs_speed", "evaluations_vs_speed",
            "normalised_regret", "lengthscale_time", "sparq_average_regret",
            "boke_simple_regret"} <= set(stems)
    check_display_names(captured)
    legends = "\n".join(t.get_text() for _, f in captured for lg in f.legends
                        for t in lg.get_texts())
    for label in algorithm_labels(ALGORITHMS).values():
        assert label in legends


def test_parallel_figures_use_display_names(parallel_campaign, captured, tmp_path) -> None:
    write_parallel_whatif(parallel_campaign, tmp_path / "parallel",
                          options=FigureOptions(dpi=30))
    assert len(captured) == 2
    check_display_names(captured)
    for _, fig in captured:
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        assert "W-DBO (robust)" in legend and "GP-UCB" in legend
        # the speeds of one benchmark share the y axis, and the band says what it is
        first, *others = fig.axes
        assert all(ax.get_ylim() == first.get_ylim() for ax in others)
        assert "band: ± 1 s.e., over 2 seeds" in fig.get_suptitle()


@pytest.mark.parametrize("fmt,magic", [("png", b"\x89PNG"), ("pdf", b"%PDF"), ("svg", b"<?xml")])
def test_formats_and_styles(campaign, tmp_path, fmt, magic) -> None:
    paper = write_figures(campaign, tmp_path / "paper", options=FigureOptions(format=fmt, dpi=30))
    slides = write_figures(campaign, tmp_path / "slides",
                           options=FigureOptions(format=fmt, dpi=30, style="slides"))
    assert [p.suffix for p in paper] == [f".{fmt}"] * 4
    assert all(p.read_bytes()[:len(magic)] == magic for p in paper + slides)
    if fmt == "svg":  # text stays text (searchable, editable), with the display names
        assert "Hartmann-3" in paper[0].read_text()


def test_slides_are_larger_than_paper(campaign, captured, tmp_path) -> None:
    write_figures(campaign, tmp_path / "p", options=FigureOptions(dpi=30))
    write_figures(campaign, tmp_path / "s", options=FigureOptions(dpi=30, style="slides"))
    paper, slides = captured[:4], captured[4:]
    for (_, p), (_, s) in zip(paper, slides, strict=True):
        assert s.get_size_inches()[0] == pytest.approx(1.45 * p.get_size_inches()[0])


@pytest.mark.parametrize("bad,match", [
    ({"format": "jpg"}, "figure format 'jpg' is not supported; valid: png, pdf, svg"),
    ({"dpi": 0}, "figure dpi must be a positive integer"),
    ({"style": "poster"}, "figure style 'poster' is not known; valid: paper, slides"),
])
def test_bad_options_name_the_problem(bad, match) -> None:
    with pytest.raises(ValueError, match=re.escape(match)):
        FigureOptions(**bad)


def test_every_aggregate_draws_a_labelled_band(campaign, captured, tmp_path) -> None:
    for aggregate in AGGREGATES:
        write_figures(campaign, tmp_path / aggregate, options=FigureOptions(dpi=30),
                      aggregate=aggregate)
    titles = [fig.get_suptitle() for stem, fig in captured if stem == "regret_vs_time"]
    assert titles == ["line: mean, band: ± 1 s.e., over 2 seeds",
                      "line: median, band: IQR (Q1-Q3), over 2 seeds",
                      "line: IQM, band: 95 % bootstrap CI, over 2 seeds"]
