"""The static catalogue of names: benchmarks, algorithms, algorithm parts, compute models, profiles.

Why a static table: listing or validating a name must not import every benchmark and algorithm
module (numpy, scipy.stats, xarray, pandas: seconds of start-up on a busy machine). Each entry
says where the object lives as ``"module:attr"`` (resolved lazily, only when the object is
built), with a one-line description and a citation for ``tvbo list``. This module imports
nothing from tvbo but the generated, standard-library-only :mod:`tvbo._catalogue`, and no
third-party package, so every layer may read it.

The algorithm names and parts are not written here: each is declared once in its paper's package
(``tvbo/algorithms/<paper>/declare.py``, :mod:`tvbo.algorithms.declare`) and
``scripts/write_catalogue.py`` generates :mod:`tvbo._catalogue` from the declarations.

Registration does not depend on import order: ``tvbo.benchmarks.make`` and
``tvbo.algorithms.make`` import exactly the modules an entry names (and, for an algorithm preset,
the modules of the parts its spec uses). ``tests/test_startup.py`` checks that the benchmark,
compute-model and profile tables agree with what the modules define.

Kinds of targets (``Entry.kind``):

``factory``    ``module:function`` returning the benchmark (``function(**options)``)
``synthetic``  ``module:Class`` of a BOLT synthetic benchmark (wrapped by the synthetic factory)
``static``     ``module:Class`` of a BOKE static benchmark (wrapped by ``static_factory``)
``preset``     the paper package that declares the preset (its parts: ``COMPONENTS``)
``class``      ``module:Class`` of an algorithm registered with ``tvbo.algorithms.register``
``component``  ``module:Class`` of an algorithm part (``role/kind`` name)
``compute``    ``module:Class`` of a compute model
``profile``    ``package/relative/path.yaml`` of a built-in hardware profile
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from tvbo import _catalogue

__all__ = [
    "ALGORITHMS",
    "BENCHMARKS",
    "CATALOGUE",
    "COMPONENTS",
    "COMPUTE_MODELS",
    "PENDING_STRATEGIES",
    "PROFILES",
    "Entry",
    "entry",
    "names",
    "resolve",
]

#: short citations of the benchmarks' papers (an algorithm's is in its declaration)
BOLT_A = "Bardou & Thiran, Optimizing through change, ICML [A]"
BOLT_AB = "Bardou & Thiran [A]/[B]"
WDBO = "Bardou, Thiran & Ranieri, This too shall pass, NeurIPS 2024 [W]"
SPARQ = "Mauduit, Berthier & Simonetto, TV-GP bandits with experts"
PEGPUCB = "Ziomek, Adachi & Osborne, TV-GP bandits with unknown prior"
BOKE = "Zhu et al., BO by kernel regression and density (BOKE)"
TVBO = "tvbo (this project)"


@dataclass(frozen=True)
class Entry:
    """One name of the catalogue: where it lives, what it is, where it comes from."""

    name: str
    kind: str
    target: str
    description: str
    citation: str

    @property
    def module(self) -> str:
        """The module to import (the part of ``target`` before ``:``)."""
        return self.target.partition(":")[0]

    @property
    def attr(self) -> str:
        """The attribute of :attr:`module` (empty for presets and profiles)."""
        return self.target.partition(":")[2]


def _table(kind: str, rows: list[tuple[str, str, str, str]]) -> tuple[Entry, ...]:
    return tuple(Entry(name, kind, target, desc, cite) for name, target, desc, cite in rows)


_SYN = "tvbo.benchmarks.synthetic"
_STA = "tvbo.benchmarks.static"

BENCHMARKS: tuple[Entry, ...] = (
    *_table("synthetic", [
        ("shekel", f"{_SYN}:Shekel", "Shekel-10, 3 spatial dims + time on [0, 10]^4", BOLT_AB),
        ("hartmann3", f"{_SYN}:Hartmann3", "Hartmann-3, 2 spatial dims + time", BOLT_AB),
        ("ackley", f"{_SYN}:Ackley", "Ackley, 3 spatial dims + time on [-32, 32]^4", BOLT_AB),
        ("griewank", f"{_SYN}:Griewank", "Griewank, 5 spatial dims + time on [-600, 600]^6",
         BOLT_AB),
        ("eggholder", f"{_SYN}:Eggholder", "Eggholder, 1 spatial dim + time on [-512, 512]^2",
         BOLT_AB),
        ("schwefel", f"{_SYN}:Schwefel", "Schwefel, 3 spatial dims + time on [-500, 500]^4",
         BOLT_AB),
        ("hartmann6", f"{_SYN}:Hartmann6", "Hartmann-6, 5 spatial dims + time", BOLT_AB),
        ("powell", f"{_SYN}:Powell", "Powell, 3 spatial dims + time on [-4, 5]^4", BOLT_AB),
        ("rastrigin", "tvbo.benchmarks.wdbo_functions:Rastrigin",
         "Rastrigin, 4 spatial dims + time on [-4, 4]^5", WDBO),
        ("styblinski-tang", "tvbo.benchmarks.wdbo_functions:StyblinskiTang",
         "Styblinski-Tang, 3 spatial dims + time on [-5, 5]^4", WDBO),
        ("rosenbrock", "tvbo.benchmarks.wdbo_functions:Rosenbrock",
         "Rosenbrock, 2 spatial dims + time on [-1, 1.5]^3 (time ends the chain)", WDBO),
    ]),
    *_table("factory", [
        ("wlan", "tvbo.benchmarks.wlan:make_wlan",
         "WLAN transmit powers of 6 nodes, 27 moving users, Shannon capacity", BOLT_AB),
        ("temperature", "tvbo.benchmarks.temperature:make_temperature",
         "Intel Berkeley lab temperature, one day interpolated in space-time (2-D)", BOLT_AB),
        ("temperature-sensors", "tvbo.benchmarks.temperature:make_temperature_sensors",
         "Intel Berkeley lab: choose one sensor per 10-minute step (discrete)", PEGPUCB),
        ("ozone", "tvbo.benchmarks.ozone:make_ozone",
         "EPA daily ozone maximum, interpolated between sites (2-D, continuous)", SPARQ),
        ("ozone-sensors", "tvbo.benchmarks.ozone:make_ozone_sensors",
         "EPA daily ozone maximum: choose one site per day (discrete)", SPARQ),
        ("hills", "tvbo.benchmarks.hills:make_hills",
         "eleven candidate priors of ten hills, alternating search space", PEGPUCB),
        ("sprinkler", "tvbo.benchmarks.sprinkler:make_sprinkler",
         "8-D garden sprinkler computer model, spray range (time-invariant)", BOKE),
        ("moving-bump", "tvbo.benchmarks.moving_bump:make_moving_bump",
         "1-D bump oscillating over a cosine on [-50, 50], 500 steps", SPARQ),
    ]),
    *_table("static", [
        ("forrester", f"{_STA}:Forrester", "Forrester (1-D), time-invariant", BOKE),
        ("goldstein-price", f"{_STA}:GoldsteinPrice", "Goldstein-Price (2-D), time-invariant",
         BOKE),
        ("six-hump-camel", f"{_STA}:SixHumpCamel", "Six-Hump Camel (2-D), time-invariant", BOKE),
        ("hartmann3-static", f"{_STA}:Hartmann3Static", "Hartmann-3 (3-D), time-invariant",
         BOKE),
        ("rosenbrock4", f"{_STA}:Rosenbrock4", "Rosenbrock (4-D), time-invariant", BOKE),
        ("sphere6", f"{_STA}:Sphere6", "Sphere (6-D), time-invariant", BOKE),
    ]),
)

#: the algorithm names and parts: generated from their declarations in the paper packages
#: (tvbo/algorithms/<paper>/declare.py) by scripts/write_catalogue.py into tvbo._catalogue
ALGORITHMS: tuple[Entry, ...] = tuple(Entry(*row) for row in _catalogue.ALGORITHMS)
#: algorithm parts, named ``role/kind`` (the spec keys of presets and ablations)
COMPONENTS: tuple[Entry, ...] = tuple(Entry(*row) for row in _catalogue.COMPONENTS)

COMPUTE_MODELS: tuple[Entry, ...] = _table("compute", [
    ("counted", "tvbo.sim.compute:CountedModel",
     "deterministic: work counts x a hardware profile's prices", TVBO),
    ("measured", "tvbo.sim.compute:MeasuredModel", "CPU time really spent on this machine",
     TVBO),
    ("polynomial", "tvbo.sim.compute:PolynomialModel",
     "explicit response time R(n) = a0 + a1 n + ...", BOLT_A),
])

PROFILES: tuple[Entry, ...] = _table("profile", [
    ("reference-2core", "tvbo/sim/profiles/reference-2core.yaml",
     "tvbo's own numerics on the project's 2-core reference VM (default)", TVBO),
    ("botorch-i9-laptop", "tvbo/sim/profiles/botorch-i9-laptop.yaml",
     "emulates the papers' BoTorch on an i9 laptop (W-DBO response times)", f"{BOLT_AB}, {WDBO}"),
])

#: the built-in strategies for pending queries (``--pending``; ``tvbo.acquisition.pending``): a
#: run's options check accepts these without importing that module (numpy, scipy.optimize), and
#: reads its registry only for any other name (``tests/test_runspec.py`` checks both agree)
PENDING_STRATEGIES: tuple[str, ...] = (
    "constant-liar-max", "constant-liar-mean", "constant-liar-min", "hallucinate",
    "kriging-believer", "none",
)

#: ``tvbo list`` sections, in order
CATALOGUE: dict[str, tuple[Entry, ...]] = {
    "benchmarks": BENCHMARKS,
    "algorithms": ALGORITHMS,
    "compute": COMPUTE_MODELS,
    "profiles": PROFILES,
}


def names(section: str) -> list[str]:
    """Sorted names of a catalogue section (``benchmarks``, ``algorithms``, ...)."""
    if section == "components":
        return sorted(e.name for e in COMPONENTS)
    if section not in CATALOGUE:
        raise ValueError(f"unknown section {section!r}; valid: {', '.join(CATALOGUE)}")
    return sorted(e.name for e in CATALOGUE[section])


def entry(section: str, name: str) -> Entry | None:
    """The entry called ``name`` in ``section`` (``components``: ``role/kind``), or None."""
    table = COMPONENTS if section == "components" else CATALOGUE.get(section, ())
    for item in table:
        if item.name == name:
            return item
    return None


def resolve(item: Entry) -> Any:
    """Import ``item``'s module and return its attribute (the module itself if it has none)."""
    module = importlib.import_module(item.module)
    return getattr(module, item.attr) if item.attr else module
