"""Limit the native thread pools (BLAS and OpenMP) of this process for the duration of a block.

Why: a simulation is many small dense problems (GP fits on tens to hundreds of points).
Multi-threaded BLAS slows these down badly when cores are shared: a 20-step ``tvbo.simulate``
took > 200 s on 2 busy cores with OpenBLAS's default threads and 6.3 s with one thread. The
workflow pins threads through ``OPENBLAS_NUM_THREADS`` etc., but environment variables only work
before numpy is first imported, which a Python API cannot rely on, and changing ``os.environ``
when ``tvbo`` is imported would surprise the user's own code. So ``tvbo.simulate(threads=1)``
and ``tvbo run --threads 1`` set the thread count of the native libraries already loaded in the
process, and restore the previous counts afterwards.

How: through threadpoolctl (joblib project, BSD-3-Clause), which finds every loaded OpenBLAS
(including the scipy-openblas builds bundled by numpy and scipy wheels), MKL, BLIS, FlexiBLAS
and OpenMP runtime (libgomp, libomp, libiomp, e.g. loaded by an optional torch) on Linux, macOS
and Windows, and sets their pool sizes. Where it finds no such library, :func:`thread_pools`
is empty and :func:`limit_threads` has nothing to change; ``python -m threadpoolctl -i numpy``
shows what is found.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["blas_threads", "limit_blas_threads", "limit_threads", "thread_pools"]


def thread_pools() -> list[dict[str, Any]]:
    """threadpoolctl's description of every controllable pool loaded now (may be empty).

    One dict per library: ``user_api`` (``blas`` or ``openmp``), ``internal_api``
    (``openblas``, ``mkl``, ``blis``, ``flexiblas``, ``openmp``), ``filepath``, ``version``,
    ``num_threads`` and library-specific fields.
    """
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().info()


def blas_threads() -> dict[str, int]:
    """``{library path: thread count}`` of every controllable BLAS loaded now (may be empty)."""
    return {p["filepath"]: p["num_threads"] for p in thread_pools() if p["user_api"] == "blas"}


@contextmanager
def limit_threads(threads: int | None) -> Iterator[dict[str, int]]:
    """Run the block with every loaded BLAS and OpenMP pool limited to ``threads`` threads.

    ``None`` leaves the thread counts alone. Yields the previous counts ``{library path: n}``;
    restores them on exit (also on error). Thread counts are process-wide (OpenBLAS's own
    threading) or per calling thread (OpenMP), and threadpoolctl lets only one Python thread
    at a time change a process-wide pool: do not run simulations with different ``threads`` in
    threads of one process.
    """
    if threads is None:
        yield {}
        return
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be an integer >= 1 or None, got {threads!r}")
    # load numpy's and scipy's BLAS now, so that both are limited even if imported in the block
    import numpy  # noqa: F401
    import scipy.linalg  # noqa: F401
    from threadpoolctl import ThreadpoolController

    controller = ThreadpoolController()
    previous = {p["filepath"]: p["num_threads"] for p in controller.info()}
    with controller.limit(limits=threads):
        yield previous


#: the name before OpenMP pools were limited too; kept so that callers written against it work
limit_blas_threads = limit_threads
