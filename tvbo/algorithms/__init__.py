"""Algorithms: ``names()``, ``make(name, **options)``, ``register``.

Most algorithms are presets of composable parts (:mod:`tvbo.algorithms.presets`); a class that
implements :class:`Algorithm` directly can be registered too.

Lazy by design: the names come from the static catalogue :mod:`tvbo.registry` (generated from
the declarations of the paper packages, :mod:`tvbo.algorithms.declare`), and ``make`` imports
only the modules of the parts its spec uses (e.g. ``bolt``: bolt.parts, wdbo.parts, components),
so a run does not pay for every algorithm's imports and nothing depends on the order in which
modules are imported. The re-exported classes and
functions (``Algorithm``, ``ComposedAlgorithm``, ``register_preset`` ...) load on first access.
"""

from __future__ import annotations

import importlib
import math
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from tvbo import registry
from tvbo._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover - names for type checkers; loaded lazily at run time
    from tvbo.algorithms.base import Algorithm, ProblemInfo, Query
    from tvbo.algorithms.components import build_component, register_component
    from tvbo.algorithms.composed import ComposedAlgorithm
    from tvbo.algorithms.presets import register_preset

#: lazily re-exported names -> defining module
_LAZY: dict[str, str] = {
    "Algorithm": "tvbo.algorithms.base",
    "ProblemInfo": "tvbo.algorithms.base",
    "Query": "tvbo.algorithms.base",
    "build_component": "tvbo.algorithms.components",
    "register_component": "tvbo.algorithms.components",
    "ComposedAlgorithm": "tvbo.algorithms.composed",
    "register_preset": "tvbo.algorithms.presets",
    "PRESETS": "tvbo.algorithms.presets",
    "display_name": "tvbo.algorithms.display",
    "register_display": "tvbo.algorithms.display",
    "split_label_options": "tvbo.algorithms.display",
}

#: names registered at run time with :func:`register` (the built-in ones are in the catalogue)
_CUSTOM: dict[str, Callable[..., Algorithm]] = {}

_ROLES = ("surrogate", "acquisition", "dataset", "removal")


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


def _presets() -> dict[str, dict[str, Any]]:
    from tvbo.algorithms.presets import PRESETS

    return PRESETS


def load_all() -> None:
    """Import every built-in algorithm module (full error messages, consistency tests)."""
    for item in (*registry.ALGORITHMS, *registry.COMPONENTS):
        importlib.import_module(item.module)


def register(name: str, factory: Callable[..., Algorithm]) -> None:
    """Make ``factory(**options)`` available as ``make(name, **options)``."""
    if name in _CUSTOM or registry.entry("algorithms", name) is not None or name in _presets():
        raise ValueError(f"algorithm {name!r} is already registered")
    _CUSTOM[name] = factory


def names() -> list[str]:
    """Algorithm names (the catalogue's, then presets and classes registered at run time)."""
    extra = set(_CUSTOM)
    if "tvbo.algorithms.presets" in sys.modules:  # presets added by user code
        extra |= set(_presets())
    return sorted(set(registry.names("algorithms")) | extra)


def _load_parts(spec: Mapping[str, Any] | None, options: Mapping[str, Any]) -> None:
    """Import the modules of the parts named by a preset spec and its role overrides."""
    kinds = []
    for role in _ROLES:
        for source in (spec or {}).get(role), options.get(role):
            kind = source if isinstance(source, str) else (
                source.get("kind") if isinstance(source, Mapping) else None)
            if kind:
                kinds.append(f"{role}/{kind}")
    for name in kinds:
        item = registry.entry("components", name)
        if item is None:  # unknown or user-registered part: load everything, then let build judge
            load_all()
            return
        importlib.import_module(item.module)


def _non_finite(value: Any, path: str) -> Iterator[tuple[str, float]]:
    if isinstance(value, float) and not math.isfinite(value):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _non_finite(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _non_finite(item, f"{path}[{i}]")


def _check_finite(name: str, options: Mapping[str, Any]) -> None:
    """No option of any part is NaN or infinite (issue 24 item 5): ``beta: .nan`` used to pass
    and die mid-run naming no field, ``beta: 1e999`` (YAML's infinity) to run on with warnings.
    No part has a meaningful non-finite setting (a bound "none" is spelt null), so the check is
    made once here, for every part, after the parts judged their own ranges."""
    for path, value in _non_finite(options, ""):
        raise ValueError(f"algorithm {name!r}: option {path} = {value!r} is not a finite "
                         "number; give a finite value")


def has_expert(algorithm: Algorithm) -> bool:
    """Whether ``algorithm`` asks the EXPERT side queries (SparQ-GP-UCB): a composed algorithm
    through a part of its composition, another class by overriding ``side_queries``. The run
    options ``expert_cost`` / ``expert_noise_var`` mean nothing to any other algorithm."""
    from tvbo.algorithms.base import Algorithm as Base

    if hasattr(algorithm, "side"):
        return getattr(algorithm, "side", None) is not None
    return type(algorithm).side_queries is not Base.side_queries


def make(name: str, **options: Any) -> Algorithm:
    """Build an algorithm by name (:func:`_make`), then refuse any non-finite option that its
    part let through (a part that declares a range names it first, in its own words)."""
    algorithm = _make(name, **options)
    _check_finite(str(name).strip().lower(), options)
    return algorithm


def _make(name: str, **options: Any) -> Algorithm:
    """Build an algorithm by name; ``preset=...`` builds a new name from a preset (ablation).

    Unknown names and options raise ``ValueError`` listing the valid ones. The label keys
    ``label`` and ``variant`` (:mod:`tvbo.algorithms.display`) only name the algorithm in tables
    and figures: they are checked and dropped here, so a config entry can carry them.
    """
    from tvbo.algorithms.display import split_label_options

    options, _ = split_label_options(options)
    key = str(name).strip().lower()
    if key in _CUSTOM:
        factory: Callable[..., Algorithm] = _CUSTOM[key]
    else:
        base = str(options.get("preset") or key)
        item = registry.entry("algorithms", base)
        if item is None and base not in _presets():
            if "preset" in options:
                load_all()  # the message lists every preset
            else:
                raise ValueError(f"unknown algorithm {name!r}; valid: {', '.join(names())}")
        if item is not None and item.kind == "class" and "preset" not in options:
            factory = registry.resolve(item)
        else:
            if item is not None:
                importlib.import_module(item.module)
            from tvbo.algorithms.presets import build

            _load_parts(_presets().get(base), options)
            return build(key, **options)
    try:
        return factory(**options)
    except TypeError as err:
        raise ValueError(f"algorithm {key!r}: {err}") from None


__all__ = [
    "Algorithm",
    "ComposedAlgorithm",
    "ProblemInfo",
    "Query",
    "build_component",
    "display_name",
    "has_expert",
    "load_all",
    "make",
    "names",
    "register",
    "register_component",
    "register_display",
    "register_preset",
]
