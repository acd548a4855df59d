"""What the workflow tells its user at the start and at the end (Snakefile onstart / onsuccess).

At the start (:func:`start_message`): how many runs of the campaign are still to do (run files
that do not exist yet) and an estimate of the wall time on the given cores. At the end
(:func:`summary_message`): the best algorithm per benchmark on both metrics (average query
regret and time-integrated regret, mean ± s.e. over seeds; lower is better) and where the
tables, figures and comparisons are, with the command that builds the HTML report.

The throughput model of the estimate (:func:`run_seconds`) is deliberately simple:

    wall time of one run = STARTUP_SECONDS + JOB_OVERHEAD_SECONDS
                           + iterations * SECONDS_PER_ITERATION
    iterations           = min(max_iterations, warmup + (H - warmup * c) / (c + compute))

where c is the benchmark's evaluation cost (the config's override, else its cost table) and
``compute`` the virtual compute of one iteration: :data:`PROFILE_COMPUTE_SECONDS` for the
counted model's profiles (the packaged default's small-n compute; ``botorch-i9-laptop``'s
average response time over a 600 s run, from its provenance), R(n) at n = :data:`TYPICAL_N`
for the polynomial model, the wall time per iteration itself for ``measured``; divided by the
speed.
STARTUP_SECONDS and SECONDS_PER_ITERATION were measured on the project's 2-core machine (busy
with other jobs) with ``tvbo run`` of GP-UCB on Eggholder, c = 0.5 s: 2.86 s wall for H = 10 s
(20 iterations) and 9.12 s for H = 120 s (238 iterations); the line through both points gives
2.3 s + 0.029 s per iteration. JOB_OVERHEAD_SECONDS and ANALYSIS_SECONDS (added once) come from
a small workflow run (their comments). Algorithms that keep small datasets (W-DBO, BOLT) run
faster, so the estimate errs on the long side. Runs are spread evenly over the cores.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: process start, imports, benchmark/oracle build and writing the run file (s, measured)
STARTUP_SECONDS = 2.3
#: Snakemake's own cost per run job (job start-up, the shared f* oracle tables amortised):
#: a 2 benchmarks x 2 algorithms x 2 seeds, 20 s campaign simulated its 8 runs in 22 s on 2
#: cores where STARTUP_SECONDS + SECONDS_PER_ITERATION alone predict 14 s
JOB_OVERHEAD_SECONDS = 2.0
#: the analysis jobs after the runs (merge, tables, figures, comparison, theory, fit health):
#: 30 s for that campaign on 2 cores; they grow little with the number of runs
ANALYSIS_SECONDS = 30.0
#: wall time of one simulated iteration with tvbo's numerics (s, measured; see the docstring)
SECONDS_PER_ITERATION = 0.029
#: virtual compute per post-warm-up iteration charged by a counted profile (s)
PROFILE_COMPUTE_SECONDS: dict[str, float] = {
    "reference-2core": 0.01,  # tvbo's own numerics: milliseconds at n <= 200
    # the papers' BoTorch laptop: R(n) grows from 0.3 s (n = 15) to 2.5 s (n = 128) over a
    # 600 s run; 2 s on average. Check: the model gives 1.7 h for config/bolt_paper.yaml on 2
    # cores, benchmarks/throughput.py's measured extrapolation 1.1 h (README).
    "botorch-i9-laptop": 2.0,
}
#: a dataset size typical of a campaign, to evaluate a polynomial R(n)
TYPICAL_N = 50
RUN_PATTERN = "results/{campaign}/runs/{benchmark}/{algorithm}/seed{seed}_speed{speed}.nc"
METRICS: dict[str, str] = {
    "average_regret": "average query regret",
    "time_integrated_regret": "time-integrated regret",
}


# -- the start ------------------------------------------------------------------------------------
def run_paths(config: Mapping[str, Any], root: str | Path = ".") -> list[Path]:
    """Every run file of the campaign (the workflow's RUN_PATTERN)."""
    root = Path(root)
    return [
        root / RUN_PATTERN.format(
            campaign=config["campaign"], benchmark=b, algorithm=a, seed=s, speed=repr(float(v))
        )
        for b in config["benchmarks"]
        for a in config["algorithms"]
        for s in config["seeds"]
        for v in config["speeds"]
    ]


def _benchmark_row(config: Mapping[str, Any], benchmark: str) -> dict[str, Any]:
    from tvbo.benchmarks.tables import COST_TABLES

    table = COST_TABLES.get(str(config.get("cost_table") or "metronome"), {})
    return dict(table.get(benchmark, {}))


def compute_seconds(config: Mapping[str, Any], speed: float) -> float:
    """Virtual compute per post-warm-up iteration assumed by the model (see module docstring)."""
    model = str(config.get("compute") or "counted")
    if model == "polynomial":
        coefficients = [float(a) for a in config.get("polynomial") or [0.0]]
        value = sum(a * TYPICAL_N**i for i, a in enumerate(coefficients))
    elif model == "measured":
        value = SECONDS_PER_ITERATION
    else:
        profile = config.get("profile") or "reference-2core"
        value = PROFILE_COMPUTE_SECONDS.get(Path(str(profile)).stem, 0.01)
    return value / max(float(speed), 1e-12)


def iterations(config: Mapping[str, Any], benchmark: str, speed: float = 1.0) -> float:
    """Expected iterations of one run (module docstring's model)."""
    row = _benchmark_row(config, benchmark)
    override = (config.get("benchmark_options") or {}).get(benchmark) or {}
    cost = float(override.get("cost", row.get("cost", 0.1)) or 0.0)
    horizon = float(config.get("horizon") or row.get("horizon") or 600.0)
    warmup = int(config.get("warmup") or 0)
    step = cost + compute_seconds(config, speed)
    rest = max(horizon - warmup * cost, 0.0)
    count = warmup + (rest / step if step > 0 else 1e6)
    cap = config.get("max_iterations")
    return float(min(count, cap)) if cap else float(count)


def run_seconds(config: Mapping[str, Any], benchmark: str, speed: float = 1.0) -> float:
    """Estimated wall time of one run job in the workflow (s)."""
    return (STARTUP_SECONDS + JOB_OVERHEAD_SECONDS
            + iterations(config, benchmark, speed) * SECONDS_PER_ITERATION)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def start_message(config: Mapping[str, Any], cores: int | None, root: str | Path = ".") -> str:
    """``tvbo: campaign X: N of M runs to do; estimated ...`` (two lines)."""
    paths = run_paths(config, root)
    pending = [p for p in paths if not p.exists()]
    cores = max(int(cores or 1), 1)
    total = 0.0
    for path in pending:
        speed = float(path.stem.split("_speed", 1)[1])
        total += run_seconds(config, path.parent.parent.name, speed)
    # whole runs cannot be split: the longest run bounds the wall time from below
    longest = max((run_seconds(config, str(b), float(v)) for b in config["benchmarks"]
                   for v in config["speeds"]), default=0.0)
    eta = max(total / min(cores, max(len(pending), 1)), longest if pending else 0.0)
    eta += ANALYSIS_SECONDS
    head = f"tvbo: campaign {config['campaign']}: {len(pending)} of {len(paths)} runs to do"
    if not pending:
        return head + " (all runs exist; only the analysis steps may run)"
    return (
        f"{head}; estimated wall time ~{_duration(eta)} on {cores} core(s)\n"
        f"      (estimate: {STARTUP_SECONDS + JOB_OVERHEAD_SECONDS:g} s + "
        f"{SECONDS_PER_ITERATION} s per simulated iteration per run, iterations = horizon / "
        f"(cost + profile compute), + {ANALYSIS_SECONDS:g} s of analysis; measured on a "
        "2-core machine, see tvbo/workflow_messages.py)"
    )


# -- the end --------------------------------------------------------------------------------------
def best_per_benchmark(campaign: Any) -> list[dict[str, Any]]:
    """Per (benchmark[, speed]) and metric: the algorithm with the lowest mean, mean ± s.e., n
    (reference policies, the floor rows, only when nothing else ran).

    Rows: benchmark, speed (or None), metric, algorithm, label (display name), mean, se, n.
    """
    from tvbo.algorithms.display import is_reference_policy
    from tvbo.analysis.context import campaign_labels
    from tvbo.analysis.tables import available_metrics, summary_table

    names = campaign_labels(campaign)
    rows = []
    recorded = set(available_metrics(campaign))
    for metric in METRICS:
        if metric not in recorded:
            continue
        table = summary_table(campaign, metric).dropna(subset=["mean"])
        keys = [k for k in ("benchmark", "speed") if k in table.columns]
        several_speeds = "speed" in table.columns and table["speed"].nunique() > 1
        for key, group in table.groupby(keys, sort=False):
            key = key if isinstance(key, tuple) else (key,)
            # floor rows (reference policies) are not competitors: never "the best"
            rivals = group[~group["algorithm"].astype(str).map(is_reference_policy)]
            group = rivals if len(rivals) else group
            best = group.sort_values(["mean", "algorithm"], kind="stable").iloc[0]
            rows.append({
                "benchmark": str(key[0]),
                "speed": float(key[1]) if len(key) > 1 and several_speeds else None,
                "metric": metric,
                "algorithm": str(best["algorithm"]),
                "label": names.get(str(best["algorithm"]), str(best["algorithm"])),
                "mean": float(best["mean"]),
                "se": float(best["se"]),
                "n": int(best["n"]),
            })
    order = {str(b): i for i, b in enumerate(campaign["benchmark"].values)}
    rows.sort(key=lambda r: (order.get(r["benchmark"], 0), r["speed"] or 0.0))
    return rows


def _mean_se(mean: float, se: float) -> str:
    if not math.isfinite(se):
        return f"{mean:.3g} (one seed)"
    return f"{mean:.3g} ± {se:.2g}"


def report_command(configfiles: Sequence[str | Path] = ()) -> str:
    """The command that builds the HTML report of this configuration."""
    extra = "".join(f" --configfile {f}" for f in configfiles)
    return f"snakemake --report report.html{extra}"


def summary_message(
    config: Mapping[str, Any],
    root: str | Path = ".",
    configfiles: Sequence[str | Path] = (),
    campaign: Any = None,
) -> str:
    """The closing summary: best algorithm per benchmark on both metrics, then the paths."""
    base = Path(root) / "results" / str(config["campaign"])
    path = base / "campaign.nc"
    lines = [f"tvbo: campaign {config['campaign']} finished."]
    if campaign is None and path.exists():
        from tvbo.results.campaign import read_campaign

        campaign = read_campaign(path)
    if campaign is not None:
        lines.append("Best algorithm per benchmark (lowest mean over seeds ± s.e.):")
        best = best_per_benchmark(campaign)
        width = max((len(r["benchmark"]) for r in best), default=0)
        for row in best:
            speed = f" (speed ×{row['speed']:g})" if row["speed"] is not None else ""
            lines.append(
                f"  {row['benchmark']:<{width}}{speed}  {METRICS[row['metric']]:<23} "
                f"{row['label']} {_mean_se(row['mean'], row['se'])} (n = {row['n']})"
            )
    lines += [
        f"Tables:      {base / 'tables'}/ (average_regret, time_integrated_regret: csv, md, tex)",
        f"Figures:     {base / 'figures'}/",
    ]
    if (base / "comparison").exists():
        lines.append(f"Comparison:  {base / 'comparison'}/<paper>/paper_vs_tvbo.md "
                     "(read its 'settings differ' line first)")
    lines += [
        f"Campaign:    {path} (all runs, xarray/netCDF)",
        f"Report:      {report_command(configfiles)}",
    ]
    return "\n".join(lines)


# -- Snakefile hooks ------------------------------------------------------------------------------
def _configfiles(workflow: Any) -> list[str]:
    try:
        files = list(workflow.overwrite_configfiles or [])
    except Exception:  # noqa: BLE001 -- a message must never fail the workflow
        return []
    return [str(f) for f in files if Path(str(f)).resolve() != Path("config/config.yaml").resolve()]


def on_start(config: Mapping[str, Any], workflow: Any) -> None:
    """Snakefile ``onstart``: print :func:`start_message` on stderr (never raises)."""
    try:
        try:
            cores = int(workflow.cores)
        except Exception:  # noqa: BLE001 -- cluster runs have no core count
            cores = 1
        print(start_message(config, cores), file=sys.stderr)
    except Exception as error:  # noqa: BLE001
        print(f"tvbo: no run estimate ({error})", file=sys.stderr)


def on_success(config: Mapping[str, Any], workflow: Any) -> None:
    """Snakefile ``onsuccess``: print :func:`summary_message` on stderr (never raises)."""
    try:
        print(summary_message(config, configfiles=_configfiles(workflow)), file=sys.stderr)
    except Exception as error:  # noqa: BLE001
        print(f"tvbo: no closing summary ({error})", file=sys.stderr)
