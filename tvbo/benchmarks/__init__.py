"""Benchmarks: time-varying objectives to maximise, with noise, cost, horizon and an f* oracle.

``make(name, **opts)`` builds a registered benchmark; ``names()`` lists them; ``register`` lets
other modules (real-data, WLAN) plug theirs in. Names are lowercase (``shekel``, ``hartmann3``,
``ackley``, ``griewank``, ``eggholder``, ``schwefel``, ``hartmann6``, ``powell``). ``make`` also
accepts spellings that differ only in case, spaces, ``-``, ``_`` and parentheses ("Hartmann-3",
"hartmann_6"), and the papers' table labels "Shekel (4)", "Ackley (4)", "Griewank (6)",
"Eggholder (2)", "Schwefel (4)", "Powell (4)" (the number is d + 1).

Options of the synthetic benchmarks:

``horizon``          float | None, H in seconds (None: the cost table's horizon, 600 s)
``cost_table``       "metronome" ([B] Table 3, default) or "icml" ([A] Table 2)
``cost``             float | None, seconds per evaluation (>= 0; None: from the table)
``noise_var``        float | None, observation noise variance (>= 0; None: from the table)
``oracle_grid_step`` float, time step (s) of the cached f* grid (default 1.0)
``time_range``       [lo, hi] | None, the range t in [0, H] sweeps on the time coordinate
                     (None: the function's own box; see tvbo.benchmarks.synthetic)
``spatial_range``    [lo, hi] | None, the range every spatial coordinate sweeps (None: the
                     published box; a reading option, e.g. Griewank on [-5, 5])

Lazy by design: names come from the static catalogue :mod:`tvbo.registry`, and ``make`` imports
only the module of the benchmark it builds (``shekel`` does not import xarray or pandas for the
real-data benchmarks). ``Benchmark``, ``SyntheticBenchmark`` and the cost tables load on first
access. A name missing from the catalogue but defined by ``SYNTHETIC`` / ``STATIC`` still works
(slow path: every benchmark module is imported); ``tests/test_startup.py`` flags it.

Every benchmark also takes ``noise_protocol``: "table" (default: the noise above) or "wdbo"
(the W-DBO paper's noise, 5 % of the signal variance; :mod:`tvbo.benchmarks.noise`).

The W-DBO paper's ``rastrigin``, ``styblinski-tang`` and ``rosenbrock`` (time-varying, time the
last coordinate; :mod:`tvbo.benchmarks.wdbo_functions`) are synthetic benchmarks with the same
options; their labels "Rastrigin (5)", "Styblinski-Tang (4)", "Rosenbrock (3)" are aliases.
``rosenbrock4`` is a different benchmark: BOKE's static 4-D Rosenbrock.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tvbo import registry
from tvbo._lazy import lazy_exports
from tvbo.benchmarks.tables import DEFAULT_COST_TABLE, resolve_parameters

if TYPE_CHECKING:  # pragma: no cover - loaded lazily at run time
    from tvbo.benchmarks.base import Benchmark
    from tvbo.benchmarks.synthetic import SyntheticBenchmark

__all__ = [
    "COST_TABLES",
    "DEFAULT_COST_TABLE",
    "PAPER_LABELS",
    "NOISE_PROTOCOLS",
    "Benchmark",
    "SyntheticBenchmark",
    "load_all",
    "make",
    "names",
    "normalise_name",
    "register",
    "table_entry",
]

#: lazily re-exported names -> defining module
_LAZY: dict[str, str] = {
    "Benchmark": "tvbo.benchmarks.base",
    "SyntheticBenchmark": "tvbo.benchmarks.synthetic",
    "COST_TABLES": "tvbo.benchmarks.tables",
    "DEFAULT_COST_TABLE": "tvbo.benchmarks.tables",
    "PAPER_LABELS": "tvbo.benchmarks.tables",
    "table_entry": "tvbo.benchmarks.tables",
    "NOISE_PROTOCOLS": "tvbo.benchmarks.noise",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


Factory = Callable[..., "Benchmark"]

#: factories registered at run time (plug-ins, and catalogue entries once resolved)
_REGISTRY: dict[str, Factory] = {}

#: paper labels "Name (d+1)" whose digit is not part of the registry name
_ALIASES: dict[str, str] = {
    "shekel4": "shekel",
    "shekel10": "shekel",
    "ackley4": "ackley",
    "griewank6": "griewank",
    "eggholder2": "eggholder",
    "schwefel4": "schwefel",
    "powell4": "powell",
    # the W-DBO paper's labels (tvbo.benchmarks.wdbo_functions)
    "rastrigin5": "rastrigin",
    "styblinskitang4": "styblinskitang",
    "rosenbrock3": "rosenbrock",
}

SYNTHETIC_OPTIONS: tuple[str, ...] = (
    "horizon",
    "cost_table",
    "cost",
    "noise_var",
    "oracle_grid_step",
    "time_range",
    "spatial_range",
)


def normalise_name(name: str) -> str:
    """Canonical registry key: lowercase without spaces, '-', '_' and parentheses."""
    if not isinstance(name, str):
        raise TypeError(f"benchmark name must be a string, got {name!r}")
    key = re.sub(r"[\s\-_()]", "", name.lower())
    return _ALIASES.get(key, key)


#: normalised key -> the name as registered (what ``names()`` shows and run files record)
_DISPLAY: dict[str, str] = {}
#: normalised key -> catalogue entry
_CATALOGUE: dict[str, registry.Entry] = {normalise_name(e.name): e for e in registry.BENCHMARKS}


def names() -> list[str]:
    """Sorted benchmark names, as registered (e.g. ``temperature-sensors``)."""
    return sorted({e.name for e in registry.BENCHMARKS} | {_DISPLAY[k] for k in _REGISTRY})


def register(name: str, factory: Factory, *, replace: bool = False) -> None:
    """Register ``factory(**opts) -> Benchmark`` under ``name`` (normalised, see module doc)."""
    key = normalise_name(name)
    if not key:
        raise ValueError(f"benchmark name {name!r} is empty after normalisation")
    if not callable(factory):
        raise TypeError(f"factory for {name!r} must be callable, got {factory!r}")
    if (key in _REGISTRY or key in _CATALOGUE) and not replace:
        raise ValueError(f"benchmark {key!r} is already registered (pass replace=True)")
    _REGISTRY[key] = factory
    _DISPLAY[key] = name.strip().lower()


def _factory(item: registry.Entry) -> Factory:
    """The factory of a catalogue entry (imports its module only)."""
    obj = registry.resolve(item)
    if item.kind == "synthetic":
        return _synthetic_factory(obj)
    if item.kind == "static":
        # lazy: start-up cost (tests/test_startup.py): the benchmark modules import numpy
        from tvbo.benchmarks.static import static_factory

        return static_factory(obj)
    return obj


def load_all() -> None:
    """Import every built-in benchmark module; register classes of ``SYNTHETIC`` / ``STATIC``
    that the catalogue does not list yet (so a newly added function works before its line)."""
    for item in registry.BENCHMARKS:
        importlib.import_module(item.module)
    # lazy: start-up cost (tests/test_startup.py): the benchmark modules import numpy
    from tvbo.benchmarks.static import STATIC, static_factory
    from tvbo.benchmarks.synthetic import SYNTHETIC
    from tvbo.benchmarks.wdbo_functions import WDBO_SYNTHETIC

    for table, wrap in ((SYNTHETIC, _synthetic_factory), (WDBO_SYNTHETIC, _synthetic_factory),
                        (STATIC, static_factory)):
        for name, cls in table.items():
            key = normalise_name(name)
            if key not in _CATALOGUE and key not in _REGISTRY:
                register(name, wrap(cls))


def make(name: str, **opts: Any) -> Benchmark:
    """Build benchmark ``name`` with options ``opts`` (see the module docstring).

    ``noise_protocol`` ("table" or "wdbo", :mod:`tvbo.benchmarks.noise`) is accepted by every
    benchmark: it is validated before the benchmark is built and applied after.
    """
    key = normalise_name(name)
    if key not in _REGISTRY and key in _CATALOGUE:
        _REGISTRY[key] = _factory(_CATALOGUE[key])
        _DISPLAY[key] = _CATALOGUE[key].name
    if key not in _REGISTRY:
        load_all()
    if key not in _REGISTRY:
        raise ValueError(f"unknown benchmark {name!r}; valid names: {', '.join(names())}")
    # lazy: start-up cost (tests/test_startup.py): the noise protocols import numpy
    from tvbo.benchmarks.noise import (
        DEFAULT_NOISE_PROTOCOL,
        apply_noise_protocol,
        check_noise_protocol,
    )

    protocol = check_noise_protocol(opts.pop("noise_protocol", DEFAULT_NOISE_PROTOCOL))
    bench = _REGISTRY[key](**opts)
    return apply_noise_protocol(
        bench, protocol, noise_var_given=opts.get("noise_var") is not None
    )


def _synthetic_factory(cls: type[SyntheticBenchmark]) -> Factory:
    def build(**opts: Any) -> Benchmark:
        unknown = sorted(set(opts) - set(SYNTHETIC_OPTIONS))
        if unknown:
            raise TypeError(
                f"unknown option(s) {', '.join(unknown)} for benchmark {cls.name!r}; "
                f"valid options: {', '.join(SYNTHETIC_OPTIONS)}"
            )
        params = resolve_parameters(
            cls.name,
            cost_table=opts.get("cost_table", DEFAULT_COST_TABLE),
            horizon=opts.get("horizon"),
            cost=opts.get("cost"),
            noise_var=opts.get("noise_var"),
        )
        return cls(
            **params,
            oracle_grid_step=opts.get("oracle_grid_step", 1.0),
            time_range=opts.get("time_range"),
            spatial_range=opts.get("spatial_range"),
        )

    build.__doc__ = f"Build the {cls.name!r} benchmark; options: {', '.join(SYNTHETIC_OPTIONS)}."
    return build
