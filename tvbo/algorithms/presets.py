"""Named algorithms as presets of components, and how options override them.

The built-in presets are declared in their paper packages (:mod:`tvbo.algorithms.declare`);
:func:`register_preset` adds one at run time (user code, plugins).

A preset is a mapping ``{"surrogate": spec, "acquisition": spec, "dataset": spec,
"removal": spec}``; each spec is ``{"kind": ..., **options}``. ``make(name, **options)`` merges
the options over the preset. Every option belongs to exactly one part, and each part's options
are its frozen option dataclass (:func:`tvbo.algorithms.components.option_type`, generated from
the part's constructor). The rules, each an error naming the part and its valid options:

1. **A role key** (``surrogate``, ``acquisition``, ``dataset``, ``removal``) replaces that part
   (a kind name, or ``{kind: ...}`` with another kind) or merges options into it (a mapping
   without ``kind``, or with the same kind; nested mappings merge one level deep):
   ``make("bolt", removal="oldest")``,
   ``make("bolt", surrogate={"bounds": {"lengthscale_time": [10, 1000]}})``. An option the part
   does not have is an error naming the part, its valid options and, if another part of the
   preset has that option, that part (a *misplaced* option).
2. **A shortcut** -- any other key -- is an option of the one part of the preset that has it:
   ``gp-ucb: {beta: 2.0}`` sets the UCB acquisition's beta. If no part has it, the error lists
   every part's options; if two parts have it (e.g. ``fit_max_iter`` of the ``gp`` surrogate and
   of R-GP-UCB's ``periodic-reset`` policy) it is *ambiguous* and must be given inside its role:
   ``r-gp-ucb: {dataset: {fit_max_iter: 20}}``. Nothing is routed silently to a first match.

So an ablation stays one config line: ``algorithm_options: {gp-ucb: {beta: 2.0}}`` or
``{w-dbo: {dataset: {max_removals: null}}}``. A new name built from a preset is an ablation:
``make("bolt-fifo", preset="bolt", removal="oldest")``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from tvbo import _catalogue
from tvbo.algorithms.components import option_names
from tvbo.algorithms.composed import ComposedAlgorithm

ROLES = ("surrogate", "acquisition", "dataset", "removal")

#: name -> role -> part spec; the built-in presets are declared in their paper packages
#: (tvbo/algorithms/<paper>/declare.py) and read from the generated catalogue; a copy, so that
#: :func:`register_preset` (user code, plugins) never changes the catalogue
PRESETS: dict[str, dict[str, Any]] = copy.deepcopy(_catalogue.PRESETS)


def register_preset(name: str, preset: Mapping[str, Any]) -> None:
    """Add a named preset (an unknown role is an error)."""
    unknown = sorted(set(preset) - set(ROLES))
    if unknown:
        raise ValueError(f"preset {name!r}: unknown role(s) {unknown}; valid: {list(ROLES)}")
    if name in PRESETS:
        raise ValueError(f"preset {name!r} already exists")
    PRESETS[name] = {role: copy.deepcopy(preset.get(role)) for role in ROLES}


def _as_spec(value: Any, role: str = "part") -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return {"kind": value}
    if not isinstance(value, Mapping):  # e.g. surrogate: 5 (issue 24 item 8)
        raise ValueError(f"{role} must be a part name or a mapping {{kind: NAME, ...options}}, "
                         f"got {value!r}")
    return dict(value)


def _merge(base: dict[str, Any] | None, override: Any,
           role: str = "part") -> dict[str, Any] | None:
    """Override a part spec: a different kind replaces it, the same kind merges options."""
    override = _as_spec(override, role)
    if override is None:
        return None
    if base is None or ("kind" in override and override["kind"] != base.get("kind")):
        return override
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


def _parts(spec: Mapping[str, Any]) -> list[tuple[str, str, list[str]]]:
    """``(role, kind, valid options)`` of every registered part of ``spec``."""
    out = []
    for role in ROLES:
        part = spec.get(role)
        valid = None if part is None else option_names(role, part.get("kind"))
        if valid is not None:
            out.append((role, part["kind"], valid))
    return out


def _describe(parts: list[tuple[str, str, list[str]]]) -> str:
    return "; ".join(f"{role} {kind!r}: {sorted(valid)}" for role, kind, valid in parts)


def _check_roles(name: str, spec: Mapping[str, Any]) -> None:
    """Every option given inside a role must be an option of that role's part (rule 1)."""
    parts = _parts(spec)
    for role, kind, valid in parts:
        unknown = sorted(set(spec[role]) - {"kind"} - set(valid))
        if not unknown:
            continue
        hints = [f"{option!r} is an option of {other} {other_kind!r}"
                 for option in unknown for other, other_kind, other_valid in parts
                 if other != role and option in other_valid]
        raise ValueError(
            f"algorithm {name!r}: {role} {kind!r}: unknown option(s) {unknown}; valid: "
            f"{sorted(valid)}" + (f" ({'; '.join(hints)})" if hints else "")
        )


def build(name: str, *, preset: str | None = None, **options: Any) -> ComposedAlgorithm:
    """Build algorithm ``name`` from ``preset`` (default: the preset called ``name``)."""
    base_name = preset or name
    if base_name not in PRESETS:
        raise ValueError(f"unknown algorithm {base_name!r}; valid: {', '.join(sorted(PRESETS))}")
    spec = copy.deepcopy(PRESETS[base_name])
    for role in ROLES:
        if role in options:
            spec[role] = _merge(spec[role], options.pop(role), role)
    _check_roles(name, spec)
    parts = _parts(spec)
    for option, value in options.items():
        owners = [(role, kind) for role, kind, valid in parts if option in valid]
        if not owners:
            raise ValueError(
                f"algorithm {name!r}: unknown option {option!r}; the options of its parts are "
                f"{_describe(parts)} (or give a role: {', '.join(ROLES)})"
            )
        if len(owners) > 1:
            where = " and ".join(f"{role} {kind!r}" for role, kind in owners)
            raise ValueError(
                f"algorithm {name!r}: option {option!r} is ambiguous: it is an option of "
                f"{where}; give it inside its role, e.g. {owners[0][0]}: {{{option}: ...}}"
            )
        spec[owners[0][0]][option] = value
    return ComposedAlgorithm(name=name, preset=base_name, **spec)
