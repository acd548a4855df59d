"""Run files (netCDF) and campaigns: the on-disk form of every simulation result.

The layout contract is :mod:`tvbo.results.schema`; :mod:`tvbo.results.io` reads, validates and
atomically writes single runs; :mod:`tvbo.results.campaign` merges runs into campaigns.
"""

from tvbo.results.campaign import (
    merge_runs,
    read_campaign,
    runs_table,
    write_campaign,
)
from tvbo.results.io import read_run, validate_run, write_netcdf_atomic, write_run

__all__ = [
    "merge_runs",
    "read_campaign",
    "read_run",
    "runs_table",
    "validate_run",
    "write_campaign",
    "write_netcdf_atomic",
    "write_run",
]
