"""Lean L-BFGS-B: scipy's compiled ``setulb`` driven without ``minimize``'s per-call machinery.

Every acquisition step runs one joint L-BFGS-B over the stacked restarts, and every tvbo fit one
or two small ones (3-8 log hyperparameters, n = 30 observations). At these sizes the wrapper
around scipy's L-BFGS-B routine costs about as much as the objective: ``minimize`` standardises
the bounds three times (Python loops over the variables), builds a ``ScalarFunction`` (array-API
namespace look-ups, a Hessian wrapper, memoisation objects), builds an ``OptimizeResult`` for the
callback at every iteration and a ``LinearOperator`` for ``hess_inv`` at the end.
:func:`minimize_lbfgsb` drives the same compiled routine (``scipy.optimize._lbfgsb.setulb``)
with the same arguments, and keeps only what decides the numbers:

* the same options and defaults (``maxcor`` 10, ``ftol`` 2.2e-9 as ``factr = ftol / eps``,
  ``gtol`` 1e-5, ``maxfun``/``maxiter`` 15000, ``maxls`` 20), the same bound codes (an infinite
  or NaN bound is no bound), the start clipped into the box;
* the same evaluations: one at the start before the first ``setulb`` call, a new one only when
  the routine asks at a point that differs from the last one evaluated (``ScalarFunction``'s
  memo), the objective handed a private copy of the point, a non-scalar value reduced with
  ``.item()``, and a second call for the gradient when the point holds a NaN (``MemoizeJac``
  compares points with ``==``, so a NaN point never hits its memo);
* the same stopping tests (``maxiter`` checked at each new iterate before ``maxfun``; ``maxfun``
  counts evaluations as ``nfev``) and the same ``status``/``message``.

So the iterates, ``x``, ``fun``, ``nit``, ``nfev``, ``status`` and the objective's calls are bit
for bit those of ``minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=..., options=...)``
(``tests/test_lbfgsb.py`` compares them on many problems); counted work, which follows the
calls, is unchanged. What is left out has no effect on them: callbacks (none of tvbo's call
sites passes one), finite-difference gradients (``fun`` returns its gradient) and ``hess_inv``.

``setulb`` is a private scipy interface. It is used only when the installed scipy is a release
this module was verified against (:data:`VERIFIED_SCIPY`) and ``setulb`` has the expected
signature; otherwise, when every variable is fixed by its bounds, for a start that is not
float64, or with ``TVBO_LBFGSB=scipy`` in the environment, :func:`minimize_lbfgsb` calls
``scipy.optimize.minimize`` itself (same result, scipy's speed). :data:`LEAN` says which is in
use and :data:`FALLBACK_REASON` why not the lean one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy
from scipy.optimize import Bounds, minimize

try:  # the private interface; any change falls back to minimize (see module docstring)
    from scipy.optimize import _lbfgsb
    from scipy.optimize._lbfgsb_py import status_messages, task_messages
except ImportError:  # pragma: no cover - depends on the installed scipy
    _lbfgsb = None
    status_messages = task_messages = {}

__all__ = [
    "ENV",
    "FALLBACK_REASON",
    "LEAN",
    "VERIFIED_SCIPY",
    "LbfgsbResult",
    "bounds_from_pairs",
    "minimize_lbfgsb",
]

#: an objective: ``fun(x) -> (value, gradient)`` (``jac=True`` in scipy's terms)
Objective = Callable[[np.ndarray], tuple[Any, Any]]

#: scipy releases (major, minor) whose ``_minimize_lbfgsb``/``ScalarFunction`` this driver
#: reproduces; checked against 1.17.1 by tests/test_lbfgsb.py
VERIFIED_SCIPY: tuple[tuple[int, int], ...] = ((1, 17),)
#: the environment variable that forces ``scipy.optimize.minimize`` (value ``scipy``) or asks
#: for the lean driver (``lean``, the default)
ENV = "TVBO_LBFGSB"
_SIGNATURE = "setulb(m,x,l,u,nbd,f,g,factr,pgtol,wa,iwa,task,lsave,isave,dsave,maxls,ln_task)"
_EPS = float(np.finfo(float).eps)
_STOP, _NEW_X, _FG, _CONVERGENCE = 5, 1, 3, 4
_MAXFUN_HIT, _MAXITER_HIT = 502, 504


def _check_interface() -> str | None:
    """Why the lean driver cannot be used here (``None``: it can)."""
    choice = os.environ.get(ENV, "lean")
    if choice not in ("lean", "scipy"):
        raise ValueError(f"{ENV} must be 'lean' or 'scipy', got {choice!r}")
    if choice == "scipy":
        return f"{ENV}=scipy"
    if _lbfgsb is None or not status_messages:
        return "scipy.optimize._lbfgsb.setulb or its message tables are missing"
    release = tuple(int(p) for p in scipy.__version__.split(".")[:2] if p.isdigit())
    if release not in VERIFIED_SCIPY:
        return f"scipy {scipy.__version__} is not a verified release {VERIFIED_SCIPY}"
    doc = (getattr(_lbfgsb.setulb, "__doc__", "") or "").splitlines()
    if not doc or doc[0].replace(" ", "") != _SIGNATURE:
        return "scipy.optimize._lbfgsb.setulb has another signature"
    return None


#: why :func:`minimize_lbfgsb` calls ``scipy.optimize.minimize`` (``None``: it does not)
FALLBACK_REASON: str | None = _check_interface()
#: whether the lean driver is in use
LEAN: bool = FALLBACK_REASON is None


@dataclass(frozen=True)
class LbfgsbResult:
    """The fields of scipy's ``OptimizeResult`` for L-BFGS-B that tvbo reads (no ``hess_inv``)."""

    x: np.ndarray
    fun: Any
    jac: np.ndarray | None
    nfev: int
    njev: int
    nit: int
    status: int
    message: str

    @property
    def success(self) -> bool:
        """Converged (``status == 0``), as scipy's ``success``."""
        return self.status == 0


