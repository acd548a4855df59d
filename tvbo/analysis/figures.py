"""Campaign figures: regret and dataset size over virtual time, response time vs dataset size.

Figures are built on :class:`matplotlib.figure.Figure` directly (no pyplot): nothing is
registered in a global figure manager, so batch jobs do not leak memory and no interactive
backend is ever needed (PNG output goes through the Agg canvas). seaborn supplies the
colour-blind-safe palette and the axes style.

Layout: one panel per benchmark (wrapped after :data:`MAX_COLUMNS`), colour = algorithm,
line style = speed when a campaign has several speeds. Curves are the mean over seeds with a
± one standard error band (``std(ddof=1)/sqrt(n)`` over the seeds that have a value there).
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

from tvbo.analysis.metrics import running_time_average
from tvbo.results.campaign import PRESENT_VARIABLE
from tvbo.results.schema import RUN_KEYS

MAX_COLUMNS = 4
PANEL_SIZE = (4.2, 3.0)  # inches per panel row
LINESTYLES = ("-", "--", ":", "-.")
TIME_LABEL = "virtual time [s]"
FIGURE_FILES: dict[str, str] = {
    "regret_vs_time": "regret_vs_time.png",
    "dataset_size_vs_time": "dataset_size_vs_time.png",
    "response_time_vs_dataset_size": "response_time_vs_dataset_size.png",
}


def _check_campaign(campaign: xr.Dataset, variables: tuple[str, ...]) -> None:
    missing_keys = [k for k in RUN_KEYS if k not in campaign.dims]
    missing_vars = [v for v in variables if v not in campaign.data_vars]
    if missing_keys or missing_vars:
        raise ValueError(
            f"figure needs run-key dimensions {list(RUN_KEYS)} and variables {list(variables)}; "
            f"missing dimensions {missing_keys}, missing variables {missing_vars}"
        )


def _mean_se(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column-wise mean and standard error over finite rows (NaN where no / one value)."""
    finite = np.isfinite(matrix)
    n = finite.sum(axis=0)
    filled = np.where(finite, matrix, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=0) / n
        squares = np.where(finite, (matrix - mean) ** 2, 0.0).sum(axis=0)
        se = np.sqrt(squares / (n - 1)) / np.sqrt(n)
    mean[n == 0] = np.nan
    se[n < 2] = np.nan
    return mean, se


class CampaignStyle:
    """Colour per algorithm, line style per speed, and the shared legend handles.

    Shared by every campaign figure (here and in :mod:`tvbo.analysis.paper_figures`), so that an
    algorithm keeps its colour across the figures of one report.
    """

    def __init__(self, campaign: xr.Dataset) -> None:
        from tvbo.analysis.context import campaign_labels

        self.algorithms = [str(a) for a in campaign["algorithm"].values]
        #: legend names: display name + variant (``W-DBO (robust)``), see campaign_labels
        self.names = campaign_labels(campaign)
        self.speeds = [float(s) for s in campaign["speed"].values]
        palette = sns.color_palette("colorblind", max(len(self.algorithms), 1))
        self.colours = dict(zip(self.algorithms, palette, strict=False))
        self.styles = {s: LINESTYLES[i % len(LINESTYLES)] for i, s in enumerate(self.speeds)}

    def label(self, algorithm: str, speed: float) -> str:
        name = self.names.get(algorithm, algorithm)
        return name if len(self.speeds) == 1 else f"{name}, speed ×{speed:g}"

    def kwargs(self, algorithm: str, speed: float) -> dict:
        return {
            "color": self.colours[algorithm],
            "linestyle": self.styles[speed],
            "label": self.label(algorithm, speed),
        }

    def legend(self, fig: Figure, pairs: list[tuple[str, float]] | None = None) -> None:
        """One legend entry per (algorithm, speed) of ``pairs`` (default: all of the campaign)."""
        if pairs is None:
            pairs = [(a, s) for a in self.algorithms for s in self.speeds]
        handles = [Line2D([], [], **self.kwargs(a, s)) for a, s in pairs]
        fig.legend(handles=handles, loc="outside right upper", title="algorithm", frameon=False)


