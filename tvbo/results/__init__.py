"""Run files (netCDF) and campaigns: the on-disk form of every simulation result.

The layout contract is :mod:`tvbo.results.schema`; :mod:`tvbo.results.io` reads, validates and
atomically writes single runs; :mod:`tvbo.results.campaign` merges runs into campaigns.

The names below load on first access, so that writing one run (``tvbo run`` imports
``tvbo.results.io``) does not import the campaign code.
"""

from __future__ import annotations

from tvbo._lazy import lazy_exports

#: lazily re-exported names -> defining module
_LAZY: dict[str, str] = {
    "merge_runs": "tvbo.results.campaign",
    "read_campaign": "tvbo.results.campaign",
    "runs_table": "tvbo.results.campaign",
    "write_campaign": "tvbo.results.campaign",
    "read_run": "tvbo.results.io",
    "validate_run": "tvbo.results.io",
    "write_netcdf_atomic": "tvbo.results.io",
    "write_run": "tvbo.results.io",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


__all__ = sorted(_LAZY)
