"""numba-compiled forms of the fit's hot loops: the LML and its gradient, and a whole Adam fit.

Why: a ``gpytorch-adam`` fit (the W-DBO public code's, 150 Adam steps) at n = 30 took ~5 ms,
~34 us a step, of which the step's arithmetic (a 30x30 Cholesky, its inverse and a few n^2
sums) is a few us; the rest was Python: a dozen ufunc and LAPACK calls through their wrappers,
the raw parametrisation's chain rule and Adam's update, every step. Here the whole fit runs in
one compiled call (:func:`adam_fit`) and never returns to Python per step; tvbo's own L-BFGS-B
fit calls :func:`lml_and_grad` once per evaluation (the driver stays in Python).

Bit for bit the plain forms. The plain forms (:meth:`tvbo.gp.lml.LMLObjective.lml_and_grad`,
:class:`tvbo.gp.fit_modes.RawObjective`, :func:`tvbo.gp.adam.adam_minimize`) stay the reference;
this module performs their floating-point operations on the same operands in the same order,
and where numpy, BLAS or LAPACK compute, it calls the very same routine with the same
arguments instead of re-implementing it:

* elementwise arithmetic (+, -, *, /, sqrt) is IEEE-exact in any order-preserving code, and
  numba without ``fastmath`` neither reassociates nor contracts to FMA;
* ``exp``, ``log`` and ``logaddexp`` call numpy's own ufunc inner loops (on an AVX-512 CPU numpy
  computes exp/log with its own SIMD code, whose last bits differ from the C library's), found in
  the ufunc's loop table (``PyUFuncObject.functions``, numpy's public C struct) and called with
  the strides numpy's call uses;
* the dot products and matrix-vector products call numpy's bundled OpenBLAS (``cblas_ddot``,
  ``cblas_dgemv`` with the arguments of numpy's ``matmul``/``vdot``), not scipy's copy (another
  build, whose kernels need not agree);
* the Cholesky factor, solve and inverse call scipy's LAPACK (``dpotrf``/``dpotrs``/``dpotri``,
  the routines scipy's wrappers call, via ``scipy.linalg.cython_lapack``), with f2py's clean-up
  of the upper triangle;
* sums over arrays (``np.add.reduce``) repeat numpy's pairwise summation (8 accumulators,
  blocks of 128), starting from the identity 0.0 as numpy's reduction does;
* scalar ``math`` functions (``log``, ``tanh``, ``pow``) are the C library's in both;
* work counts are accumulated in the same order, so the virtual clock sees the same floats.

tests/gp/test_compiled.py compares both forms bit for bit on random inputs (sizes 1..64,
dimensions 1..6, every correlation, failing factorisations); the preset digests pass with
``TVBO_JIT`` on and off. Anything the compiled fit does not cover (a prior, a fixed
hyperparameter, a subclassed counter, a degenerate parameter the plain form raises on) runs
the plain form instead, whole.

The foreign routines are bound by name (``llvmlite.binding.add_symbol``), not by address, so
numba's on-disk cache (``cache=True``) holds and each process binds its own addresses.
"""

from __future__ import annotations

import ctypes
import glob
import math
import os

import numpy as np
from numba import njit, types  # lazy: this module is imported only when tvbo.jit is on

from tvbo import jit
from tvbo.gp.kernels import RBF, Matern12, Matern32, Matern52
from tvbo.gp.linalg import JITTER_CAP, JITTER_START, PIVOT_RTOL
from tvbo.work import NullWorkCounter, WorkCounter

__all__ = [
    "MAX_N", "Workspace", "adam_fit", "add_reduce", "counter_totals", "kernel_codes",
    "lml_and_grad", "ready", "store_totals", "unavailable_reason", "workspace",
]

#: largest n the compiled forms take (declared in tvbo.jit, which decides without numba)
MAX_N = jit.MAX_N

#: correlation class -> code used by the compiled kernels
_KIND = {Matern12: 0, Matern32: 1, Matern52: 2, RBF: 3}
_SQRT3, _SQRT5 = math.sqrt(3.0), math.sqrt(5.0)
_NEG_SQRT3, _NEG_SQRT5 = -_SQRT3, -_SQRT5

