"""The evidence lines of the reproduction report: quantities measured from the run files.

:func:`evaluate_evidence` turns one evidence spec
(:class:`~tvbo.analysis.reproduction.spec.Evidence`) into text lines with numbers computed from the
run files: ``variant`` (two algorithms side by side, mean ± s.e. and ratio), ``fit_health`` (share
of fits with a hyperparameter at a bound and runs whose final fitted l_T exceeds the horizon, from
the ``fit_*`` variables; absent variables are reported as "fit records absent in these runs"),
``metric`` (average regret, time-integrated regret and number of queries), ``state`` (a ``state_*``
variable summarised per run by its mean or final value, then mean ± s.e. over runs,
:func:`tvbo.analysis.aggregate.mean_se`) and ``setting`` (the same algorithms in a campaign that
changes one setting, beside the reference campaign). Evidence is context: it is printed, not judged
(predictions are judged: :mod:`~tvbo.analysis.reproduction.predict`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

from tvbo.analysis import tables as _tables
from tvbo.analysis.aggregate import mean_se
from tvbo.analysis.compare import METRIC
from tvbo.analysis.fit_health import PARAMETERS, fit_health_table
from tvbo.analysis.reproduction.campaigns import (
    QUERIES,
    TIME_METRIC,
    Campaigns,
    at_reference_speed,
    attribute_values,
    cell_stat,
    select_runs,
)
from tvbo.analysis.reproduction.markdown import display_name, fmt
from tvbo.analysis.reproduction.spec import Evidence
from tvbo.results.schema import PRESENT_VARIABLE


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
        values = attribute_values(one, "horizon")
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
        mean, se, n = mean_se(group["value"].to_numpy())
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
