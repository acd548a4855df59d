"""Hardware what-if figures: how regret, BOLT's n*, dataset sizes and evaluations move with speed.

A what-if campaign runs the same (benchmark, algorithm, seed) grid at several hardware speed
factors (every compute time divided by ``speed``; the evaluation cost is unchanged). These
figures put ``speed`` on a log x-axis, one panel per benchmark, one colour per algorithm, and
show the mean over seeds with a ± one standard error band (``std(ddof=1) / sqrt(n)``).

Per-run quantities (:func:`run_summaries`):

* ``average_regret`` and ``time_integrated_regret`` -- the run's own summaries (the papers'
  query average, and the time average of the regret of the configuration in force);
* ``evaluations`` -- objective evaluations in the run, warm-up included (entries of
  ``is_warmup``), i.e. how many queries the hardware allowed within the horizon;
* ``dataset_size`` -- the time average over the run of the dataset size in force
  (``dataset_size_held``), the size the algorithm actually worked with; ``final_dataset_size``
  is also kept in the table;
* ``nstar`` -- BOLT's recommended size (state variable ``state_bolt_nstar``; NaN for
  algorithms without it) summarised over the post-warm-up iterations by ``nstar_summary``:

  - ``median`` (default): the median over iterations. BOLT recomputes n* every iteration from
    a cubic fit of R(n) that is flat, hence n* = its cap (infinite), until the fit has seen
    enough sizes, and the last value can be an outlier of the latest fit (the smoke campaign
    has runs ending at n* = 7 and 2071); the median is robust to both;
  - ``final``: the last finite value, the recommendation in force at the horizon;
  - ``time-average``: the mean weighted by each iteration's response time (the time the value
    was in force), dominated by early capped values when there are any.
"""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from tvbo.algorithms.display import benchmark_display_name
from tvbo.analysis.aggregate import band_label, summarise_groups
from tvbo.analysis.context import campaign_labels
from tvbo.analysis.figure_output import FigureOptions
from tvbo.analysis.figures import _panels, _zero_based, colour_palette
from tvbo.results.schema import PRESENT_VARIABLE, RUN_KEYS

NSTAR_VARIABLE = "state_bolt_nstar"
NSTAR_SUMMARIES: tuple[str, ...] = ("median", "final", "time-average")
#: per-run quantities of :func:`run_summaries`, with their axis labels
QUANTITIES: dict[str, str] = {
    "average_regret": "average query regret",
    "time_integrated_regret": "time-integrated regret",
    "evaluations": "evaluations (warm-up included)",
    "dataset_size": "time-averaged dataset size",
    "final_dataset_size": "final dataset size",
    "nstar": "BOLT's n*",
}
FIGURE_FILES: dict[str, str] = {
    "regret_vs_speed": "regret_vs_speed.png",
    "nstar_vs_speed": "nstar_and_dataset_size_vs_speed.png",
    "evaluations_vs_speed": "evaluations_vs_speed.png",
}
DATA_FILE = "whatif_summary.csv"
SPEED_LABEL = "hardware speed factor"
_ITERATION_VARIABLES = ("is_warmup", "response_time")
_TIME_VARIABLES = ("dataset_size_held",)
_RUN_VARIABLES = ("average_regret", "time_integrated_regret")


def check_speeds(campaign: xr.Dataset) -> list[float]:
    """The campaign's speeds; a clear error unless there are at least two of them."""
    if "speed" not in campaign.dims:
        raise ValueError("what-if figures need a campaign with a 'speed' dimension (run key)")
    speeds = [float(s) for s in campaign["speed"].values]
    if not speeds:
        raise ValueError("the campaign's speed grid is empty: what-if figures need >= 2 speeds")
    if len(speeds) < 2:
        raise ValueError(
            f"what-if figures compare hardware speeds, but the campaign has a single speed "
            f"{speeds}; run a campaign with >= 2 speeds (config key 'speeds', e.g. "
            f"config/whatif_hardware.yaml)"
        )
    return speeds