# -- the foreign routines, bound by symbol name ---------------------------------------------------
_i, _d, _i32 = types.intp, types.float64, types.int32
_ufunc_loop = types.void(_i, _i, _i, _i)  # (char **args, npy_intp *dims, npy_intp *steps, data)
_np_exp = types.ExternalFunction("tvbo_np_exp", _ufunc_loop)
_np_log = types.ExternalFunction("tvbo_np_log", _ufunc_loop)
_np_logaddexp = types.ExternalFunction("tvbo_np_logaddexp", _ufunc_loop)
_ddot = types.ExternalFunction("tvbo_cblas_ddot", _d(_i, _i, _i, _i, _i))
_dgemv = types.ExternalFunction(
    "tvbo_cblas_dgemv", types.void(_i32, _i32, _i, _i, _d, _i, _i, _i, _i, _d, _i, _i))
_dpotrf = types.ExternalFunction("tvbo_dpotrf", types.void(_i, _i, _i, _i, _i))
_dpotrs = types.ExternalFunction("tvbo_dpotrs", types.void(_i, _i, _i, _i, _i, _i, _i, _i))
_dpotri = types.ExternalFunction("tvbo_dpotri", types.void(_i, _i, _i, _i, _i))

#: offset of ``functions`` and ``data`` in numpy's PyUFuncObject (after PyObject_HEAD and four
#: ints), on a 64-bit CPython without free threading
_UFUNC_FUNCTIONS = 16 + 4 * 4
_state: dict[str, object] = {}


def _ufunc_loop_address(ufunc: np.ufunc, signature: str) -> tuple[int, int]:
    """(inner loop, its data) of ``ufunc`` for ``signature`` from the ufunc's loop table."""
    index = ufunc.types.index(signature)
    base = id(ufunc) + _UFUNC_FUNCTIONS
    functions = ctypes.c_void_p.from_address(base).value
    data = ctypes.c_void_p.from_address(base + 8).value
    loop = ctypes.c_void_p.from_address(functions + 8 * index).value
    return int(loop), int(ctypes.c_void_p.from_address(data + 8 * index).value or 0)


def _capsule_address(capsule: object) -> int:
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return int(get_pointer(capsule, get_name(capsule)))


def _numpy_blas() -> ctypes.CDLL:
    """numpy's own OpenBLAS (the scipy-openblas64 of numpy's wheel), already loaded by numpy."""
    libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    found = sorted(glob.glob(os.path.join(libs, "libscipy_openblas64_*.so*")))
    if not found:
        raise OSError(f"numpy's bundled OpenBLAS not found in {libs} (numpy not from a wheel?)")
    return ctypes.CDLL(found[0])


def _bind() -> None:
    """Bind the symbols once per process and check the ufunc loops against numpy itself."""
    import llvmlite.binding as llvm  # lazy: numba's own dependency, needed only here
    from scipy.linalg import cython_lapack

    loops = {}
    for name, ufunc, signature in (("tvbo_np_exp", np.exp, "d->d"),
                                   ("tvbo_np_log", np.log, "d->d"),
                                   ("tvbo_np_logaddexp", np.logaddexp, "dd->d")):
        loop, data = _ufunc_loop_address(ufunc, signature)
        llvm.add_symbol(name, loop)
        loops[name] = (loop, data)
    blas = _numpy_blas()
    llvm.add_symbol("tvbo_cblas_ddot",
                    ctypes.cast(blas.scipy_cblas_ddot64_, ctypes.c_void_p).value)
    llvm.add_symbol("tvbo_cblas_dgemv",
                    ctypes.cast(blas.scipy_cblas_dgemv64_, ctypes.c_void_p).value)
    capi = cython_lapack.__pyx_capi__
    for routine in ("dpotrf", "dpotrs", "dpotri"):
        llvm.add_symbol(f"tvbo_{routine}", _capsule_address(capi[routine]))
    _state["data"] = np.array([loops["tvbo_np_exp"][1], loops["tvbo_np_log"][1],
                               loops["tvbo_np_logaddexp"][1]], dtype=np.intp)
    _self_check(loops)


def _self_check(loops: dict[str, tuple[int, int]]) -> None:
    """The loops found in the table compute what numpy computes (a wrong table layout would
    not): exp, log and logaddexp of awkward values, compared bit for bit."""
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(500) * 50.0, [0.0, -0.0, 1e-310, 709.9, -745.5,
                                                           np.inf, -np.inf, np.nan]])
    prototype = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.c_void_p)
    for name, ufunc, arity in (("tvbo_np_exp", np.exp, 1), ("tvbo_np_log", np.log, 1),
                               ("tvbo_np_logaddexp", np.logaddexp, 2)):
        inputs = [np.abs(x) if ufunc is np.log else x] + ([x[::-1].copy()] if arity == 2 else [])
        out = np.empty_like(x)
        arrays = [*inputs, out]
        args = (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])
        dims = (ctypes.c_ssize_t * 1)(x.shape[0])
        steps = (ctypes.c_ssize_t * len(arrays))(*([8] * len(arrays)))
        loop, data = loops[name]
        with np.errstate(all="ignore"):
            prototype(loop)(args, dims, steps, data or None)
            expected = ufunc(*inputs)
        if not np.array_equal(out.view(np.int64), expected.view(np.int64)):
            raise RuntimeError(f"numpy's {ufunc.__name__} loop table is not as expected")


