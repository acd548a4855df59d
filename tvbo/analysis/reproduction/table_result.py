"""The numbers of one published table's section of the reproduction report.

Filled by :func:`tvbo.analysis.reproduction.paper_tables.table_section` and the subsections it
calls (differences, fit health); the report's summary line and the tests read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd


@dataclass
class TableResult:
    """The numbers of one table section (also what the tests check)."""

    paper: str
    comparison: pd.DataFrame | None
    pairs: pd.DataFrame | None
    counts: pd.DataFrame | None
    unexplained: list[tuple[str, str, str]]
    explained: list[tuple[str, str, str]]
    #: disagreeing pairs whose explaining entry has a failing prediction
    contradicted: list[tuple[str, str, str]] = field(default_factory=list)
    #: unexplained pairs that only a broad entry (``all``) names: context, no explanation
    broad_only: int = 0
    #: (entry, prediction, failing measurements) of every failing prediction
    failing: list[tuple[str, str, list[str]]] = field(default_factory=list)
    #: :func:`tvbo.analysis.fit_health.horizon_table` per algorithm (None: campaign not run)
    fit_health: pd.DataFrame | None = None
    #: algorithms above the limit: attributed to their paper's setting, attributed to a setting
    #: that is not their paper's, and without a cause in the spec
    fit_paper_setting: list[str] = field(default_factory=list)
    fit_not_paper_setting: list[str] = field(default_factory=list)
    fit_unexplained: list[str] = field(default_factory=list)
    #: :func:`head_to_head` of the spec's pair (None: the table names none)
    head_to_head: pd.DataFrame | None = None

    @property
    def fit_exceeding(self) -> list[str]:
        """Every algorithm above the fit-health limit, in table order."""
        return [*self.fit_paper_setting, *self.fit_not_paper_setting, *self.fit_unexplained]
