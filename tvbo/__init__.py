"""tvbo: a reproducible laboratory for time-varying Bayesian optimisation on a virtual clock.

Public API::

    tvbo.simulate(benchmark, algorithm, seed=..., compute=..., speed=..., horizon=...)
    tvbo.write_oracle(benchmark, out, ...)   # shared f*(t) table, for simulate(oracle_table=...)
    tvbo.benchmarks.make(name, **options), tvbo.benchmarks.names()
    tvbo.algorithms.make(name, **options), tvbo.algorithms.names()

``simulate`` is imported lazily so that ``tvbo --help`` and ``import tvbo`` stay fast.
"""

from __future__ import annotations

from tvbo.blas_kernel import pin_kernel

# before anything imports numpy: the same OpenBLAS kernel on every x86-64 machine (bit-identical
# counted runs; tvbo/blas_kernel.py says why)
pin_kernel()

from tvbo._lazy import lazy_exports  # noqa: E402
from tvbo.version import __version__  # noqa: E402

#: lazily re-exported names -> defining module
_LAZY: dict[str, str] = {
    "simulate": "tvbo.api",
    "write_oracle": "tvbo.api",
}

__all__ = ["__version__", *_LAZY]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