def ready() -> bool:
    """Whether the compiled forms can run here (symbols bound and checked; once per process)."""
    if "ok" not in _state:
        try:
            _bind()
            _state["ok"] = True
        except (OSError, AttributeError, KeyError, ValueError, RuntimeError) as err:
            _state["ok"], _state["why"] = False, f"{type(err).__name__}: {err}"
    return bool(_state["ok"])


def unavailable_reason() -> str:
    """Why :func:`ready` is False ('' when it is True)."""
    ready()
    return str(_state.get("why", ""))


def kernel_codes(kernel: object) -> tuple[int, int] | None:
    """(space, time) correlation codes of a built-in separable kernel (time -1 without time);
    None for a correlation the compiled forms do not know (a plugin's subclass)."""
    space = _KIND.get(type(kernel.space))
    time = -1 if kernel.time is None else _KIND.get(type(kernel.time))
    return None if space is None or time is None else (space, time)


def counter_totals(work: WorkCounter) -> np.ndarray | None:
    """The current phase's (call, kernel, flop) totals of ``work`` to continue in compiled
    code (None: a counter subclass whose additions the compiled code cannot repeat)."""
    if type(work) is NullWorkCounter:
        return np.zeros(3)
    if type(work) is not WorkCounter:
        return None
    counts = work.phase_counts()
    return np.array([counts["call"], counts["kernel"], counts["flop"]])


def store_totals(work: WorkCounter, totals: np.ndarray) -> None:
    """Write back the totals :func:`counter_totals` handed to compiled code."""
    if type(work) is WorkCounter:
        counts = work.phase_counts()
        counts["call"], counts["kernel"], counts["flop"] = (float(v) for v in totals)


# -- numpy's routines, as numpy calls them ---------------------------------------------------------
@njit(cache=True, error_model="numpy")
def _unary(which: int, src: int, src_step: int, dst: int, count: int, call: np.ndarray,
           data: np.ndarray) -> None:
    """numpy's exp (0) or log (1) loop over ``count`` doubles (output contiguous)."""
    call[0] = src
    call[1] = dst
    call[3] = count
    call[4] = src_step
    call[5] = 8
    if which == 0:
        _np_exp(call[0:].ctypes.data, call[3:].ctypes.data, call[4:].ctypes.data, data[0])
    else:
        _np_log(call[0:].ctypes.data, call[3:].ctypes.data, call[4:].ctypes.data, data[1])


@njit(cache=True, error_model="numpy")
def _softplus(r: float, call: np.ndarray, scalars: np.ndarray, data: np.ndarray) -> float:
    """``np.logaddexp(0.0, r)`` through numpy's loop (tvbo.gp.fit_modes.softplus)."""
    scalars[0] = 0.0
    scalars[1] = r
    call[0] = scalars[0:].ctypes.data
    call[1] = scalars[1:].ctypes.data
    call[2] = scalars[2:].ctypes.data
    call[3] = 1
    call[4] = 8
    call[5] = 8
    call[6] = 8
    _np_logaddexp(call[0:].ctypes.data, call[3:].ctypes.data, call[4:].ctypes.data, data[2])
    return scalars[2]


@njit(cache=True, error_model="numpy")
def _dot(n: int, x: int, y: int) -> float:
    """numpy's DOUBLE_dot (``a @ b`` of vectors, ``np.vdot``): 0.0 + cblas_ddot."""
    total = 0.0
    total += _ddot(n, x, 1, y, 1)
    return total


@njit(cache=True, error_model="numpy")
def _quad(n: int, M: np.ndarray, alpha: np.ndarray, tmp: np.ndarray) -> float:
    """``float(alpha @ (M @ alpha))`` for a C-ordered n x n ``M``, as numpy's matmul runs it:
    cblas_dgemv (column-major, transposed) for n > 1, DOUBLE_dot for the 1 x 1 case."""
    if n == 1:
        tmp[0] = _dot(1, M.ctypes.data, alpha.ctypes.data)
    else:
        _dgemv(102, 112, n, n, 1.0, M.ctypes.data, n, alpha.ctypes.data, 1, 0.0,
               tmp.ctypes.data, 1)
    return _dot(n, alpha.ctypes.data, tmp.ctypes.data)


