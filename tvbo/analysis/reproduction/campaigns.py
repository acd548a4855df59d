"""The campaigns a reproduction report reads, and what a reader needs to judge them.

:class:`Campaigns` loads each campaign of the spec once (``<results>/<campaign>/campaign.nc``, or
a stand-in file given with ``--campaign``, marked as such in the report). A campaign that does
not exist gives "not yet run" and the command that runs it. :func:`campaign_facts` is the grid,
seeds, horizon, profile and cost table of a campaign (the report's campaign table);
:func:`stand_in_differences` the settings in which a stand-in differs from the spec's campaign;
:func:`read_provenance` the record of how the run files were made (``--provenance``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
import yaml

from tvbo.analysis import tables as _tables
from tvbo.analysis.compare import campaign_cost_tables
from tvbo.analysis.reproduction.markdown import display_name
from tvbo.analysis.reproduction.spec import CampaignSpec, Spec
from tvbo.results.schema import ATTRIBUTE_PREFIX, PRESENT_VARIABLE

TIME_METRIC = "time_integrated_regret"


QUERIES = "n_iterations"


#: the speed at which a paper table is compared (the papers' own hardware)
REFERENCE_SPEED = 1.0


@dataclass
class Source:
    """Where a spec campaign's results are and whether they stand in for another campaign."""

    spec: CampaignSpec
    path: Path
    substituted: bool
    dataset: xr.Dataset | None


class Campaigns:
    """Loads each spec campaign once from ``<results>/<campaign>/campaign.nc`` (or a substitute).

    ``substitutes`` maps a spec campaign key to another campaign file, e.g. a small test campaign
    standing in for ``bolt_paper``; the report's header marks every substitution.
    """

    def __init__(
        self,
        spec: Spec,
        results: str | Path = "results",
        substitutes: Mapping[str, str | Path] | None = None,
        root: str | Path | None = None,
    ) -> None:
        substitutes = dict(substitutes or {})
        unknown = [k for k in substitutes if k not in spec.campaigns]
        if unknown:
            raise ValueError(
                f"--campaign: unknown campaign key(s) {unknown}; valid keys: "
                f"{', '.join(spec.campaigns)}"
            )
        missing = [str(p) for p in substitutes.values() if not Path(p).is_file()]
        if missing:
            raise ValueError(f"--campaign: no such campaign file(s) {missing}")
        self.spec = spec
        self.root = Path(root) if root is not None else Path.cwd()
        self.sources: dict[str, Source] = {}
        for key, campaign in spec.campaigns.items():
            path = Path(substitutes.get(key, Path(results) / campaign.name / "campaign.nc"))
            # opened lazily: a paper campaign's file holds hundreds of MB of per-query records,
            # and the report reads per-run summaries and a few variables of it
            dataset = xr.open_dataset(path) if path.is_file() else None
            self.sources[key] = Source(campaign, path, key in substitutes, dataset)

    def get(self, key: str) -> xr.Dataset | None:
        return self.sources[key].dataset

    def close(self) -> None:
        """Close every campaign file opened (each is opened lazily, once)."""
        for source in self.sources.values():
            if source.dataset is not None:
                source.dataset.close()

    def command(self, key: str) -> str:
        """How to build a campaign (Markdown): the command and the config it runs."""
        campaign = self.spec.campaigns[key]
        return f"`{campaign.command()}` (config: `{campaign.config_text(self.root)}`)"

    def not_yet_run(self, key: str) -> str:
        source = self.sources[key]
        return (
            f"not yet run: campaign `{source.spec.name}` (results/{source.spec.name}/"
            f"campaign.nc); "
            f"run {self.command(key)}"
        )


def attribute_values(ds: xr.Dataset, name: str) -> list[str]:
    """The distinct values of a run attribute over the present runs (global or ``attr_*``)."""
    values: list[str] = []
    if name in ds.attrs:
        values.append(str(ds.attrs[name]))
    variable = ATTRIBUTE_PREFIX + name
    if variable in ds.data_vars:
        data = ds[variable].values
        if PRESENT_VARIABLE in ds.data_vars:
            data = data[ds[PRESENT_VARIABLE].transpose(*ds[variable].dims).values == 1]
        values += [str(v) for v in np.ravel(data) if str(v) not in ("", "nan")]
    return list(dict.fromkeys(values))


