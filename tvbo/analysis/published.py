"""The published results tables, shipped as reference data, and a check of their Overall rows.

Three tables are shipped in ``tvbo/analysis/data/published_results.csv`` (one row per cell,
numbers exactly as printed, so the printed precision is kept):

``bolt-icml``
    Table 3 of BOLT [A], "Optimizing Through Change" (Bardou & Thiran, ICML): average regret,
    mean ± standard error over 10 runs, 10 benchmarks x 7 algorithms, and its Overall row
    (spec_bolt.md §9.1). The extraction kept the bold cells, not the underlines.
``bolt-metronome``
    Table 2 of BOLT [B], "Time-varying Bayesian optimization without a metronome"
    (spec_bolt.md §9.2). The extraction kept the underlines, not the bold cells.
``wdbo``
    Table 2 of W-DBO, "This Too Shall Pass" (Bardou, Thiran & Ranieri, NeurIPS 2024): average
    regret over 10 runs, means only (its standard errors are only drawn in the appendix
    figures), 12 benchmarks x 6 algorithms and its "Avg. Perf." row (reference_implementations.md
    §1.4 lists four rows; the other eight are read from the paper's text,
    ``shared/seeds/wdbo_neurips24_this_too_shall_pass.txt``). Its WLAN has 4 access points and
    18 users (``wlan`` with ``{n_nodes: 4, n_users: 18}``), not BOLT's 6 and 27.

Columns: ``paper``; ``benchmark`` and ``algorithm`` as printed; ``tvbo_benchmark`` and
``tvbo_algorithm``, the tvbo registry names (``tvbo list``; empty where tvbo has no such
benchmark; W-DBO's Rastrigin, Styblinski-Tang and 3-d Rosenbrock are ``rastrigin``,
``styblinski-tang`` and ``rosenbrock``, :mod:`tvbo.benchmarks.wdbo_functions`, not BOKE's static
``rosenbrock4``); ``overall`` (1 for the published normalised Overall / Avg. Perf. row);
``mean`` and ``se`` (empty when not published); ``bold`` and ``underline`` (1/0 as the
extraction shows them, empty where it lost them). The paper's BOLT is mapped to the preset of
its own version: [A] -> ``bolt-icml``, [B] -> ``bolt``.

Why the Overall rows are *checked* rather than trusted: the papers' normalised regret (best
algorithm 0, worst 1 per benchmark, averaged; spec_bolt.md §9.3) can be recomputed from the
table's own means. Because the means are rounded to the printed digits, the recomputation is an
interval, bounded here by interval arithmetic (:func:`overall_check`). [B]'s row lies inside its
interval; three entries of [A]'s row (ET-GP-UCB, R-GP-UCB, ABO) do not, and each of them matches
the recomputed value of *another* of the three algorithms: a permutation of columns in [A]'s
Overall row, documented as found, not "fixed".

The marks are checked too: [A]'s bold cells are exactly the lowest means. tvbo's underline rule
(intervals mean ± 1 s.e. that overlap the best one's, :func:`tvbo.analysis.best_cells.
best_and_overlapping`) reproduces [B]'s 12 underlines except at three cells, where the paper is
inconsistent with any interval width: Ackley TV-GPUCB overlaps (3.26 < 3.27) but is not
underlined, Schwefel ET-GPUCB does not (553.7 > 553.3) but is, and of the cells whose intervals
merely touch the best one's, Shekel ET-GPUCB is underlined while Griewank's ET- and R-GPUCB are
not.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from tvbo.analysis.metrics import OVERALL_LABEL, normalised_regret

DATA_FILE = "published_results.csv"


@dataclass(frozen=True)
class Paper:
    """One published results table: where it comes from and which tvbo setting matches it."""

    key: str
    citation: str
    table: str
    cost_table: str | None
    note: str


PAPERS: dict[str, Paper] = {
    "bolt-metronome": Paper(
        "bolt-metronome",
        'BOLT [B], "Time-varying Bayesian optimization without a metronome"',
        "Table 2",
        "metronome",
        "average regret, mean ± s.e. over 10 runs; underlines as extracted, bold lost",
    ),
    "bolt-icml": Paper(
        "bolt-icml",
        'BOLT [A], Bardou & Thiran, "Optimizing Through Change" (ICML)',
        "Table 3",
        "icml",
        "average regret, mean ± s.e. over 10 runs; bold as extracted, underlines lost; "
        "the Overall row is inconsistent with the table's means (ET, R-GP-UCB, ABO permuted)",
    ),
    "wdbo": Paper(
        "wdbo",
        'W-DBO, Bardou, Thiran & Ranieri, "This Too Shall Pass" (NeurIPS 2024)',
        "Table 2",
        None,
        "average regret over 10 runs, means only (no s.e. published); WLAN with 4 nodes, "
        "18 users; noise 5% of the signal variance",
    ),
}

#: the paper table that matches each of tvbo's published cost tables (``cost_table``)
PAPER_FOR_COST_TABLE: dict[str, str] = {"metronome": "bolt-metronome", "icml": "bolt-icml"}


def check_paper(paper: str) -> Paper:
    """The :class:`Paper` named ``paper``; a ValueError lists the valid names otherwise."""
    if paper not in PAPERS:
        raise ValueError(f"unknown paper table {paper!r}; valid paper tables: {', '.join(PAPERS)}")
    return PAPERS[paper]


def paper_for_cost_table(cost_table: str) -> str:
    """The paper table a campaign run with ``cost_table`` reproduces (metronome -> [B])."""
    if cost_table not in PAPER_FOR_COST_TABLE:
        raise ValueError(
            f"no paper table for cost_table {cost_table!r}; valid cost tables: "
            f"{', '.join(PAPER_FOR_COST_TABLE)}"
        )
    return PAPER_FOR_COST_TABLE[cost_table]


def _decimals(text: str) -> int:
    return len(text.split(".", 1)[1]) if "." in text else 0


@functools.cache
def _load() -> pd.DataFrame:
    with resources.files("tvbo.analysis").joinpath("data", DATA_FILE).open(
        "r", encoding="utf-8"
    ) as handle:
        raw = pd.read_csv(handle, dtype=str, keep_default_na=False)
    frame = raw[["paper", "benchmark", "algorithm", "tvbo_benchmark", "tvbo_algorithm"]].copy()
    frame["overall"] = raw["overall"] == "1"
    for column in ("mean", "se"):
        frame[column] = pd.to_numeric(raw[column].replace("", np.nan))
        # half a unit of the last printed digit: how far the true value may be from the print
        frame[f"{column}_rounding"] = [
            0.5 * 10.0 ** -_decimals(t) if t else np.nan for t in raw[column]
        ]
    pairs = zip(raw["mean"], raw["se"], strict=True)
    frame["printed"] = [f"{mean} ± {se}" if se else mean for mean, se in pairs]
    for column in ("bold", "underline"):
        frame[column] = raw[column].map({"1": True, "0": False, "": pd.NA}).astype("boolean")
    return frame


def published(paper: str | None = None) -> pd.DataFrame:
    """The shipped published cells (all papers, or one), Overall rows included (``overall``).

    Besides the CSV columns, ``mean_rounding``/``se_rounding`` hold half a unit of the last
    printed digit (the rounding error of the printed number) and ``printed`` the cell's text
    ("2.57 ± 0.05"). Returns a copy.
    """
    frame = _load()
    if paper is not None:
        check_paper(paper)
        frame = frame[frame["paper"] == paper]
    return frame.reset_index(drop=True).copy()


def paper_table(paper: str, *, tvbo_names: bool = True) -> pd.DataFrame:
    """The per-benchmark cells of ``paper`` in the long form of ``summary_table``.

    Columns ``benchmark``, ``algorithm``, ``mean``, ``se`` (NaN if not published), ``n`` (10,
    the papers' replicate count) plus ``paper_benchmark``/``paper_algorithm`` (as printed) and
    ``printed`` (the cell's text, "2.57 ± 0.05").
    With ``tvbo_names`` (default) benchmarks and algorithms carry their tvbo registry names and
    rows of benchmarks tvbo does not have are dropped; otherwise the printed names are kept and
    every benchmark of the paper is there (what the paper's own Overall row averages over).
    """
    frame = published(paper)
    frame = frame[~frame["overall"]]
    if tvbo_names:
        frame = frame[frame["tvbo_benchmark"] != ""]
    out = pd.DataFrame(
        {
            "benchmark": frame["tvbo_benchmark"] if tvbo_names else frame["benchmark"],
            "algorithm": frame["tvbo_algorithm"] if tvbo_names else frame["algorithm"],
            "mean": frame["mean"],
            "se": frame["se"],
            "n": 10,
            "paper_benchmark": frame["benchmark"],
            "paper_algorithm": frame["algorithm"],
            "printed": frame["printed"],
        }
    ).reset_index(drop=True)
    out.attrs["metric"] = "average_regret"
    out.attrs["paper"] = paper
    return out


def published_overall(paper: str) -> pd.DataFrame:
    """The paper's own Overall row: ``algorithm`` (tvbo name), ``paper_algorithm``, mean, se."""
    frame = published(paper)
    frame = frame[frame["overall"]]
    return pd.DataFrame(
        {
            "algorithm": frame["tvbo_algorithm"],
            "paper_algorithm": frame["algorithm"],
            "mean": frame["mean"],
            "se": frame["se"],
            "mean_rounding": frame["mean_rounding"],
            "se_rounding": frame["se_rounding"],
        }
    ).reset_index(drop=True)


def apply_aliases(
    table: pd.DataFrame,
    aliases: Mapping[str, str] | None,
    paper: str,
    *,
    strict: bool = True,
) -> pd.DataFrame:
    """Rename the paper's tvbo algorithm names (``{"bolt-icml": "bolt"}``) for a comparison.

    Why: a campaign may run another variant of a paper's algorithm (``bolt`` under the ICML
    cost table, ``w-dbo-reference`` for the W-DBO paper). With ``strict`` a key that is not an
    algorithm of ``paper`` raises a ValueError listing the paper's algorithms (without it, such
    keys are ignored: one alias map can then serve several papers); two names mapped onto one
    are refused.
    """
    if not aliases:
        return table
    names = list(pd.unique(table["algorithm"]))
    unknown = sorted(set(aliases) - set(names))
    if unknown and strict:
        raise ValueError(
            f"alias for {unknown} but paper table {paper!r} has algorithms {', '.join(names)}"
        )
    aliases = {k: v for k, v in aliases.items() if k in names}
    renamed = [aliases.get(a, a) for a in names]
    if len(set(renamed)) != len(renamed):
        raise ValueError(f"aliases {dict(aliases)} map two algorithms of {paper!r} onto one name")
    out = table.copy()
    out["algorithm"] = out["algorithm"].map(lambda a: aliases.get(a, a))
    return out


def shared_pairs(
    paper: str,
    benchmarks: Iterable[str],
    algorithms: Iterable[str],
    aliases: Mapping[str, str] | None = None,
) -> list[tuple[str, str]]:
    """(benchmark, algorithm) pairs present both in ``paper`` and in a campaign's grid.

    The workflow calls this at DAG time to decide whether a comparison is requested at all.
    """
    table = apply_aliases(paper_table(paper), aliases, paper, strict=False)
    grid = set(itertools.product(benchmarks, algorithms))
    pairs = zip(table["benchmark"], table["algorithm"], strict=True)
    return [pair for pair in pairs if pair in grid]


# -- checking an Overall row against the table's own (rounded) means ------------------------------
def _normalised_bounds(
    low: np.ndarray, high: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Outer bounds of N_a = (m_a - min m) / (max m - min m) for every m_j in [low_j, high_j].

    Interval arithmetic (each m_j enters the numerator and the denominator independently), so
    the bounds are wider than the exact range, never narrower: a published value outside them
    cannot be explained by the rounding of the means.
    """
    min_low, min_high = low.min(), high.min()
    max_low, max_high = low.max(), high.max()
    numerator_low = np.maximum(low - min_high, 0.0)
    numerator_high = high - min_low
    denominator_low = max(max_low - min_high, 0.0)
    denominator_high = max_high - min_low
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = np.where(denominator_high > 0, numerator_low / denominator_high, 0.0)
        upper = np.where(denominator_low > 0, numerator_high / denominator_low, 1.0)
    return lower, np.minimum(upper, 1.0)


def _std_range(lower: np.ndarray, upper: np.ndarray) -> tuple[float, float]:
    """Exact range of the sample std (ddof=1) of a vector whose entries lie in boxes.

    The std is a convex function of the vector (a norm of its centred part), so its maximum is
    at a vertex of the box (enumerated: 2^B vertices, B = number of benchmarks <= 12 here) and
    its minimum solves a smooth convex problem on the box (the variance, by L-BFGS-B).
    """
    count = lower.size
    if count < 2:
        return float("nan"), float("nan")
    if count <= 16:
        vertices = np.array(list(itertools.product(*zip(lower, upper, strict=True))))
        high = float(vertices.std(axis=1, ddof=1).max())
    else:  # pragma: no cover - no published table has more than 16 benchmarks
        raise ValueError(f"too many benchmarks ({count}) to enumerate the box's vertices")

    def variance(x: np.ndarray) -> tuple[float, np.ndarray]:
        centred = x - x.mean()
        return float(centred @ centred / (count - 1)), 2.0 * centred / (count - 1)

    start = 0.5 * (lower + upper)
    result = minimize(
        variance, start, jac=True, method="L-BFGS-B", bounds=list(zip(lower, upper, strict=True))
    )
    return float(np.sqrt(max(result.fun, 0.0))), high


def overall_check(paper: str) -> pd.DataFrame:
    """Recompute ``paper``'s Overall row from its own means and test it against the print.

    One row per algorithm: ``published_mean``/``published_se``; ``recomputed_mean`` and
    ``recomputed_se`` (tvbo's :func:`~tvbo.analysis.metrics.normalised_regret` on the printed
    means of every benchmark of the table, tvbo-supported or not); ``mean_low``/``mean_high`` and
    ``se_low``/``se_high``, the range the recomputation can take when every mean is anywhere
    within half a unit of its last printed digit; ``consistent`` = the published value,
    widened by its own rounding, meets that range (for the mean and, where published, the s.e.);
    ``matches`` = the algorithms whose recomputed range the published mean meets (for an
    inconsistent entry this names the column it probably belongs to).
    """
    cells = published(paper)
    body = cells[~cells["overall"]]
    printed = pd.DataFrame(
        {
            "benchmark": body["benchmark"],
            "algorithm": body["algorithm"],
            "mean": body["mean"],
            "se": np.nan,
            "n": 10,
        }
    )
    normalised = normalised_regret(printed)
    recomputed = normalised[normalised["benchmark"] == OVERALL_LABEL].set_index("algorithm")

    algorithms = list(pd.unique(body["algorithm"]))
    per_benchmark_low, per_benchmark_high = [], []
    for _, group in body.groupby("benchmark", sort=False):
        group = group.set_index("algorithm").loc[algorithms]
        low, high = _normalised_bounds(
            (group["mean"] - group["mean_rounding"]).to_numpy(),
            (group["mean"] + group["mean_rounding"]).to_numpy(),
        )
        per_benchmark_low.append(low)
        per_benchmark_high.append(high)
    low_matrix = np.array(per_benchmark_low)  # benchmarks x algorithms
    high_matrix = np.array(per_benchmark_high)
    n_benchmarks = low_matrix.shape[0]

    overall = cells[cells["overall"]].set_index("algorithm")
    rows = []
    for j, algorithm in enumerate(algorithms):
        std_low, std_high = _std_range(low_matrix[:, j], high_matrix[:, j])
        rows.append(
            {
                "algorithm": algorithm,
                "tvbo_algorithm": overall.at[algorithm, "tvbo_algorithm"],
                "published_mean": overall.at[algorithm, "mean"],
                "published_se": overall.at[algorithm, "se"],
                "recomputed_mean": recomputed.at[algorithm, "mean"],
                "recomputed_se": recomputed.at[algorithm, "se"],
                "mean_low": low_matrix[:, j].mean(),
                "mean_high": high_matrix[:, j].mean(),
                "se_low": std_low / np.sqrt(n_benchmarks),
                "se_high": std_high / np.sqrt(n_benchmarks),
                "mean_rounding": overall.at[algorithm, "mean_rounding"],
                "se_rounding": overall.at[algorithm, "se_rounding"],
            }
        )
    out = pd.DataFrame(rows)

    def meets(value: float, rounding: float, low: float, high: float) -> bool:
        return bool(value + rounding >= low and value - rounding <= high)

    mean_ok = [
        meets(r.published_mean, r.mean_rounding, r.mean_low, r.mean_high) for r in out.itertuples()
    ]
    se_ok = [
        True
        if np.isnan(r.published_se)
        else meets(r.published_se, r.se_rounding, r.se_low, r.se_high)
        for r in out.itertuples()
    ]
    out["consistent"] = np.logical_and(mean_ok, se_ok)
    out["matches"] = [
        ",".join(
            str(other.algorithm)
            for other in out.itertuples()
            if meets(r.published_mean, r.mean_rounding, other.mean_low, other.mean_high)
        )
        for r in out.itertuples()
    ]
    out.attrs["paper"] = paper
    return out


def papers_sharing(
    benchmarks: Sequence[str],
    algorithms: Sequence[str],
    candidates: Iterable[str] | None = None,
    aliases: Mapping[str, str] | None = None,
) -> list[str]:
    """The paper tables (of ``candidates``, default all) sharing a pair with the grid."""
    chosen = list(PAPERS) if candidates is None else list(candidates)
    return [p for p in chosen if shared_pairs(p, benchmarks, algorithms, aliases)]
