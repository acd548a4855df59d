"""Campaign figures: regret and dataset size over virtual time, response time vs dataset size.

Figures are built on :class:`matplotlib.figure.Figure` directly (no pyplot): nothing is
registered in a global figure manager, so batch jobs do not leak memory and no interactive
backend is ever needed (PNG output goes through the Agg canvas). seaborn supplies the
colour-blind-safe palette and the axes style.

Layout: one panel per benchmark (wrapped after :data:`MAX_COLUMNS`). Each algorithm has its
own colour (seaborn's colour-blind-safe palette), marker and -- when the campaign has one speed
-- line style, so ten algorithms stay apart in print and for colour-blind readers; with several
speeds the line style encodes the speed instead and the marker keeps the algorithm. Curves are
the mean over seeds with a ± one standard error band (``std(ddof=1)/sqrt(n)`` over the seeds
that have a value there). Panels of one benchmark share their x axis; all panels share it when
the benchmarks cover the same time range. The y axis is per panel (scales differ between
benchmarks) and logarithmic when the plotted means span at least :data:`LOG_DECADES` decades
(:func:`choose_log_scale`).

The compute figure (:func:`response_time_vs_dataset_size`) splits the response time
R(n) = c + compute into the compute time of each phase of an iteration (``compute_<phase>``:
fit, acquisition, update, clean, side) against the dataset size n, on log axes, with the
evaluation cost c as a dashed line: R(n) itself is flat whenever c dominates (the quickstart's
0.5 s evaluations), which hides the growth with n the papers are about.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import seaborn as sns
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from tvbo.algorithms.display import benchmark_display_name
from tvbo.analysis.aggregate import DEFAULT_AGGREGATE, band_label, summarise_columns
from tvbo.analysis.context import campaign_labels
from tvbo.analysis.figure_output import FigureOptions, scaled
from tvbo.analysis.metrics import running_time_average
from tvbo.results.schema import ATTRIBUTE_PREFIX, COMPUTE_PREFIX, PRESENT_VARIABLE, RUN_KEYS

MAX_COLUMNS = 4
PANEL_SIZE = (4.2, 3.0)  # inches per panel row
LINESTYLES = ("-", "--", ":", "-.")
#: one line style per algorithm (cycled) when the campaign has a single speed
ALGORITHM_LINESTYLES: tuple = (
    "-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)), (0, (1, 2)),
    (0, (5, 2, 1, 2, 1, 2, 1, 2)), (0, (3, 1, 3, 1, 1, 3)), (0, (2, 1)),
)
#: one marker per algorithm (cycled); drawn every :data:`MARK_EVERY` of the axes diagonal
MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
MARK_EVERY = 0.12
#: a panel's y axis is logarithmic when its plotted (positive) means span this many decades
LOG_DECADES = 2.0
TIME_LABEL = "virtual time [s]"
#: figure name -> file name in the default format (another format swaps the extension)
FIGURE_FILES: dict[str, str] = {
    "regret_vs_time": "regret_vs_time.png",
    "dataset_size_vs_time": "dataset_size_vs_time.png",
    "response_time_vs_dataset_size": "response_time_vs_dataset_size.png",
    "regret_target_ecdf": "regret_target_ecdf.png",
}


def _check_campaign(campaign: xr.Dataset, variables: tuple[str, ...]) -> None:
    missing_keys = [k for k in RUN_KEYS if k not in campaign.dims]
    missing_vars = [v for v in variables if v not in campaign.data_vars]
    if missing_keys or missing_vars:
        raise ValueError(
            f"figure needs run-key dimensions {list(RUN_KEYS)} and variables {list(variables)}; "
            f"missing dimensions {missing_keys}, missing variables {missing_vars}"
        )


def colour_palette(count: int) -> list[tuple[float, float, float]]:
    """seaborn's colour-blind-safe palette with its yellow (9th colour, too faint as a thin
    line on white) replaced by black; cycles beyond ten colours."""
    palette = [tuple(c) for c in sns.color_palette("colorblind", 10)]
    palette[8] = (0.0, 0.0, 0.0)
    return [palette[i % len(palette)] for i in range(max(count, 1))]


class CampaignStyle:
    """Colour per algorithm, line style per speed, and the shared legend handles.

    Shared by every campaign figure (here and in :mod:`tvbo.analysis.paper_figures`), so that an
    algorithm keeps its colour across the figures of one report.
    """

    def __init__(self, campaign: xr.Dataset) -> None:
        self.algorithms = [str(a) for a in campaign["algorithm"].values]
        #: legend names: display name + variant (``W-DBO (robust)``), see campaign_labels
        self.names = campaign_labels(campaign)
        self.speeds = [float(s) for s in campaign["speed"].values]
        palette = colour_palette(len(self.algorithms))
        self.colours = dict(zip(self.algorithms, palette, strict=False))
        self.styles = {s: LINESTYLES[i % len(LINESTYLES)] for i, s in enumerate(self.speeds)}
        count = len(self.algorithms)
        self.markers = {a: MARKERS[i % len(MARKERS)] for i, a in enumerate(self.algorithms)}
        self.algorithm_styles = {
            a: ALGORITHM_LINESTYLES[i % len(ALGORITHM_LINESTYLES)]
            for i, a in enumerate(self.algorithms)
        }
        # markers of different algorithms start at different places along the line
        self.mark_every = {
            a: (MARK_EVERY * i / max(count, 1), MARK_EVERY) for i, a in enumerate(self.algorithms)
        }

    def label(self, algorithm: str, speed: float) -> str:
        name = self.names.get(algorithm, algorithm)
        return name if len(self.speeds) == 1 else f"{name}, speed ×{speed:g}"

    def linestyle(self, algorithm: str, speed: float) -> str | tuple:
        """The algorithm's own line style, or the speed's when the campaign has several."""
        return self.algorithm_styles[algorithm] if len(self.speeds) == 1 else self.styles[speed]

    def kwargs(self, algorithm: str, speed: float) -> dict:
        return {
            "color": self.colours[algorithm],
            "linestyle": self.linestyle(algorithm, speed),
            "marker": self.markers[algorithm],
            "markevery": self.mark_every[algorithm],
            "markersize": 4.5,
            "label": self.label(algorithm, speed),
        }

    def legend(self, fig: Figure, pairs: list[tuple[str, float]] | None = None) -> None:
        """One legend entry per (algorithm, speed) of ``pairs`` (default: all of the campaign)."""
        if pairs is None:
            pairs = [(a, s) for a in self.algorithms for s in self.speeds]
        handles = [Line2D([], [], **self.kwargs(a, s)) for a, s in pairs]
        fig.legend(handles=handles, loc="outside right upper", title="algorithm", frameon=False)


def _panels(
    n_panels: int, rows_per_panel: int, *, sharex: str = "none"
) -> tuple[Figure, list[list[Axes]]]:
    """A constrained-layout figure; ``axes[p][r]`` is row ``r`` of panel ``p``.

    ``sharex``: ``"none"``, ``"panel"`` (the rows of one panel share x) or ``"all"``.
    """
    ncols = min(max(n_panels, 1), MAX_COLUMNS)
    nblocks = math.ceil(max(n_panels, 1) / ncols)
    nrows = nblocks * rows_per_panel
    fig = Figure(figsize=scaled(PANEL_SIZE[0] * ncols + 1.8, PANEL_SIZE[1] * nrows),
                 layout="constrained")
    with sns.axes_style("whitegrid"):
        grid = fig.subplots(nrows, ncols, squeeze=False, sharex=sharex == "all")
    axes = []
    for p in range(n_panels):
        block, col = divmod(p, ncols)
        axes.append([grid[block * rows_per_panel + r][col] for r in range(rows_per_panel)])
        if sharex == "panel":
            for ax in axes[-1][1:]:
                ax.sharex(axes[-1][0])
    for p in range(n_panels, nblocks * ncols):
        block, col = divmod(p, ncols)
        for r in range(rows_per_panel):
            fig.delaxes(grid[block * rows_per_panel + r][col])
    return fig, axes


def _runs(
    campaign: xr.Dataset, variable: str, benchmark: Hashable
) -> Iterator[tuple[str, float, xr.DataArray]]:
    """Per (algorithm, speed): ``variable`` of the existing runs, dims (seed, ...)."""
    for algorithm in campaign["algorithm"].values:
        for speed in campaign["speed"].values:
            cell = {"benchmark": benchmark, "algorithm": algorithm, "speed": speed}
            data = campaign[variable].sel(cell)
            if PRESENT_VARIABLE in campaign:
                present = campaign[PRESENT_VARIABLE].sel(cell).values == 1
                data = data.isel(seed=np.flatnonzero(present))
            if data.sizes["seed"] == 0:
                continue
            yield str(algorithm), float(speed), data


def _time_curves(
    campaign: xr.Dataset, variable: str, benchmark: Hashable, running: bool
) -> list[tuple[str, float, np.ndarray, np.ndarray]]:
    """(algorithm, speed, seeds x time matrix, time) on the benchmark's own part of the grid."""
    series = []
    for algorithm, speed, data in _runs(campaign, variable, benchmark):
        matrix = data.transpose("seed", "time").values.astype(float)
        series.append((algorithm, speed, matrix))
    if not series:
        return []
    time = campaign["time"].values.astype(float)
    used = np.logical_or.reduce([np.isfinite(m).any(axis=0) for _, _, m in series])
    out = []
    for algorithm, speed, matrix in series:
        matrix = matrix[:, used]
        if running:
            matrix = np.vstack([running_time_average(time[used], row) for row in matrix])
        out.append((algorithm, speed, matrix, time[used]))
    return out


