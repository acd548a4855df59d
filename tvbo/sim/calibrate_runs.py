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

How well it predicts: with two or more runs the model file also holds a **leave-one-run-out**
check (``validation``): each run in turn is predicted by the model fitted to the others, per
phase (RMS of the held-out iterations) and per run (the total compute the run was charged,
measured vs predicted along its own dataset sizes): the error a replay makes on a run it has
not seen. Provenance (``source``): every run file by name (relative to the folder it was found
in, never the machine's path), its benchmark, seed and SHA-256, the versions and options the
runs record, the machine the calibration ran on and a free ``note`` (e.g. the commit and the
machine that made the runs, which a run file does not record).
"""

from __future__ import annotations

import hashlib
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


def run_paths(items: Sequence[str | os.PathLike]) -> list[tuple[Path, str]]:
    """The run files named by ``items``, each with the name provenance records: files as given
    (recorded by file name), folders searched for ``*.nc`` (recorded as ``FOLDER/relative
    path``), so no machine path enters a model file that may be committed."""
    paths: list[tuple[Path, str]] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            found = sorted(path.rglob("*.nc"))
            if not found:
                raise ValueError(f"--from-runs {str(item)!r}: no run files (*.nc) in this folder")
            base = path.resolve().name
            paths += [(f, f"{base}/{f.relative_to(path).as_posix()}") for f in found]
        elif path.is_file():
            paths.append((path, path.name))
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
        config = json.loads(attrs.get("config_json", "{}"))
        identity = {"algorithm": str(ds["algorithm"].values[0]),
                    "benchmark": str(ds["benchmark"].values[0]),
                    "seed": int(ds["seed"].values[0]), "clock": model.get("clock", "unknown"),
                    "versions": attrs.get("versions_json", "{}"),
                    "options": json.dumps((config.get("algorithm") or {}).get("options"),
                                          sort_keys=True)}
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


def _pool(runs: Sequence[Mapping[str, tuple[list, list]]]) -> dict[str, tuple[np.ndarray, ...]]:
    """{phase: (sizes, seconds)} of ``runs`` pooled."""
    pooled: dict[str, tuple[list, list]] = {}
    for samples in runs:
        for phase, (n, s) in samples.items():
            pooled.setdefault(phase, ([], []))
            pooled[phase][0].extend(n)
            pooled[phase][1].extend(s)
    return {phase: (np.asarray(n, float), np.asarray(s, float))
            for phase, (n, s) in pooled.items()}


def _fit_phases(runs: Sequence[Mapping[str, tuple[list, list]]], degree: int
                ) -> tuple[dict[str, list[float]], dict[str, dict[str, float]]]:
    """Fit R_p(n) to every phase of ``runs`` that took any time: (coefficients, fit errors)."""
    phases, errors = {}, {}
    for phase, (n, s) in sorted(_pool(runs).items()):
        if len(n) < degree + 1:
            raise ValueError(f"--from-runs: phase {phase!r} has {len(n)} post-warm-up "
                             f"iterations, fewer than the {degree + 1} coefficients of degree "
                             f"{degree}; give longer runs or a lower --degree")
        if not np.any(s > 0):
            continue  # a phase the algorithm never uses: nothing to charge
        phases[phase], errors[phase] = fit_polynomial(n, s, degree)
    return phases, errors


def _predict(coefficients: Sequence[float], n: np.ndarray) -> np.ndarray:
    return sum(a * n**i for i, a in enumerate(coefficients))


def leave_one_run_out(runs: Sequence[Mapping[str, tuple[list, list]]], labels: Sequence[str],
                      degree: int) -> dict[str, Any]:
    """Each run predicted by the model fitted to the other runs: per phase the RMS error over
    the held-out iterations (and the mean bias, measured minus predicted), per run its total
    charged compute measured vs predicted. Why per run: the total is what sets a run's number
    of queries, so its error is the error of a replay's timeline."""
    residuals: dict[str, list[np.ndarray]] = {}
    measured_by_phase: dict[str, list[np.ndarray]] = {}
    totals = []
    for k, held in enumerate(runs):
        phases, _ = _fit_phases([r for j, r in enumerate(runs) if j != k], degree)
        measured = predicted = 0.0
        for phase, (n, s) in held.items():
            n, s = np.asarray(n, float), np.asarray(s, float)
            guess = _predict(phases.get(phase, [0.0]), n)
            residuals.setdefault(phase, []).append(s - guess)
            measured_by_phase.setdefault(phase, []).append(s)
            measured += float(np.sum(s))
            predicted += float(np.sum(guess))
        totals.append({"run": labels[k], "measured_s": measured, "predicted_s": predicted,
                       "relative_error": (predicted - measured) / measured if measured > 0
                       else 0.0})
    per_phase = {}
    for phase, parts in sorted(residuals.items()):
        r = np.concatenate(parts)
        mean = float(np.mean(np.concatenate(measured_by_phase[phase])))
        if mean <= 0 or r.size == 0:
            continue
        rmse = float(np.sqrt(np.mean(r**2)))
        per_phase[phase] = {"points": int(r.size), "rmse_s": rmse, "relative_rmse": rmse / mean,
                            "mean_bias_s": float(np.mean(r))}
    errors = np.array([t["relative_error"] for t in totals])
    return {
        "method": "leave-one-run-out: each run predicted by the model fitted to the others",
        "phases": per_phase,
        "run_totals": {
            "relative_rmse": float(np.sqrt(np.mean(errors**2))),
            "max_abs_relative_error": float(np.max(np.abs(errors))),
            "runs": totals,
        },
    }


def calibrate_from_runs(items: Sequence[str | os.PathLike], out: str | os.PathLike, *,
                        degree: int = 2, name: str | None = None,
                        note: str | None = None) -> Path:
    """Fit R_p(n) per phase to the measured runs named by ``items``; write the model, its fit
    error, its leave-one-run-out error (two runs or more) and its provenance to ``out``
    (atomically, only when everything is valid). ``note``: free provenance text. Returns
    ``out``."""
    if isinstance(degree, bool) or not isinstance(degree, int) or not 0 <= degree <= MAX_DEGREE:
        raise ValueError(f"--degree must be an integer in [0, {MAX_DEGREE}], got {degree!r}")
    paths = run_paths(items)
    identities, runs = [], []
    for path, _ in paths:
        identity, samples = _samples(path)
        identities.append(identity)
        runs.append(samples)
    algorithms = sorted({i["algorithm"] for i in identities})
    if len(algorithms) > 1:
        raise ValueError(f"--from-runs: runs of {len(algorithms)} algorithms "
                         f"({', '.join(algorithms)}): a response-time model describes one "
                         "algorithm; calibrate each from its own runs")
    phases, errors = _fit_phases(runs, degree)
    if not phases:
        raise ValueError("--from-runs: every measured phase took 0 s: nothing to fit")
    labels = [label for _, label in paths]
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
    }
    if len(runs) > 1:
        model["validation"] = leave_one_run_out(runs, labels, degree)
    model["source"] = _provenance(paths, identities, note)
    return _write_yaml(model, out)


def _provenance(paths: Sequence[tuple[Path, str]], identities: Sequence[Mapping[str, Any]],
                note: str | None) -> dict[str, Any]:
    """Which runs (name, benchmark, seed, SHA-256), what they record (versions, options) and
    where the calibration ran."""
    runs = []
    for (path, label), identity in zip(paths, identities, strict=True):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        runs.append({"file": label, "benchmark": identity["benchmark"],
                     "seed": identity["seed"], "sha256": digest})
    source: dict[str, Any] = {
        "n_runs": len(runs),
        "runs": runs,
        "benchmarks": sorted({i["benchmark"] for i in identities}),
        "seeds": sorted({i["seed"] for i in identities}),
        "clock": sorted({str(i["clock"]) for i in identities}),
        "versions": [json.loads(v) for v in sorted({i["versions"] for i in identities})],
        "algorithm_options": [json.loads(v) for v in sorted({i["options"] for i in identities})],
        "calibrated_on": {"platform": platform.platform(), "processor": platform.processor(),
                          "cpus": os.cpu_count()},
    }
    if note:
        source["note"] = note
    return source


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
