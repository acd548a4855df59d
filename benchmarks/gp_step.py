"""Wall time of one GP-UCB iteration -- warm-started hyperparameter fit + UCB acquisition --
at n = 64, 128, 256, 512 observations, and the peak memory of a GP holding 1000 observations.

Run:  OMP_NUM_THREADS=2 .venv/bin/python benchmarks/gp_step.py [--sizes 64 128 256 512]

``--compare-row`` instead times the one fast form of the acquisition's kernel: the k_T row of
a scalar query time broadcast over the m queries (``SeparableKernel.time_factor``) against its
reference, the (m, n) k_T matrix of m equal times (``matrix_and_grad_factor``, m = 512 raw
samples and m = 20, process CPU time, best of 5).

Targets (issue 2, 2 cores): at n = 256, fit <= 100 ms and acquisition <= 50 ms. For scale, the
BoTorch-based W-DBO reference takes ~1.1 s (fit) and ~0.9 s (acquisition) at n = 256.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from tvbo.acquisition import AcquisitionOptimizer, make_beta, ucb
from tvbo.gp.exact import ExactGP
from tvbo.gp.fit import fit_hyperparameters
from tvbo.gp.kernels import HyperparameterBounds, Hyperparameters, SeparableKernel


def objective(X: np.ndarray, T: np.ndarray) -> np.ndarray:
    return np.sin(5 * X[:, 0]) * np.cos(4 * X[:, 1]) + X[:, 2] ** 2 + np.sin(T / 60.0)


def one_iteration(n: int, d: int, spatio_temporal: bool, repeats: int, seed: int = 0) -> dict:
    """Median wall times of the warm-started fit and the acquisition at dataset size n."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n + repeats, d))
    T = np.linspace(0.0, 600.0, n + repeats)
    y = objective(X, T) + 0.05 * rng.standard_normal(n + repeats)
    kernel = SeparableKernel("matern52", "matern32" if spatio_temporal else None)
    hp0 = Hyperparameters(1.0, 0.3, 100.0 if spatio_temporal else None, 0.01)
    gp = ExactGP(kernel, hp0)
    gp.set_data(X[:n], T[:n], y[:n])
    bounds = HyperparameterBounds()
    fit_hyperparameters(gp, bounds, max_iter=200)  # converged starting point
    optimizer = AcquisitionOptimizer()
    beta = make_beta("wdbo")
    fit_times, acq_times = [], []
    for r in range(repeats):
        gp.append(X[n + r], T[n + r], y[n + r])  # the new observation, then warm-started fit
        start = time.perf_counter()
        fit_hyperparameters(gp, bounds, max_iter=50)
        fit_times.append(time.perf_counter() - start)
        b = beta(d, gp.n, n)
        start = time.perf_counter()
        t_now = float(T[n + r])
        optimizer.maximize(lambda Z, g, t=t_now, b=b: ucb(gp, Z, t, b, grad=g), d,
                           np.random.default_rng(r))
        acq_times.append(time.perf_counter() - start)
        gp.remove(0)  # keep n constant
    return {"fit": float(np.median(fit_times)), "acq": float(np.median(acq_times))}


def peak_memory_mb(n: int = 1000, d: int = 3) -> float:
    """Peak resident memory after building, fitting and querying a GP of n observations."""
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(n, d))
    T = np.linspace(0.0, 600.0, n)
    gp = ExactGP(SeparableKernel("matern52", "matern32"), Hyperparameters(1.0, 0.3, 100.0, 0.01))
    gp.set_data(X, T, objective(X, T))
    fit_hyperparameters(gp, HyperparameterBounds(), max_iter=10)
    AcquisitionOptimizer().maximize(lambda Z, g: ucb(gp, Z, 600.0, 2.0, grad=g), d,
                                    np.random.default_rng(0))
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def compare_row(repeats: int) -> None:
    """The k_T row path against the (m, n) matrix path, with the gain in percent."""
    kernel = SeparableKernel()
    hp = Hyperparameters(1.0, 0.3, 60.0, 0.01)
    rng = np.random.default_rng(0)
    for m, n in ((512, 32), (512, 256), (20, 64)):
        X1, X2, T2 = rng.random((m, 3)), rng.random((n, 3)), rng.random(n) * 600.0
        best = {}
        for name, t in (("row", 300.0), ("matrix", np.full(m, 300.0))):
            best[name] = float("inf")
            for _ in range(repeats):
                start = time.process_time()
                for _ in range(50):
                    kernel.matrix_and_grad_factor(X1, t, X2, T2, hp)
                best[name] = min(best[name], (time.process_time() - start) / 50)
        print(f"m={m:4d} n={n:4d}: row {1e6 * best['row']:7.0f} us, matrix "
              f"{1e6 * best['matrix']:7.0f} us ({100 * (1 - best['row'] / best['matrix']):5.1f}% "
              "less)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 128, 256, 512])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--d", type=int, default=3)
    parser.add_argument("--compare-row", action="store_true",
                        help="time the k_T row fast form against the (m, n) matrix instead")
    args = parser.parse_args()
    if args.compare_row:
        compare_row(args.repeats)
        return
    print(f"{'n':>5} {'model':>14} {'fit [ms]':>10} {'acq [ms]':>10}")
    for n in args.sizes:
        for st in (False, True):
            r = one_iteration(n, args.d, st, args.repeats)
            name = "space-time" if st else "space"
            print(f"{n:>5} {name:>14} {1e3 * r['fit']:>10.1f} {1e3 * r['acq']:>10.1f}")
    print(f"peak RSS with n = 1000 observations: {peak_memory_mb():.0f} MB")


if __name__ == "__main__":
    main()
