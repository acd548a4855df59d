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

from tvbo.acquisition import AcquisitionOptimizer, ucb
from tvbo.algorithms import ProblemInfo, make
from tvbo.gp.exact import ExactGP
from tvbo.gp.fit import fit_hyperparameters
from tvbo.gp.kernels import Hyperparameters, SeparableKernel
from tvbo.sim.profiles import HardwareProfile
from tvbo.sim.threads import blas_threads
from tvbo.work import WORK_KINDS, WorkCounter


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
            fit_hyperparameters(gp, init=hp, max_iter=15, source="calibrate")

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
        # the thread count the BLAS libraries really used (tvbo calibrate pins it to 1)
        "blas_threads": ",".join(sorted({str(n) for n in blas_threads().values()}))
        or os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
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


# -- emulating another implementation's response time ------------------------------------------
#
# The papers' experiments ran BoTorch on a laptop, whose response time R(n) is one to two orders of
# magnitude above tvbo's numerics on the same data. To replay *their* protocol (how many iterations
# fit in 600 s, how large datasets grow), the counted model needs a profile whose prices make one
# tvbo iteration cost what one iteration cost there. ``emulate`` fits such a profile: it counts the
# work of one real iteration (acquisition + append + warm-started refit) of an algorithm at several
# dataset sizes, and solves the same relative-error NNLS as ``fit_profile`` against *target*
# seconds instead of measured ones. Work counts are deterministic, so the result is too.


def iteration_counts(
    sizes: Sequence[int], *, algorithm: str = "w-dbo", d: int = 3, seeds: Sequence[int] = (0, 1, 2)
) -> list[tuple[int, dict[str, float]]]:
    """Work counts of one post-warm-up iteration of ``algorithm`` holding ``n`` observations.

    The algorithm first ingests ``n`` observations of a smooth drifting signal over 600 s and fits
    its hyperparameters; the counted iteration is then what the engine charges as the response
    time: maximise the acquisition at the current time, append the new observation and refit
    (warm-started, as in a run). Cleaning is excluded, as in the papers' definition of R(n).
    The number of optimiser iterations varies from one dataset to the next, so counts are averaged
    over ``seeds`` datasets per size.
    """
    if not seeds:
        raise ValueError("need at least one seed")
    rows = []
    for n in sizes:
        if int(n) < 2:
            raise ValueError(f"dataset sizes must be >= 2, got {n}")
        total: dict[str, float] = {}
        for seed in seeds:
            for kind, amount in _one_iteration_counts(int(n), algorithm, d, int(seed)).items():
                total[kind] = total.get(kind, 0.0) + amount / len(seeds)
        rows.append((int(n), total))
    return rows


def _one_iteration_counts(n: int, algorithm: str, d: int, seed: int) -> dict[str, float]:
    """Work counts of one iteration at size ``n`` on the dataset drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    alg = make(algorithm)
    work = WorkCounter()
    alg.setup(ProblemInfo(d=d), np.random.default_rng(seed), work, clock=lambda: 600.0)
    X = rng.random((int(n), d))
    T = np.sort(rng.uniform(0.0, 600.0, int(n)))
    y = np.sin(6.0 * X.sum(axis=1) + T / 60.0) + 0.2 * rng.standard_normal(int(n))
    surrogate = alg.surrogate
    for x, t, v in zip(X, T, y, strict=True):
        surrogate.append(x, float(t), float(v))
    surrogate.fit()
    work.clear()
    with work.phase("iteration"):
        x = np.asarray(alg.acquisition.select(surrogate, 600.0)).reshape(d)
        surrogate.append(x, 600.0, float(np.sin(6.0 * x.sum() + 10.0)))
        surrogate.fit()
    counts: dict[str, float] = {}
    for phase_counts in work.counts().values():
        for kind, amount in phase_counts.items():
            counts[kind] = counts.get(kind, 0.0) + amount
    return counts


def emulate(
    targets: dict[int, float],
    name: str,
    *,
    algorithm: str = "w-dbo",
    d: int = 3,
    description: str = "",
) -> HardwareProfile:
    """A profile under which one iteration of ``algorithm`` at size ``n`` costs ``targets[n]`` s."""
    if len(targets) < 2:
        raise ValueError(f"need response-time targets at >= 2 dataset sizes, got {targets}")
    bad = {n: s for n, s in targets.items() if not (s > 0 and np.isfinite(s))}
    if bad:
        raise ValueError(f"target response times must be finite and > 0, got {bad}")
    sizes = sorted(int(n) for n in targets)
    rows = [
        ("iteration", n, float(targets[n]), counts)
        for n, counts in iteration_counts(sizes, algorithm=algorithm, d=d)
    ]
    fitted = fit_profile(rows, name)
    machine = dict(fitted.machine)
    for key in ("platform", "processor", "cpus", "python", "blas_threads"):
        machine.pop(key, None)  # prices of an emulated machine, not of the one that computed them
    machine.update(
        emulated_algorithm=algorithm,
        emulated_dimension=d,
        targets={int(n): float(s) for n, s in sorted(targets.items())},
        fitted={n: float(fitted.seconds(c)) for n, c in ((r[1], r[3]) for r in rows)},
    )
    return HardwareProfile(
        name=name,
        coefficients=dict(fitted.coefficients),
        description=description or f"emulates response-time targets {targets} for {algorithm}",
        machine=machine,
    )
