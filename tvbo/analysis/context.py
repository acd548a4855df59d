"""What a campaign's tables, figures and captions must say about it: labels and setting.

Two questions every results table must answer and a bare campaign file leaves open:

* **Which algorithm is a column?** :func:`campaign_labels` gives each algorithm key its label
  (``W-DBO (robust)``, ``W-DBO (paper)``; :func:`tvbo.algorithms.display.display_name`), read
  from the options each run recorded (``config_json``), so a campaign made outside the workflow
  is labelled correctly too. ``overrides`` are config entries carrying ``label``/``variant``
  (the workflow passes them from ``algorithm_options``).
* **Under which setting?** :func:`campaign_setting` collects the horizon, cost table, compute
  model and hardware profile the runs recorded, and :func:`setting_text` turns them into the
  caption's sentence.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from tvbo.algorithms import names
from tvbo.algorithms.display import algorithm_labels, check_variant
from tvbo.results.campaign import runs_table
from tvbo.results.schema import ATTRIBUTE_PREFIX

#: campaign attribute carrying label overrides (JSON of ``{key: {label?, variant?, preset?}}``)
LABELS_ATTRIBUTE = "tvbo_label_overrides_json"


def parse_label_overrides(text: str | Mapping[str, Any] | None) -> dict[str, dict]:
    """``{key: {label?, variant?, preset?}}`` from JSON text or a mapping (``--labels``).

    A plain string value is a label (``{"w-dbo": "W-DBO, ours"}``). Unknown keys inside an
    entry and unknown variants are errors naming them.
    """
    if text is None or text == "":
        return {}
    if isinstance(text, str):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"labels: not valid JSON ({err}): {text!r}") from None
    else:
        value = text
    if not isinstance(value, Mapping):
        raise ValueError(
            f"labels: expected a JSON object {{key: {{label, variant}}}}, got {text!r}"
        )
    out: dict[str, dict] = {}
    for key, entry in value.items():
        entry = {"label": entry} if isinstance(entry, str) else entry
        if not isinstance(entry, Mapping):
            raise ValueError(f"labels[{key!r}]: expected a label or an object, got {entry!r}")
        unknown = sorted(set(entry) - {"label", "variant", "preset"})
        if unknown:
            raise ValueError(
                f"labels[{key!r}]: unknown key(s) {unknown}; valid keys: label, variant, preset"
            )
        if "variant" in entry:
            check_variant(entry["variant"], f"labels[{key!r}]")
        out[str(key)] = dict(entry)
    return out


def with_label_overrides(
    campaign: xr.Dataset, overrides: str | Mapping[str, Any] | None
) -> xr.Dataset:
    """``campaign`` (a shallow copy) carrying ``overrides`` for every table and figure of it."""
    parsed = parse_label_overrides(overrides)
    out = campaign.copy()
    out.attrs = dict(campaign.attrs)
    if parsed:
        out.attrs[LABELS_ATTRIBUTE] = json.dumps(parsed, sort_keys=True)
    return out


def _run_values(campaign: xr.Dataset, runs: pd.DataFrame, name: str) -> pd.Series:
    """Per-run value of attribute ``name``: the per-run column, else the global attribute."""
    column = ATTRIBUTE_PREFIX + name
    if column in runs.columns:
        return runs[column]
    return pd.Series([campaign.attrs.get(name)] * len(runs), index=runs.index, dtype=object)


def _json(text: Any) -> dict:
    if not isinstance(text, str) or not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def recorded_algorithm_options(campaign: xr.Dataset) -> dict[str, dict]:
    """``{algorithm key: resolved options}`` as the key's first run recorded them.

    Keys whose runs recorded no options (old or synthetic files) are left out.
    """
    runs = runs_table(campaign)
    configs = _run_values(campaign, runs, "config_json")
    out: dict[str, dict] = {}
    for algorithm, text in zip(runs["algorithm"], configs, strict=True):
        key = str(algorithm)
        if key in out:
            continue
        options = _json(text).get("algorithm", {})
        if isinstance(options, dict) and isinstance(options.get("options"), dict):
            out[key] = options["options"]
    return out


def recorded_plugin_labels(campaign: xr.Dataset) -> dict[str, str]:
    """``{algorithm key: display name}`` of the plugin algorithms (:mod:`tvbo.plugins`), as
    their runs recorded it: a report labels them without importing the plugin."""
    runs = runs_table(campaign)
    configs = _run_values(campaign, runs, "config_json")
    out: dict[str, str] = {}
    for algorithm, text in zip(runs["algorithm"], configs, strict=True):
        recorded = _json(text).get("algorithm")  # a dict in run files (a name in old fixtures)
        plugin = recorded.get("plugin") if isinstance(recorded, dict) else None
        if isinstance(plugin, dict) and isinstance(plugin.get("display"), str):
            out.setdefault(str(algorithm), plugin["display"])
    return out


def campaign_labels(
    campaign: xr.Dataset, overrides: Mapping[str, Mapping[str, Any]] | None = None, *,
    plain: Callable[[str], str] | None = None,
) -> dict[str, str]:
    """``{algorithm key: label}`` for every algorithm of ``campaign`` (labels unique): the one
    display-name lookup of every table and figure.

    The variant of an algorithm whose label depends on its options comes from the options its
    runs recorded; a key without a record is resolved by building it from ``overrides`` (its
    config entry) when it is a registry name or has a ``preset``, else shown as is. Without
    ``overrides``, those the campaign carries (:func:`with_label_overrides`) apply. ``plain``
    maps a campaign key to the algorithm whose label it takes (the parallel what-if's
    ``w-dbo@k4+overlap`` -> ``w-dbo``, :func:`tvbo.sim.parallel.parse_label`); the result is
    then keyed by those algorithms, each labelled from the first of its keys with a record.
    """
    name_of = plain or str
    campaign_keys = [str(a) for a in campaign["algorithm"].values]
    keys = list(dict.fromkeys(name_of(k) for k in campaign_keys))
    if overrides is None:
        overrides = parse_label_overrides(campaign.attrs.get(LABELS_ATTRIBUTE))
    overrides = {str(k): dict(v) for k, v in overrides.items()}
    recorded = recorded_algorithm_options(campaign)
    resolved: dict[str, dict] = {}
    for key in campaign_keys:
        if key in recorded:
            resolved.setdefault(name_of(key), recorded[key])
    for key, display in recorded_plugin_labels(campaign).items():
        key = name_of(key)
        if key in keys and "label" not in overrides.get(key, {}):
            overrides.setdefault(key, {})["label"] = display  # a plugin's own display name
    known = set(names())
    for key in keys:
        if key not in resolved and key not in known and "preset" not in overrides.get(key, {}):
            # nothing to build from: no record, no registry name; the key names itself
            overrides.setdefault(key, {})["label"] = overrides.get(key, {}).get("label", key)
    return algorithm_labels(keys, overrides, resolved)


def label_overrides(algorithm_options: Mapping[str, Mapping[str, Any]] | None) -> dict[str, dict]:
    """The ``label``/``variant``/``preset`` part of a config's ``algorithm_options``, for the
    analysis commands (``--labels``); entries without ``label`` or ``variant`` are dropped."""
    out = {}
    for key, options in (algorithm_options or {}).items():
        picked = {k: options[k] for k in ("label", "variant") if k in options}
        if picked:
            if "preset" in options:
                picked["preset"] = options["preset"]
            out[str(key)] = picked
    return out


def campaign_setting(campaign: xr.Dataset) -> dict[str, Any]:
    """Horizon per benchmark, cost tables, compute models, profiles and seeds of the runs."""
    runs = runs_table(campaign)
    horizons = _run_values(campaign, runs, "horizon")
    per_benchmark: dict[str, list[float]] = {}
    for benchmark, horizon in zip(runs["benchmark"], horizons, strict=True):
        if horizon is not None and np.isfinite(float(horizon)):
            per_benchmark.setdefault(str(benchmark), []).append(float(horizon))
    configs = [_json(t) for t in _run_values(campaign, runs, "config_json")]
    cost_tables = sorted({str(c["cost_table"]) for c in configs if c.get("cost_table")})
    models, profiles, replayed = set(), set(), {}
    for config in configs:
        compute = config.get("compute")
        if isinstance(compute, dict) and isinstance(compute.get("replay"), dict):
            replay = compute["replay"]
            error = (replay.get("fit_error") or {}).values()
            worst = max((float(e.get("relative_rmse", 0.0)) for e in error
                         if isinstance(e, dict)), default=float("nan"))
            recorded = config.get("algorithm")
            plugin = recorded.get("plugin") if isinstance(recorded, dict) else None
            label = (plugin or {}).get("display") or replay.get("algorithm") or "?"
            replayed[str(label)] = worst
        if isinstance(compute, dict):
            models.add(str(compute.get("model", "")))
            profile = compute.get("profile")
            if isinstance(profile, dict):
                profiles.add(str(profile.get("name", "")))
            elif profile:
                profiles.add(str(profile))
    seeds = runs.groupby(["benchmark", "algorithm"])["seed"].nunique()
    return {
        "horizon": {b: sorted(set(v)) for b, v in per_benchmark.items()},
        "cost_table": cost_tables,
        "compute": sorted(m for m in models if m),
        "profile": sorted(p for p in profiles if p),
        "seeds": (int(seeds.min()), int(seeds.max())) if len(seeds) else (0, 0),
        # algorithm label -> worst relative RMS fit error of its response-time model's phases
        "replayed": dict(sorted(replayed.items())),
    }


def _seconds(values: list[float]) -> str:
    return "/".join(f"{v:g}" for v in values) + " s"


def setting_text(setting: Mapping[str, Any]) -> str:
    """The caption's sentence about the setting ("Horizon 600 s; cost table metronome; ...")."""
    parts = []
    horizons = setting.get("horizon") or {}
    distinct = {tuple(v) for v in horizons.values()}
    if len(distinct) == 1:
        parts.append(f"horizon {_seconds(list(next(iter(distinct))))}")
    elif distinct:
        parts.append(
            "horizon per benchmark: "
            + ", ".join(f"{b} {_seconds(v)}" for b, v in sorted(horizons.items()))
        )
    for key, name in (("cost_table", "cost table"), ("compute", "compute model"),
                      ("profile", "profile")):
        values = setting.get(key) or []
        parts.append(f"{name} {', '.join(values)}" if values else f"{name} not recorded")
    text = "Setting: " + "; ".join(parts) + "."
    replayed = setting.get("replayed") or {}
    if replayed:
        shown = ", ".join(f"{a} (fit error {e:.0%} RMS)" if np.isfinite(e) else a
                          for a, e in replayed.items())
        text += (f" Caveat: {shown} replay{'s' if len(replayed) == 1 else ''} its measured CPU "
                 "time through a response-time model R(n) fitted by tvbo calibrate --from-runs "
                 "(the machine that measured it, not the counted work of the profile); compare "
                 "with counted rows with that in mind.")
    return text
