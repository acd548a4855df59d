"""Paper vs tvbo: the published average regrets beside a campaign's, and the normalised figure.

For every (benchmark, algorithm) present both in a published table (:mod:`tvbo.analysis.published`)
and in a campaign, :func:`comparison_table` puts the paper's mean ± s.e. beside tvbo's (mean ±
s.e. over n seeds), their difference and ratio, a flag when the difference exceeds two combined
standard errors, and each algorithm's rank within its benchmark in the paper and in tvbo, so
that a change of ranking is visible at a glance. Two normalised "Overall" rows per algorithm end
the table: the papers' min-max normalised regret (spec_bolt.md §9.3), recomputed for both
sides on the *shared* grid only (the published Overall row averages over benchmarks and
algorithms the campaign may not have, so it is not comparable).

Which paper table: the one matching the campaign's cost table (``metronome`` -> BOLT [B] Table 2,
``icml`` -> BOLT [A] Table 3; read from the runs' recorded configuration), or any named one
(``wdbo``: W-DBO Table 2). A campaign may run a variant of a paper's algorithm under another
name; ``aliases`` maps the paper's tvbo name to the campaign's (``{"bolt-icml": "bolt"}``).

Conventions:
* difference = tvbo - paper; ratio = tvbo / paper.
* combined s.e. = sqrt(se_tvbo^2 + se_paper^2). W-DBO published no s.e.: the paper's then counts
  as 0, so the combined s.e. is a lower bound and the flag fires more easily (said in the
  caption).
* ranks are 1 = lowest mean among the algorithms compared on that benchmark (ties share the
  lowest rank), computed on the shared algorithms only, so both sides rank the same set.

The figure (:func:`normalised_regret_figure`) is the papers' Fig. 2/3: normalised average regret
per algorithm, mean ± s.e. over benchmarks, the paper's points beside tvbo's, each benchmark's
normalised value as a faint dot behind.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import seaborn as sns
import xarray as xr
from matplotlib.figure import Figure

from tvbo.algorithms.display import variant_meanings, variant_notes
from tvbo.analysis.context import campaign_labels, recorded_algorithm_options
from tvbo.analysis.figure_output import FigureOptions
from tvbo.analysis.metrics import OVERALL_LABEL, normalised_regret
from tvbo.analysis.published import (
    PAPERS,
    apply_aliases,
    check_paper,
    paper_for_cost_table,
    paper_table,
)
from tvbo.analysis.settings_caveat import campaign_caveat
from tvbo.analysis.tables import (
    METRIC_NAMES,
    NORMALISED_DEFINITION,
    QUERIES,
    available_metrics,
    decimals_for,
    format_mean_se,
    latex_escape,
    latex_text,
    summary_table,
)
from tvbo.results.campaign import run_configs

#: what ``--paper`` accepts besides a paper key: the campaign's own (auto) or none (figure only)
PAPER_CHOICES: tuple[str, ...] = ("auto", *PAPERS, "none")
METRIC = "average_regret"  # the metric of every published table
COMPARISON_FILES: tuple[str, ...] = (
    "paper_vs_tvbo.csv",
    "paper_vs_tvbo.md",
    "paper_vs_tvbo.tex",
    "normalised_regret.png",
)
FIGURE_FILE = "normalised_regret.png"
#: a difference beyond this many combined standard errors is flagged
FLAG_SE = 2.0
#: tvbo's metrics shown beside the compared average regret (the papers publish only the latter)
COMPANIONS: tuple[str, ...] = ("time_integrated_regret", QUERIES)


# -- which paper ----------------------------------------------------------------------------------
def campaign_cost_tables(campaign: xr.Dataset) -> list[str]:
    """The cost tables (``metronome``/``icml``) recorded in the runs' configuration.

    A run records its configuration as the JSON attribute ``config_json``; in a merged campaign
    it is a global attribute when every run has the same, else the per-run variable
    ``attr_config_json``. Runs that do not record a cost table (old files) are skipped.
    """
    tables = {str(config["cost_table"]) for config in run_configs(campaign)
              if config.get("cost_table")}
    return sorted(tables)


def resolve_paper(campaign: xr.Dataset, paper: str = "auto") -> str | None:
    """The paper key to compare with: ``paper`` itself, ``None`` for ``"none"``, or for
    ``"auto"`` the table matching the campaign's single recorded cost table."""
    if paper == "none":
        return None
    if paper != "auto":
        check_paper(paper)
        return paper
    tables = campaign_cost_tables(campaign)
    if len(tables) != 1:
        found = f"found {tables}" if tables else "no run records one"
        raise ValueError(
            f"cannot choose the paper table automatically: the campaign needs exactly one cost "
            f"table ({found}); name one with --paper ({', '.join(PAPERS)})"
        )
    return paper_for_cost_table(tables[0])


