"""Reading and validating the reproduction spec's YAML (:func:`load_spec`).

Every name is checked *before* any campaign is read, so that a typo is one clear line naming the
field, the value and the valid choices (``reproduction spec: WHERE: MESSAGE``). The format itself,
section by section, and the objects this module builds are in
:mod:`tvbo.analysis.reproduction.spec`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from tvbo.analysis.published import PAPERS, apply_aliases, paper_table
from tvbo.analysis.reproduction.published_spec import read_section as read_published_code
from tvbo.analysis.reproduction.spec import (
    BOUND_RELATIONS,
    CURVE_NAMES,
    EVIDENCE_KINDS,
    EVIDENCE_OPTIONAL,
    MEASURE_AT,
    NUMERAL,
    ORDER_RELATIONS,
    QUANTITY_NAMES,
    RELATIONS,
    SECTIONS,
    STATE_SUMMARIES,
    VARIANT_METRICS,
    CampaignSpec,
    Claim,
    Direction,
    Evidence,
    Explanation,
    FitCause,
    Overlay,
    Prediction,
    SensitivitySpec,
    Spec,
    TableSpec,
    Term,
)


def _fail(where: str, message: str) -> ValueError:
    return ValueError(f"reproduction spec: {where}: {message}")


def _campaign_aliases(campaign: CampaignSpec, paper: str) -> dict[str, str]:
    """The campaign config's ``paper_aliases`` that name ``paper``'s algorithms, as its
    ``tvbo compare`` uses them (e.g. ``bolt: bolt-paper``: the faithful variant is compared)."""
    names = set(paper_table(paper)["algorithm"])
    return {
        str(k): str(v)
        for k, v in (campaign.merged.get("paper_aliases") or {}).items()
        if k in names
    }


def _choice(where: str, value: Any, valid: Sequence[str], kind: str) -> str:
    if value not in valid:
        raise _fail(where, f"unknown {kind} {value!r}; valid {kind}s: {', '.join(map(str, valid))}")
    return str(value)


def _names(where: str, values: Any, valid: Sequence[str], kind: str) -> tuple[str, ...]:
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list) or not values:
        raise _fail(where, f"expected a non-empty list of {kind}s, got {values!r}")
    return tuple(_choice(where, v, valid, kind) for v in values)


def _mapping(where: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(where, f"expected a mapping, got {value!r}")
    return dict(value)


#: config keys in which a sensitivity campaign and its base may differ: which runs exist and how
#: they are grouped into jobs, never how one run is made
_GRID_KEYS = frozenset({"campaign", "seeds", "speeds", "algorithms", "benchmarks",
                        "runs_per_job", "paper_aliases", "paper_tables", "paper_figures"})


def _setting_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """The config keys (outside the grid) in which two merged campaign configs differ."""
    return sorted(k for k in (set(a) | set(b)) - _GRID_KEYS if a.get(k) != b.get(k))


def _keys(where: str, entry: Mapping[str, Any], required: Sequence[str], optional: Sequence[str]):
    missing = [k for k in required if k not in entry]
    if missing:
        raise _fail(where, f"missing key(s) {missing}; required keys: {list(required)}")
    unknown = [k for k in entry if k not in (*required, *optional)]
    if unknown:
        raise _fail(where, f"unknown key(s) {unknown}; valid keys: {[*required, *optional]}")


def _text(where: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(where, f"expected a non-empty text, got {value!r}")
    return " ".join(value.split())


def _overlay(entry: Any, base: Path) -> Overlay | None:
    if entry is None:
        return None
    where = "overlay"
    entry = _mapping(where, entry)
    _keys(where, entry, ("name", "config", "campaigns", "note"), ())
    path = base / str(entry["config"])
    if not path.is_file():
        raise _fail(f"{where}.config", f"no such config file {str(path)!r}")
    name = _text(f"{where}.name", entry["name"])
    campaigns = entry["campaigns"]
    if not isinstance(campaigns, list) or not campaigns:
        raise _fail(f"{where}.campaigns", f"expected a non-empty list of campaign keys, got "
                    f"{campaigns!r}")
    return Overlay(name, path, tuple(map(str, campaigns)), _text(f"{where}.note", entry["note"]))


def _campaign(key: str, entry: Any, base: Path, overlay: Overlay | None = None) -> CampaignSpec:
    where = f"campaigns.{key}"
    entry = _mapping(where, entry)
    _keys(where, entry, ("config",), ("overrides", "note", "replicate"))
    files = entry["config"] if isinstance(entry["config"], list) else [entry["config"]]
    merged: dict[str, Any] = {}
    paths = []
    for name in files:
        path = base / str(name)
        if not path.is_file():
            raise _fail(f"{where}.config", f"no such config file {str(path)!r}")
        merged.update(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
        paths.append(path)
    overrides = _mapping(f"{where}.overrides", entry.get("overrides") or {})
    laid = overlay is not None and key in overlay.campaigns
    if laid:
        # as the overlay's own header says: after the campaign's files, under another name
        merged.update(yaml.safe_load(overlay.config.read_text(encoding="utf-8")) or {})
        paths.append(overlay.config)
    merged.update(overrides)
    if "campaign" not in merged:
        raise _fail(where, "the merged config names no 'campaign'")
    if laid:
        overrides = {**overrides, "campaign": f"{merged['campaign']}_{overlay.name}"}
        merged["campaign"] = overrides["campaign"]
    replicate = entry.get("replicate")
    return CampaignSpec(key, tuple(paths), overrides, merged, str(entry.get("note") or ""),
                        None if replicate is None else str(replicate),
                        overlay.name if laid else None)


def _paper_names(paper: str, aliases: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """The tvbo benchmark and algorithm names of a published table (campaign names via aliases)."""
    frame = apply_aliases(paper_table(paper), aliases or None, paper)
    return list(pd_unique(frame["benchmark"])), list(pd_unique(frame["algorithm"]))


def pd_unique(values: Any) -> list[str]:
    return list(dict.fromkeys(str(v) for v in values if str(v)))


def _evidence(where: str, entry: Any, campaigns: Mapping[str, CampaignSpec]) -> Evidence:
    entry = _mapping(where, entry)
    kind = _choice(f"{where}.kind", entry.get("kind"), list(EVIDENCE_KINDS), "evidence kind")
    _keys(where, entry, ("kind", "campaign", *EVIDENCE_KINDS[kind]), EVIDENCE_OPTIONAL[kind])
    campaign = _choice(f"{where}.campaign", entry["campaign"], list(campaigns), "campaign")
    spec = campaigns[campaign]
    params = {k: v for k, v in entry.items() if k not in ("kind", "campaign")}
    for key in ("algorithm_a", "algorithm_b"):
        if key in params:
            params[key] = _choice(f"{where}.{key}", params[key], spec.algorithms, "algorithm")
    if "algorithms" in params:
        params["algorithms"] = list(
            _names(f"{where}.algorithms", params["algorithms"], spec.algorithms, "algorithm")
        )
    if "benchmarks" in params:
        params["benchmarks"] = list(
            _names(f"{where}.benchmarks", params["benchmarks"], spec.benchmarks, "benchmark")
        )
    if "metric" in params:
        _choice(f"{where}.metric", params["metric"], VARIANT_METRICS, "metric")
    if "summary" in params:
        _choice(f"{where}.summary", params["summary"], STATE_SUMMARIES, "summary")
    if "reference" in params:
        params["reference"] = _choice(f"{where}.reference", params["reference"], list(campaigns),
                                      "campaign")
    if kind == "state" and not str(params["variable"]).startswith("state_"):
        raise _fail(f"{where}.variable", f"expected a state_* run-file variable, got "
                    f"{params['variable']!r}")
    return Evidence(kind, campaign, params)


def _evidence_list(where: str, value: Any, campaigns: Mapping[str, CampaignSpec]):
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _fail(where, f"expected a list of evidence specs, got {value!r}")
    return tuple(_evidence(f"{where}[{i}]", e, campaigns) for i, e in enumerate(value))


def _claim(where: str, entry: Any, campaigns: Mapping[str, CampaignSpec]) -> Claim:
    entry = _mapping(where, entry)
    _keys(
        where, entry,
        ("id", "paper", "source", "quote", "campaign", "benchmarks", "algorithms", "baselines",
         "measure", "relation", "reason"),
        ("evidence",),
    )
    campaign = _choice(f"{where}.campaign", entry["campaign"], list(campaigns), "campaign")
    spec = campaigns[campaign]
    measure = _mapping(f"{where}.measure", entry["measure"])
    _keys(f"{where}.measure", measure, ("curve", "at"), ("cpu_time",))
    curve = _choice(f"{where}.measure.curve", measure["curve"], CURVE_NAMES, "curve")
    at = _choice(f"{where}.measure.at", measure["at"], MEASURE_AT, "measure point")
    cpu_time = measure.get("cpu_time")
    if cpu_time is not None and (at != "cpu_time" or not float(cpu_time) > 0):
        raise _fail(f"{where}.measure.cpu_time", f"a positive number with at: cpu_time, got "
                    f"{cpu_time!r} with at: {at}")
    return Claim(
        id=_text(f"{where}.id", entry["id"]),
        paper=_text(f"{where}.paper", entry["paper"]),
        source=_text(f"{where}.source", entry["source"]),
        quote=_text(f"{where}.quote", entry["quote"]),
        campaign=campaign,
        benchmarks=_names(f"{where}.benchmarks", entry["benchmarks"], spec.benchmarks, "benchmark"),
        algorithms=_names(f"{where}.algorithms", entry["algorithms"], spec.algorithms, "algorithm"),
        baselines=_names(f"{where}.baselines", entry["baselines"], spec.algorithms, "algorithm"),
        curve=curve,
        at=at,
        cpu_time=None if cpu_time is None else float(cpu_time),
        relation=_choice(f"{where}.relation", entry["relation"], RELATIONS, "relation"),
        reason=_text(f"{where}.reason", entry["reason"]),
        evidence=_evidence_list(f"{where}.evidence", entry.get("evidence"), campaigns),
    )


def load_spec(path: str | Path) -> Spec:
    """Read and validate a reproduction spec; every error is one line naming field and choices."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"reproduction spec: no such file {str(path)!r}")
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    raw = _mapping("top level", raw)
    unknown = [k for k in raw if k not in SECTIONS]
    if unknown:
        raise _fail("top level", f"unknown section(s) {unknown}; valid sections: {list(SECTIONS)}")
    base = path.parent
    overlay = _overlay(raw.get("overlay"), base)
    campaigns = {
        str(k): _campaign(str(k), v, base, overlay)
        for k, v in _mapping("campaigns", raw.get("campaigns") or {}).items()
    }
    if overlay is not None:
        for key in overlay.campaigns:
            _choice("overlay.campaigns", key, list(campaigns), "campaign")
    for key, campaign in campaigns.items():
        if campaign.replicate is not None:
            other = campaigns.get(campaign.replicate)
            _choice(f"campaigns.{key}.replicate", campaign.replicate, list(campaigns),
                    "campaign")
            if other is None or other.benchmarks != campaign.benchmarks or sorted(
                other.algorithms) != sorted(campaign.algorithms):
                raise _fail(f"campaigns.{key}.replicate", f"{campaign.replicate!r} must run the "
                            "same benchmarks and algorithms (other seeds)")
    keys = list(campaigns)
    tables = []
    for i, entry in enumerate(raw.get("tables") or []):
        where = f"tables[{i}]"
        entry = _mapping(where, entry)
        _keys(where, entry, ("paper", "campaign"), ("aliases", "head_to_head"))
        paper = _choice(f"{where}.paper", entry["paper"], list(PAPERS), "paper table")
        campaign = _choice(f"{where}.campaign", entry["campaign"], keys, "campaign")
        if "aliases" in entry:
            aliases = {str(k): str(v) for k, v in (entry["aliases"] or {}).items()}
        else:
            aliases = _campaign_aliases(campaigns[campaign], paper)
        try:
            renamed = apply_aliases(paper_table(paper), aliases or None, paper)
        except ValueError as err:
            raise _fail(f"{where}.aliases", str(err)) from None
        head_to_head = None
        if "head_to_head" in entry:
            pair = entry["head_to_head"]
            if not isinstance(pair, list) or len(pair) != 2 or pair[0] == pair[1]:
                raise _fail(f"{where}.head_to_head",
                            f"two different algorithm names, got {pair!r}")
            valid = list(dict.fromkeys(map(str, renamed["algorithm"])))
            head_to_head = tuple(
                _choice(f"{where}.head_to_head", str(name), valid, "algorithm of the table")
                for name in pair
            )
        tables.append(TableSpec(paper, campaign, aliases, head_to_head))
    table_keys = [t.paper for t in tables]
    if len(set(table_keys)) != len(table_keys):
        raise _fail("tables", f"a paper table is listed twice: {table_keys}")
    sensitivity = []
    for i, entry in enumerate(raw.get("sensitivity") or []):
        where = f"sensitivity[{i}]"
        entry = _mapping(where, entry)
        _keys(where, entry, ("paper", "campaign"), ("base",))
        paper = _choice(f"{where}.paper", entry["paper"], list(PAPERS), "paper table")
        campaign = _choice(f"{where}.campaign", entry["campaign"], keys, "campaign")
        speed_base = entry.get("base")
        if speed_base is not None:
            speed_base = _choice(f"{where}.base", speed_base, keys, "campaign")
            differ = _setting_differences(campaigns[campaign].merged, campaigns[speed_base].merged)
            if differ:
                raise _fail(f"{where}.base", f"{speed_base!r} differs from {campaign!r} in "
                            f"{', '.join(differ)}: its runs cannot stand for the speeds "
                            f"{campaign!r} does not run")
        sensitivity.append(
            SensitivitySpec(paper, campaign, _campaign_aliases(campaigns[campaign], paper),
                            speed_base)
        )
    by_table = {t.paper: t for t in tables}
    claims = tuple(
        _claim(f"claims[{i}]", entry, campaigns) for i, entry in enumerate(raw.get("claims") or [])
    )
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        raise _fail("claims", f"a claim id is used twice: {ids}")
    explanations = [
        _explanation(f"explanations[{i}]", entry, by_table, campaigns, claims)
        for i, entry in enumerate(raw.get("explanations") or [])
    ]
    fit_causes = tuple(
        _fit_cause(f"fit_causes[{i}]", entry, by_table, campaigns)
        for i, entry in enumerate(raw.get("fit_causes") or [])
    )
    published = read_published_code(raw.get("published_code"), base, campaigns)
    return Spec(path, campaigns, tuple(tables), tuple(sensitivity), tuple(explanations), claims,
                fit_causes, overlay, published)


