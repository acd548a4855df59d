"""What the workflow tells its user at the start and at the end (Snakefile onstart / onsuccess).

At the start (:func:`start_message`): how many runs of the campaign are still to do (run files
that do not exist yet) and an estimate of the wall time on the given cores. At the end
(:func:`summary_message`): the best algorithm per benchmark on both metrics (average query
regret and time-integrated regret, mean ± s.e. over seeds; lower is better) and where the
tables, figures and comparisons are, with the command that builds the HTML report.

The estimate comes from the measured campaign-time model of :mod:`tvbo.campaign_time` (per
compute class, algorithm and benchmark: CPU seconds per run from sampled run files, scaled by
the iterations the config's horizon, cost and speed imply; the jobs' and the analysis' own
overheads; the f*(t) tables still to build), scheduled on the cores. Cells the model has not
sampled are priced by a stated fallback, named in the message. Re-fit the model with
``scripts/fit_campaign_time.py`` after a change that makes runs faster or slower.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tvbo.algorithms.display import is_reference_policy
from tvbo.campaign_time import FALLBACKS, estimate, load_model

RUN_PATTERN = "results/{campaign}/runs/{benchmark}/{algorithm}/seed{seed}_speed{speed}.nc"
ORACLE_PATTERN = "results/{campaign}/oracles/{benchmark}.npz"
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


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def tables_to_build(config: Mapping[str, Any], root: str | Path = ".") -> list[str]:
    """Benchmarks whose shared f*(t) table (rule oracle_table) does not exist yet."""
    # lazy: the workflow imports this module when it parses; oracle_table loads numpy and scipy
    from tvbo.benchmarks.oracle_table import NO_TABLE_NEEDED

    if config.get("oracle_tables") is False:
        return []
    root = Path(root)
    return [b for b in config["benchmarks"] if b not in NO_TABLE_NEEDED
            and not (root / ORACLE_PATTERN.format(campaign=config["campaign"],
                                                  benchmark=b)).exists()]


def campaign_estimate(config: Mapping[str, Any], cores: int | None, root: str | Path = ".",
                      model_path: str | Path | None = None):
    """``(pending run paths, all run paths, tvbo.campaign_time.Estimate)`` of the campaign."""
    paths = run_paths(config, root)
    pending = [p for p in paths if not p.exists()]
    counts: dict[tuple[str, str, float], int] = {}
    for path in pending:
        key = (path.parent.parent.name, path.parent.name,
               float(path.stem.split("_speed", 1)[1]))
        counts[key] = counts.get(key, 0) + 1
    tables = tables_to_build(config, root) if pending else []
    model = load_model(model_path)
    return pending, paths, estimate(model, config, counts, max(int(cores or 1), 1), tables)


def start_message(config: Mapping[str, Any], cores: int | None, root: str | Path = ".",
                  model_path: str | Path | None = None) -> str:
    """``tvbo: campaign X: N of M runs to do; estimated ...`` (two lines, and one per fallback)."""
    pending, paths, est = campaign_estimate(config, cores, root, model_path)
    head = f"tvbo: campaign {config['campaign']}: {len(pending)} of {len(paths)} runs to do"
    if not pending:
        return head + " (all runs exist; only the analysis steps may run)"
    lines = [
        f"{head}; estimated wall time ~{_duration(est.wall)} on {est.cores} core(s) of an "
        f"idle machine",
        f"      ({_duration(est.cpu)} of CPU: runs {_duration(est.run_cpu)}, {est.jobs} jobs' "
        f"start-up {_duration(est.job_cpu)}, {est.tables} f* table(s) "
        f"{_duration(est.table_cpu)}, analysis {_duration(est.analysis_cpu)}; measured model "
        "tvbo/campaign_time.yaml, see tvbo/campaign_time.py)",
    ]
    for basis, cells in est.fallbacks.items():
        shown = ", ".join(cells[:4]) + (f" and {len(cells) - 4} more" if len(cells) > 4 else "")
        lines.append(f"      fallback for {shown}: {FALLBACKS[basis]}")
    return "\n".join(lines)


# -- the end --------------------------------------------------------------------------------------
def best_per_benchmark(campaign: Any) -> list[dict[str, Any]]:
    """Per (benchmark[, speed]) and metric: the algorithm with the lowest mean, mean ± s.e., n
    (reference policies, the floor rows, only when nothing else ran).

    Rows: benchmark, speed (or None), metric, algorithm, label (display name), mean, se, n.
    """
    # lazy: pandas and xarray load only when the closing summary is printed, not at parse time
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
        # lazy: xarray loads only when the closing summary is printed, not at parse time
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


def builds_campaign(config: Mapping[str, Any], workflow: Any) -> bool:
    """Whether the run's DAG has a job writing under ``results/<campaign>/`` of ``config``.

    ``snakemake results/OTHER/campaign.nc`` (a reproduction campaign, built by a nested
    Snakemake that prints its own estimate and summary) loads the default config too: without
    this check the outer run announced the default campaign's runs, which it never builds. A
    workflow object without a DAG (an older Snakemake) counts as building it."""
    dag = getattr(workflow, "dag", None)
    if dag is None:
        return True
    prefix = Path("results") / str(config["campaign"])
    for job in getattr(dag, "jobs", ()):
        for output in job.output:
            if Path(str(output)).is_relative_to(prefix):
                return True
    return False


def on_start(config: Mapping[str, Any], workflow: Any) -> None:
    """Snakefile ``onstart``: print :func:`start_message` on stderr (never raises), when the
    run builds the config's campaign (:func:`builds_campaign`)."""
    try:
        if not builds_campaign(config, workflow):
            return
        try:
            cores = int(workflow.cores)
        except Exception:  # noqa: BLE001 -- cluster runs have no core count
            cores = 1
        print(start_message(config, cores), file=sys.stderr)
    except Exception as error:  # noqa: BLE001
        print(f"tvbo: no run estimate ({error})", file=sys.stderr)


def on_success(config: Mapping[str, Any], workflow: Any) -> None:
    """Snakefile ``onsuccess``: print :func:`summary_message` on stderr (never raises), when the
    run built the config's campaign (:func:`builds_campaign`)."""
    try:
        if not builds_campaign(config, workflow):
            return
        print(summary_message(config, configfiles=_configfiles(workflow)), file=sys.stderr)
    except Exception as error:  # noqa: BLE001
        print(f"tvbo: no closing summary ({error})", file=sys.stderr)
