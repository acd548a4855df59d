"""Pin the BLAS thread pools of the loaded numpy/scipy for the duration of a block.

Why: a simulation is many small dense problems (GP fits on tens to hundreds of points).
Multi-threaded BLAS slows these down badly when cores are shared: a 20-step ``tvbo.simulate``
took > 200 s on 2 busy cores with OpenBLAS's default threads and 6.3 s with one thread. The
workflow pins threads through ``OPENBLAS_NUM_THREADS`` etc., but environment variables only work
before numpy is first imported, which a Python API cannot rely on, and changing ``os.environ``
when ``tvbo`` is imported would surprise the user's own code. So ``tvbo.simulate(threads=1)``
and ``tvbo run --threads 1`` set the thread count of the BLAS libraries already loaded in the
process, and restore the previous counts afterwards.

How (chosen over a dependency on ``threadpoolctl``, which is not installed in the project's
environment): the shared libraries mapped into the process are read from ``/proc/self/maps``
(Linux), and every OpenBLAS build among them (numpy and scipy wheels each bundle one, with
symbol prefixes such as ``scipy_openblas_..64_``) is driven through its
``openblas_set_num_threads`` / ``openblas_get_num_threads`` via ctypes; MKL is driven through
``MKL_Set_Num_Threads`` / ``MKL_Get_Max_Threads``. Where no such library is found (another OS,
another BLAS), :func:`blas_threads` returns an empty dict and :func:`limit_blas_threads` does
nothing; ``threadpool_info()`` tells which libraries were found.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["BlasLibrary", "blas_libraries", "blas_threads", "limit_blas_threads"]

#: symbol (set, get) pairs, tried in order: plain and 64-bit-integer OpenBLAS builds, the
#: scipy-openblas wheels' prefixed builds, and MKL
_SYMBOLS: tuple[tuple[str, str, str], ...] = (
    ("openblas", "openblas_set_num_threads", "openblas_get_num_threads"),
    ("openblas", "openblas_set_num_threads64_", "openblas_get_num_threads64_"),
    ("openblas", "scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
    ("openblas", "scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
    ("mkl", "MKL_Set_Num_Threads", "MKL_Get_Max_Threads"),
)
_NAME_HINTS = ("openblas", "mkl_rt", "libmkl")

_lock = threading.Lock()


@dataclass(frozen=True)
class BlasLibrary:
    """One loaded BLAS library and the functions that set and read its thread count."""

    path: str
    api: str
    _set: ctypes._CFuncPtr
    _get: ctypes._CFuncPtr

    def get(self) -> int:
        """The library's current maximum number of threads."""
        return int(self._get())

    def set(self, n: int) -> None:
        """Set the library's number of threads."""
        self._set(int(n))


def _mapped_libraries() -> list[str]:
    """Paths of shared libraries mapped into this process whose name looks like a BLAS."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = {line.split()[-1] for line in maps if "/" in line}
    except OSError:  # not Linux
        return []
    return sorted(p for p in paths
                  if any(h in os.path.basename(p).lower() for h in _NAME_HINTS) and ".so" in p)


_cache: dict[str, BlasLibrary | None] = {}


def _open(path: str) -> BlasLibrary | None:
    if path not in _cache:
        found = None
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        except OSError:
            lib = None
        for api, set_name, get_name in _SYMBOLS if lib is not None else ():
            setter, getter = getattr(lib, set_name, None), getattr(lib, get_name, None)
            if setter is not None and getter is not None:
                setter.restype, getter.restype, getter.argtypes = None, ctypes.c_int, []
                setter.argtypes = [ctypes.c_int]
                found = BlasLibrary(path, api, setter, getter)
                break
        _cache[path] = found
    return _cache[path]


def blas_libraries() -> list[BlasLibrary]:
    """The BLAS libraries currently loaded whose thread count can be controlled."""
    return [lib for lib in map(_open, _mapped_libraries()) if lib is not None]


def blas_threads() -> dict[str, int]:
    """``{library path: thread count}`` of every controllable BLAS loaded now (may be empty)."""
    return {lib.path: lib.get() for lib in blas_libraries()}


@contextmanager
def limit_blas_threads(threads: int | None) -> Iterator[dict[str, int]]:
    """Run the block with every loaded BLAS library limited to ``threads`` threads.

    ``None`` leaves the thread counts alone. Yields the previous counts; restores them on exit
    (also on error). Thread counts are process-wide, so concurrent blocks are serialised by a
    lock on entry and exit only; do not run simulations with different ``threads`` in threads of
    one process.
    """
    if threads is None:
        yield {}
        return
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be an integer >= 1 or None, got {threads!r}")
    # load numpy's and scipy's BLAS now, so that both are pinned even if imported in the block
    import numpy  # noqa: F401
    import scipy.linalg  # noqa: F401

    with _lock:
        libraries = blas_libraries()
        previous = {lib.path: lib.get() for lib in libraries}
        for lib in libraries:
            lib.set(threads)
    try:
        yield previous
    finally:
        with _lock:
            for lib in libraries:
                lib.set(previous[lib.path])
