"""What-if study of k asynchronous evaluators: regret vs k, per speed, with and without overlap.

The runs of a campaign with ``evaluators`` (and ``overlap``) as grid dimensions carry the
setting in their ``algorithm`` key (``gp-ucb@k4+overlap``, :func:`tvbo.sim.parallel.parse_label`;
the sequential runs keep the plain name, i.e. k = 1 without overlap). This module splits the key
back into (algorithm, k, overlap) and draws, for each regret metric, one figure with one panel
per (benchmark, speed): k on a log2 x-axis, one colour per algorithm, solid = no overlap, dashed
= overlap, the centre over seeds with its band (``aggregate``, :mod:`tvbo.analysis.aggregate`;
mean ± one standard error by default), the band and the number of seeds said in the title.
Algorithms and benchmarks carry their display names (:func:`tvbo.analysis.context.campaign_labels`
on the plain algorithm keys, :func:`tvbo.algorithms.display.benchmark_display_name`), as in
every other figure. The panels of one benchmark (its speeds) share their y axis, so the effect
of the hardware speed reads off directly; the axis is logarithmic when the centres of a
benchmark span :data:`tvbo.analysis.figures.LOG_DECADES` decades, else it starts at 0.

Metrics (how k evaluators are compared fairly with one):

* ``average_regret`` -- the mean regret over every completed post-warm-up query (k evaluators
  complete about k times as many queries; each counts once);
* ``time_integrated_regret_current`` -- (1/H) times the integral over time of the regret of the
  recommendation current at each instant (the latest completed query or the posterior-mean
  maximiser, ``recommendation`` in the config); needs the runs to record it. Without it, the
  figure falls back to ``time_integrated_regret`` (the configuration sampled last) and says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import seaborn as sns
import xarray as xr
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from tvbo.algorithms.display import algorithm_labels, benchmark_display_name
from tvbo.analysis.aggregate import (
    DEFAULT_AGGREGATE,
    band_label,
    check_aggregate,
    summarise_groups,
)
from tvbo.analysis.context import campaign_labels
from tvbo.analysis.figure_output import FigureOptions, scaled
from tvbo.analysis.figures import choose_log_scale, colour_palette
from tvbo.results.labels import parse_label
from tvbo.results.schema import PRESENT_VARIABLE, RUN_KEYS

#: short y labels of the panels (the figure title names the metric in full)
_SHORT: dict[str, str] = {
    "average_regret": "avg. query regret",
    "time_integrated_regret_current": "time-int. regret (current)",
    "time_integrated_regret": "time-int. regret (last sampled)",
}
METRICS: dict[str, str] = {
    "average_regret": "average query regret (completed queries)",
    "time_integrated_regret_current": "time-integrated regret of the current recommendation",
    "time_integrated_regret": "time-integrated regret of the last sampled query",
}
#: figure -> file name in the default format (another format swaps the extension)
FIGURE_FILES: dict[str, str] = {
    "average_regret": "parallel_average_regret_vs_k.png",
    "time_integrated": "parallel_time_integrated_regret_vs_k.png",
}
DATA_FILE = "parallel_whatif_summary.csv"
#: what "the current recommendation" is, per engine option ``recommendation`` (said in the title:
#: a reader cannot tell the latest completed query from the posterior-mean maximiser otherwise)
RECOMMENDATIONS: dict[str, str] = {
    "latest": "the latest completed query",
    "posterior-mean": "the held point of highest posterior mean",
}


def run_table(campaign: xr.Dataset) -> pd.DataFrame:
    """One row per existing run: benchmark, algorithm, k, overlap, seed, speed, the metrics and
    the number of completed queries."""
    order = list(RUN_KEYS)
    present_var = (campaign[PRESENT_VARIABLE] if PRESENT_VARIABLE in campaign.data_vars
                   else np.isfinite(campaign["time_integrated_regret"]))
    present = present_var.transpose(*order).values == 1
    metrics = [m for m in METRICS if m in campaign.data_vars]
    arrays = {m: campaign[m].transpose(*order).values.astype(float) for m in metrics}
    warm = campaign["is_warmup"].transpose(*order, "iteration").values.astype(float)
    coords = [campaign[k].values for k in order]
    rows = []
    for index in zip(*np.nonzero(present), strict=True):
        keys = {k: c[i].item() for k, c, i in zip(order, coords, index, strict=True)}
        name, k, overlap = parse_label(str(keys.pop("algorithm")))
        row = {"benchmark": keys["benchmark"], "algorithm": name, "evaluators": k,
               "overlap": overlap, "seed": keys["seed"], "speed": float(keys["speed"])}
        for m in metrics:
            row[m] = float(arrays[m][index])
        row["queries"] = int(np.isfinite(warm[index]).sum())
        rows.append(row)
    return pd.DataFrame(rows)


def summary(runs: pd.DataFrame, aggregate: str = DEFAULT_AGGREGATE) -> pd.DataFrame:
    """Per (benchmark, algorithm, speed, overlap, k, metric): mean, se and n, and the
    ``aggregate``'s ``centre``, ``low`` and ``high`` (equal to mean ± se for ``mean_se``)."""
    check_aggregate(aggregate)
    keys = ["benchmark", "algorithm", "speed", "overlap", "evaluators"]
    metrics = [m for m in (*METRICS, "queries") if m in runs]
    long = runs.melt(id_vars=keys + ["seed"], value_vars=metrics, var_name="metric")
    long = long.dropna(subset=["value"])
    table = summarise_groups(long, [*keys, "metric"], "value", aggregate)
    table["aggregate"] = aggregate
    # the columns in the order the summary file has always had (DATA_FILE)
    return table[[*keys, "metric", "mean", "n", "se", "centre", "low", "high", "aggregate"]]


