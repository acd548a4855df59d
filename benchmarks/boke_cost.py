"""Per-iteration compute of BOKE vs GP-UCB at n = 100, 1000, 5000 observations.

One iteration = ``ingest`` of a new observation (GP-UCB: rank-one append + warm-started
hyperparameter fit) + ``propose`` (acquisition maximisation), at a dataset of n observations.
Reported per algorithm and n: the median wall time, the ``counted`` virtual seconds (work counts
x the default hardware profile) and the kernel entries evaluated. BOKE's cost per acquisition
evaluation is O(n) (Table 1 of the BOKE paper), so its per-iteration time should grow about
linearly in n; GP-UCB's grows like n^2 (acquisition) to n^3 (fit).

Run:  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/boke_cost.py \
          [--sizes 100 1000 5000] [--d 2] [--repeats 3] [--algorithms boke gp-ucb]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tvbo.algorithms import ProblemInfo, make
from tvbo.sim.profiles import load_profile
from tvbo.work import WorkCounter


def objective(X: np.ndarray) -> np.ndarray:
    return np.sin(5 * X[:, 0]) * np.cos(4 * X[:, 1]) + 0.5 * X.sum(axis=1)


def _load(alg, X: np.ndarray, T: np.ndarray, y: np.ndarray) -> None:
    """Put n observations into the algorithm without timing it (the setup, not the iteration)."""
    if hasattr(alg, "surrogate") and hasattr(alg.surrogate, "gp"):
        alg.surrogate.gp.set_data(X, None, y)
        alg.surrogate._stamps = T.copy()
        alg.surrogate._t_first = float(T[0])
        alg.surrogate.fit()  # converged starting point for the warm-started fits
    else:
        for x, t, v in zip(X, T, y, strict=True):
            alg.ingest(x, float(t), float(v), now=float(t), warmup=True)


def one_iteration(name: str, n: int, d: int, repeats: int, seed: int = 0) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    X = rng.random((n + repeats, d))
    T = np.linspace(0.0, 600.0, n + repeats)
    y = objective(X) + 0.05 * rng.standard_normal(n + repeats)
    profile = load_profile()
    alg = make(name)
    work = WorkCounter()
    alg.setup(ProblemInfo(d=d), np.random.default_rng(seed), work, clock=lambda: 600.0)
    _load(alg, X[:n], T[:n], y[:n])
    walls, counted, kernels = [], [], []
    for r in range(repeats):
        work.clear()
        start = time.perf_counter()
        with work.phase("update"):
            alg.ingest(X[n + r], float(T[n + r]), float(y[n + r]), now=600.0, warmup=False)
        with work.phase("acquisition"):
            alg.propose(600.0)
        walls.append(time.perf_counter() - start)
        counts = work.counts()
        counted.append(sum(profile.seconds(c) for c in counts.values()))
        kernels.append(sum(c.get("kernel", 0.0) for c in counts.values()))
    return {
        "wall": float(np.median(walls)),
        "counted": float(np.median(counted)),
        "kernel": float(np.median(kernels)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--d", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--algorithms", nargs="+", default=["boke", "gp-ucb"])
    args = parser.parse_args()
    print(f"{'algorithm':>10} {'n':>6} {'wall [s]':>10} {'counted [s]':>12} {'kernel':>12}")
    for name in args.algorithms:
        for n in args.sizes:
            r = one_iteration(name, n, args.d, args.repeats)
            print(
                f"{name:>10} {n:>6} {r['wall']:>10.4f} {r['counted']:>12.4f} {r['kernel']:>12.3g}",
                flush=True,
            )


if __name__ == "__main__":
    main()
