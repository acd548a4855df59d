"""Campaign files of the reproduction spec, and the evidence computed from them.

:class:`Campaigns` loads each campaign of the spec once (``<results>/<campaign>/campaign.nc``, or
a stand-in file, marked as such in the report). :func:`evaluate_evidence` turns one evidence spec
of :mod:`tvbo.analysis.reproduction_spec` into text lines with numbers computed from the run
files: ``variant`` (two algorithms side by side, mean ± s.e. and ratio), ``fit_health`` (share of
fits with a hyperparameter at a bound and runs whose final fitted l_T exceeds the horizon, from
the ``fit_*`` variables; absent variables are reported as "fit records absent in these runs"),
``metric`` (average regret, time-integrated regret and number of queries) and ``state`` (a
``state_*`` variable summarised per run by its mean or final value, then mean ± s.e. over runs).
A campaign that does not exist gives "not yet run" and the command that runs it.

Number format and algorithm display names come from :mod:`tvbo.analysis.tables` through
:func:`display_name` and :func:`fmt`, the only call sites of the report.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from tvbo.analysis import tables as _tables
from tvbo.analysis.compare import METRIC, campaign_cost_tables
from tvbo.analysis.reproduction_spec import CampaignSpec, Evidence, Spec
from tvbo.results.campaign import ATTRIBUTE_PREFIX, PRESENT_VARIABLE

TIME_METRIC = "time_integrated_regret"
QUERIES = "n_iterations"
#: the speed at which a paper table is compared (the papers' own hardware)
REFERENCE_SPEED = 1.0

# -- display (the one place that calls tables' formatting) ----------------------------------------
def display_name(algorithm: str) -> str:
    """The algorithm's display name: ``tables.display_name`` once it exists, else the tvbo name."""
    name = getattr(_tables, "display_name", None)
    return str(name(algorithm)) if callable(name) else str(algorithm)


def fmt(mean: float, se: float = math.nan, digits: int = 3) -> str:
    """Mean ± s.e. as the tables print it (:func:`tvbo.analysis.tables.format_mean_se`)."""
    return _tables.format_mean_se(float(mean), float(se), digits)


# -- campaigns ------------------------------------------------------------------------------------
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


def _attribute_values(ds: xr.Dataset, name: str) -> list[str]:
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
    for text in _attribute_values(ds, "compute_model_json"):
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
        "horizon [s]": _number_list(_attribute_values(ds, "horizon")) or "not recorded",
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


# -- evidence -------------------------------------------------------------------------------------
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


def _per_run(ds: xr.Dataset, variable: str, reduce: str) -> pd.DataFrame:
    """One value per present run of an ``iteration`` (or ``fit``) variable: mean or final."""
    records = []
    other = [d for d in ds[variable].dims if d not in ("benchmark", "algorithm", "seed", "speed")]
    data = ds[variable].transpose("benchmark", "algorithm", "seed", "speed", *other)
    present = (
        ds[PRESENT_VARIABLE].transpose("benchmark", "algorithm", "seed", "speed").values == 1
        if PRESENT_VARIABLE in ds
        else np.ones(data.shape[:4], bool)
    )
    values = data.values.astype(float)
    for idx in np.ndindex(*values.shape[:4]):
        if not present[idx]:
            continue
        series = np.ravel(values[idx])
        series = series[np.isfinite(series)]
        if series.size == 0:
            continue
        value = float(series.mean()) if reduce == "mean" else float(series[-1])
        records.append(
            {"benchmark": str(ds["benchmark"].values[idx[0]]),
             "algorithm": str(ds["algorithm"].values[idx[1]]), "value": value}
        )
    return pd.DataFrame.from_records(records, columns=["benchmark", "algorithm", "value"])