def _check_variables(campaign: xr.Dataset) -> None:
    needed = (*_ITERATION_VARIABLES, *_TIME_VARIABLES, *_RUN_VARIABLES)
    missing_keys = [k for k in RUN_KEYS if k not in campaign.dims]
    missing = [v for v in needed if v not in campaign.data_vars]
    if missing_keys or missing:
        raise ValueError(
            f"what-if figures need run-key dimensions {list(RUN_KEYS)} and variables "
            f"{list(needed)}; missing dimensions {missing_keys}, missing variables {missing}"
        )


def _time_average(time: np.ndarray, values: np.ndarray) -> float:
    """Trapezoid time average over the finite samples (NaN where there is no run or no size)."""
    keep = np.isfinite(values) & np.isfinite(time)
    t, v = time[keep], values[keep]
    if t.size < 2 or t[-1] <= t[0]:
        return float(v[0]) if t.size == 1 else float("nan")
    return float(np.trapezoid(v, t) / (t[-1] - t[0]))


def summarise_nstar(
    nstar: np.ndarray, is_warmup: np.ndarray, response_time: np.ndarray, how: str = "median"
) -> float:
    """One n* per run from its per-iteration values (see the module notes for ``how``).

    Only post-warm-up iterations with a finite n* count; NaN if there is none (an algorithm
    without n*, or a run that never fitted R(n)). ``time-average`` ignores iterations without a
    finite positive response time (the last one has none).
    """
    if how not in NSTAR_SUMMARIES:
        raise ValueError(f"unknown n* summary {how!r}; valid choices: {', '.join(NSTAR_SUMMARIES)}")
    nstar = np.asarray(nstar, dtype=float)
    keep = (np.asarray(is_warmup, dtype=float) == 0) & np.isfinite(nstar)
    if how == "time-average":
        weight = np.asarray(response_time, dtype=float)
        keep &= np.isfinite(weight) & (weight > 0)
        if not keep.any():
            return float("nan")
        return float(np.average(nstar[keep], weights=weight[keep]))
    if not keep.any():
        return float("nan")
    return float(nstar[keep][-1] if how == "final" else np.median(nstar[keep]))


def run_summaries(
    campaign: xr.Dataset, *, nstar_summary: str = "median", nstar_variable: str = NSTAR_VARIABLE
) -> pd.DataFrame:
    """One row per existing run: run keys and every quantity of :data:`QUANTITIES`."""
    _check_variables(campaign)
    if nstar_summary not in NSTAR_SUMMARIES:
        raise ValueError(
            f"unknown n* summary {nstar_summary!r}; valid choices: {', '.join(NSTAR_SUMMARIES)}"
        )
    order = list(RUN_KEYS)

    def values(name: str, extra: tuple[str, ...] = ()) -> np.ndarray:
        return campaign[name].transpose(*order, *extra).values.astype(float)

    is_warmup = values("is_warmup", ("iteration",))
    response = values("response_time", ("iteration",))
    size_held = values("dataset_size_held", ("time",))
    has_nstar = nstar_variable in campaign.data_vars
    nstar = values(nstar_variable, ("iteration",)) if has_nstar else None
    final_size = (
        values("final_dataset_size") if "final_dataset_size" in campaign.data_vars else None
    )
    run_values = {name: values(name) for name in _RUN_VARIABLES}
    present = (
        values(PRESENT_VARIABLE) == 1
        if PRESENT_VARIABLE in campaign.data_vars
        else np.isfinite(run_values["average_regret"])
    )
    time = campaign["time"].values.astype(float)
    coords = [campaign[k].values for k in order]
    rows = []
    for index in zip(*np.nonzero(present), strict=True):
        row: dict[str, object] = {
            k: c[i].item() for k, c, i in zip(order, coords, index, strict=True)
        }
        for name, array in run_values.items():
            row[name] = float(array[index])
        row["evaluations"] = int(np.isfinite(is_warmup[index]).sum())
        row["dataset_size"] = _time_average(time, size_held[index])
        row["final_dataset_size"] = np.nan if final_size is None else float(final_size[index])
        row["nstar"] = (
            np.nan
            if nstar is None
            else summarise_nstar(nstar[index], is_warmup[index], response[index], nstar_summary)
        )
        rows.append(row)
    columns = [*order, *QUANTITIES]
    frame = pd.DataFrame(rows, columns=columns)
    frame.attrs["nstar_summary"] = nstar_summary
    return frame


