"""Predictions of the reproduction spec, evaluated on the run files.

An explanation of the spec (:class:`~tvbo.analysis.reproduction.spec.Explanation`) names the pairs
it explains, the order tvbo's runs must show for each, and at least one measured quantity with the
order it predicts. This module holds the declared vocabulary of those quantities
(:data:`QUANTITIES`, one definition each, computed per run from the run files) and evaluates a
prediction on a campaign and on its held-out replicate (:func:`evaluate`).

An order ``A < B`` *holds* when it is strict under the report's tie rule (the intervals mean ± 1
s.e. do not overlap, :func:`tvbo.analysis.reproduction.orderings.ordering`'s rule) and *fails* when
the measured values tie or show the opposite order; ``A <= B`` holds unless B is strictly lower,
``A = B`` only on a tie. A bound ``A > v`` holds when the mean minus its s.e. exceeds v (``A <
v``: the mean plus its s.e. is below v). Its evidence is *missing* when a campaign, an
algorithm, a benchmark or the quantity's run-file variable is absent. The quantities read from
the queries themselves (Griewank's bowl term, queries on the box's faces, ...) are defined in
:mod:`tvbo.analysis.reproduction.query_quantities`. An entry explains its pairs
only when every prediction holds on every replicate; one failure makes them contradicted, missing
evidence unexplained (:func:`entry_status`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from tvbo.analysis import fit_health as fh
from tvbo.analysis.aggregate import mean_se
from tvbo.analysis.reproduction.campaigns import Campaigns, at_reference_speed
from tvbo.analysis.reproduction.markdown import display_name, fmt
from tvbo.analysis.reproduction.query_quantities import QUERY_QUANTITIES, Absent
from tvbo.analysis.reproduction.spec import QUANTITY_NAMES, Prediction, Spec, Term
from tvbo.results.schema import PRESENT_VARIABLE, RUN_KEYS

STATUSES: tuple[str, ...] = ("holds", "fails", "missing")


# -- the vocabulary --------------------------------------------------------------------------------
def _present(ds: xr.Dataset) -> np.ndarray:
    if PRESENT_VARIABLE in ds:
        return ds[PRESENT_VARIABLE].transpose(*RUN_KEYS).values == 1
    return np.ones([ds.sizes[k] for k in RUN_KEYS], bool)


def _frame(ds: xr.Dataset, values: np.ndarray) -> pd.DataFrame:
    """One row per present run with a finite value: the run keys and ``value``."""
    mask = _present(ds) & np.isfinite(values)
    index = np.nonzero(mask)
    frame = {k: ds[k].values[index[i]] for i, k in enumerate(RUN_KEYS)}
    frame["value"] = values[index]
    return pd.DataFrame(frame)


def _variable(ds: xr.Dataset, name: str) -> xr.DataArray:
    if name not in ds.data_vars:
        raise Absent(f"{name} not recorded in these runs")
    return ds[name]


def _summary(name: str) -> Callable[[xr.Dataset], pd.DataFrame]:
    def per_run(ds: xr.Dataset) -> pd.DataFrame:
        return _frame(ds, _variable(ds, name).transpose(*RUN_KEYS).values.astype(float))
    return per_run


def _series(name: str, reduce: str) -> Callable[[xr.Dataset], pd.DataFrame]:
    """A per-iteration variable reduced per run: its mean or its last finite value."""
    def per_run(ds: xr.Dataset) -> pd.DataFrame:
        data = _variable(ds, name).transpose(*RUN_KEYS, "iteration").values.astype(float)
        finite = np.isfinite(data)
        with np.errstate(invalid="ignore"):
            if reduce == "mean":
                out = np.nansum(np.where(finite, data, 0.0), axis=-1) / finite.sum(axis=-1)
            else:
                last = data.shape[-1] - 1 - np.argmax(finite[..., ::-1], axis=-1)
                out = np.take_along_axis(data, last[..., None], axis=-1)[..., 0]
        out = np.where(finite.any(axis=-1), out, np.nan)
        return _frame(ds, out)
    return per_run


def _fit_share(column: str) -> Callable[[xr.Dataset], pd.DataFrame]:
    """Per run, the share of its fits for which ``column`` holds (fit_health's definitions)."""
    def per_run(ds: xr.Dataset) -> pd.DataFrame:
        records = fh.fit_records(ds)
        if records.empty:
            raise Absent("no fit recorded in these runs")
        if column == "above_horizon":
            records = fh.horizon_records(ds, records)
        else:
            judged = np.zeros(len(records), bool)
            flagged = np.zeros(len(records), bool)
            for name in fh.PARAMETERS:
                fitted = fh._fitted(records, name).to_numpy()
                judged |= fitted
                for side in ("lower", "upper"):
                    flagged |= fh._flag(records, name, side).to_numpy() & fitted
            records = records.assign(**{column: flagged})[judged]
        if records.empty:
            return pd.DataFrame(columns=[*RUN_KEYS, "value"])
        share = records.groupby(list(RUN_KEYS))[column].mean().astype(float)
        return share.rename("value").reset_index()
    return per_run


@dataclass(frozen=True)
class Quantity:
    """A measured quantity: its one definition (printed in the report) and its per-run value."""

    name: str
    definition: str
    per_run: Callable[[xr.Dataset], pd.DataFrame]


QUANTITIES: dict[str, Quantity] = {q.name: q for q in (
    Quantity("average_regret", "average regret per run (the tables' measure)",
             _summary("average_regret")),
    Quantity("time_integrated_regret", "time-integrated regret per run",
             _summary("time_integrated_regret")),
    Quantity("queries", "queries per run, warm-up included (n_iterations)",
             _summary("n_iterations")),
    Quantity("dataset_size", "mean dataset size over a run's queries (dataset_size)",
             _series("dataset_size", "mean")),
    Quantity("resets", "resets per run (last state_resets)", _series("state_resets", "final")),
    Quantity("removals", "removed observations per run (last state_removed_total)",
             _series("state_removed_total", "final")),
    Quantity("noise_var", "fitted noise variance at the end of a run (last state_noise_var)",
             _series("state_noise_var", "final")),
    Quantity("forgetting_rate", "fitted forgetting rate eps at the end of a run "
             "(last state_forgetting_rate)", _series("state_forgetting_rate", "final")),
    Quantity("lookahead", "ABO's mean look-ahead per query (state_abo_lookahead)",
             _series("state_abo_lookahead", "mean")),
    Quantity("nstar", "BOLT's mean dataset-size target n* (state_bolt_nstar)",
             _series("state_bolt_nstar", "mean")),
    Quantity("lT_beyond_horizon", "share of a run's l_T fits beyond its horizon "
             "(fit_health.horizon_records)", _fit_share("above_horizon")),
    Quantity("fits_at_bound", "share of a run's hyperparameter fits with a fitted "
             "hyperparameter at a bound (fit_health)", _fit_share("at_bound")),
    *(Quantity(name, definition, per_run)
      for name, (definition, per_run) in QUERY_QUANTITIES.items()),
)}
assert tuple(QUANTITIES) == QUANTITY_NAMES, "the spec's vocabulary and its definitions differ"


# -- statistics ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    mean: float
    se: float
    n: int

    def text(self) -> str:
        return f"{fmt(self.mean, self.se)} (n = {self.n})"


class Measurements:
    """Per-run values of the spec's quantities, read once per campaign and quantity."""

    def __init__(self, campaigns: Campaigns) -> None:
        self.campaigns = campaigns
        self._cache: dict[tuple[str, str, str], pd.DataFrame | Absent] = {}

    def seeds(self, campaign: str) -> str:
        ds = self.campaigns.get(campaign)
        if ds is None:
            return f"{campaign} (not run)"
        seeds = sorted(int(s) for s in ds["seed"].values)
        return f"seeds {seeds[0]}-{seeds[-1]}" if len(seeds) > 1 else f"seed {seeds[0]}"

    def cell(self, quantity: str, campaign: str, benchmark: str, algorithm: str) -> Cell:
        """Mean ± s.e. over the runs of one (benchmark, algorithm); raises :class:`Absent`."""
        # one benchmark at a time: the query-level quantities read per-query arrays, which a
        # whole paper campaign holds for every benchmark
        key = (campaign, quantity, benchmark)
        if key not in self._cache:
            ds = self.campaigns.get(campaign)
            if ds is None:
                self._cache[key] = Absent(f"campaign {campaign} not run")
            elif benchmark not in {str(b) for b in ds["benchmark"].values}:
                self._cache[key] = Absent(f"{benchmark} not run in {campaign}")
            else:
                try:
                    self._cache[key] = QUANTITIES[quantity].per_run(
                        at_reference_speed(ds.sel(benchmark=[benchmark])))
                except Absent as err:
                    self._cache[key] = err
        frame = self._cache[key]
        if isinstance(frame, Absent):
            raise frame
        values = frame.loc[(frame["benchmark"].astype(str) == benchmark)
                           & (frame["algorithm"].astype(str) == algorithm), "value"]
        mean, se, n = mean_se(values.to_numpy())
        if n == 0:
            raise Absent(f"no {quantity} of {algorithm} on {benchmark} in {campaign}")
        return Cell(mean, se, n)


# -- evaluation ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    """One prediction on one benchmark of one replicate (``seeds``: which seeds it read)."""

    status: str
    seeds: str
    benchmark: str
    detail: str


def _strict(lo: Cell, hi: Cell) -> bool:
    return hi.mean - lo.mean > _finite(lo.se) + _finite(hi.se)


def _finite(se: float) -> float:
    return se if math.isfinite(se) else 0.0


def _order(prediction: Prediction, lo: Cell, hi: Cell, a: str, b: str) -> tuple[str, str]:
    """``<``: strictly lower (the intervals mean ± 1 s.e. do not overlap); ``<=``: not strictly
    higher; ``=``: neither strictly lower nor strictly higher (a tie)."""
    below, above = _strict(lo, hi), _strict(hi, lo)
    sign = "<" if below else (">" if above else "≈")
    held = {"<": below, "<=": not above, "=": not below and not above}[prediction.relation]
    return ("holds" if held else "fails"), f"{a} {lo.text()} {sign} {b} {hi.text()}"


def _bound(prediction: Prediction, cell: Cell, a: str) -> tuple[str, str]:
    """``>``: the mean minus its s.e. exceeds the bound; ``<``: the mean plus it is below."""
    value, se = float(prediction.bound), _finite(cell.se)
    if prediction.relation == ">":
        held = cell.mean - se > value
    else:
        held = cell.mean + se < value
    sign = prediction.relation if held else ("≈" if abs(cell.mean - value) <= se else
                                             ("<" if cell.mean < value else ">"))
    return ("holds" if held else "fails"), f"{a} {cell.text()} {sign} {value:g}"


def _one(
    prediction: Prediction, benchmark: str, lower: Term, higher: Term,
    measured: Measurements, paper: Mapping[tuple[str, str], float],
) -> tuple[str, str]:
    q = prediction.quantity
    try:
        lo = measured.cell(q, lower.campaign, benchmark, lower.algorithm)
        hi = (lo if prediction.kind == "bound"
              else measured.cell(q, higher.campaign, benchmark, higher.algorithm))
    except Absent as err:
        return "missing", str(err)
    a, b = display_name(lower.algorithm), display_name(higher.algorithm)
    if lower.campaign != higher.campaign:
        a, b = f"{a} ({lower.campaign})", f"{b} ({higher.campaign})"
    if prediction.kind == "bound":
        return _bound(prediction, lo, a)
    if prediction.kind == "order":
        return _order(prediction, lo, hi, a, b)
    target = paper.get((benchmark, lower.algorithm), math.nan)
    if not math.isfinite(target):
        return "missing", f"no paper cell of {lower.algorithm} on {benchmark}"
    gain = abs(lo.mean - target) - abs(hi.mean - target)
    se = _finite(lo.se) + _finite(hi.se)
    held = gain > se
    return ("holds" if held else "fails"), (
        f"paper {target:.3g}; {a} {lo.text()} -> {b} {hi.text()}: "
        f"{'closer' if gain > 0 else 'farther'} by {abs(gain):.3g} "
        f"({'more' if held else 'not more'} than the s.e. sum {se:.3g})")


def evaluate(
    prediction: Prediction, spec: Spec, measured: Measurements,
    paper: Mapping[tuple[str, str], float] | None = None, held_out: bool = True,
) -> list[Outcome]:
    """The prediction on each of its benchmarks, on its campaigns' runs and on their held-out
    replicates (missing when a campaign has no replicate in the spec). ``held_out=False`` (a
    seed paper's claim, whose campaign the spec gives no replicate): the held-out replicate is
    read only where the spec names one for every campaign of the prediction."""
    paper = paper or {}
    outcomes = []
    for replicate in (False, True):
        terms = []
        for term in (prediction.lower, prediction.higher):
            key = spec.replicate(term.campaign) if replicate else term.campaign
            terms.append(None if key is None else Term(term.algorithm, key))
        if None in terms:
            if not held_out:
                continue
            missing = [t.campaign for t in (prediction.lower, prediction.higher)
                       if spec.replicate(t.campaign) is None]
            for benchmark in prediction.benchmarks:
                outcomes.append(Outcome("missing", "held-out", benchmark,
                                        f"no held-out replicate of {', '.join(missing)}"))
            continue
        lower, higher = terms
        seeds = measured.seeds(lower.campaign)
        for benchmark in prediction.benchmarks:
            status, detail = _one(prediction, benchmark, lower, higher, measured, paper)
            outcomes.append(Outcome(status, seeds, benchmark, detail))
    return outcomes


def combine(outcomes: Sequence[Outcome]) -> str:
    """fails when any outcome fails, else missing when any is missing, else holds."""
    statuses = {o.status for o in outcomes}
    if "fails" in statuses:
        return "fails"
    return "missing" if "missing" in statuses or not outcomes else "holds"


#: an entry's status -> the status of the pairs it explains
PAIR_STATUS: dict[str, str] = {"holds": "explained", "fails": "contradicted",
                               "missing": "unexplained"}


def outcome_lines(prediction: Prediction, outcomes: Sequence[Outcome]) -> list[str]:
    """One report line per prediction: its status and, per benchmark and replicate, the
    measurement."""
    status = combine(outcomes)
    parts = [f"{o.seeds}, {o.benchmark}: {o.status}: {o.detail}" for o in outcomes]
    return [f"   - predicts {prediction.text} — **{status}** ({'; '.join(parts)})"]


def pair_status(statuses: Sequence[tuple[str, int]], nobody: str) -> tuple[str, str]:
    """A pair's status from the statuses of the entries naming it (status, entry number):
    explained when one entry explains it, else contradicted when one contradicts it, else
    unexplained; and the report's reason (the entries' numbers, or ``nobody`` without one)."""
    found = {s for s, _ in statuses}
    status = next((s for s in ("explained", "contradicted") if s in found), "unexplained")
    refs = ", ".join(str(i) for s, i in statuses if s == status)
    if not statuses:
        return status, nobody
    return status, (f"evidence missing, {refs}" if status == "unexplained" else refs)
