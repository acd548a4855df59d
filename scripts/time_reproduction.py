"""Regenerate the reproduction report one campaign at a time, timing each build.

``snakemake --cores N reproduction`` builds every campaign of the spec
(``config/reproduction.yaml``) and then ``docs/reproduction.md``, and records its own wall time.
On this project's 2-core machine the whole regeneration takes hours, longer than one sitting,
and one number says nothing about where the time goes. This script builds the same targets,
one at a time, in the spec's order (the workflow's default campaign first), each by
``snakemake --cores N results/<campaign>/campaign.nc``: the same rule (``reproduction_campaign``)
that ``reproduction`` runs. Per campaign it records wall seconds and the CPU seconds (user +
system) of every process Snakemake started, with the commit, in
``results/reproduction_timing.yaml``. A campaign already timed is skipped, so an interrupted
regeneration resumes at the first campaign not built; the campaign that was building when it was
interrupted holds some of its run files and stops the script until its folder is deleted (resumed,
its time would count only the rest), and a lock the killed build left names its fix. A campaign
whose results exist but were never timed stops the script: its time is unknown, and a sum without
it would understate the regeneration (delete its results folder, or pass ``--untimed-ok`` to
leave it out and say so).

With every campaign built, it writes the provenance file (``--provenance-out``, by default
``config/reproduction_provenance.yaml``, the committed record the report's header prints): the
sum of the campaigns' wall times and the report's as the regeneration's wall time, each
campaign's wall and CPU seconds, the commits, and the machine. It then rebuilds the report
(``snakemake --cores N --forcerun reproduction reproduction``), whose header and campaigns table
now carry those numbers.

Usage (from the repository's root)::

    python scripts/time_reproduction.py --cores 2
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
TIMING = Path("results/reproduction_timing.yaml")
#: the command the provenance names: what this script times, piece by piece
COMMAND = "snakemake --cores {cores} reproduction, one campaign at a time " \
          "(python scripts/time_reproduction.py --cores {cores})"


def campaign_names(spec_path: Path) -> list[str]:
    """The workflow's default campaign, then every campaign of the spec, in the spec's order
    (the results folder names: an overlay's suffix included)."""
    from tvbo.analysis.reproduction.spec_yaml import load_spec

    default = yaml.safe_load((ROOT / "config/config.yaml").read_text(encoding="utf-8"))["campaign"]
    names = [str(default)]
    for campaign in load_spec(spec_path).campaigns.values():
        if campaign.name not in names:
            names.append(campaign.name)
    return names


#: the committed files the regeneration itself rewrites: the report (Snakemake deletes a job's
#: output before the job runs) and the provenance record
REPORT, PROVENANCE = "docs/reproduction.md", "config/reproduction_provenance.yaml"
WRITTEN = (REPORT, PROVENANCE)


def commit(root: Path = ROOT) -> str:
    """The short commit of the working tree, with ``+dirty`` when it has uncommitted changes
    other than the files the regeneration writes (:data:`WRITTEN`): the report's own build
    deletes ``docs/reproduction.md`` first, which says nothing about the code that built it."""
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False).stdout.strip() or "unknown"
    dirty = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--", ".",
         *(f":(exclude){path}" for path in WRITTEN)],
        capture_output=True, text=True, check=False).stdout.strip()
    return head + ("+dirty" if dirty else "")


def timed(command: list[str], log: Path) -> tuple[int, float, float]:
    """Run ``command`` (output to ``log``); its exit code, wall seconds and the CPU seconds of it
    and every process it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w", encoding="utf-8") as out:
        code = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return code, wall, cpu


def read_timing() -> dict[str, dict]:
    if not TIMING.is_file():
        return {}
    return yaml.safe_load(TIMING.read_text(encoding="utf-8")) or {}


def write_timing(timing: dict[str, dict]) -> None:
    """Written whole, atomically: a kill between two campaigns loses nothing already timed."""
    TIMING.parent.mkdir(parents=True, exist_ok=True)
    partial = TIMING.with_suffix(".yaml.partial")
    partial.write_text(yaml.safe_dump(timing, sort_keys=False), encoding="utf-8")
    os.replace(partial, TIMING)


def provenance_record(timing: dict[str, dict], names: list[str], cores: int,
                      untimed: list[str]) -> dict:
    """The report's record of the regeneration: the spec's campaigns (``names``) and the report
    step, in that order. A timed campaign the spec no longer names (a replicate replaced by a
    fresh one) stays in the timing file but is not part of this regeneration, so it is neither
    summed nor listed."""
    kept = {name: timing[name] for name in [*names, "report"] if name in timing}
    provenance = {
        "command": COMMAND.format(cores=cores),
        "commit": ", ".join(sorted({str(t["commit"]) for t in kept.values()})),
        "wall_time_s": round(sum(float(t["wall_s"]) for t in kept.values())),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}",
        "campaigns": {name: {"wall_s": t["wall_s"], "cpu_s": t["cpu_s"]}
                      for name, t in kept.items()},
    }
    if untimed:
        provenance["untimed"] = untimed
    return provenance


def leftover(results: Path, name: str) -> str | None:
    """What an untimed campaign's results folder already holds: ``"built"`` (its campaign file),
    ``"partial"`` (run files of a build that was interrupted: resuming it would time only the
    rest, and understate the campaign) or ``None`` (nothing: it can be timed)."""
    folder = results / name
    if (folder / "campaign.nc").is_file():
        return "built"
    if (folder / "runs").is_dir() and any((folder / "runs").rglob("*.nc")):
        return "partial"
    return None


#: what Snakemake prints when an earlier build, killed, left its lock behind
LOCK_MESSAGE = "Directory cannot be locked"


def failure_hint(log: Path) -> str:
    """A line for the user when the build's log shows a known cause (a stale lock), else ``""``."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    if LOCK_MESSAGE in text:
        return ("; Snakemake found the lock of an earlier build (killed?): if no other snakemake "
                "runs in this folder, `snakemake --unlock --cores 1`, then run this again")
    return ""


