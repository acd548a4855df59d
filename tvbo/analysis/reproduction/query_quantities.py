"""Quantities of the reproduction spec read from a run's queries, one small function each.

The spec's predictions (:mod:`tvbo.analysis.reproduction.predict`) name measured quantities; the
ones here need more than a run's summaries: where its queries landed (``x``, normalised to
[0, 1]^d), what they scored (``f``, ``f_star``, ``regret``), which were warm-up
(``is_warmup``), the run's recorded configuration (``config_json``: the benchmark's domain and
description) and an algorithm's state (``state_selected_prior``). Each function takes one
campaign (or one run) and returns one row per present run with a value (the run keys and
``value``); a run-file variable the quantity needs and the runs lack raises
:class:`Absent`, so a prediction on it is *missing evidence*, never a silent zero.

Definitions (the report prints each next to its name):

``bowl_share``
    Griewank only: the share of a run's average regret carried by the bowl term of its queries,
    ``mean_q sum_s z_s^2 / 4000 / mean_q regret_q`` over the post-warm-up queries q, where z_s are
    the query's spatial coordinates in the benchmark's own box (the run's recorded domain). The
    time coordinate's own z_t^2 / 4000 is the same for every point at a time and cancels in the
    regret, so it is not counted. Near 1: the distance from the bowl's centre is the regret;
    near 0: the cosine product is.
``bowl_median``
    Griewank only: the median bowl term ``sum_s z_s^2 / 4000`` of a run's post-warm-up queries
    (where the typical query sits, unmoved by a few exploration outliers).
``face_share``
    The share of a run's post-warm-up queries with a normalised coordinate within
    :data:`FACE_TOLERANCE` of a face of the box (0 or 1).
``beats_warmup``
    1 when a post-warm-up query scored better (higher ``f``) than every warm-up query, else 0;
    its mean over runs is the share of runs in which the algorithm improved on its warm-up.
``simple_regret``
    ``max f_star - max f`` over a run's queries: the regret of the best query at the end of a
    run (the BOKE paper's measure on a time-invariant benchmark).
``cumulative_regret``
    The sum of the regret of a run's post-warm-up queries (the PE-GP-UCB paper's measure).
``true_prior_share``
    PE-GP-UCB's problems: the share of a run's steps whose selected prior
    (``state_selected_prior``) is the benchmark's true prior (``true_prior`` in the run's
    recorded benchmark description).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd
import xarray as xr

from tvbo.results.schema import ATTRIBUTE_PREFIX, PRESENT_VARIABLE, RUN_KEYS

#: a normalised coordinate this close to 0 or 1 is "on a face" of the box
FACE_TOLERANCE = 0.01

#: Griewank's bowl: sum z^2 / BOWL_DIVISOR (the benchmark's own constant)
BOWL_DIVISOR = 4000.0


class Absent(LookupError):
    """The evidence a quantity needs is not in the run files (the reason is the message)."""


def _need(ds: xr.Dataset, *names: str) -> None:
    missing = [n for n in names if n not in ds.data_vars]
    if missing:
        raise Absent(f"{', '.join(missing)} not recorded in these runs")


def _present(ds: xr.Dataset) -> np.ndarray:
    if PRESENT_VARIABLE in ds:
        return ds[PRESENT_VARIABLE].transpose(*RUN_KEYS).values == 1
    return np.ones([ds.sizes[k] for k in RUN_KEYS], bool)


def _config(ds: xr.Dataset, idx: tuple[int, ...]) -> dict:
    """The recorded configuration of the run at ``idx`` (a merged campaign keeps it per run)."""
    variable = ATTRIBUTE_PREFIX + "config_json"
    if variable in ds.data_vars:
        text = ds[variable].transpose(*RUN_KEYS).values[idx]
    elif "config_json" in ds.attrs:
        text = ds.attrs["config_json"]
    else:
        raise Absent("config_json not recorded in these runs")
    try:
        return json.loads(str(text))
    except json.JSONDecodeError as err:
        raise Absent(f"config_json of a run is not JSON ({err.msg})") from None


def _runs(ds: xr.Dataset, *names: str) -> Iterator[tuple[dict, dict[str, np.ndarray]]]:
    """Each present run: its keys and its per-query series (the run's own queries only)."""
    _need(ds, *names)
    data = {n: ds[n].transpose(*RUN_KEYS, ...).values for n in names}
    present = _present(ds)
    for idx in zip(*np.nonzero(present), strict=True):
        keys = {k: ds[k].values[i] for k, i in zip(RUN_KEYS, idx, strict=True)}
        keys["_idx"] = tuple(int(i) for i in idx)
        series = {n: np.asarray(v[idx], float) for n, v in data.items()}
        # a merged campaign pads the iteration axis with NaN beyond the run's own queries, and
        # the ``dim`` axis beyond its benchmark's own dimension
        first = series[names[0]]
        queries = np.isfinite(first.reshape(first.shape[0], -1)).any(axis=1)
        if not queries.any():
            # no per-query record in the campaign (a run longer than the merge's max_queries,
            # tvbo.results.campaign): its query quantities are missing, not zero
            continue
        out = {}
        for name, values in series.items():
            values = values[queries]
            if values.ndim == 2:
                values = values[:, np.isfinite(values).all(axis=0)]
            out[name] = values
        yield keys, out


def _frame(rows: list[tuple[dict, float]]) -> pd.DataFrame:
    records = [{**{k: v for k, v in keys.items() if k != "_idx"}, "value": value}
               for keys, value in rows if np.isfinite(value)]
    return pd.DataFrame.from_records(records, columns=[*RUN_KEYS, "value"])


def _post_warmup(series: dict[str, np.ndarray]) -> np.ndarray:
    return series["is_warmup"] == 0


def _bowl_terms(ds: xr.Dataset) -> Iterator[tuple[dict, np.ndarray, np.ndarray]]:
    """Per Griewank run: the bowl term of each post-warm-up query and its regret."""
    names = [str(b) for b in ds["benchmark"].values]
    if "griewank" not in names:
        raise Absent("the bowl term is defined for griewank only")
    ds = ds.sel(benchmark=["griewank"])
    for keys, series in _runs(ds, "x", "regret", "is_warmup"):
        domain = _config(ds, keys["_idx"]).get("benchmark", {}).get("domain", {})
        if "spatial" not in domain:
            raise Absent("the run's recorded benchmark has no spatial domain")
        box = np.asarray(domain["spatial"], float)
        keep = _post_warmup(series)
        x = series["x"][keep]
        z = box[:, 0] + (box[:, 1] - box[:, 0]) * x
        yield keys, (z**2).sum(axis=1) / BOWL_DIVISOR, series["regret"][keep]


def bowl_share(ds: xr.Dataset) -> pd.DataFrame:
    """Share of a run's average regret carried by Griewank's bowl term of its queries."""
    rows = []
    for keys, bowl, regret in _bowl_terms(ds):
        mean = float(regret.mean()) if regret.size else np.nan
        rows.append((keys, float(bowl.mean()) / mean if mean > 0 else np.nan))
    return _frame(rows)


def bowl_median(ds: xr.Dataset) -> pd.DataFrame:
    """Median bowl term of a run's post-warm-up Griewank queries."""
    return _frame([(keys, float(np.median(bowl)) if bowl.size else np.nan)
                   for keys, bowl, _ in _bowl_terms(ds)])


def face_share(ds: xr.Dataset) -> pd.DataFrame:
    """Share of a run's post-warm-up queries on a face of the (normalised) box."""
    rows = []
    for keys, series in _runs(ds, "x", "is_warmup"):
        x = series["x"][_post_warmup(series)]
        on_face = ((x <= FACE_TOLERANCE) | (x >= 1.0 - FACE_TOLERANCE)).any(axis=1)
        rows.append((keys, float(on_face.mean()) if x.size else np.nan))
    return _frame(rows)


def beats_warmup(ds: xr.Dataset) -> pd.DataFrame:
    """1 when a post-warm-up query beat every warm-up query, else 0 (per run)."""
    rows = []
    for keys, series in _runs(ds, "f", "is_warmup"):
        after = _post_warmup(series)
        if not after.any() or after.all():
            rows.append((keys, np.nan))  # no warm-up, or nothing after it: undefined
            continue
        rows.append((keys, float(series["f"][after].max() > series["f"][~after].max())))
    return _frame(rows)


def simple_regret(ds: xr.Dataset) -> pd.DataFrame:
    """``max f_star - max f`` over a run's queries."""
    return _frame([(keys, float(s["f_star"].max() - s["f"].max()) if s["f"].size else np.nan)
                   for keys, s in _runs(ds, "f", "f_star")])


def cumulative_regret(ds: xr.Dataset) -> pd.DataFrame:
    """Sum of the regret of a run's post-warm-up queries."""
    return _frame([(keys, float(s["regret"][_post_warmup(s)].sum()))
                   for keys, s in _runs(ds, "regret", "is_warmup")])


def true_prior_share(ds: xr.Dataset) -> pd.DataFrame:
    """Share of a run's steps whose selected prior is the benchmark's true prior."""
    rows = []
    for keys, series in _runs(ds, "state_selected_prior"):
        true = _config(ds, keys["_idx"]).get("benchmark", {}).get("true_prior")
        if true is None:
            raise Absent("the run's benchmark names no true prior")
        selected = series["state_selected_prior"]
        rows.append((keys, float(np.mean(selected == float(true))) if selected.size else np.nan))
    return _frame(rows)


#: name -> (definition, per-run function), in the order the spec's vocabulary lists them
QUERY_QUANTITIES: dict[str, tuple[str, Callable[[xr.Dataset], pd.DataFrame]]] = {
    "bowl_share": ("share of a run's average regret carried by Griewank's bowl term "
                   "sum z_s^2/4000 of its post-warm-up queries", bowl_share),
    "bowl_median": ("median bowl term sum z_s^2/4000 of a run's post-warm-up Griewank queries",
                    bowl_median),
    "face_share": (f"share of a run's post-warm-up queries within {FACE_TOLERANCE:g} of a face "
                   "of the normalised box", face_share),
    "beats_warmup": ("1 when a post-warm-up query beat every warm-up query, else 0 (per run)",
                     beats_warmup),
    "simple_regret": ("max f_star - max f over a run's queries", simple_regret),
    "cumulative_regret": ("sum of the regret of a run's post-warm-up queries",
                          cumulative_regret),
    "true_prior_share": ("share of a run's steps whose selected prior is the benchmark's true "
                         "prior", true_prior_share),
}
