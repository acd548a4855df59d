"""Wall time of the public W-DBO code's fit (``gpytorch-adam``) and of whole paper-preset runs,
before and after a change, with a check that every result is bit-identical.

``w-dbo-paper`` and ``bolt-paper`` refit a GPyTorch-style GP from scratch at every tell and
after every removal (150 Adam steps, tvbo.gp.fit_modes), which bounds a campaign of the BOLT
table. This script measures, in fresh ``python`` processes with one BLAS thread:

* ``fit n=..``: CPU time of one ``fit_hyperparameters(gp, mode="gpytorch-adam",
  mode_options={"time_scale": 600})`` (the paper presets' fit) on a spatio-temporal GP sample at
  n points (d = 3), median over ``--fits`` datasets;
* ``<algorithm>/<benchmark>``: wall and CPU time of one ``tvbo.simulate`` run (seed 0,
  ``counted`` compute, ``--profile``; oracle and engine included: what a job pays), and the
  share of its CPU time spent inside fits (``FitMode.fit``, timed by this script).

``--base COMMIT`` also measures the tvbo package of that commit (``git archive`` into a scratch
folder), interleaving the two versions ``--repeats`` times and keeping each one's fastest
measurement (the machine may be busy); it prints both, the speed-up, and whether the fitted
hyperparameters and every run's data variables (tvbo.testing.preset_grid.digest_dataset) are
identical. Without ``--base`` only the working tree is measured.

Run::

    python benchmarks/paper_fit_speed.py --base 3100410 --repeats 3
    python benchmarks/paper_fit_speed.py --sizes 32 64 128 --runs none   # fits only
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = ("w-dbo-paper/eggholder", "bolt-paper/eggholder", "w-dbo-paper/hartmann3",
        "bolt-paper/hartmann3")


def worker(args: argparse.Namespace) -> dict:
    """Measure the tvbo on sys.path (run in a fresh process); a JSON-able dict."""
    import hashlib

    import numpy as np

    import tvbo
    from tvbo.gp.exact import ExactGP
    from tvbo.gp.fit import fit_hyperparameters
    from tvbo.gp.fit_modes import FitMode
    from tvbo.gp.kernels import Hyperparameters, SeparableKernel

    out: dict = {"tvbo": str(Path(tvbo.__file__).parent)}
    truth = Hyperparameters(1.0, 0.3, 80.0, 0.02)
    kernel = SeparableKernel("matern52", "matern32")
    for n in args.sizes:
        times, digest = [], hashlib.sha256()
        for seed in range(args.fits):
            rng = np.random.default_rng(seed)
            X = rng.random((n, 3))
            T = np.sort(rng.random(n) * 600.0)
            K = kernel.matrix(X, T, X, T, truth) + truth.noise_var * np.eye(n)
            y = np.linalg.cholesky(K) @ rng.standard_normal(n)
            gp = ExactGP(kernel, Hyperparameters(1.0, 0.5, 100.0, 0.1))
            gp.set_data(X, T, y)
            start = time.thread_time()
            res = fit_hyperparameters(gp, mode="gpytorch-adam",
                                      mode_options={"time_scale": 600.0})
            times.append(time.thread_time() - start)
            digest.update(repr(sorted(res.hyperparameters.as_dict().items())).encode())
            digest.update(repr(res.lml).encode())
        out[f"fit n={n}"] = {"seconds": float(np.median(times)), "digest": digest.hexdigest()}
    from tvbo.testing.preset_grid import digest_dataset

    for key in args.runs:
        algorithm, benchmark = key.split("/")
        fit_cpu: list[float] = []
        original = FitMode.fit

        def timed(self, *a, _orig=original, _sink=fit_cpu, **kw):
            t0 = time.thread_time()
            try:
                return _orig(self, *a, **kw)
            finally:
                _sink.append(time.thread_time() - t0)

        FitMode.fit = timed  # every fit of the paper presets is a FitMode's
        try:
            wall, cpu = time.perf_counter(), time.process_time()
            ds = tvbo.simulate(benchmark, algorithm, seed=0, compute="counted",
                               profile=args.profile)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        finally:
            FitMode.fit = original
        digest = hashlib.sha256(json.dumps(digest_dataset(ds), sort_keys=True).encode())
        out[key] = {"seconds": wall, "cpu": cpu, "fit_cpu": float(sum(fit_cpu)),
                    "fits": len(fit_cpu), "digest": digest.hexdigest()}
    return out


def run_worker(pythonpath: Path, args: argparse.Namespace) -> dict:
    env = dict(os.environ, PYTHONPATH=str(pythonpath), OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", MPLBACKEND="Agg")
    cmd = [sys.executable, __file__, "--worker", "--sizes", *map(str, args.sizes),
           "--fits", str(args.fits), "--profile", args.profile, "--runs", *args.runs]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"worker on {pythonpath} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def best_of(results: list[dict]) -> dict:
    """Each measurement's fastest repeat (the digests must agree across repeats)."""
    best: dict = {}
    for res in results:
        for key, row in res.items():
            if key == "tvbo":
                continue
            if key not in best or row["seconds"] < best[key]["seconds"]:
                if key in best and best[key]["digest"] != row["digest"]:
                    raise SystemExit(f"{key}: results differ between repeats")
                best[key] = row
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", metavar="COMMIT", help="also measure this commit's tvbo")
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 64, 128])
    parser.add_argument("--fits", type=int, default=5, help="datasets per size (median)")
    parser.add_argument("--runs", nargs="+", default=list(RUNS),
                        help="algorithm/benchmark runs ('none': no runs)")
    parser.add_argument("--profile", default="botorch-i9-laptop")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.runs == ["none"]:
        args.runs = []
    if args.worker:
        print(json.dumps(worker(args)))
        return
    versions = {"working tree": ROOT}
    with tempfile.TemporaryDirectory(prefix="tvbo-base-") as scratch:
        if args.base:
            archive = subprocess.run(["git", "archive", args.base, "tvbo"], cwd=ROOT,
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", scratch], input=archive, check=True)
            versions = {f"base {args.base}": Path(scratch), "working tree": ROOT}
        results: dict[str, list[dict]] = {name: [] for name in versions}
        for _ in range(args.repeats):
            for name, path in versions.items():
                results[name].append(run_worker(path, args))
    best = {name: best_of(rows) for name, rows in results.items()}
    names = list(best)
    print(f"gpytorch-adam fits and paper-preset runs (profile {args.profile}, seed 0, one BLAS "
          f"thread, fastest of {args.repeats}); fit: CPU s per fit; run: wall s (CPU s, fit "
          "share of CPU)")
    header = f"{'':24s}" + "".join(f"{name:>26s}" for name in names)
    if len(names) == 2:
        header += f"{'speed-up':>10s} {'identical':>10s}"
    print(header)
    for key in best[names[-1]]:
        cells = []
        for name in names:
            row = best[name][key]
            if key.startswith("fit "):
                cells.append(f"{1e3 * row['seconds']:>23.1f} ms")
            else:
                share = row["fit_cpu"] / row["cpu"] if row["cpu"] else float("nan")
                cells.append(f"{row['seconds']:>10.2f} s ({row['cpu']:.2f} s, {share:4.0%})")
        line = f"{key:24s}" + "".join(f"{c:>26s}" for c in cells)
        if len(names) == 2:
            a, b = best[names[0]][key], best[names[1]][key]
            line += f"{a['seconds'] / b['seconds']:>9.2f}x {str(a['digest'] == b['digest']):>10s}"
        print(line)


if __name__ == "__main__":
    main()
