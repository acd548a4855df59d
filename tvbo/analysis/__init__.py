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
    campaign_summary,
    format_mean_se,
    pivot_summary,
    separated_best,
    summary_table,
    summary_tables,
    table_caption,
    to_csv,
    to_markdown,
    write_tables,
)

__all__ = [
    "average_regret",
    "campaign_summary",
    "format_mean_se",
    "held_on_grid",
    "normalised_regret",
    "pivot_summary",
    "running_time_average",
    "separated_best",
    "summary_table",
    "summary_tables",
    "table_caption",
    "time_integrated_regret",
    "to_csv",
    "to_markdown",
    "write_tables",
]