@njit(cache=True, error_model="numpy")
def _pairwise(a: np.ndarray, start: int, n: int, stride: int) -> float:
    """numpy's pairwise_sum of ``a[start::stride][:n]`` (n <= 128, its one-block case)."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[start + i * stride]
        return res
    r0 = a[start]
    r1 = a[start + stride]
    r2 = a[start + 2 * stride]
    r3 = a[start + 3 * stride]
    r4 = a[start + 4 * stride]
    r5 = a[start + 5 * stride]
    r6 = a[start + 6 * stride]
    r7 = a[start + 7 * stride]
    i = 8
    end = n - (n % 8)
    while i < end:
        p = start + i * stride
        r0 += a[p]
        r1 += a[p + stride]
        r2 += a[p + 2 * stride]
        r3 += a[p + 3 * stride]
        r4 += a[p + 4 * stride]
        r5 += a[p + 5 * stride]
        r6 += a[p + 6 * stride]
        r7 += a[p + 7 * stride]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[start + i * stride]
        i += 1
    return res


@njit(cache=True, error_model="numpy")
def add_reduce(a: np.ndarray, start: int, n: int, stride: int) -> float:
    """``np.add.reduce`` of a strided 1-D float64 view: the identity 0.0 plus the pairwise sum."""
    total = 0.0
    total += _pairwise(a, start, n, stride)
    return total


# -- the correlations (tvbo.gp.kernels), same operations in the same order -------------------------
@njit(cache=True, error_model="numpy")
def _correlation(kind: int, r: np.ndarray, value: np.ndarray, deriv: np.ndarray,
                 e: np.ndarray, s: np.ndarray, call: np.ndarray, data: np.ndarray) -> None:
    """``value_and_d_dr_into`` of Matern12 (0), Matern32 (1), Matern52 (2) or RBF (3); flat
    arrays of the same length."""
    m = r.shape[0]
    if kind == 0:  # e = exp(-r); (e, -e)
        for i in range(m):
            e[i] = -r[i]
        _unary(0, e.ctypes.data, 8, value.ctypes.data, m, call, data)
        for i in range(m):
            deriv[i] = -value[i]
    elif kind == 1:
        for i in range(m):
            e[i] = _NEG_SQRT3 * r[i]
        _unary(0, e.ctypes.data, 8, e.ctypes.data, m, call, data)
        for i in range(m):
            value[i] = (_SQRT3 * r[i] + 1.0) * e[i]
            deriv[i] = (-3.0 * r[i]) * e[i]
    elif kind == 2:
        for i in range(m):
            e[i] = _NEG_SQRT5 * r[i]
        _unary(0, e.ctypes.data, 8, e.ctypes.data, m, call, data)
        for i in range(m):
            si = _SQRT5 * r[i] + 1.0
            s[i] = si
            value[i] = ((5.0 / 3.0) * r[i] * r[i] + si) * e[i]
            deriv[i] = (-(5.0 / 3.0)) * r[i] * si * e[i]
    else:  # e = exp(-0.5 r r); (e, -r e)
        for i in range(m):
            e[i] = -0.5 * r[i] * r[i]
        _unary(0, e.ctypes.data, 8, value.ctypes.data, m, call, data)
        for i in range(m):
            deriv[i] = -r[i] * value[i]


# -- LAPACK, as scipy's wrappers call it -----------------------------------------------------------
@njit(cache=True, error_model="numpy")
def _square_args(n: int, ints: np.ndarray) -> None:
    """``ints`` = (n, lda = n, info = 0, uplo = 'L'): the integer arguments of dpotrf/dpotri."""
    ints[0] = n
    ints[1] = n
    ints[2] = 0
    ints[3] = 76  # 'L'


@njit(cache=True, error_model="numpy")
def _potrf(n: int, A: np.ndarray, ints: np.ndarray) -> int:
    """dpotrf('L') of the column-major ``A`` in place, then f2py's ``clean``: the strict upper
    triangle zeroed (tvbo.gp.linalg.cho_factor). Returns info."""
    _square_args(n, ints)
    _dpotrf(ints[3:].ctypes.data, ints[0:].ctypes.data, A.ctypes.data, ints[1:].ctypes.data,
            ints[2:].ctypes.data)
    info = ints[2]
    for j in range(1, n):
        for i in range(j):
            A[i + j * n] = 0.0
    return info


@njit(cache=True, error_model="numpy")
def _potrs(n: int, A: np.ndarray, b: np.ndarray, ints: np.ndarray) -> None:
    """dpotrs('L') with one right-hand side: ``b`` overwritten by Delta^{-1} b from the factor
    in ``A`` (tvbo.gp.linalg.cho_solve, on a copy the caller made)."""
    ints[0] = n
    ints[1] = 1
    ints[3] = 76  # 'L'
    _dpotrs(ints[3:].ctypes.data, ints[0:].ctypes.data, ints[1:].ctypes.data, A.ctypes.data,
            ints[0:].ctypes.data, b.ctypes.data, ints[0:].ctypes.data, ints[2:].ctypes.data)


@njit(cache=True, error_model="numpy")
def _potri(n: int, A: np.ndarray, ints: np.ndarray) -> int:
    """dpotri('L') in place: the lower triangle of Delta^{-1} from the factor in ``A``
    (tvbo.gp.linalg.cho_inverse). Returns info."""
    _square_args(n, ints)
    _dpotri(ints[3:].ctypes.data, ints[0:].ctypes.data, A.ctypes.data, ints[1:].ctypes.data,
            ints[2:].ctypes.data)
    return ints[2]


@njit(cache=True, error_model="numpy")
def _pivots_ok(n: int, L: np.ndarray, scale: float) -> bool:
    """tvbo.gp.linalg.pivots_ok: min over the diagonal (NaN wins, as np.minimum), squared."""
    lo = L[0]
    for i in range(1, n):
        v = L[i * (n + 1)]
        if v < lo or v != v:
            lo = v
        if lo != lo:
            break
    return math.pow(lo, 2.0) > PIVOT_RTOL * scale  # Python's float ** 2 is libm's pow


# -- the LML and its gradient: tvbo.gp.lml.LMLObjective.lml_and_grad ----------------------------
@njit(cache=True, error_model="numpy")
def _lml_and_grad(Ds: np.ndarray, Dt: np.ndarray, kinds: np.ndarray, y: np.ndarray,
                  sv: float, ls: float, lt: float, nv: float, fit_noise: bool,
                  W: np.ndarray, V: np.ndarray, ints: np.ndarray, call: np.ndarray,
                  data: np.ndarray, consts: np.ndarray, counts: np.ndarray,
                  out: np.ndarray) -> None:
    """One evaluation. ``Ds``/``Dt`` flat n*n distances (``Dt`` empty: no time); ``W`` (11, n*n)
    and ``V`` (4, n) workspaces; ``consts`` = (n^3/3, gradient flops, n/2 log 2 pi);
    ``counts`` the counter's (call, kernel, flop), advanced as the plain form adds to them.
    ``out`` = (status 1 ok / 0 failed, lml, jitter events added, g_0, ..., g_3); on success
    ``V[0]`` holds alpha."""
    n = y.shape[0]
    nn = n * n
    has_time = Dt.shape[0] > 0
    counts[0] += 1.0
    counts[1] += float(nn)
    counts[2] += consts[0]
    rs, cs, dcs, rt, ct, dct, Kf, Ms, A, e, s = (W[0], W[1], W[2], W[3], W[4], W[5], W[6],
                                                W[7], W[8], W[9], W[10])
    alpha, tmp, logs = V[0], V[1], V[2]
    for i in range(nn):
        rs[i] = Ds[i] / ls
    _correlation(kinds[0], rs, cs, dcs, e, s, call, data)
    for i in range(nn):
        dcs[i] = dcs[i] * rs[i]
    if has_time:
        for i in range(nn):
            rt[i] = Dt[i] / lt
        _correlation(kinds[1], rt, ct, dct, e, s, call, data)
        for i in range(nn):
            dct[i] = dct[i] * rt[i]
            Kf[i] = cs[i] * ct[i] * sv
    else:
        for i in range(nn):
            Kf[i] = cs[i] * sv
    # Delta in column-major order, as np.copyto into the Fortran buffer
    for i in range(n):
        for j in range(n):
            A[i + j * n] = Kf[i * n + j]
    for i in range(n):
        A[i * (n + 1)] = A[i * (n + 1)] + nv
    scale = sv + nv
    info = _potrf(n, A, ints)
    events = 0
    if not (info == 0 and _pivots_ok(n, A, scale)):
        # tvbo.gp.linalg.cholesky_with_jitter from JITTER_START * scale (C-ordered A + jitter I,
        # copied to column-major by f2py)
        jitter = JITTER_START * scale
        escalations = 0
        cap = JITTER_CAP * scale * (1.0 + 1e-9)
        while True:
            for i in range(n):
                for j in range(n):
                    base = Kf[i * n + j] + nv if i == j else Kf[i * n + j]
                    A[i + j * n] = base + jitter * (1.0 if i == j else 0.0)
            info = _potrf(n, A, ints)
            counts[2] += consts[0]
            if info == 0 and _pivots_ok(n, A, scale):
                break
            jitter = jitter * 10.0
            if jitter > cap:
                out[0] = 0.0
                out[1] = -np.inf
                out[2] = escalations + 1
                return
            escalations += 1
        events = escalations + 1
    # alpha = dpotrs(L, y) on a copy of y
    for i in range(n):
        alpha[i] = y[i]
    _potrs(n, A, alpha, ints)
    # log det: np.log of the strided diagonal into a fresh vector, then its sum
    _unary(1, A.ctypes.data, 8 * (n + 1), logs.ctypes.data, n, call, data)
    log_det = add_reduce(logs, 0, n, 1)
    if _potri(n, A, ints) != 0:
        out[0] = 2.0  # failed after alpha was computed
        out[1] = -np.inf
        out[2] = events
        return
    tr_p = add_reduce(A, 0, n, n + 1)
    counts[2] += consts[1]
    lml = -0.5 * _dot(n, y.ctypes.data, alpha.ctypes.data) - log_det - consts[2]
    out[3] = 0.5 * (_quad(n, Kf, alpha, tmp)
                    - (2.0 * _dot(nn, A.ctypes.data, Kf.ctypes.data) - sv * tr_p))
    if has_time:
        for i in range(nn):
            Ms[i] = dcs[i] * ct[i]
        M = Ms
    else:
        M = dcs
    out[4] = -0.5 * sv * (_quad(n, M, alpha, tmp)
                          - (2.0 * _dot(nn, A.ctypes.data, M.ctypes.data) - 0.0))
    k = 5
    if has_time:
        for i in range(nn):
            dct[i] = dct[i] * cs[i]
        out[5] = -0.5 * sv * (_quad(n, dct, alpha, tmp)
                              - (2.0 * _dot(nn, A.ctypes.data, dct.ctypes.data) - 0.0))
        k = 6
    if fit_noise:
        out[k] = 0.5 * nv * (_dot(n, alpha.ctypes.data, alpha.ctypes.data) - tr_p)
    out[0] = 1.0
    out[1] = lml
    out[2] = events


class Workspace:
    """Buffers of one objective's compiled evaluations (made once per objective)."""

    def __init__(self, objective: object, codes: tuple[int, int]) -> None:
        n = objective.n
        # writable contiguous copies (made once): one compiled signature whatever the caller had
        self.Ds = np.array(objective.Ds, dtype=float).reshape(-1)
        Dt = objective.Dt
        self.Dt = np.empty(0) if Dt is None else np.array(Dt, dtype=float).reshape(-1)
        self.kinds = np.array(codes, dtype=np.intp)
        self.W = np.empty((11, n * n))
        self.V = np.empty((4, max(n, 1)))
        self.ints = np.zeros(4, dtype=np.int32)
        self.call = np.zeros(8, dtype=np.intp)
        self.scalars = np.zeros(3)
        self.data = _state["data"]
        self.consts = np.array([objective._chol_flops, objective._grad_flops,
                                objective._half_n_log_2pi])
        self.out = np.zeros(8)
        self.y = np.empty(n)


