"""Wall time of one full W-DBO / BOLT iteration, per phase, at n = 64, 128, 256, 512 (d = 3).

Each algorithm holds ``n`` observations (a smooth drifting signal over 600 s in [0, 1]^3) with
hyperparameters fitted once beforehand, then one iteration is timed phase by phase, as the
composed algorithm runs it:

* ``acquisition``  -- UCB maximisation at the current time (20 restarts, 512 raw samples);
* ``append``       -- O(n^2) Cholesky row update for the new observation;
* ``fit``          -- hyperparameter refit with the new observation (warm start, L-BFGS-B);
* ``clean``        -- the dataset policy: W-DBO prices its budget (set large, with the floor at
  n so that the loop stops after exactly one removal); BOLT fits R(n) on a synthetic cubic
  response-time history, runs the n* direct search and removes one observation.

Numbers are the best of ``--repeats`` runs, each on a fresh copy of the state. Pin BLAS threads
(``OMP_NUM_THREADS=1``) for numbers comparable across machines.

Usage: ``python benchmarks/policy_step.py [--sizes 64 128 256 512] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import copy
import time

import numpy as np

from tvbo.algorithms import ProblemInfo, make
from tvbo.algorithms.bolt.nstar import cubic_response_time, nstar, temporal_correlation
from tvbo.work import WorkCounter

PHASES = ("acquisition", "append", "fit", "clean")


def prepared(name: str, n: int, d: int, seed: int = 0):
    """Algorithm ``name`` holding ``n`` observations, hyperparameters fitted, clock at 600 s."""
    alg = make(name)
    clock = {"now": 600.0}
    alg.setup(
        ProblemInfo(d=d), np.random.default_rng(seed), WorkCounter(), clock=lambda: clock["now"]
    )
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    T = np.sort(rng.uniform(0.0, 600.0, n))
    y = np.sin(6.0 * X.sum(axis=1) + T / 60.0) + 0.2 * rng.standard_normal(n)
    for x, t, v in zip(X, T, y, strict=True):
        alg.surrogate.append(x, float(t), float(v))
    alg.surrogate.fit()
    policy = alg.dataset
    if policy.kind == "bolt-nstar":
        # a response-time history R(n) = 0.05 + c3 n^3 over the sizes seen so far, with c3 such
        # that n* ~ n / 2 for the fitted l_T: the timed cleaning removes exactly one observation
        gp = alg.surrogate.gp
        k_T = temporal_correlation(gp.kernel.time.name, gp.hyperparameters.lengthscale_time)
        lo, hi = -14.0, 2.0  # bisection on log10(c3): n* decreases as R grows
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            R = cubic_response_time((0.05, 0.0, 0.0, 10.0**mid))
            lo, hi = (lo, mid) if nstar(k_T, R, n0=n // 2, n_max=4 * n) <= n // 2 else (mid, hi)
        c3 = 10.0**hi
        sizes = np.arange(max(16, n - 40), n + 1)
        policy.sizes = [int(s) for s in sizes]
        policy.times = [0.05 + c3 * float(s) ** 3 for s in sizes]
        policy._last_read = (clock["now"] - policy.times[-1], False)
        policy._size_after_clean = n
        policy.n_star = n - 1
        policy.n_max = max(policy.n_max, 4 * n)
    return alg, clock


def one_iteration(alg, clock, d: int) -> dict[str, float]:
    """Time the phases of one post-warm-up iteration."""
    out = {}
    t = clock["now"]
    start = time.perf_counter()
    x = np.asarray(alg.acquisition.select(alg.surrogate, t)).reshape(d)
    out["acquisition"] = time.perf_counter() - start
    start = time.perf_counter()
    alg.surrogate.append(x, t, float(np.sin(6.0 * x.sum() + t / 60.0)))
    out["append"] = time.perf_counter() - start
    start = time.perf_counter()
    alg.surrogate.fit()
    out["fit"] = time.perf_counter() - start
    clock["now"] = t + 1.0
    policy = alg.dataset
    if policy.kind == "wdbo-budget":
        # a large budget and the floor at n: exactly one removal (one relevance pass + downdate)
        policy.budget = 1e9
        policy.floor = alg.dataset_size() - 1
    before = alg.dataset_size()
    start = time.perf_counter()
    policy.after_fit(now=clock["now"], warmup=False)
    out["clean"] = time.perf_counter() - start
    removed = before - alg.dataset_size()
    if removed != 1:
        raise RuntimeError(f"{alg.name}: expected one removal in the timed cleaning, got {removed}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 128, 256, 512])
    parser.add_argument("--dim", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--algorithms", nargs="+", default=["w-dbo", "bolt"])
    args = parser.parse_args()

    print(f"one iteration per phase [s], d = {args.dim}, best of {args.repeats}")
    print(f"{'algorithm':>10} {'n':>5} " + " ".join(f"{p:>12}" for p in PHASES) + f" {'total':>10}")
    for name in args.algorithms:
        for n in args.sizes:
            alg, clock = prepared(name, n, args.dim)
            best = dict.fromkeys(PHASES, np.inf)
            start_now = clock["now"]
            for _ in range(args.repeats):
                # the parts read the run's clock (their PartContext), i.e. this dict: rewind it
                trial = copy.deepcopy(alg)
                clock["now"] = start_now
                times = one_iteration(trial, clock, args.dim)
                best = {p: min(best[p], times[p]) for p in PHASES}
            total = sum(best.values())
            print(
                f"{name:>10} {n:>5} "
                + " ".join(f"{best[p]:>12.4f}" for p in PHASES)
                + f" {total:>10.4f}"
            )


if __name__ == "__main__":
    main()