def choose_log_scale(values: np.ndarray, decades: float = LOG_DECADES) -> bool:
    """True when the positive finite ``values`` span at least ``decades`` decades.

    The span is measured between the 2nd and the 98th percentile of the positive values, so
    a single near-zero point (a query that hit the optimum) does not switch a panel to a log
    axis; zeros and negatives are ignored (a log axis cannot show them; they are masked).
    """
    values = np.asarray(values, dtype=float).ravel()
    positive = values[np.isfinite(values) & (values > 0)]
    if positive.size < 2:
        return False
    low, high = np.percentile(positive, [2.0, 98.0])
    return bool(low > 0 and math.log10(high / low) >= decades)


def _apply_log_scale(ax: Axes, means: list[np.ndarray]) -> bool:
    """Switch ``ax`` to a log y axis when its curves' means span decades; say if it did.

    On a log axis a band whose lower edge reaches zero or below is drawn down to the bottom of
    the axes (clipped, not hidden); the limits follow the means, not those clipped edges.
    """
    values = np.concatenate([np.ravel(m) for m in means]) if means else np.array([])
    if not choose_log_scale(values):
        return False
    positive = values[np.isfinite(values) & (values > 0)]
    ax.set_yscale("log", nonpositive="clip")
    ax.set_ylim(positive.min() / 1.5, positive.max() * 1.5)
    return True