def _profiles(ds: xr.Dataset) -> list[str]:
    names = []
    for text in attribute_values(ds, "compute_model_json"):
        try:
            model = json.loads(text)
        except json.JSONDecodeError:
            continue
        profile = model.get("profile")
        if isinstance(profile, dict):
            names.append(f"{model.get('model')} / {profile.get('name')}")
        else:
            names.append(str(model.get("model")))
    return list(dict.fromkeys(names)) or ["not recorded"]


def _number_list(values: Iterable[object]) -> str:
    out = []
    for v in values:
        try:
            out.append(f"{float(v):g}")
        except ValueError:
            out.append(str(v))
    return ", ".join(sorted(set(out), key=lambda s: (len(s), s)))


def campaign_facts(ds: xr.Dataset) -> dict[str, str]:
    """What a reader needs to judge a campaign: grid, seeds, horizon, profile, cost table."""
    present = int(ds[PRESENT_VARIABLE].sum()) if PRESENT_VARIABLE in ds else -1
    return {
        "benchmarks": ", ".join(map(str, ds["benchmark"].values)),
        "algorithms": ", ".join(display_name(str(a)) for a in ds["algorithm"].values),
        "seeds": f"{ds.sizes['seed']} ({_number_list(ds['seed'].values)})",
        "speeds": _number_list(ds["speed"].values),
        "horizon [s]": _number_list(attribute_values(ds, "horizon")) or "not recorded",
        "profile": ", ".join(_profiles(ds)),
        "cost table": ", ".join(campaign_cost_tables(ds)) or "not recorded",
        "runs": str(present) if present >= 0 else "?",
    }


def at_reference_speed(ds: xr.Dataset) -> xr.Dataset:
    speeds = [float(s) for s in ds["speed"].values]
    if len(speeds) == 1:
        return ds
    if REFERENCE_SPEED not in speeds:
        raise ValueError(f"a paper table is compared at speed 1, but the campaign has speeds "
                         f"{speeds}")
    return ds.sel(speed=[REFERENCE_SPEED])


def metric_summary(ds: xr.Dataset, metric: str) -> pd.DataFrame:
    """tables.summary_table without the speed column when the campaign has one speed."""
    table = _tables.summary_table(ds, metric)
    if "speed" in table.columns and table["speed"].nunique() == 1:
        table = table.drop(columns="speed")
    return table


def select_runs(ds: xr.Dataset, benchmarks: Sequence[str] | None, algorithms: Sequence[str] | None):
    """Subset of the campaign; names absent from the campaign are reported, not fatal."""
    have_b = [str(b) for b in ds["benchmark"].values]
    have_a = [str(a) for a in ds["algorithm"].values]
    absent = [b for b in benchmarks or [] if b not in have_b]
    absent += [a for a in algorithms or [] if a not in have_a]
    if benchmarks:
        ds = ds.sel(benchmark=[b for b in benchmarks if b in have_b])
    if algorithms:
        ds = ds.sel(algorithm=[a for a in algorithms if a in have_a])
    return ds, absent


def cell_stat(table: pd.DataFrame, benchmark: str, algorithm: str) -> tuple[float, float, int]:
    row = table[(table["benchmark"] == benchmark) & (table["algorithm"] == algorithm)]
    if row.empty:
        return math.nan, math.nan, 0
    r = row.iloc[0]
    return float(r["mean"]), float(r["se"]), int(r["n"])


#: the settings a stand-in campaign is compared on with the spec's campaign (everything that
#: decides a run; the campaign's name and how runs are grouped into jobs do not)
STAND_IN_KEYS: tuple[str, ...] = (
    "benchmarks", "algorithms", "seeds", "speeds", "compute", "profile", "polynomial", "horizon",
    "warmup", "cost_table", "benchmark_options", "algorithm_options", "data",
)


