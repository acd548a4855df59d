"""What the campaign-time model predicts for the whole reproduction, campaign by campaign.

Prices every campaign of a reproduction spec (default ``config/reproduction.yaml``) as if built
from a clean results folder on ``--cores`` cores: the same estimate each campaign's Snakemake run
prints when it starts (:func:`tvbo.workflow_messages.campaign_estimate`, with the packaged model
``tvbo/campaign_time.yaml`` or ``--model``). Per campaign: its runs, predicted wall and CPU
seconds and how many of its cells needed a fallback; then the sum of the walls, which is what a
regeneration that builds the campaigns one after another takes (``scripts/time_reproduction.py``
measures the same thing). Why a script: the whole regeneration's ETA is judged against a
measured wall time (issue 27), and no single Snakemake run prints it.

    python scripts/estimate_reproduction.py --cores 2

``--timing results/reproduction_timing.yaml`` (what ``scripts/time_reproduction.py`` records)
sets each campaign's measured wall and CPU seconds beside the estimate, with the ratio measured
/ predicted, and counts the campaigns and the total within ``--tolerance`` (default 30%, issue
27's). CPU seconds are the fairer test when the regeneration shared its machine: other jobs
stretch a build's wall time much more than its CPU time. A campaign measured but not in the
spec, or in the spec but not measured, is listed and left out of the totals.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import yaml

from tvbo.analysis.reproduction.spec_yaml import load_spec
from tvbo.workflow_messages import campaign_estimate

#: campaign, runs, wall seconds, CPU seconds, cells priced by a fallback
Row = tuple[str, int, float, float, int]


def estimates(spec_path: Path, cores: int, model: Path | None = None) -> list[Row]:
    """A :data:`Row` for every campaign of the spec."""
    spec = load_spec(spec_path)
    rows = []
    with tempfile.TemporaryDirectory() as empty:
        for campaign in spec.campaigns.values():
            _, paths, est = campaign_estimate(dict(campaign.merged), cores, Path(empty), model)
            rows.append((campaign.name, len(paths), est.wall, est.cpu,
                         sum(len(cells) for cells in est.fallbacks.values())))
    return rows


def read_timing(path: Path) -> dict[str, tuple[float, float]]:
    """``{campaign: (wall seconds, CPU seconds)}`` from a ``reproduction_timing.yaml``."""
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise ValueError(f"{path}: cannot read it ({err})") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected a mapping of campaign -> {{wall_s, cpu_s}}")
    timing = {}
    for name, entry in raw.items():
        if not (isinstance(entry, dict) and {"wall_s", "cpu_s"} <= entry.keys()):
            raise ValueError(f"{path}: campaign {name!r} lacks wall_s or cpu_s")
        timing[str(name)] = (float(entry["wall_s"]), float(entry["cpu_s"]))
    return timing


def _within(measured: float, predicted: float, tolerance: float) -> bool:
    return abs(predicted - measured) <= tolerance * measured


def compare(rows: list[Row], timing: dict[str, tuple[float, float]],
            tolerance: float) -> list[str]:
    """Lines of the comparison table: each campaign's estimate and measurement, the ratios,
    then the totals over the campaigns both have and the count within ``tolerance``."""
    lines = [f"{'campaign':40} {'wall s':>8} {'meas.':>8} {'ratio':>6} {'CPU s':>8} "
             f"{'meas.':>8} {'ratio':>6}"]
    both = [r for r in rows if r[0] in timing]
    for name, _, wall, cpu, _ in both:
        m_wall, m_cpu = timing[name]
        lines.append(f"{name:40} {wall:8.0f} {m_wall:8.0f} {m_wall / wall:6.2f} {cpu:8.0f} "
                     f"{m_cpu:8.0f} {m_cpu / cpu:6.2f}")
    wall, cpu = sum(r[2] for r in both), sum(r[3] for r in both)
    m_wall, m_cpu = sum(timing[r[0]][0] for r in both), sum(timing[r[0]][1] for r in both)
    lines.append(f"{'total':40} {wall:8.0f} {m_wall:8.0f} {m_wall / wall:6.2f} {cpu:8.0f} "
                 f"{m_cpu:8.0f} {m_cpu / cpu:6.2f}")
    ok_wall = sum(_within(timing[r[0]][0], r[2], tolerance) for r in both)
    ok_cpu = sum(_within(timing[r[0]][1], r[3], tolerance) for r in both)
    pct = f"{100 * tolerance:.0f}%"
    lines.append(f"within {pct} of the measurement: wall {ok_wall} of {len(both)} campaigns "
                 f"(total: {'yes' if _within(m_wall, wall, tolerance) else 'no'}), CPU {ok_cpu} "
                 f"of {len(both)} (total: {'yes' if _within(m_cpu, cpu, tolerance) else 'no'})")
    unmeasured = [r[0] for r in rows if r[0] not in timing]
    extra = sorted(set(timing) - {r[0] for r in rows})
    if unmeasured:
        lines.append(f"in the spec, not measured (left out): {', '.join(unmeasured)}")
    if extra:
        lines.append(f"measured, not in the spec (left out): {', '.join(extra)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=Path("config/reproduction.yaml"))
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--model", type=Path, help="campaign-time model (default: packaged)")
    parser.add_argument("--timing", type=Path,
                        help="a reproduction_timing.yaml to compare the estimate with")
    parser.add_argument("--tolerance", type=float, default=0.3,
                        help="relative error counted as within (default 0.3)")
    args = parser.parse_args(argv)
    if not args.spec.is_file():
        print(f"estimate_reproduction: {args.spec}: no such spec", file=sys.stderr)
        return 2
    timing = None
    if args.timing is not None:
        try:
            timing = read_timing(args.timing)
        except ValueError as err:
            print(f"estimate_reproduction: {err}", file=sys.stderr)
            return 2
    rows = estimates(args.spec, args.cores, args.model)
    print(f"{'campaign':40} {'runs':>6} {'wall s':>8} {'CPU s':>8} fallback cells")
    for name, runs, wall, cpu, fallbacks in rows:
        print(f"{name:40} {runs:6d} {wall:8.0f} {cpu:8.0f} {fallbacks}")
    wall, cpu = sum(r[2] for r in rows), sum(r[3] for r in rows)
    print(f"{'total (one campaign after another)':40} {sum(r[1] for r in rows):6d} {wall:8.0f} "
          f"{cpu:8.0f}   ({wall / 3600:.1f} h on {args.cores} cores)")
    if timing is not None:
        print()
        print("\n".join(compare(rows, timing, args.tolerance)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
