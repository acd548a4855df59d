"""How an algorithm is named in tables, figure legends and captions: display name + variant.

Several algorithms exist in two forms: the algorithm as its paper describes it, and tvbo's
version with a documented safeguard (``w-dbo`` carries weak log-normal hyperparameter priors and
at most 2 removals per cleaning; ``w-dbo-reference`` is the paper's). A table that prints
``w-dbo`` beside a published "W-DBO" column hides which one it shows, so every label says it:
``W-DBO (paper)`` / ``W-DBO (robust)``.

One place decides the label, :func:`display_name`; tables, the paper comparison, campaign and
paper figures all call it (through :func:`algorithm_labels` for a whole campaign).

The metadata (:data:`ALGORITHM_INFO`: declared with each name in its paper package, see
:mod:`tvbo.algorithms.declare`; extended with :func:`register_display`) gives each registry
name a display name and either

* a fixed ``variant`` (``"paper"`` | ``"robust"`` | None), or
* ``safeguards``: option paths (``"surrogate.prior"``, ``"dataset.max_removals"``,
  ``"fit_cold_start"``) with the values the paper's algorithm has. The variant is then read from
  the algorithm's *resolved* options (``Algorithm.options()``, as recorded in every run file):
  ``"robust"`` if any safeguard differs from the paper's value, else ``"paper"``. So
  ``{my-wdbo: {preset: w-dbo, surrogate: {prior: null}, max_removals: null}}`` is labelled
  ``W-DBO (paper)``, honestly, without anyone declaring it.

A name with no metadata that ends in ``-paper`` or ``-reference`` and whose stem has metadata
(``bolt-paper`` -> ``bolt``) is the stem's display name with variant ``"paper"``: faithful
presets added later are labelled without further code. Any other unknown name is shown as is.

Config entries (``algorithm_options``) may carry two keys that only affect the label and are
removed before the algorithm is built (:func:`split_label_options`): ``label`` (the whole label,
verbatim) and ``variant`` (one of :data:`tvbo.algorithms.labels.VARIANTS`, or null for no
suffix).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tvbo import _catalogue
from tvbo.algorithms.factory import make
from tvbo.algorithms.labels import check_variant, split_label_options

#: how each variant appears in a label, "W-DBO (paper, ML fit)"
VARIANT_LABELS: dict[str, str] = {
    "paper": "paper", "paper-ml": "paper, ML fit", "robust": "robust",
}
#: what each variant means (for captions)
VARIANT_MEANINGS: dict[str, str] = {
    "paper": "the algorithm as its paper describes it (and, where the paper's implementation "
    "is public, fitted as that code fits: `fit_mode`)",
    "paper-ml": "the paper's algorithm, but its hyperparameters fitted by tvbo's "
    "converged L-BFGS-B maximum likelihood instead of its implementation's fit",
    "robust": "tvbo's version with documented safeguards",
}
#: name suffixes that mark a faithful preset without metadata of its own
PAPER_SUFFIXES: tuple[str, ...] = ("-reference", "-paper")

_UNSET = object()


@dataclass(frozen=True)
class AlgorithmInfo:
    """Display metadata of one registry name (see the module docstring)."""

    display: str
    variant: str | None = None
    #: option path -> the values the paper's algorithm has (any other value = a safeguard)
    safeguards: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    #: what the safeguards are, for captions ("log-normal hyperparameter priors; ...")
    robust_note: str = ""
    #: the fit mode of the paper's public implementation (tvbo.gp.fit_modes), read at
    #: ``fit_path`` of the resolved options; a faithful algorithm fitted otherwise is
    #: "paper, ML fit". None: no public implementation, the fit does not enter the label.
    paper_fit: str | None = None
    fit_path: str = "surrogate.fit_mode"


#: every built-in name's labels, declared in its paper package (tvbo.algorithms.declare) and
#: read from the generated catalogue; :func:`register_display` adds a plugin's
ALGORITHM_INFO: dict[str, AlgorithmInfo] = {
    name: AlgorithmInfo(**fields) for name, fields in _catalogue.DISPLAY.items()
}

#: reference policies: floor rows, not competitors. They consult no model, run through the same
#: engine and metrics, and show per benchmark what a useless algorithm scores and how much of the
#: difficulty is time variation; tables render them as floor rows and keep them out of
#: rankings/orderings. Declared with ``floor=`` (tvbo/algorithms/reference/declare.py).
REFERENCE_POLICIES: tuple[str, ...] = tuple(_catalogue.FLOOR_ROWS)
#: what each reference policy is, for captions and the report
REFERENCE_MEANINGS: dict[str, str] = dict(_catalogue.FLOOR_ROWS)


def is_reference_policy(name: str, spec: Mapping[str, Any] | None = None) -> bool:
    """Whether campaign algorithm ``name`` (or the preset its ``spec`` names) is a floor row."""
    base = str((spec or {}).get("preset") or name)
    return base in REFERENCE_POLICIES


def reference_caption(keys: Iterable[str],
                      specs: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """One caption sentence naming the floor rows among ``keys`` and what each queries, or "".

    "Reference policies (floor rows, not competitors; kept out of rankings): Centre = always
    the centre of the domain; ..." -- for a table or figure that shows them.
    """
    specs = specs or {}
    present = [k for k in dict.fromkeys(keys) if is_reference_policy(k, specs.get(k))]
    if not present:
        return ""
    parts = []
    for key in present:
        base = str((specs.get(key) or {}).get("preset") or key)
        parts.append(f"{display_name(key, specs.get(key))} = {REFERENCE_MEANINGS[base]}")
    return ("Reference policies (floor rows, not competitors; kept out of rankings): "
            + "; ".join(parts) + ".")


def register_display(
    name: str,
    display: str,
    *,
    variant: str | None = None,
    safeguards: Mapping[str, Iterable[Any]] | None = None,
    robust_note: str = "",
    replace: bool = False,
) -> None:
    """Give registry name ``name`` its display metadata (next to its ``register_preset``)."""
    check_variant(variant, f"register_display({name!r})")
    if variant is not None and safeguards:
        raise ValueError(
            f"register_display({name!r}): give a fixed variant or safeguards, not both"
        )
    if name in ALGORITHM_INFO and not replace:
        raise ValueError(f"display metadata for {name!r} already exists")
    guards = {path: tuple(values) for path, values in (safeguards or {}).items()}
    ALGORITHM_INFO[name] = AlgorithmInfo(str(display), variant, guards, robust_note)


def algorithm_info(name: str) -> AlgorithmInfo | None:
    """The metadata of ``name``: its own, or for ``<stem>-paper``/``<stem>-reference`` without
    any the stem's display name with variant ``"paper"``; None for names without metadata."""
    if name in ALGORITHM_INFO:
        return ALGORITHM_INFO[name]
    for suffix in PAPER_SUFFIXES:
        stem = name[: -len(suffix)] if name.endswith(suffix) else ""
        if stem in ALGORITHM_INFO:
            base = ALGORITHM_INFO[stem]
            return AlgorithmInfo(base.display, "paper", {}, base.robust_note)
    return None