def speed_table(runs: pd.DataFrame, quantity: str) -> pd.DataFrame:
    """Mean, standard error and number of runs of ``quantity`` per (benchmark, algorithm, speed).

    Runs with a NaN value are left out (they lower ``n``); ``se`` is NaN when ``n < 2``.
    """
    if quantity not in QUANTITIES:
        raise ValueError(f"unknown quantity {quantity!r}; valid choices: {', '.join(QUANTITIES)}")
    data = runs.dropna(subset=[quantity])
    table = summarise_groups(data, ["benchmark", "algorithm", "speed"], quantity, None)
    table.insert(3, "quantity", quantity)
    return table[["benchmark", "algorithm", "speed", "quantity", "mean", "se", "n"]]


class _Colours:
    """One colour per algorithm, in the campaign's order (the same palette as figures.py)."""

    def __init__(self, campaign: xr.Dataset) -> None:
        self.algorithms = [str(a) for a in campaign["algorithm"].values]
        palette = colour_palette(len(self.algorithms))
        self.of = dict(zip(self.algorithms, palette, strict=False))
        #: legend names with the variant (W-DBO (robust)), as in every table and figure
        self.names = campaign_labels(campaign)


def _band(ax: Axes, table: pd.DataFrame, colour: object, *, log_y: bool, **style: object) -> None:
    table = table.sort_values("speed")
    x, mean, se = table["speed"].values, table["mean"].values, table["se"].fillna(0.0).values
    ax.plot(x, mean, color=colour, marker=style.pop("marker", "o"), markersize=4, **style)
    low = mean - se
    if log_y:  # a band reaching below 0 cannot be drawn on a log axis: clip it to the mean / 10
        low = np.where(low > 0, low, mean / 10.0)
    ax.fill_between(x, low, mean + se, color=colour, alpha=0.2, linewidth=0)


def _band_title(fig: Figure, tables: list[pd.DataFrame]) -> None:
    """Say what the bands are and over how many seeds (every what-if figure)."""
    seeds = np.concatenate([t["n"].to_numpy(dtype=int) for t in tables]) if tables else []
    fig.suptitle(band_label("mean_se", seeds), fontsize="small")


def _benchmarks(campaign: xr.Dataset) -> list[Hashable]:
    return list(campaign["benchmark"].values)


def _prepare(campaign: xr.Dataset, runs: pd.DataFrame | None, nstar_summary: str) -> pd.DataFrame:
    check_speeds(campaign)
    return run_summaries(campaign, nstar_summary=nstar_summary) if runs is None else runs


def _legend(fig: Figure, colours: _Colours, extra: list[Line2D] | None = None) -> None:
    handles = [Line2D([], [], color=colours.of[a], marker="o", label=colours.names.get(a, a))
               for a in colours.algorithms]
    fig.legend(handles=handles + (extra or []), loc="outside right upper", title="algorithm",
               frameon=False)


def _speed_axes(ax: Axes, speeds: list[float], ylabel: str, *, log_y: bool) -> None:
    ax.set_xscale("log")
    ax.set_xticks(speeds, [f"{s:g}" for s in speeds], minor=False)
    ax.minorticks_off()
    ax.set_xlabel(SPEED_LABEL)
    ax.set_ylabel(ylabel)
    if log_y:
        ax.set_yscale("log")


def regret_vs_speed(
    campaign: xr.Dataset, *, runs: pd.DataFrame | None = None, nstar_summary: str = "median"
) -> tuple[Figure, pd.DataFrame]:
    """Query average regret (top row) and time-integrated regret (bottom row) vs speed."""
    runs = _prepare(campaign, runs, nstar_summary)
    speeds = check_speeds(campaign)
    metrics = ("average_regret", "time_integrated_regret")
    tables = [speed_table(runs, m) for m in metrics]
    colours = _Colours(campaign)
    benchmarks = _benchmarks(campaign)
    fig, axes = _panels(len(benchmarks), len(metrics))
    for panel, benchmark in zip(axes, benchmarks, strict=True):
        for ax, metric, table in zip(panel, metrics, tables, strict=True):
            rows = table[table["benchmark"] == benchmark]
            for algorithm, group in rows.groupby("algorithm", sort=False):
                _band(ax, group, colours.of[str(algorithm)], log_y=False)
            _speed_axes(ax, speeds, QUANTITIES[metric], log_y=False)
            _zero_based(ax)
        panel[0].set_title(benchmark_display_name(str(benchmark)))
    _legend(fig, colours)
    _band_title(fig, tables)
    return fig, pd.concat(tables, ignore_index=True)


