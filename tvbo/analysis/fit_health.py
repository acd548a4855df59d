"""Fit health of a campaign: how often hyperparameter fits end at a bound or degenerate.

Averaged regret hides degenerate fits: a BOLT run whose temporal lengthscale jumps to ~1500 s
(beyond a 600 s horizon, i.e. "nothing ever changes") and stays there, an R-GP-UCB run whose
forgetting rate sits at its lower bound (it never resets), an ET-GP-UCB run whose noise fills the
whole variance (its trigger never fires). The run files record every fit on the ``fit``
dimension (:func:`tvbo.gp.fit.fit_hyperparameters`, :mod:`tvbo.results.schema`); this module
turns those records into

* :func:`fit_health_table`: one row per (benchmark, algorithm, speed): shares of fits with a
  hyperparameter at a bound (any, and per hyperparameter and side), the share of runs whose
  final / maximal temporal lengthscale exceeds the horizon, the median fitted ``l_T``, resets
  and removals per run (from ``state_resets`` / ``state_removed_total``) and the number of
  degenerate runs;
* :func:`degenerate_runs`: one row per (run, fit source, hyperparameter) stuck at a bound, or
  with ``l_T`` above the horizon, for a long streak of fits (see there for the precise rule),
  with when it started, when it ended and whether the run ever recovered;
* :func:`lengthscale_time_figure`: fitted ``l_T`` over virtual time per run, one panel per
  benchmark, log scale, the horizon dashed, coloured by algorithm -- a bimodal algorithm shows
  as two bundles of lines.

``l_T`` statistics use only the records of a surrogate (``fit_source`` starting ``surrogate:``)
whose ``l_T`` is in seconds (``fit_time_unit == "s"``): TV-GP-UCB's index axis and R-GP-UCB's
forgetting-rate fit count steps and are judged by their ``epsilon`` flags instead.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr
from matplotlib.figure import Figure

from tvbo.algorithms.display import benchmark_display_name
from tvbo.analysis.figure_output import FigureOptions
from tvbo.analysis.figures import TIME_LABEL, CampaignStyle, _panels
from tvbo.results.campaign import decode_categories, read_campaign
from tvbo.results.schema import (
    ATTRIBUTE_PREFIX,
    FIT_DIMENSION,
    FIT_HYPERPARAMETERS,
    FIT_PREFIX,
    PRESENT_VARIABLE,
    RUN_KEYS,
    STATE_PREFIX,
)

#: output files of :func:`write_fit_health`
FIT_HEALTH_FILES: dict[str, str] = {
    "table": "fit_health.csv",
    "markdown": "fit_health.md",
    "figure": "lengthscale_time.png",
    "degenerate": "degenerate_runs.csv",
}

#: hyperparameters judged, in table order (``epsilon``: forgetting rates fitted through l_T)
PARAMETERS: tuple[str, ...] = (*FIT_HYPERPARAMETERS, "epsilon")

#: defaults of the degeneracy rule (:func:`degenerate_runs`)
MIN_STREAK = 5
MIN_SHARE = 0.25

_GROUP = ["benchmark", "algorithm", "speed"]


# ------------------------------------------------------------------------------------------------
# records
# ------------------------------------------------------------------------------------------------
def _per_run(campaign: xr.Dataset, name: str) -> xr.DataArray | None:
    """A per-run quantity stored as a shared global attribute or as ``attr_<name>``."""
    if ATTRIBUTE_PREFIX + name in campaign:
        return campaign[ATTRIBUTE_PREFIX + name].astype(float)
    if name in campaign.attrs:
        shape = [campaign.sizes[k] for k in RUN_KEYS]
        return xr.DataArray(np.full(shape, float(campaign.attrs[name])), dims=RUN_KEYS,
                            coords={k: campaign[k] for k in RUN_KEYS})
    return None


def _check(campaign: xr.Dataset) -> None:
    missing = [k for k in RUN_KEYS if k not in campaign.dims]
    if missing:
        raise ValueError(f"fit health needs a campaign with run-key dimensions {list(RUN_KEYS)}; "
                         f"missing {missing}")


def _present(campaign: xr.Dataset) -> np.ndarray:
    """Boolean (benchmark, algorithm, seed, speed) mask of runs that exist."""
    if PRESENT_VARIABLE in campaign:
        return campaign[PRESENT_VARIABLE].transpose(*RUN_KEYS).values == 1
    return np.ones([campaign.sizes[k] for k in RUN_KEYS], bool)


def fit_records(campaign: xr.Dataset) -> pd.DataFrame:
    """One row per recorded fit of every existing run, in fit order within a run.

    Columns: the run keys, ``horizon`` and every per-fit field without its ``fit_`` prefix
    (``iteration``, ``time``, ``source``, ``lengthscale_time``, ``noise_var_at_lower``, ...).
    Per-dimension fields (``(fit, dim)``) are left out. A campaign without a ``fit`` dimension
    (run files written before fit recording) gives an empty frame with the run-key columns.
    """
    _check(campaign)
    dims = {*RUN_KEYS, FIT_DIMENSION}
    names = [n for n in campaign.data_vars
             if str(n).startswith(FIT_PREFIX) and set(campaign[n].dims) == dims]
    if FIT_DIMENSION not in campaign.dims or f"{FIT_PREFIX}iteration" not in names:
        return pd.DataFrame(columns=[*RUN_KEYS, "horizon", "fit"])
    order = (*RUN_KEYS, FIT_DIMENSION)
    iteration = campaign[f"{FIT_PREFIX}iteration"].transpose(*order).values.astype(float)
    mask = np.isfinite(iteration) & _present(campaign)[..., None]
    index = np.nonzero(mask)
    frame: dict[str, np.ndarray] = {
        key: campaign[key].values[index[i]] for i, key in enumerate(RUN_KEYS)
    }
    frame["fit"] = index[len(RUN_KEYS)]
    horizon = _per_run(campaign, "horizon")
    frame["horizon"] = (np.full(len(frame["fit"]), np.nan) if horizon is None
                        else horizon.transpose(*RUN_KEYS).values[index[: len(RUN_KEYS)]])
    for name in names:
        values = decode_categories(campaign[name].transpose(*order))[mask]
        if values.dtype == object:
            values = np.array(["" if v is None or (isinstance(v, float) and math.isnan(v))
                               else str(v) for v in values], dtype=object)
        frame[str(name)[len(FIT_PREFIX):]] = values
    out = pd.DataFrame(frame)
    if "iteration" in out:
        out["iteration"] = out["iteration"].astype(np.int64)
    return out


def _temporal(records: pd.DataFrame) -> pd.DataFrame:
    """Records of a surrogate whose l_T is in seconds (see the module docstring)."""
    if records.empty or "lengthscale_time" not in records:
        return records.iloc[0:0]
    keep = (records["source"].astype(str).str.startswith("surrogate:")
            & (records["time_unit"].astype(str) == "s")
            & np.isfinite(records["lengthscale_time"].astype(float)))
    return records[keep]


def _fitted(records: pd.DataFrame, name: str) -> pd.Series:
    """Whether ``name`` was fitted (not held fixed, present) in each record."""
    if name not in records:
        return pd.Series(False, index=records.index)
    value = np.isfinite(records[name].astype(float))
    if name == "epsilon":
        return value
    listed = records["fitted"].astype(str).str.split(",").apply(lambda names: name in names)
    return value & listed


def _flag(records: pd.DataFrame, name: str, side: str) -> pd.Series:
    column = f"{name}_at_{side}"
    if column not in records:
        return pd.Series(False, index=records.index)
    return records[column].fillna(0).astype(float) > 0


# ------------------------------------------------------------------------------------------------
# degenerate runs
# ------------------------------------------------------------------------------------------------
def _longest_streak(flags: np.ndarray) -> tuple[int, int]:
    """``(start, length)`` of the longest run of True values (the latest among equals)."""
    best = (0, 0)
    start = None
    for i, flag in enumerate(np.append(np.asarray(flags, bool), False)):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            if i - start >= best[1]:
                best = (start, i - start)
            start = None
    return best


def degenerate_runs(
    campaign_or_records: xr.Dataset | pd.DataFrame,
    *,
    min_streak: int = MIN_STREAK,
    min_share: float = MIN_SHARE,
) -> pd.DataFrame:
    """Runs whose fits got stuck: one row per (run, fit source, hyperparameter, condition).

    Rule (per run and fit source, fits in the order they ran): a condition held for a streak of
    consecutive fits at least ``max(min_streak, min_share * fits of the source)`` long (the
    longest streak is reported). Conditions: ``at_lower`` / ``at_upper`` for each fitted
    hyperparameter (:data:`tvbo.gp.fit.AT_BOUND_TOLERANCE`), and ``above_horizon`` for a
    temporal lengthscale in seconds above the run's horizon (l_T beyond H models a function that
    never changes within the run, whether or not l_T reached its bound).

    Columns: ``since_iteration`` / ``since_time`` (first fit of the streak: when the run got
    stuck), ``until_iteration`` / ``until_time`` (its last fit), ``to_end`` (1 if the streak
    includes the run's last fit: the run never recovered), ``streak_fits``, ``share_of_fits``,
    ``final_value`` (the parameter at the run's last fit).
    """
    if isinstance(min_streak, bool) or int(min_streak) != min_streak or min_streak < 1:
        raise ValueError(f"min_streak must be an integer >= 1, got {min_streak!r}")
    if not 0.0 <= min_share <= 1.0:
        raise ValueError(f"min_share must be in [0, 1], got {min_share!r}")
    records = (fit_records(campaign_or_records) if isinstance(campaign_or_records, xr.Dataset)
               else campaign_or_records)
    columns = [*RUN_KEYS, "source", "parameter", "condition", "since_iteration", "since_time",
               "until_iteration", "until_time", "to_end", "streak_fits", "share_of_fits",
               "final_value"]
    rows = []
    if records.empty:
        return pd.DataFrame(columns=columns)
    records = records.assign(_temporal=records.index.isin(_temporal(records).index))
    for key, group in records.groupby([*RUN_KEYS, "source"], sort=True):
        group = group.sort_values("fit")
        n = len(group)
        need = max(int(min_streak), math.ceil(min_share * n))
        checks = []
        for name in PARAMETERS:
            fitted = _fitted(group, name).to_numpy()
            if not fitted.any():
                continue
            for side in ("lower", "upper"):
                checks.append((name, f"at_{side}", fitted & _flag(group, name, side).to_numpy()))
        temporal = group["_temporal"].to_numpy()
        if temporal.any():
            above = (group["lengthscale_time"].astype(float) > group["horizon"].astype(float))
            checks.append(("lengthscale_time", "above_horizon", above.to_numpy() & temporal))
        for name, condition, flags in checks:
            start, streak = _longest_streak(flags)
            if streak < need:
                continue
            first, last = group.iloc[start], group.iloc[start + streak - 1]
            rows.append([*key, name, condition, int(first["iteration"]), float(first["time"]),
                         int(last["iteration"]), float(last["time"]), int(start + streak == n),
                         streak, streak / n, float(group.iloc[-1][name])])
    return pd.DataFrame(rows, columns=columns)


# ------------------------------------------------------------------------------------------------
# the table
# ------------------------------------------------------------------------------------------------
def _final_state(campaign: xr.Dataset, name: str) -> xr.DataArray | None:
    """Last finite value along ``iteration`` of ``state_<name>`` per run (NaN without one)."""
    var = STATE_PREFIX + name
    if var not in campaign or "iteration" not in campaign[var].dims:
        return None
    data = campaign[var].transpose(*RUN_KEYS, "iteration")
    values = data.values
    finite = np.isfinite(values)
    last = np.where(finite.any(axis=-1), values.shape[-1] - 1 - np.argmax(finite[..., ::-1],
                                                                            axis=-1), -1)
    picked = np.take_along_axis(values, np.maximum(last, 0)[..., None], axis=-1)[..., 0]
    picked = np.where(last >= 0, picked, np.nan)
    return xr.DataArray(picked, dims=RUN_KEYS, coords={k: campaign[k] for k in RUN_KEYS})


def _runs_frame(campaign: xr.Dataset) -> pd.DataFrame:
    """One row per existing run: keys, horizon, final resets and removals."""
    present = _present(campaign)
    index = np.nonzero(present)
    frame = {key: campaign[key].values[index[i]] for i, key in enumerate(RUN_KEYS)}
    for column, source in (("horizon", _per_run(campaign, "horizon")),
                           ("resets", _final_state(campaign, "resets")),
                           ("removals", _final_state(campaign, "removed_total"))):
        frame[column] = (np.full(len(index[0]), np.nan) if source is None
                         else source.transpose(*RUN_KEYS).values[index])
    return pd.DataFrame(frame)


def _share(mask: pd.Series, among: pd.Series) -> float:
    total = int(among.sum())
    return float((mask & among).sum()) / total if total else math.nan


def fit_health_table(
    campaign: xr.Dataset, *, min_streak: int = MIN_STREAK, min_share: float = MIN_SHARE
) -> pd.DataFrame:
    """One row per (benchmark, algorithm, speed) with existing runs (columns: see module doc).

    Only fits of :data:`PARAMETERS` count (``fits``); other recorded fits (BOLT's NNLS model of
    the response time) stay in the run file. Shares of fits are over the fits that fitted that
    hyperparameter (NaN where none did); ``share_any_at_bound`` is over all counted fits. Run
    shares for ``l_T`` are over runs with at least one surrogate fit of ``l_T`` in seconds.
    ``resets_per_run`` / ``removals_per_run`` are means
    of the final ``state_resets`` / ``state_removed_total`` (NaN where the algorithm has none).
    """
    _check(campaign)
    records = fit_records(campaign)
    if len(records):  # hyperparameter fits only (not e.g. BOLT's NNLS response-time model)
        judged = np.zeros(len(records), bool)
        for name in PARAMETERS:
            judged |= _fitted(records, name).to_numpy()
        records = records[judged]
    runs = _runs_frame(campaign)
    degenerate = degenerate_runs(records, min_streak=min_streak, min_share=min_share)
    temporal = _temporal(records)
    rows = []
    for key, run_group in runs.groupby(_GROUP, sort=True):
        cell = dict(zip(_GROUP, key, strict=True))
        selector = np.ones(len(records), bool)
        for k, v in cell.items():
            selector &= (records[k] == v).to_numpy() if len(records) else selector
        group = records[selector] if len(records) else records
        row: dict[str, object] = {**cell, "runs": len(run_group), "fits": len(group)}
        row["fits_per_run"] = len(group) / len(run_group)
        if len(group):
            any_flag = np.zeros(len(group), bool)
            for name in PARAMETERS:
                fitted = _fitted(group, name)
                for side in ("lower", "upper"):
                    flag = _flag(group, name, side) & fitted
                    any_flag |= flag.to_numpy()
                    row[f"share_{name}_at_{side}"] = _share(flag, fitted)
            row["share_any_at_bound"] = float(any_flag.mean())
        else:
            row["share_any_at_bound"] = math.nan
            for name in PARAMETERS:
                for side in ("lower", "upper"):
                    row[f"share_{name}_at_{side}"] = math.nan
        tgroup = temporal[np.all([(temporal[k] == v).to_numpy() for k, v in cell.items()], axis=0)]\
            if len(temporal) else temporal
        if len(tgroup):
            per_run = tgroup.sort_values("fit").groupby("seed")
            final = per_run["lengthscale_time"].last().astype(float)
            peak = per_run["lengthscale_time"].max().astype(float)
            horizon = per_run["horizon"].first().astype(float)
            row["share_runs_final_lT_above_horizon"] = float((final > horizon).mean())
            row["share_runs_max_lT_above_horizon"] = float((peak > horizon).mean())
            row["median_lT"] = float(np.median(tgroup["lengthscale_time"].astype(float)))
        else:
            row["share_runs_final_lT_above_horizon"] = math.nan
            row["share_runs_max_lT_above_horizon"] = math.nan
            row["median_lT"] = math.nan
        row["resets_per_run"] = float(run_group["resets"].mean())
        row["removals_per_run"] = float(run_group["removals"].mean())
        if len(degenerate):
            hit = np.all([(degenerate[k] == v).to_numpy() for k, v in cell.items()], axis=0)
            row["degenerate_runs"] = int(degenerate[hit]["seed"].nunique())
        else:
            row["degenerate_runs"] = 0
        rows.append(row)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------------
# l_T beyond the horizon (the reproduction report's fit-health criterion)
# ------------------------------------------------------------------------------------------------
#: the criterion's limit: an algorithm is marked when more than this share of its fits of l_T
#: end beyond the horizon
HORIZON_SHARE_LIMIT = 0.10

#: columns of :func:`horizon_table`
HORIZON_COLUMNS: tuple[str, ...] = (
    "runs", "fits", "lT_fits", "share_fits_lT_above_horizon", "share_fits_at_bound",
    "runs_lT_above_horizon", "runs_final_lT_above_horizon", "resets_per_run",
    "removals_per_run", "fit_modes", "above_limit",
)


def _run_steps(campaign: xr.Dataset) -> pd.DataFrame:
    """Per run: ``steps``, its number of observations (``n_iterations``, warm-up included)."""
    if "n_iterations" not in campaign:
        return pd.DataFrame(columns=[*RUN_KEYS, "steps"])
    frame = campaign["n_iterations"].astype(float).to_dataframe(name="steps").reset_index()
    return frame[[*RUN_KEYS, "steps"]]


def horizon_records(campaign: xr.Dataset, records: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every hyperparameter fit that fitted a temporal lengthscale, with the horizon in its unit.

    A surrogate's ``l_T`` in seconds is compared with the run's horizon (s). A forgetting rate fit
    through ``l_T = -2 / ln(1 - eps)`` on the iteration index (TV-GP-UCB's index axis, R-GP-UCB's
    eps fit: ``time_unit == "step"``) counts steps, so it is compared with the run's horizon in
    steps, its number of observations (``n_iterations``): an ``l_T`` beyond it means the model
    keeps a correlation above exp(-1) between the first and the last observation of the run,
    i.e. it treats the function as (nearly) static over the whole run, as an ``l_T`` in seconds
    beyond the horizon does. Columns: those of :func:`fit_records` plus ``horizon_in_unit`` and
    ``above_horizon`` (bool). ``records``: :func:`fit_records` of ``campaign`` if already read.
    """
    records = fit_records(campaign) if records is None else records
    if records.empty or "lengthscale_time" not in records:
        return records.assign(horizon_in_unit=pd.Series(dtype=float),
                              above_horizon=pd.Series(dtype=bool))
    fitted = _fitted(records, "lengthscale_time") | _fitted(records, "epsilon")
    unit = records["time_unit"].astype(str) if "time_unit" in records else pd.Series(
        "", index=records.index)
    keep = fitted & unit.isin(["s", "step"]) & np.isfinite(
        records["lengthscale_time"].astype(float))
    records = records[keep].copy()
    steps = _run_steps(campaign)
    records = records.merge(steps, on=list(RUN_KEYS), how="left") if len(records) else \
        records.assign(steps=pd.Series(dtype=float))
    records["horizon_in_unit"] = np.where(records["time_unit"].astype(str) == "step",
                                          records["steps"].astype(float),
                                          records["horizon"].astype(float))
    records["above_horizon"] = (records["lengthscale_time"].astype(float)
                                > records["horizon_in_unit"])
    return records.drop(columns="steps")


def horizon_table(
    campaign: xr.Dataset, *, by: tuple[str, ...] = ("algorithm",),
    limit: float = HORIZON_SHARE_LIMIT,
) -> pd.DataFrame:
    """Per ``by`` group (``("algorithm",)`` or ``("benchmark", "algorithm")``): the share of
    fits with ``l_T`` beyond the horizon (:func:`horizon_records`) and the rest of a campaign's
    fit health, pooled over the group's runs.

    Columns (:data:`HORIZON_COLUMNS`): ``runs``; ``fits`` (hyperparameter fits of
    :data:`PARAMETERS`); ``lT_fits`` (those that fitted ``l_T`` or ``eps``);
    ``share_fits_lT_above_horizon`` (NaN without any); ``share_fits_at_bound`` (fits with any
    fitted hyperparameter at a bound, :func:`fit_health_table`'s definition);
    ``runs_lT_above_horizon`` (runs with at least one such fit) and
    ``runs_final_lT_above_horizon`` (runs whose last such fit is beyond); ``resets_per_run`` /
    ``removals_per_run`` (means of the final ``state_resets`` / ``state_removed_total``, NaN
    where the algorithm has none); ``fit_modes`` (the fit modes of its ``l_T`` fits, else of
    its fits); ``above_limit`` (share > ``limit``).
    """
    _check(campaign)
    by = tuple(by)
    if not set(by) <= set(_GROUP) or "algorithm" not in by:
        raise ValueError(f"by must name 'algorithm' and optionally 'benchmark' / 'speed', got "
                         f"{by!r}")
    all_records = fit_records(campaign)
    records = all_records
    if len(records):
        judged = np.zeros(len(records), bool)
        for name in PARAMETERS:
            judged |= _fitted(records, name).to_numpy()
        records = records[judged]
        at_bound = np.zeros(len(records), bool)
        for name in PARAMETERS:
            fitted = _fitted(records, name)
            for side in ("lower", "upper"):
                at_bound |= (_flag(records, name, side) & fitted).to_numpy()
        records = records.assign(at_bound=at_bound)
    temporal = horizon_records(campaign, all_records)
    runs = _runs_frame(campaign)
    rows = []
    for key, run_group in runs.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        cell = dict(zip(by, key, strict=True))

        def select(frame: pd.DataFrame, cell: dict = cell) -> pd.DataFrame:
            if frame.empty:
                return frame
            mask = np.all([(frame[k] == v).to_numpy() for k, v in cell.items()], axis=0)
            return frame[mask]

        fits, lt = select(records), select(temporal)
        row: dict[str, object] = {**cell, "runs": len(run_group), "fits": len(fits),
                                  "lT_fits": len(lt)}
        row["share_fits_lT_above_horizon"] = (float(lt["above_horizon"].mean()) if len(lt)
                                              else math.nan)
        row["share_fits_at_bound"] = float(fits["at_bound"].mean()) if len(fits) else math.nan
        if len(lt):
            per_run = lt.sort_values("fit").groupby(list(RUN_KEYS))["above_horizon"]
            row["runs_lT_above_horizon"] = int(per_run.any().sum())
            row["runs_final_lT_above_horizon"] = int(per_run.last().sum())
        else:
            row["runs_lT_above_horizon"] = row["runs_final_lT_above_horizon"] = 0
        row["resets_per_run"] = float(run_group["resets"].mean())
        row["removals_per_run"] = float(run_group["removals"].mean())
        modes = lt["mode"] if len(lt) and "mode" in lt else (
            fits["mode"] if len(fits) and "mode" in fits else pd.Series(dtype=object))
        row["fit_modes"] = ", ".join(sorted({str(m) for m in modes if str(m)}))
        share = row["share_fits_lT_above_horizon"]
        row["above_limit"] = bool(math.isfinite(share) and share > limit)
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by, *HORIZON_COLUMNS])


