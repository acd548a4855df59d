"""``tvbo calibrate``: fit a hardware profile to this machine.

The counted compute model prices work counts with per-unit coefficients. Calibration runs the hot
numerical routines (GP factorisation, hyperparameter fits, batched predictions, incremental
appends and removals, acquisition optimisation) at several dataset sizes, measures the thread
CPU time of each and the work it reported, and fits non-negative coefficients by least squares on
*relative* errors (so that small and large operations weigh alike). The result is a YAML profile
that makes counted virtual time track this machine's real compute time.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

from tvbo.sim.profiles import HardwareProfile
from tvbo.sim.work import WORK_KINDS, WorkCounter


def _measure(op: Callable[[], None], work: WorkCounter, repeats: int) -> tuple[float, dict]:
    """Median thread time of ``op`` and the work it reports (work must be deterministic)."""
    times = []
    counts: dict[str, float] = {}
    for _ in range(repeats):
        work.clear()
        start = time.thread_time()
        with work.phase("calibration"):
            op()
        times.append(time.thread_time() - start)
        counts = {}
        for phase_counts in work.counts().values():  # nested phases (e.g. "fit") included
            for kind, amount in phase_counts.items():
                counts[kind] = counts.get(kind, 0.0) + amount
    return float(np.median(times)), counts


def measurements(sizes: Sequence[int] = (32, 64, 128, 256), repeats: int = 3, d: int = 3,
                 seed: int = 0) -> list[tuple[str, int, float, dict]]:
    """Time the hot routines: ``[(operation, n, seconds, counts), ...]``."""
    from tvbo.acquisition import AcquisitionOptimizer, ucb
    from tvbo.gp.exact import ExactGP
    from tvbo.gp.fit import fit_hyperparameters
    from tvbo.gp.kernels import Hyperparameters, SeparableKernel

    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        X = rng.uniform(size=(n, d))
        T = np.sort(rng.uniform(0, 600, size=n))
        y = np.sin(6 * X.sum(axis=1)) + np.cos(T / 50) + 0.1 * rng.standard_normal(n)
        hp = Hyperparameters(1.0, 0.3, 100.0, 0.01)
        work = WorkCounter()
        gp = ExactGP(SeparableKernel("matern52", "matern32"), hp, work=work)
        gp.set_data(X, T, y)

        def fit(gp=gp, hp=hp):
            fit_hyperparameters(gp, init=hp, max_iter=15)

        def factor(gp=gp, X=X, T=T, y=y):
            gp.set_data(X, T, y)

        def predict_batch(gp=gp):
            gp.predict(rng.uniform(size=(512, d)), 600.0, grad=False)

        def predict_grad(gp=gp):
            gp.predict(rng.uniform(size=(20, d)), 600.0, grad=True)

        def append_remove(gp=gp):
            gp.append(rng.uniform(size=d), 600.0, 0.0)
            gp.remove(0)

        optimizer = AcquisitionOptimizer(n_restarts=10, raw_samples=256, maxiter=30)

        def acquisition(gp=gp, optimizer=optimizer):
            optimizer.maximize(lambda Z, g, gp=gp: ucb(gp, Z, 600.0, 2.0, grad=g), d,
                               np.random.default_rng(1), work=gp.work)

        for name, op in [("factor", factor), ("fit", fit), ("predict_batch", predict_batch),
                         ("predict_grad", predict_grad), ("append_remove", append_remove),
                         ("acquisition", acquisition)]:
            seconds, counts = _measure(op, work, repeats)
            rows.append((name, n, seconds, counts))
            factor()  # restore the data and hyperparameters for the next operation
    return rows


def fit_profile(rows: list[tuple[str, int, float, dict]], name: str) -> HardwareProfile:
    """Non-negative least squares on relative errors: seconds ~ sum_k coef_k * count_k."""
    A = np.array([[r[3].get(k, 0.0) for k in WORK_KINDS] for r in rows], float)
    b = np.array([r[2] for r in rows], float)
    keep = b > 0
    A, b = A[keep], b[keep]
    weights = 1.0 / b
    scale = np.maximum(A.max(axis=0), 1e-300)
    coef, _ = nnls((A / scale) * weights[:, None], b * weights)
    coef = coef / scale
    machine = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
        "calibrated": time.strftime("%Y-%m-%d"),
        "relative_rms_error": float(np.sqrt(np.mean(((A @ coef) / b - 1.0) ** 2))),
    }
    return HardwareProfile(
        name=name,
        coefficients={k: float(c) for k, c in zip(WORK_KINDS, coef, strict=True)},
        description="fitted by `tvbo calibrate` to tvbo's numerics on this machine",
        machine=machine,
    )


def calibrate(out: str | Path, *, sizes: Sequence[int] = (32, 64, 128, 256),
              repeats: int = 3, name: str | None = None) -> Path:
    """Measure this machine and write a profile YAML to ``out``; returns the path."""
    if not sizes or any(int(s) < 4 for s in sizes):
        raise ValueError(f"sizes must be a non-empty list of integers >= 4, got {list(sizes)}")
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    out = Path(out)
    rows = measurements([int(s) for s in sizes], repeats)
    profile = fit_profile(rows, name or out.stem)
    return profile.save(out)
