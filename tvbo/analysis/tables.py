"""Results tables in the papers' form: mean ± standard error over seeds, best in bold.

Spec_bolt §9: "For each experiment and each algorithm, the average regret and its standard
error over 10 independent experiments is provided (lower is better). For each experiment, the
performance of the best algorithm is written in bold, and the performance of algorithms whose
confidence intervals overlap the confidence interval of the best performing algorithm are
underlined." The tables are kept in long (tidy) form (one row per experiment x algorithm) so
they feed pandas/seaborn directly; :func:`pivot_summary`, :func:`to_markdown` and
:func:`to_latex` give the paper layout (rows benchmark, columns algorithm, the normalised
Overall row last). The confidence interval is ``mean ± ci * se`` with ``ci = 1`` by default, the
interval the papers print (:func:`best_and_overlapping` says why and how overlap is decided).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from tvbo.analysis.metrics import EXPERIMENT_KEYS, OVERALL_LABEL, normalised_regret
from tvbo.results.campaign import ATTRIBUTE_PREFIX, PRESENT_VARIABLE, run_variables, runs_table

STAT_COLUMNS: tuple[str, ...] = ("mean", "se", "n")
#: half-width of the confidence interval in standard errors (the papers print mean ± 1 s.e.)
DEFAULT_CI = 1.0


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


def decimals_for(x: float, digits: int) -> int:
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
    decimals = decimals_for(mean, digits)
    text = f"{mean:.{decimals}f}"
    if not math.isfinite(se):
        return text
    se_text = f"{se:.{decimals}f}"
    if se > 0 and float(se_text) == 0:
        se_text = f"{se:.{decimals_for(se, 1)}f}"
    return f"{text} ± {se_text}"


def _row_label(row: pd.Series, keys: list[str], varying: list[str]) -> str:
    label = str(row["benchmark"]) if "benchmark" in keys else ""
    extras = [f"{k} {row[k]:g}" if isinstance(row[k], float) else f"{k} {row[k]}" for k in varying]
    return f"{label} ({', '.join(extras)})" if extras else label


def _check_ci(ci: float) -> float:
    """The interval half-width in standard errors, validated (a finite number >= 0)."""
    try:
        value = float(ci)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(
            f"ci (interval half-width in standard errors) must be a finite number >= 0, got {ci!r}"
        )
    return value


def best_and_overlapping(
    means: Sequence[float], ses: Sequence[float], ci: float = DEFAULT_CI
) -> tuple[np.ndarray, np.ndarray]:
    """Which cells of one table row are bold (best) and which are underlined.

    The papers' caption: "the performance of the best algorithm is written in bold, and the
    performance of algorithms whose confidence intervals overlap the confidence interval of the
    best performing algorithm are underlined". The caption gives no level, and the tables print
    mean ± s.e., so the interval of a cell is ``[mean - ci * se, mean + ci * se]`` with
    ``ci = 1`` by default (``ci = 1.96`` gives normal 95 % intervals; ``ci = 0`` turns the
    underlines off). Best = the lowest finite mean (every tied one). A non-best cell is
    underlined when its interval and a best cell's interval share more than one point
    (``mean - ci * se < best + ci * se_best``; intervals that merely touch are not underlined). A
    missing s.e. (one seed, or a paper that printed none) counts as 0: a point interval. Cells
    with a NaN mean are neither.
    """
    ci = _check_ci(ci)
    means = np.asarray(means, dtype=float)
    ses = np.nan_to_num(np.asarray(ses, dtype=float), nan=0.0)
    if means.shape != ses.shape or means.ndim != 1:
        raise ValueError(
            f"means and ses must be 1-d and of equal length, got {means.shape} and {ses.shape}"
        )
    finite = np.isfinite(means)
    best = np.zeros(means.shape, dtype=bool)
    overlaps = np.zeros(means.shape, dtype=bool)
    if not finite.any():
        return best, overlaps
    best = finite & (means == means[finite].min())
    best_upper = (means[best] + ci * ses[best]).max()
    overlaps = finite & ~best & (means - ci * ses < best_upper)
    return best, overlaps


def mark_best(table: pd.DataFrame, ci: float = DEFAULT_CI) -> pd.DataFrame:
    """``table`` plus boolean columns ``best`` (bold) and ``overlaps_best`` (underlined).

    Per experiment (benchmark and the other experiment keys, e.g. speed; Overall rows form
    their own experiments), by :func:`best_and_overlapping`.
    """
    out = table.copy()
    out["best"] = False
    out["overlaps_best"] = False
    keys = _row_keys(table)
    se = out["se"] if "se" in out.columns else pd.Series(np.nan, index=out.index)
    for _, index in out.groupby(keys, sort=False, dropna=False).groups.items():
        best, overlaps = best_and_overlapping(
            out.loc[index, "mean"].to_numpy(), se.loc[index].to_numpy(), ci
        )
        out.loc[index, "best"] = best
        out.loc[index, "overlaps_best"] = overlaps
    out.attrs.update(table.attrs)
    return out


@dataclass(frozen=True)
class _Cell:
    text: str
    best: bool = False
    underline: bool = False


@dataclass(frozen=True)
class _Row:
    label: str
    overall: bool
    cells: list[_Cell]


def _layout(
    table: pd.DataFrame, digits: int, algorithms: Sequence[str] | None, ci: float
) -> tuple[list[str], list[_Row]]:
    """Columns and formatted rows shared by the Markdown and LaTeX writers."""
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
    rows = []
    experiments = table[keys].drop_duplicates()
    for _, experiment in experiments.iterrows():
        mask = np.logical_and.reduce([marked[k] == experiment[k] for k in keys])
        cells_by_algorithm = marked[mask].set_index("algorithm")
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
            text = format_mean_se(mean, se, digits)
            cells.append(_Cell(text, bool(row["best"]), bool(row["overlaps_best"])))
        label = _row_label(experiment, keys, varying)
        rows.append(_Row(label, experiment["benchmark"] == OVERALL_LABEL, cells))
    return columns, rows


def to_markdown(
    table: pd.DataFrame,
    *,
    digits: int = 3,
    algorithms: Sequence[str] | None = None,
    caption: bool = True,
    ci: float = DEFAULT_CI,
) -> str:
    """A Markdown table: rows experiment, columns algorithm, cells "mean ± se".

    The lowest mean of each row is in **bold** (all tied lowest means are); cells whose
    interval overlaps the best one's are underlined with ``<u>...</u>`` (Markdown has no
    underline; GitHub and the Snakemake report render the HTML tag), see
    :func:`best_and_overlapping`. Experiment keys other than ``benchmark`` (e.g. ``speed``)
    appear in the row label only when they take more than one value. ``algorithms`` fixes the
    column order (default: order of appearance).
    """
    columns, rows = _layout(table, digits, algorithms, ci)
    lines = [
        "| " + " | ".join(["benchmark", *columns]) + " |",
        "|" + "---|" * (len(columns) + 1),
    ]
    for row in rows:
        texts = [
            f"**{c.text}**" if c.best else f"<u>{c.text}</u>" if c.underline else c.text
            for c in row.cells
        ]
        lines.append("| " + " | ".join([row.label, *texts]) + " |")
    if caption:
        lines.append("")
        lines.append(_caption(table, ci))
    return "\n".join(lines) + "\n"


#: LaTeX special characters and their escapes (backslash first: the others insert backslashes)
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
) -> str:
    """The same table as :func:`to_markdown` as a LaTeX ``table`` float (needs ``booktabs``).

    Bold cells use ``\\textbf``, underlined ones ``\\underline``; names are escaped
    (:func:`latex_escape`); the Overall row(s) sit below a ``\\midrule``, as in the papers.
    """
    columns, rows = _layout(table, digits, algorithms, ci)
    lines = [
        r"% generated by tvbo; needs \usepackage{booktabs}",
        r"\begin{table}[ht]",
        r"\centering",
    ]
    if caption:
        lines.append(rf"\caption{{{latex_text(_caption(table, ci))}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [
        rf"\begin{{tabular}}{{l{'c' * len(columns)}}}",
        r"\toprule",
        " & ".join(["Benchmark", *(latex_escape(c) for c in columns)]) + r" \\",
        r"\midrule",
    ]
    previous_overall = False
    for row in rows:
        if row.overall and not previous_overall:
            lines.append(r"\midrule")
        previous_overall = row.overall
        lines.append(
            " & ".join([latex_escape(row.label), *(_latex_cell(c) for c in row.cells)]) + r" \\"
        )
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def _caption(table: pd.DataFrame, ci: float = DEFAULT_CI) -> str:
    metric = table.attrs.get("metric", "the metric")
    text = f"Mean ± standard error of {metric} over seeds"
    if "n" in table.columns:
        real = table[table["benchmark"] != OVERALL_LABEL]["n"]
        if len(real):
            low, high = int(real.min()), int(real.max())
            text += f" (n = {low})" if low == high else f" (n = {low}–{high})"
    text += "; lowest mean per row in bold (lower is better)"
    if ci > 0:
        text += (
            f"; underlined: the interval mean ± {ci:g} s.e. overlaps that of the best cell"
        )
    text += "."
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


#: what :func:`write_tables` can write per metric (file name suffix -> content)
TABLE_FORMATS: dict[str, str] = {
    "csv": "<metric>.csv: long form, one row per experiment x algorithm (mean, se, n, best, "
    "overlaps_best)",
    "md": "<metric>.md: the papers' layout with the Overall row, bold and <u>underline</u>",
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


def write_tables(
    campaign: xr.Dataset,
    outdir: str | Path,
    metrics: Sequence[str] = ("average_regret", "time_integrated_regret"),
    *,
    formats: Sequence[str] = ("csv", "md"),
    ci: float = DEFAULT_CI,
    digits: int = 3,
) -> list[Path]:
    """Write the tables of each metric in each of ``formats`` (:data:`TABLE_FORMATS`).

    The Markdown and LaTeX tables add the papers' normalised "Overall" row(s) at the bottom;
    the CSV holds only per-benchmark statistics so that every row of it is one experiment x
    algorithm (its ``best``/``overlaps_best`` columns are the bold/underline of the other
    formats); ``normalised`` holds the normalised values and the Overall rows. LaTeX and the
    normalised CSV are opt-in here (the ``tvbo table`` command writes all four).
    """
    _check_ci(ci)
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for metric in metrics:
        table = summary_table(campaign, metric)
        for fmt, name in zip(formats, table_files(metric, formats), strict=True):
            path = outdir / name
            if fmt == "csv":
                to_csv(mark_best(table, ci), path)
            elif fmt == "md":
                text = to_markdown(with_overall(table), digits=digits, ci=ci)
                path.write_text(f"### {metric}\n\n" + text, encoding="utf-8")
            elif fmt == "tex":
                text = to_latex(with_overall(table), digits=digits, ci=ci, label=f"tab:{metric}")
                path.write_text(text, encoding="utf-8")
            else:
                to_csv(mark_best(normalised_regret(table), ci), path)
            written.append(path)
    return written
