"""Plugins: algorithms and benchmarks that live outside tvbo, found without editing tvbo.

A researcher's optimiser (or benchmark) in their own module or package is found by ``tvbo run``,
``tvbo run-many``, ``tvbo list``, ``tvbo check-config``, the Snakemake workflow and the reports.
There are two ways to tell tvbo about it, and both give the same objects the same checks.

**1. Entry points** (an installed package; nothing to pass on any command line). In the plugin
package's ``pyproject.toml``::

    [project.entry-points."tvbo.algorithms"]
    my-opt = "mypkg.tvbo_plugin:MyOptimiser"

    [project.entry-points."tvbo.benchmarks"]
    my-bench = "mypkg.tvbo_plugin:make_my_bench"

The entry point's name is the tvbo name (``tvbo run --algorithm my-opt``); its object is loaded
the first time tvbo needs a name outside its own catalogue (``tvbo list`` always loads them).

**2. A plugin module** named on the command line (``--plugin mypkg.tvbo_plugin``, repeatable) or
in a workflow config (``plugins: [mypkg.tvbo_plugin]``; the workflow passes ``--plugin`` to
every job). The module must be importable (installed, or on ``PYTHONPATH``) and defines one or
both of the module-level mappings ``TVBO_ALGORITHMS = {"my-opt": MyOptimiser}`` and
``TVBO_BENCHMARKS = {"my-bench": make_my_bench}``. Why mappings and not a ``register()`` hook:
they are data, so tvbo can check every entry before it runs anything and report which one is
wrong, and the same objects can be named by entry points without any code of their own.

What the objects must be:

* an **algorithm** is a subclass of :class:`tvbo.algorithms.Algorithm` (built with the run's
  ``algorithm_options`` as keyword arguments) or a function returning an instance of one
  (checked when it is built). Optional class (or function) attributes: ``display_name`` -- the
  label in every table and figure, e.g. ``"W-DBO (public code)"`` (default: the tvbo name), and
  ``citation`` (shown by ``tvbo list``); the first line of the docstring is its description. The
  run file records the plugin (its source and display name) so that reports label it without
  loading the plugin. The work it reports decides its virtual compute time: see
  :class:`~tvbo.algorithms.Algorithm` (``compute_free``) and ``compute: measured`` /
  ``polynomial`` for code that reports none (``tvbo calibrate --from-runs``).
* a **benchmark** is a subclass of :class:`tvbo.benchmarks.Benchmark` or a function returning
  one, called as ``obj(horizon=..., cost_table=..., cost=..., noise_var=..., **options)``
  (``None`` = the benchmark's own default), exactly like a built-in factory.

Names are lowercase letters, digits, ``.``, ``_`` and ``-`` (they become file names of the
workflow). A bad plugin stops tvbo before any run with one line naming it and the cause
(:class:`PluginError`, a ``ValueError``): a module that does not import, a name that a built-in
(or another plugin) already has, an object that is not an Algorithm / Benchmark.

This module imports only the standard library at import time (``tvbo list`` stays lean); the
plugin objects, and tvbo's base classes to check them, are imported when plugins are loaded.
It sits with the entry points (CLI, API, config check): loading a plugin registers its names
with :func:`tvbo.algorithms.register` / :func:`tvbo.benchmarks.register`, so the algorithm and
benchmark layers never import it. The entry points load the installed plugins whenever a name
is not a built-in one (``tvbo run``, :func:`tvbo.simulate`, ``tvbo oracle``, ``tvbo list``,
``check-config``).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tvbo import algorithms, benchmarks, registry
from tvbo.algorithms import factory

__all__ = [
    "ENTRY_POINT_GROUPS",
    "MODULE_ATTRIBUTES",
    "Plugin",
    "PluginError",
    "find",
    "load",
    "loaded_modules",
    "names",
    "record",
]

#: section -> entry-point group
ENTRY_POINT_GROUPS: dict[str, str] = {
    "algorithms": "tvbo.algorithms",
    "benchmarks": "tvbo.benchmarks",
}
#: section -> the mapping a plugin module defines
MODULE_ATTRIBUTES: dict[str, str] = {
    "algorithms": "TVBO_ALGORITHMS",
    "benchmarks": "TVBO_BENCHMARKS",
}
_NOUN = {"algorithms": "algorithm", "benchmarks": "benchmark"}
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*\Z")


class PluginError(ValueError):
    """A plugin that cannot be used; the message is one line naming the plugin and the cause."""


@dataclass(frozen=True)
class Plugin:
    """One name a plugin provides."""

    section: str
    name: str
    obj: Any
    #: where it came from: ``entry point my-opt = mypkg.mod:Cls`` or ``module mypkg.mod``
    source: str
    display: str
    description: str
    citation: str

    def build(self, **options: Any) -> Any:
        """Build the object with ``options``; the result is checked to be of the right kind."""
        built = self.obj(**options)
        base = _base(self.section)
        if not isinstance(built, base):
            raise PluginError(
                f"plugin {self.name!r} ({self.source}): returned {type(built).__name__}, not a "
                f"tvbo {base.__name__}"
            )
        if getattr(built, "name", "") != self.name:
            built.name = self.name  # the run's algorithm/benchmark key: the name it was asked by
        return built


_LOADED: dict[str, dict[str, Plugin]] = {section: {} for section in ENTRY_POINT_GROUPS}
_MODULES: list[str] = []
_entry_points_loaded = False


def _base(section: str) -> type:
    if section == "algorithms":
        # lazy: start-up cost (tests/test_startup.py): the base classes import numpy, and
        # `tvbo list` loads the plugins without checking any
        from tvbo.algorithms.base import Algorithm

        return Algorithm
    from tvbo.benchmarks.base import Benchmark  # lazy: start-up cost, as above

    return Benchmark


def _builtin(section: str, name: str) -> bool:
    """Whether ``name`` is a built-in name of ``section`` (the static catalogue)."""
    if section == "benchmarks":
        normalise_name = benchmarks.normalise_name
        key = normalise_name(name)
        return any(normalise_name(e.name) == key for e in registry.BENCHMARKS)
    return registry.entry("algorithms", name) is not None


def _first_line(obj: Any) -> str:
    doc = (getattr(obj, "__doc__", None) or "").strip()
    return doc.splitlines()[0].strip() if doc else ""


def _check(section: str, name: Any, obj: Any, source: str) -> Plugin:
    """The :class:`Plugin` of one (name, object), or a :class:`PluginError` saying why not."""
    noun = _NOUN[section]
    where = f"plugin {name!r} ({source})"
    if not isinstance(name, str) or not _NAME.match(name):
        raise PluginError(f"{where}: {noun} names are lowercase letters, digits, '.', '_' and "
                          "'-', starting with a letter or digit")
    if _builtin(section, name):
        raise PluginError(f"{where}: {name!r} is already a built-in tvbo {noun}; give the "
                          "plugin another name")
    base = _base(section)
    if isinstance(obj, type):
        if not issubclass(obj, base):
            raise PluginError(f"{where}: {obj.__module__}.{obj.__qualname__} is not a subclass "
                              f"of tvbo's {base.__name__}")
    elif not callable(obj):
        raise PluginError(f"{where}: {obj!r} is neither a {base.__name__} subclass nor a "
                          f"function returning a {base.__name__}")
    display = getattr(obj, "display_name", None) or name
    if not isinstance(display, str):
        raise PluginError(f"{where}: display_name must be a string, got {display!r}")
    citation = getattr(obj, "citation", None)
    return Plugin(section, name, obj, source, display.strip(), _first_line(obj) or "(plugin)",
                  citation if isinstance(citation, str) and citation else f"plugin: {source}")


def _add(plugin: Plugin) -> None:
    table = _LOADED[plugin.section]
    old = table.get(plugin.name)
    if old is not None and old.obj is not plugin.obj:
        raise PluginError(f"plugin {plugin.name!r} ({plugin.source}): the name is already "
                          f"taken by {old.source}")
    if old is None:
        table[plugin.name] = plugin
        # into tvbo's run-time registries: make() and names() then know the plugin's names
        if plugin.section == "algorithms":
            # lazy: start-up cost (tests/test_startup.py does not let `tvbo list` load the
            # display table; only a plugin algorithm needs it)
            from tvbo.algorithms.display import ALGORITHM_INFO, register_display

            algorithms.register(plugin.name, plugin.build)
            if plugin.name not in ALGORITHM_INFO:
                register_display(plugin.name, plugin.display)
        else:
            benchmarks.register(plugin.name, plugin.build)


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    from importlib.metadata import entry_points

    found: list[Plugin] = []
    for section, group in ENTRY_POINT_GROUPS.items():
        for point in entry_points(group=group):
            source = f"entry point {point.name} = {point.value}"
            try:
                obj = point.load()
            except Exception as err:  # noqa: BLE001 - any import failure is the plugin's
                raise PluginError(f"plugin {point.name!r} ({source}): does not import: "
                                  f"{type(err).__name__}: {err}") from None
            found.append(_check(section, point.name, obj, source))
    for plugin in found:
        _add(plugin)
    _entry_points_loaded = True


def _load_module(module_name: str) -> None:
    if not isinstance(module_name, str) or not module_name.strip():
        raise PluginError(f"plugin {module_name!r}: a plugin is a module name, e.g. "
                          "mypkg.tvbo_plugin")
    module_name = module_name.strip()
    if module_name in _MODULES:
        return
    source = f"module {module_name}"
    try:
        module = importlib.import_module(module_name)
    except Exception as err:  # noqa: BLE001 - any import failure is the plugin's
        raise PluginError(f"plugin {module_name!r}: does not import: {type(err).__name__}: "
                          f"{err}") from None
    tables = {s: getattr(module, attr, None) for s, attr in MODULE_ATTRIBUTES.items()}
    if all(t is None for t in tables.values()):
        raise PluginError(f"plugin {module_name!r}: defines neither "
                          f"{' nor '.join(MODULE_ATTRIBUTES.values())} (see tvbo.plugins)")
    found: list[Plugin] = []
    for section, table in tables.items():
        if table is None:
            continue
        if not isinstance(table, Mapping):
            raise PluginError(f"plugin {module_name!r}: {MODULE_ATTRIBUTES[section]} must be a "
                              f"mapping {{name: object}}, got {type(table).__name__}")
        found += [_check(section, name, obj, source) for name, obj in table.items()]
    for plugin in found:
        _add(plugin)
    _MODULES.append(module_name)


def load(modules: Iterable[str] = ()) -> None:
    """Load the installed entry points (once per process) and the plugin ``modules``.

    Raises :class:`PluginError` (one line naming the plugin and the cause) on the first bad
    plugin; nothing of a bad module is registered.
    """
    if isinstance(modules, str):
        modules = [modules]
    _load_entry_points()
    for name in modules:
        _load_module(name)


def loaded_modules() -> list[str]:
    """The plugin modules loaded in this process, in order (passed on to workflow jobs)."""
    return list(_MODULES)


def names(section: str) -> list[str]:
    """Sorted plugin names of ``section`` (entry points loaded first)."""
    load()
    return sorted(_LOADED[section])


def find(section: str, name: str) -> Plugin | None:
    """The plugin called ``name`` in ``section`` (entry points loaded if needed), or None."""
    if name not in _LOADED[section]:
        load()
    return _LOADED[section].get(name)


def record(algorithm_name: str) -> dict[str, str] | None:
    """What a run file records about a plugin algorithm (source, display name), or None."""
    plugin = _LOADED["algorithms"].get(algorithm_name)
    if plugin is None:
        return None
    return {"source": plugin.source, "display": plugin.display}


def _reset_for_tests() -> Callable[[], None]:
    """Forget every loaded plugin (tests); returns a function that restores the state."""
    global _entry_points_loaded
    saved = ({s: dict(t) for s, t in _LOADED.items()}, list(_MODULES), _entry_points_loaded)
    for name in _LOADED["algorithms"]:
        factory._CUSTOM.pop(name, None)
    for name in _LOADED["benchmarks"]:
        benchmarks._REGISTRY.pop(benchmarks.normalise_name(name), None)
        benchmarks._DISPLAY.pop(benchmarks.normalise_name(name), None)
    for table in _LOADED.values():
        table.clear()
    _MODULES.clear()
    _entry_points_loaded = False

    def restore() -> None:
        global _entry_points_loaded
        for name in _LOADED["algorithms"]:
            factory._CUSTOM.pop(name, None)
        for name in _LOADED["benchmarks"]:
            key = benchmarks.normalise_name(name)
            benchmarks._REGISTRY.pop(key, None)
            benchmarks._DISPLAY.pop(key, None)
        for section, table in saved[0].items():
            _LOADED[section].clear()
            _LOADED[section].update(table)
        for plugin in saved[0]["algorithms"].values():
            factory._CUSTOM[plugin.name] = plugin.build
        for plugin in saved[0]["benchmarks"].values():
            key = benchmarks.normalise_name(plugin.name)
            benchmarks._REGISTRY[key], benchmarks._DISPLAY[key] = plugin.build, plugin.name
        _MODULES[:] = saved[1]
        _entry_points_loaded = saved[2]

    return restore
