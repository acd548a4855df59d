"""Contracts every registered model, algorithm and benchmark must honour (issue 11 item 7).

``tests/testing/test_contracts.py`` parametrises these checks over the registry
(``tvbo.registry.names("algorithms")``, ``names("benchmarks")``) and over :data:`MODELS`, so a
new algorithm or benchmark gets them by registering, and a new model by adding one line here.
Each check raises ``AssertionError`` with a message naming the object and what is wrong.

Algorithms run on the refactoring grid's short settings (:mod:`tvbo.testing.preset_grid`:
``counted`` compute priced with its profile, its warm-up and iteration cap) on
:data:`ALGORITHM_BENCHMARK`; benchmarks are built with :data:`BENCHMARK_OPTIONS` (a short horizon
keeps the f* grid small) and run once with ``random-search``. The contracts:

algorithms
    proposals have the problem's shape and lie in [0, 1]^d, and on a discrete problem
    (:data:`DISCRETE_BENCHMARK`) are among its candidates; two runs with the same seed give
    identical data variables, and another seed gives other warm-up queries; the run file is
    valid (written, read back and checked by :func:`tvbo.results.validate.load_runs`, data
    unchanged); work is counted (every iteration after the warm-up charges compute, unless the
    algorithm is listed in :data:`NO_COMPUTE`); the options recorded in the run file rebuild the
    same algorithm (same options, same run).
benchmarks
    attributes in range; vectorised, deterministic evaluation consistent with single points;
    noisy samples reproducible under a seed; f* bounds f and f(argmax) = f*; inputs outside the
    domain are refused with a message naming the benchmark; a short run gives a valid run file.
models
    satisfy :class:`tvbo.models.Model`; after a sequence of appends and removals the posterior
    (mean, variance, their gradients) equals that of a fresh model given the same data at once
    (:meth:`set_data`, a full refactorisation) to 1e-10, and for the exact GP also a dense
    ``numpy.linalg.solve`` of the GP equations; every call counts work.
"""

from __future__ import annotations

import functools
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tvbo import algorithms, benchmarks, registry
from tvbo.algorithms import factory as algorithm_factory
from tvbo.api import simulate
from tvbo.gp.exact import ExactGP
from tvbo.gp.kernels import CORRELATIONS, Hyperparameters, SeparableKernel
from tvbo.models import Model
from tvbo.results.io import write_run
from tvbo.results.validate import load_runs
from tvbo.testing import preset_grid

__all__ = [
    "ALGORITHM_BENCHMARK",
    "BENCHMARK_OPTIONS",
    "DISCRETE_BENCHMARK",
    "MODELS",
    "NO_COMPUTE",
    "TOLERANCE",
    "algorithm_run",
    "check_benchmark_attributes",
    "check_benchmark_evaluation",
    "check_benchmark_oracle",
    "check_benchmark_refuses_bad_input",
    "check_determinism",
    "check_discrete_proposals",
    "check_model_posterior",
    "check_options_round_trip",
    "check_proposals",
    "check_run_file",
    "check_work_counted",
    "make_benchmark",
]

#: the benchmark algorithms are checked on (continuous, spatio-temporal; its grid settings)
ALGORITHM_BENCHMARK = "hartmann3"
#: a discrete benchmark of the grid (its candidates reach algorithms as ProblemInfo.candidates)
DISCRETE_BENCHMARK = "hills"
#: benchmark options of the benchmark contracts: a short horizon keeps the f* grid small
BENCHMARK_OPTIONS: dict[str, Any] = {"horizon": 20.0}
#: algorithms that by design compute nothing after the warm-up (name -> why)
NO_COMPUTE: dict[str, str] = {
    "random-search": "uniform random queries: no model, no acquisition (PE-GP-UCB's baseline)",
}
#: posterior agreement required between incremental updates and a full refactorisation
TOLERANCE = 1e-10


# -- algorithms --------------------------------------------------------------------------------