def bounds_from_pairs(pairs: Sequence[tuple[Any, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` arrays from scipy's old-style ``[(lo, hi), ...]`` (``None``: no bound)."""
    lower = np.array([-np.inf if lo is None else float(lo) for lo, _ in pairs])
    upper = np.array([np.inf if hi is None else float(hi) for _, hi in pairs])
    return lower, upper


def minimize_lbfgsb(
    fun: Objective,
    x0: Any,
    lower: Any = -np.inf,
    upper: Any = np.inf,
    *,
    maxcor: int = 10,
    ftol: float = 2.2204460492503131e-09,
    gtol: float = 1e-5,
    maxfun: int = 15000,
    maxiter: int = 15000,
    maxls: int = 20,
) -> LbfgsbResult:
    """Minimise ``fun`` (returning value and gradient) from ``x0`` in the box [lower, upper].

    Same result as ``scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B",
    bounds=Bounds(lower, upper), options=dict(maxcor=..., ...))`` (module docstring).
    ``lower``/``upper`` broadcast to ``x0``'s shape; use :func:`bounds_from_pairs` for a list of
    pairs. Raises ``ValueError`` for a start that is not one-dimensional, bounds of the wrong
    length, an upper bound below its lower bound or ``maxls < 1``.
    """
    x0 = np.atleast_1d(np.asarray(x0))
    if x0.ndim != 1:
        raise ValueError(f"x0 must be one-dimensional, got shape {x0.shape}")
    if x0.dtype.kind in "iu":
        x0 = x0.astype(float)
    n = x0.shape[0]
    lb, ub = _box(lower, n), _box(upper, n)
    if (ub < lb).any():
        raise ValueError("An upper bound is less than the corresponding lower bound.")
    if not maxls > 0:
        raise ValueError("maxls must be positive.")
    options = {"maxcor": maxcor, "ftol": ftol, "gtol": gtol, "maxfun": maxfun,
               "maxiter": maxiter, "maxls": maxls}
    if not LEAN or x0.dtype != np.float64 or (lb == ub).all():
        return _with_minimize(fun, x0, lb, ub, options)
    return _drive(fun, x0, lb, ub, options)


def _box(bound: Any, n: int) -> np.ndarray:
    """One side of the box as a float array of length ``n`` (a scalar applies to all)."""
    side = np.asarray(bound, dtype=float)
    if side.shape == (n,):
        return side
    try:
        return np.broadcast_to(side, (n,))
    except ValueError as exc:
        raise ValueError(f"bounds of shape {side.shape} do not match x0 of length {n}") from exc


def _with_minimize(fun: Objective, x0: np.ndarray, lb: np.ndarray, ub: np.ndarray,
                   options: dict[str, Any]) -> LbfgsbResult:
    """The reference path: ``scipy.optimize.minimize`` itself."""
    res = minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=Bounds(lb, ub), options=options)
    return LbfgsbResult(
        x=res.x, fun=res.fun, jac=res.get("jac"), nfev=int(res.nfev), njev=int(res.get("njev", 0)),
        nit=int(res.get("nit", 0)), status=int(res.get("status", 0 if res.success else 2)),
        message=str(res.message),
    )


def _evaluate(fun: Objective, point: np.ndarray) -> tuple[Any, Any]:
    """Value and gradient at ``point`` as ``ScalarFunction`` + ``MemoizeJac`` obtain them."""
    out = fun(point.copy())  # a private copy: the objective may overwrite its argument
    value, grad = out[0], out[1]
    if not np.isscalar(value):
        try:
            value = np.asarray(value).item()
        except (TypeError, ValueError) as exc:
            raise ValueError("The user-provided objective function must return a scalar "
                             "value.") from exc
    if grad is None or np.isnan(point).any():  # MemoizeJac misses its memo: a second call
        grad = fun(point.copy())[1]
    return value, np.atleast_1d(grad)


def _drive(fun: Objective, x0: np.ndarray, lb: np.ndarray, ub: np.ndarray,
           options: dict[str, Any]) -> LbfgsbResult:
    """The ``setulb`` reverse-communication loop (see the module docstring for what is kept)."""
    lb = np.where(lb > -np.inf, lb, -np.inf)  # a NaN bound is no bound, as in minimize
    ub = np.where(ub < np.inf, ub, np.inf)
    if (lb > ub).any():
        raise ValueError("LBFGSB - one of the lower bounds is greater than an upper bound.")
    m, maxfun, maxiter = options["maxcor"], options["maxfun"], options["maxiter"]
    factr, pgtol = options["ftol"] / _EPS, options["gtol"]
    x = np.clip(x0, lb, ub)
    has_lo, has_hi = ~np.isinf(lb), ~np.isinf(ub)
    low = np.where(has_lo, lb, 0.0)
    up = np.where(has_hi, ub, 0.0)
    nbd = np.where(has_lo, np.where(has_hi, 2, 1), np.where(has_hi, 3, 0)).astype(np.int32)

    evaluated = x.copy()  # the last point evaluated (ScalarFunction's memo)
    f_last, g_last = _evaluate(fun, evaluated)
    nfev = 1
    n = x.shape[0]
    f: Any = np.array(0.0)
    g = np.zeros(n)
    wa = np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m)
    iwa = np.zeros(3 * n, np.int32)
    task = np.zeros(2, np.int32)
    ln_task = np.zeros(2, np.int32)
    lsave = np.zeros(4, np.int32)
    isave = np.zeros(44, np.int32)
    dsave = np.zeros(29)
    setulb, maxls, nit = _lbfgsb.setulb, options["maxls"], 0
    while True:
        setulb(m, x, low, up, nbd, f, g, factr, pgtol, wa, iwa, task, lsave, isave, dsave,
               maxls, ln_task)
        step = task[0]
        if step == _FG:
            if not (x == evaluated).all():  # = np.array_equal: a NaN never matches
                evaluated = x.copy()
                f_last, g_last = _evaluate(fun, evaluated)
                nfev += 1
            # setulb writes into g: hand it a copy, never the objective's own array
            f, g = f_last, g_last.astype(np.float64)
        elif step == _NEW_X:
            nit += 1
            if nit >= maxiter:
                task[0], task[1] = _STOP, _MAXITER_HIT
            elif nfev > maxfun:
                task[0], task[1] = _STOP, _MAXFUN_HIT
        else:
            break
    if task[0] == _CONVERGENCE:
        status = 0
    elif nfev > maxfun or nit >= maxiter:
        status = 1
    else:
        status = 2
    message = f"{status_messages[int(task[0])]}: {task_messages[int(task[1])]}"
    return LbfgsbResult(x=x, fun=f, jac=g, nfev=nfev, njev=nfev, nit=nit, status=status,
                        message=message)