def _lookup(options: Mapping[str, Any], path: str) -> Any:
    value: Any = options
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _UNSET
        value = value[part]
    return value


def _same(value: Any, faithful: Any) -> bool:
    """Equality that survives the JSON of a run file (tuples become lists)."""
    return json.dumps(value, sort_keys=True, default=str) == json.dumps(
        faithful, sort_keys=True, default=str
    )


class MissingOption(ValueError):
    """A safeguard option is not among an algorithm's recorded options."""


def variant_of(info: AlgorithmInfo, resolved: Mapping[str, Any]) -> str | None:
    """The variant of an algorithm with metadata ``info`` and resolved options ``resolved``.

    A safeguard path missing from ``resolved`` is an error (the metadata names an option the
    algorithm does not record), never a silent "paper".
    """
    if not info.safeguards:
        return info.variant
    robust = False
    for path, faithful in info.safeguards.items():
        value = _lookup(resolved, path)
        if value is _UNSET:
            raise MissingOption(
                f"display metadata of {info.display!r}: option {path!r} is not in the "
                f"algorithm's recorded options ({sorted(resolved)})"
            )
        robust = robust or not any(_same(value, f) for f in faithful)
    if robust:
        return "robust"
    if info.paper_fit is not None:
        fit = _lookup(resolved, info.fit_path)
        if fit is not _UNSET and fit != info.paper_fit:
            return "paper-ml"
    return "paper"