def snakemake(cores: int, *targets: str) -> list[str]:
    return [sys.executable, "-m", "snakemake", "--cores", str(cores), "--rerun-incomplete",
            *targets]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cores", type=int, required=True)
    parser.add_argument("--spec", type=Path, default=Path("config/reproduction.yaml"))
    parser.add_argument("--provenance-out", type=Path,
                        default=Path(PROVENANCE))
    parser.add_argument("--campaigns", nargs="+", metavar="NAME",
                        help="build only these campaigns (results folder names), in this order, "
                             "then stop: a sitting too short for the whole regeneration builds "
                             "whole campaigns only, so that each one's time is one measurement")
    parser.add_argument("--untimed-ok", action="store_true",
                        help="leave campaigns built without this script out of the sum (the "
                             "provenance then says so) instead of stopping")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    timing = read_timing()
    untimed = []
    names = campaign_names(args.spec)
    unknown = sorted(set(args.campaigns or ()) - set(names))
    if unknown:
        print(f"time_reproduction: unknown campaign(s) {', '.join(unknown)}; valid: "
              f"{', '.join(names)}", file=sys.stderr)
        return 2
    for name in args.campaigns or names:
        if name in timing:
            continue
        state = leftover(Path("results"), name)
        if state == "built":
            if not args.untimed_ok:
                print(f"time_reproduction: results/{name}/campaign.nc exists but was never timed: "
                      f"delete results/{name}/ or pass --untimed-ok", file=sys.stderr)
                return 2
            untimed.append(name)
            continue
        if state == "partial":
            print(f"time_reproduction: results/{name}/ holds run files of an interrupted build, "
                  f"never timed: resuming would time only the rest; delete results/{name}/ "
                  f"and run this again", file=sys.stderr)
            return 2
        print(f"time_reproduction: building {name} ...", flush=True)
        log = Path(f"results/logs/time_reproduction_{name}.log")
        code, wall, cpu = timed(snakemake(args.cores, f"results/{name}/campaign.nc"), log)
        if code:
            print(f"time_reproduction: {name} failed (exit {code}); see {log}{failure_hint(log)}",
                  file=sys.stderr)
            return code
        timing[name] = {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "commit": commit(),
                        "finished": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}
        write_timing(timing)
        print(f"time_reproduction: {name}: {wall:.0f} s wall, {cpu:.0f} s CPU", flush=True)
    if args.campaigns:
        return 0
    code, wall, cpu = timed(snakemake(args.cores, "reproduction"),
                            Path("results/logs/time_reproduction_report.log"))
    if code:
        print("time_reproduction: the report failed; see "
              "results/logs/time_reproduction_report.log", file=sys.stderr)
        return code
    timing.setdefault("report", {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                                 "commit": commit()})
    write_timing(timing)
    provenance = provenance_record(timing, names, args.cores, untimed)
    args.provenance_out.write_text(
        "# The last full regeneration of docs/reproduction.md (scripts/time_reproduction.py):\n"
        "# printed in the report's header as given, so the same run files give the same bytes.\n"
        + yaml.safe_dump(provenance, sort_keys=False), encoding="utf-8")
    code, _, _ = timed(snakemake(args.cores, "--forcerun", "reproduction", "reproduction"),
                       Path("results/logs/time_reproduction_report.log"))
    return code


if __name__ == "__main__":
    sys.exit(main())
