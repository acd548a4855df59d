"""Wall time of one all-points W2 relevance pass (tvbo.algorithms.wdbo.relevance.relevance).

The public W-DBO reference is O(n^4) per pass (fresh block inverses per observation); ours is
O(n^3). This script times one pass at n = 16, ..., 512 with d = 3 (target: <= 1 s at n = 512;
the small sizes are those of real runs, where per-call overhead matters), both computing the
precision matrix itself and receiving it from the GP (``precision=``, what an algorithm holding
an incrementally updated factor does). Optionally it also times the
O(n^4) brute-force reference at small n for comparison.

Usage: ``python benchmarks/w2_pass.py [--sizes 16 64 256] [--repeats 5] [--bruteforce]``.
Pin BLAS threads (e.g. ``OMP_NUM_THREADS=1``) for numbers comparable across machines.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tvbo.algorithms.wdbo.relevance import relevance, relevance_bruteforce

HYPER = dict(
    signal_var=1.0,
    lengthscale_space=0.3,
    lengthscale_time=60.0,
    noise_var=0.05,
    space_kernel="matern52",
    time_kernel="matern32",
)


def dataset(n: int, d: int, seed: int = 0):
    """n observations spread over 600 s in [0, 1]^d with a smooth drifting signal."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    T = np.sort(rng.uniform(0.0, 600.0, n))
    y = np.sin(6.0 * X.sum(axis=1) + T / 60.0) + 0.2 * rng.standard_normal(n)
    return X, T, (y - y.mean()) / y.std()


def precision_of(X, T) -> np.ndarray:
    """``(K + sigma2 I)^-1`` built independently of the relevance module (what a GP would hold)."""
    dist = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)) / HYPER["lengthscale_space"]
    lag = np.abs(T[:, None] - T[None, :]) / HYPER["lengthscale_time"]
    z5, z3 = np.sqrt(5.0) * dist, np.sqrt(3.0) * lag
    K = (1 + z5 + z5**2 / 3) * np.exp(-z5) * (1 + z3) * np.exp(-z3)
    return np.linalg.inv(K + HYPER["noise_var"] * np.eye(len(T)))


def best_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 32, 64, 128, 256, 512])
    parser.add_argument("--dim", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--bruteforce", action="store_true", help="also time the O(n^4) pass")
    args = parser.parse_args()

    print(f"one W2 relevance pass, d = {args.dim}, best of {args.repeats}")
    header = f"{'n':>6} {'pass [ms]':>10} {'with precision [ms]':>20}"
    print(header + (f" {'bruteforce [s]':>15}" if args.bruteforce else ""))
    for n in args.sizes:
        X, T, y = dataset(n, args.dim)
        t_now = float(T.max()) + 1.0
        P = precision_of(X, T)
        data = dict(X=X, T=T, y=y, t_now=t_now, **HYPER)
        own = best_time(lambda data=data: relevance(**data), args.repeats)
        given = best_time(lambda data=data, P=P: relevance(**data, precision=P), args.repeats)
        line = f"{n:>6} {1e3 * own:>10.3f} {1e3 * given:>20.3f}"
        if args.bruteforce and n <= 128:
            brute = best_time(lambda data=data: relevance_bruteforce(**data), 1)
            line += f" {brute:>15.3f}"
        print(line)


if __name__ == "__main__":
    main()