def resolved_options(key: str, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The options ``make(key, **options)`` resolves to (the algorithm is built, not run)."""
    return dict(make(key, **dict(options or {})).options())


def display_name(
    key: str,
    spec: Mapping[str, Any] | None = None,
    *,
    resolved: Mapping[str, Any] | None = None,
) -> str:
    """The label of campaign algorithm ``key``: display name + `` (variant)``, or the user's.

    ``spec`` is the key's config entry (``algorithm_options[key]``: options, ``preset``, and the
    label keys ``label``/``variant``); ``resolved`` the algorithm's resolved options as recorded
    in its run file (``Algorithm.options()``). Without ``resolved``, an algorithm whose variant
    depends on its options is built from ``spec`` to resolve them. Order: ``label`` verbatim;
    else the metadata of the preset (``spec['preset']``, the recorded ``preset``, or ``key``)
    with ``variant`` from the spec, else from the metadata; names without metadata as given.
    """
    options, labels = split_label_options(spec)
    if "label" in labels:
        return str(labels["label"]).strip()
    recorded_preset = (resolved or {}).get("preset")
    base = str(options.get("preset") or recorded_preset or key)
    info = algorithm_info(base)
    if info is None:
        return key
    if "variant" in labels:
        variant = labels["variant"]
    elif info.safeguards:
        try:
            variant = variant_of(info, resolved if resolved is not None
                                 else resolved_options(key, options))
        except MissingOption:
            if resolved is None:
                raise
            # a run file older than the option: the preset as it is built today decides
            variant = variant_of(info, resolved_options(key, options))
    else:
        variant = info.variant
    return f"{info.display} ({VARIANT_LABELS[variant]})" if variant else info.display


def algorithm_labels(
    keys: Iterable[str],
    specs: Mapping[str, Mapping[str, Any]] | None = None,
    resolved: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, str]:
    """``{key: label}`` for a campaign's algorithms, every label unique.

    An ablation (a key built from a preset with other options, ``bolt-fifo: {preset: bolt,
    removal: oldest}``) gets its key appended, ``"BOLT (robust) [bolt-fifo]"``: it is not the
    preset's algorithm, and the name says which config entry made it. Keys that still resolve
    to the same label also get their key, except a single key that is its own preset
    (``bolt``) or one with an explicit ``label``. Two equal explicit ``label``\\ s are an error.
    """
    keys = list(dict.fromkeys(str(k) for k in keys))
    specs = specs or {}
    resolved = resolved or {}
    labels = {k: display_name(k, specs.get(k), resolved=resolved.get(k)) for k in keys}
    explicit = [k for k in keys if "label" in (specs.get(k) or {})]
    for key in keys:
        if key not in explicit and _is_ablation(key, specs, resolved):
            labels[key] = f"{labels[key]} [{key}]"
    seen: dict[str, list[str]] = {}
    for key, label in labels.items():
        seen.setdefault(label, []).append(key)
    for label, owners in seen.items():
        if len(owners) < 2:
            continue
        given = [k for k in owners if k in explicit]
        if len(given) > 1:
            raise ValueError(
                f"algorithms {given} have the same label {label!r}; labels must differ"
            )
        # the one key that is its own preset (``bolt`` beside ``bolt-fifo``) keeps the plain label
        plain = [k for k in owners if k not in given and _base(k, specs, resolved) == k]
        keep = set(given) | (set(plain) if len(plain) == 1 and not given else set())
        for key in owners:
            if key not in keep:
                labels[key] = f"{label} [{key}]"
    return labels


def _normalised(options: Mapping[str, Any]) -> str:
    return json.dumps({k: v for k, v in options.items() if k != "preset"}, sort_keys=True,
                      default=str)


def _is_ablation(key: str, specs: Mapping[str, Mapping[str, Any]],
                 resolved: Mapping[str, Mapping[str, Any]]) -> bool:
    """An alias (``key`` built from another preset) whose options differ from that preset's.

    Such a column is not the preset's algorithm (``bolt-fifo: {preset: bolt, removal:
    oldest}``), so its label carries its key; a pure rename (``{mine: {preset: bolt}}``) does
    not. Compared on the resolved options (recorded, or built from the spec).
    """
    base = _base(key, specs, resolved)
    if base == key or algorithm_info(base) is None:
        return False
    options, _ = split_label_options(specs.get(key))
    mine = resolved.get(key)
    if mine is None:
        mine = resolved_options(key, options)
    return _normalised(mine) != _normalised(resolved_options(base))


def _base(key: str, specs: Mapping[str, Mapping[str, Any]],
          resolved: Mapping[str, Mapping[str, Any]]) -> str:
    """The preset ``key`` is built from (its own name unless the spec or record names one)."""
    return str((specs.get(key) or {}).get("preset") or (resolved.get(key) or {}).get("preset")
               or key)


def variant_meanings(labels: Iterable[str]) -> list[str]:
    """Caption fragments "(paper) = ..." for the variants that appear in ``labels``."""
    labels = list(labels)
    return [f"({text}) = {VARIANT_MEANINGS[key]}" for key, text in VARIANT_LABELS.items()
            if any(f"({text})" in label for label in labels)]


def variant_notes(keys: Iterable[str], labels: Mapping[str, str],
                  resolved: Mapping[str, Mapping[str, Any]] | None = None,
                  specs: Mapping[str, Mapping[str, Any]] | None = None) -> list[str]:
    """One caption sentence per display name shown with a variant: what '(robust)' adds."""
    notes: dict[str, str] = {}
    for key in keys:
        label = labels.get(key, key)
        if "(robust)" not in label:
            continue
        info = algorithm_info(_base(key, specs or {}, resolved or {}))
        if info is not None and info.robust_note:
            notes.setdefault(info.display, f"{info.display} (robust): {info.robust_note}")
    return list(notes.values())


#: display names of the benchmarks (figure panel titles, table rows); as the papers spell them
BENCHMARK_DISPLAY: dict[str, str] = {
    "ackley": "Ackley", "eggholder": "Eggholder", "forrester": "Forrester",
    "goldstein-price": "Goldstein-Price", "griewank": "Griewank", "hartmann3": "Hartmann-3",
    "hartmann3-static": "Hartmann-3 (static)", "hartmann6": "Hartmann-6", "hills": "Hills",
    "moving-bump": "Moving bump", "ozone": "Ozone", "ozone-sensors": "Ozone (sensors)",
    "powell": "Powell", "rastrigin": "Rastrigin", "rosenbrock": "Rosenbrock",
    "rosenbrock4": "Rosenbrock-4", "schwefel": "Schwefel", "shekel": "Shekel",
    "six-hump-camel": "Six-hump camel", "sphere6": "Sphere-6", "sprinkler": "Sprinkler",
    "styblinski-tang": "Styblinski-Tang", "temperature": "Temperature (Intel)",
    "temperature-sensors": "Temperature (Intel sensors)", "wlan": "WLAN",
}


def register_benchmark_display(name: str, display: str, *, replace: bool = False) -> None:
    """Give benchmark ``name`` its display name (plugins call it next to their registration)."""
    if name in BENCHMARK_DISPLAY and not replace:
        raise ValueError(f"display name of benchmark {name!r} already exists")
    BENCHMARK_DISPLAY[name] = str(display)


def benchmark_display_name(name: str) -> str:
    """The display name of benchmark ``name``; an unknown name (a plugin's) is shown as is."""
    return BENCHMARK_DISPLAY.get(str(name), str(name))
