"""Algorithms: ``names()``, ``make(name, **options)``, ``register``.

Most algorithms are presets of composable parts (:mod:`tvbo.algorithms.presets`); a class that
implements :class:`Algorithm` directly can be registered too.

Lazy by design: the names come from the static catalogue :mod:`tvbo.registry` (generated from
the declarations of the paper packages, :mod:`tvbo.algorithms.declare`), and ``make`` imports
only the modules of the parts its spec uses (e.g. ``bolt``: bolt.parts, wdbo.parts, components),
so a run does not pay for every algorithm's imports and nothing depends on the order in which
modules are imported (the functions live in :mod:`tvbo.algorithms.factory`). The re-exported
classes and functions (``Algorithm``, ``ComposedAlgorithm``, ``register_preset`` ...) load on
first access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tvbo._lazy import lazy_exports
from tvbo.algorithms.factory import has_expert, load_all, make, names, register

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
    "split_label_options": "tvbo.algorithms.labels",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

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