# ------------------------------------------------------------------------------------------------
# the figure
# ------------------------------------------------------------------------------------------------
def lengthscale_time_figure(campaign: xr.Dataset) -> Figure:
    """Fitted l_T (s) over virtual time, one line per run, one panel per benchmark.

    Log y axis; the run's horizon is a dashed black line; colour = algorithm (line style =
    speed). Only surrogate fits with l_T in seconds are drawn; a benchmark without any gets an
    empty panel that says so.
    """
    _check(campaign)
    records = _temporal(fit_records(campaign))
    style = CampaignStyle(campaign)
    benchmarks = [str(b) for b in campaign["benchmark"].values]
    fig, axes = _panels(len(benchmarks), 1)
    drawn: list[tuple[str, float]] = []
    horizon = _per_run(campaign, "horizon")
    for p, benchmark in enumerate(benchmarks):
        ax = axes[p][0]
        sub = records[records["benchmark"].astype(str) == benchmark] if len(records) else records
        for (algorithm, speed, _seed), run in sub.groupby(["algorithm", "speed", "seed"],
                                                           sort=True):
            run = run.sort_values("fit")
            times = run["time"].astype(float).to_numpy()
            values = run["lengthscale_time"].astype(float).to_numpy()
            end = float(run["horizon"].iloc[-1])
            if math.isfinite(end) and end > times[-1]:  # the last fit is in force until H
                times, values = np.append(times, end), np.append(values, values[-1])
            ax.plot(times, values,
                    drawstyle="steps-post", linewidth=0.9, alpha=0.8,
                    **{**style.kwargs(str(algorithm), float(speed)), "label": None})
            if (str(algorithm), float(speed)) not in drawn:
                drawn.append((str(algorithm), float(speed)))
        if horizon is not None:
            values = horizon.sel(benchmark=campaign["benchmark"].values[p]).values
            finite = values[np.isfinite(values)]
            if finite.size:
                ax.axhline(float(np.max(finite)), color="black", linestyle="--", linewidth=1.0)
        if len(sub):
            ax.set_yscale("log")
        else:
            ax.text(0.5, 0.5, "no fitted l_T in seconds", ha="center", va="center",
                    transform=ax.transAxes)
        ax.set_title(benchmark_display_name(benchmark))
        ax.set_xlabel(TIME_LABEL)
        ax.set_ylabel("fitted l_T [s]")
    if drawn:
        style.legend(fig, drawn)
    return fig