def _simulate(algorithm: Any, seed: int, benchmark: str = ALGORITHM_BENCHMARK,
              **overrides: Any):
    """One run on the grid's short settings (``algorithm``: a name or an instance)."""
    settings = {**preset_grid.BENCHMARKS[benchmark], **overrides}
    max_iterations = settings.pop("max_iterations", preset_grid.MAX_ITERATIONS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return simulate(benchmark, algorithm, seed=seed, warmup=preset_grid.WARMUP,
                        profile=preset_grid.PROFILE, max_iterations=max_iterations, **settings)


@functools.cache
def algorithm_run(name: str, seed: int = 0, benchmark: str = ALGORITHM_BENCHMARK):
    """The run of algorithm ``name`` with ``seed`` (cached: several contracts read it)."""
    return _simulate(name, seed, benchmark)


def check_proposals(name: str) -> None:
    """Every query has the problem's dimension, is finite and lies in [0, 1]^d."""
    ds = algorithm_run(name)
    d = benchmarks.make(ALGORITHM_BENCHMARK, **preset_grid.BENCHMARKS[ALGORITHM_BENCHMARK]).d
    x = ds["x"].squeeze([k for k in ("benchmark", "algorithm", "seed", "speed")
                         if k in ds["x"].dims])
    assert x.dims == ("iteration", "dim"), f"{name}: x has dims {x.dims}"
    X = np.asarray(x.values, float)
    assert X.shape[1] == d, f"{name}: queries have {X.shape[1]} coordinates, the problem d={d}"
    assert X.shape[0] > preset_grid.WARMUP, (
        f"{name}: only {X.shape[0]} queries, none after the {preset_grid.WARMUP} warm-up queries")
    assert np.all(np.isfinite(X)), f"{name}: non-finite query"
    assert X.min() >= 0.0 and X.max() <= 1.0, (
        f"{name}: queries outside [0, 1]^{d}: [{X.min():.6g}, {X.max():.6g}]")


def check_discrete_proposals(name: str) -> None:
    """On a discrete problem every query is one of ``ProblemInfo.candidates``: the benchmark
    defines f only there (between candidates it merely interpolates)."""
    bench = benchmarks.make(DISCRETE_BENCHMARK, **preset_grid.BENCHMARKS[DISCRETE_BENCHMARK])
    C = np.asarray(bench.candidates, float)
    ds = algorithm_run(name, 0, DISCRETE_BENCHMARK)
    X = np.asarray(ds["x"].values, float).reshape(-1, bench.d)
    off = [i for i, x in enumerate(X) if not np.any(np.all(C == x, axis=1))]
    assert not off, (f"{name}: {len(off)} of {len(X)} queries on {DISCRETE_BENCHMARK} are not "
                     f"candidates (iterations {off[:8]}{' ...' if len(off) > 8 else ''})")


def check_determinism(name: str) -> None:
    """Same seed: identical data variables; another seed: other warm-up queries."""
    first = preset_grid.digest_dataset(algorithm_run(name))
    again = preset_grid.digest_dataset(_simulate(name, 0))
    changed = sorted(k for k in first.keys() | again.keys() if first.get(k) != again.get(k))
    assert not changed, f"{name}: two runs with seed 0 differ in {', '.join(changed)}"
    other = _simulate(name, 1, max_iterations=preset_grid.WARMUP + 1)  # warm-up and one query
    x0 = np.asarray(algorithm_run(name)["x"].values).reshape(-1, np.shape(other["x"])[-1])
    x1 = np.asarray(other["x"].values).reshape(-1, x0.shape[1])
    w = preset_grid.WARMUP
    assert not np.array_equal(x0[:w], x1[:w]), f"{name}: seeds 0 and 1 give the same warm-up"


def check_run_file(ds, directory: Path, label: str) -> None:
    """Written, read back and validated by :func:`tvbo.results.validate.load_runs`; the data
    variables survive the file unchanged."""
    path = write_run(ds, Path(directory) / f"{label.replace('/', '_')}.nc")
    (back,) = load_runs([path])
    before, after = preset_grid.digest_dataset(ds), preset_grid.digest_dataset(back)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"{label}: data variables changed through the run file: {changed}"


def _declares_compute_free(name: str) -> bool:
    """Whether algorithm ``name`` is a class declaring ``compute_free = True`` (read from the
    class, without building it: some algorithms need options to build)."""
    item = registry.entry("algorithms", name)
    factory = registry.resolve(item) if item is not None and item.kind == "class" else (
        algorithm_factory._CUSTOM.get(name))
    return isinstance(factory, type) and bool(getattr(factory, "compute_free", False))


def check_work_counted(name: str) -> None:
    """Every iteration after the warm-up charges compute (zero for :data:`NO_COMPUTE` and for
    algorithms declaring ``compute_free``: the reference policies)."""
    ds = algorithm_run(name)
    compute = np.asarray(ds["compute_total"].values, float).ravel()
    warm = np.asarray(ds["is_warmup"].values).ravel().astype(bool)
    after = compute[~warm]
    assert after.size, f"{name}: no iteration after the warm-up"
    if name in NO_COMPUTE or _declares_compute_free(name):
        why = NO_COMPUTE.get(name, "it declares compute_free = True")
        assert np.all(after == 0.0), (
            f"{name} does no computation by design ({why}) but charges compute")
        return
    zero = np.flatnonzero(after <= 0.0)
    assert zero.size == 0, (
        f"{name}: {zero.size} of {after.size} iterations after the warm-up charge no compute "
        f"(a model or optimiser does not count its work on the counter it is given)")


def _canonical(value: Any) -> Any:
    return json.loads(json.dumps(value, default=float))


def check_options_round_trip(name: str) -> None:
    """The options recorded in the run file rebuild the algorithm: ``make(name, **options)``
    gives the same options and, with the same seed, the same run."""
    ds = algorithm_run(name)
    recorded = json.loads(ds.attrs["config_json"])["algorithm"]["options"]
    assert recorded == _canonical(algorithms.make(name).options()), (
        f"{name}: the run file's options differ from make({name!r}).options()")
    try:
        rebuilt = algorithms.make(name, **recorded)
    except (TypeError, ValueError) as err:
        raise AssertionError(f"{name}: its recorded options do not rebuild it: {err}") from None
    assert _canonical(rebuilt.options()) == recorded, (
        f"{name}: make(name, **options).options() differs from options")
    first = preset_grid.digest_dataset(ds)
    again = preset_grid.digest_dataset(_simulate(rebuilt, 0))
    changed = sorted(k for k in first.keys() | again.keys() if first.get(k) != again.get(k))
    assert not changed, f"{name}: rebuilt from its options, the run differs in {changed}"


# -- benchmarks --------------------------------------------------------------------------------


def make_benchmark(name: str):
    """The benchmark with :data:`BENCHMARK_OPTIONS` (FileNotFoundError: its data is absent)."""
    return benchmarks.make(name, **BENCHMARK_OPTIONS)


def check_benchmark_attributes(name: str) -> None:
    """Dimension, horizon, noise, cost and temporal kernel in range."""
    b = make_benchmark(name)
    assert isinstance(b.d, int) and b.d >= 1, f"{name}: d = {b.d!r}"
    assert b.horizon == BENCHMARK_OPTIONS["horizon"], f"{name}: horizon option ignored"
    for attr in ("noise_var", "cost"):
        value = getattr(b, attr)
        assert np.isfinite(value) and value >= 0, f"{name}: {attr} = {value!r}"
    assert b.temporal_kernel in CORRELATIONS, (
        f"{name}: temporal_kernel {b.temporal_kernel!r} not in {sorted(CORRELATIONS)}")
    assert b.name, f"{name}: empty name"


def check_benchmark_evaluation(name: str) -> None:
    """Vectorised, deterministic f; single points agree with the batch; seeded samples repeat."""
    b, twin = make_benchmark(name), make_benchmark(name)
    rng = np.random.default_rng(0)
    X = rng.random((16, b.d))
    T = rng.random(16) * b.horizon
    f = np.asarray(b(X, T), float)
    assert f.shape == (16,), f"{name}: f(X (16, d), T (16,)) has shape {f.shape}"
    assert np.all(np.isfinite(f)), f"{name}: non-finite objective values"
    assert np.array_equal(f, np.asarray(twin(X, T), float)), f"{name}: f differs between builds"
    single = np.array([b(X[i], T[i]) for i in range(4)])
    np.testing.assert_allclose(single, f[:4], rtol=1e-12, atol=0,
                               err_msg=f"{name}: single points differ from the batch")
    s1 = b.sample(X, T, np.random.default_rng(7))
    s2 = twin.sample(X, T, np.random.default_rng(7))
    assert np.array_equal(s1, s2), f"{name}: samples differ under the same seed"
    if b.noise_var == 0:
        assert np.array_equal(s1, f), f"{name}: noise_var is 0 but samples differ from f"
    else:
        assert not np.array_equal(s1, f), f"{name}: noise_var > 0 but samples equal f"


def _points_at(b, t: float, rng: np.random.Generator) -> np.ndarray:
    """Points f* bounds at ``t``: random in [0, 1]^d, or a discrete benchmark's candidates that
    are available at ``t`` (its optional ``available(X, t)`` mask: the search space X_t)."""
    if not b.is_discrete:
        return rng.random((64, b.d))
    X = np.asarray(b.candidates, float)
    available = getattr(b, "available", None)
    return X if available is None else X[np.asarray(available(X, t), bool)]


def check_benchmark_oracle(name: str) -> None:
    """f*(t) >= f(x, t) at random x (a discrete benchmark: at its candidates available at t),
    f(argmax(t), t) = f*(t), at a few times; a discrete benchmark's argmax is a candidate."""
    b = make_benchmark(name)
    rng = np.random.default_rng(1)
    if b.is_discrete:
        X = np.asarray(getattr(b, "candidates", None), float)
        assert X.ndim == 2 and X.shape[1] == b.d and len(X), (
            f"{name}: a discrete benchmark needs candidates (m, d), got {X.shape}")
        assert X.min() >= 0 and X.max() <= 1, f"{name}: candidates outside [0, 1]^d"
    for t in (0.0, 0.37 * b.horizon, b.horizon):
        f_star = float(b.f_star(t))
        x_star = np.asarray(b.argmax(t), float)
        assert x_star.shape == (b.d,), f"{name}: argmax({t}) has shape {x_star.shape}"
        assert np.all((x_star >= 0) & (x_star <= 1)), f"{name}: argmax({t}) outside the domain"
        tol = 1e-9 * max(1.0, abs(f_star))
        assert abs(float(b(x_star, t)) - f_star) <= tol, f"{name}: f(argmax(t), t) != f*(t)"
        if b.is_discrete:
            assert np.any(np.all(X == x_star, axis=1)), f"{name}: argmax({t}) not a candidate"
        P = _points_at(b, t, rng)
        assert len(P), f"{name}: no candidate available at t = {t}"
        f = np.asarray(b(P, np.full(len(P), t)), float)
        assert f.max() <= f_star + tol, f"{name}: f = {f.max()} above f* = {f_star} at t = {t}"


def check_benchmark_refuses_bad_input(name: str) -> None:
    """Queries outside [0, 1]^d or of the wrong dimension are refused, naming the benchmark."""
    b = make_benchmark(name)
    for x in (np.full(b.d, 1.5), np.full(b.d + 1, 0.5)):
        try:
            b(x, 0.0)
        except ValueError as err:
            assert b.name in str(err), f"{name}: the error does not name the benchmark: {err}"
        else:
            raise AssertionError(f"{name}: accepted the query {x}")


# -- models ------------------------------------------------------------------------------------


def _exact_gp(space: str, time: str | None, standardize: bool = True) -> Callable[[], Any]:
    def build():
        hp = Hyperparameters(signal_var=1.3, lengthscale_space=0.4,
                             lengthscale_time=None if time is None else 7.0, noise_var=0.02)
        return ExactGP(SeparableKernel(space, time), hp, standardize=standardize)

    return build


#: model name -> a factory of a fresh, empty model (the same every call)
MODELS: dict[str, Callable[[], Any]] = {
    "exact-gp/spatial": _exact_gp("matern52", None),
    "exact-gp/spatio-temporal": _exact_gp("matern52", "matern32"),
    "exact-gp/rbf-matern12": _exact_gp("rbf", "matern12"),
    "exact-gp/not-standardised": _exact_gp("matern32", "rbf", standardize=False),
}

#: the updates the posterior check applies: ("append", k) appends k points, ("remove", i)
APPEND_REMOVE: tuple[tuple[str, int], ...] = (
    ("append", 8), ("remove", 0), ("remove", -1), ("append", 3), ("remove", 4),
    ("remove", 2), ("append", 2), ("remove", 0), ("remove", 5), ("append", 1),
)


def _dense_posterior(model, Xs: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
    """The exact GP's posterior from its equations, with one dense ``numpy.linalg.solve``."""
    hp, kernel = model.hyperparameters, model.kernel
    y = np.asarray(model.y, float)
    mean, std = (float(np.mean(y)), float(np.std(y))) if model.standardize else (0.0, 1.0)
    std = std if std >= 1e-12 else 1.0
    T = np.asarray(model.T, float) if kernel.has_time else None
    ts = np.full(len(Xs), t) if kernel.has_time else None
    K = kernel.matrix(model.X, T, model.X, T, hp) + hp.noise_var * np.eye(model.n)
    Ks = kernel.matrix(Xs, ts, model.X, T, hp)
    weights = np.linalg.solve(K, np.column_stack([(y - mean) / std, Ks.T]))
    mu = Ks @ weights[:, 0] * std + mean
    var = (hp.signal_var - np.einsum("ij,ji->i", Ks, weights[:, 1:])) * std**2
    return mu, np.maximum(var, 0.0)


def check_model_posterior(name: str, factory: Callable[[], Any] | None = None) -> None:
    """After appends and removals the posterior equals a full refactorisation's (1e-10)."""
    factory = factory or MODELS[name]
    model = factory()
    assert isinstance(model, Model), f"{name}: does not satisfy tvbo.models.Model"
    rng = np.random.default_rng(3)
    d = 2
    X0, T0 = rng.random((6, d)), np.arange(6.0)
    model.set_data(X0, T0, np.sin(3 * X0[:, 0]) + X0[:, 1] + 0.1 * rng.standard_normal(6))
    t_next = 6.0
    for op, k in APPEND_REMOVE:
        if op == "append":
            for _ in range(k):
                x = rng.random(d)
                model.append(x, t_next, float(np.sin(3 * x[0]) + x[1] + 0.1 * rng.normal()))
                t_next += 1.0
        else:
            model.remove(k)
    fresh = factory()
    fresh.set_data(np.array(model.X), np.array(model.T), np.array(model.y))
    Xs, t = rng.random((7, d)), t_next + 0.5
    got = model.predict(Xs, t, grad=True)
    want = fresh.predict(Xs, t, grad=True)
    for field in ("mean", "var", "dmean", "dvar"):
        np.testing.assert_allclose(
            getattr(got, field), getattr(want, field), rtol=TOLERANCE, atol=TOLERANCE,
            err_msg=f"{name}: posterior {field} after appends/removals != full refactorisation")
    if hasattr(model, "kernel") and hasattr(model, "hyperparameters"):
        mu, var = _dense_posterior(model, Xs, t)
        np.testing.assert_allclose(got.mean, mu, rtol=TOLERANCE, atol=TOLERANCE,
                                   err_msg=f"{name}: posterior mean != dense solve")
        np.testing.assert_allclose(got.var, var, rtol=TOLERANCE, atol=TOLERANCE,
                                   err_msg=f"{name}: posterior variance != dense solve")
    counts = model.work.counts()
    assert sum(sum(kinds.values()) for kinds in counts.values()) > 0, (
        f"{name}: no work counted on model.work")
    before = sum(v for kinds in model.work.counts().values() for v in kinds.values())
    model.predict(Xs[:1], t)
    after = sum(v for kinds in model.work.counts().values() for v in kinds.values())
    assert after > before, f"{name}: predict counts no work"