def _plot_band(
    ax: Axes, x: np.ndarray, matrix: np.ndarray, style: dict, band_alpha: float = 0.2,
    aggregate: str = DEFAULT_AGGREGATE,
) -> tuple[np.ndarray, np.ndarray]:
    """Centre line with its band (:mod:`tvbo.analysis.aggregate`); returns the centre (for
    the log-scale decision) and the number of seeds behind each point (for the band label)."""
    mean, low, high, n = summarise_columns(matrix, aggregate)
    if isinstance(style.get("markevery"), tuple) and len(x) > 0:
        # about 1 / MARK_EVERY markers per line whatever its wiggles (a float markevery counts
        # along the drawn path, which crowds markers on noisy curves)
        start, step = style["markevery"]
        every = max(int(round(len(x) * step)), 1)
        style = {**style, "markevery": (int(round(len(x) * start)) % every, every)}
    ax.plot(x, mean, **style)
    ax.fill_between(x, low, high, color=style["color"], alpha=band_alpha, linewidth=0)
    return mean, n


def _same_time_range(campaign: xr.Dataset, variable: str, benchmarks: list) -> bool:
    """Do all benchmarks have values on the same part of the time grid (same horizon)?"""
    spans = set()
    for benchmark in benchmarks:
        values = campaign[variable].sel(benchmark=benchmark).transpose(..., "time").values
        finite = np.isfinite(values).reshape(-1, values.shape[-1])
        used = np.flatnonzero(finite.any(axis=0))
        spans.add((int(used.min()), int(used.max())) if used.size else None)
    return len(spans) == 1