def _mean_se(values: pd.Series) -> tuple[float, float, int]:
    n = int(values.count())
    if n == 0:
        return math.nan, math.nan, 0
    se = float(values.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    return float(values.mean()), se, n


def _evidence_variant(ds: xr.Dataset, ev: Evidence, benchmarks: Sequence[str]) -> list[str]:
    metric = ev.params.get("metric", METRIC)
    a, b = ev.params["algorithm_a"], ev.params["algorithm_b"]
    names = ev.params.get("benchmarks") or list(benchmarks)
    ds, absent = select_runs(ds, names, [a, b])
    if absent:
        return [f"{', '.join(absent)} absent from the campaign's runs"]
    table = _tables.summary_table(at_reference_speed(ds), metric)
    lines = []
    for benchmark in names:
        ma, sa, na = cell_stat(table, benchmark, a)
        mb, sb, nb = cell_stat(table, benchmark, b)
        ratio = f"{mb / ma:.2f}" if ma else "n/a"
        lines.append(
            f"{benchmark}: {metric.replace('_', ' ')} {display_name(a)} {fmt(ma, sa)} (n = {na}) "
            f"vs {display_name(b)} {fmt(mb, sb)} (n = {nb}); {display_name(b)} / "
            f"{display_name(a)} = {ratio}"
        )
    return lines


def _fit_variables(ds: xr.Dataset) -> tuple[list[str], str | None]:
    flags = sorted(
        str(v) for v in ds.data_vars
        if str(v).startswith("fit_") and (str(v).endswith("_at_upper")
                                          or str(v).endswith("_at_lower"))
    )
    lengthscale = "fit_lengthscale_time" if "fit_lengthscale_time" in ds.data_vars else None
    return flags, lengthscale


def _lengthscale_over_horizon(sub: xr.Dataset, variable: str) -> tuple[int, int, list[str]]:
    """(runs whose last fitted l_T exceeds their horizon, runs with a fit, horizons seen).

    The horizon is the run's own (``horizon`` attribute, per benchmark in a merged campaign);
    l_T is read in seconds, the unit of the time axis of the fits.
    """
    over = total = 0
    horizons = []
    for benchmark in map(str, sub["benchmark"].values):
        one = sub.sel(benchmark=[benchmark])
        values = _attribute_values(one, "horizon")
        if len(values) != 1:
            continue
        horizon = float(values[0])
        final = _per_run(one, variable, "final")
        over += int((final["value"] > horizon).sum())
        total += len(final)
        horizons.append(f"{horizon:g}")
    return over, total, list(dict.fromkeys(horizons))


def _evidence_fit_health(
    ds: xr.Dataset, ev: Evidence, benchmarks: Sequence[str], algorithms: Sequence[str]
) -> list[str]:
    """Fit health of the selected runs, from :func:`tvbo.analysis.fit_health.fit_health_table`
    (the one definition of a fit at a bound; hyperparameter fits only, not BOLT's R(n) model)."""
    flags, lengthscale = _fit_variables(ds)
    if not flags and lengthscale is None:
        return ["fit records absent in these runs (no fit_* variables in the run files)"]
    from tvbo.analysis.fit_health import PARAMETERS, fit_health_table

    ds, absent = select_runs(at_reference_speed(ds), ev.params.get("benchmarks") or benchmarks,
                             ev.params.get("algorithms") or algorithms)
    lines = [f"{', '.join(absent)} absent from the campaign's runs"] if absent else []
    table = fit_health_table(ds)
    for algorithm in map(str, ds["algorithm"].values):
        rows = table[table["algorithm"] == algorithm]
        fits = int(rows["fits"].sum()) if len(rows) else 0
        if not fits:
            lines.append(f"{display_name(algorithm)}: no hyperparameter fit recorded")
            continue
        at_bound = float((rows["share_any_at_bound"].fillna(0) * rows["fits"]).sum())
        parts = [f"{at_bound:.0f} of {fits} hyperparameter fits ({100 * at_bound / fits:.0f} %) "
                 "with a hyperparameter at a bound"]
        per = []
        for name in PARAMETERS:
            for side in ("lower", "upper"):
                column = f"share_{name}_at_{side}"
                if column in rows and (rows[column].fillna(0) > 0).any():
                    share = float((rows[column].fillna(0) * rows["fits"]).sum()) / fits
                    per.append(f"{name} at {side} {100 * share:.0f} %")
        if per:
            parts.append("(" + ", ".join(per) + ")")
        column = "share_runs_final_lT_above_horizon"
        if column in rows and rows[column].notna().any():
            over = float((rows[column].fillna(0) * rows["runs"]).sum())
            parts[-1] += (f"; {over:.0f} of {int(rows['runs'].sum())} runs end with l_T above "
                          "the horizon")
        lines.append(f"{display_name(algorithm)}: " + " ".join(parts))
    return lines


def _evidence_metric(
    ds: xr.Dataset, ev: Evidence, benchmarks: Sequence[str], algorithms: Sequence[str]
) -> list[str]:
    ds, absent = select_runs(at_reference_speed(ds), ev.params.get("benchmarks") or benchmarks,
                         ev.params.get("algorithms") or algorithms)
    lines = [f"{', '.join(absent)} absent from the campaign's runs"] if absent else []
    tables = {m: _tables.summary_table(ds, m) for m in (METRIC, TIME_METRIC, QUERIES)}
    for benchmark in map(str, ds["benchmark"].values):
        cells = []
        for algorithm in map(str, ds["algorithm"].values):
            avg = cell_stat(tables[METRIC], benchmark, algorithm)
            tir = cell_stat(tables[TIME_METRIC], benchmark, algorithm)
            q = cell_stat(tables[QUERIES], benchmark, algorithm)
            cells.append(
                f"{display_name(algorithm)} average {fmt(avg[0], avg[1])}, time-integrated "
                f"{fmt(tir[0], tir[1])}, {fmt(q[0], q[1])} queries"
            )
        lines.append(f"{benchmark}: " + "; ".join(cells))
    return lines


def _evidence_state(
    ds: xr.Dataset, ev: Evidence, benchmarks: Sequence[str], algorithms: Sequence[str]
) -> list[str]:
    variable = str(ev.params["variable"])
    if variable not in ds.data_vars:
        return [f"{variable} absent in these runs"]
    summary = ev.params.get("summary", "mean")
    ds, absent = select_runs(ds, ev.params.get("benchmarks") or benchmarks,
                         ev.params.get("algorithms") or algorithms)
    lines = [f"{', '.join(absent)} absent from the campaign's runs"] if absent else []
    per_run = _per_run(at_reference_speed(ds), variable, summary)
    for (benchmark, algorithm), group in per_run.groupby(["benchmark", "algorithm"], sort=False):
        mean, se, n = _mean_se(group["value"])
        lines.append(
            f"{benchmark}, {display_name(algorithm)}: {variable} ({summary} per run) "
            f"{fmt(mean, se)} over {n} runs"
        )
    if per_run.empty:
        lines.append(f"{variable} not recorded by these algorithms")
    return lines


def _evidence_setting(
    ds: xr.Dataset, reference: xr.Dataset | None, ev: Evidence, benchmarks: Sequence[str],
    algorithms: Sequence[str], reference_name: str,
) -> list[str]:
    """The same algorithms under another setting: per algorithm, the reference campaign's cell
    beside this campaign's, and the order of the algorithms under each."""
    metric = ev.params.get("metric", METRIC)
    names = ev.params.get("benchmarks") or list(benchmarks)
    wanted = ev.params.get("algorithms") or list(algorithms)
    alt, absent = select_runs(at_reference_speed(ds), names, wanted)
    lines = [f"{', '.join(absent)} absent from the campaign's runs"] if absent else []
    alt_table = _tables.summary_table(alt, metric)
    ref_table = None
    if reference is not None:
        ref, _ = select_runs(at_reference_speed(reference), names, wanted)
        ref_table = _tables.summary_table(ref, metric)
    setting = ev.params.get("setting", "this campaign's setting")
    for benchmark in names:
        present = [a for a in wanted if a not in absent]
        cells, alt_means, ref_means = [], {}, {}
        for algorithm in present:
            m, se, n = cell_stat(alt_table, benchmark, algorithm)
            alt_means[algorithm] = m
            text = f"{display_name(algorithm)} {fmt(m, se)} (n = {n})"
            if ref_table is not None:
                rm, rse, rn = cell_stat(ref_table, benchmark, algorithm)
                ref_means[algorithm] = rm
                text += f" [{reference_name}: {fmt(rm, rse)} (n = {rn})]"
            cells.append(text)
        lines.append(f"{benchmark}, {metric.replace('_', ' ')} with {setting}: " + "; ".join(cells))
        for label, means in ((setting, alt_means), (reference_name, ref_means)):
            finite = {a: v for a, v in means.items() if math.isfinite(v)}
            if finite:
                order = " < ".join(display_name(a) for a in sorted(finite, key=finite.get))
                lines.append(f"{benchmark}, order with {label}: {order}")
    return lines


def evaluate_evidence(
    ev: Evidence, campaigns: Campaigns, benchmarks: Sequence[str], algorithms: Sequence[str]
) -> list[str]:
    """Text lines of one evidence spec, computed from its campaign (or 'not yet run')."""
    ds = campaigns.get(ev.campaign)
    head = f"{ev.kind} ({campaigns.sources[ev.campaign].spec.name})"
    if ds is None:
        return [f"{head}: {campaigns.not_yet_run(ev.campaign)}"]
    if ev.kind == "variant":
        lines = _evidence_variant(ds, ev, benchmarks)
    elif ev.kind == "fit_health":
        lines = _evidence_fit_health(ds, ev, benchmarks, algorithms)
    elif ev.kind == "metric":
        lines = _evidence_metric(ds, ev, benchmarks, algorithms)
    elif ev.kind == "setting":
        ref_key = ev.params["reference"]
        lines = _evidence_setting(ds, campaigns.get(ref_key), ev, benchmarks, algorithms,
                                  campaigns.sources[ref_key].spec.name)
    else:
        lines = _evidence_state(ds, ev, benchmarks, algorithms)
    return [f"{head}: {line}" for line in lines]
