"""``tvbo calibrate --from-runs``: a deterministic response-time model from measured runs.

Code tvbo cannot count (an outside optimiser wrapped as a plugin, :mod:`tvbo.plugins`) reports
no work, so ``compute: counted`` refuses it. Its real cost is measured instead (``compute:
measured``: CPU time of every thread of the process, per phase) -- realistic, but not
reproducible. This module turns measured runs into a model that is: for every phase ``p`` it
fits a non-negative polynomial in the dataset size,

    R_p(n) = a_p0 + a_p1 n + ... + a_pD n^D      (a_pi >= 0, scipy.optimize.nnls),

to the phase's measured seconds of every recorded iteration, and writes the coefficients, each
fit's error and the provenance (source runs, benchmarks, seeds, clock, machine) to a YAML
**response-time model**. A run with ``compute: polynomial`` and ``profile: R.yaml`` replays the
algorithm through it (:class:`ResponseTimeModel`): the same seed gives the same run on any
machine, and the run file records the model, its fit error and its source runs.

Which ``n``: the engine prices a call with the dataset size after the call, so a phase charged
on ``propose`` (``acquisition``, ``fit``, ``side``, and any phase of the algorithm's own) is
fitted against the size before the iteration's ingestion, post-warm-up iterations only (warm-up
queries are not proposed), and a phase charged on ``ingest`` (``update``, ``clean``) against the
size after it, warm-up included. The replay charges each call its phases' sum on the call's
outer phase (``acquisition`` / ``update``): the per-phase split stays in the model file. Why
non-negative coefficients: R(n) must be non-decreasing and never negative, as the ``polynomial``
model requires; the fit error says how well that shape holds.
"""

from __future__ import annotations

import json
import math
import os
import platform
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tvbo.results.validate import open_netcdf

#: phases charged on the ``ingest`` call (fitted against the dataset size after it); every
#: other phase is charged on ``propose``
INGEST_PHASES: tuple[str, ...] = ("update", "clean")
#: the call -> its outer phase, on which a replay charges the call's phases
OUTER_PHASE: dict[str, str] = {"propose": "acquisition", "ingest": "update"}
KIND = "response-time"
MAX_DEGREE = 3


def _call_of(phase: str) -> str:
    return "ingest" if phase in INGEST_PHASES else "propose"


def run_paths(items: Sequence[str | os.PathLike]) -> list[Path]:
    """The run files named by ``items``: files as given, folders searched for ``*.nc``."""
    paths: list[Path] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            found = sorted(path.rglob("*.nc"))
            if not found:
                raise ValueError(f"--from-runs {str(item)!r}: no run files (*.nc) in this folder")
            paths += found
        elif path.is_file():
            paths.append(path)
        else:
            raise ValueError(f"--from-runs {str(item)!r}: no such file or folder")
    if not paths:
        raise ValueError("--from-runs: no run files given")
    return paths


def _samples(path: Path) -> tuple[dict[str, Any], dict[str, tuple[list, list]]]:
    """One measured run: (its identity, {phase: (sizes, seconds)})."""
    with open_netcdf(path, "run") as ds:
        attrs = dict(ds.attrs)
        model = json.loads(attrs.get("compute_model_json", "{}"))
        name = attrs.get("compute_model", model.get("model"))
        if name != "measured":
            raise ValueError(
                f"{path}: made under compute {name!r}, not 'measured': a response-time model is "
                "fitted to measured CPU times (run the algorithm with --compute measured)")
        speed = float(model.get("speed", 1.0))
        identity = {"algorithm": str(ds["algorithm"].values[0]),
                    "benchmark": str(ds["benchmark"].values[0]),
                    "seed": int(ds["seed"].values[0]), "clock": model.get("clock", "unknown")}
        sizes = np.asarray(ds["dataset_size"].values, float).reshape(-1)
        warm = np.asarray(ds["is_warmup"].values, bool).reshape(-1)
        phases = {str(v)[len("compute_"):]: np.asarray(ds[v].values, float).reshape(-1)
                  for v in ds.data_vars if str(v).startswith("compute_") and v != "compute_total"
                  and ds[v].dims[-1] == "iteration"}
    present = np.isfinite(sizes)
    before = np.concatenate([[0.0], sizes[:-1]])  # the size a propose sees
    out: dict[str, tuple[list, list]] = {}
    for phase, seconds in phases.items():
        if _call_of(phase) == "propose":
            keep, n = present & ~warm, before
        else:
            keep, n = present, sizes
        keep &= np.isfinite(seconds)
        out[phase] = (list(n[keep]), list(seconds[keep] * speed))  # undo the speed factor
    return identity, out


def fit_polynomial(n: np.ndarray, seconds: np.ndarray, degree: int
                   ) -> tuple[list[float], dict[str, float]]:
    """Non-negative least squares of ``seconds`` on ``1, n, ..., n^degree``: (coefficients,
    fit error: points, rmse_s, relative_rmse = rmse / mean, r2, max_abs_residual_s)."""
    from scipy.optimize import nnls

    n = np.asarray(n, float)
    y = np.asarray(seconds, float)
    V = np.vander(n, degree + 1, increasing=True)
    scale = np.maximum(np.abs(V).max(axis=0), 1.0)  # n^2 ~ 1e6 beside 1: balance the columns
    a, _ = nnls(V / scale, y)
    coefficients = [float(v) for v in a / scale]
    residual = y - V @ np.asarray(coefficients)
    rmse = float(np.sqrt(np.mean(residual**2)))
    mean = float(np.mean(y))
    total = float(np.sum((y - mean) ** 2))
    return coefficients, {
        "points": len(y),
        "rmse_s": rmse,
        "relative_rmse": rmse / mean if mean > 0 else 0.0,
        "r2": 1.0 - float(np.sum(residual**2)) / total if total > 0 else 1.0,
        "max_abs_residual_s": float(np.max(np.abs(residual))),
    }