def regret_vs_k(runs: pd.DataFrame, metric: str, *, aggregate: str = DEFAULT_AGGREGATE,
                labels: dict[str, str] | None = None,
                recommendation: str | None = None) -> Figure:
    """One panel per (benchmark, speed); k on a log2 axis; colour = algorithm; dashed = overlap.

    ``labels``: algorithm key -> display name (default: the keys' display names).
    ``recommendation``: the runs' recommendation rule, named in the title of the
    current-recommendation metric (:func:`recorded_recommendation`).
    """
    if metric not in runs:
        raise ValueError(f"metric {metric!r} is not in the runs; valid: "
                         f"{', '.join(m for m in METRICS if m in runs)}")
    table = summary(runs, aggregate)
    table = table[table["metric"] == metric]
    benchmarks = list(dict.fromkeys(runs["benchmark"]))
    speeds = sorted(runs["speed"].unique())
    algorithms = list(dict.fromkeys(runs["algorithm"]))
    names = labels if labels is not None else _display_names(algorithms)
    colours = dict(zip(algorithms, colour_palette(len(algorithms)), strict=False))
    ks = sorted(runs["evaluators"].unique())
    fig = Figure(figsize=scaled(3.6 * len(speeds) + 2.6, 2.8 * len(benchmarks) + 0.6),
                 layout="constrained")
    with sns.axes_style("whitegrid"):
        axes = fig.subplots(len(benchmarks), len(speeds), squeeze=False, sharey="row")
    for r, bench in enumerate(benchmarks):
        row_table = table[table["benchmark"] == bench]
        for c, speed in enumerate(speeds):
            ax = axes[r][c]
            cell = row_table[row_table["speed"] == speed]
            for (algorithm, overlap), group in cell.groupby(["algorithm", "overlap"], sort=False):
                group = group.sort_values("evaluators")
                x = group["evaluators"].values
                ax.plot(x, group["centre"].values, color=colours[algorithm], marker="o",
                        markersize=4, linestyle="--" if overlap else "-")
                ax.fill_between(x, group["low"].values, group["high"].values,
                                color=colours[algorithm], alpha=0.15, linewidth=0)
            ax.set_xscale("log", base=2)
            ax.set_xticks(ks, [str(k) for k in ks])
            ax.minorticks_off()
            ax.set_title(f"{benchmark_display_name(bench)}, speed ×{speed:g}", fontsize="medium")
            if r == len(benchmarks) - 1:
                ax.set_xlabel("evaluators k")
        centres = row_table["centre"].to_numpy(dtype=float)
        first = axes[r][0]
        if choose_log_scale(centres):
            first.set_yscale("log", nonpositive="clip")
            first.set_ylabel(_SHORT[metric] + " (log)")
        else:
            first.set_ylabel(_SHORT[metric])
            highs = row_table["high"].to_numpy(dtype=float)
            top = np.nanmax(np.concatenate([centres, highs])) if centres.size else 1.0
            if np.nanmin(centres) >= 0:
                first.set_ylim(0.0, top * 1.05)
    handles = [Line2D([], [], color=colours[a], marker="o", label=names.get(a, a))
               for a in algorithms]
    handles += [Line2D([], [], color="grey", linestyle="-", label="no overlap"),
                Line2D([], [], color="grey", linestyle="--", label="overlap")]
    fig.legend(handles=handles, loc="outside right upper", frameon=False)
    seeds = table["n"].to_numpy(dtype=int)
    title = METRICS[metric]
    if metric == "time_integrated_regret_current" and recommendation in RECOMMENDATIONS:
        title += f" ({RECOMMENDATIONS[recommendation]})"
    fig.suptitle(f"{title}\n" + band_label(aggregate, seeds), fontsize="medium")
    return fig


