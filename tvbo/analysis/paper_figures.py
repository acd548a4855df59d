"""Figures that correspond to the seed papers' own figures, with the numbers behind them.

The campaign figures (:mod:`tvbo.analysis.figures`) plot regret over *virtual time*, tvbo's own
view. The papers plot other things, and a reproduction is judged against them:

* **SparQ-GP-UCB** (Mauduit, Berthier & Simonetto; Figs. 1-2): the *average regret*
  ``R_t / t = (1/t) sum_{i <= t} r_i`` over steps, mean and a +- one *standard deviation* band
  over the realisations (the paper's "mean and standard deviation over 40 runs"), one line per
  algorithm -- :func:`sparq_figure`.
* **PE-GP-UCB** (Ziomek, Adachi & Osborne; Figs. 2 and 4): cumulative regret (toy problem,
  Fig. 2a) and average regret (Intel, Fig. 4a) over steps, mean +- one *standard error* over
  seeds -- :func:`pegpucb_regret_figure`; and the proportion of the steps in which each
  algorithm used each candidate prior (Figs. 2b, 4b), read from the run files'
  ``state_selected_prior`` -- :func:`prior_selection_figure`.
* **BOKE** (Zhu et al.; Figs. 6-8): *simple regret* ``min_{i <= k} r_i`` (= f* - best f so far
  on a static objective) against the iteration and against the CPU time, i.e. the cumulative
  virtual compute time ``sum_{i <= k} compute_total_i`` the algorithm was charged; the x value of
  step k is its mean over seeds (the paper's "average CPU time"), the band +- one standard error
  of the simple regret -- :func:`boke_figure`. A dashed line marks the end of the warm-up (the
  paper's initial LHS design).

Steps count every query of a run, warm-up included (the papers' sums start at t = 1 and their
initial designs appear in the plots); runs of different lengths contribute to the steps they
have (the ``n`` column says how many). Every figure function returns ``(figure, frame)``: the
frame holds exactly the plotted numbers, so tests and notes can quote them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from tvbo.algorithms.display import benchmark_display_name
from tvbo.analysis.aggregate import mean_se_columns
from tvbo.analysis.figure_output import FigureOptions
from tvbo.analysis.figures import CampaignStyle, _panels
from tvbo.results.schema import PRESENT_VARIABLE, RUN_KEYS

__all__ = [
    "CURVES",
    "PAPERS",
    "PAPER_ALGORITHMS",
    "PAPER_FILES",
    "check_paper_algorithms",
    "boke_figure",
    "pegpucb_regret_figure",
    "prior_selection",
    "prior_selection_figure",
    "sparq_figure",
    "step_curves",
    "write_paper_figures",
]

PAPERS: tuple[str, ...] = ("sparq", "pegpucb", "boke")
#: the algorithm(s) a paper's figures are about: without one of them, the figures would show only
#: baselines in that paper's layout, which reads as a result of the paper's algorithm
PAPER_ALGORITHMS: dict[str, tuple[str, ...]] = {
    "sparq": ("sparq-gp-ucb",),
    "pegpucb": ("pe-gp-ucb",),
    "boke": ("boke", "boke-plus"),
}


def check_paper_algorithms(paper: str, algorithms: Iterable[str], where: str) -> None:
    """Refuse ``paper``'s figures for ``where`` (a campaign file or a config) whose
    ``algorithms`` (registry names or presets) hold none of the paper's own algorithms."""
    wanted = PAPER_ALGORITHMS[paper]
    present = sorted({str(a) for a in algorithms if a})
    if not set(wanted) & set(present):
        raise ValueError(
            f"{where}: the {paper} figures show {' or '.join(wanted)} against its baselines, but "
            f"it has no run of it (algorithms: {', '.join(present) or 'none'}); add "
            f"{wanted[0]} to the algorithms or leave {paper} out"
        )