def nstar_vs_speed(
    campaign: xr.Dataset, *, runs: pd.DataFrame | None = None, nstar_summary: str = "median"
) -> tuple[Figure, pd.DataFrame]:
    """Time-averaged dataset size of every algorithm (solid) and BOLT's n* (dashed) vs speed.

    n* appears for the algorithms that record ``state_bolt_nstar`` (BOLT and its variants).
    """
    runs = _prepare(campaign, runs, nstar_summary)
    speeds = check_speeds(campaign)
    sizes, nstars = speed_table(runs, "dataset_size"), speed_table(runs, "nstar")
    colours = _Colours(campaign)
    benchmarks = _benchmarks(campaign)
    fig, axes = _panels(len(benchmarks), 1)
    summary = runs.attrs.get("nstar_summary", nstar_summary)
    for (ax,), benchmark in zip(axes, benchmarks, strict=True):
        for table, style in ((sizes, {"linestyle": "-"}),
                             (nstars, {"linestyle": "--", "marker": "*"})):
            rows = table[table["benchmark"] == benchmark]
            for algorithm, group in rows.groupby("algorithm", sort=False):
                _band(ax, group, colours.of[str(algorithm)], log_y=True, **dict(style))
        _speed_axes(ax, speeds, "observations", log_y=True)
        ax.set_title(benchmark_display_name(str(benchmark)))
    _band_title(fig, [sizes])
    styles = [
        Line2D([], [], color="grey", linestyle="-", marker="o", label="dataset size (time avg)"),
        Line2D([], [], color="grey", linestyle="--", marker="*", label=f"n* ({summary})"),
    ]
    _legend(fig, colours, styles)
    return fig, pd.concat([sizes, nstars], ignore_index=True)


def evaluations_vs_speed(
    campaign: xr.Dataset, *, runs: pd.DataFrame | None = None, nstar_summary: str = "median"
) -> tuple[Figure, pd.DataFrame]:
    """Objective evaluations per run (warm-up included) vs speed: what faster hardware buys."""
    runs = _prepare(campaign, runs, nstar_summary)
    speeds = check_speeds(campaign)
    table = speed_table(runs, "evaluations")
    colours = _Colours(campaign)
    benchmarks = _benchmarks(campaign)
    fig, axes = _panels(len(benchmarks), 1)
    for (ax,), benchmark in zip(axes, benchmarks, strict=True):
        rows = table[table["benchmark"] == benchmark]
        for algorithm, group in rows.groupby("algorithm", sort=False):
            _band(ax, group, colours.of[str(algorithm)], log_y=True)
        _speed_axes(ax, speeds, QUANTITIES["evaluations"], log_y=True)
        ax.set_title(benchmark_display_name(str(benchmark)))
    _legend(fig, colours)
    _band_title(fig, [table])
    return fig, table


def write_whatif(
    campaign: xr.Dataset, outdir: str | Path, *, nstar_summary: str = "median",
    options: FigureOptions | None = None,
) -> list[Path]:
    """Save the three what-if figures (format, dpi and style of ``options``) and the table
    behind them (CSV) under ``outdir``.

    The CSV is long form: ``benchmark, algorithm, speed, quantity, mean, se, n`` for every
    quantity of :data:`QUANTITIES`.
    """
    check_speeds(campaign)
    runs = run_summaries(campaign, nstar_summary=nstar_summary)
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    makers = {
        "regret_vs_speed": regret_vs_speed,
        "nstar_vs_speed": nstar_vs_speed,
        "evaluations_vs_speed": evaluations_vs_speed,
    }
    options = options or FigureOptions()
    written = []
    with options.context():
        for name, make in makers.items():
            fig, _ = make(campaign, runs=runs)
            written.append(options.save(fig, outdir, Path(FIGURE_FILES[name]).stem))
    table = pd.concat([speed_table(runs, q) for q in QUANTITIES], ignore_index=True)
    table.attrs = {}
    data = outdir / DATA_FILE
    table.to_csv(data, index=False)
    written.append(data)
    return written
