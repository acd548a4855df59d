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
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=Path("config/reproduction.yaml"))
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--model", type=Path, help="campaign-time model (default: packaged)")
    args = parser.parse_args(argv)
    if not args.spec.is_file():
        print(f"estimate_reproduction: {args.spec}: no such spec", file=sys.stderr)
        return 2
    rows = estimates(args.spec, args.cores, args.model)
    print(f"{'campaign':40} {'runs':>6} {'wall s':>8} {'CPU s':>8} fallback cells")
    for name, runs, wall, cpu, fallbacks in rows:
        print(f"{name:40} {runs:6d} {wall:8.0f} {cpu:8.0f} {fallbacks}")
    wall, cpu = sum(r[2] for r in rows), sum(r[3] for r in rows)
    print(f"{'total (one campaign after another)':40} {sum(r[1] for r in rows):6d} {wall:8.0f} "
          f"{cpu:8.0f}   ({wall / 3600:.1f} h on {args.cores} cores)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
