"""The one switch between tvbo's compiled hot loops (numba) and their plain numpy forms.

``TVBO_JIT`` selects, read here and only here, once per process:

* unset: the compiled forms when ``numba`` imports, else the plain forms;
* ``1``: the compiled forms (an error if numba cannot be imported: asked for, not silently off);
* ``0``: the plain forms, the reference (CI runs the suite once this way, ``.ci/run``).

Unset, what a process pays decides: loading numba costs ~0.4 s of CPU per process (importing
it, initialising its code generator, loading the cached machine code), which a whole compiled
Adam fit repays after a few fits, but a compiled LML evaluation saves only ~20-45 us (n = 10 to
120), so a process with a few L-BFGS-B fits would pay more than it saves (``bolt_paper`` slice,
2-run jobs: +0.4-0.9 s CPU each). So the Adam fits load numba at once, and an L-BFGS-B fit's LML
runs compiled when numba is already loaded in the process (after an Adam fit, or with
``TVBO_JIT=1``, which compiles every fit) or once the process has evaluated the plain LML
:data:`LOAD_AFTER` times at n <= :data:`MAX_N`: the break-even rule of renting skis until the
rent paid equals the price (the process has then lost about what loading costs, ~0.4 s at
~25 us an evaluation, and from there on saves), so no process pays much more than twice the
best choice made in hindsight (exactly twice if every evaluation saved 25 us), and one with
many fits (a job of ten R-GP-UCB runs: ~140,000 evaluations) gets nearly all the saving. Same
bits whichever form runs.

Both forms give the same floats, bit for bit: the compiled code performs the plain code's
floating-point operations in the same order and calls the same numpy loops, BLAS and LAPACK
routines (:mod:`tvbo.gp.compiled`; tests/gp/test_compiled.py compares them). So the switch
changes speed, never a result, and a run file does not record it.

numba is imported lazily, by :func:`numba_module`, the first time a fit needs it: ``tvbo list``
or ``tvbo run --help`` never load it (tests/test_startup.py). Compiled functions are cached on
disk (``cache=True``): numba writes its cache beside the package (``__pycache__``) or, where
that is not writable (a system-wide install), in the user's cache directory; ``NUMBA_CACHE_DIR``
moves it. A campaign's jobs are fresh processes, so only the first one compiles.
"""

from __future__ import annotations

import os
from types import ModuleType

__all__ = ["ENV", "LOAD_AFTER", "MAX_N", "JitConfigError", "enabled", "numba_module", "requested",
           "reset", "setting"]

#: the environment variable that selects the compiled (1) or plain (0) forms
ENV = "TVBO_JIT"

#: largest n the compiled forms take (tvbo.gp.compiled): past it the O(n^3) arithmetic dwarfs
#: the interpreter's overhead (the plain form's buffers already make large n fast) and numpy's
#: summation recurses (blocks of 128), which the compiled replica would have to follow
MAX_N = 128

#: plain LML evaluations at n <= MAX_N after which an L-BFGS-B fit loads numba, with TVBO_JIT
#: unset (module docstring): ~0.4 s of loading over ~25 us saved per evaluation
LOAD_AFTER = 16_000

_state: dict[str, object] = {}


class JitConfigError(ValueError):
    """``TVBO_JIT`` has a value other than 0 or 1, or asks for numba where it cannot load."""


def setting() -> str:
    """``TVBO_JIT`` as given: ``"0"``, ``"1"`` or ``""`` (unset); anything else is an error.
    Cheap (imports nothing), so a caller can check it before deciding to load numba."""
    raw = os.environ.get(ENV, "").strip()
    if raw not in ("", "0", "1"):
        raise JitConfigError(f"{ENV} must be 0 (plain numpy) or 1 (compiled with numba), "
                             f"got {raw!r}")
    return raw


def _read() -> tuple[bool, ModuleType | None]:
    raw = setting()
    if raw == "0":
        return False, None
    try:
        import numba  # lazy: only a fit that can use the compiled form pays for numba
    except ImportError as err:
        if raw == "1":
            raise JitConfigError(f"{ENV}=1 asks for the compiled forms, but numba cannot be "
                                 f"imported ({err}); install numba or set {ENV}=0") from None
        return False, None
    return True, numba


def enabled() -> bool:
    """Whether the compiled forms are used (``TVBO_JIT``, read on the first call)."""
    if "on" not in _state:
        _state["on"], _state["numba"] = _read()
    return bool(_state["on"])


def requested() -> bool:
    """Whether ``TVBO_JIT=1`` asks for the compiled forms explicitly (then not having them is an
    error, not a quiet fallback)."""
    return setting() == "1"


def numba_module() -> ModuleType:
    """The numba module (imported by :func:`enabled`); only valid when :func:`enabled`."""
    if not enabled():
        raise RuntimeError(f"the compiled forms are off ({ENV}=0 or numba missing)")
    return _state["numba"]  # type: ignore[return-value]


def reset() -> None:
    """Forget the switch, so the next :func:`enabled` reads ``TVBO_JIT`` again (for tests)."""
    _state.clear()
