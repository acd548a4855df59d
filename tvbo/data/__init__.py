"""Real data for the benchmarks: download (checksums, manifests, mirrors), parse, prepare.

* :mod:`tvbo.data.download` -- :func:`fetch` / :func:`fetch_source`: verified atomic downloads
  through pooch, with :mod:`tvbo.data.checks` (arguments, bytes), :mod:`tvbo.data.transfer`
  (one attempt with a total deadline) and :mod:`tvbo.data.errors`.
* :mod:`tvbo.data.intel` -- Intel Berkeley lab temperature -> ``(time, sensor)`` netCDF field.
* :mod:`tvbo.data.ozone` -- EPA daily ozone -> ``(site, day)`` netCDF field; spTimer NYdata.

The command line (``python -m tvbo.data``) is what the Snakemake rules in
``workflow/rules/data.smk`` call; ``data/README.md`` documents every rule and default.
"""

from __future__ import annotations

from tvbo.data.download import (
    ChecksumError,
    DownloadError,
    IntegrityError,
    MirrorError,
    fetch,
    fetch_source,
    resolve_source,
)
from tvbo.data.intel import parse_intel, prepare_intel, prepare_intel_file, read_mote_locations
from tvbo.data.ozone import (
    daily_values,
    nydata_field,
    prepare_ozone,
    prepare_ozone_files,
    read_epa_daily,
    read_nydata,
)

__all__ = [
    "ChecksumError",
    "DownloadError",
    "IntegrityError",
    "MirrorError",
    "daily_values",
    "fetch",
    "fetch_source",
    "nydata_field",
    "parse_intel",
    "prepare_intel",
    "prepare_intel_file",
    "prepare_ozone",
    "prepare_ozone_files",
    "read_epa_daily",
    "read_mote_locations",
    "read_nydata",
    "resolve_source",
]
