"""The code a run executed (tvbo.results.code_record) and `tvbo stale`: a run is stale exactly
when a module it loaded has changed or is gone, and deleting it makes the workflow rebuild it.

The run files are made in fresh processes (``python -m tvbo``), so the record holds what one run
loads, not what this test session has imported. The digests are checked against hashlib on the
files themselves, an independent computation."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import netCDF4
import numpy as np
import pytest

from tvbo import cli
from tvbo.results import code_record
from tvbo.results.schema import CODE_ATTRIBUTE

REPO = Path(__file__).resolve().parents[2]
RUN = ["--benchmark", "hartmann3", "--horizon", "20", "--warmup", "4", "--cost", "0.5", "--quiet"]


def _run(out: Path, algorithm: str, *extra: str, env: dict | None = None) -> Path:
    made = subprocess.run([sys.executable, "-m", "tvbo", "run", *RUN, "--algorithm", algorithm,
                           *extra, "--out", str(out)], capture_output=True, text=True, cwd=REPO,
                          env=env, timeout=300)
    assert made.returncode == 0, made.stderr
    return out


def _record(path: Path) -> dict[str, str]:
    with netCDF4.Dataset(path) as ds:
        return json.loads(ds.getncattr(CODE_ATTRIBUTE))


def _set_record(path: Path, record: dict[str, str]) -> None:
    with netCDF4.Dataset(path, "a") as ds:
        ds.setncattr(CODE_ATTRIBUTE, json.dumps(record))


@pytest.fixture(scope="module")
def bolt_run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("code") / "camp" / "runs" / "hartmann3" / "bolt-paper"
    return _run(folder / "seed0_speed1.0.nc", "bolt-paper")


def test_a_run_records_the_digest_of_every_module_it_loaded(bolt_run: Path) -> None:
    record = _record(bolt_run)
    # BOLT's paper package, W-DBO's (BOLT builds on its removal), the shared core
    for module in ("tvbo.algorithms.bolt.parts", "tvbo.algorithms.wdbo.parts", "tvbo.gp.exact",
                   "tvbo.sim.engine", "tvbo.benchmarks.synthetic", "tvbo.api"):
        assert module in record, module
    # not the papers a BOLT run never touches
    assert not [m for m in record if m.startswith(("tvbo.algorithms.sparq",
                                                   "tvbo.algorithms.boke"))]
    for module, digest in record.items():
        path = code_record.source_file(module)
        assert path is not None, module
        assert digest == hashlib.sha256(path.read_bytes()).hexdigest()[:16], module


def test_a_plugin_package_is_recorded_too(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "examples" / "ask_tell_example")}
    out = _run(tmp_path / "es.nc", "ask-tell-es", "--plugin", "ask_tell_example.tvbo_plugin",
               "--compute", "measured", env=env)
    assert "ask_tell_example.tvbo_plugin" in _record(out)


def test_changed_and_vanished_modules_make_a_run_stale(bolt_run: Path, tmp_path: Path) -> None:
    assert code_record.check_runs([bolt_run]) == {bolt_run: []}
    copy = tmp_path / "runs" / "hartmann3" / "bolt-paper" / "seed0_speed1.0.nc"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(bolt_run.read_bytes())
    record = _record(copy)
    record["tvbo.algorithms.bolt.parts"] = "0" * 16  # as if made before an edit of BOLT
    record["tvbo.algorithms.gone"] = "1" * 16  # a module since deleted
    _set_record(copy, record)
    assert code_record.check_runs([copy]) == {
        copy: ["tvbo.algorithms.bolt.parts", "tvbo.algorithms.gone"]}


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("table") / "hartmann3.npz"
    made = subprocess.run([sys.executable, "-m", "tvbo", "oracle", "--benchmark", "hartmann3",
                           "--horizon", "20", "--cost", "0.5", "--quiet", "--out", str(out)],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert made.returncode == 0, made.stderr
    return out


def _table_header(path: Path) -> dict:
    with np.load(path) as npz:
        return json.loads(str(npz["header"]))


def _set_table_record(path: Path, record: dict[str, str]) -> None:
    with np.load(path) as npz:
        arrays = {name: npz[name] for name in npz.files}
    header = json.loads(str(arrays["header"]))
    header[CODE_ATTRIBUTE] = record
    arrays["header"] = np.array(json.dumps(header))
    np.savez(path, **arrays)


def test_an_oracle_table_records_the_code_that_built_it(table: Path) -> None:
    record = _table_header(table)[CODE_ATTRIBUTE]
    assert "tvbo.benchmarks.oracle" in record and "tvbo.benchmarks.synthetic" in record
    papers = {p.name for p in (REPO / "tvbo" / "algorithms").iterdir() if p.is_dir()}
    # no paper's algorithm package: no algorithm builds it
    assert not [m for m in record if m.split(".")[:2] == ["tvbo", "algorithms"]
                and len(m.split(".")) > 2 and m.split(".")[2] in papers]
    assert code_record.check_runs([table]) == {table: []}


def test_stale_lists_and_deletes_only_what_changed(bolt_run: Path, table: Path, tmp_path: Path,
                                                   capsys) -> None:
    results = tmp_path / "results"
    made = {}
    for campaign in ("a", "b"):
        run = results / campaign / "runs" / "hartmann3" / "bolt-paper" / "seed0_speed1.0.nc"
        run.parent.mkdir(parents=True)
        run.write_bytes(bolt_run.read_bytes())
        (results / campaign / "campaign.nc").write_text("merged")
        (results / campaign / "oracles").mkdir()
        (results / campaign / "oracles" / "hartmann3.npz").write_bytes(table.read_bytes())
        made[campaign] = run
    old = made["a"].with_name("seed1_speed1.0.nc")  # a run made before runs recorded their code
    old.write_bytes(bolt_run.read_bytes())
    with netCDF4.Dataset(old, "a") as ds:
        ds.delncattr(CODE_ATTRIBUTE)
    record = _record(made["a"])
    record["tvbo.gp.exact"] = "0" * 16
    _set_record(made["a"], record)
    stale_table = results / "a" / "oracles" / "hartmann3.npz"
    _set_table_record(stale_table, {**_table_header(table)[CODE_ATTRIBUTE],
                                    "tvbo.benchmarks.oracle": "0" * 16})

    assert cli.main(["stale", str(results)]) == 0
    out = capsys.readouterr().out
    assert "5 run files and f*(t) tables: 2 stale, 1 without a code record" in out
    assert "2 current" in out
    assert "bolt-paper, 1 stale (changed: tvbo.gp.exact)" in out
    assert "f*(t) tables, 1 stale (changed: tvbo.benchmarks.oracle)" in out
    assert made["a"].is_file() and stale_table.is_file()  # listing deletes nothing

    assert cli.main(["stale", str(results), "--delete"]) == 0
    assert not made["a"].exists() and not stale_table.exists()
    assert not (results / "a" / "campaign.nc").exists()
    assert old.is_file() and made["b"].is_file()
    assert (results / "b" / "campaign.nc").is_file()
    assert (results / "b" / "oracles" / "hartmann3.npz").is_file()

    assert cli.main(["stale", str(results), "--delete", "--unrecorded"]) == 0
    assert not old.exists() and made["b"].is_file()


def test_stale_names_a_missing_path(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        cli.main(["stale", str(tmp_path / "nope")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "no such file or folder" in err
    assert len(err.strip().splitlines()) == 1