def _panels(n_panels: int, rows_per_panel: int) -> tuple[Figure, list[list[Axes]]]:
    """A constrained-layout figure; ``axes[p][r]`` is row ``r`` of panel ``p``."""
    ncols = min(max(n_panels, 1), MAX_COLUMNS)
    nblocks = math.ceil(max(n_panels, 1) / ncols)
    nrows = nblocks * rows_per_panel
    fig = Figure(figsize=(PANEL_SIZE[0] * ncols + 1.8, PANEL_SIZE[1] * nrows), layout="constrained")
    with sns.axes_style("whitegrid"):
        grid = fig.subplots(nrows, ncols, squeeze=False)
    axes = []
    for p in range(n_panels):
        block, col = divmod(p, ncols)
        axes.append([grid[block * rows_per_panel + r][col] for r in range(rows_per_panel)])
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


def _plot_band(ax: Axes, x: np.ndarray, matrix: np.ndarray, style: dict) -> None:
    mean, se = _mean_se(matrix)
    ax.plot(x, mean, **style)
    ax.fill_between(x, mean - se, mean + se, color=style["color"], alpha=0.2, linewidth=0)


def _time_figure(
    campaign: xr.Dataset, variable: str, ylabels: tuple[str, ...], log_y: bool = False
) -> Figure:
    _check_campaign(campaign, (variable,))
    benchmarks = list(campaign["benchmark"].values)
    style = CampaignStyle(campaign)
    fig, axes = _panels(len(benchmarks), len(ylabels))
    for panel, benchmark in zip(axes, benchmarks, strict=True):
        for row, (ax, ylabel) in enumerate(zip(panel, ylabels, strict=True)):
            for algorithm, speed, matrix, time in _time_curves(
                campaign, variable, benchmark, running=row == 1
            ):
                _plot_band(ax, time, matrix, style.kwargs(algorithm, speed))
            ax.set_ylabel(ylabel)
            if log_y:
                ax.set_yscale("log", nonpositive="mask")
        panel[0].set_title(str(benchmark))
        panel[-1].set_xlabel(TIME_LABEL)
    style.legend(fig)
    return fig


def regret_vs_time(campaign: xr.Dataset) -> Figure:
    """Top row: regret of the configuration in force (``regret_held``) over virtual time.

    Bottom row: its running time average ``(1/(t - t0)) * integral_{t0}^{t} regret_held``,
    whose value at the horizon is the time-integrated regret of the tables.
    """
    return _time_figure(
        campaign,
        "regret_held",
        ("regret of configuration in force", "running time-average of regret"),
    )


def dataset_size_vs_time(campaign: xr.Dataset, *, log_y: bool = False) -> Figure:
    """Observations held by each algorithm over virtual time (``dataset_size_held``).

    The papers plot this on a log scale (BOLT Fig. 4); pass ``log_y=True`` for that.
    """
    return _time_figure(
        campaign, "dataset_size_held", ("dataset size [observations]",), log_y=log_y
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


def response_time_vs_dataset_size(campaign: xr.Dataset) -> Figure:
    """Mean post-warm-up response time per dataset size: the R(n) that drives BOLT's analysis."""
    table = response_time_table(campaign)
    benchmarks = list(campaign["benchmark"].values)
    style = CampaignStyle(campaign)
    fig, axes = _panels(len(benchmarks), 1)
    for (ax,), benchmark in zip(axes, benchmarks, strict=True):
        rows = table[table["benchmark"] == benchmark]
        for (algorithm, speed), group in rows.groupby(["algorithm", "speed"], sort=True):
            kwargs = style.kwargs(str(algorithm), float(speed))
            ax.plot(group["dataset_size"], group["mean"], marker="o", markersize=3, **kwargs)
        ax.set_title(str(benchmark))
        ax.set_xlabel("dataset size n [observations]")
        ax.set_ylabel("response time R(n) [virtual s]")
    style.legend(fig)
    return fig


def write_figures(campaign: xr.Dataset, outdir: str | Path, *, dpi: int = 150) -> list[Path]:
    """Save the three figures as PNG under ``outdir`` with the names of :data:`FIGURE_FILES`."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    makers = {
        "regret_vs_time": regret_vs_time,
        "dataset_size_vs_time": dataset_size_vs_time,
        "response_time_vs_dataset_size": response_time_vs_dataset_size,
    }
    written = []
    for name, make in makers.items():
        path = outdir / FIGURE_FILES[name]
        make(campaign).savefig(path, dpi=dpi)
        written.append(path)
    return written
