"""Where a run's wall time goes, and what a campaign costs on N cores.

For the seeds (``--seeds``, default 0) of each benchmark of a study config (default
``config/bolt_paper.yaml``) and each algorithm (default W-DBO and BOLT), runs the study's runs
exactly as the workflow's jobs do: each benchmark's shared f*(t) table built once beforehand
(``tvbo oracle``, as rule ``oracle_table``; ``--no-oracle-tables`` for the old per-run build),
then one fresh ``python`` process per group of ``runs_per_job`` seeds (the study's key, or
``--runs-per-job``; as ``tvbo run-many``), with the study's compute model, profile, cost table,
horizon and warm-up and one BLAS thread. Each run's wall time is split into

``algorithm``  wall time inside the algorithm's own calls (``setup``, ``propose``, ``ingest``,
               ``side_queries``, ``ingest_side``): the only part the virtual clock is about;
``oracle``     wall time inside the benchmark's f* oracle (``f_star``, ``refine_f_star``,
               ``argmax``): the f* table build on first use plus every refinement the engine
               and the recorder ask for (the build alone is printed in the summary, when the
               benchmark's oracle object has a ``_build`` method);
``engine``     the rest of ``tvbo.simulate``: SimPy, objective evaluations, the recorder, the
               run Dataset and its metrics;
``startup``    interpreter start, imports and exit, shared equally by the runs of the process
               (1/n each with n runs per job), plus building this run's benchmark and
               algorithm objects;
``record``     writing the run file (``tvbo.results.io.write_run``, as ``tvbo run`` does).

and prints, per run, the share of the wall time spent outside the algorithm's own compute.

``--split`` (issue 27, item 1) prints the study's CPU seconds by algorithm, by benchmark and by
part: start-up (interpreter, imports, building the objects; 1/n of the process per run), the
algorithm's work phases (``fit``, ``acquisition``, ``cleaning`` and the rest of its calls, from
the CPU clock of ``tvbo.work`` phases), the oracle, the engine and the run file's I/O. Every part
is measured in CPU seconds (user + system: a machine busy with other jobs stretches wall time,
not CPU time), per measured run, and extrapolated to the study's runs cell by cell (a cell not
measured is priced like its algorithm's measured runs, else like the mean measured run; the
output states the sample size and lists those cells). ``--algorithms all`` measures every
algorithm of the study::

    python benchmarks/throughput.py --config config/bolt_paper.yaml --algorithms all \
        --seeds 0 --split --save split.json The
judged metric of issue 14: for the median run of ``bolt_paper`` this share must be at most 30 %.
The timers wrap the benchmark's and the algorithm's methods on the instances of this script only
(perf_counter around each call, re-entrant calls counted once); the engine itself is unchanged.

Then it estimates the study's wall time on ``--cores`` cores from the measured per-run wall times:
each (benchmark, algorithm) of the study costs the mean measured wall time of that benchmark's
runs (algorithms that were not measured are assumed to cost like the measured ones; give
``--algorithms`` all of them for an honest estimate), and the runs are scheduled longest first
on the cores (LPT list scheduling, what Snakemake's greedy scheduler approaches).

``--dry-estimate`` only estimates (never runs Snakemake); with ``--load`` it skips the
measurements and estimates from a JSON file saved earlier with ``--save``. ``--real`` runs
Snakemake on a small grid (the measured benchmarks x algorithms x the seed, into a scratch
campaign ``results/throughput_probe/``, removed afterwards unless ``--keep``) and prints its wall
time beside the estimate for the same grid (the difference is Snakemake's own overhead: DAG,
config validation, job start-up and the merge).

Usage::

    python benchmarks/throughput.py --benchmarks shekel hartmann3 eggholder --save tp.json
    python benchmarks/throughput.py --campaign config/bolt_paper.yaml --cores 2 --dry-estimate \
        --load tp.json
    python benchmarks/throughput.py --benchmarks eggholder --algorithms w-dbo --real --cores 2

Real-data benchmarks read their prepared field from ``--data-dir`` (``data/`` after a workflow
run).
"""

from __future__ import annotations

import time

_T0 = time.perf_counter()  # first thing the worker process does: start of "startup"

import argparse  # noqa: E402  (stdlib only above the timer's reach)
import heapq  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PROBE = "throughput_probe"

