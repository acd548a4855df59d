"""The package's version, in a module of its own so that every layer may record it.

Why not only ``tvbo.__version__``: the root package is the public API's lazy entry point (its
``__getattr__`` loads :mod:`tvbo.api`), so a low layer (e.g. the oracle tables of
:mod:`tvbo.benchmarks`) that imported the version from it would import upwards
(:mod:`tvbo.testing.layers`). ``tvbo.__version__`` re-exports this constant.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