def stand_in_differences(expected: Mapping[str, Any], config_path: Path) -> list[str] | None:
    """How the stand-in's recorded ``config.yaml`` differs from the spec campaign's merged
    config, one ``key: value instead of expected`` entry per setting the spec's campaign states
    (None when the stand-in recorded no config). Nested maps (``data``) are compared key by key;
    a key the spec's campaign leaves to the schema's default is not compared."""
    if not config_path.is_file():
        return None
    actual = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}

    def flat(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in mapping.items():
            if isinstance(value, Mapping) and value:
                out.update(flat(value, f"{prefix}{key}."))
            else:
                out[f"{prefix}{key}"] = value
        return out

    want = flat({k: expected[k] for k in STAND_IN_KEYS if k in expected})
    got = flat({k: actual[k] for k in STAND_IN_KEYS if k in actual})
    differences = []
    # keys the spec's campaign leaves out take the schema's defaults, which the recorded config
    # spells out: only the settings the spec's campaign states are compared
    for key in sorted(want):
        a, b = got.get(key), want.get(key)
        if a in (None, {}, []) and b in (None, {}, []):
            continue
        if isinstance(a, list) and isinstance(b, list) and sorted(map(str, a)) == sorted(
            map(str, b)
        ):
            continue
        if a != b:
            differences.append(f"{key}: {a!r} instead of {b!r}")
    return differences


#: keys of a provenance file (``tvbo reproduce --provenance``): how the run files were made
PROVENANCE_KEYS: tuple[str, ...] = ("command", "commit", "wall_time_s", "machine")
#: optional keys, written by ``scripts/time_reproduction.py`` (campaigns built one at a time):
#: each campaign's build ``{name: {wall_s, cpu_s}}`` and the campaigns left out of the sum
PROVENANCE_OPTIONAL: tuple[str, ...] = ("campaigns", "untimed")


def read_provenance(path: str | Path | None) -> dict[str, Any] | None:
    """The provenance file's fields (None without one); one line naming a bad or missing key.

    Written by whoever ran the campaigns (the workflow's ``reproduction`` rule, or
    ``scripts/time_reproduction.py``, which builds the campaigns one at a time and adds each
    one's wall and CPU seconds): the command, the commit of the code that made the run files,
    the wall time of the whole regeneration and the machine. The report prints them as given,
    so rebuilding it from the same run files and the same file gives the same bytes.
    """
    if path is None:
        return None
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"--provenance: no such file {str(path)!r}")
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(raw, Mapping):
        raise ValueError(f"--provenance: {path.name}: expected a mapping of "
                         f"{', '.join(PROVENANCE_KEYS)}")
    missing = sorted(set(PROVENANCE_KEYS) - set(raw))
    unknown = sorted(set(raw) - set(PROVENANCE_KEYS) - set(PROVENANCE_OPTIONAL))
    if missing or unknown:
        raise ValueError(f"--provenance: {path.name}: keys must be "
                         f"{', '.join(PROVENANCE_KEYS)} (optional: "
                         f"{', '.join(PROVENANCE_OPTIONAL)}); differ in "
                         f"{', '.join(map(str, missing + unknown))}")
    seconds = float(raw["wall_time_s"])
    if not seconds > 0:
        raise ValueError(f"--provenance: {path.name}: wall_time_s must be positive, got "
                         f"{raw['wall_time_s']!r}")
    record: dict[str, Any] = {k: str(raw[k]) for k in PROVENANCE_KEYS}
    builds = raw.get("campaigns") or {}
    if not isinstance(builds, Mapping) or not all(
            isinstance(b, Mapping) and {"wall_s", "cpu_s"} <= set(b) for b in builds.values()):
        raise ValueError(f"--provenance: {path.name}: campaigns must map each campaign to "
                         "{wall_s, cpu_s}")
    record["campaigns"] = {str(k): (float(b["wall_s"]), float(b["cpu_s"]))
                           for k, b in builds.items()}
    record["untimed"] = [str(u) for u in raw.get("untimed") or []]
    return record