def _zero_based(ax: Axes) -> None:
    """A linear y axis of non-negative quantities starts at 0 (never at an arbitrary value
    that magnifies the gaps between curves)."""
    if ax.get_yscale() == "linear":
        low, high = ax.get_ylim()
        if low > 0 or (low < 0 and ax.dataLim.y0 >= 0):
            ax.set_ylim(0.0, high)


def _seed_counts(counts: list[np.ndarray]) -> list[int]:
    """The number of seeds behind the curves (their largest count at any point)."""
    return [int(np.max(c)) for c in counts if np.size(c)]


def _time_figure(
    campaign: xr.Dataset,
    variable: str,
    ylabels: tuple[str, ...],
    log_y: bool | None = False,
    aggregate: str = DEFAULT_AGGREGATE,
) -> Figure:
    """Panels per benchmark; ``log_y=None`` decides each axis's scale from its data.

    Every axis has its own y range: benchmarks differ by decades, and a benchmark's running
    average (the tables' metric) spans a fraction of its instantaneous regret's range, so a
    shared axis would flatten exactly the differences the row is there to show. Curves that
    are compared (the algorithms) share an axis by being in one panel; a linear axis of these
    non-negative quantities starts at 0 (:func:`_zero_based`).
    """
    _check_campaign(campaign, (variable,))
    benchmarks = list(campaign["benchmark"].values)
    style = CampaignStyle(campaign)
    full_grid = len(benchmarks) <= MAX_COLUMNS or len(benchmarks) % MAX_COLUMNS == 0
    share = "all" if full_grid and _same_time_range(campaign, variable, benchmarks) else "panel"
    fig, axes = _panels(len(benchmarks), len(ylabels), sharex=share)
    seeds: list[int] = []
    for panel, benchmark in zip(axes, benchmarks, strict=True):
        means: list[list[np.ndarray]] = []
        for row, ax in enumerate(panel):
            curves = _time_curves(campaign, variable, benchmark, running=row == 1)
            # many overlapping bands turn into a grey wash: fainter bands for many curves
            alpha = 0.2 if len(curves) <= 4 else 0.1
            drawn = [
                _plot_band(ax, time, matrix, style.kwargs(algorithm, speed), alpha, aggregate)
                for algorithm, speed, matrix, time in curves
            ]
            means.append([mean for mean, _ in drawn])
            seeds += _seed_counts([n for _, n in drawn])
        for ax, ylabel, row_means in zip(panel, ylabels, means, strict=True):
            if log_y is None:
                if _apply_log_scale(ax, row_means):
                    ylabel += " (log)"
            elif log_y:
                ax.set_yscale("log", nonpositive="mask")
            ax.set_ylabel(ylabel)
            _zero_based(ax)
        panel[0].set_title(benchmark_display_name(str(benchmark)))
        panel[-1].set_xlabel(TIME_LABEL)
    style.legend(fig)
    fig.suptitle(band_label(aggregate, seeds), fontsize="small")
    return fig


def regret_vs_time(campaign: xr.Dataset, *, aggregate: str = DEFAULT_AGGREGATE) -> Figure:
    """Top row: regret of the configuration in force (``regret_held``) over virtual time.

    Bottom row: its running time average ``(1/(t - t0)) * integral_{t0}^{t} regret_held``,
    whose value at the horizon is the time-integrated regret of the tables. Each axis is
    logarithmic when its means span :data:`LOG_DECADES` decades (:func:`choose_log_scale`;
    the y label then ends in "(log)").
    """
    return _time_figure(
        campaign,
        "regret_held",
        ("regret of configuration in force", "running time-average of regret"),
        log_y=None,
        aggregate=aggregate,
    )


def dataset_size_vs_time(
    campaign: xr.Dataset, *, log_y: bool = False, aggregate: str = DEFAULT_AGGREGATE
) -> Figure:
    """Observations held by each algorithm over virtual time (``dataset_size_held``).

    The papers plot this on a log scale (BOLT Fig. 4); pass ``log_y=True`` for that.
    """
    return _time_figure(
        campaign, "dataset_size_held", ("dataset size [observations]",), log_y=log_y,
        aggregate=aggregate,
    )


