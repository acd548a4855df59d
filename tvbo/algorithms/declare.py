"""How an algorithm name is declared: once, in its paper's package (issue 25 items 1-2).

Every built-in algorithm name is one :class:`Declaration` in ``tvbo/algorithms/<paper>/declare.py``
(its preset spec or class, display name and variant, one-line description, citation, safeguards,
and for a floor row what it queries); every part class is one :class:`Part` there. Nothing else
types these facts: ``scripts/write_catalogue.py`` reads the declarations and writes the generated
module :mod:`tvbo._catalogue`, whose static tables :mod:`tvbo.registry` (``tvbo list``, lazy
``make``), :mod:`tvbo.algorithms.presets` (the preset specs) and :mod:`tvbo.algorithms.display`
(labels) read. ``tests/algorithms/test_declare.py`` checks the generated module is current.

Why a generated module and not an import of the declarations at run time: ``tvbo list`` and the
option check must not import numpy (tests/test_startup.py), and a generated table is one file to
read; the declarations themselves import only the standard library, so they stay cheap too.

A newcomer adds an algorithm in one folder: a ``declare.py`` entry (and, for a new part, its
class registered with :func:`tvbo.algorithms.components.register_component`), then runs
``python scripts/write_catalogue.py``. This module also declares the shared parts of
:mod:`tvbo.algorithms.components` (the parts two or more papers use).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["PARTS", "TVBO", "Declaration", "Part", "declaration_modules"]

#: the citation of names that are tvbo's own (ablations, floor rows the papers do not define)
TVBO = "tvbo (this project)"


@dataclass(frozen=True)
class Declaration:
    """One algorithm name: what it builds, how tables label it, where it comes from.

    Exactly one of ``preset`` (role -> part spec, :mod:`tvbo.algorithms.presets`) and ``factory``
    (``"module:Class"`` relative to the declaring package, a registered
    :class:`~tvbo.algorithms.base.Algorithm` class) is given. The display fields are those of
    :class:`tvbo.algorithms.display.AlgorithmInfo`: a fixed ``variant`` or ``safeguards``
    (option path -> the values the paper's algorithm has), ``robust_note`` for captions, and
    ``paper_fit`` (the fit mode of the paper's public implementation). ``floor`` is non-empty
    for a reference policy (a floor row, not a competitor): what it queries, for captions.
    """

    name: str
    display: str
    description: str
    citation: str
    preset: Mapping[str, Any] | None = None
    factory: str = ""
    variant: str | None = None
    safeguards: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    robust_note: str = ""
    paper_fit: str | None = None
    floor: str = ""

    def __post_init__(self) -> None:
        if (self.preset is None) == (not self.factory):
            raise ValueError(f"declaration {self.name!r}: give a preset or a factory, not both "
                             "or neither")
        if self.variant is not None and self.safeguards:
            raise ValueError(f"declaration {self.name!r}: give a fixed variant or safeguards, "
                             "not both")


@dataclass(frozen=True)
class Part:
    """One part class: ``target`` is ``"module:Class"`` relative to the declaring package.

    Its role and kind are the class's own (``kind`` attribute, the role it is registered
    under): the generator reads them, so they are typed once, on the class.
    """

    target: str
    description: str
    citation: str


#: the shared parts (tvbo.algorithms.components): the GP, UCB and the generic dataset rules
PARTS: tuple[Part, ...] = (
    Part("components:GPSurrogate", "exact GP with ML hyperparameters", TVBO),
    Part("components:UCBAcquisition", "GP-UCB", "Srinivas et al. 2012"),
    Part("components:KeepAll", "never removes", TVBO),
    Part("components:OldestFirst", "remove the oldest first", TVBO),
    Part("components:RandomRemoval", "remove uniformly at random", TVBO),
)


def declaration_modules() -> list[ModuleType]:
    """This module (the shared parts), then each paper package's ``declare`` module, by name.

    A package is found by its ``declare.py``, so a new paper needs no entry anywhere else.
    """
    package = Path(__file__).parent
    papers = sorted(info.name for info in pkgutil.iter_modules([str(package)])
                    if info.ispkg and (package / info.name / "declare.py").is_file())
    return [importlib.import_module(__name__),
            *(importlib.import_module(f"tvbo.algorithms.{paper}.declare") for paper in papers)]
