"""The OpenBLAS kernel pin (tvbo/blas_kernel.py): set before numpy loads, never over a user's
choice."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tvbo import blas_kernel

_PROBE = """
import json, os, sys
{before}
import tvbo, numpy
arch = []
try:
    import threadpoolctl
    arch = sorted({{p.get("architecture") for p in threadpoolctl.threadpool_info()
                    if p.get("internal_api") == "openblas"}})
except ImportError:
    pass
print(json.dumps({{"env": os.environ.get("OPENBLAS_CORETYPE"), "arch": arch}}))
"""


def _probe(env_value: str | None = None, before: str = "") -> dict:
    env = {k: v for k, v in os.environ.items() if k != blas_kernel.ENV}
    if env_value is not None:
        env[blas_kernel.ENV] = env_value
    out = subprocess.run([sys.executable, "-c", _PROBE.format(before=before)], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.skipif(not blas_kernel.can_run_kernel(),
                    reason="this CPU cannot run the Haswell kernel")
def test_import_tvbo_pins_the_kernel_openblas_then_uses():
    got = _probe()
    assert got["env"] == blas_kernel.KERNEL
    if got["arch"]:  # threadpoolctl installed: the kernel OpenBLAS actually loaded
        assert got["arch"] == [blas_kernel.KERNEL]


def test_a_kernel_the_user_chose_is_kept():
    assert _probe(env_value="Sandybridge")["env"] == "Sandybridge"


def test_numpy_loaded_first_is_left_alone():
    assert _probe(before="import numpy")["env"] is None


@pytest.mark.parametrize(("flags", "machine", "expected"), [
    ({"avx2", "fma", "sse2"}, "x86_64", True),
    ({"avx2", "fma"}, "AMD64", True),
    ({"avx", "sse2"}, "x86_64", False),       # no AVX2: the Haswell kernel would crash
    ({"avx2", "fma"}, "aarch64", False),      # not x86-64
    (set(), "x86_64", False),                 # flags unreadable
])
def test_the_kernel_is_pinned_only_where_the_cpu_can_run_it(flags, machine, expected):
    assert blas_kernel.can_run_kernel(frozenset(flags), machine) is expected


def test_cpu_flags_of_a_missing_file_are_empty(tmp_path):
    assert blas_kernel.cpu_flags(str(tmp_path / "none")) == frozenset()
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 fma\n")
    assert blas_kernel.cpu_flags(str(info)) == frozenset({"fpu", "avx2", "fma"})


def test_a_run_under_openblas_s_own_kernel_says_so_once(monkeypatch):
    """numpy imported before tvbo: the runs are deterministic on this machine only, and the
    first simulate of the process says so (once), naming the fix."""
    import warnings

    import tvbo
    from tvbo import api

    monkeypatch.delenv(blas_kernel.ENV, raising=False)
    monkeypatch.setattr(blas_kernel, "can_run_kernel", lambda *a, **k: True)
    monkeypatch.setattr(api, "_UNPINNED_CHECKED", False)
    with pytest.warns(RuntimeWarning, match="numpy was imported before tvbo") as caught:
        tvbo.simulate("hartmann3", "random-search", max_iterations=16)
    assert "OPENBLAS_CORETYPE=Haswell" in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tvbo.simulate("hartmann3", "random-search", max_iterations=16)  # once per process
    monkeypatch.setenv(blas_kernel.ENV, "Haswell")
    assert blas_kernel.unpinned_message() is None
    monkeypatch.delenv(blas_kernel.ENV)
    monkeypatch.setattr(blas_kernel, "can_run_kernel", lambda *a, **k: False)
    assert blas_kernel.unpinned_message() is None  # a CPU that cannot pin it: nothing to fix


def test_unpinned_check_runs_once_per_process(monkeypatch):
    """The CPU's flags are read by the first simulate of a process only, also where there is
    nothing to warn about (a CPU that cannot run the pinned kernel)."""
    import tvbo
    from tvbo import api

    calls = []
    monkeypatch.delenv(blas_kernel.ENV, raising=False)
    monkeypatch.setattr(blas_kernel, "can_run_kernel", lambda *a, **k: calls.append(1) or False)
    monkeypatch.setattr(api, "_UNPINNED_CHECKED", False)
    tvbo.simulate("hartmann3", "random-search", max_iterations=16)
    tvbo.simulate("hartmann3", "random-search", max_iterations=16)
    assert len(calls) == 1