def lml_and_grad(objective: object, ws: Workspace, sv: float, ls: float, lt: float | None,
                 nv: float, totals: np.ndarray) -> tuple[float, list[float] | None]:
    """:meth:`tvbo.gp.lml.LMLObjective.lml_and_grad` compiled: same returns and side effects
    (``alpha``, ``n_evals``, ``jitter_events``; ``totals`` advanced, the caller stores them)."""
    out = ws.out
    # y copied into a writable buffer and the scalars made Python floats/bools: one compiled
    # signature, so one entry in numba's cache (a read-only y would compile another)
    y = ws.y
    np.copyto(y, objective.y)
    _lml_and_grad(ws.Ds, ws.Dt, ws.kinds, y, float(sv), float(ls),
                  0.0 if lt is None else float(lt), float(nv), bool(objective.fit_noise),
                  ws.W, ws.V, ws.ints, ws.call, ws.data, ws.consts, totals, out)
    objective.n_evals += 1
    objective.jitter_events += int(out[2])
    if out[0] != 0.0:
        objective.alpha = ws.V[0, : objective.n].copy()
    if out[0] != 1.0:
        return -math.inf, None
    return float(out[1]), out[3: 3 + len(objective.names)].tolist()


# -- the whole Adam fit on the raw parametrisation (tvbo.gp.fit_modes, tvbo.gp.adam) ------------
@njit(cache=True, error_model="numpy")
def _adam(z: np.ndarray, lr: float, steps: int, b1: float, b2: float, eps: float,
          ckind: np.ndarray, clo: np.ndarray, chi: np.ndarray, unit: np.ndarray,
          learn_mean: bool, scale: float, y0: np.ndarray, yw: np.ndarray,
          Ds: np.ndarray, Dt: np.ndarray, kinds: np.ndarray,
          W: np.ndarray, V: np.ndarray, ints: np.ndarray, call: np.ndarray,
          scalars: np.ndarray, data: np.ndarray, consts: np.ndarray, counts: np.ndarray,
          out: np.ndarray, best_z: np.ndarray, best_theta: np.ndarray, state: np.ndarray
          ) -> int:
    """``steps`` Adam steps on ``-RawObjective`` (every hyperparameter free, no prior);
    ``ckind``: 0 positive, 1 greater_than, 2 interval. ``z`` is moved in place. ``state`` =
    (loss at the last evaluation, best value, best lml, evaluations, jitter events, alpha
    valid). Returns 0, or 1 where the plain form raises (the caller then runs it)."""
    p = ckind.shape[0]
    nz = z.shape[0]
    n = y0.shape[0]
    m = np.zeros(nz)
    v = np.zeros(nz)
    g = np.zeros(nz)
    hs = np.empty(p)
    theta = np.empty(p)
    ex = np.empty(p)
    best_value = -np.inf
    best_lml = -np.inf
    evals = 0
    events = 0
    have_alpha = 0
    loss = np.inf
    for t in range(1, steps + 1):
        # RawObjective.theta_of
        for k in range(p):
            r = z[k]
            if ckind[k] == 2:
                sg = 0.5 * (1.0 + math.tanh(0.5 * r))
                h = clo[k] + (chi[k] - clo[k]) * sg
            else:
                h = _softplus(r, call, scalars, data)
                if ckind[k] == 1:
                    h = h + clo[k]
            hs[k] = h
            x = 1e-300 if 1e-300 > h else h
            x = x * unit[k]
            if not x > 0.0 and x == x:
                return 1  # math.log raises
            theta[k] = math.log(x)
        finite = True
        for k in range(p):
            if not (math.isfinite(hs[k]) and hs[k] > 0):
                finite = False
        value = -np.inf
        if finite:
            if learn_mean:
                c = z[nz - 1]
                for i in range(n):
                    yw[i] = y0[i] - c
            # LMLObjective.values: np.exp(theta), then the dataclass's checks
            _unary(0, theta.ctypes.data, 8, ex.ctypes.data, p, call, data)
            for k in range(p):
                if not (math.isfinite(ex[k]) and (ex[k] >= 0 if k == p - 1 else ex[k] > 0)):
                    return 1  # the Hyperparameters dataclass raises
            has_time = Dt.shape[0] > 0
            lt = ex[2] if has_time else 0.0
            nv = ex[p - 1]
            _lml_and_grad(Ds, Dt, kinds, yw, ex[0], ex[1], lt, nv, True, W, V, ints, call,
                          data, consts, counts, out)
            evals += 1
            events += int(out[2])
            if out[0] != 0.0:
                have_alpha = 1
            if out[0] == 1.0:
                lml = out[1]
                if lml > best_lml:
                    best_lml = lml
                    for k in range(p):
                        best_theta[k] = theta[k]
                ok = True
                for k in range(p):
                    if not math.isfinite(out[3 + k]):
                        ok = False
                if ok and math.isfinite(lml):
                    total = lml
                    for k in range(p):
                        r = z[k]
                        d = out[3 + k] / hs[k]
                        if ckind[k] == 2:
                            sg = 0.5 * (1.0 + math.tanh(0.5 * r))
                            dv = (chi[k] - clo[k]) * sg * (1.0 - sg)
                        else:
                            dv = 0.5 * (1.0 + math.tanh(0.5 * r))
                        g[k] = d * dv
                    if learn_mean:
                        g[nz - 1] = add_reduce(V[0], 0, n, 1)
                    value = total * scale
                    for k in range(nz):
                        g[k] = g[k] * scale
        # RawObjective.__call__'s record of the best point, then _negate
        if math.isfinite(value):
            if value > best_value:
                best_value = value
                for k in range(nz):
                    best_z[k] = z[k]
            loss = -value
            for k in range(nz):
                g[k] = -g[k]
        else:
            loss = np.inf
            for k in range(nz):
                g[k] = 0.0
        # tvbo.gp.adam.adam_minimize's update
        bc2 = math.sqrt(1.0 - math.pow(b2, float(t)))
        step = lr / (1.0 - math.pow(b1, float(t)))
        for k in range(nz):
            m[k] = b1 * m[k] + (1.0 - b1) * g[k]
            v[k] = b2 * v[k] + (1.0 - b2) * g[k] * g[k]
            denom = math.sqrt(v[k]) / bc2 + eps
            z[k] = z[k] - step * m[k] / denom
    state[0] = loss
    state[1] = best_value
    state[2] = best_lml
    state[3] = evals
    state[4] = events
    state[5] = have_alpha
    return 0