#: files written per paper by :func:`write_paper_figures` (the workflow declares these outputs)
PAPER_FILES: dict[str, tuple[str, ...]] = {
    "sparq": ("sparq_average_regret.png", "sparq_average_regret.csv"),
    "pegpucb": (
        "pegpucb_regret.png",
        "pegpucb_regret.csv",
        "pegpucb_prior_selection.png",
        "pegpucb_prior_selection.csv",
    ),
    "boke": ("boke_simple_regret.png", "boke_simple_regret.csv"),
}
#: per-run curves over steps: name -> (description, transform of the run's regret sequence)
CURVES: dict[str, str] = {
    "average": "average regret R_t / t",
    "cumulative": "cumulative regret R_t",
    "simple": "simple regret min_{i<=t} r_i",
}
SELECTED_PRIOR = "state_selected_prior"
SERIES_KEYS: tuple[str, ...] = ("benchmark", "algorithm", "speed")


# -- reading the campaign ---------------------------------------------------------------------
def _check(campaign: xr.Dataset, variables: tuple[str, ...]) -> None:
    missing_dims = [k for k in (*RUN_KEYS, "iteration") if k not in campaign.dims]
    missing = [v for v in variables if v not in campaign.data_vars]
    if missing_dims or missing:
        raise ValueError(
            f"paper figures need a campaign with dimensions {[*RUN_KEYS, 'iteration']} and "
            f"variables {list(variables)}; missing dimensions {missing_dims}, missing variables "
            f"{missing}"
        )


def _runs(
    campaign: xr.Dataset, variables: tuple[str, ...]
) -> Iterator[tuple[str, str, float, dict[str, np.ndarray]]]:
    """Per existing run: (benchmark, algorithm, speed, {variable: values at its real queries}).

    A real query has a finite ``is_warmup`` (campaign padding of ragged runs is NaN there).
    """
    for benchmark in campaign["benchmark"].values:
        for algorithm in campaign["algorithm"].values:
            for speed in campaign["speed"].values:
                for seed in campaign["seed"].values:
                    cell = {"benchmark": benchmark, "algorithm": algorithm, "speed": speed,
                            "seed": seed}
                    if PRESENT_VARIABLE in campaign and campaign[PRESENT_VARIABLE].sel(cell) != 1:
                        continue
                    warm = campaign["is_warmup"].sel(cell).values.astype(float)
                    real = np.isfinite(warm)
                    if not real.any():
                        continue
                    values = {"is_warmup": warm[real]}
                    for name in variables:
                        values[name] = campaign[name].sel(cell).values.astype(float)[real]
                    yield str(benchmark), str(algorithm), float(speed), values


def _transform(regret: np.ndarray, curve: str) -> np.ndarray:
    if curve == "average":
        return np.cumsum(regret) / np.arange(1, regret.size + 1)
    if curve == "cumulative":
        return np.cumsum(regret)
    if curve == "simple":
        return np.minimum.accumulate(regret)
    raise ValueError(f"unknown curve {curve!r}; valid curves: {', '.join(CURVES)}")


