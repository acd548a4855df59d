"""What-if study of k asynchronous evaluators: regret vs k, per speed, with and without overlap.

The runs of a campaign with ``evaluators`` (and ``overlap``) as grid dimensions carry the
setting in their ``algorithm`` key (``gp-ucb@k4+overlap``, :func:`tvbo.sim.parallel.parse_label`;
the sequential runs keep the plain name, i.e. k = 1 without overlap). This module splits the key
back into (algorithm, k, overlap) and draws, for each regret metric, one figure with one panel
per (benchmark, speed): k on a log2 x-axis, one colour per algorithm, solid = no overlap, dashed
= overlap, the mean over seeds with a ± one standard error band (``std(ddof=1) / sqrt(n)``).

Metrics (how k evaluators are compared fairly with one):

* ``average_regret`` -- the mean regret over every completed post-warm-up query (k evaluators
  complete about k times as many queries; each counts once);
* ``time_integrated_regret_current`` -- (1/H) times the integral over time of the regret of the
  recommendation current at each instant (the latest completed query or the posterior-mean
  maximiser, ``recommendation`` in the config); needs the runs to record it. Without it, the
  figure falls back to ``time_integrated_regret`` (the configuration sampled last) and says so.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import seaborn as sns
import xarray as xr
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from tvbo.results.campaign import PRESENT_VARIABLE
from tvbo.results.labels import parse_label
from tvbo.results.schema import RUN_KEYS

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
FIGURE_FILES: dict[str, str] = {
    "average_regret": "parallel_average_regret_vs_k.png",
    "time_integrated": "parallel_time_integrated_regret_vs_k.png",
}
DATA_FILE = "parallel_whatif_summary.csv"


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


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard error and n per (benchmark, algorithm, speed, overlap, k, metric)."""
    keys = ["benchmark", "algorithm", "speed", "overlap", "evaluators"]
    metrics = [m for m in (*METRICS, "queries") if m in runs]
    long = runs.melt(id_vars=keys + ["seed"], value_vars=metrics, var_name="metric")
    long = long.dropna(subset=["value"])
    grouped = long.groupby([*keys, "metric"], sort=True)["value"]
    table = grouped.agg(mean="mean", std=lambda s: s.std(ddof=1), n="count").reset_index()
    table["se"] = table["std"] / np.sqrt(table["n"])
    return table.drop(columns="std")


def regret_vs_k(runs: pd.DataFrame, metric: str) -> Figure:
    """One panel per (benchmark, speed); k on a log2 axis; colour = algorithm; dashed = overlap."""
    if metric not in runs:
        raise ValueError(f"metric {metric!r} is not in the runs; valid: "
                         f"{', '.join(m for m in METRICS if m in runs)}")
    table = summary(runs)
    table = table[table["metric"] == metric]
    benchmarks = list(dict.fromkeys(runs["benchmark"]))
    speeds = sorted(runs["speed"].unique())
    algorithms = list(dict.fromkeys(runs["algorithm"]))
    colours = dict(zip(algorithms, sns.color_palette("colorblind", len(algorithms)),
                       strict=True))
    ks = sorted(runs["evaluators"].unique())
    fig = Figure(figsize=(3.6 * len(speeds) + 2.6, 2.8 * len(benchmarks) + 0.4),
                 layout="constrained")
    with sns.axes_style("whitegrid"):
        axes = fig.subplots(len(benchmarks), len(speeds), squeeze=False)
    for r, bench in enumerate(benchmarks):
        for c, speed in enumerate(speeds):
            ax = axes[r][c]
            cell = table[(table["benchmark"] == bench) & (table["speed"] == speed)]
            for (algorithm, overlap), group in cell.groupby(["algorithm", "overlap"], sort=False):
                group = group.sort_values("evaluators")
                x = group["evaluators"].values
                mean, se = group["mean"].values, group["se"].fillna(0.0).values
                ax.plot(x, mean, color=colours[algorithm], marker="o", markersize=4,
                        linestyle="--" if overlap else "-")
                ax.fill_between(x, mean - se, mean + se, color=colours[algorithm], alpha=0.15,
                                linewidth=0)
            ax.set_xscale("log", base=2)
            ax.set_xticks(ks, [str(k) for k in ks])
            ax.minorticks_off()
            ax.set_title(f"{bench}, speed {speed:g}", fontsize=9)
            if r == len(benchmarks) - 1:
                ax.set_xlabel("evaluators k")
            if c == 0:
                ax.set_ylabel(_SHORT[metric])
    handles = [Line2D([], [], color=colours[a], marker="o", label=a) for a in algorithms]
    handles += [Line2D([], [], color="grey", linestyle="-", label="no overlap"),
                Line2D([], [], color="grey", linestyle="--", label="overlap")]
    fig.legend(handles=handles, loc="outside right upper", frameon=False)
    fig.suptitle(f"{METRICS[metric]}\n(mean ± s.e. over seeds)", fontsize=10)
    return fig


def write_parallel_whatif(campaign: xr.Dataset, outdir: str | Path, *, dpi: int = 150
                          ) -> list[Path]:
    """Save the two figures (PNG) and the long-form table behind them (CSV) under ``outdir``."""
    runs = run_table(campaign)
    if runs.empty:
        raise ValueError("the campaign has no run to summarise")
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    time_metric = ("time_integrated_regret_current" if "time_integrated_regret_current" in runs
                   and runs["time_integrated_regret_current"].notna().any()
                   else "time_integrated_regret")
    written = []
    for key, metric in (("average_regret", "average_regret"), ("time_integrated", time_metric)):
        fig = regret_vs_k(runs, metric)
        path = outdir / FIGURE_FILES[key]
        fig.savefig(path, dpi=dpi)
        written.append(path)
    data = outdir / DATA_FILE
    summary(runs).to_csv(data, index=False)
    written.append(data)
    return written