# ------------------------------------------------------------------------------------------------
# output
# ------------------------------------------------------------------------------------------------
def _markdown(frame: pd.DataFrame, digits: int = 3) -> str:
    """A GitHub Markdown table (no extra dependency)."""
    if frame.empty:
        return "(none)\n"

    def cell(value: object) -> str:
        if isinstance(value, float | np.floating):
            return "" if math.isnan(value) else f"{value:.{digits}g}"
        return str(value)

    lines = ["| " + " | ".join(str(c) for c in frame.columns) + " |",
             "|" + "|".join("---" for _ in frame.columns) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |"
              for row in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def write_fit_health(
    campaign: xr.Dataset,
    outdir: str | Path,
    *,
    min_streak: int = MIN_STREAK,
    min_share: float = MIN_SHARE,
    options: FigureOptions | None = None,
) -> list[Path]:
    """Write :data:`FIT_HEALTH_FILES` into ``outdir`` (the figure in the format, dpi and style
    of ``options``); returns the paths written."""
    options = options or FigureOptions()
    table = fit_health_table(campaign, min_streak=min_streak, min_share=min_share)
    degenerate = degenerate_runs(campaign, min_streak=min_streak, min_share=min_share)
    with options.context():
        figure = lengthscale_time_figure(campaign)
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    paths = {k: outdir / v for k, v in FIT_HEALTH_FILES.items()}
    table.to_csv(paths["table"], index=False)
    degenerate.to_csv(paths["degenerate"], index=False)
    headline = ["benchmark", "algorithm", "speed", "runs", "fits_per_run", "share_any_at_bound",
                "share_noise_var_at_lower", "share_lengthscale_time_at_upper",
                "share_epsilon_at_lower", "share_runs_final_lT_above_horizon", "median_lT",
                "resets_per_run", "removals_per_run", "degenerate_runs"]
    text = [
        "# Fit health\n",
        "Shares of hyperparameter fits at a bound (within 1% of the log-width of the box), "
        "runs whose fitted temporal lengthscale l_T (s) ends above the horizon, and runs stuck "
        f"at a bound for >= max({min_streak}, {min_share:g} x fits) consecutive fits "
        "(`to_end` = 1: until the end of the run). "
        f"Every column is in `{FIT_HEALTH_FILES['table']}`.\n",
        _markdown(table[[c for c in headline if c in table.columns]]),
        "\n## Degenerate runs\n",
        _markdown(degenerate),
    ]
    paths["markdown"].write_text("\n".join(text))
    paths["figure"] = options.save(figure, outdir, paths["figure"].stem)
    return list(paths.values())


def load_and_write(path: str | Path, outdir: str | Path, **options: object) -> list[Path]:
    """Read a campaign file and :func:`write_fit_health` it (the CLI's entry point)."""
    return write_fit_health(read_campaign(path), outdir, **options)


__all__: list[Hashable] = [
    "FIT_HEALTH_FILES",
    "HORIZON_SHARE_LIMIT",
    "degenerate_runs",
    "fit_health_table",
    "fit_records",
    "horizon_records",
    "horizon_table",
    "lengthscale_time_figure",
    "write_fit_health",
]
