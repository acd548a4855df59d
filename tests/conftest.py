"""Test-session setup: pin BLAS to one thread before numpy is imported.

Unpinned OpenBLAS oversubscribes small problems (a 256 x 256 Cholesky becomes ~25x slower when
two processes each use two threads on two cores), which makes the suite slow and noisy.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("MPLBACKEND", "Agg")

# the OpenBLAS kernel of the recorded digests, before a test imports numpy (tvbo/blas_kernel.py)
from tvbo.blas_kernel import pin_kernel  # noqa: E402

pin_kernel()



import copy  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

#: module -> registries a test may fill in-process (a plugin loaded by `cli.main(["--plugin", ..])`)
_REGISTRIES = {
    "tvbo.algorithms.factory": ("_CUSTOM",),
    "tvbo.benchmarks": ("_REGISTRY",),
    "tvbo.plugins": ("_LOADED", "_MODULES", "_entry_points_loaded"),
}


def _state() -> dict[tuple[str, str], object]:
    """A copy of every registry of a module already imported (containers one level deep)."""
    return {(module, name): copy.copy(getattr(sys.modules[module], name))
            if name != "_LOADED" else
            {k: dict(v) for k, v in getattr(sys.modules[module], name).items()}
            for module, names in _REGISTRIES.items() if module in sys.modules for name in names}


@pytest.fixture(autouse=True)
def _plugin_registrations_are_undone():
    """A test that registers a plugin's names does so for itself only: later tests (e.g. `tvbo
    list` against the catalogue) see the built-ins. Containers are restored in place, so every
    module holding a reference sees the restored contents; a module first imported by the test
    is reset to its import-time state (empty registries)."""
    before = _state()
    yield
    for module, name in _state():
        saved = before.get((module, name))
        target = getattr(sys.modules[module], name)
        if isinstance(target, dict):
            restored = saved if saved is not None else (
                {k: {} for k in target} if name == "_LOADED" else {})
            target.clear()
            target.update(restored)
        elif isinstance(target, list):
            target[:] = saved or []
        else:  # a flag
            setattr(sys.modules[module], name, saved if saved is not None else False)


@pytest.fixture(autouse=True)
def _oracle_polish_memos_are_forgotten():
    """A test that patches a benchmark's function cannot leave polishes of the patched function
    in the process-wide memo of the deferred f* refinement (tvbo.benchmarks.oracle.PolishMemo)
    for a later test of the same configuration."""
    yield
    module = sys.modules.get("tvbo.benchmarks.oracle")
    if module is not None:
        module.clear_polish_memos()
