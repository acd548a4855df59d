"""The arithmetic a regeneration cannot avoid: a lower bound on its CPU time from its run files.

Issue 27 asks for the whole reproduction in 60 min on 2 cores, i.e. at most 7,200 CPU seconds.
This script asks whether that budget can hold the linear algebra the algorithms are defined to
do, whatever the code around it. It reads what the runs recorded, re-runs nothing:

* **fits**: every run file records each hyperparameter fit's dataset size ``fit_n_data`` and
  objective evaluations ``fit_n_evals`` (L-BFGS-B evaluations of the LML and its gradient, or the
  150 Adam steps of the ``gpytorch-adam`` recipe). An exact GP's LML needs the Cholesky factor
  of the n x n covariance (``dpotrf``, n^3/3 flops) and its gradient the inverse (``dpotri``,
  2 n^3/3 flops);
* **acquisitions**: an algorithm whose options name ``raw_samples`` scores that many Sobol points
  at each of its post-warm-up iterations before any gradient step, one triangular solve with
  ``raw_samples`` right-hand sides against the n x n factor (n^2 x raw_samples flops), n the
  dataset size it held. The gradient ascent that follows, the kernel matrices, the W2 cleaning,
  the oracle, the engine, start-up and I/O are not counted: the bound is a floor, not an
  estimate.

Each count is priced three ways, single-threaded, on this machine:

``lapack``  the measured time of the LAPACK call itself (``dpotrf`` + ``dpotri``; ``dtrtrs``)
            at that n, through scipy's wrappers: what any code pays that calls LAPACK once per
            evaluation, as tvbo, GPyTorch and BoTorch do;
``flops``   the flop count at the measured LAPACK rate at n = 1,000 (the rate these routines
            reach on large matrices, well above what they reach at the campaign's n);
``peak``    the flop count at the measured ``dgemm`` rate at n = 1,000 (no factorisation runs
            faster than matrix multiplication: an absolute floor for exact float64 GP algebra).

Usage (after a regeneration, ``scripts/time_reproduction.py``)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/arithmetic_floor.py --results results
    OPENBLAS_NUM_THREADS=1 python benchmarks/arithmetic_floor.py --results results \
        --campaigns bolt_paper_offline-day --budget 960 \
        --algorithms gp-ucb et-gp-ucb r-gp-ucb tv-gp-ucb abo w-dbo-paper bolt-paper
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

#: dataset sizes at which LAPACK is timed; other sizes are interpolated in log-log
_GRID = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
         1536, 2048)


def _counts(path: Path) -> tuple[Counter, Counter, float]:
    """``(fit evaluations by n, scoring right-hand sides by n, the run's measured CPU seconds)``
    of one run file (``run_cpu_seconds``: the simulation and its f*, NaN when not recorded)."""
    import netCDF4

    fits: Counter = Counter()
    scores: Counter = Counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with netCDF4.Dataset(path) as ds:
            if "fit_n_data" in ds.variables and "fit_n_evals" in ds.variables:
                n_data = np.asarray(ds["fit_n_data"][:]).ravel()
                n_evals = np.asarray(ds["fit_n_evals"][:]).ravel()
                for n, e in zip(n_data, n_evals, strict=True):
                    if n > 0 and e > 0:
                        fits[int(n)] += int(e)
            options = json.loads(getattr(ds, "config_json", "{}")).get("algorithm", {})
            raw = options.get("options", {}).get("acquisition", {}) or {}
            raw_samples = raw.get("raw_samples") if isinstance(raw, dict) else None
            if raw_samples and "dataset_size" in ds.variables and "is_warmup" in ds.variables:
                sizes = np.asarray(ds["dataset_size"][:]).ravel()
                warm = np.asarray(ds["is_warmup"][:]).ravel().astype(bool)
                held = np.concatenate([[0], sizes[:-1]])  # the data held when it chose
                for n in held[~warm]:
                    if n > 0:
                        scores[int(n)] += int(raw_samples)
            cpu = float(getattr(ds, "run_cpu_seconds", float("nan")))
    return fits, scores, cpu


def _timed(call, repeats: int) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeats):
            call()
        best = min(best, (time.perf_counter() - start) / repeats)
    return best


def lapack_costs(rhs: int = 512) -> dict[str, np.ndarray | float]:
    """Seconds per ``dpotrf + dpotri`` and per ``dtrtrs`` with ``rhs`` right-hand sides at each
    size of :data:`_GRID`, and the large-matrix rates (flop/s) of LAPACK and ``dgemm``."""
    from scipy.linalg import lapack

    rng = np.random.default_rng(0)
    chol, solve = [], []
    for n in _GRID:
        A = rng.random((n, 3))
        K = np.exp(-((A[:, None] - A[None]) ** 2).sum(-1)) + 0.1 * np.eye(n)
        L, _ = lapack.dpotrf(K, lower=1)
        B = np.asfortranarray(rng.random((n, rhs)))
        reps = max(3, int(3e7 / (n**3 + 2e5)))
        chol.append(_timed(lambda K=K, L=L: (lapack.dpotrf(K, lower=1),
                                             lapack.dpotri(L, lower=1)), reps))
        solve.append(_timed(lambda L=L, B=B: lapack.dtrtrs(L, B, lower=1), reps))
    n = 1000
    M = rng.random((n, n))
    S = M @ M.T + n * np.eye(n)
    lapack_rate = (n**3 / 3) / _timed(lambda: lapack.dpotrf(S, lower=1), 3)
    gemm_rate = 2 * n**3 / _timed(lambda: M @ M, 3)
    return {"n": np.array(_GRID, float), "chol": np.array(chol), "solve": np.array(solve),
            "lapack_rate": lapack_rate, "gemm_rate": gemm_rate}


def _at(costs: dict, key: str, n: np.ndarray) -> np.ndarray:
    return np.exp(np.interp(np.log(n), np.log(costs["n"]), np.log(costs[key])))


def price(fits: Counter, scores: Counter, costs: dict, rhs: int) -> dict[str, float]:
    """The floor of one set of counts, in seconds, three ways (see the module docstring)."""
    out = {"fit_evals": float(sum(fits.values())), "scored_points": float(sum(scores.values()))}
    fit_n = np.array(sorted(fits), float)
    fit_w = np.array([fits[int(n)] for n in fit_n], float)
    sc_n = np.array(sorted(scores), float)
    sc_w = np.array([scores[int(n)] for n in sc_n], float)  # right-hand sides at each n
    fit_flops = float(np.sum(fit_w * fit_n**3)) if len(fit_n) else 0.0  # n^3/3 + 2 n^3/3
    sc_flops = float(np.sum(sc_w * sc_n**2)) if len(sc_n) else 0.0
    out["fit_flop_count"], out["score_flop_count"] = fit_flops, sc_flops
    out["fit_lapack"] = float(np.sum(fit_w * _at(costs, "chol", fit_n))) if len(fit_n) else 0.0
    out["score_lapack"] = (float(np.sum(sc_w / rhs * _at(costs, "solve", sc_n)))
                           if len(sc_n) else 0.0)
    for name, rate in (("flops", costs["lapack_rate"]), ("peak", costs["gemm_rate"])):
        out[f"fit_{name}"] = fit_flops / rate
        out[f"score_{name}"] = sc_flops / rate
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--campaigns", nargs="*", default=None,
                        help="campaign folders under --results (default: every one with runs)")
    parser.add_argument("--algorithms", nargs="*", default=None,
                        help="count only these algorithms' runs (default: all)")
    parser.add_argument("--budget", type=float, default=7200.0,
                        help="CPU seconds to compare with (default 7,200: 60 min on 2 cores)")
    parser.add_argument("--top", type=int, default=10, help="algorithms listed")
    args = parser.parse_args(argv)
    names = args.campaigns or sorted(p.parent.name for p in args.results.glob("*/runs"))
    if not names:
        print(f"arithmetic_floor: no campaign with runs under {args.results}", file=sys.stderr)
        return 2
    missing = [n for n in names if not (args.results / n / "runs").is_dir()]
    if missing:
        print(f"arithmetic_floor: no runs folder for {', '.join(missing)} under {args.results}",
              file=sys.stderr)
        return 2
    rhs = 512
    costs = lapack_costs(rhs)
    print(f"this machine, one thread: dpotrf at n = 1000 {costs['lapack_rate'] / 1e9:.1f} GF/s, "
          f"dgemm {costs['gemm_rate'] / 1e9:.1f} GF/s")
    total_fits: Counter = Counter()
    total_scores: Counter = Counter()
    by_alg: dict[str, tuple[Counter, Counter]] = defaultdict(lambda: (Counter(), Counter()))
    measured: dict[str, float] = defaultdict(float)
    print(f"{'campaign':38s} {'runs':>6s} {'runs CPU s':>10s} {'fit evals':>11s} {'lapack s':>9s} "
          f"{'flops s':>8s} {'peak s':>7s}")
    for name in names:
        fits: Counter = Counter()
        scores: Counter = Counter()
        campaign_cpu = 0.0
        files = sorted(path for path in (args.results / name / "runs").rglob("*.nc")
                       if args.algorithms is None or path.parent.name in args.algorithms)
        for path in files:
            f, s, cpu = _counts(path)
            measured[path.parent.name] += cpu
            campaign_cpu += cpu
            fits.update(f)
            scores.update(s)
            by_alg[path.parent.name][0].update(f)
            by_alg[path.parent.name][1].update(s)
        total_fits.update(fits)
        total_scores.update(scores)
        p = price(fits, scores, costs, rhs)
        both = {k: p[f"fit_{k}"] + p[f"score_{k}"] for k in ("lapack", "flops", "peak")}
        print(f"{name:38s} {len(files):6d} {campaign_cpu:10.0f} {p['fit_evals']:11.0f} "
              f"{both['lapack']:9.0f} "
              f"{both['flops']:8.0f} {both['peak']:7.0f}")
    p = price(total_fits, total_scores, costs, rhs)
    print(f"\nall campaigns: {p['fit_evals']:.0f} LML evaluations "
          f"({p['fit_flop_count']:.3g} flops), {p['scored_points']:.0f} scored raw samples "
          f"({p['score_flop_count']:.3g} flops)")
    if total_fits:
        sizes = np.array(sorted(total_fits))
        share = np.cumsum([total_fits[n] for n in sizes]) / sum(total_fits.values())
        print("  the fits' dataset size n at the median evaluation "
              f"{sizes[np.searchsorted(share, 0.5)]}, at the 90th percentile "
              f"{sizes[np.searchsorted(share, 0.9)]}")
    for part in ("fit", "score"):
        print(f"  {part + 's':7s} lapack {p[part + '_lapack']:8.0f} s   "
              f"flops {p[part + '_flops']:8.0f} s   peak {p[part + '_peak']:8.0f} s")
    floor = {k: p[f"fit_{k}"] + p[f"score_{k}"] for k in ("lapack", "flops", "peak")}
    print(f"  floor   lapack {floor['lapack']:8.0f} s   flops {floor['flops']:8.0f} s   "
          f"peak {floor['peak']:8.0f} s   (budget {args.budget:.0f} CPU s: "
          f"{floor['lapack'] / args.budget:.2f} / {floor['flops'] / args.budget:.2f} / "
          f"{floor['peak'] / args.budget:.2f} of it)")
    # the runs' measured CPU beside their floor: how far each algorithm's code is above the
    # arithmetic it cannot avoid (what is left to take, and where)
    print(f"\nby algorithm, the {args.top} costliest runs' CPU (s): measured (run_cpu_seconds), "
          "floor (lapack pricing), measured / floor")
    rows = sorted(((measured[a], a, (lambda q: q["fit_lapack"] + q["score_lapack"])(
        price(f, s, costs, rhs))) for a, (f, s) in by_alg.items()), reverse=True)
    for cpu, alg, seconds in rows[: args.top]:
        ratio = f"{cpu / seconds:6.1f}x" if seconds > 0 else "     -"
        print(f"  {alg:28s} {cpu:8.0f} {seconds:8.0f} {ratio}")
    total_cpu = sum(measured.values())
    print(f"  {'all runs':28s} {total_cpu:8.0f} {floor['lapack']:8.0f} "
          f"{total_cpu / max(floor['lapack'], 1e-9):6.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