def adam_fit(raw: object, z0: np.ndarray, *, lr: float, steps: int, betas: tuple[float, float],
             eps: float) -> tuple[np.ndarray, float, int, str] | None:
    """:func:`tvbo.gp.adam.adam_minimize` on ``-raw`` (a :class:`tvbo.gp.fit_modes.RawObjective`)
    in one compiled call, with the plain run's side effects on ``raw`` and its objective.
    None when this fit is not one the compiled form covers (the caller runs the plain form)."""
    objective = raw.objective
    specs = raw.specs
    codes = kernel_codes(objective.kernel)
    totals = counter_totals(objective.work)
    if (codes is None or totals is None or not 1 <= objective.n <= MAX_N
            or objective.prior is not None or not objective.fit_noise
            or len(raw.free) != len(specs)
            or any(s.prior is not None or s.constraint.kind == "bounded" for s in specs)):
        return None
    ws = workspace(objective)
    p = len(specs)
    kind_code = {"positive": 0, "greater_than": 1, "interval": 2}
    ckind = np.array([kind_code[s.constraint.kind] for s in specs], dtype=np.intp)
    clo = np.array([float(s.constraint.lower) for s in specs])
    chi = np.array([float(s.constraint.upper) for s in specs])
    unit = np.array([float(s.unit) for s in specs])
    z = np.array(z0, float)
    y0 = np.array(raw.y, dtype=float)  # a writable copy: one compiled signature
    yw = y0.copy() if not raw.learn_mean else np.empty_like(y0)
    best_z = np.empty_like(z)
    best_theta = np.empty(p)
    state = np.zeros(6)
    b1, b2 = betas
    status = _adam(z, float(lr), int(steps), float(b1), float(b2), float(eps), ckind, clo, chi,
                   unit, bool(raw.learn_mean), float(raw.scale), y0, yw, ws.Ds, ws.Dt, ws.kinds,
                   ws.W, ws.V, ws.ints, ws.call, ws.scalars, ws.data, ws.consts, totals,
                   ws.out, best_z, best_theta, state)
    if status != 0:
        return None
    store_totals(objective.work, totals)
    objective.n_evals += int(state[3])
    objective.jitter_events += int(state[4])
    if raw.learn_mean:
        objective.y = yw
    if state[5]:
        objective.alpha = ws.V[0, : objective.n].copy()
    if state[2] > objective.best_lml:
        objective.best_lml, objective.best_theta = float(state[2]), best_theta.copy()
    if math.isfinite(state[1]) and state[1] > raw.best_value:
        raw.best_value, raw.best_z = float(state[1]), best_z.copy()
    loss = float(state[0])
    return z, loss, int(steps), f"Adam: {steps} steps, lr {lr}; loss at the last evaluation"


def workspace(objective: object) -> Workspace:
    """The compiled buffers of ``objective`` (an :class:`~tvbo.gp.lml.LMLObjective`), made on
    first use and kept on it."""
    ws = objective._compiled
    if ws is None:
        if not ready():
            raise RuntimeError(f"the compiled fit cannot run here: {unavailable_reason()}")
        ws = objective._compiled = Workspace(objective, kernel_codes(objective.kernel))
    return ws
