"""Per-call cost of L-BFGS-B: scipy's ``minimize`` against the lean driver (:mod:`tvbo.lbfgsb`).

Both paths give the same iterates and the same objective calls (tests/test_lbfgsb.py), so the
difference is the wrapper's own cost. Thread CPU time, min over ``--repeats`` rounds of the mean
over many calls, for each path:

* ``fit n=30``: one whole tvbo ``lbfgs`` fit (``fit_hyperparameters``, cold start from the
  same hyperparameters every time, spatio-temporal kernel: 4 log hyperparameters), with the
  objective's own share (the same number of LML evaluations timed alone);
* ``acq n=30/60 d=2..6``: one ``AcquisitionOptimizer.maximize`` (20 restarts from 512 Sobol
  points, UCB of a GP with n observations): the joint L-BFGS-B over 20 x d variables;
* ``driver n=4/40/120``: a convex quadratic with a known gradient (objective almost free), so
  the time is the driver's: per call and per objective evaluation.

Run:  OPENBLAS_NUM_THREADS=1 python benchmarks/lbfgs_overhead.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

import tvbo.lbfgsb as lbfgsb
from tvbo.acquisition import AcquisitionOptimizer, ucb
from tvbo.gp.exact import ExactGP
from tvbo.gp.fit import fit_hyperparameters
from tvbo.gp.kernels import Hyperparameters, SeparableKernel
from tvbo.gp.lml import LMLObjective

START = Hyperparameters(1.0, 0.3, 50.0, 0.01)


def _cpu(fn: Callable[[], object], calls: int, repeats: int) -> float:
    """Min over ``repeats`` of the mean thread CPU seconds of ``fn`` over ``calls`` calls."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.thread_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.thread_time() - t0) / calls)
    return best


def _both(fn: Callable[[], object], calls: int, repeats: int) -> tuple[float, float]:
    """``(scipy minimize, lean driver)`` CPU seconds per call of ``fn``."""
    times = []
    for lean in (False, True):
        lbfgsb.LEAN = lean
        times.append(_cpu(fn, calls, repeats))
    lbfgsb.LEAN = lbfgsb.FALLBACK_REASON is None
    return times[0], times[1]


def _fit_gp(n: int) -> ExactGP:
    rng = np.random.default_rng(0)
    X = rng.random((n, 2))
    T = np.sort(rng.random(n) * 600.0)
    y = np.sin(6.0 * X[:, 0]) + np.cos(4.0 * X[:, 1]) + 0.1 * rng.standard_normal(n)
    gp = ExactGP(SeparableKernel(), START)
    gp.set_data(X, T, y)
    return gp


def fit_rows(repeats: int) -> None:
    gp = _fit_gp(30)

    def fit() -> object:
        gp.set_hyperparameters(START)
        return fit_hyperparameters(gp)

    evals = fit().n_evals
    before, after = _both(fit, 20, repeats)
    objective = LMLObjective.of_gp(gp, fit_noise=True, noise_var=START.noise_var)
    theta = objective.to_theta(START)
    lml = _cpu(lambda: objective(theta), 200, repeats)
    print(f"fit lbfgs n=30 ({evals} evals): minimize {1e3 * before:6.3f} ms, lean "
          f"{1e3 * after:6.3f} ms ({before / after:4.2f}x); LML+grad alone {evals} x "
          f"{1e6 * lml:5.1f} us = {1e3 * evals * lml:6.3f} ms")


def acquisition_rows(repeats: int) -> None:
    for n in (30, 60):
        for d in (2, 4, 6):
            rng = np.random.default_rng(d)
            X = rng.uniform(size=(n, d))
            y = np.sin(5 * X).sum(axis=1) + 0.05 * rng.standard_normal(n)
            gp = ExactGP(SeparableKernel("matern52", None), Hyperparameters(1.0, 0.3, None, 0.01))
            gp.set_data(X, np.zeros(n), y)
            optimizer = AcquisitionOptimizer()

            def step(gp: ExactGP = gp, d: int = d, optimizer: AcquisitionOptimizer = optimizer
                     ) -> object:
                return optimizer.maximize(lambda Z, grad: ucb(gp, Z, 0.0, 2.0, grad=grad), d,
                                          np.random.default_rng(1))

            before, after = _both(step, 10, repeats)
            print(f"acq n={n} d={d} (20 restarts): minimize {1e3 * before:6.3f} ms, lean "
                  f"{1e3 * after:6.3f} ms ({before / after:4.2f}x)")


def _quadratic(n: int) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    """A separable convex quadratic on n variables with its minimum partly outside [0, 1]^n."""
    rng = np.random.default_rng(n)
    scale = rng.uniform(0.5, 2.0, n)
    centre = rng.uniform(-0.5, 1.5, n)

    def quadratic(x: np.ndarray) -> tuple[float, np.ndarray]:
        r = x - centre
        return float(r.dot(scale * r)), 2.0 * scale * r

    return quadratic


def driver_rows(repeats: int) -> None:
    for n in (4, 40, 120):
        quadratic, x0 = _quadratic(n), np.full(n, 0.5)

        def run(quadratic: Callable = quadratic, x0: np.ndarray = x0) -> lbfgsb.LbfgsbResult:
            return lbfgsb.minimize_lbfgsb(quadratic, x0, 0.0, 1.0)

        res = run()
        before, after = _both(run, 200, repeats)
        alone = _cpu(lambda quadratic=quadratic, x0=x0: quadratic(x0), 2000, repeats)
        wrapper = [1e6 * (t / res.nfev - alone) for t in (before, after)]
        print(f"driver n={n:3d} ({res.nfev} evals, {res.nit} its): minimize "
              f"{1e6 * before:7.1f} us, lean {1e6 * after:7.1f} us; wrapper per eval "
              f"{wrapper[0]:5.1f} us -> {wrapper[1]:5.1f} us (objective {1e6 * alone:4.1f} us)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", choices=("fit", "acq", "driver"), default=None)
    args = parser.parse_args()
    if not lbfgsb.LEAN:
        raise SystemExit(f"lean driver unavailable here: {lbfgsb.FALLBACK_REASON}")
    rows = {"fit": fit_rows, "acq": acquisition_rows, "driver": driver_rows}
    for name, rows_of in rows.items():
        if args.only in (None, name):
            rows_of(args.repeats)


if __name__ == "__main__":
    main()
