"""Results tables in the papers' form: mean ± standard error over seeds, best in bold.

Spec_bolt §9: "For each experiment and each algorithm, the average regret and its standard
error over 10 independent experiments is provided (lower is better). For each experiment, the
performance of the best algorithm is written in bold, and the performance of algorithms whose
confidence intervals overlap the confidence interval of the best performing algorithm are
underlined." The tables are kept in long (tidy) form (one row per experiment x algorithm) so
they feed pandas/seaborn directly; :func:`pivot_summary`, :func:`to_markdown` and
:func:`to_latex` give the paper layout (rows benchmark, columns algorithm, the normalised
Overall row last). The confidence interval is ``mean ± ci * se`` with ``ci = 1`` by default, the
interval the papers print (:mod:`tvbo.analysis.best_cells` says why and how a cell is marked).

``aggregate`` (:mod:`tvbo.analysis.aggregate`: ``mean_se``, ``median_iqr``, ``iqm_bootstrap``)
chooses what a cell shows: the papers' mean ± s.e. by default, else the centre and its interval
``"1.23 [1.10, 1.41]"`` (median and IQR, or IQM and its 95 % bootstrap interval), and the
bold / underline marks are decided on those intervals. The long tables always keep ``mean``,
``se`` and ``n`` and add ``centre``, ``low`` and ``high``. The normalised Overall rows stay the
papers' normalised *means* (spec §9.3), whatever the aggregate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from tvbo.algorithms.display import variant_meanings, variant_notes
from tvbo.analysis.aggregate import (
    BAND_NAMES,
    CENTRE_NAMES,
    DEFAULT_AGGREGATE,
    check_aggregate,
    summarise_groups,
)
from tvbo.analysis.best_cells import (
    DEFAULT_CI,
    check_ci,
    separated_best,
    separated_best_intervals,
)
from tvbo.analysis.context import (
    campaign_labels,
    campaign_setting,
    recorded_algorithm_options,
    setting_text,
)
from tvbo.analysis.metrics import EXPERIMENT_KEYS, OVERALL_LABEL, normalised_regret
from tvbo.results.campaign import run_variables, runs_table
from tvbo.results.schema import ATTRIBUTE_PREFIX, PRESENT_VARIABLE

STAT_COLUMNS: tuple[str, ...] = ("mean", "se", "n")
#: the aggregate's centre and interval (equal to mean, mean - se, mean + se for ``mean_se``)
INTERVAL_COLUMNS: tuple[str, ...] = ("centre", "low", "high")
#: the number of queries of a run (warm-up included), shown beside the regrets
QUERIES = "n_iterations"
#: what every results table shows, in this order: the two regrets and the number of queries
#: (a few well-placed queries can give a low query regret while the configuration in force
#: tracks the optimum badly; the time-integrated regret and the query count expose it)
TABLE_METRICS: tuple[str, ...] = ("average_regret", "time_integrated_regret", QUERIES)
#: metrics that are counts, not scores: never marked bold / underlined, no Overall row (every
#: other metric is a regret-like "lower is better" score)
UNMARKED_METRICS: frozenset[str] = frozenset({QUERIES, "final_dataset_size"})


def is_marked(metric: str | None) -> bool:
    """Whether cells of ``metric`` get bold / underline marks (lower is better)."""
    return metric not in UNMARKED_METRICS
#: row names of the metrics in the Markdown / LaTeX tables
METRIC_NAMES: dict[str, str] = {
    "average_regret": "avg. query regret",
    "time_integrated_regret": "time-integrated regret",
    QUERIES: "queries",
}
#: what each metric is, for captions
METRIC_DEFINITIONS: dict[str, str] = {
    "average_regret": "average query regret (mean of f*(t) − f(x_t, t) over the post-warm-up "
    "queries; the papers' metric)",
    "time_integrated_regret": "time-integrated regret ((1/H) ∫ f*(t) − f(x_held(t), t) dt, "
    "x_held = the configuration in force, i.e. the last query)",
    QUERIES: "number of queries in the horizon (warm-up included)",
}


def available_metrics(campaign: xr.Dataset) -> list[str]:
    """Numeric per-run variables a table can summarise (e.g. ``average_regret``)."""
    return [
        str(n)
        for n in run_variables(campaign)
        if campaign[n].dtype.kind in "biuf"
        and n != PRESENT_VARIABLE
        and not str(n).startswith(ATTRIBUTE_PREFIX)
    ]


def summary_table(campaign: xr.Dataset, metric: str = "average_regret", *,
                  aggregate: str = DEFAULT_AGGREGATE) -> pd.DataFrame:
    """Mean, standard error and number of seeds of ``metric`` per experiment and algorithm.

    Long form: columns ``benchmark``, ``speed`` (the experiment keys present), ``algorithm``,
    ``mean``, ``se`` = ``std(ddof=1) / sqrt(n)`` and ``n`` (runs with a finite value; missing
    seeds simply lower ``n``), then ``centre``, ``low``, ``high`` of ``aggregate``
    (:mod:`tvbo.analysis.aggregate`). ``se`` is NaN when ``n < 2``.
    """
    check_aggregate(aggregate)
    valid = available_metrics(campaign)
    if metric not in valid:
        raise ValueError(f"unknown metric {metric!r}; valid choices: {valid}")
    runs = runs_table(campaign)
    keys = [k for k in EXPERIMENT_KEYS if k in runs.columns]
    values = runs[[*keys, "algorithm", metric]].dropna(subset=[metric])
    table = summarise_groups(values, [*keys, "algorithm"], metric, aggregate)
    table = table[[*keys, "algorithm", *STAT_COLUMNS, *INTERVAL_COLUMNS]]
    table.attrs["metric"] = metric
    table.attrs["aggregate"] = aggregate
    return table


def format_interval(centre: float, low: float, high: float, digits: int = 3) -> str:
    """``"2.51 [2.40, 2.70]"``: the centre to ``digits`` significant digits, the interval to
    the same decimals (a single value, or NaN interval: the centre alone)."""
    if not math.isfinite(centre):
        return "n/a"
    if centre != 0 and not 1e-4 <= abs(centre) < 10 ** (digits + 4):
        text = f"{centre:.{digits - 1}e}"
        if math.isfinite(low) and math.isfinite(high):
            return f"{text} [{low:.1e}, {high:.1e}]"
        return text
    decimals = decimals_for(centre, digits)
    text = f"{centre:.{decimals}f}"
    if not (math.isfinite(low) and math.isfinite(high)):
        return text
    return f"{text} [{low:.{decimals}f}, {high:.{decimals}f}]"


def table_aggregate(table: pd.DataFrame) -> str:
    """The aggregate a summary table was built with (``mean_se`` when it does not say)."""
    return str(table.attrs.get("aggregate", DEFAULT_AGGREGATE))


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


def decimals_for(x: float, digits: int) -> int:
    """Decimals that show ``digits`` significant digits of ``x`` (never negative)."""
    if x == 0 or not math.isfinite(x):
        return max(digits - 1, 0)
    return max(digits - 1 - math.floor(math.log10(abs(x))), 0)


#: an s.e. at most this fraction of its mean is the round-off of averaging equal floats (a few
#: units in the last place of the mean, about 1e-16 of it), shown as 0
ROUND_OFF_SE = 1e-12


def format_mean_se(mean: float, se: float, digits: int = 3) -> str:
    """``"2.51 ± 0.06"``: ``digits`` significant digits for the mean, se to the same decimals.

    The shared decimals make the ± readable at a glance (as in the papers' tables); an se that
    would round to zero is shown with one significant digit instead, unless it is the round-off
    of equal values (at most :data:`ROUND_OFF_SE` of the mean: a reference policy that scores
    the same in every seed), which is 0. Huge or tiny means use scientific notation.
    """
    if not math.isfinite(mean):
        return "n/a"
    if mean != 0 and not 1e-4 <= abs(mean) < 10 ** (digits + 4):
        text = f"{mean:.{digits - 1}e}"
        return text if not math.isfinite(se) else f"{text} ± {se:.1e}"
    decimals = decimals_for(mean, digits)
    text = f"{mean:.{decimals}f}"
    if not math.isfinite(se):
        return text
    if se <= ROUND_OFF_SE * abs(mean):
        se = 0.0  # equal values whose mean and spread picked up round-off: no spread to show
    se_text = f"{se:.{decimals}f}"
    if se > 0 and float(se_text) == 0:
        se_text = f"{se:.{decimals_for(se, 1)}f}"
    return f"{text} ± {se_text}"


def _row_label(row: pd.Series, keys: list[str], varying: list[str]) -> str:
    label = str(row["benchmark"]) if "benchmark" in keys else ""
    extras = [f"{k} {row[k]:g}" if isinstance(row[k], float) else f"{k} {row[k]}" for k in varying]
    return f"{label} ({', '.join(extras)})" if extras else label


def mark_best(table: pd.DataFrame, ci: float = DEFAULT_CI) -> pd.DataFrame:
    """``table`` plus boolean columns ``best`` (bold) and ``tied`` (underlined).

    Per experiment (benchmark and the other experiment keys, e.g. speed; Overall rows form
    their own experiments) and per ``metric`` when the table has that column, by
    :func:`separated_best`. Rows of metrics that are not "lower is better" (the query count)
    are never marked.
    """
    out = table.copy()
    out["best"] = False
    out["tied"] = False
    keys = _row_keys(table) + (["metric"] if "metric" in table.columns else [])
    se = out["se"] if "se" in out.columns else pd.Series(np.nan, index=out.index)
    intervals = table_aggregate(table) != DEFAULT_AGGREGATE and "centre" in out.columns
    for group, index in out.groupby(keys, sort=False, dropna=False).groups.items():
        metric = group[-1] if "metric" in table.columns else table.attrs.get("metric")
        if not is_marked(metric):
            continue
        rows = out.loc[index]
        if intervals and rows["centre"].notna().any():
            bold, tied = separated_best_intervals(
                rows["centre"].to_numpy(float), rows["low"].to_numpy(float),
                rows["high"].to_numpy(float))
        else:
            bold, tied = separated_best(
                rows["mean"].to_numpy(), se.loc[index].to_numpy(), ci
            )
        out.loc[index, "best"] = bold
        out.loc[index, "tied"] = tied
    out.attrs.update(table.attrs)
    return out


def summary_tables(
    campaign: xr.Dataset, metrics: Sequence[str] = TABLE_METRICS, *,
    aggregate: str = DEFAULT_AGGREGATE,
) -> pd.DataFrame:
    """:func:`summary_table` of each of ``metrics`` stacked, with a ``metric`` column.

    The Markdown and LaTeX tables show every metric of it per benchmark (one row each).
    """
    if not metrics:
        raise ValueError(f"metrics must name at least one metric, e.g. {list(TABLE_METRICS)}")
    parts = []
    for metric in metrics:
        part = summary_table(campaign, metric, aggregate=aggregate)
        part.insert(len(_row_keys(part)), "metric", metric)
        parts.append(part)
    table = pd.concat(parts, ignore_index=True)
    # columns follow the campaign's algorithm order (the config's), not the alphabet
    order = {str(a): i for i, a in enumerate(campaign["algorithm"].values)}
    rank = table["algorithm"].map(lambda a: order.get(str(a), len(order)))
    table = table.assign(_rank=rank).sort_values(
        [*_row_keys(table), "metric", "_rank"], key=_metric_key(metrics), kind="stable"
    ).drop(columns="_rank").reset_index(drop=True)
    table.attrs["metric"] = metrics[0]
    table.attrs["metrics"] = list(metrics)
    table.attrs["aggregate"] = aggregate
    return table


def _metric_key(metrics: Sequence[str]):
    """Sort key keeping ``metric`` in the given order (other columns sort naturally)."""
    position = {m: i for i, m in enumerate(metrics)}

    def key(column: pd.Series) -> pd.Series:
        return column.map(position) if column.name == "metric" else column

    return key


def _metrics_of(table: pd.DataFrame) -> list[str]:
    if "metric" in table.columns:
        return list(pd.unique(table["metric"]))
    return [str(table.attrs.get("metric", "the metric"))]


@dataclass(frozen=True)
class _Cell:
    text: str
    best: bool = False
    underline: bool = False


@dataclass(frozen=True)
class _Row:
    label: str
    metric: str
    overall: bool
    cells: list[_Cell]


def _layout(
    table: pd.DataFrame,
    digits: int,
    algorithms: Sequence[str] | None,
    ci: float,
) -> tuple[list[str], list[_Row]]:
    """Columns (algorithm keys) and formatted rows shared by the Markdown and LaTeX writers.

    One row per experiment and metric (metrics in the table's order, Overall experiments
    last), labelled by the benchmark on the experiment's first row only.
    """
    missing = [c for c in ("benchmark", "algorithm", "mean") if c not in table.columns]
    if missing:
        raise ValueError(
            f"a results table needs a long-form summary table; missing columns {missing}"
        )
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
    marked = mark_best(table[table["algorithm"].isin(columns)], ci)
    intervals = table_aggregate(table) != DEFAULT_AGGREGATE and "centre" in marked.columns
    has_metric = "metric" in marked.columns
    metrics = _metrics_of(marked)
    experiments = table[keys].drop_duplicates()
    overall = experiments["benchmark"] == OVERALL_LABEL
    experiments = pd.concat([experiments[~overall], experiments[overall]])
    rows = []
    for _, experiment in experiments.iterrows():
        mask = np.logical_and.reduce([marked[k] == experiment[k] for k in keys])
        label = _row_label(experiment, keys, varying)
        first = True
        for metric in metrics:
            subset = marked[mask & (marked["metric"] == metric)] if has_metric else marked[mask]
            if subset.empty:
                continue
            cells_by_algorithm = subset.set_index("algorithm")
            cells = []
            for algorithm in columns:
                if algorithm not in cells_by_algorithm.index:
                    cells.append(_Cell("n/a"))
                    continue
                row = cells_by_algorithm.loc[algorithm]
                mean = float(row["mean"])
                if not math.isfinite(mean):
                    cells.append(_Cell("n/a"))
                    continue
                se = float(row["se"]) if "se" in row.index else math.nan
                if intervals and math.isfinite(float(row["centre"])):
                    text = format_interval(float(row["centre"]), float(row["low"]),
                                           float(row["high"]), digits)
                else:  # the mean ± s.e. (and always for the papers' normalised Overall rows)
                    text = format_mean_se(mean, se, digits)
                cells.append(_Cell(text, bool(row["best"]), bool(row["tied"])))
            rows.append(
                _Row(label if first else "", METRIC_NAMES.get(metric, metric),
                     experiment["benchmark"] == OVERALL_LABEL, cells)
            )
            first = False
    return columns, rows


def _labels_for(table: pd.DataFrame, columns: Sequence[str],
                labels: Mapping[str, str] | None) -> list[str]:
    labels = dict(table.attrs.get("labels") or {}) | dict(labels or {})
    return [str(labels.get(c, c)) for c in columns]


def to_markdown(
    table: pd.DataFrame,
    *,
    digits: int = 3,
    algorithms: Sequence[str] | None = None,
    caption: bool = True,
    ci: float = DEFAULT_CI,
    labels: Mapping[str, str] | None = None,
    setting: Mapping[str, Any] | None = None,
) -> str:
    """A Markdown table: rows experiment (x metric), columns algorithm, cells "mean ± se".

    Marks by :func:`separated_best`: **bold** = the lowest mean, separated from every other
    cell by more than ``ci`` standard errors; ``<u>...</u>`` (Markdown has no underline;
    GitHub and the Snakemake report render the HTML tag) = the cells tied for best when none
    is separated. With a ``metric`` column (:func:`summary_tables`) each experiment has one row
    per metric and a "metric" column. Experiment keys other than ``benchmark`` (e.g. ``speed``)
    appear in the row label only when they take more than one value. ``algorithms`` fixes the
    column order (default: order of appearance); ``labels`` maps algorithm keys to column
    names (default ``table.attrs["labels"]``, else the keys). ``setting``
    (:func:`tvbo.analysis.context.campaign_setting`) adds horizon, cost table and profile to
    the caption.
    """
    columns, rows = _layout(table, digits, algorithms, ci)
    names = _labels_for(table, columns, labels)
    with_metric = "metric" in table.columns
    head = ["benchmark", "metric"] if with_metric else ["benchmark"]
    lines = [
        "| " + " | ".join([*head, *names]) + " |",
        "|" + "---|" * (len(columns) + len(head)),
    ]
    for row in rows:
        texts = [
            f"**{c.text}**" if c.best else f"<u>{c.text}</u>" if c.underline else c.text
            for c in row.cells
        ]
        first = [row.label, row.metric] if with_metric else [row.label]
        lines.append("| " + " | ".join([*first, *texts]) + " |")
    if caption:
        lines.append("")
        lines.append(table_caption(table, ci, labels=_label_map(table, columns, labels),
                                   setting=setting))
    return "\n".join(lines) + "\n"


def _label_map(table: pd.DataFrame, columns: Sequence[str],
               labels: Mapping[str, str] | None) -> dict[str, str]:
    return dict(zip(columns, _labels_for(table, columns, labels), strict=True))


#: LaTeX special characters and their escapes (backslash first: the others insert backslashes)
#:
#: Why not a library (issue 26 asked): pandas' LaTeX escaper is private
#: (``pandas.io.formats.style_render._escape_latex``, free to change between releases), and
#: pylatexenc's ``unicode_to_latex`` would add a dependency for the ten characters below and
#: the fifteen symbols of :data:`_LATEX_SYMBOLS`, while writing ``\ensuremath{\pm}``-style
#: macros that change every published .tex table. The two tables are complete for LaTeX's
#: special characters (the ten of the LaTeX Companion, 2nd ed., §2.2) and
#: ``tests/analysis/test_tables_papers.py::test_latex_escape`` checks each of them.
_LATEX_ESCAPES: tuple[tuple[str, str], ...] = (
    ("\\", r"\textbackslash{}"),
    ("&", r"\&"),
    ("%", r"\%"),
    ("$", r"\$"),
    ("#", r"\#"),
    ("_", r"\_"),
    ("{", r"\{"),
    ("}", r"\}"),
    ("~", r"\textasciitilde{}"),
    ("^", r"\textasciicircum{}"),
)


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped (names such as ``w_dbo`` or ``a&b``)."""
    out = []
    for char in str(text):
        for special, escaped in _LATEX_ESCAPES:
            if char == special:
                out.append(escaped)
                break
        else:
            out.append(char)
    return "".join(out)


#: symbols tvbo's captions and cells use, as LaTeX (text-mode '<' and '>' print as '¡' '¿')
_LATEX_SYMBOLS: dict[str, str] = {
    "±": r"$\pm$",
    "–": "--",
    "−": "$-$",
    "→": r"$\to$",
    "×": r"$\times$",
    "·": r"$\cdot$",
    "²": "$^2$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    ">": "$>$",
    "<": "$<$",
    "|": r"$|$",
    "∫": r"$\int$",
    "√": r"$\surd$",
    "∓": r"$\mp$",
}


def latex_text(text: str) -> str:
    """Escaped ``text`` with the symbols of :data:`_LATEX_SYMBOLS` turned into LaTeX."""
    return "".join(_LATEX_SYMBOLS.get(char, latex_escape(char)) for char in str(text))


def _latex_cell(cell: _Cell) -> str:
    text = "--" if cell.text == "n/a" else latex_text(cell.text)
    if cell.best:
        return rf"\textbf{{{text}}}"
    if cell.underline:
        return rf"\underline{{{text}}}"
    return text


def to_latex(
    table: pd.DataFrame,
    *,
    digits: int = 3,
    algorithms: Sequence[str] | None = None,
    caption: bool = True,
    ci: float = DEFAULT_CI,
    label: str | None = None,
    labels: Mapping[str, str] | None = None,
    setting: Mapping[str, Any] | None = None,
) -> str:
    """The same table as :func:`to_markdown` as a LaTeX ``table`` float (needs ``booktabs``).

    Bold cells use ``\\textbf``, underlined ones ``\\underline``; names are escaped
    (:func:`latex_escape`); the Overall row(s) sit below a ``\\midrule``, as in the papers, and
    with several metrics a ``\\midrule`` separates the benchmarks. ``label`` is the LaTeX
    ``\\label``; ``labels`` the column names (as in :func:`to_markdown`).
    """
    columns, rows = _layout(table, digits, algorithms, ci)
    names = _labels_for(table, columns, labels)
    with_metric = "metric" in table.columns
    lines = [
        r"% generated by tvbo; needs \usepackage{booktabs}",
        r"\begin{table}[ht]",
        r"\centering",
    ]
    if caption:
        text = table_caption(table, ci, labels=_label_map(table, columns, labels),
                             setting=setting)
        lines.append(rf"\caption{{{latex_text(text)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    head = ["Benchmark", "Metric"] if with_metric else ["Benchmark"]
    lines += [
        rf"\begin{{tabular}}{{{'l' * len(head)}{'c' * len(columns)}}}",
        r"\toprule",
        " & ".join([*head, *(latex_escape(c) for c in names)]) + r" \\",
        r"\midrule",
    ]
    previous_overall = False
    for number, row in enumerate(rows):
        if row.overall and not previous_overall:
            lines.append(r"\midrule")
        elif with_metric and row.label and number > 0:
            lines.append(r"\midrule")
        previous_overall = row.overall
        first = [latex_escape(row.label)]
        if with_metric:
            first.append(latex_text(row.metric))
        lines.append(" & ".join([*first, *(_latex_cell(c) for c in row.cells)]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


#: the papers' normalised regret, as every caption states it
NORMALISED_DEFINITION = (
    f"{OVERALL_LABEL}: the papers' normalised regret (BOLT [A] and [B], §5): "
    "per benchmark the best algorithm gets 0 and the worst 1, N = (mean − min) / (max − min) "
    "of the algorithms' mean regrets, then N is averaged over the benchmarks (± standard error "
    "over benchmarks)"
)


def _seed_text(table: pd.DataFrame) -> str:
    if "n" not in table.columns:
        return "over seeds"
    real = table[table["benchmark"] != OVERALL_LABEL]["n"]
    if not len(real):
        return "over seeds"
    low, high = int(real.min()), int(real.max())
    return f"over {low} seeds" if low == high else f"over {low}–{high} seeds (missing runs)"


def _cell_text(table: pd.DataFrame) -> str:
    """What a cell shows, for the caption (the aggregate's centre and interval)."""
    aggregate = table_aggregate(table)
    seeds = _seed_text(table)
    if aggregate == DEFAULT_AGGREGATE:
        return f"mean ± s.e. {seeds} (s.e. = standard error = std(ddof=1)/√n)"
    return (f"{CENTRE_NAMES[aggregate]} [{BAND_NAMES[aggregate]}] {seeds}"
            + (" (IQM = mean of the middle 50 % of seeds)" if aggregate == "iqm_bootstrap"
               else "")
            + "; bold / underline decided on these intervals; Overall rows: the papers' "
            "normalised means ± s.e.")


def table_caption(
    table: pd.DataFrame,
    ci: float = DEFAULT_CI,
    *,
    labels: Mapping[str, str] | None = None,
    setting: Mapping[str, Any] | None = None,
) -> str:
    """What a results table shows, exactly: metrics, statistics, marks, setting, names.

    ``labels`` maps algorithm keys to the column names (each named with its key, so a reader
    can find the config entry); ``setting`` is :func:`tvbo.analysis.context.campaign_setting`.
    """
    metrics = _metrics_of(table)
    defined = [METRIC_DEFINITIONS.get(m, m) for m in metrics]
    text = (
        defined[0][:1].upper() + defined[0][1:]
        + ("" if len(defined) == 1 else "; " + "; ".join(defined[1:]))
        + f". Every cell: {_cell_text(table)}."
    )
    marked = [METRIC_NAMES.get(m, m) for m in metrics if is_marked(m)]
    if marked:
        text += (
            f" Lower is better. Bold: the lowest mean of a row when it is separated from every "
            f"other cell by more than the standard errors (best mean + {ci:g} s.e. < other mean "
            f"− {ci:g} s.e. for all others); otherwise no bold, and the cells tied for best (the "
            f"lowest mean and every cell with mean − {ci:g} s.e. ≤ best mean + {ci:g} s.e.) are "
            "underlined."
        )
        unmarked = [METRIC_NAMES.get(m, m) for m in metrics if not is_marked(m)]
        if unmarked:
            text += f" Not marked: {', '.join(unmarked)}."
    if (table["benchmark"] == OVERALL_LABEL).any():
        text += f" {NORMALISED_DEFINITION}."
    if setting is not None:
        text += " " + setting_text(setting)
    renamed = {key: name for key, name in (labels or {}).items() if name != key}
    if renamed:
        text += " Algorithms (label = config key): " + "; ".join(
            f"{name} = {key}" for key, name in renamed.items()
        ) + "."
        shown = variant_meanings(renamed.values())
        if shown:
            text += " " + "; ".join(shown)
            notes = table.attrs.get("variant_notes") or []
            robust = any("(robust)" in n for n in renamed.values())
            text += (": " + "; ".join(notes) + ".") if notes and robust else "."
    return text


def to_csv(table: pd.DataFrame, path: str | Path) -> Path:
    """Write the long-form table as CSV (no index); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(path, index=False)
    return path


def with_overall(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` plus the papers' normalised "Overall" rows (when >= 2 benchmarks, algorithms).

    With a ``metric`` column, one set of Overall rows per marked (regret) metric.
    """
    if table["benchmark"].nunique() < 2 or table["algorithm"].nunique() < 2:
        return table
    if "metric" not in table.columns:
        normalised = normalised_regret(table)
        overall = normalised[normalised["benchmark"] == OVERALL_LABEL]
        combined = pd.concat([table, overall.reindex(columns=table.columns)],
                             ignore_index=True)
        combined.attrs.update(table.attrs)
        return combined
    parts = [table]
    for metric in _metrics_of(table):
        if not is_marked(metric):
            continue
        normalised = normalised_regret(table[table["metric"] == metric].drop(columns="metric"))
        overall = normalised[normalised["benchmark"] == OVERALL_LABEL].copy()
        overall["metric"] = metric
        parts.append(overall.reindex(columns=table.columns))
    combined = pd.concat(parts, ignore_index=True)
    combined.attrs.update(table.attrs)
    return combined


def wide_csv_table(table: pd.DataFrame, metric: str, ci: float = DEFAULT_CI) -> pd.DataFrame:
    """The CSV layout of :func:`write_tables`: one row per experiment x algorithm.

    ``metric``'s ``mean``, ``se``, ``n`` (seeds), ``best`` (bold) and ``tied`` (underlined),
    then ``<other>_mean`` / ``<other>_se`` (and ``_best`` / ``_tied`` for the other regret) of
    every other metric of ``table`` (a :func:`summary_tables` table), and ``label``, the column
    name the Markdown / LaTeX tables print.
    """
    marked = mark_best(table, ci)
    keys = _row_keys(marked)
    primary = marked[marked["metric"] == metric].drop(columns="metric")
    extra = ([c for c in INTERVAL_COLUMNS if c in primary.columns]
             if table_aggregate(table) != DEFAULT_AGGREGATE else [])
    out = primary[[*keys, "algorithm", "mean", "se", "n", *extra, "best", "tied"]].reset_index(
        drop=True)
    for other in _metrics_of(marked):
        if other == metric:
            continue
        columns = ["mean", "se"] + (["best", "tied"] if is_marked(other) else [])
        part = marked[marked["metric"] == other][[*keys, "algorithm", *columns]]
        part = part.rename(columns={c: f"{other}_{c}" for c in columns})
        out = out.merge(part, on=[*keys, "algorithm"], how="left")
    labels = dict(table.attrs.get("labels") or {})
    out.insert(len(keys) + 1, "label", out["algorithm"].map(lambda a: labels.get(a, a)))
    out.attrs.update(table.attrs)
    out.attrs["metric"] = metric
    return out


#: what :func:`write_tables` can write per metric (file name suffix -> content)
TABLE_FORMATS: dict[str, str] = {
    "csv": "<metric>.csv: one row per experiment x algorithm: label, the metric's mean, se, n "
    "(seeds), best (bold), tied (underlined), then <other metric>_mean/_se of the other "
    "regret and of the query count",
    "md": "<metric>.md: per benchmark one row per metric (the metric first, then the other "
    "regret and the queries), the Overall rows, bold and <u>underline</u>",
    "tex": "<metric>.tex: the same as a LaTeX booktabs table",
    "normalised": "<metric>_normalised.csv: min-max normalised mean per benchmark and the "
    "Overall rows (the numbers behind the papers' normalised-regret figure)",
}


def table_files(metric: str, formats: Sequence[str]) -> list[str]:
    """File names :func:`write_tables` writes for ``metric`` and ``formats`` (in that order)."""
    unknown = [f for f in formats if f not in TABLE_FORMATS]
    if unknown:
        raise ValueError(f"unknown table formats {unknown}; valid formats: {list(TABLE_FORMATS)}")
    suffixes = {"csv": ".csv", "md": ".md", "tex": ".tex", "normalised": "_normalised.csv"}
    return [f"{metric}{suffixes[f]}" for f in formats]


def campaign_summary(
    campaign: xr.Dataset,
    metrics: Sequence[str] = TABLE_METRICS,
    labels: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    aggregate: str = DEFAULT_AGGREGATE,
) -> pd.DataFrame:
    """:func:`summary_tables` with the campaign's labels, variant notes and setting in attrs.

    ``labels`` are config entries with ``label``/``variant`` (``algorithm_options``); see
    :func:`tvbo.analysis.context.campaign_labels`. The attrs ``labels`` (key -> column name),
    ``variant_notes`` and ``setting`` feed the writers and the caption.
    """
    table = summary_tables(campaign, metrics, aggregate=aggregate)
    names = campaign_labels(campaign, labels)
    keys = list(pd.unique(table["algorithm"]))
    table.attrs["labels"] = {k: names.get(k, k) for k in keys}
    table.attrs["variant_notes"] = variant_notes(
        keys, names, recorded_algorithm_options(campaign), labels
    )
    table.attrs["setting"] = campaign_setting(campaign)
    return table


def _ordered(metric: str, metrics: Sequence[str]) -> list[str]:
    """``metric`` first, then the other shown metrics (both regrets and the query count)."""
    return [metric, *[m for m in metrics if m != metric]]


def write_tables(
    campaign: xr.Dataset,
    outdir: str | Path,
    metrics: Sequence[str] = ("average_regret", "time_integrated_regret"),
    *,
    formats: Sequence[str] = ("csv", "md"),
    ci: float = DEFAULT_CI,
    digits: int = 3,
    labels: Mapping[str, Mapping[str, Any]] | None = None,
    aggregate: str = DEFAULT_AGGREGATE,
) -> list[Path]:
    """Write the tables of each metric in each of ``formats`` (:data:`TABLE_FORMATS`).

    Every table shows both regrets and the number of queries (:data:`TABLE_METRICS`), the
    file's metric first: a low query regret from a few well-placed queries is visible beside
    the time-integrated regret. The Markdown and LaTeX tables add the papers' normalised
    "Overall" rows (one per regret) at the bottom; the CSV holds only per-benchmark statistics
    (one row per experiment x algorithm, :func:`wide_csv_table`); ``normalised`` holds the
    normalised values of the file's metric and its Overall rows. Column names are the
    algorithms' labels (``W-DBO (robust)``; ``labels``: config entries carrying ``label`` or
    ``variant``). LaTeX and the normalised CSV are opt-in here (``tvbo table`` writes all four).
    """
    check_ci(ci)
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    # the companions a campaign records (every run file has all three; synthetic ones may not)
    present = set(available_metrics(campaign))
    shown = list(dict.fromkeys([*metrics, *(m for m in TABLE_METRICS if m in present)]))
    full = campaign_summary(campaign, shown, labels, aggregate=aggregate)
    setting = full.attrs["setting"]
    written = []
    for metric in metrics:
        order = _ordered(metric, shown)
        table = pd.concat([full[full["metric"] == m] for m in order], ignore_index=True)
        table.attrs.update(full.attrs)
        table.attrs["metric"] = metric
        for fmt, name in zip(formats, table_files(metric, formats), strict=True):
            path = outdir / name
            if fmt == "csv":
                to_csv(wide_csv_table(table, metric, ci), path)
            elif fmt == "md":
                text = to_markdown(with_overall(table), digits=digits, ci=ci, setting=setting)
                path.write_text(f"### {metric}\n\n" + text, encoding="utf-8")
            elif fmt == "tex":
                text = to_latex(with_overall(table), digits=digits, ci=ci, label=f"tab:{metric}",
                                setting=setting)
                path.write_text(text, encoding="utf-8")
            else:
                single = table[table["metric"] == metric].drop(columns="metric")
                normalised = mark_best(normalised_regret(single), ci)
                normalised.insert(
                    normalised.columns.get_loc("algorithm") + 1, "label",
                    normalised["algorithm"].map(lambda a: full.attrs["labels"].get(a, a)),
                )
                to_csv(normalised, path)
            written.append(path)
    return written