DATA_FILES = {
    "temperature": "intel/intel_*.nc",
    "temperature-sensors": "intel/intel_*.nc",
    "ozone": "ozone/ozone_*.nc",
    "ozone-sensors": "ozone/ozone_*.nc",
}
ALGORITHM_CALLS = ("setup", "propose", "ingest", "side_queries", "ingest_side")
ORACLE_CALLS = ("f_star", "refine_f_star", "refine_f_star_many", "argmax")
PARTS = ("algorithm", "oracle", "engine", "startup", "record")


# -- the worker: one run in its own process ------------------------------------------------------
class Stopwatch:
    """Accumulates wall time of wrapped calls; a call made inside another one is not re-counted."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.cpu = 0.0  # process CPU seconds (user + system) of the same calls
        self.calls = 0
        self._depth = 0

    def wrap(self, obj: object, names: tuple[str, ...]) -> None:
        """Replace the bound methods ``names`` of ``obj`` (the instance only) by timed ones."""
        for name in names:
            method = getattr(obj, name, None)
            if callable(method):
                setattr(obj, name, self._timed(method))

    def _timed(self, method):
        def timed(*args, **kwargs):
            if self._depth:
                return method(*args, **kwargs)
            self._depth += 1
            start, cpu = time.perf_counter(), time.process_time()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.cpu += time.process_time() - cpu
                self.calls += 1
                self._depth -= 1

        return timed


def watch_phases() -> dict[str, float]:
    """Accumulate the CPU seconds of every work phase (``WorkCounter.phase``: fit, clean,
    acquisition, update, side) in this process: the engine clears its counter every iteration,
    so the totals are taken just before each clear. Returns the (live) totals."""
    from tvbo.work import WorkCounter

    totals: dict[str, float] = {}
    clear = WorkCounter.clear

    def clear_and_keep(self) -> None:
        for phase, seconds in self.cpu_seconds().items():
            totals[phase] = totals.get(phase, 0.0) + seconds
        clear(self)

    WorkCounter.clear = clear_and_keep
    return totals


def worker(job: dict) -> list[dict]:
    """Run the seeds of ``job`` one after another in this process, as ``tvbo run-many`` does
    (one seed: as ``tvbo run`` does), with stopwatches on the algorithm and the oracle."""
    from tvbo import algorithms, benchmarks, simulate  # what `tvbo run` imports, and make()
    from tvbo.results.io import write_run

    phases = watch_phases()
    rows = []
    for seed in job["seeds"]:
        options = dict(job["benchmark_options"])
        t0, c0 = time.perf_counter(), time.process_time()
        bench = benchmarks.make(
            job["benchmark"], horizon=job["horizon"], cost_table=job["cost_table"],
            cost=options.pop("cost", None), noise_var=options.pop("noise_var", None),
            **(options.get("options") or {}),
        )
        algo = algorithms.make(job["algorithm"], **(job.get("algorithm_options") or {}))
        algo_watch, oracle_watch, build_watch = Stopwatch(), Stopwatch(), Stopwatch()
        algo_watch.wrap(algo, ALGORITHM_CALLS)
        oracle_watch.wrap(bench, ORACLE_CALLS)
        oracle = getattr(bench, "oracle", None)  # the f* table (TimeGridOracle), if any
        build_watch.wrap(oracle, ("_build",))
        cpu0 = time.process_time()
        before = dict(phases)
        t1 = time.perf_counter()
        ds = simulate(bench, algo, seed=seed, compute=job["compute"], profile=job["profile"],
                      warmup=job["warmup"], cost_table=job["cost_table"], threads=1,
                      oracle_table=job.get("oracle_table"))
        t2, c3 = time.perf_counter(), time.process_time()
        with tempfile.TemporaryDirectory() as tmp:
            write_run(ds, Path(tmp) / "run.nc")
        t3 = time.perf_counter()
        ds = ds.squeeze()
        rows.append({
            **{k: job[k] for k in ("benchmark", "algorithm")},
            "seed": seed,
            "runs_in_process": len(job["seeds"]),
            "horizon": float(ds.attrs["horizon"]),
            "iterations": int(ds["n_iterations"]),
            "final_size": int(ds["final_dataset_size"]),
            "run_span": t3 - t0,  # making the objects, simulating and writing this run
            "make_s": t1 - t0,
            "simulate": t2 - t1,
            "algorithm_s": algo_watch.seconds,
            "oracle_s": oracle_watch.seconds,
            "oracle_calls": oracle_watch.calls,
            "oracle_build_s": build_watch.seconds,  # part of oracle_s: the f* grid's build
            "record_s": t3 - t2,
            "cpu": time.process_time() - cpu0,
            "make_cpu": cpu0 - c0,
            "algorithm_cpu": algo_watch.cpu,
            "oracle_cpu": oracle_watch.cpu,
            "record_cpu": time.process_time() - c3,
            # the algorithm's own CPU by work phase (tvbo.work phases, see PHASES)
            **{f"phase_{p}": phases.get(p, 0.0) - before.get(p, 0.0)
               for p in set(phases) | set(before)},
        })
    return rows


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(job: dict) -> list[dict]:
    """The seeds of ``job`` in one fresh interpreter, timed from outside (process wall and CPU)
    and inside (parts). The process's start-up and exit (interpreter, imports, everything outside
    the runs' own spans) is shared equally by its runs: with ``runs_per_job`` n, each run of a
    workflow job pays 1/n of it."""
    start, cpu = time.perf_counter(), _children_cpu()
    proc = subprocess.run([sys.executable, __file__, "--worker", json.dumps(job)],
                          capture_output=True, text=True, cwd=REPO)
    wall, process_cpu = time.perf_counter() - start, _children_cpu() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"{job['benchmark']}/{job['algorithm']} failed:\n{proc.stderr}")
    rows = json.loads(proc.stdout.strip().splitlines()[-1])
    shared = (wall - sum(r["run_span"] for r in rows)) / len(rows)
    shared_cpu = (process_cpu - sum(r["make_cpu"] + r["cpu"] for r in rows)) / len(rows)
    for row in rows:
        row["wall"] = row["run_span"] + shared
        row["startup_s"] = shared + row["make_s"]
        row["engine_s"] = row["simulate"] - row["algorithm_s"] - row["oracle_s"]
        row["outside_share"] = 1.0 - row["algorithm_s"] / row["wall"]
        # the same split in CPU seconds (a loaded machine stretches wall time, not CPU time)
        row["startup_cpu"] = max(shared_cpu, 0.0) + row["make_cpu"]
        row["engine_cpu"] = (row["cpu"] - row["record_cpu"] - row["algorithm_cpu"]
                             - row["oracle_cpu"])
        row["total_cpu"] = row["startup_cpu"] + row["cpu"]
    return rows


# -- the study ------------------------------------------------------------------------------------
def _data_path(benchmark: str, data_dir: Path) -> str | None:
    pattern = DATA_FILES.get(benchmark)
    if pattern is None:
        return None
    found = sorted(data_dir.glob(pattern))
    if not found:
        raise SystemExit(
            f"{benchmark} needs a prepared data file {data_dir / pattern}: run the workflow's data "
            "rules first (e.g. snakemake --configfile config/realdata_offline.yaml data) or pass "
            "--data-dir"
        )
    return str(found[0])


def jobs_of(study: dict, benchmarks: list[str], algorithms: list[str], seeds: list[int],
            data_dir: Path, runs_per_job: int = 1) -> list[dict]:
    """The processes to measure, with the study's settings: per (benchmark, algorithm), the
    seeds in groups of ``runs_per_job`` (one process each, as the workflow's jobs)."""
    jobs = []
    for benchmark in benchmarks:
        options = dict(study.get("benchmark_options", {}).get(benchmark, {}))
        path = _data_path(benchmark, data_dir)
        if path is not None:
            options["options"] = {**options.get("options", {}), "path": path}
        for algorithm, i in ((a, i) for a in algorithms
                             for i in range(0, len(seeds), runs_per_job)):
            jobs.append({
                "benchmark": benchmark,
                "algorithm": algorithm,
                "algorithm_options": study.get("algorithm_options", {}).get(algorithm, {}),
                "seeds": list(seeds[i : i + runs_per_job]),
                "compute": study.get("compute", "counted"),
                "profile": study.get("profile"),
                "horizon": study.get("horizon"),
                "cost_table": study.get("cost_table", "metronome"),
                "warmup": study.get("warmup", 15),
                "benchmark_options": options,
            })
    return jobs


def _venv_env() -> dict[str, str]:
    """The environment with this interpreter's scripts first on PATH: Snakemake and the rules'
    ``tvbo`` commands are this venv's even when it is not activated."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def build_tables(jobs: list[dict], folder: Path) -> dict[str, float]:
    """Build each benchmark's shared f*(t) table once, as the workflow's ``oracle_table`` rule
    does (``tvbo oracle``, one process per benchmark), and point the jobs at it. Returns the
    wall seconds of each build (a campaign pays it once per benchmark, not per run)."""
    from tvbo.benchmarks.oracle_table import NO_TABLE_NEEDED

    seconds: dict[str, float] = {}
    for job in jobs:
        name = job["benchmark"]
        if name in NO_TABLE_NEEDED:
            continue
        out = folder / f"{name}.npz"
        if name not in seconds:
            options = dict(job["benchmark_options"])
            # this interpreter's tvbo: the script works from a venv that is not activated
            args = [sys.executable, "-m", "tvbo", "oracle", "--benchmark", name,
                    "--cost-table", job["cost_table"], "--out", str(out)]
            if job["horizon"] is not None:
                args += ["--horizon", repr(float(job["horizon"]))]
            for key, flag in (("cost", "--cost"), ("noise_var", "--noise-var")):
                if options.get(key) is not None:
                    args += [flag, repr(float(options[key]))]
            if options.get("options"):
                args += ["--benchmark-options", json.dumps(options["options"], sort_keys=True)]
            start = time.perf_counter()
            proc = subprocess.run(args, capture_output=True, text=True, cwd=REPO)
            if proc.returncode != 0:
                raise SystemExit(f"tvbo oracle {name} failed:\n{proc.stderr}")
            seconds[name] = time.perf_counter() - start
        job["oracle_table"] = str(out)
    return seconds


def makespan(durations: list[float], cores: int) -> float:
    """Wall time of running ``durations`` on ``cores`` workers, longest first (LPT)."""
    loads = [0.0] * cores
    for d in sorted(durations, reverse=True):
        heapq.heapreplace(loads, loads[0] + d)
    return max(loads)


def estimate(rows: list[dict], study: dict, cores: int, benchmarks: list[str] | None = None,
             algorithms: list[str] | None = None, seeds: list | None = None,
             runs_per_job: int | None = None) -> dict:
    """Estimated wall time of a grid from the measured rows (see the module docstring); the
    scheduled jobs are the workflow's: the seeds of each (benchmark, algorithm, speed) in
    groups of ``runs_per_job`` (default: the study's)."""
    per_job = runs_per_job or int(study.get("runs_per_job", 1))
    benchmarks = benchmarks or study["benchmarks"]
    algorithms = algorithms or study["algorithms"]
    seeds = seeds or study["seeds"]
    speeds = study.get("speeds", [1.0])
    durations, missing = [], []
    for b in benchmarks:
        for a in algorithms:
            own = [r["wall"] for r in rows if r["benchmark"] == b and r["algorithm"] == a]
            same = own or [r["wall"] for r in rows if r["benchmark"] == b]
            if not same:
                missing.append(b)
                same = [r["wall"] for r in rows]
            groups = [len(seeds[i : i + per_job]) for i in range(0, len(seeds), per_job)]
            durations += [statistics.fmean(same) * n for n in groups] * len(speeds)
    runs = len(benchmarks) * len(algorithms) * len(seeds) * len(speeds)
    return {"runs": runs, "jobs": len(durations), "cpu_hours": sum(durations) / 3600,
            "wall_hours": makespan(durations, cores) / 3600, "cores": cores,
            "unmeasured_benchmarks": sorted(set(missing))}


def real_campaign(study: dict, benchmarks: list[str], algorithms: list[str], seeds: list[int],
                  cores: int, keep: bool) -> float:
    """Run Snakemake on the small grid (runs + merge) and return its wall time in seconds."""
    import yaml

    config = {**study, "campaign": PROBE, "benchmarks": benchmarks, "algorithms": algorithms,
              "seeds": list(seeds)}
    out = REPO / "results" / PROBE
    if out.exists():
        shutil.rmtree(out)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "probe.yaml"
        path.write_text(yaml.safe_dump(config))
        start = time.perf_counter()
        proc = subprocess.run(
            ["snakemake", f"results/{PROBE}/campaign.nc", "--cores", str(cores),
             "--replace-workflow-config", "--configfile", str(path)],
            cwd=REPO, capture_output=True, text=True, env=_venv_env())
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"snakemake failed:\n{proc.stderr[-3000:]}")
    if not keep:
        shutil.rmtree(out, ignore_errors=True)
    return wall


# -- report ---------------------------------------------------------------------------------------
def print_header() -> None:
    print(f"{'benchmark':>12} {'algorithm':>8} {'iters':>5} {'|D|':>4} {'wall':>7} "
          + " ".join(f"{p:>9}" for p in PARTS) + f" {'outside':>8}")
    print(f"{'':>12} {'':>8} {'':>5} {'':>4} {'[s]':>7} " + " ".join(f"{'[s]':>9}" for _ in PARTS)
          + f" {'[%]':>8}")


def print_row(r: dict) -> None:
    print(f"{r['benchmark']:>12} {r['algorithm']:>8} {r['iterations']:>5d} "
          f"{r['final_size']:>4d} {r['wall']:>7.2f} "
          + " ".join(f"{r[p + '_s']:>9.2f}" for p in PARTS)
          + f" {100 * r['outside_share']:>8.1f}", flush=True)


def summary(rows: list[dict]) -> None:
    total = sum(r["wall"] for r in rows)
    print("\nshare of all measured wall time: " + ", ".join(
        f"{p} {100 * sum(r[p + '_s'] for r in rows) / total:.1f} %" for p in PARTS))
    shares = sorted(r["outside_share"] for r in rows)
    median = statistics.median(shares)
    verdict = "meets" if median <= 0.30 else "misses"
    print(f"time outside the algorithm's own compute, median run: {100 * median:.1f} % "
          f"(issue 14 target <= 30 %: {verdict}); range {100 * shares[0]:.1f}-"
          f"{100 * shares[-1]:.1f} %")
    # what-if: the same runs with a free oracle (a shared, precomputed f* table)
    free = statistics.median(1.0 - r["algorithm_s"] / (r["wall"] - r["oracle_s"]) for r in rows)
    print(f"  ... with a free oracle (what-if): median {100 * free:.1f} %")
    build = sum(r.get("oracle_build_s", 0.0) for r in rows)
    oracle = sum(r["oracle_s"] for r in rows)
    print(f"oracle: {build:.1f} s building f* tables + {oracle - build:.1f} s refining "
          f"(of {oracle:.1f} s)")
    print(f"virtual seconds per process wall second: "
          f"{sum(r['horizon'] for r in rows) / total:.1f}")


#: the columns of the campaign split (CPU seconds): start-up, the algorithm's work phases, the
#: oracle, the engine and the run file's writing
SPLIT = ("start-up", "fit", "acquisition", "cleaning", "algorithm, other", "oracle", "engine",
         "I/O")


def split_of(row: dict) -> dict[str, float]:
    """One measured run's CPU seconds by part of :data:`SPLIT`. The algorithm's CPU is split by
    its work phases (``tvbo.work`` phases: ``fit``; ``clean``; ``acquisition``, the proposal
    outside any fit; the rest of the algorithm's calls: ``update``, ``side``, ``setup``)."""
    fit = row.get("phase_fit", 0.0)
    acquisition = row.get("phase_acquisition", 0.0)
    cleaning = row.get("phase_clean", 0.0)
    other = max(row["algorithm_cpu"] - fit - acquisition - cleaning, 0.0)
    return {"start-up": row["startup_cpu"], "fit": fit, "acquisition": acquisition,
            "cleaning": cleaning, "algorithm, other": other, "oracle": row["oracle_cpu"],
            "engine": max(row["engine_cpu"], 0.0), "I/O": row["record_cpu"]}


def campaign_split(rows: list[dict], study: dict) -> tuple[dict, dict, list[str]]:
    """The study's CPU seconds by (algorithm, part) and (benchmark, part), extrapolated from the
    measured runs: each (benchmark, algorithm) cell of the study costs the mean split of its
    measured runs times its runs (seeds x speeds); a cell without measured runs costs the mean of
    the algorithm's measured runs on other benchmarks, else the mean of all measured runs (both
    named in the returned notes)."""
    runs_per_cell = len(study["seeds"]) * len(study.get("speeds", [1.0]))
    by_algorithm: dict[str, dict[str, float]] = {}
    by_benchmark: dict[str, dict[str, float]] = {}
    notes: list[str] = []

    def mean(selected: list[dict]) -> dict[str, float]:
        splits = [split_of(r) for r in selected]
        return {p: statistics.fmean(s[p] for s in splits) for p in SPLIT}

    for b in study["benchmarks"]:
        for a in study["algorithms"]:
            own = [r for r in rows if r["benchmark"] == b and r["algorithm"] == a]
            if not own:
                own = [r for r in rows if r["algorithm"] == a]
                notes.append(f"{a}/{b}: priced like {a} on its measured benchmarks" if own
                             else f"{a}/{b}: never measured, priced like the mean measured run")
                own = own or rows
            cell = mean(own)
            for table, key in ((by_algorithm, a), (by_benchmark, b)):
                row = table.setdefault(key, dict.fromkeys(SPLIT, 0.0))
                for part in SPLIT:
                    row[part] += cell[part] * runs_per_cell
    return by_algorithm, by_benchmark, notes


def print_split(rows: list[dict], study: dict, name: str, tables: dict[str, float]) -> None:
    """The study's extrapolated CPU split (see :func:`campaign_split`), with the sample size."""
    by_algorithm, by_benchmark, notes = campaign_split(rows, study)
    runs = (len(study["benchmarks"]) * len(study["algorithms"]) * len(study["seeds"])
            * len(study.get("speeds", [1.0])))
    cells = {(r["benchmark"], r["algorithm"]) for r in rows}
    print(f"\nCPU split of {name}, extrapolated from {len(rows)} measured runs of {len(cells)} "
          f"of its {len(study['benchmarks']) * len(study['algorithms'])} (benchmark, algorithm) "
          f"cells ({len({r['seed'] for r in rows})} seed(s) each) to its {runs} runs; "
          f"{len(notes)} cell(s) not measured" + (":" if notes else ""))
    for note in notes[:12]:
        print(f"  {note}")
    if len(notes) > 12:
        print(f"  ... and {len(notes) - 12} more")
    width = max(len(k) for k in [*by_algorithm, *by_benchmark, "total"])
    head = f"{'':>{width}} " + " ".join(f"{p:>12}" for p in SPLIT) + f" {'total':>9}"
    total = dict.fromkeys(SPLIT, 0.0)
    for title, table in (("by algorithm [CPU s]", by_algorithm),
                         ("by benchmark [CPU s]", by_benchmark)):
        print(f"\n{title}\n{head}")
        for key, row in sorted(table.items(), key=lambda kv: -sum(kv[1].values())):
            print(f"{key:>{width}} " + " ".join(f"{row[p]:>12.0f}" for p in SPLIT)
                  + f" {sum(row.values()):>9.0f}")
            if table is by_algorithm:
                for p in SPLIT:
                    total[p] += row[p]
    grand = sum(total.values()) or 1.0
    print(f"{'total':>{width}} " + " ".join(f"{total[p]:>12.0f}" for p in SPLIT)
          + f" {grand:>9.0f}")
    print(f"{'share [%]':>{width}} " + " ".join(f"{100 * total[p] / grand:>12.1f}" for p in SPLIT))
    if tables:
        print(f"plus the shared f* tables, once per benchmark: {sum(tables.values()):.0f} s wall "
              f"({', '.join(f'{b} {s:.0f} s' for b, s in tables.items())})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", "--campaign", default="config/bolt_paper.yaml",
                        help="study config (default config/bolt_paper.yaml)")
    parser.add_argument("--algorithms", nargs="+", default=["w-dbo", "bolt"],
                        help="algorithms measured (default w-dbo bolt); 'all': the study's")
    parser.add_argument("--split", action="store_true",
                        help="print the study's CPU split by algorithm, benchmark and phase "
                        "(start-up, fit, acquisition, cleaning, oracle, engine, I/O), "
                        "extrapolated from the measured runs")
    parser.add_argument("--benchmarks", nargs="+", default=None, help="default: the study's")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0],
                        help="seeds measured per (benchmark, algorithm) (default 0)")
    parser.add_argument("--runs-per-job", type=int, default=None, metavar="N",
                        help="seeds per process, as the workflow's runs_per_job (default: the "
                        "study's, else 1); the process start-up is shared by its runs")
    parser.add_argument("--cores", type=int, default=2, help="cores of the campaign estimate")
    parser.add_argument("--data-dir", default="data")
    parser.add_argument("--save", metavar="JSON", help="write the measured rows to a file")
    parser.add_argument("--load", metavar="JSON", help="rows measured earlier (--save)")
    parser.add_argument("--dry-estimate", action="store_true",
                        help="estimate the study's wall time without running it (from --load "
                        "rows if given, else from measuring the sample first)")
    parser.add_argument("--real", action="store_true",
                        help="also run Snakemake on the measured grid and compare")
    parser.add_argument("--no-oracle-tables", dest="oracle_tables", action="store_false",
                        help="let every run build its own f* grid (the workflow with "
                        "oracle_tables: false); default: shared tables, built once per benchmark")
    parser.add_argument("--keep", action="store_true", help="keep results/throughput_probe")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return

    import yaml

    study = yaml.safe_load((REPO / args.config).read_text())
    if args.load:
        rows = json.loads(Path(args.load).read_text())
        print_header()
        for row in rows:
            print_row(row)
    else:
        benchmarks = args.benchmarks or study["benchmarks"]
        if args.algorithms == ["all"]:
            args.algorithms = list(study["algorithms"])
        per_job = args.runs_per_job or int(study.get("runs_per_job", 1))
        jobs = jobs_of(study, benchmarks, args.algorithms, args.seeds, REPO / args.data_dir,
                       per_job)
        print(f"study {args.config}: compute={study.get('compute', 'counted')} "
              f"profile={study.get('profile') or 'reference-2core'}; seeds {args.seeds}, "
              f"{per_job} run(s) per process (runs_per_job), 1 BLAS thread, processes measured "
              f"one after another\n")
        tables = tempfile.TemporaryDirectory()
        built: dict[str, float] = {}
        if args.oracle_tables:
            built = build_tables(jobs, Path(tables.name))
            print("shared f* tables (tvbo oracle, once per benchmark, not part of a run): "
                  + (", ".join(f"{b} {s:.1f} s" for b, s in built.items()) or "none needed"))
        print_header()
        rows = []
        for job in jobs:
            for row in measure(job):
                rows.append(row)
                print_row(row)
        tables.cleanup()
        if args.save:
            Path(args.save).write_text(json.dumps(rows, indent=1))
    summary(rows)
    if args.split:
        print_split(rows, study, args.config, {} if args.load else built)
    est = estimate(rows, study, args.cores, runs_per_job=args.runs_per_job)
    note = (f" (benchmarks never measured, priced at the overall mean: "
            f"{', '.join(est['unmeasured_benchmarks'])})" if est["unmeasured_benchmarks"] else "")
    measured = sorted({r["algorithm"] for r in rows})
    print(f"\nestimated {args.config}: {est['runs']} runs in {est['jobs']} jobs, "
          f"{est['cpu_hours']:.2f} CPU hours, "
          f"{est['wall_hours']:.2f} h wall on {args.cores} cores (LPT), every algorithm priced "
          f"like the measured {', '.join(measured)}{note}")
    if args.real and args.dry_estimate:
        parser.error("--real runs the campaign probe; --dry-estimate promises not to")
    if args.real:
        grid_b = sorted({r["benchmark"] for r in rows})
        grid_a = sorted({r["algorithm"] for r in rows})
        small = estimate(rows, study, args.cores, grid_b, grid_a, args.seeds,
                         args.runs_per_job)
        wall = real_campaign(study, grid_b, grid_a, args.seeds, args.cores, args.keep)
        print(f"real: snakemake --cores {args.cores} on {small['runs']} runs (+ merge): "
              f"{wall:.1f} s wall; estimate from the per-run measurements: "
              f"{3600 * small['wall_hours']:.1f} s")


if __name__ == "__main__":
    main()