def _aggregate(rows: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Step-wise mean, std (ddof 1), standard error and count over ragged rows
    (:func:`tvbo.analysis.aggregate.mean_se_columns`)."""
    length = max(r.size for r in rows)
    matrix = np.full((len(rows), length), np.nan)
    for i, r in enumerate(rows):
        matrix[i, : r.size] = r
    mean, std, se, n = mean_se_columns(matrix)
    return {"mean": mean, "std": std, "se": se, "n": n}


def step_curves(campaign: xr.Dataset, curve: str = "average") -> pd.DataFrame:
    """Per (benchmark, algorithm, speed, step): mean, std, se and n over seeds of ``curve``.

    ``curve`` is ``average`` (R_t / t), ``cumulative`` (R_t) or ``simple`` (min regret so far)
    of the per-query regret ``f* - f`` (see :data:`CURVES`). Steps start at 1 and count every
    query, warm-up included. Columns: benchmark, algorithm, speed, curve, step, mean, std, se, n.
    """
    if curve not in CURVES:
        raise ValueError(f"unknown curve {curve!r}; valid curves: {', '.join(CURVES)}")
    _check(campaign, ("regret", "is_warmup"))
    groups: dict[tuple[str, str, float], list[np.ndarray]] = {}
    for benchmark, algorithm, speed, values in _runs(campaign, ("regret",)):
        groups.setdefault((benchmark, algorithm, speed), []).append(
            _transform(values["regret"], curve)
        )
    frames = []
    for (benchmark, algorithm, speed), rows in groups.items():
        stats = _aggregate(rows)
        frame = pd.DataFrame(stats)
        frame.insert(0, "step", np.arange(1, len(frame) + 1))
        frame.insert(0, "curve", curve)
        frame.insert(0, "speed", speed)
        frame.insert(0, "algorithm", algorithm)
        frame.insert(0, "benchmark", benchmark)
        frames.append(frame)
    if not frames:
        raise ValueError("the campaign holds no run with at least one query")
    return pd.concat(frames, ignore_index=True)


# -- drawing ----------------------------------------------------------------------------------


def _series(frame: pd.DataFrame, benchmark: str) -> Iterator[tuple[str, float, pd.DataFrame]]:
    rows = frame[frame["benchmark"] == benchmark]
    for (algorithm, speed), group in rows.groupby(["algorithm", "speed"], sort=False):
        yield str(algorithm), float(speed), group


def _band(ax: Axes, x: np.ndarray, group: pd.DataFrame, spread: str, style: dict) -> None:
    mean = group["mean"].to_numpy(float)
    half = group[spread].to_numpy(float)
    ax.plot(x, mean, **style)
    ax.fill_between(x, mean - half, mean + half, color=style["color"], alpha=0.2, linewidth=0)


def _pairs(frame: pd.DataFrame) -> list[tuple[str, float]]:
    return list(dict.fromkeys(zip(frame["algorithm"], frame["speed"], strict=True)))


def _step_figure(
    campaign: xr.Dataset, curves: tuple[str, ...], spread: str, ylabels: tuple[str, ...]
) -> tuple[Figure, pd.DataFrame]:
    frame = pd.concat([step_curves(campaign, c) for c in curves], ignore_index=True)
    benchmarks = list(dict.fromkeys(frame["benchmark"]))
    style = CampaignStyle(campaign)
    fig, axes = _panels(len(benchmarks), len(curves))
    for panel, benchmark in zip(axes, benchmarks, strict=True):
        for ax, curve, ylabel in zip(panel, curves, ylabels, strict=True):
            part = frame[frame["curve"] == curve]
            for algorithm, speed, group in _series(part, benchmark):
                _band(ax, group["step"].to_numpy(float), group, spread,
                      style.kwargs(algorithm, speed))
            ax.set_ylabel(ylabel)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        panel[0].set_title(benchmark_display_name(benchmark))
        panel[-1].set_xlabel("step t (queries)")
    style.legend(fig, _pairs(frame))
    return fig, frame


def sparq_figure(campaign: xr.Dataset) -> tuple[Figure, pd.DataFrame]:
    """SparQ-GP-UCB Figs. 1-2: average regret R_t / t over steps, mean +- one std over seeds."""
    return _step_figure(campaign, ("average",), "std", ("average regret R_t / t (mean ± std)",))


def pegpucb_regret_figure(campaign: xr.Dataset) -> tuple[Figure, pd.DataFrame]:
    """PE-GP-UCB Figs. 2a / 4a: cumulative and average regret over steps, mean +- one s.e."""
    return _step_figure(
        campaign,
        ("cumulative", "average"),
        "se",
        ("cumulative regret R_t (mean ± s.e.)", "average regret R_t / t (mean ± s.e.)"),
    )


# -- prior selection (PE-GP-UCB Figs. 2b, 4b) -------------------------------------------------
def prior_selection(campaign: xr.Dataset) -> pd.DataFrame:
    """How often each algorithm used each candidate prior, over all post-warm-up steps and seeds.

    Reads ``state_selected_prior`` (the prior whose UCB chose the query; for the fully Bayesian
    baseline the prior of highest posterior weight). Algorithms that never record a prior
    (random search, or algorithms without a prior set) are left out. Every prior index
    ``0 .. max`` appears for every algorithm, with count 0 when unused. Columns: benchmark,
    algorithm, speed, prior, count, proportion (count / selections of that series).
    """
    _check(campaign, ("is_warmup",))
    if SELECTED_PRIOR not in campaign.data_vars:
        raise ValueError(
            f"the campaign does not record {SELECTED_PRIOR!r}: no algorithm with a set of "
            "candidate priors (pe-gp-ucb, mle-prior, bayes-prior, regret-balancing) was run"
        )
    counts: dict[tuple[str, str, float], np.ndarray] = {}
    for benchmark, algorithm, speed, values in _runs(campaign, (SELECTED_PRIOR,)):
        chosen = values[SELECTED_PRIOR][(values["is_warmup"] == 0)]
        chosen = chosen[np.isfinite(chosen) & (chosen >= 0)]
        if chosen.size == 0:
            continue
        if np.any(chosen != np.round(chosen)):
            raise ValueError(f"{SELECTED_PRIOR} holds non-integer prior indices for {algorithm}")
        key = (benchmark, algorithm, speed)
        found = np.bincount(chosen.astype(int))
        old = counts.get(key, np.zeros(0, int))
        size = max(old.size, found.size)
        counts[key] = np.pad(old, (0, size - old.size)) + np.pad(found, (0, size - found.size))
    if not counts:
        raise ValueError(f"no run of the campaign selected a prior ({SELECTED_PRIOR} is empty)")
    n_priors = max(c.size for c in counts.values())
    records = []
    for (benchmark, algorithm, speed), c in counts.items():
        c = np.pad(c, (0, n_priors - c.size))
        for prior, count in enumerate(c):
            records.append(
                {"benchmark": benchmark, "algorithm": algorithm, "speed": speed, "prior": prior,
                 "count": int(count), "proportion": float(count / c.sum())}
            )
    return pd.DataFrame.from_records(records)


def prior_selection_figure(campaign: xr.Dataset) -> tuple[Figure, pd.DataFrame]:
    """Grouped bars: proportion of steps in which each algorithm used each prior."""
    frame = prior_selection(campaign)
    benchmarks = list(dict.fromkeys(frame["benchmark"]))
    style = CampaignStyle(campaign)
    fig, axes = _panels(len(benchmarks), 1)
    pairs = _pairs(frame)
    width = 0.8 / len(pairs)
    for (ax,), benchmark in zip(axes, benchmarks, strict=True):
        for i, (algorithm, speed) in enumerate(pairs):
            group = frame[
                (frame["benchmark"] == benchmark)
                & (frame["algorithm"] == algorithm)
                & (frame["speed"] == speed)
            ]
            if group.empty:
                continue
            kwargs = style.kwargs(algorithm, speed)
            ax.bar(group["prior"].to_numpy() - 0.4 + (i + 0.5) * width, group["proportion"],
                   width=width, color=kwargs["color"], label=kwargs["label"])
        ax.set_title(benchmark_display_name(benchmark))
        ax.set_xlabel("candidate prior (index)")
        ax.set_ylabel("proportion of steps")
        ax.set_xticks(sorted(frame["prior"].unique()))
    handles = [
        Line2D([], [], color=style.colours[a], linewidth=6, label=style.label(a, s))
        for a, s in pairs
    ]
    fig.legend(handles=handles, loc="outside right upper", title="algorithm", frameon=False)
    return fig, frame


# -- BOKE (Figs. 6-8) -------------------------------------------------------------------------
def boke_curves(campaign: xr.Dataset) -> pd.DataFrame:
    """Simple regret per step with the mean cumulative CPU time of that step.

    Columns: those of :func:`step_curves` (curve ``simple``) plus ``cpu_time_mean`` and
    ``cpu_time_se`` -- the cumulative virtual compute time ``sum_{i <= k} compute_total_i``
    (seconds) at step k, over the seeds that have step k -- and ``warmup`` (the number of
    warm-up queries of the series' runs, the largest if they differ).
    """
    _check(campaign, ("regret", "is_warmup", "compute_total"))
    frame = step_curves(campaign, "simple")
    cpu: dict[tuple[str, str, float], list[np.ndarray]] = {}
    warm: dict[tuple[str, str, float], int] = {}
    for benchmark, algorithm, speed, values in _runs(campaign, ("compute_total",)):
        key = (benchmark, algorithm, speed)
        cpu.setdefault(key, []).append(np.cumsum(values["compute_total"]))
        warm[key] = max(warm.get(key, 0), int(np.sum(values["is_warmup"] == 1)))
    parts = []
    for key, group in frame.groupby(list(SERIES_KEYS), sort=False):
        key = (str(key[0]), str(key[1]), float(key[2]))
        stats = _aggregate(cpu[key])
        group = group.copy()
        group["cpu_time_mean"] = stats["mean"][: len(group)]
        group["cpu_time_se"] = stats["se"][: len(group)]
        group["warmup"] = warm[key]
        parts.append(group)
    return pd.concat(parts, ignore_index=True)


def boke_figure(campaign: xr.Dataset) -> tuple[Figure, pd.DataFrame]:
    """BOKE Figs. 6-8: simple regret vs iteration (top) and vs mean CPU time (bottom), log y."""
    frame = boke_curves(campaign)
    benchmarks = list(dict.fromkeys(frame["benchmark"]))
    style = CampaignStyle(campaign)
    fig, axes = _panels(len(benchmarks), 2)
    for (top, bottom), benchmark in zip(axes, benchmarks, strict=True):
        for algorithm, speed, group in _series(frame, benchmark):
            kwargs = style.kwargs(algorithm, speed)
            _band(top, group["step"].to_numpy(float), group, "se", kwargs)
            _band(bottom, group["cpu_time_mean"].to_numpy(float), group, "se", kwargs)
        warmup = int(frame.loc[frame["benchmark"] == benchmark, "warmup"].max())
        if warmup > 0:
            top.axvline(warmup + 0.5, color="grey", linestyle="--", linewidth=1)
        for ax in (top, bottom):
            ax.set_yscale("log", nonpositive="clip")
            ax.set_ylabel("simple regret (mean ± s.e.)")
        top.set_title(benchmark_display_name(benchmark))
        top.xaxis.set_major_locator(MaxNLocator(integer=True))
        top.set_xlabel("iteration (queries; dashed: end of warm-up)")
        bottom.set_xlabel("cumulative CPU time [virtual s] (mean over seeds)")
    style.legend(fig, _pairs(frame))
    return fig, frame


# -- writing ----------------------------------------------------------------------------------
def write_paper_figures(
    campaign: xr.Dataset, outdir: str | Path, paper: str, *,
    options: FigureOptions | None = None,
) -> list[Path]:
    """Write ``paper``'s figures (format, dpi and style of ``options``) and their numbers (CSV)
    under ``outdir``.

    File names are those of :data:`PAPER_FILES` (the figures' extension is the format's);
    returns the written paths in that order.
    """
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; valid papers: {', '.join(PAPERS)}")
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    makers = {
        "sparq": (sparq_figure,),
        "pegpucb": (pegpucb_regret_figure, prior_selection_figure),
        "boke": (boke_figure,),
    }[paper]
    names = PAPER_FILES[paper]
    options = options or FigureOptions()
    written = []
    for make, (png, csv) in zip(makers, zip(names[::2], names[1::2], strict=True), strict=True):
        with options.context():
            fig, frame = make(campaign)
            figure = options.save(fig, outdir, Path(png).stem)
        frame.to_csv(outdir / csv, index=False)
        written += [figure, outdir / csv]
    return written
