"""Timing and scale of the WLAN simulator benchmark (tvbo.benchmarks.wlan).

Prints: the time to evaluate 10,000 points at one time and at 10,000 distinct times, the time of
one f_star(t) at an off-grid time (building the cached oracle grid first, timed separately,
unless ``--no-grid``), and the numbers that document the output scale: the range of f over
random power vectors at several times against the noise sd sqrt(1.5).

    .venv/bin/python benchmarks/wlan_eval.py [--grid-step 1.0] [--no-grid] [--seed 0]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from tvbo.benchmarks.wlan import make_wlan


def best_of(fn, repeats: int = 7) -> float:
    """Minimum wall time (s) over ``repeats`` calls: the least load-disturbed measurement."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid-step", type=float, default=1.0, help="oracle grid step (s)")
    ap.add_argument("--no-grid", action="store_true", help="time f_star on a 2-point grid")
    ap.add_argument("--seed", type=int, default=0, help="scenario_seed")
    args = ap.parse_args()

    bench = make_wlan(scenario_seed=args.seed, oracle_grid_step=args.grid_step)
    rng = np.random.default_rng(1)
    X = rng.random((10_000, bench.d))
    T = rng.uniform(0.0, bench.horizon, 10_000)
    print(f"{bench!r}")
    print(f"eval 10,000 points, one t          : {1e3 * best_of(lambda: bench(X, 300.0)):8.2f} ms")
    print(f"eval 10,000 points, 10,000 times   : {1e3 * best_of(lambda: bench(X, T)):8.2f} ms")
    print(
        f"gradient 10,000 points, one t      : "
        f"{1e3 * best_of(lambda: bench._gradient(X, np.float64(300.0))):8.2f} ms"
    )

    if args.no_grid:
        bench = make_wlan(scenario_seed=args.seed, oracle_grid_step=bench.horizon)
    t0 = time.perf_counter()
    _, _, fgrid = bench.oracle.grid()
    print(f"oracle grid build ({len(fgrid)} times)      : {time.perf_counter() - t0:8.2f} s")
    for t in (123.45, 321.7, 543.21):
        t0 = time.perf_counter()
        fs = bench.f_star(t)
        dt = time.perf_counter() - t0
        best = float(np.max(bench(X, t)))
        print(
            f"f_star({t:7.2f}) = {fs:8.3f}  in {1e3 * dt:8.1f} ms; best of 10,000 random "
            f"{best:8.3f} (gap {fs - best:+.3f})"
        )

    sd = math.sqrt(bench.noise_var)
    print(f"scale: noise sd = {sd:.3f}; f* over the grid in [{fgrid.min():.2f}, {fgrid.max():.2f}]")
    for t in (0.0, 150.0, 300.0, 450.0, 600.0):
        f = bench(X, t)
        print(
            f"  t={t:5.0f}s random f in [{f.min():7.2f}, {f.max():7.2f}] (range "
            f"{np.ptp(f):6.2f} = {np.ptp(f) / sd:5.1f} noise sd), f* = {bench.f_star(t):7.2f}"
        )


if __name__ == "__main__":
    main()
