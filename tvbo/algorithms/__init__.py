"""Algorithms: ``names()``, ``make(name, **options)``, ``register``.

Most algorithms are presets of composable parts (:mod:`tvbo.algorithms.presets`); a class that
implements :class:`Algorithm` directly can be registered too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvbo.algorithms.base import Algorithm, ProblemInfo, Query
from tvbo.algorithms.components import build_component, register_component
from tvbo.algorithms.composed import ComposedAlgorithm
from tvbo.algorithms.display import display_name, register_display, split_label_options
from tvbo.algorithms.presets import PRESETS, build, register_preset

_CUSTOM: dict[str, Callable[..., Algorithm]] = {}


def register(name: str, factory: Callable[..., Algorithm]) -> None:
    """Make ``factory(**options)`` available as ``make(name, **options)``."""
    if name in _CUSTOM or name in PRESETS:
        raise ValueError(f"algorithm {name!r} is already registered")
    _CUSTOM[name] = factory


def names() -> list[str]:
    """Registered algorithm names (presets and custom classes), sorted."""
    return sorted(set(PRESETS) | set(_CUSTOM))


def make(name: str, **options: Any) -> Algorithm:
    """Build an algorithm by name; ``preset=...`` builds a new name from a preset (ablation).

    Unknown names and options raise ``ValueError`` listing the valid ones. The label keys
    ``label`` and ``variant`` (:mod:`tvbo.algorithms.display`) only name the algorithm in tables
    and figures: they are checked and dropped here, so a config entry can carry them.
    """
    options, _ = split_label_options(options)
    key = str(name).strip().lower()
    if key in _CUSTOM:
        try:
            return _CUSTOM[key](**options)
        except TypeError as err:
            raise ValueError(f"algorithm {key!r}: {err}") from None
    if key not in PRESETS and "preset" not in options:
        raise ValueError(f"unknown algorithm {name!r}; valid: {', '.join(names())}")
    return build(key, **options)


# Modules that register their parts and presets on import (one line each; keep the order).
# --- algorithm modules: begin ---
# isort: off
from tvbo.algorithms import abo  # noqa: E402,F401
from tvbo.algorithms import boke  # noqa: E402,F401
from tvbo.algorithms import bolt  # noqa: E402,F401
from tvbo.algorithms import pegpucb  # noqa: E402,F401
from tvbo.algorithms import resets  # noqa: E402,F401
from tvbo.algorithms import sparq  # noqa: E402,F401
from tvbo.algorithms import tvgp  # noqa: E402,F401
from tvbo.algorithms import wdbo  # noqa: E402,F401
from tvbo.algorithms import weighted  # noqa: E402,F401
# isort: on
# --- algorithm modules: end ---

__all__ = [
    "Algorithm",
    "ComposedAlgorithm",
    "ProblemInfo",
    "Query",
    "build_component",
    "display_name",
    "make",
    "names",
    "register",
    "register_component",
    "register_display",
    "register_preset",
]