def calibrate_from_runs(items: Sequence[str | os.PathLike], out: str | os.PathLike, *,
                        degree: int = 2, name: str | None = None) -> Path:
    """Fit R_p(n) per phase to the measured runs named by ``items``; write the model to
    ``out`` (atomically, only when everything is valid). Returns ``out``."""
    if isinstance(degree, bool) or not isinstance(degree, int) or not 0 <= degree <= MAX_DEGREE:
        raise ValueError(f"--degree must be an integer in [0, {MAX_DEGREE}], got {degree!r}")
    paths = run_paths(items)
    identities, pooled = [], {}
    for path in paths:
        identity, samples = _samples(path)
        identities.append(identity)
        for phase, (n, s) in samples.items():
            pooled.setdefault(phase, ([], []))
            pooled[phase][0].extend(n)
            pooled[phase][1].extend(s)
    algorithms = sorted({i["algorithm"] for i in identities})
    if len(algorithms) > 1:
        raise ValueError(f"--from-runs: runs of {len(algorithms)} algorithms "
                         f"({', '.join(algorithms)}): a response-time model describes one "
                         "algorithm; calibrate each from its own runs")
    phases, errors = {}, {}
    for phase in sorted(pooled):
        n, s = (np.asarray(v, float) for v in pooled[phase])
        if len(n) < degree + 1:
            raise ValueError(f"--from-runs: phase {phase!r} has {len(n)} post-warm-up "
                             f"iterations, fewer than the {degree + 1} coefficients of degree "
                             f"{degree}; give longer runs or a lower --degree")
        if not np.any(s > 0):
            continue  # a phase the algorithm never uses: nothing to charge
        phases[phase], errors[phase] = fit_polynomial(n, s, degree)
    if not phases:
        raise ValueError("--from-runs: every measured phase took 0 s: nothing to fit")
    out = Path(out)
    model = {
        "kind": KIND,
        "name": name or out.stem,
        "algorithm": algorithms[0],
        "description": f"response time of {algorithms[0]} per phase, R_p(n) = sum_i a_pi n^i "
                       f"seconds (non-negative least squares on measured CPU time)",
        "degree": degree,
        "calls": {call: sorted(p for p in phases if _call_of(p) == call)
                  for call in OUTER_PHASE},
        "phases": phases,
        "fit_error": errors,
        "source": {
            "runs": [str(p) for p in paths],
            "benchmarks": sorted({i["benchmark"] for i in identities}),
            "seeds": sorted({i["seed"] for i in identities}),
            "clock": sorted({str(i["clock"]) for i in identities}),
            "machine": {"platform": platform.platform(), "processor": platform.processor(),
                        "cpus": os.cpu_count()},
        },
    }
    return _write_yaml(model, out)


def _write_yaml(data: Mapping[str, Any], out: Path) -> Path:
    import yaml

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(yaml.safe_dump(dict(data), sort_keys=False))
    os.replace(tmp, out)
    return out


def is_response_model(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a YAML file written by :func:`calibrate_from_runs`."""
    import yaml

    candidate = Path(path)
    if not candidate.is_file():
        return False
    try:
        data = yaml.safe_load(candidate.read_text())
    except yaml.YAMLError:
        return False
    return isinstance(data, dict) and data.get("kind") == KIND


def load_response_model(path: str | os.PathLike) -> dict[str, Any]:
    """The response-time model in ``path``, checked (ValueError names the file and the fault)."""
    import yaml

    where = f"response-time model {str(path)!r}"
    if not Path(path).is_file():
        raise ValueError(f"{where}: no such file (with compute polynomial, the profile is a "
                         "YAML file written by tvbo calibrate --from-runs)")
    data = yaml.safe_load(Path(path).read_text())
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise ValueError(f"{where}: not written by tvbo calibrate --from-runs (kind: {KIND})")
    phases = data.get("phases")
    if not isinstance(phases, dict) or not phases:
        raise ValueError(f"{where}: no phases")
    for phase, coefficients in phases.items():
        if not (isinstance(coefficients, list) and coefficients and all(
                isinstance(a, int | float) and not isinstance(a, bool) and math.isfinite(a)
                and a >= 0 for a in coefficients)):
            raise ValueError(f"{where}: phase {phase!r} needs coefficients >= 0, got "
                             f"{coefficients!r}")
    return data


def replay_seconds(phases: Mapping[str, Iterable[float]], call: str, n: int) -> float:
    """Seconds a replay charges ``call`` at dataset size ``n``: the sum of its phases' R_p(n)."""
    return sum(sum(a * float(n) ** i for i, a in enumerate(coefficients))
               for phase, coefficients in phases.items() if _call_of(phase) == call)
