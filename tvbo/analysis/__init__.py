"""Metrics, tables and figures computed from run and campaign Datasets.

Figures live in :mod:`tvbo.analysis.figures` (imported on demand: matplotlib is slow to load
and not needed for metrics or tables). The names below load on first access, so that importing
one analysis module (e.g. ``tvbo.analysis.nstar``, a re-export of
:mod:`tvbo.algorithms.bolt.nstar`) does not
import the pandas-based table code.
"""

from __future__ import annotations

from tvbo._lazy import lazy_exports

#: lazily re-exported names -> defining module
_LAZY: dict[str, str] = {
    "average_regret": "tvbo.analysis.metrics",
    "held_on_grid": "tvbo.analysis.metrics",
    "normalised_regret": "tvbo.analysis.metrics",
    "running_time_average": "tvbo.analysis.metrics",
    "time_integrated_regret": "tvbo.analysis.metrics",
    "pivot_summary": "tvbo.analysis.tables",
    "summary_table": "tvbo.analysis.tables",
    "to_csv": "tvbo.analysis.tables",
    "to_markdown": "tvbo.analysis.tables",
    "write_tables": "tvbo.analysis.tables",
    "campaign_summary": "tvbo.analysis.tables",
    "format_mean_se": "tvbo.analysis.tables",
    "separated_best": "tvbo.analysis.best_cells",
    "summary_tables": "tvbo.analysis.tables",
    "table_caption": "tvbo.analysis.tables",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


__all__ = sorted(_LAZY)
