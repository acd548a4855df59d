"""Lazy re-exports for a package's ``__init__``: a name loads its defining module on first access.

Why: ``tvbo``, ``tvbo.algorithms``, ``tvbo.analysis``, ``tvbo.benchmarks`` and ``tvbo.results``
re-export names whose modules are slow to import (numpy, xarray, pandas, the GP) or that a
process rarely needs (``tvbo --help`` must not load the simulator; writing one run file must not
load the campaign code). Each package keeps its own table ``name -> defining module``; this module
turns the table into the package's ``__getattr__`` (PEP 562) and ``__dir__``, written once.

Nothing is cached in the package's namespace: every access asks the defining module, so a test
that monkeypatches ``tvbo.api.simulate`` is seen through ``tvbo.simulate`` too. Standard library
only, so the root package may use it before numpy is imported (tvbo/blas_kernel.py).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the package named ``package`` that re-exports ``table``.

    ``table`` maps each re-exported name to the dotted module that defines it. A name outside the
    table raises the ``AttributeError`` Python's own lookup would, so ``hasattr`` and
    ``from package import missing`` behave as for any module. ``__dir__`` lists the package's
    loaded names and the lazy ones, so completion in a shell shows both.
    """

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
