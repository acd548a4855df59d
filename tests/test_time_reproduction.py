"""scripts/time_reproduction.py: the campaigns it builds come from the spec; bad names stop it
before any build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "time_reproduction.py"


def _script():
    """scripts/time_reproduction.py as a module (scripts/ is not a package)."""
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import time_reproduction
    finally:
        sys.path.remove(str(REPO / "scripts"))
    return time_reproduction


def test_campaign_names_are_the_default_then_the_specs_in_order() -> None:
    names = _script().campaign_names(REPO / "config" / "reproduction.yaml")
    assert names[0] == "quickstart"  # config/config.yaml's campaign, a dependency of the target
    assert names[1:3] == ["bolt_paper_offline-day", "bolt_paper_heldout_offline-day"]
    assert len(names) == len(set(names)) and "wdbo_public_price" in names


def test_an_unknown_campaign_stops_it_before_any_build() -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--cores", "1", "--campaigns", "nope"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("time_reproduction: unknown campaign(s) nope; valid: quickstart")


def test_an_interrupted_build_is_told_apart_from_a_built_and_an_empty_campaign(tmp_path) -> None:
    """Resuming a build killed half-way would time only its rest: its run files stop it."""
    script = _script()
    assert script.leftover(tmp_path, "c") is None
    (tmp_path / "c" / "runs" / "shekel" / "gp-ucb").mkdir(parents=True)
    (tmp_path / "c" / "reproduction_overrides.yaml").write_text("seeds: [0]\n")
    assert script.leftover(tmp_path, "c") is None  # folders and the overlay: nothing run yet
    (tmp_path / "c" / "runs" / "shekel" / "gp-ucb" / "seed0_speed1.0.nc").write_bytes(b"")
    assert script.leftover(tmp_path, "c") == "partial"
    (tmp_path / "c" / "campaign.nc").write_bytes(b"")
    assert script.leftover(tmp_path, "c") == "built"


def test_a_stale_lock_names_its_fix(tmp_path) -> None:
    script = _script()
    log = tmp_path / "build.log"
    log.write_text("LockException:\nError: Directory cannot be locked. Please make sure ...\n")
    assert "snakemake --unlock" in script.failure_hint(log)
    log.write_text("MissingInputException in rule simulate\n")
    assert script.failure_hint(log) == ""
    assert script.failure_hint(tmp_path / "absent.log") == ""


def test_the_provenance_sums_the_specs_campaigns_only() -> None:
    """A campaign timed earlier but no longer in the spec (a replaced replicate) is not summed."""
    script = _script()
    timing = {"old_replicate": {"wall_s": 500.0, "cpu_s": 900.0, "commit": "aaa"},
              "b": {"wall_s": 20.0, "cpu_s": 30.0, "commit": "ccc"},
              "a": {"wall_s": 10.0, "cpu_s": 15.0, "commit": "bbb"},
              "report": {"wall_s": 5.0, "cpu_s": 6.0, "commit": "ccc"}}
    record = script.provenance_record(timing, ["a", "b"], 2, [])
    assert record["wall_time_s"] == 35
    assert list(record["campaigns"]) == ["a", "b", "report"]
    assert record["commit"] == "bbb, ccc" and "untimed" not in record
    assert script.provenance_record(timing, ["a"], 2, ["c"])["untimed"] == ["c"]


def test_the_commit_is_dirty_for_code_changes_not_for_the_files_the_regeneration_writes(
        tmp_path: Path) -> None:
    """The report's build deletes docs/reproduction.md before writing it again: a record taken
    then must name the commit, not "+dirty"; any other change must still show."""
    script = _script()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    for path in [*script.WRITTEN, "tvbo/code.py"]:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "c")
    clean = script.commit(tmp_path)
    assert clean and "+dirty" not in clean
    (tmp_path / "docs" / "reproduction.md").unlink()
    (tmp_path / "config" / "reproduction_provenance.yaml").write_text("y\n")
    assert script.commit(tmp_path) == clean
    (tmp_path / "tvbo" / "code.py").write_text("y\n")
    assert script.commit(tmp_path) == clean + "+dirty"
