"""Compare two campaigns' run files: did a change of code change any result?

    python scripts/compare_runs.py OLD/runs NEW/runs            # every data variable, bit for bit
    python scripts/compare_runs.py OLD/runs NEW/runs --rtol 1e-9  # regrets to a tolerance

Every run file under OLD (``<benchmark>/<algorithm>/seed<s>_speed<v>.nc``) must exist under NEW.
A run is *identical* when every data variable has the same dimensions, dtype and bytes (the
digest of the refactoring guard, tvbo.testing.preset_grid, so the whole campaign is checked the
way the small grid is); otherwise its changed variables are listed, with the relative change of
its average and time-integrated regret. The exit status is 1 when a run is missing or a regret
changed by more than ``--rtol`` (default 0: any change of any variable fails).

Why a script and not a test: it reads two whole campaigns (minutes of simulation each), made by
`snakemake` before and after a change, e.g. the 700 runs of BOLT [B] when the hot paths were
made faster (issue 14).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import xarray as xr

from tvbo.testing.preset_grid import digest_dataset

REGRETS = ("average_regret", "time_integrated_regret")


def _relative_change(old: float, new: float) -> float:
    if old == new:
        return 0.0
    return abs(new - old) / max(abs(old), 1e-300)


def compare(old_dir: Path, new_dir: Path, rtol: float) -> int:
    old_files = sorted(p.relative_to(old_dir) for p in old_dir.rglob("*.nc"))
    if not old_files:
        print(f"no run files under {old_dir}", file=sys.stderr)
        return 2
    failed = identical = 0
    worst = dict.fromkeys(REGRETS, 0.0)
    for rel in old_files:
        new_path = new_dir / rel
        if not new_path.exists():
            print(f"{rel}: missing under {new_dir}")
            failed += 1
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with xr.open_dataset(old_dir / rel) as old, xr.open_dataset(new_path) as new:
                a, b = digest_dataset(old), digest_dataset(new)
                changes = {name: _relative_change(float(old[name].values.item()),
                                                  float(new[name].values.item()))
                           for name in REGRETS}
        changed = sorted(name for name in a.keys() | b.keys() if a.get(name) != b.get(name))
        if not changed:
            identical += 1
            continue
        for name, change in changes.items():
            worst[name] = max(worst[name], change)
        regrets = ", ".join(f"{name} {change:.2e}" for name, change in changes.items())
        print(f"{rel}: {len(changed)} variables changed ({', '.join(changed[:6])}"
              f"{', ...' if len(changed) > 6 else ''}); relative change: {regrets}")
        if rtol == 0.0 or max(changes.values()) > rtol:
            failed += 1
    print(f"{len(old_files)} runs: {identical} identical in every data variable, "
          f"{len(old_files) - identical} changed; largest relative regret change: "
          + ", ".join(f"{name} {value:.2e}" for name, value in worst.items()))
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="run directory of the reference campaign")
    parser.add_argument("new", type=Path, help="run directory of the campaign to check")
    parser.add_argument("--rtol", type=float, default=0.0,
                        help="largest relative regret change accepted (default 0: bit for bit)")
    args = parser.parse_args(argv)
    return compare(args.old, args.new, args.rtol)


if __name__ == "__main__":
    raise SystemExit(main())