# -- the table ------------------------------------------------------------------------------------
def _ranks(frame: pd.DataFrame, column: str, keys: list[str]) -> pd.Series:
    return frame.groupby(keys, sort=False)[column].rank(method="min").astype("Int64")


def _overall_rows(joined: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Normalised Overall rows of both sides on the shared grid, one per algorithm (and speed)."""
    outer = [k for k in keys if k != "benchmark"]
    sides = {}
    for side in ("paper", "tvbo"):
        long = joined[[*keys, "algorithm"]].copy()
        long["mean"] = joined[f"{side}_mean"]
        long["se"] = np.nan
        long["n"] = 1
        normalised = normalised_regret(long, experiment_keys=keys)
        sides[side] = normalised[normalised["benchmark"] == OVERALL_LABEL].set_index(
            [*outer, "algorithm"]
        )
    index = sides["tvbo"].index
    rows = pd.DataFrame(
        {
            "paper_mean": sides["paper"].loc[index, "mean"].to_numpy(),
            "paper_se": sides["paper"].loc[index, "se"].to_numpy(),
            "tvbo_mean": sides["tvbo"]["mean"].to_numpy(),
            "tvbo_se": sides["tvbo"]["se"].to_numpy(),
            "tvbo_n": sides["tvbo"]["n"].to_numpy(),
        },
        index=index,
    ).reset_index()
    rows["benchmark"] = OVERALL_LABEL
    rows["paper_benchmark"] = f"{OVERALL_LABEL} (recomputed on the shared grid)"
    paper_names = joined.drop_duplicates("algorithm").set_index("algorithm")["paper_algorithm"]
    rows["paper_algorithm"] = rows["algorithm"].map(paper_names)
    return rows


def comparison_table(
    tvbo: pd.DataFrame,
    paper: str,
    aliases: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Paper vs tvbo for every shared (benchmark, algorithm), plus normalised Overall rows.

    ``tvbo`` is the long-form average-regret table of a campaign
    (:func:`tvbo.analysis.tables.summary_table`). Columns: the experiment keys (``benchmark``,
    ``speed`` when present), ``algorithm``, ``paper_benchmark``/``paper_algorithm`` (as
    printed), ``printed`` (the paper's cell as printed; empty on Overall rows), ``paper_mean``,
    ``paper_se``, ``tvbo_mean``, ``tvbo_se``, ``tvbo_n``, ``difference`` (tvbo - paper),
    ``ratio`` (tvbo / paper), ``combined_se``, ``z`` (difference / combined s.e.), ``differs``
    (``|z| > 2``; missing when the combined s.e. is unknown), ``paper_rank``, ``tvbo_rank`` and
    ``rank_change`` (tvbo - paper). Rows follow the paper's order, one block per speed; the
    Overall rows (``benchmark == "Overall"``) end each block. Raises a ValueError naming both
    grids when nothing is shared.
    """
    missing = [c for c in ("benchmark", "algorithm", "mean", "se", "n") if c not in tvbo.columns]
    if missing:
        raise ValueError(f"the tvbo table needs columns {missing} (use summary_table)")
    published = apply_aliases(paper_table(paper), aliases, paper)
    tvbo = tvbo[tvbo["benchmark"] != OVERALL_LABEL]
    keys = ["benchmark", *[c for c in ("speed",) if c in tvbo.columns]]
    joined = published.merge(tvbo, on=["benchmark", "algorithm"], suffixes=("_paper", "_tvbo"))
    if joined.empty:
        raise ValueError(
            f"paper table {paper!r} shares no (benchmark, algorithm) with the campaign: the paper "
            f"has benchmarks {sorted(set(published['benchmark']))} and algorithms "
            f"{list(pd.unique(published['algorithm']))}; the campaign has benchmarks "
            f"{sorted(set(tvbo['benchmark']))} and algorithms {sorted(set(tvbo['algorithm']))}"
        )
    joined = joined.rename(
        columns={
            "mean_paper": "paper_mean",
            "se_paper": "paper_se",
            "mean_tvbo": "tvbo_mean",
            "se_tvbo": "tvbo_se",
            "n_tvbo": "tvbo_n",
        }
    )
    joined = joined[
        [*keys, "algorithm", "paper_benchmark", "paper_algorithm", "printed", "paper_mean",
         "paper_se", "tvbo_mean", "tvbo_se", "tvbo_n"]
    ]
    body = joined.copy()
    body["paper_rank"] = _ranks(body, "paper_mean", keys)
    body["tvbo_rank"] = _ranks(body, "tvbo_mean", keys)
    table = pd.concat([body, _overall_rows(joined, keys)], ignore_index=True)
    overall = table["benchmark"] == OVERALL_LABEL
    ranks_overall = table[overall]
    table.loc[overall, "paper_rank"] = _ranks(ranks_overall, "paper_mean", keys)
    table.loc[overall, "tvbo_rank"] = _ranks(ranks_overall, "tvbo_mean", keys)

    table["difference"] = table["tvbo_mean"] - table["paper_mean"]
    with np.errstate(divide="ignore", invalid="ignore"):
        table["ratio"] = np.where(
            table["paper_mean"] != 0, table["tvbo_mean"] / table["paper_mean"], np.nan
        )
    paper_se = table["paper_se"].fillna(0.0)
    table["combined_se"] = np.sqrt(table["tvbo_se"] ** 2 + paper_se**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        table["z"] = table["difference"] / table["combined_se"]
    known = table["combined_se"].notna() & (table["combined_se"] > 0)
    differs = pd.Series(pd.NA, index=table.index, dtype="boolean")
    differs[known] = table.loc[known, "z"].abs() > FLAG_SE
    table["differs"] = differs
    table["rank_change"] = (table["tvbo_rank"] - table["paper_rank"]).astype("Int64")
    table["paper_rank"] = table["paper_rank"].astype("Int64")
    table["tvbo_rank"] = table["tvbo_rank"].astype("Int64")
    table["tvbo_n"] = table["tvbo_n"].astype("Int64")
    # paper order, Overall last; with several speeds one block per speed
    benchmark_order = {b: i for i, b in enumerate([*pd.unique(body["benchmark"]), OVERALL_LABEL])}
    algorithm_order = {a: i for i, a in enumerate(pd.unique(published["algorithm"]))}
    order = pd.DataFrame(
        {
            "speed": table["speed"] if "speed" in table.columns else 0.0,
            "benchmark": table["benchmark"].map(benchmark_order),
            "algorithm": table["algorithm"].map(algorithm_order),
        }
    )
    table = table.loc[order.sort_values(list(order.columns), kind="stable").index]
    table = table.reset_index(drop=True)
    table.attrs.update(
        paper=paper,
        aliases=dict(aliases or {}),
        paper_se_published=bool(published["se"].notna().any()),
    )
    return table


# -- rendering ------------------------------------------------------------------------------------
def _signed(value: float, scale: float, digits: int) -> str:
    """``value`` with an explicit sign, to the decimals ``format_mean_se`` gives ``scale``."""
    if not math.isfinite(value):
        return "n/a"
    decimals = decimals_for(scale, digits) if math.isfinite(scale) else digits
    text = f"{abs(value):.{decimals}f}"
    if float(text) == 0:
        return f"{0:.{decimals}f}"
    return ("−" if value < 0 else "+") + text


def _rows(table: pd.DataFrame, digits: int) -> list[dict[str, str]]:
    """Formatted cells of each comparison row (shared by Markdown and LaTeX)."""
    speeds = "speed" in table.columns and table["speed"].nunique() > 1
    out = []
    for row in table.itertuples(index=False):
        label = str(row.benchmark)
        if speeds:
            label += f" (speed {row.speed:g})"
        paper_text = (
            row.printed
            if isinstance(row.printed, str) and row.printed
            else format_mean_se(row.paper_mean, row.paper_se, digits)
        )
        tvbo_text = format_mean_se(row.tvbo_mean, row.tvbo_se, digits)
        n = "" if pd.isna(row.tvbo_n) else f" (n = {int(row.tvbo_n)})"
        changed = not pd.isna(row.rank_change) and row.rank_change != 0
        ranks = (
            "n/a"
            if pd.isna(row.paper_rank) or pd.isna(row.tvbo_rank)
            else f"{int(row.paper_rank)} → {int(row.tvbo_rank)}"
        )
        companions = [
            format_mean_se(getattr(row, f"tvbo_{m}_mean"), getattr(row, f"tvbo_{m}_se"), digits)
            if hasattr(row, f"tvbo_{m}_mean") and pd.notna(getattr(row, f"tvbo_{m}_mean"))
            else "n/a"
            for m in _companions(table)
        ]
        out.append(
            {
                "benchmark": label,
                "overall": row.benchmark == OVERALL_LABEL,
                "algorithm": str(getattr(row, "label", row.algorithm)),
                "companions": companions,
                "paper": paper_text,
                "tvbo": tvbo_text + n,
                "difference": _signed(
                    row.difference, max(abs(row.paper_mean), abs(row.tvbo_mean)), digits
                ),
                "ratio": "n/a" if not math.isfinite(row.ratio) else f"{row.ratio:.2f}",
                "differs": "n/a" if pd.isna(row.differs) else ("yes" if row.differs else ""),
                "ranks": ranks,
                "rank_changed": changed,
            }
        )
    return out


def _companions(table: pd.DataFrame) -> list[str]:
    """The companion metrics present in a comparison table (``tvbo_<metric>_mean`` columns)."""
    return [m for m in COMPANIONS if f"tvbo_{m}_mean" in table.columns]


def add_companions(table: pd.DataFrame, companions: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """``table`` plus tvbo's ``tvbo_<metric>_mean``/``_se`` of each companion summary table.

    The published tables give the average query regret only; beside it tvbo shows its
    time-integrated regret and query count, so a low query regret bought by few queries is
    visible. Overall rows get none (n/a).
    """
    out = table.copy()
    keys = [k for k in ("benchmark", "speed") if k in out.columns]
    for metric, summary in companions.items():
        part = summary[[*[k for k in keys if k in summary.columns], "algorithm", "mean", "se"]]
        part = part.rename(columns={"mean": f"tvbo_{metric}_mean", "se": f"tvbo_{metric}_se"})
        out = out.merge(part, on=[k for k in [*keys, "algorithm"] if k in part.columns],
                        how="left")
    out.attrs.update(table.attrs)
    return out


def caption(table: pd.DataFrame) -> str:
    """What the comparison shows and how to read it (one paragraph)."""
    paper = PAPERS[table.attrs.get("paper", "")] if table.attrs.get("paper") in PAPERS else None
    source = f"{paper.citation}, {paper.table}" if paper else "the paper"
    caveat = table.attrs.get("settings_caveat") or ""
    text = (caveat[0].upper() + caveat[1:] + ". ") if caveat else ""
    text += (
        f"Average regret: {source} (mean ± s.e. over 10 runs, as printed) beside tvbo (mean ± "
        "s.e. over n seeds). Difference = tvbo − paper; ratio = tvbo / paper; '> 2 s.e.' flags a "
        "difference larger than twice the combined standard error sqrt(se_tvbo² + se_paper²)"
    )
    if not table.attrs.get("paper_se_published", True):
        text += " (this paper printed no s.e., so only tvbo's counts: the flag fires more easily)"
    text += (
        ". Ranks: 1 = lowest mean among the algorithms compared on that benchmark, paper → tvbo "
        f"(bold when they differ). {NORMALISED_DEFINITION}, recomputed for both sides on the "
        "shared benchmarks and algorithms only."
    )
    companions = _companions(table)
    if companions:
        text += (
            " Beside it, tvbo's "
            + " and ".join(METRIC_NAMES.get(m, m) for m in companions)
            + " (mean ± s.e. over the same seeds; not published by the paper): few, "
            "well-placed queries can give a low query regret while the configuration in force "
            "tracks the optimum badly."
        )
    aliases = table.attrs.get("aliases") or {}
    if aliases:
        text += " Aliases (paper → campaign): " + ", ".join(
            f"{k} → {v}" for k, v in sorted(aliases.items())
        ) + "."
    labels = table.attrs.get("labels") or {}
    shown = list(pd.unique(table["algorithm"]))
    named = [f"{labels[a]} = {a}" for a in shown if a in labels and labels[a] != a]
    if named:
        text += " tvbo's algorithms (label = config key): " + "; ".join(named) + "."
        meanings = variant_meanings(labels[a] for a in shown if a in labels)
        if meanings:
            notes = table.attrs.get("variant_notes") or []
            text += " " + "; ".join(meanings)
            text += (": " + "; ".join(notes) + ".") if notes and "robust" in meanings[-1] else "."
    return text


HEADERS: tuple[str, ...] = (
    "benchmark", "algorithm", "paper", "tvbo", "tvbo − paper", "tvbo / paper", "> 2 s.e.",
    "rank paper → tvbo",
)


def _headers(table: pd.DataFrame) -> list[str]:
    return [*HEADERS, *(f"tvbo {METRIC_NAMES.get(m, m)}" for m in _companions(table))]


def to_markdown(table: pd.DataFrame, *, digits: int = 3, with_caption: bool = True) -> str:
    """The comparison as a Markdown table (flags and changed ranks in bold)."""
    headers = _headers(table)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in _rows(table, digits):
        cells = [
            row["benchmark"], row["algorithm"], row["paper"], row["tvbo"], row["difference"],
            row["ratio"], f"**{row['differs']}**" if row["differs"] == "yes" else row["differs"],
            f"**{row['ranks']}**" if row["rank_changed"] else row["ranks"],
            *row["companions"],
        ]
        lines.append("| " + " | ".join(cells) + " |")
    if with_caption:
        lines += ["", caption(table)]
    return "\n".join(lines) + "\n"


def to_latex(table: pd.DataFrame, *, digits: int = 3, with_caption: bool = True) -> str:
    """The comparison as a LaTeX booktabs table (``\\midrule`` between benchmarks)."""
    lines = [
        r"% generated by tvbo; needs \usepackage{booktabs}",
        r"\begin{table}[ht]",
        r"\centering",
    ]
    if with_caption:
        lines.append(rf"\caption{{{latex_text(caption(table))}}}")
    lines += [
        r"\label{tab:paper_vs_tvbo}",
        rf"\begin{{tabular}}{{llllrrcc{'l' * len(_companions(table))}}}",
        r"\toprule",
        " & ".join(latex_text(h) for h in _headers(table)) + r" \\",
    ]
    previous = None
    for row in _rows(table, digits):
        if row["benchmark"] != previous:
            lines.append(r"\midrule")
            previous = row["benchmark"]
        ranks = latex_text(row["ranks"])
        cells = [
            latex_escape(row["benchmark"]), latex_escape(row["algorithm"]),
            latex_text(row["paper"]), latex_text(row["tvbo"]), latex_text(row["difference"]),
            latex_text(row["ratio"]),
            r"\textbf{yes}" if row["differs"] == "yes" else latex_text(row["differs"]),
            rf"\textbf{{{ranks}}}" if row["rank_changed"] else ranks,
            *(latex_text(c) for c in row["companions"]),
        ]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


# -- the figure -----------------------------------------------------------------------------------
def normalised_series(table: pd.DataFrame) -> pd.DataFrame:
    """Normalised regret of a long-form table: per-benchmark values and Overall rows."""
    return normalised_regret(table[table["benchmark"] != OVERALL_LABEL])


def normalised_regret_figure(
    series: Mapping[str, pd.DataFrame],
    algorithms: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> Figure:
    """The papers' Fig. 2/3: normalised average regret per algorithm, one marker per series.

    ``series`` maps a legend label ("paper", "tvbo", "tvbo, speed ×10", ...) to the output of
    :func:`normalised_series` (per-benchmark rows and the Overall rows). Each series is drawn
    at its own horizontal offset: the Overall mean with ± s.e. error bars, and every
    benchmark's normalised value as a small faint dot (how the average comes about).
    ``labels`` maps algorithm keys to the tick labels (``W-DBO (robust)``; default the keys).
    """
    if not series:
        raise ValueError("normalised_regret_figure needs at least one series")
    if algorithms is None:
        algorithms = list(
            dict.fromkeys(a for frame in series.values() for a in frame["algorithm"])
        )
    algorithms = list(algorithms)
    fig = Figure(figsize=(max(7.0, 3.0 + 0.9 * len(algorithms)), 4.0), layout="constrained")
    with sns.axes_style("whitegrid"):
        ax = fig.subplots()
    palette = sns.color_palette("colorblind", len(series))
    width = 0.7 / len(series)
    x = np.arange(len(algorithms))
    for i, (label, frame) in enumerate(series.items()):
        offset = (i - (len(series) - 1) / 2) * width
        overall = frame[frame["benchmark"] == OVERALL_LABEL].set_index("algorithm")
        overall = overall.reindex(algorithms)
        ax.errorbar(
            x + offset, overall["mean"], yerr=overall["se"].fillna(0.0), fmt="o", capsize=3,
            color=palette[i], label=label, zorder=3,
        )
        points = frame[frame["benchmark"] != OVERALL_LABEL]
        position = {a: j for j, a in enumerate(algorithms)}
        points = points[points["algorithm"].isin(position)]
        ax.scatter(
            points["algorithm"].map(position) + offset, points["mean"], s=10, alpha=0.45,
            color=palette[i], linewidths=0, zorder=2,
        )
    ticks = [str((labels or {}).get(a, a)) for a in algorithms]
    ax.set_xticks(x, ticks, rotation=30, ha="right", rotation_mode="anchor")
    ax.set_ylabel("normalised average regret\n(0 = best, 1 = worst per benchmark)")
    ax.set_ylim(-0.05, 1.05)
    if len(algorithms) < 2:
        ax.text(0.5, 0.5, "normalised regret needs >= 2 algorithms", transform=ax.transAxes,
                ha="center", va="center")
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper", frameon=False, fontsize="small")
    ax.set_title("markers: mean ± s.e. over benchmarks; dots: single benchmarks", fontsize=9)
    return fig


# -- files ----------------------------------------------------------------------------------------
def _settings_caveat(campaign: xr.Dataset, table: pd.DataFrame, paper: str) -> str:
    """The one-line "settings differ: ..." warning (or ""), stored in ``table.attrs`` for the
    captions and printed on stderr so the job's log and the terminal carry it too
    (:mod:`tvbo.analysis.settings_caveat`)."""
    shared = [b for b in pd.unique(table["benchmark"]) if b != OVERALL_LABEL]
    caveat = campaign_caveat(campaign, paper, shared)
    table.attrs["settings_caveat"] = caveat
    if caveat:
        print(caveat, file=sys.stderr)
    return caveat


def _per_speed(table: pd.DataFrame, prefix: str) -> dict[str, pd.DataFrame]:
    """One normalised series per speed of a tvbo table (label mentions speed if several)."""
    if "speed" not in table.columns or table["speed"].nunique() <= 1:
        return {prefix: normalised_series(table)}
    return {
        f"{prefix}, speed ×{speed:g}": normalised_series(group)
        for speed, group in table.groupby("speed", sort=True)
    }


def write_comparison(
    campaign: xr.Dataset,
    outdir: str | Path,
    *,
    paper: str = "auto",
    aliases: Mapping[str, str] | None = None,
    digits: int = 3,
    options: FigureOptions | None = None,
    labels: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Path]:
    """Write the comparison (CSV, Markdown, LaTeX) and the normalised-regret figure.

    With ``paper="none"`` only the figure is written, with tvbo's points alone (the whole
    campaign grid). Otherwise the figure shows the paper's and tvbo's normalised regret on the
    shared grid, the numbers of the Overall rows of the table. tvbo's algorithms are named by
    :func:`tvbo.analysis.context.campaign_labels` (``labels``: config entries carrying
    ``label``/``variant``); the table gains a ``label`` column, tvbo's time-integrated regret
    and query count (:data:`COMPANIONS`) and the caption says which variant each label is.
    """
    if paper not in PAPER_CHOICES:
        raise ValueError(f"unknown paper {paper!r}; valid choices: {', '.join(PAPER_CHOICES)}")
    chosen = resolve_paper(campaign, paper)
    if chosen is None and aliases:
        raise ValueError("aliases need a paper table (got --paper none)")
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    tvbo = summary_table(campaign, METRIC)
    names = campaign_labels(campaign, labels)
    written = []
    if chosen is None:
        order = [str(a) for a in campaign["algorithm"].values if str(a) in set(tvbo["algorithm"])]
        figure = normalised_regret_figure(_per_speed(tvbo, "tvbo"), order, labels=names)
    else:
        table = comparison_table(tvbo, chosen, aliases)
        recorded = set(available_metrics(campaign))
        table = add_companions(
            table, {m: summary_table(campaign, m) for m in COMPANIONS if m in recorded}
        )
        table.insert(table.columns.get_loc("algorithm") + 1, "label",
                     table["algorithm"].map(lambda a: names.get(a, a)))
        shown = list(pd.unique(table["algorithm"]))
        table.attrs["labels"] = {a: names.get(a, a) for a in shown}
        table.attrs["variant_notes"] = variant_notes(
            shown, names, recorded_algorithm_options(campaign), labels
        )
        caveat = _settings_caveat(campaign, table, chosen)
        csv = outdir / COMPARISON_FILES[0]
        table.to_csv(csv, index=False)
        markdown = outdir / COMPARISON_FILES[1]
        markdown.write_text(
            f"### Paper vs tvbo: {PAPERS[chosen].citation}, {PAPERS[chosen].table}\n\n"
            + (f"**{caveat}**\n\n" if caveat else "")
            + to_markdown(table, digits=digits),
            encoding="utf-8",
        )
        latex = outdir / COMPARISON_FILES[2]
        latex.write_text(to_latex(table, digits=digits), encoding="utf-8")
        written += [csv, markdown, latex]
        body = table[table["benchmark"] != OVERALL_LABEL]
        keys = [k for k in ("benchmark", "speed") if k in body.columns]
        paper_long = body.drop_duplicates(["benchmark", "algorithm"])[
            ["benchmark", "algorithm", "paper_mean", "paper_se"]
        ].rename(columns={"paper_mean": "mean", "paper_se": "se"})
        paper_long["n"] = 10
        tvbo_long = body[[*keys, "algorithm", "tvbo_mean", "tvbo_se", "tvbo_n"]].rename(
            columns={"tvbo_mean": "mean", "tvbo_se": "se", "tvbo_n": "n"}
        )
        series = {f"paper ({PAPERS[chosen].table})": normalised_series(paper_long)}
        series.update(_per_speed(tvbo_long, "tvbo"))
        figure = normalised_regret_figure(series, list(pd.unique(body["algorithm"])), names)
    options = options or FigureOptions()
    with options.context():
        written.append(options.save(figure, outdir, Path(FIGURE_FILE).stem))
    return written
