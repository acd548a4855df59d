"""Results tables in the papers' form: mean ± standard error over seeds, best in bold.

Spec_bolt §9: "For each experiment and each algorithm, the average regret and its standard
error over 10 independent experiments is provided (lower is better). For each experiment, the
performance of the best algorithm is written in bold". The tables are kept in long (tidy) form
(one row per experiment x algorithm) so they feed pandas/seaborn directly; :func:`pivot_summary`
and :func:`to_markdown` give the paper layout (rows benchmark, columns algorithm).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from tvbo.analysis.metrics import EXPERIMENT_KEYS, OVERALL_LABEL, normalised_regret
from tvbo.results.campaign import ATTRIBUTE_PREFIX, PRESENT_VARIABLE, run_variables, runs_table

STAT_COLUMNS: tuple[str, ...] = ("mean", "se", "n")


def available_metrics(campaign: xr.Dataset) -> list[str]:
    """Numeric per-run variables a table can summarise (e.g. ``average_regret``)."""
    return [
        str(n)
        for n in run_variables(campaign)
        if campaign[n].dtype.kind in "biuf"
        and n != PRESENT_VARIABLE
        and not str(n).startswith(ATTRIBUTE_PREFIX)
    ]


def summary_table(campaign: xr.Dataset, metric: str = "average_regret") -> pd.DataFrame:
    """Mean, standard error and number of seeds of ``metric`` per experiment and algorithm.

    Long form: columns ``benchmark``, ``speed`` (the experiment keys present), ``algorithm``,
    ``mean``, ``se`` = ``std(ddof=1) / sqrt(n)`` and ``n`` (runs with a finite value; missing
    seeds simply lower ``n``). ``se`` is NaN when ``n < 2``.
    """
    valid = available_metrics(campaign)
    if metric not in valid:
        raise ValueError(f"unknown metric {metric!r}; valid choices: {valid}")
    runs = runs_table(campaign)
    keys = [k for k in EXPERIMENT_KEYS if k in runs.columns]
    values = runs[[*keys, "algorithm", metric]].dropna(subset=[metric])
    grouped = values.groupby([*keys, "algorithm"], sort=True)[metric]
    table = grouped.agg(mean="mean", std=lambda s: s.std(ddof=1), n="count").reset_index()
    table["se"] = table["std"] / np.sqrt(table["n"])
    table = table[[*keys, "algorithm", *STAT_COLUMNS]]
    table.attrs["metric"] = metric
    return table


def _row_keys(table: pd.DataFrame) -> list[str]:
    return [k for k in EXPERIMENT_KEYS if k in table.columns]


def pivot_summary(table: pd.DataFrame, value: str = "mean") -> pd.DataFrame:
    """Paper layout of one statistic: rows experiment (benchmark[, speed]), columns algorithm."""
    if value not in table.columns:
        raise ValueError(f"unknown column {value!r}; valid choices: {list(STAT_COLUMNS)}")
    keys = _row_keys(table)
    return table.pivot(index=keys, columns="algorithm", values=value).reindex(
        columns=list(pd.unique(table["algorithm"]))
    )


def _decimals(x: float, digits: int) -> int:
    """Decimals that show ``digits`` significant digits of ``x`` (never negative)."""
    if x == 0 or not math.isfinite(x):
        return max(digits - 1, 0)
    return max(digits - 1 - math.floor(math.log10(abs(x))), 0)


def format_mean_se(mean: float, se: float, digits: int = 3) -> str:
    """``"2.51 ± 0.06"``: ``digits`` significant digits for the mean, se to the same decimals.

    The shared decimals make the ± readable at a glance (as in the papers' tables); an se that
    would round to zero is shown with one significant digit instead. Huge or tiny means use
    scientific notation.
    """
    if not math.isfinite(mean):
        return "n/a"
    if mean != 0 and not 1e-4 <= abs(mean) < 10 ** (digits + 4):
        text = f"{mean:.{digits - 1}e}"
        return text if not math.isfinite(se) else f"{text} ± {se:.1e}"
    decimals = _decimals(mean, digits)
    text = f"{mean:.{decimals}f}"
    if not math.isfinite(se):
        return text
    se_text = f"{se:.{decimals}f}"
    if se > 0 and float(se_text) == 0:
        se_text = f"{se:.{_decimals(se, 1)}f}"
    return f"{text} ± {se_text}"


def _row_label(row: pd.Series, keys: list[str], varying: list[str]) -> str:
    label = str(row["benchmark"]) if "benchmark" in keys else ""
    extras = [f"{k} {row[k]:g}" if isinstance(row[k], float) else f"{k} {row[k]}" for k in varying]
    return f"{label} ({', '.join(extras)})" if extras else label


def to_markdown(
    table: pd.DataFrame,
    *,
    digits: int = 3,
    algorithms: Sequence[str] | None = None,
    caption: bool = True,
) -> str:
    """A Markdown table: rows experiment, columns algorithm, cells "mean ± se".

    The lowest mean of each row is in **bold** (all tied lowest means are). Experiment keys other
    than ``benchmark`` (e.g. ``speed``) appear in the row label only when they take more than one
    value. ``algorithms`` fixes the column order (default: order of appearance).
    """
    missing = [c for c in ("benchmark", "algorithm", "mean") if c not in table.columns]
    if missing:
        raise ValueError(f"to_markdown needs a long-form summary table; missing columns {missing}")
    if digits < 1:
        raise ValueError(f"digits must be >= 1, got {digits}")
    keys = _row_keys(table)
    varying = [k for k in keys if k != "benchmark" and table[k].nunique(dropna=False) > 1]
    columns = list(algorithms) if algorithms is not None else list(pd.unique(table["algorithm"]))
    unknown = sorted(set(columns) - set(table["algorithm"]))
    if unknown:
        raise ValueError(
            f"algorithms {unknown} not in table; valid: {sorted(set(table['algorithm']))}"
        )
    lines = [
        "| " + " | ".join(["benchmark", *columns]) + " |",
        "|" + "---|" * (len(columns) + 1),
    ]
    experiments = table[keys].drop_duplicates()
    for _, experiment in experiments.iterrows():
        mask = np.logical_and.reduce([table[k] == experiment[k] for k in keys])
        rows = table[mask].set_index("algorithm")
        means = rows["mean"].reindex(columns)
        best = means.min(skipna=True)
        cells = []
        for algorithm in columns:
            if algorithm not in rows.index or not math.isfinite(means[algorithm]):
                cells.append("n/a")
                continue
            se = float(rows.at[algorithm, "se"]) if "se" in rows.columns else math.nan
            text = format_mean_se(float(means[algorithm]), se, digits)
            cells.append(f"**{text}**" if means[algorithm] == best else text)
        lines.append("| " + " | ".join([_row_label(experiment, keys, varying), *cells]) + " |")
    if caption:
        lines.append("")
        lines.append(_caption(table))
    return "\n".join(lines) + "\n"


def _caption(table: pd.DataFrame) -> str:
    metric = table.attrs.get("metric", "the metric")
    text = f"Mean ± standard error of {metric} over seeds"
    if "n" in table.columns:
        real = table[table["benchmark"] != OVERALL_LABEL]["n"]
        if len(real):
            low, high = int(real.min()), int(real.max())
            text += f" (n = {low})" if low == high else f" (n = {low}–{high})"
    text += "; lowest mean per row in bold (lower is better)."
    if (table["benchmark"] == OVERALL_LABEL).any():
        text += (
            f" {OVERALL_LABEL}: min-max normalised mean per benchmark (best 0, worst 1) averaged "
            "over benchmarks, ± standard error over benchmarks."
        )
    return text


def to_csv(table: pd.DataFrame, path: str | Path) -> Path:
    """Write the long-form table as CSV (no index); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(path, index=False)
    return path


def with_overall(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` plus the papers' normalised "Overall" rows (when >= 2 benchmarks, algorithms)."""
    if table["benchmark"].nunique() < 2 or table["algorithm"].nunique() < 2:
        return table
    normalised = normalised_regret(table)
    overall = normalised[normalised["benchmark"] == OVERALL_LABEL]
    combined = pd.concat([table, overall[table.columns]], ignore_index=True)
    combined.attrs.update(table.attrs)
    return combined


def write_tables(
    campaign: xr.Dataset,
    outdir: str | Path,
    metrics: Sequence[str] = ("average_regret", "time_integrated_regret"),
) -> list[Path]:
    """Write ``<metric>.csv`` (long form, raw statistics) and ``<metric>.md`` for each metric.

    The Markdown table adds the papers' normalised "Overall" row(s) at the bottom; the CSV holds
    only per-benchmark statistics so that every row of it is one experiment x algorithm.
    """
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for metric in metrics:
        table = summary_table(campaign, metric)
        written.append(to_csv(table, outdir / f"{metric}.csv"))
        markdown = outdir / f"{metric}.md"
        markdown.write_text(
            f"### {metric}\n\n" + to_markdown(with_overall(table)), encoding="utf-8"
        )
        written.append(markdown)
    return written