def response_time_table(campaign: xr.Dataset) -> pd.DataFrame:
    """Post-warm-up (benchmark, algorithm, speed, dataset_size) -> mean response time, n.

    ``dataset_size`` is the size after ingesting the iteration's observation, i.e. the size the
    algorithm works with in the compute that makes up the iteration's response time.
    """
    variables = ("response_time", "dataset_size", "is_warmup")
    _check_campaign(campaign, variables)
    frame = campaign[list(variables)].to_dataframe().reset_index()
    frame = frame[(frame["is_warmup"] == 0)].dropna(subset=["response_time", "dataset_size"])
    grouped = frame.groupby(["benchmark", "algorithm", "speed", "dataset_size"], sort=True)
    return grouped["response_time"].agg(mean="mean", n="count").reset_index()


#: the phases of an iteration in the order they are shown (others follow alphabetically)
PHASE_ORDER: tuple[str, ...] = ("fit", "acquisition", "update", "clean", "side")
TOTAL_PHASE = "total"


def compute_phases(campaign: xr.Dataset) -> list[str]:
    """The compute phases the campaign records (``compute_<phase>``), in :data:`PHASE_ORDER`."""
    recorded = [
        str(v)[len(COMPUTE_PREFIX):] for v in campaign.data_vars
        if str(v).startswith(COMPUTE_PREFIX) and str(v) != COMPUTE_PREFIX + TOTAL_PHASE
    ]
    known = [p for p in PHASE_ORDER if p in recorded]
    return known + sorted(p for p in recorded if p not in PHASE_ORDER)


def compute_time_table(campaign: xr.Dataset) -> pd.DataFrame:
    """Post-warm-up mean compute time per iteration by phase and dataset size.

    Columns: benchmark, algorithm, speed, phase (``total`` and each of :func:`compute_phases`),
    dataset_size, mean (virtual s per iteration, over every seed's iterations at that size; an
    iteration that skipped a phase counts 0, so the mean is what the phase costs on average),
    n (iterations averaged). ``dataset_size`` is the size after ingesting, as in
    :func:`response_time_table`.
    """
    phases = compute_phases(campaign)
    variables = (COMPUTE_PREFIX + TOTAL_PHASE, "dataset_size", "is_warmup")
    _check_campaign(campaign, variables)
    columns = [COMPUTE_PREFIX + TOTAL_PHASE, *(COMPUTE_PREFIX + p for p in phases)]
    frame = campaign[[*columns, "dataset_size", "is_warmup"]].to_dataframe().reset_index()
    if PRESENT_VARIABLE in campaign:
        present = campaign[PRESENT_VARIABLE].to_dataframe().reset_index()
        frame = frame.merge(present[present[PRESENT_VARIABLE] == 1][list(RUN_KEYS)],
                            on=list(RUN_KEYS))
    frame = frame[frame["is_warmup"] == 0].dropna(subset=["dataset_size", columns[0]])
    long = frame.melt(
        id_vars=["benchmark", "algorithm", "speed", "dataset_size"], value_vars=columns,
        var_name="phase", value_name="compute",
    )
    long["phase"] = long["phase"].str.slice(len(COMPUTE_PREFIX))
    long["compute"] = long["compute"].fillna(0.0)
    grouped = long.groupby(["benchmark", "algorithm", "speed", "phase", "dataset_size"],
                           sort=True)["compute"]
    table = grouped.agg(mean="mean", n="count").reset_index()
    order = {p: i for i, p in enumerate([TOTAL_PHASE, *phases])}
    table = table.sort_values(
        ["benchmark", "algorithm", "speed"], kind="stable"
    ).sort_values("phase", key=lambda col: col.map(order), kind="stable")
    return table.reset_index(drop=True)


#: the compute figure averages dataset sizes within bins this many per decade (log-spaced)
BINS_PER_DECADE = 8


