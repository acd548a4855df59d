"""Wall time of the GP core at n = 64, 128, 256, 512 (spatio-temporal GP, d = 3).

Measures, per dataset size n:

* ``warm fit``: ``fit_hyperparameters`` warm-started from the previous optimum right after one
  ``append`` (what every TVBO iteration does), with its number of LML+grad evaluations;
* ``eval``: one LML + analytic gradient evaluation;
* ``predict``: posterior mean/variance *with gradients* at 20 points;
* ``append`` / ``remove``: the O(n^2) Cholesky row update and the rank-one downdate (middle index).

Targets (2 cores): warm fit <= 100 ms at n = 256; predict with gradients of 20 points well under
1 ms at n = 256.

Run:  .venv/bin/python benchmarks/gp_fit.py [--sizes 64 128 256 512] [--repeats 5] [--threads 1]

BLAS threads are pinned *before* numpy is imported (``--threads``, default 1): matrices of this
size gain nothing from threading, and on a loaded 2-core machine an unpinned OpenBLAS
oversubscribes and runs 10-100x slower (measured: a 256 x 256 Cholesky took 16 ms with 2 threads
under load versus 0.6 ms with 1).
"""

from __future__ import annotations

import argparse
import os
import sys


def _pin_threads(argv: list[str]) -> None:
    threads = "1"
    if "--threads" in argv:
        threads = argv[argv.index("--threads") + 1]
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = threads


_pin_threads(sys.argv)

import time  # noqa: E402

import numpy as np  # noqa: E402

from tvbo.gp.exact import ExactGP  # noqa: E402
from tvbo.gp.fit import fit_hyperparameters  # noqa: E402
from tvbo.gp.kernels import Hyperparameters, SeparableKernel  # noqa: E402
from tvbo.gp.lml import LMLObjective  # noqa: E402

TRUTH = Hyperparameters(
    signal_var=1.0, lengthscale_space=0.3, lengthscale_time=80.0, noise_var=0.02
)
D = 3


def data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A sample of the GP prior (so the MLE is well posed) at n random points over 600 s."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, D))
    T = np.sort(rng.random(n) * 600.0)
    kern = SeparableKernel()
    K = kern.matrix(X, T, X, T, TRUTH) + TRUTH.noise_var * np.eye(n)
    return X, T, np.linalg.cholesky(K) @ rng.standard_normal(n)


def median_time(fn, repeats: int, clock=time.perf_counter) -> float:
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return float(np.median(times))


def bench(n: int, repeats: int) -> dict[str, float]:
    kern = SeparableKernel("matern52", "matern32")
    fit_ms, fit_cpu_ms, evals = [], [], []
    for rep in range(repeats):
        X, T, y = data(n + 1, seed=rep)
        gp = ExactGP(kern, Hyperparameters(1.0, 0.5, 200.0, 0.1))
        gp.set_data(X[:n], T[:n], y[:n])
        previous = fit_hyperparameters(gp, max_iter=200).hyperparameters
        gp.append(X[n], T[n], y[n])
        start, cpu = time.perf_counter(), time.thread_time()
        res = fit_hyperparameters(gp, init=previous)
        fit_ms.append(1e3 * (time.perf_counter() - start))
        fit_cpu_ms.append(1e3 * (time.thread_time() - cpu))
        evals.append(res.n_evals)

    objective = LMLObjective(kern, gp.X, gp.T, gp.y_standardized)
    theta = objective.to_theta(gp.hyperparameters)
    eval_ms = 1e3 * median_time(lambda: objective(theta), 3 * repeats)
    eval_cpu_ms = 1e3 * median_time(lambda: objective(theta), 3 * repeats, time.thread_time)

    Xs = np.random.default_rng(99).random((20, D))
    gp.predict(Xs, 600.0, grad=True)
    predict_ms = 1e3 * median_time(lambda: gp.predict(Xs, 600.0, grad=True), 200)

    rng = np.random.default_rng(7)
    extra = rng.random((repeats, D))

    def append_remove() -> tuple[float, float]:
        a = time.perf_counter()
        gp.append(extra[0], 601.0, 0.1)
        b = time.perf_counter()
        gp.remove(gp.n // 2)
        c = time.perf_counter()
        return b - a, c - b

    pairs = np.array([append_remove() for _ in range(5 * repeats)])
    append_ms, remove_ms = 1e3 * np.median(pairs, axis=0)
    return {
        "n": n,
        "fit_ms": float(np.median(fit_ms)),
        "fit_cpu_ms": float(np.median(fit_cpu_ms)),
        "eval_cpu_ms": eval_cpu_ms,
        "evals": float(np.median(evals)),
        "eval_ms": eval_ms,
        "predict_ms": predict_ms,
        "append_ms": float(append_ms),
        "remove_ms": float(remove_ms),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 128, 256, 512])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (pinned)")
    args = parser.parse_args()
    print(
        f"GP core, spatio-temporal Matern-5/2 x Matern-3/2, d = {D}, BLAS threads = {args.threads}"
    )
    print("wall = perf_counter; cpu = thread CPU time (robust to other load on the machine)")
    header = (
        f"{'n':>5} {'warm fit ms':>12} {'(cpu)':>7} {'evals':>6} {'eval ms':>8} {'(cpu)':>7} "
        f"{'predict20+grad ms':>18} {'append ms':>10} {'remove ms':>10}"
    )
    print(header)
    print("-" * len(header))
    for n in args.sizes:
        r = bench(n, args.repeats)
        print(
            f"{r['n']:>5} {r['fit_ms']:>12.1f} {r['fit_cpu_ms']:>7.1f} {r['evals']:>6.0f} "
            f"{r['eval_ms']:>8.2f} {r['eval_cpu_ms']:>7.2f} {r['predict_ms']:>18.3f} "
            f"{r['append_ms']:>10.3f} {r['remove_ms']:>10.3f}"
        )


if __name__ == "__main__":
    main()
