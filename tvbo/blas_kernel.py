"""Pin OpenBLAS's compute kernel, so that a counted run is bit-identical across x86-64 machines.

The OpenBLAS inside numpy's and scipy's wheels is built for many CPUs at once and picks its kernel
(Haswell, SkylakeX, Zen, ...) when it loads, from the CPU it finds. The kernels block and vectorise
differently (AVX2 against AVX-512), so the same Cholesky factor or matrix product can differ in the
last bit from one machine to another. A GP-based run feeds those bits back into its next query, so
one differing bit is enough for a different trajectory: the preset digests recorded with the
Haswell kernel (``tests/testing/test_preset_digests.py``) failed for every GP preset on an AMD EPYC
machine whose OpenBLAS chose another kernel.

OpenBLAS reads the kernel from the environment variable ``OPENBLAS_CORETYPE`` when it loads, so tvbo
sets it to ``Haswell`` before numpy is imported, when

* the user has not set it (any value they set is kept: it is how to choose another kernel), and
* the CPU can run that kernel (x86-64 with AVX2 and FMA, read from ``/proc/cpuinfo``); elsewhere
  (ARM, an older x86, a system without ``/proc``) OpenBLAS keeps its own choice.

``import tvbo`` does this first thing, so every ``tvbo`` command, the workflow's jobs (which inherit
the environment) and the tests get the same kernel. Code that imports numpy before tvbo keeps the
kernel OpenBLAS already chose; :func:`pin_kernel` then returns ``None`` and run files record the
kernel variable as unset. Haswell is the kernel of the machines the digests and the published
campaigns were recorded on; on an AVX-512 machine it costs a little speed on large matrices, which
tvbo's small GP matrices hardly notice.
"""

from __future__ import annotations

import os
import platform
import sys

#: the environment variable OpenBLAS reads its kernel from when it loads
ENV = "OPENBLAS_CORETYPE"
#: the kernel tvbo's digests and campaigns are recorded with
KERNEL = "Haswell"
#: CPU flags the Haswell kernel needs
_NEEDS = frozenset({"avx2", "fma"})


def cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> frozenset[str]:
    """The CPU's feature flags as Linux lists them; empty where they cannot be read."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def can_run_kernel(flags: frozenset[str] | None = None, machine: str | None = None) -> bool:
    """Whether this CPU can run the pinned kernel (x86-64 with AVX2 and FMA)."""
    machine = (machine or platform.machine()).lower()
    if machine not in ("x86_64", "amd64"):
        return False
    return _NEEDS <= (cpu_flags() if flags is None else flags)


def pin_kernel() -> str | None:
    """Set ``OPENBLAS_CORETYPE`` to :data:`KERNEL` where that is possible and not yet chosen.

    Returns the kernel now in force through the variable, or ``None`` when OpenBLAS chooses its own
    (numpy already loaded, or a CPU that cannot run the kernel).
    """
    if ENV in os.environ:
        return os.environ[ENV]
    if "numpy" in sys.modules or not can_run_kernel():
        return None
    os.environ[ENV] = KERNEL
    return KERNEL


def pinned_kernel() -> str:
    """The kernel variable as run files record it: its value, or ``unset``."""
    return os.environ.get(ENV, "unset")


def unpinned_message() -> str | None:
    """Why this process's runs may not match other machines' bit for bit, or ``None``.

    The kernel variable is unset although this CPU could run the pinned kernel: numpy was
    imported before tvbo, so OpenBLAS chose its own kernel. A script that imports numpy (or
    anything that loads it) before tvbo gets runs that are deterministic on this machine only,
    and the run files record the variable as ``unset``; the message says so once, so such runs
    are not mistaken for the campaigns' own."""
    if ENV in os.environ or not can_run_kernel():
        return None
    return (f"tvbo: numpy was imported before tvbo, so OpenBLAS chose its own kernel: these runs "
            f"are deterministic on this machine only, not bit-identical to other machines' "
            f"(their run files record {ENV} as unset). Import tvbo before numpy, or set "
            f"{ENV}={KERNEL} (tvbo/blas_kernel.py)")
