"""Named algorithms as presets of components, and how options override them.

A preset is a mapping ``{"surrogate": spec, "acquisition": spec, "dataset": spec,
"removal": spec}``; each spec is ``{"kind": ..., **options}``. ``make(name, **options)`` deep-merges
the options over the preset: ``make("bolt", removal="oldest")`` or
``make("bolt", surrogate={"bounds": {"lengthscale_time": [10, 1000]}})``. Shortcut options that
are not a role name go to the part that accepts them (e.g. ``beta=...`` to the acquisition), so a
config can say ``gp-ucb: {beta: 2.0}``.

A new name built from a preset is an ablation: ``make("bolt-fifo", preset="bolt",
removal="oldest")``.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Mapping
from typing import Any

from tvbo.algorithms.components import _REGISTRIES
from tvbo.algorithms.composed import ComposedAlgorithm

ROLES = ("surrogate", "acquisition", "dataset", "removal")

PRESETS: dict[str, dict[str, Any]] = {
    # Srinivas et al. (2012): a spatial GP that keeps everything; the control of every paper
    "gp-ucb": {
        "surrogate": {"kind": "gp", "time_kernel": None},
        "acquisition": {"kind": "ucb"},
        "dataset": {"kind": "keep-all"},
        "removal": None,
    },
    # a spatio-temporal GP that never removes: the ablation of W-DBO/BOLT without cleaning
    "st-gp-ucb": {
        "surrogate": {"kind": "gp", "time_kernel": "problem"},
        "acquisition": {"kind": "ucb"},
        "dataset": {"kind": "keep-all"},
        "removal": None,
    },
}


def register_preset(name: str, preset: Mapping[str, Any]) -> None:
    """Add a named preset (an unknown role is an error)."""
    unknown = sorted(set(preset) - set(ROLES))
    if unknown:
        raise ValueError(f"preset {name!r}: unknown role(s) {unknown}; valid: {list(ROLES)}")
    if name in PRESETS:
        raise ValueError(f"preset {name!r} already exists")
    PRESETS[name] = {role: copy.deepcopy(preset.get(role)) for role in ROLES}


def _as_spec(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return {"kind": value}
    return dict(value)


def _merge(base: dict[str, Any] | None, override: Any) -> dict[str, Any] | None:
    """Override a part spec: a different kind replaces it, the same kind merges options."""
    override = _as_spec(override)
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


def _accepts(role: str, kind: str | None, option: str) -> bool:
    cls = _REGISTRIES[role].get(kind or "")
    return cls is not None and option in inspect.signature(cls.__init__).parameters


def build(name: str, *, preset: str | None = None, **options: Any) -> ComposedAlgorithm:
    """Build algorithm ``name`` from ``preset`` (default: the preset called ``name``)."""
    base_name = preset or name
    if base_name not in PRESETS:
        raise ValueError(f"unknown algorithm {base_name!r}; valid: {', '.join(sorted(PRESETS))}")
    spec = copy.deepcopy(PRESETS[base_name])
    for role in ROLES:
        if role in options:
            spec[role] = _merge(spec[role], options.pop(role))
    for option, value in options.items():
        owners = [r for r in ROLES if spec[r] is not None
                  and _accepts(r, spec[r].get("kind"), option)]
        if not owners:
            raise ValueError(
                f"algorithm {name!r}: unknown option {option!r}; give it inside one of "
                f"{list(ROLES)} or use an option of the preset's parts"
            )
        spec[owners[0]][option] = value
    return ComposedAlgorithm(name=name, preset=base_name, **spec)