def recorded_recommendation(campaign: xr.Dataset) -> str | None:
    """The ``recommendation`` rule every run recorded in its engine options, or None when the
    runs recorded none or disagree (the title then leaves the rule unnamed)."""
    texts = (campaign["attr_config_json"].values.ravel() if "attr_config_json" in campaign
             else [campaign.attrs.get("config_json")])
    rules = set()
    for text in texts:
        if isinstance(text, str) and text:
            engine = json.loads(text).get("engine")
            rules.add(engine.get("recommendation") if isinstance(engine, dict) else None)
    rules.discard(None)
    return rules.pop() if len(rules) == 1 else None


def _display_names(algorithms: list[str]) -> dict[str, str]:
    """Display names of plain algorithm keys (the one lookup, tvbo.algorithms.display)."""
    return algorithm_labels(algorithms)


def campaign_names(campaign: xr.Dataset) -> dict[str, str]:
    """Plain algorithm key -> label (:func:`tvbo.analysis.context.campaign_labels`, the lookup
    every table and figure uses, on the plain keys): the campaign's keys carry the setting
    (``w-dbo@k4+overlap``), the label is that of the plain key, its variant read from any of
    its runs' recorded options."""
    return campaign_labels(campaign, plain=lambda key: parse_label(key)[0])


def write_parallel_whatif(campaign: xr.Dataset, outdir: str | Path, *,
                          options: FigureOptions | None = None,
                          aggregate: str = DEFAULT_AGGREGATE) -> list[Path]:
    """Save the two figures (format, dpi and style of ``options``) and the long-form table
    behind them (CSV) under ``outdir``."""
    runs = run_table(campaign)
    if runs.empty:
        raise ValueError("the campaign has no run to summarise")
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    time_metric = ("time_integrated_regret_current" if "time_integrated_regret_current" in runs
                   and runs["time_integrated_regret_current"].notna().any()
                   else "time_integrated_regret")
    options = options or FigureOptions()
    names = campaign_names(campaign)
    recommendation = recorded_recommendation(campaign)
    written = []
    with options.context():
        for key, metric in (("average_regret", "average_regret"),
                            ("time_integrated", time_metric)):
            fig = regret_vs_k(runs, metric, aggregate=aggregate, labels=names,
                              recommendation=recommendation)
            written.append(options.save(fig, outdir, Path(FIGURE_FILES[key]).stem))
    data = outdir / DATA_FILE
    summary(runs, aggregate).to_csv(data, index=False)
    written.append(data)
    return written