def log_binned(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`compute_time_table` averaged within log-spaced dataset-size bins.

    Per-size means are noisy (a few iterations each) and crowd a log axis at large n; within a
    bin (:data:`BINS_PER_DECADE` per decade) the mean is weighted by the iterations behind each
    size, and ``dataset_size`` becomes the bin's iteration-weighted mean size.
    """
    frame = table[table["dataset_size"] > 0].copy()
    frame["bin"] = np.floor(np.log10(frame["dataset_size"]) * BINS_PER_DECADE).astype(int)
    frame["weighted_mean"] = frame["mean"] * frame["n"]
    frame["weighted_size"] = frame["dataset_size"] * frame["n"]
    keys = ["benchmark", "algorithm", "speed", "phase", "bin"]
    grouped = frame.groupby(keys, sort=False)[["weighted_mean", "weighted_size", "n"]].sum()
    grouped["mean"] = grouped["weighted_mean"] / grouped["n"]
    grouped["dataset_size"] = grouped["weighted_size"] / grouped["n"]
    out = grouped.reset_index()[["benchmark", "algorithm", "speed", "phase", "dataset_size",
                                 "mean", "n"]]
    return out.sort_values([*keys[:4], "dataset_size"], kind="stable").reset_index(drop=True)


def evaluation_costs(campaign: xr.Dataset) -> dict[str, float]:
    """Benchmark -> evaluation cost c (s) recorded by its runs (the largest if they differ)."""
    costs: dict[str, float] = {}
    variable = ATTRIBUTE_PREFIX + "cost"
    for benchmark in campaign["benchmark"].values:
        if variable in campaign.data_vars:
            values = campaign[variable].sel(benchmark=benchmark).values.astype(float)
            finite = values[np.isfinite(values)]
            if finite.size:
                costs[str(benchmark)] = float(finite.max())
        elif "cost" in campaign.attrs:
            costs[str(benchmark)] = float(campaign.attrs["cost"])
    return costs


def dominance_note(table: pd.DataFrame, cost: float | None) -> str:
    """One line: does the evaluation cost c or the compute dominate R(n) = c + compute?

    Looks at the ``total`` rows of one benchmark of :func:`compute_time_table`: the smallest
    dataset size at which some algorithm's mean compute per iteration exceeds c.
    """
    total = table[table["phase"] == TOTAL_PHASE]
    if cost is None or not math.isfinite(cost) or total.empty:
        return ""
    above = total[total["mean"] > cost]
    if above.empty:
        return f"c = {cost:g} s dominates at every n (compute ≤ c)"
    first = above.sort_values("dataset_size").iloc[0]
    return f"compute > c = {cost:g} s from n = {int(first['dataset_size'])}"


def response_time_vs_dataset_size(campaign: xr.Dataset) -> Figure:
    """What the response time R(n) = c + compute is made of, against the dataset size n.

    One row per benchmark, one column per phase: ``total`` (the compute of the whole
    iteration) and each recorded phase (:func:`compute_phases`), mean compute time per
    post-warm-up iteration at each dataset size (:func:`compute_time_table`), log-log axes
    shared by all panels so phases compare with each other and with the evaluation cost c
    (dashed line). The total panel says from which n the compute exceeds c
    (:func:`dominance_note`): below that, c dominates R(n), which is then flat in n.
    """
    table = compute_time_table(campaign)
    binned = log_binned(table)
    phases = [TOTAL_PHASE, *compute_phases(campaign)]
    benchmarks = [str(b) for b in campaign["benchmark"].values]
    costs = evaluation_costs(campaign)
    style = CampaignStyle(campaign)
    fig = Figure(
        figsize=scaled(3.0 * len(phases) + 1.8, 2.6 * len(benchmarks) + 0.4),
        layout="constrained",
    )
    with sns.axes_style("whitegrid"):
        grid = fig.subplots(len(benchmarks), len(phases), squeeze=False, sharex=True,
                            sharey=True)
    for row, benchmark in enumerate(benchmarks):
        rows = binned[binned["benchmark"] == benchmark]
        cost = costs.get(benchmark)
        for col, phase in enumerate(phases):
            ax = grid[row][col]
            part = rows[(rows["phase"] == phase) & (rows["mean"] > 0)]
            for (algorithm, speed), group in part.groupby(["algorithm", "speed"], sort=False):
                kwargs = {**style.kwargs(str(algorithm), float(speed)),
                          "markevery": None, "markersize": 3.5, "linewidth": 1.2}
                ax.plot(group["dataset_size"], group["mean"], **kwargs)
            if cost is not None:
                ax.axhline(cost, color="black", linestyle="--", linewidth=1.0,
                           label="evaluation cost c")
            ax.set_xscale("log")
            ax.set_yscale("log", nonpositive="mask")
            if row == 0:
                ax.set_title("compute per iteration" if phase == TOTAL_PHASE else phase)
            if col == 0:
                ax.set_ylabel(f"{benchmark_display_name(benchmark)}\n[virtual s / iteration]")
            if row == len(benchmarks) - 1:
                ax.set_xlabel("dataset size n")
            if phase == TOTAL_PHASE:
                note = dominance_note(table[table["benchmark"] == benchmark], cost)
                if note:
                    ax.text(0.03, 0.97, note, transform=ax.transAxes, ha="left", va="top",
                            fontsize=7, bbox={"facecolor": "white", "alpha": 0.8,
                                              "linewidth": 0})
    handles = [Line2D([], [], **{**style.kwargs(a, s), "markevery": None})
               for a in style.algorithms for s in style.speeds]
    handles.append(Line2D([], [], color="black", linestyle="--", label="evaluation cost c"))
    fig.legend(handles=handles, loc="outside right upper", title="algorithm", frameon=False)
    fig.suptitle("R(n) = c + compute: compute time per phase vs dataset size (post-warm-up "
                 f"means in {BINS_PER_DECADE} log bins per decade; log-log)", fontsize=10)
    return fig


#: default regret targets of the ECDF figure: these quantiles of each benchmark's pooled
#: post-warm-up regret (all algorithms, seeds and times), from easy to hard
ECDF_TARGET_QUANTILES: tuple[float, ...] = (0.5, 0.25, 0.1, 0.05, 0.01)


def _after_warmup(campaign: xr.Dataset) -> xr.DataArray:
    """``regret_held`` with every time up to the end of the run's warm-up masked (NaN).

    The warm-up queries are uniform random draws, the same for every algorithm of a seed: a
    target they happen to hit says nothing about the algorithm, so the profile starts after
    them (the last warm-up sample, ``t_sample`` of the last ``is_warmup`` iteration).
    """
    held = campaign["regret_held"]
    if "is_warmup" not in campaign or "t_sample" not in campaign:
        return held
    warm = campaign["t_sample"].where(campaign["is_warmup"] == 1)
    end = warm.max("iteration", skipna=True).fillna(-np.inf)
    return held.where(campaign["time"] > end)


def regret_targets(campaign: xr.Dataset, quantiles: tuple[float, ...] = ECDF_TARGET_QUANTILES
                   ) -> dict[str, np.ndarray]:
    """Benchmark -> its regret targets (:data:`ECDF_TARGET_QUANTILES` of its pooled regret).

    Why quantiles of the campaign's own regrets and not fixed numbers (COCO's 10^-8 ... 10^2):
    regret scales differ by decades between benchmarks, and a tracking problem never reaches
    10^-8; quantiles make every benchmark contribute targets of the same difficulty for *this*
    set of algorithms (a target is reached by a fraction q of all (algorithm, seed, time)
    points), which is what a performance profile compares.
    """
    _check_campaign(campaign, ("regret_held",))
    held = _after_warmup(campaign)
    targets = {}
    for benchmark in campaign["benchmark"].values:
        values = held.sel(benchmark=benchmark).values.astype(float).ravel()
        values = values[np.isfinite(values)]
        if values.size:
            targets[str(benchmark)] = np.quantile(values, quantiles)
    return targets


def regret_target_ecdf_table(
    campaign: xr.Dataset, quantiles: tuple[float, ...] = ECDF_TARGET_QUANTILES
) -> pd.DataFrame:
    """Fraction of (benchmark, seed, target) problems solved by each time, per algorithm.

    A problem is solved at the first time after the warm-up (:func:`_after_warmup`) the regret
    of the configuration in force (``regret_held``) is at or below the target (COCO's first
    hitting time; a time-varying regret may rise again, the ECDF counts the first hit, as
    IOHanalyzer's fixed-target view does). Columns: algorithm, speed, time, fraction,
    problems.
    """
    targets = regret_targets(campaign, quantiles)
    held = _after_warmup(campaign)
    time = campaign["time"].values.astype(float)
    rows = []
    for algorithm in campaign["algorithm"].values:
        for speed in campaign["speed"].values:
            hits: list[float] = []
            for benchmark, levels in targets.items():
                cell = {"benchmark": benchmark, "algorithm": algorithm, "speed": speed}
                data = held.sel(cell)
                if PRESENT_VARIABLE in campaign:
                    present = campaign[PRESENT_VARIABLE].sel(cell).values == 1
                    data = data.isel(seed=np.flatnonzero(present))
                matrix = data.transpose("seed", "time").values.astype(float)
                for row in matrix:
                    for level in levels:
                        reached = np.flatnonzero(np.isfinite(row) & (row <= level))
                        hits.append(float(time[reached[0]]) if reached.size else math.inf)
            if not hits:
                continue
            hits_array = np.asarray(hits)
            fraction = (hits_array[None, :] <= time[:, None]).mean(axis=1)
            rows.append(pd.DataFrame({
                "algorithm": str(algorithm), "speed": float(speed), "time": time,
                "fraction": fraction, "problems": len(hits),
            }))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(
        columns=["algorithm", "speed", "time", "fraction", "problems"])


def regret_target_ecdf(
    campaign: xr.Dataset, quantiles: tuple[float, ...] = ECDF_TARGET_QUANTILES
) -> Figure:
    """Performance profile: the share of (benchmark, seed, target) problems each algorithm has
    solved (regret reached the target) against virtual time (:func:`regret_target_ecdf_table`).

    Higher and further left is better; the curve's height at the horizon is the share ever
    solved. One curve per algorithm (and speed), all problems pooled, y axis from 0 to 1.
    """
    table = regret_target_ecdf_table(campaign, quantiles)
    style = CampaignStyle(campaign)
    fig = Figure(figsize=scaled(7.4, 4.4), layout="constrained")
    with sns.axes_style("whitegrid"):
        ax = fig.subplots()
    for (algorithm, speed), group in table.groupby(["algorithm", "speed"], sort=False):
        kwargs = {**style.kwargs(str(algorithm), float(speed)), "markevery": None,
                  "marker": None}
        ax.step(group["time"], group["fraction"], where="post", **kwargs)
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel(TIME_LABEL)
    ax.set_ylabel("fraction of problems solved")
    problems = int(table["problems"].max()) if not table.empty else 0
    benchmarks = [benchmark_display_name(str(b)) for b in campaign["benchmark"].values]
    fig.suptitle(
        f"{problems} (benchmark, seed, target) problems per algorithm; benchmarks: "
        f"{', '.join(benchmarks)}\nsolved = regret after the warm-up ≤ target; targets = "
        "q-quantiles of the benchmark's pooled regret, q = "
        + ", ".join(f"{q:g}" for q in quantiles),
        fontsize="small",
    )
    handles = [Line2D([], [], **{**style.kwargs(a, s), "markevery": None, "marker": None})
               for a in style.algorithms for s in style.speeds]
    # centred: at the top the two-line suptitle would overlap the legend's title
    fig.legend(handles=handles, loc="outside right center", title="algorithm", frameon=False)
    return fig


def write_figures(
    campaign: xr.Dataset,
    outdir: str | Path,
    *,
    options: FigureOptions | None = None,
    aggregate: str = DEFAULT_AGGREGATE,
) -> list[Path]:
    """Save the campaign figures under ``outdir`` (names :data:`FIGURE_FILES`, the format,
    resolution and style of ``options``; curves aggregated by ``aggregate``)."""
    options = options or FigureOptions()
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    makers = {
        "regret_vs_time": lambda c: regret_vs_time(c, aggregate=aggregate),
        "dataset_size_vs_time": lambda c: dataset_size_vs_time(c, aggregate=aggregate),
        "response_time_vs_dataset_size": response_time_vs_dataset_size,
        "regret_target_ecdf": regret_target_ecdf,
    }
    written = []
    with options.context():
        for name, make in makers.items():
            written.append(options.save(make(campaign), outdir, Path(FIGURE_FILES[name]).stem))
    return written
