"""The reproduction spec's ``published_code`` section and the explanations file it names.

Why a module of its own: the section compares runs of code tvbo does not own (the public W-DBO,
BoTorch's GP-UCB) whose compute was *measured* on one machine, so they cannot be rebuilt bit for
bit; their per-run numbers are a committed table (``runs``, a CSV written by
``examples/wdbo_public/report.py --export-runs``), while tvbo's sides come from the spec's
campaigns. This module reads and validates the section *before* any campaign is read (the
workflow parses the spec, so nothing here imports numpy): every error is one line naming the
entry. :mod:`tvbo.analysis.reproduction.published_code` computes and renders the section.

The section::

    published_code:
      runs: CSV                      # relative to the spec file
      explanations: YAML             # why the sides differ where they do (predictions)
      page: side-by-side.md          # the page with figures, R(n) and the replay (linked)
      sides:                         # name -> a measured side of the CSV or a campaign's algorithm
        public: {measured: public, label: "W-DBO (public code, measured)"}
        paper: {campaign: bolt_paper, algorithm: w-dbo-paper, label: "w-dbo-paper (counted)"}
      comparisons:                   # the published code's side against tvbo's
        - {name: w-dbo, title: ..., published: public, tvbo: paper, same_price: paper-r}

The explanations file is a list of ``{pair, benchmarks, explains, cause, predictions}``:
``pair`` a comparison's name, ``explains`` the regrets it explains (``avg``, ``tir``),
``predictions`` ``{quantity, order: "SIDE < SIDE"}`` over the sides above, judged on the
comparison's seeds and on the held-out seeds: those of the held-out replicate of tvbo's side's
campaign (the spec's ``replicate``), which the explanations are not written from.
"""

from __future__ import annotations

import csv
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tvbo.analysis.reproduction.spec import NUMERAL

#: the per-run quantities a comparison (and a prediction) can name: key -> (label, format)
QUANTITIES: dict[str, tuple[str, str]] = {
    "avg": ("average regret", ".3f"),
    "tir": ("time-integrated regret", ".3f"),
    "queries": ("queries", ".1f"),
    "compute": ("compute per iteration (s)", ".3f"),
    "mean_size": ("time-averaged dataset size", ".1f"),
    "collapsed": ("collapsed to the 2-point floor (fraction of runs)", ".2f"),
}
#: the quantities on which two sides are judged to agree (and which an entry may explain)
REGRETS: tuple[str, ...] = ("avg", "tir")
#: the fractions of the horizon at which queries and dataset size are shown
QUARTERS: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)
#: the runs table's provenance columns (one value per run: where and with what it ran)
PROVENANCE: tuple[str, ...] = ("algorithm", "compute_model", "machine", "versions")
#: the runs table's columns, in order
RUN_COLUMNS: tuple[str, ...] = (
    "side", "benchmark", "seed", *QUANTITIES, "horizon",
    *(f"queries_at_{round(q * 100)}" for q in QUARTERS),
    *(f"size_at_{round(q * 100)}" for q in QUARTERS), *PROVENANCE,
)


def _fail(where: str, message: str) -> ValueError:
    return ValueError(f"reproduction spec: {where}: {message}")


@dataclass(frozen=True)
class Side:
    """One side: a measured side of the runs table, or an algorithm of a spec campaign."""

    name: str
    label: str
    measured: str | None = None
    campaign: str | None = None
    algorithm: str | None = None


@dataclass(frozen=True)
class Comparison:
    """The published code's side (``published``) against tvbo's (``tvbo``); ``same_price``:
    tvbo's side charged the published code's calibrated compute (optional)."""

    name: str
    title: str
    published: str
    tvbo: str
    same_price: str | None = None


@dataclass(frozen=True)
class SidePrediction:
    """``quantity``: ``a`` ``op`` ``b`` (sides), judged by their ±1 s.e. intervals."""

    quantity: str
    a: str
    op: str
    b: str

    def __str__(self) -> str:
        return f"{QUANTITIES[self.quantity][0]}: {self.a} {self.op} {self.b}"


