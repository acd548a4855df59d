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

Every benchmark also takes ``noise_protocol``: "table" (default: the noise above) or "wdbo"
(the W-DBO paper's noise, 5 % of the signal variance; :mod:`tvbo.benchmarks.noise`).

The W-DBO paper's ``rastrigin``, ``styblinski-tang`` and ``rosenbrock`` (time-varying, time the
last coordinate; :mod:`tvbo.benchmarks.wdbo_functions`) are synthetic benchmarks with the same
options; their labels "Rastrigin (5)", "Styblinski-Tang (4)", "Rosenbrock (3)" are aliases.
``rosenbrock4`` is a different benchmark: BOKE's static 4-D Rosenbrock.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tvbo.benchmarks.base import Benchmark
from tvbo.benchmarks.noise import (
    DEFAULT_NOISE_PROTOCOL,
    NOISE_PROTOCOLS,
    apply_noise_protocol,
    check_noise_protocol,
)
from tvbo.benchmarks.synthetic import SYNTHETIC, SyntheticBenchmark
from tvbo.benchmarks.tables import (
    COST_TABLES,
    DEFAULT_COST_TABLE,
    PAPER_LABELS,
    resolve_parameters,
    table_entry,
)

__all__ = [
    "COST_TABLES",
    "DEFAULT_COST_TABLE",
    "PAPER_LABELS",
    "NOISE_PROTOCOLS",
    "Benchmark",
    "SyntheticBenchmark",
    "make",
    "names",
    "normalise_name",
    "register",
    "table_entry",
]

Factory = Callable[..., Benchmark]

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
)


def normalise_name(name: str) -> str:
    """Canonical registry key: lowercase without spaces, '-', '_' and parentheses."""
    if not isinstance(name, str):
        raise TypeError(f"benchmark name must be a string, got {name!r}")
    key = re.sub(r"[\s\-_()]", "", name.lower())
    return _ALIASES.get(key, key)


#: normalised key -> the name as registered (what ``names()`` shows and run files record)
_DISPLAY: dict[str, str] = {}


def names() -> list[str]:
    """Sorted registered benchmark names, as registered (e.g. ``temperature-sensors``)."""
    return sorted(_DISPLAY[k] for k in _REGISTRY)


def register(name: str, factory: Factory, *, replace: bool = False) -> None:
    """Register ``factory(**opts) -> Benchmark`` under ``name`` (normalised, see module doc)."""
    key = normalise_name(name)
    if not key:
        raise ValueError(f"benchmark name {name!r} is empty after normalisation")
    if not callable(factory):
        raise TypeError(f"factory for {name!r} must be callable, got {factory!r}")
    if key in _REGISTRY and not replace:
        raise ValueError(f"benchmark {key!r} is already registered (pass replace=True)")
    _REGISTRY[key] = factory
    _DISPLAY[key] = name.strip().lower()


def make(name: str, **opts: Any) -> Benchmark:
    """Build benchmark ``name`` with options ``opts`` (see the module docstring).

    ``noise_protocol`` ("table" or "wdbo", :mod:`tvbo.benchmarks.noise`) is accepted by every
    benchmark: it is validated before the benchmark is built and applied after.
    """
    key = normalise_name(name)
    if key not in _REGISTRY:
        raise ValueError(f"unknown benchmark {name!r}; valid names: {', '.join(names())}")
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
        return cls(**params, oracle_grid_step=opts.get("oracle_grid_step", 1.0))

    build.__doc__ = f"Build the {cls.name!r} benchmark; options: {', '.join(SYNTHETIC_OPTIONS)}."
    return build


for _name, _cls in SYNTHETIC.items():
    register(_name, _synthetic_factory(_cls))

# the W-DBO paper's three synthetic benchmarks BOLT does not have (same conventions and options)
from tvbo.benchmarks.wdbo_functions import WDBO_SYNTHETIC  # noqa: E402

for _name, _cls in WDBO_SYNTHETIC.items():
    register(_name, _synthetic_factory(_cls))

# real-world simulators (imported last: they build on the registry's base classes)
from tvbo.benchmarks.wlan import make_wlan  # noqa: E402

register("wlan", make_wlan)

# real-data benchmarks (Intel lab temperature, EPA ozone): see tvbo.benchmarks.realdata
from tvbo.benchmarks.ozone import make_ozone, make_ozone_sensors  # noqa: E402
from tvbo.benchmarks.temperature import make_temperature, make_temperature_sensors  # noqa: E402

register("temperature", make_temperature)
register("temperature-sensors", make_temperature_sensors)
register("ozone", make_ozone)
register("ozone-sensors", make_ozone_sensors)

# toy problem of PE-GP-UCB [P2]: eleven candidate priors of ten hills, alternating search space
from tvbo.benchmarks.hills import make_hills  # noqa: E402

register("hills", make_hills)

# the BOKE paper's static benchmarks (time-invariant; exact optima): see tvbo.benchmarks.static
from tvbo.benchmarks.static import STATIC, static_factory  # noqa: E402

for _name, _cls in STATIC.items():
    register(_name, static_factory(_cls))

# ... and its 8-D garden sprinkler computer model (Siebertz et al.; R CompModels), range maximised
from tvbo.benchmarks.sprinkler import make_sprinkler  # noqa: E402

register("sprinkler", make_sprinkler)

# SparQ-GP-UCB's 1-D synthetic moving bump (Mauduit et al., §4.1)
from tvbo.benchmarks.moving_bump import make_moving_bump  # noqa: E402

register("moving-bump", make_moving_bump)
