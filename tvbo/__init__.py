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

from tvbo.version import __version__  # noqa: E402

__all__ = ["__version__", "simulate", "write_oracle"]


def __getattr__(name: str):
    if name == "simulate":
        from tvbo.api import simulate

        return simulate
    if name == "write_oracle":
        from tvbo.api import write_oracle

        return write_oracle
    raise AttributeError(f"module 'tvbo' has no attribute {name!r}")