@dataclass(frozen=True)
class SideExplanation:
    """Why the two sides of ``pair`` differ on ``benchmarks`` (on the regrets ``explains``)."""

    pair: str
    benchmarks: tuple[str, ...]
    explains: tuple[str, ...]
    cause: str
    predictions: tuple[SidePrediction, ...]
    where: str  #: its place in the file ("explanations.yaml entry 2"), printed with it


@dataclass(frozen=True)
class PublishedCode:
    runs: Path
    explanations: Path
    page: str
    sides: dict[str, Side]
    comparisons: tuple[Comparison, ...]
    entries: tuple[SideExplanation, ...]


def measured_sides(path: Path) -> list[str]:
    """The sides the runs table holds (its ``side`` column), in order of appearance; every
    column must be there (ValueError names the missing ones)."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in RUN_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path.name}: missing column(s) {missing} (write it with "
                             "examples/wdbo_public/report.py OUT --export-runs FILE)")
        return list(dict.fromkeys(row["side"] for row in reader))


def read_explanations(path: Path, sides: Collection[str], pairs: Collection[str]
                      ) -> tuple[SideExplanation, ...]:
    """The entries of an explanations file, checked (ValueError names the entry)."""
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    if not isinstance(entries, list):
        raise ValueError(f"{path.name}: expected a list of entries")
    out = []
    for i, entry in enumerate(entries):
        where = f"{path.name} entry {i + 1}"
        keys = {"pair", "benchmarks", "explains", "cause", "predictions"}
        if not isinstance(entry, dict) or set(entry) != keys:
            raise ValueError(f"{where}: needs exactly the keys {sorted(keys)}")
        if entry["pair"] not in pairs:
            raise ValueError(f"{where}: unknown pair {entry['pair']!r}; comparisons: "
                             f"{', '.join(pairs)}")
        bad = [q for q in entry["explains"] if q not in REGRETS]
        if bad:
            raise ValueError(f"{where}: explains {bad}; it may explain {', '.join(REGRETS)}")
        if not entry["predictions"]:
            raise ValueError(f"{where}: at least one prediction")
        found = NUMERAL.findall(str(entry["cause"]))
        if found:
            raise ValueError(f"{where}: a cause contains no numerals (numbers come from the "
                             f"runs), found {', '.join(dict.fromkeys(found))}")
        predictions = tuple(_prediction(p, where, sides) for p in entry["predictions"])
        out.append(SideExplanation(str(entry["pair"]), tuple(map(str, entry["benchmarks"])),
                                   tuple(entry["explains"]), " ".join(str(entry["cause"]).split()),
                                   predictions, where))
    return tuple(out)


def _prediction(entry: Any, where: str, sides: Collection[str]) -> SidePrediction:
    if not isinstance(entry, dict) or set(entry) != {"quantity", "order"}:
        raise ValueError(f"{where}: a prediction is {{quantity, order}}, got {entry!r}")
    quantity, parts = entry["quantity"], str(entry["order"]).split()
    if quantity not in QUANTITIES:
        raise ValueError(f"{where}: unknown quantity {quantity!r}; known: {', '.join(QUANTITIES)}")
    if len(parts) != 3 or parts[1] not in ("<", ">") or not {parts[0], parts[2]} <= set(sides):
        raise ValueError(f"{where}: order {entry['order']!r} is not 'SIDE < SIDE' or "
                         f"'SIDE > SIDE' (sides: {', '.join(sides)})")
    return SidePrediction(str(quantity), parts[0], parts[1], parts[2])


def _keys(where: str, entry: Any, required: Collection[str], optional: Collection[str]
          ) -> dict[str, Any]:
    if not isinstance(entry, Mapping):
        raise _fail(where, f"expected a mapping, got {entry!r}")
    missing = [k for k in required if k not in entry]
    unknown = [k for k in entry if k not in (*required, *optional)]
    if missing or unknown:
        raise _fail(where, f"missing key(s) {missing}, unknown key(s) {unknown}; valid keys: "
                    f"{[*required, *optional]}")
    return dict(entry)


def _side(name: str, entry: Any, measured: Collection[str], campaigns: Mapping[str, Any]
          ) -> Side:
    where = f"published_code.sides.{name}"
    entry = _keys(where, entry, ("label",), ("measured", "campaign", "algorithm"))
    if "measured" in entry:
        if "campaign" in entry or "algorithm" in entry:
            raise _fail(where, "a side is either measured or a campaign's algorithm, not both")
        if entry["measured"] not in measured:
            raise _fail(where, f"unknown measured side {entry['measured']!r}; the runs table "
                        f"holds {', '.join(measured) or 'none'}")
        return Side(name, str(entry["label"]), measured=str(entry["measured"]))
    if "campaign" not in entry or "algorithm" not in entry:
        raise _fail(where, "needs 'measured', or 'campaign' and 'algorithm'")
    campaign = campaigns.get(entry["campaign"])
    if campaign is None:
        raise _fail(where, f"unknown campaign {entry['campaign']!r}; valid campaigns: "
                    f"{', '.join(campaigns)}")
    if entry["algorithm"] not in campaign.algorithms:
        raise _fail(where, f"unknown algorithm {entry['algorithm']!r} of campaign "
                    f"{entry['campaign']!r}; its algorithms: {', '.join(campaign.algorithms)}")
    return Side(name, str(entry["label"]), campaign=str(entry["campaign"]),
                algorithm=str(entry["algorithm"]))


def read_section(entry: Any, base: Path, campaigns: Mapping[str, Any]) -> PublishedCode | None:
    """The ``published_code`` section (None when absent), every name checked; ``base``: the
    spec's folder, ``campaigns``: the spec's campaigns (key -> CampaignSpec)."""
    if entry is None:
        return None
    entry = _keys("published_code", entry, ("runs", "explanations", "page", "sides",
                                            "comparisons"), ())
    paths = {}
    for key in ("runs", "explanations"):
        paths[key] = base / str(entry[key])
        if not paths[key].is_file():
            raise _fail(f"published_code.{key}", f"no such file {str(entry[key])!r}")
    try:
        measured = measured_sides(paths["runs"])
    except (ValueError, csv.Error) as err:
        raise _fail("published_code.runs", str(err)) from None
    raw_sides = entry["sides"]
    if not isinstance(raw_sides, Mapping) or not raw_sides:
        raise _fail("published_code.sides", "expected a mapping of side names")
    sides = {str(k): _side(str(k), v, measured, campaigns) for k, v in raw_sides.items()}
    comparisons = []
    for i, raw in enumerate(entry["comparisons"] or []):
        where = f"published_code.comparisons[{i}]"
        raw = _keys(where, raw, ("name", "title", "published", "tvbo"), ("same_price",))
        for key in ("published", "tvbo", "same_price"):
            if key in raw and raw[key] not in sides:
                raise _fail(where, f"unknown side {raw[key]!r} ({key}); sides: "
                            f"{', '.join(sides)}")
        comparisons.append(Comparison(str(raw["name"]), str(raw["title"]), str(raw["published"]),
                                      str(raw["tvbo"]), raw.get("same_price")))
    if not comparisons:
        raise _fail("published_code.comparisons", "at least one comparison")
    names = [c.name for c in comparisons]
    if len(set(names)) != len(names):
        raise _fail("published_code.comparisons", f"a name is used twice: {names}")
    try:
        entries = read_explanations(paths["explanations"], list(sides), names)
    except (ValueError, TypeError, KeyError) as err:
        raise _fail("published_code.explanations", str(err)) from None
    return PublishedCode(paths["runs"], paths["explanations"], str(entry["page"]), sides,
                         tuple(comparisons), entries)
