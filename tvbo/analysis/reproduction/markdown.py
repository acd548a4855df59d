"""How the reproduction report writes numbers, names and tables.

One number format, that of the tables (:func:`tvbo.analysis.tables.format_mean_se`), and one way to
name an algorithm (:func:`display_name`: the campaign's key, the name the spec uses, so that a
reader can find every row in the spec and in the campaign file); every module of the report calls
these, none formats on its own.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from tvbo.analysis import tables as _tables


def display_name(algorithm: str) -> str:
    """How the report names an algorithm: its campaign key (``w-dbo-reference``), the name the
    spec's explanations, claims and ``aliases`` use, so a line of the report can be found in the
    spec (the tables' column labels, :func:`tvbo.analysis.context.campaign_labels`, show the
    variant instead)."""
    return str(algorithm)


def fmt(mean: float, se: float = math.nan, digits: int = 3) -> str:
    """Mean ± s.e. as the tables print it (:func:`tvbo.analysis.tables.format_mean_se`)."""
    return _tables.format_mean_se(float(mean), float(se), digits)


def md_row(cells: Iterable[object]) -> str:
    """One Markdown table row (a ``|`` inside a cell is escaped)."""
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def md_table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A Markdown table: the header row, the rule, one row per entry of ``rows``."""
    return [md_row(headers), "|" + "---|" * len(headers), *(md_row(r) for r in rows)]
