"""scripts/time_reproduction.py: the campaigns it builds come from the spec; bad names stop it
before any build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "time_reproduction.py"


def test_campaign_names_are_the_default_then_the_specs_in_order() -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        from time_reproduction import campaign_names
    finally:
        sys.path.remove(str(REPO / "scripts"))
    names = campaign_names(REPO / "config" / "reproduction.yaml")
    assert names[0] == "quickstart"  # config/config.yaml's campaign, a dependency of the target
    assert names[1:3] == ["bolt_paper_offline-day", "bolt_paper_heldout_offline-day"]
    assert len(names) == len(set(names)) and "wdbo_public_price" in names


def test_an_unknown_campaign_stops_it_before_any_build() -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--cores", "1", "--campaigns", "nope"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("time_reproduction: unknown campaign(s) nope; valid: quickstart")