def _no_numerals(where: str, text: str) -> str:
    """A cause's text must carry no typed number: every number comes from the evidence."""
    found = NUMERAL.findall(text)
    if found:
        raise _fail(where, f"a cause contains no numerals (numbers come from the evidence), "
                    f"found {', '.join(dict.fromkeys(found))}")
    return text


def _term(where: str, text: str, campaign: str, campaigns: Mapping[str, CampaignSpec]) -> Term:
    name, _, other = text.strip().partition("@")
    if other:
        campaign = _choice(where, other.strip(), list(campaigns), "campaign")
    return Term(_choice(where, name.strip(), campaigns[campaign].algorithms, "algorithm"),
                campaign)


def _split(where: str, text: Any, signs: Sequence[str]) -> tuple[str, str, str]:
    """``A < B`` (or ``A > B``, ``A -> B``) into (A, sign, B)."""
    if isinstance(text, str):
        for sign in signs:
            a, found, b = text.partition(f" {sign} ")
            if found and a.strip() and b.strip():
                return a.strip(), sign, b.strip()
    raise _fail(where, f"expected 'A {signs[0]} B', got {text!r}")


def _bound_value(where: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _fail(where, f"expected 'ALGORITHM > NUMBER', got a bound {text!r}") from None
    if not math.isfinite(value):
        raise _fail(where, f"expected a finite bound, got {text!r}")
    return value


def _prediction(
    where: str, entry: Any, default_benchmarks: Sequence[str], table_campaign: str,
    table_algorithms: Sequence[str], campaigns: Mapping[str, CampaignSpec],
) -> list[Prediction]:
    """One prediction of an entry (a chained order ``A <= B <= C``: one per link)."""
    entry = _mapping(where, entry)
    kinds = [k for k in ("order", "bound", "towards_paper") if k in entry]
    if len(kinds) != 1:
        raise _fail(where, f"exactly one of 'order' (A < B), 'bound' (A > NUMBER) or "
                    f"'towards_paper' (COLUMN -> VARIANT), got {kinds or 'neither'}")
    kind = kinds[0]
    _keys(where, entry, ("quantity", kind), ("benchmarks", "campaign"))
    quantity = _choice(f"{where}.quantity", entry["quantity"], QUANTITY_NAMES, "quantity")
    campaign = _choice(f"{where}.campaign", entry.get("campaign", table_campaign),
                       list(campaigns), "campaign")
    relation, bound = "<", None
    if kind == "order":
        links = _chain(f"{where}.order", entry["order"])
        if len(links) > 1:  # A <= B <= C: one prediction per link, judged together
            return [p for link in links for p in _prediction(
                where, {**entry, "order": link}, default_benchmarks, table_campaign,
                table_algorithms, campaigns)]
        a, sign, b = _split(f"{where}.order", entry["order"], ORDER_RELATIONS)
        lower, higher = (b, a) if sign in (">", ">=") else (a, b)
        relation = {">": "<", ">=": "<="}.get(sign, sign)
    elif kind == "bound":
        a, relation, value = _split(f"{where}.bound", entry["bound"], BOUND_RELATIONS)
        lower = higher = a
        bound = _bound_value(f"{where}.bound", value)
    else:
        if quantity != "average_regret":
            raise _fail(f"{where}.quantity", f"towards_paper compares with the paper's cell: "
                        f"quantity average_regret, got {quantity!r}")
        lower, _, higher = _split(f"{where}.towards_paper", entry["towards_paper"], ("->",))
        _choice(f"{where}.towards_paper", lower, table_algorithms, "algorithm of the table")
    terms = [_term(f"{where}.{kind}", t, campaign, campaigns) for t in (lower, higher)]
    if "benchmarks" in entry:
        benchmarks = entry["benchmarks"]
        for term in terms:
            _names(f"{where}.benchmarks", benchmarks, campaigns[term.campaign].benchmarks,
                   "benchmark")
    else:  # the entry's benchmarks that its campaigns run
        benchmarks = [b for b in default_benchmarks
                      if all(b in campaigns[t.campaign].benchmarks for t in terms)]
        if not benchmarks:
            raise _fail(f"{where}.benchmarks", f"no benchmark of the entry "
                        f"{list(default_benchmarks)} is run by {terms[0].campaign!r}")
    text = f"{quantity}: {entry[kind]}"
    return [Prediction(kind, quantity, terms[0], terms[1], tuple(map(str, benchmarks)), campaign,
                       text, relation, bound)]


def _chain(where: str, text: Any) -> list[str]:
    """``A < B <= C`` into its links ``A < B``, ``B <= C`` (one link: the text itself)."""
    if not isinstance(text, str):
        raise _fail(where, f"expected 'A {ORDER_RELATIONS[0]} B', got {text!r}")
    words = text.split()
    if len(words) > 3 and len(words) % 2 == 1 and all(
            w in ORDER_RELATIONS for w in words[1::2]):
        return [" ".join(words[i:i + 3]) for i in range(0, len(words) - 2, 2)]
    return [text]


def _direction(
    where: str, text: Any, benchmarks: Sequence[str], algorithms: Sequence[str],
    entry_benchmarks: Sequence[str], entry_algorithms: Sequence[str], focus: Sequence[str],
) -> list[Direction]:
    """``[BENCHMARK:] A < B`` (every benchmark of the entry without a prefix)."""
    head, colon, rest = str(text).partition(":") if isinstance(text, str) else ("", "", text)
    names = [head.strip()] if colon else list(entry_benchmarks)
    a, sign, b = _split(where, rest if colon else text, ("<", ">"))
    lower, higher = (a, b) if sign == "<" else (b, a)
    for name in names:
        _choice(where, name, benchmarks, "benchmark")
        if name not in entry_benchmarks:
            raise _fail(where, f"a direction on a pair the entry does not cover: benchmark "
                        f"{name!r} is not among its benchmarks {list(entry_benchmarks)}")
    for name in (lower, higher):
        _choice(where, name, algorithms, "algorithm")
        if name not in entry_algorithms:
            raise _fail(where, f"a direction on a pair the entry does not cover: algorithm "
                        f"{name!r} is not among its algorithms {list(entry_algorithms)}")
    if focus and lower not in focus and higher not in focus:
        raise _fail(where, f"a direction on a pair the entry does not cover: neither {lower!r} "
                    f"nor {higher!r} is a focus algorithm {list(focus)}")
    return [Direction(name, lower, higher) for name in names]


def _explanation(
    where: str, entry: Any, tables: Mapping[str, TableSpec],
    campaigns: Mapping[str, CampaignSpec], claims: Sequence[Claim] = (),
) -> Explanation:
    entry = _mapping(where, entry)
    targets = [k for k in ("table", "claim") if k in entry]
    if len(targets) != 1:
        raise _fail(where, f"exactly one of 'table' (a published table) or 'claim' (a seed "
                    f"paper's claim id), got {targets or 'neither'}")
    _keys(where, entry, (targets[0], "benchmarks", "algorithms", "cause"),
          ("evidence", "focus", "explains", "predictions"))
    if targets[0] == "claim":
        return _claim_explanation(where, entry, claims, campaigns)
    table = _choice(f"{where}.table", entry["table"], list(tables), "table")
    benchmarks, algorithms = _paper_names(table, tables[table].aliases)
    broad = entry["benchmarks"] == "all" or entry["algorithms"] == "all"
    chosen_b = benchmarks if entry["benchmarks"] == "all" else _names(
        f"{where}.benchmarks", entry["benchmarks"], benchmarks, "benchmark")
    chosen = algorithms if entry["algorithms"] == "all" else _names(
        f"{where}.algorithms", entry["algorithms"], algorithms, "algorithm")
    focus = () if entry.get("focus") is None else _names(f"{where}.focus", entry["focus"],
                                                         chosen, "algorithm")
    explains: list[Direction] = []
    raw_explains = entry.get("explains") or []
    if not isinstance(raw_explains, list):
        raise _fail(f"{where}.explains", f"expected a list of 'A < B', got {raw_explains!r}")
    if broad and raw_explains:
        raise _fail(f"{where}.explains", "an entry with 'all' benchmarks or algorithms adds "
                    "context only and explains no pair: name the pairs in an entry that lists "
                    "its benchmarks and algorithms")
    for i, text in enumerate(raw_explains):
        explains += _direction(f"{where}.explains[{i}]", text, benchmarks, algorithms,
                               chosen_b, chosen, focus)
    raw_predictions = entry.get("predictions") or []
    if not isinstance(raw_predictions, list):
        raise _fail(f"{where}.predictions", f"expected a list, got {raw_predictions!r}")
    if explains and not raw_predictions:
        raise _fail(f"{where}.predictions", "an entry that explains pairs names at least one "
                    "measured quantity with the order it predicts")
    campaign = tables[table].campaign
    predictions = tuple(
        x for i, p in enumerate(raw_predictions)
        for x in _prediction(f"{where}.predictions[{i}]", p, chosen_b, campaign, algorithms,
                             campaigns)
    )
    return Explanation(
        table=table, benchmarks=tuple(chosen_b), algorithms=tuple(chosen),
        cause=_no_numerals(f"{where}.cause", _text(f"{where}.cause", entry["cause"])),
        evidence=_evidence_list(f"{where}.evidence", entry.get("evidence"), campaigns),
        focus=focus, explains=tuple(explains), predictions=predictions, broad=broad,
        where=where,
    )


def _claim_explanation(
    where: str, entry: dict[str, Any], claims: Sequence[Claim],
    campaigns: Mapping[str, CampaignSpec],
) -> Explanation:
    """An entry explaining comparisons of a seed paper's claim: it names the claim's benchmarks
    and algorithms (never ``all``), each pair a claimed algorithm and one of its baselines."""
    by_id = {c.id: c for c in claims}
    claim = by_id[_choice(f"{where}.claim", entry["claim"], list(by_id), "claim id")]
    if "focus" in entry:
        raise _fail(f"{where}.focus", "a claim's entry names its pairs in 'explains'; focus is "
                    "for a table's entries")
    names = [*claim.algorithms, *claim.baselines]
    chosen_b = _names(f"{where}.benchmarks", entry["benchmarks"], claim.benchmarks, "benchmark")
    chosen = _names(f"{where}.algorithms", entry["algorithms"], names, "algorithm")
    raw_explains = entry.get("explains") or []
    if not isinstance(raw_explains, list) or not raw_explains:
        raise _fail(f"{where}.explains", f"a claim's entry names the comparisons it explains "
                    f"('[BENCHMARK:] A < B'), got {raw_explains!r}")
    explains: list[Direction] = []
    for i, text in enumerate(raw_explains):
        found = _direction(f"{where}.explains[{i}]", text, claim.benchmarks, names, chosen_b,
                           chosen, ())
        for d in found:
            if (d.lower in claim.algorithms) == (d.higher in claim.algorithms):
                raise _fail(f"{where}.explains[{i}]", f"a direction on a pair the claim does "
                            f"not compare: {d.lower!r} and {d.higher!r} are not a claimed "
                            f"algorithm {list(claim.algorithms)} and a baseline "
                            f"{list(claim.baselines)}")
        explains += found
    raw_predictions = entry.get("predictions") or []
    if not isinstance(raw_predictions, list) or not raw_predictions:
        raise _fail(f"{where}.predictions", "an entry that explains pairs names at least one "
                    "measured quantity with the order it predicts")
    campaign = campaigns[claim.campaign]
    predictions = tuple(
        x for i, p in enumerate(raw_predictions)
        for x in _prediction(f"{where}.predictions[{i}]", p, chosen_b, claim.campaign,
                             campaign.algorithms, campaigns)
    )
    return Explanation(
        table="", benchmarks=chosen_b, algorithms=chosen,
        cause=_no_numerals(f"{where}.cause", _text(f"{where}.cause", entry["cause"])),
        evidence=_evidence_list(f"{where}.evidence", entry.get("evidence"), campaigns),
        explains=tuple(explains), predictions=predictions, where=where, claim=claim.id,
    )


def _fit_cause(
    where: str, entry: Any, tables: Mapping[str, TableSpec],
    campaigns: Mapping[str, CampaignSpec],
) -> FitCause:
    entry = _mapping(where, entry)
    _keys(where, entry, ("table", "algorithms", "paper_setting", "source", "cause"),
          ("evidence", "quote"))
    table = _choice(f"{where}.table", entry["table"], list(tables), "table")
    valid = campaigns[tables[table].campaign].algorithms
    if not isinstance(entry["paper_setting"], bool):
        raise _fail(f"{where}.paper_setting", f"expected true or false, got "
                    f"{entry['paper_setting']!r}")
    quote = " ".join(str(entry.get("quote") or "").split())
    if entry["paper_setting"] and not quote:
        raise _fail(f"{where}.quote", "paper_setting: true needs the quoted words of its source "
                    "(a paper section or a code file) that state the setting")
    return FitCause(
        table=table,
        algorithms=_names(f"{where}.algorithms", entry["algorithms"], valid, "algorithm"),
        paper_setting=entry["paper_setting"],
        source=_text(f"{where}.source", entry["source"]),
        cause=_no_numerals(f"{where}.cause", _text(f"{where}.cause", entry["cause"])),
        evidence=_evidence_list(f"{where}.evidence", entry.get("evidence"), campaigns),
        quote=quote,
    )
