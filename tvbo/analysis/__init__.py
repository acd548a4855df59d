"""Metrics, tables and figures computed from run and campaign Datasets.

Figures live in :mod:`tvbo.analysis.figures` (imported on demand: matplotlib is slow to load
and not needed for metrics or tables).
"""

from tvbo.analysis.metrics import (
    average_regret,
    held_on_grid,
    normalised_regret,
    running_time_average,
    time_integrated_regret,
)
from tvbo.analysis.tables import (
    pivot_summary,
    summary_table,
    to_csv,
    to_markdown,
    write_tables,
)

__all__ = [
    "average_regret",
    "held_on_grid",
    "normalised_regret",
    "pivot_summary",
    "running_time_average",
    "summary_table",
    "time_integrated_regret",
    "to_csv",
    "to_markdown",
    "write_tables",
]
