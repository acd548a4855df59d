"""Building algorithms by name: ``names()``, ``make(name, **options)``, ``register``.

The package :mod:`tvbo.algorithms` exposes these functions; they live here, below
:mod:`tvbo.algorithms.display`, so that the display metadata can build an algorithm to read its
resolved options without importing its enclosing package (which lazily exports the display
names: the two would import each other). Only the standard library, the static catalogue
:mod:`tvbo.registry` and :mod:`tvbo.algorithms.labels` load with this module (``tvbo list``
imports it); the parts of a preset load when ``make`` builds it.
"""

from __future__ import annotations

import importlib
import math
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from tvbo import registry
from tvbo.algorithms.labels import split_label_options

if TYPE_CHECKING:  # pragma: no cover - names for type checkers; loaded lazily at run time
    from tvbo.algorithms.base import Algorithm

#: names registered at run time with :func:`register` (the built-in ones are in the catalogue)
_CUSTOM: dict[str, Callable[..., Algorithm]] = {}

_ROLES = ("surrogate", "acquisition", "dataset", "removal")


def _presets() -> dict[str, dict[str, Any]]:
    # lazy: start-up cost (tests/test_startup.py): presets -> composed -> base imports numpy
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
    # lazy: start-up cost (tests/test_startup.py): tvbo.algorithms.base imports numpy
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
    ``label`` and ``variant`` (:mod:`tvbo.algorithms.labels`) only name the algorithm in tables
    and figures: they are checked and dropped here, so a config entry can carry them.
    """
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
            # lazy: start-up cost (tests/test_startup.py): presets -> composed imports numpy
            from tvbo.algorithms.presets import build

            _load_parts(_presets().get(base), options)
            return build(key, **options)
    try:
        return factory(**options)
    except TypeError as err:
        raise ValueError(f"algorithm {key!r}: {err}") from None
