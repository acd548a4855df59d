"""Per-call cost of the hyperparameter-fit hot path (interpreter overhead at small n).

Measures thread CPU time (less disturbed than wall time on a busy machine), min over
``--repeats`` rounds (each the mean over many calls):

* ``lml_and_grad`` of :class:`tvbo.gp.lml.LMLObjective` at n = 10, 20, 40, 80, 160
  (``SeparableKernel()``, random X in [0, 1]^2, sorted T in [0, 600] s);
* one whole ``gpytorch-adam`` fit (150 Adam steps, the W-DBO public code's recipe) and one
  whole ``lbfgs`` fit (tvbo's own, cold start) at n = 30.

and each fast form of tvbo/gp against its reference form (``--compare``), the gain its
docstring names (and, with ``--lbfgs``, the ``lbfgs`` fit at n = 30 with scipy's ``minimize``
against the lean L-BFGS-B driver of tvbo.lbfgsb, with the plain and the compiled objective,
same fit bit for bit):

* LML: ``LMLObjective.lml_and_grad`` (buffers, LAPACK in place) against
  ``lml_and_grad_reference`` (the formulas on fresh arrays), n = 10, 40, 160, 512;
* Matérn: ``lml_and_grad`` with the correlations' ``value_and_d_dr_into`` (in place, buffers)
  and with the reference ``value_and_d_dr`` copied into the buffers (``Correlation``'s own).

and the compiled forms (``tvbo.gp.compiled``, numba) against the plain numpy ones (``--jit``):

* microseconds per whole fit, ``gpytorch-adam`` (150 steps) and ``lbfgs``, at n = 10, 30, 60,
  120, with ``TVBO_JIT`` on and off (the same process; each fit decides when it starts), and
  the fit's LAPACK floor: its LML evaluations times the LAPACK calls each one is defined to
  make (``dpotrf``, ``dpotrs``, ``dpotri``), timed from compiled code. No implementation that
  factorises Delta at every evaluation, as the fits' definitions do, can go below it;
* the first fit's cost in a fresh process (import, symbol binding, compilation or loading
  from numba's on-disk cache), with a cold cache (an empty ``NUMBA_CACHE_DIR``) and then warm,
  against a fresh process with ``TVBO_JIT=0``.

Run:  OPENBLAS_NUM_THREADS=1 python benchmarks/fit_overhead.py [--repeats 3] [--compare | --jit]
Compare two checkouts by running it with PYTHONPATH set to each, back to back.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import tvbo.lbfgsb as lbfgsb
from tvbo import jit
from tvbo.gp.exact import ExactGP
from tvbo.gp.fit import fit_hyperparameters
from tvbo.gp.kernels import Correlation, Hyperparameters, SeparableKernel
from tvbo.gp.lml import LMLObjective

START = Hyperparameters(1.0, 0.3, 50.0, 0.01)


def _data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    T = np.sort(rng.random(n) * 600.0)
    y = np.sin(6.0 * X[:, 0]) + np.cos(4.0 * X[:, 1]) + 0.1 * rng.standard_normal(n)
    return X, T, y


def time_lml(n: int, repeats: int, reference_correlations: bool = False,
             reference_lml: bool = False) -> float:
    X, T, y = _data(n)
    obj = LMLObjective(SeparableKernel(), X, T, y)
    evaluate = obj.lml_and_grad_reference if reference_lml else obj.lml_and_grad
    if reference_correlations:  # Correlation's own: value_and_d_dr, copied into the buffers
        kernel = obj.kernel
        obj._space_into = Correlation.value_and_d_dr_into.__get__(kernel.space)
        obj._time_into = Correlation.value_and_d_dr_into.__get__(kernel.time)
    calls = max(50, 40000 // n)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.thread_time()
        for _ in range(calls):
            evaluate(1.0, 0.3, 50.0, 0.01)
        best = min(best, (time.thread_time() - t0) / calls)
    return best


def _gp(n: int) -> ExactGP:
    X, T, y = _data(n)
    gp = ExactGP(SeparableKernel(), START)
    for i in range(n):
        gp.append(X[i], T[i], y[i])
    return gp


def time_fit(mode: str, n: int, repeats: int, fits: int = 10) -> float:
    gp = _gp(n)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.thread_time()
        for _ in range(fits):
            gp.set_hyperparameters(START)
            fit_hyperparameters(gp, mode=mode)
        best = min(best, (time.thread_time() - t0) / fits)
    return best


def compare(repeats: int) -> None:
    """Each fast form against its reference form, with the gain in percent."""
    for n in (10, 40, 160, 512):
        fast, ref = time_lml(n, repeats), time_lml(n, repeats, reference_lml=True)
        print(f"lml_and_grad n={n:3d}: fast {1e6 * fast:8.1f} us, reference {1e6 * ref:8.1f} us "
              f"({100 * (1 - fast / ref):5.1f}% less)")
    for n in (10, 40, 160, 512):
        fast, ref = time_lml(n, repeats), time_lml(n, repeats, reference_correlations=True)
        print(f"lml_and_grad correlations n={n:3d}: in place {1e6 * fast:7.1f} us, reference "
              f"{1e6 * ref:7.1f} us ({100 * (1 - fast / ref):5.1f}% less)")


def lbfgs_driver(repeats: int) -> None:
    """The ``lbfgs`` fit at n = 30 through scipy's ``minimize`` and through the lean driver,
    both with the plain objective, and through the lean driver with the compiled objective (what
    a process that has loaded numba runs): issue 27's target is the last at most half the first,
    measured side by side in one process."""
    _switch(False)
    times = {}
    for lean in (False, True):
        lbfgsb.LEAN = lean
        times[lean] = time_fit("lbfgs", 30, repeats)
    lbfgsb.LEAN = lbfgsb.FALLBACK_REASON is None
    _switch(True)
    compiled = time_fit("lbfgs", 30, repeats)
    _switch(None)
    print(f"fit lbfgs n=30: minimize {1e3 * times[False]:6.2f} ms, lean driver "
          f"{1e3 * times[True]:6.2f} ms ({100 * (1 - times[True] / times[False]):4.1f}% less); "
          f"lean driver, compiled objective {1e3 * compiled:6.2f} ms "
          f"({100 * (1 - compiled / times[False]):4.1f}% less than minimize)")


def _switch(on: bool | None) -> None:
    """TVBO_JIT on (1) or off (0), or unset again (None: the default), read afresh."""
    if on is None:
        os.environ.pop(jit.ENV, None)
    else:
        os.environ[jit.ENV] = "1" if on else "0"
    jit.reset()


def fit_evaluations(mode: str, n: int) -> int:
    """LML evaluations of one fit at n from :data:`START` (the fit's own count)."""
    gp = _gp(n)
    gp.set_hyperparameters(START)
    return int(fit_hyperparameters(gp, mode=mode).n_evals)


def lapack_floor(n: int, repeats: int, calls: int = 2000) -> float:
    """CPU seconds of the LAPACK calls ONE LML evaluation at n is defined to make: the factor
    of Delta (``dpotrf``), ``alpha`` (``dpotrs``) and, for the gradient's trace terms, the
    inverse (``dpotri``), called from compiled code on a fresh copy of the benchmark's Delta
    (no Python, no wrapper: scipy's LAPACK as the compiled fit calls it). Whatever else a fit
    does (kernel matrices, gradients, the optimiser) comes on top, so times the fit's
    evaluations it bounds the fit from below."""
    from numba import njit  # lazy: only --jit needs numba

    from tvbo.gp import compiled

    if not compiled.ready():
        raise SystemExit(f"--jit: the compiled forms cannot run here: "
                         f"{compiled.unavailable_reason()}")
    # the compiled fit's own LAPACK calls (its calling convention, written once there)
    potrf, potrs, potri = compiled._potrf, compiled._potrs, compiled._potri

    @njit
    def evaluations(A0: np.ndarray, A: np.ndarray, y: np.ndarray, alpha: np.ndarray,
                    ints: np.ndarray, count: int) -> float:
        n = y.shape[0]
        total = 0.0
        for _ in range(count):
            A[:] = A0
            potrf(n, A, ints)
            alpha[:] = y
            potrs(n, A, alpha, ints)
            potri(n, A, ints)
            total += A[0]
        return total

    X, T, y = _data(n)
    kernel = SeparableKernel()
    delta = kernel.matrix(X, T, X, T, START) + START.noise_var * np.eye(n)
    A0 = np.asfortranarray(delta).reshape(-1, order="F").copy()
    A, alpha, ints = np.empty_like(A0), np.empty(n), np.zeros(4, dtype=np.int32)
    evaluations(A0, A, y, alpha, ints, 1)  # compile
    best = float("inf")
    for _ in range(repeats):
        t0 = time.thread_time()
        evaluations(A0, A, y, alpha, ints, calls)
        best = min(best, (time.thread_time() - t0) / calls)
    return best


def compare_jit(repeats: int) -> None:
    """Whole fits compiled against plain, the LAPACK floor under each fit, and the first fit's
    cost in a fresh process."""
    for mode in ("gpytorch-adam", "lbfgs"):
        for n in (10, 30, 60, 120):
            _switch(True)
            fast = time_fit(mode, n, repeats)
            _switch(False)
            plain = time_fit(mode, n, repeats)
            evals = fit_evaluations(mode, n)
            floor = evals * lapack_floor(n, repeats)
            print(f"fit {mode:14s} n={n:3d}: compiled {1e6 * fast:9.1f} us, plain "
                  f"{1e6 * plain:9.1f} us ({plain / fast:5.1f}x); LAPACK floor "
                  f"{1e6 * floor:8.1f} us ({evals} evaluations)")
    _switch(None)
    code = ("import time; t0 = time.perf_counter(); import tvbo; "
            "from benchmarks.fit_overhead import _gp; "
            "from tvbo.gp.fit import fit_hyperparameters; gp = _gp(30); "
            "t1 = time.perf_counter(); fit_hyperparameters(gp, mode='gpytorch-adam'); "
            "fit_hyperparameters(gp); print(time.perf_counter() - t1, t1 - t0)")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as cache:
        for label, value in (("cold cache", "1"), ("warm cache", "1"), ("TVBO_JIT=0", "0")):
            env = {**os.environ, jit.ENV: value, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": root}
            out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, check=True,
                                 capture_output=True, text=True).stdout.split()
            print(f"first gpytorch-adam + lbfgs fit at n=30 in a fresh process, {label:10s}: "
                  f"{float(out[0]):7.3f} s (imports before it {float(out[1]):.3f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 40, 80, 160])
    parser.add_argument("--compare", action="store_true",
                        help="time each fast form against its reference form instead")
    parser.add_argument("--lbfgs", action="store_true",
                        help="time the lbfgs fit with scipy's minimize and the lean driver")
    parser.add_argument("--jit", action="store_true",
                        help="time the compiled fits against the plain ones, and compile cost")
    args = parser.parse_args()
    if args.lbfgs:
        lbfgs_driver(args.repeats)
        return
    if args.jit:
        compare_jit(args.repeats)
        return
    if args.compare:
        compare(args.repeats)
        return
    for n in args.sizes:
        print(f"lml_and_grad n={n:4d}: {1e6 * time_lml(n, args.repeats):8.1f} us")
    for mode in ("gpytorch-adam", "lbfgs"):
        print(f"fit {mode:14s} n=30: {1e3 * time_fit(mode, 30, args.repeats):8.2f} ms")


if __name__ == "__main__":
    main()
