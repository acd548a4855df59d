"""``tvbo merge``/``table``/``figures``: bad files and silent mixes are refused (issue 12 item 4).

Run files come from :mod:`tests.fake_runs` (schema-conform, fast); their attributes are edited to
differ in one condition at a time. The compute-model descriptions are the engine's own
(:func:`tvbo.sim.compute.make_compute_model`), so the comparison is tested on real content.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import xarray as xr

from tests.fake_runs import make_run
from tvbo import cli
from tvbo.results.campaign import merge_runs, write_campaign
from tvbo.results.io import write_run
from tvbo.results.validate import (
    MIXABLE,
    MixedRunsError,
    load_campaign,
    load_runs,
    open_netcdf,
    parse_allow_mixed,
    run_conditions,
)
from tvbo.sim.compute import make_compute_model


def _cli(argv: list[str], capsys) -> tuple[int, str]:
    """Run the CLI in-process; return (exit status, stderr)."""
    try:
        status = cli.main(argv)
    except SystemExit as exc:
        status = exc.code
    return status, capsys.readouterr().err


def _compute_json(name: str = "counted", speed: float = 1.0, **kwargs) -> str:
    return json.dumps(make_compute_model(name, speed=speed, **kwargs).describe(), default=float)


def _run(directory: Path, name: str, benchmark="shekel", algorithm="bolt", seed=0, speed=1.0,
         **attrs) -> Path:  # fmt: skip
    """Write a fake run with the engine's compute description and the attributes ``attrs``."""
    ds = make_run(benchmark, algorithm, seed, speed)
    config = json.loads(ds.attrs["config_json"]) | {"cost_table": "metronome"}
    ds.attrs["compute_model_json"] = _compute_json(speed=speed)
    for key, value in attrs.items():
        if key == "cost_table":
            config["cost_table"] = value
        else:
            ds.attrs[key] = value
    ds.attrs["config_json"] = json.dumps(config)
    return write_run(ds, directory / name)


def _recalibrated() -> dict:
    described = json.loads(_compute_json())
    described["profile"]["coefficients"]["flop"] = 1e-9
    return described


@pytest.fixture
def pair(tmp_path) -> tuple[Path, Path]:
    """Two comparable runs (seeds 0 and 1 of one benchmark and algorithm)."""
    return _run(tmp_path, "a.nc", seed=0), _run(tmp_path, "b.nc", seed=1)


# -- bad files ------------------------------------------------------------------------------------
def _bad_file(tmp_path: Path, kind: str, good: Path) -> Path:
    path = tmp_path / f"{kind}.nc"
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "truncated":
        raw = good.read_bytes()
        path.write_bytes(raw[: len(raw) // 2])
    elif kind == "csv":
        path.write_text("benchmark,algorithm\nshekel,bolt\n")
    elif kind == "tail-cut":  # only the last bytes are missing
        path.write_bytes(good.read_bytes()[:-64])
    return path


BAD_FILES = {
    "empty": "empty file (0 bytes)",
    "truncated": "truncated or corrupt netCDF file",
    "tail-cut": "truncated or corrupt netCDF file",
    "csv": "not a netCDF file (starts with b'benchmar')",
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_merge_rejects_a_bad_run_file(tmp_path, pair, capsys, kind):
    bad = _bad_file(tmp_path, kind, pair[0])
    out = tmp_path / "out" / "campaign.nc"
    status, err = _cli(["merge", str(pair[0]), str(bad), "--out", str(out)], capsys)
    assert status == 2 and err.count("\n") == 1 and err.startswith("tvbo: error: ")
    assert str(bad) in err and BAD_FILES[kind] in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["figures", "table"])
@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_figures_and_table_reject_a_bad_campaign_file(tmp_path, pair, capsys, kind, command):
    campaign = write_campaign(merge_runs(pair), tmp_path / "campaign.nc")
    bad = _bad_file(tmp_path, kind, campaign)
    status, err = _cli([command, str(bad), "--outdir", str(tmp_path / "out")], capsys)
    assert status == 2 and err.count("\n") == 1
    assert str(bad) in err and BAD_FILES[kind] in err
    assert not (tmp_path / "out").exists()


def test_merge_rejects_a_campaign_given_as_a_run(tmp_path, pair, capsys):
    campaign = write_campaign(merge_runs(pair), tmp_path / "campaign.nc")
    _run(tmp_path, "c.nc", seed=2)
    status, err = _cli(["merge", str(campaign), str(tmp_path / "c.nc"), "--out",
                        str(tmp_path / "x.nc")], capsys)  # fmt: skip
    assert status == 2 and str(campaign) in err and "not a run file" in err
    assert not (tmp_path / "x.nc").exists()


def test_open_netcdf_accepts_a_good_file(pair):
    assert open_netcdf(pair[0]).sizes["seed"] == 1


# -- differing conditions -------------------------------------------------------------------------
DIFFERENCES = {
    "horizon": ({"horizon": 60.0}, {"horizon": 120.0}, ("60.0", "120.0")),
    "cost_table": ({}, {"cost_table": "icml"}, ("'metronome'", "'icml'")),
    "tvbo_version": ({}, {"tvbo_version": "0.2.0"}, ("'0.1.0'", "'0.2.0'")),
    "compute": (
        {},
        {"compute_model": "measured", "compute_model_json": _compute_json("measured")},
        ("counted, profile reference-2core", "measured"),
    ),
    "compute-profile": (
        {},
        {"compute_model_json": _compute_json(profile="botorch-i9-laptop")},
        ("profile reference-2core", "profile botorch-i9-laptop"),
    ),
    "compute-recalibrated": (  # same profile name, other coefficients: shown
        {},
        {"compute_model_json": json.dumps(_recalibrated())},
        ("profile reference-2core, coefficients", '"flop": 1e-09'),
    ),
    "compute-polynomial": (
        {"compute_model": "polynomial", "compute_model_json": _compute_json(
            "polynomial", polynomial=[0.1, 0.01])},
        {"compute_model": "polynomial", "compute_model_json": _compute_json(
            "polynomial", polynomial=[0.1, 0.02])},
        ("[0.1, 0.01]", "[0.1, 0.02]"),
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(DIFFERENCES))
def test_merge_refuses_runs_that_differ(tmp_path, capsys, case):
    attrs_a, attrs_b, (shown_a, shown_b) = DIFFERENCES[case]
    field = case.split("-")[0]
    a = _run(tmp_path, "a.nc", seed=0, **attrs_a)
    b = _run(tmp_path, "b.nc", seed=1, **attrs_b)
    out = tmp_path / "campaign.nc"
    status, err = _cli(["merge", str(a), str(b), "--out", str(out)], capsys)
    assert status == 2 and err.count("\n") == 1, err
    with pytest.raises(MixedRunsError):
        merge_runs([a, b])
    assert f"differ in {field}:" in err and f"--allow-mixed {field}" in err
    assert shown_a in err and shown_b in err and str(a) in err and str(b) in err
    assert not out.exists()
    # allowed explicitly: merged, and the allowance is recorded in the campaign
    status, err = _cli(["merge", str(a), str(b), "--out", str(out), "--allow-mixed",
                        f"{field},tvbo_version"], capsys)  # fmt: skip
    assert status == 0, err
    merged = xr.load_dataset(out)
    assert merged.attrs["mixed_allowed"] == ",".join(dict.fromkeys([field, "tvbo_version"]))
    assert int(merged["run_present"].sum()) == 2
    # ... and table/figures accept it (the campaign says the mix was wanted)
    assert load_campaign(out).sizes["seed"] == 2


def test_horizon_may_differ_between_benchmarks(tmp_path):
    """The papers give each benchmark its own horizon (Temperature 1800 s, others 600 s)."""
    a = _run(tmp_path, "a.nc", benchmark="shekel", horizon=600.0)
    b = _run(tmp_path, "b.nc", benchmark="eggholder", horizon=1800.0)
    merged = merge_runs([a, b])
    assert sorted(merged["benchmark"].values.tolist()) == ["eggholder", "shekel"]
    assert "mixed_allowed" not in merged.attrs


def test_speed_may_differ_but_must_match_the_compute_model(tmp_path):
    """A what-if campaign varies the speed; a file whose speed contradicts itself is refused."""
    a = _run(tmp_path, "a.nc", speed=1.0)
    b = _run(tmp_path, "b.nc", speed=10.0)
    assert merge_runs([a, b]).sizes["speed"] == 2
    c = _run(tmp_path, "c.nc", seed=2, speed=2.0, compute_model_json=_compute_json(speed=4.0))
    with pytest.raises(ValueError, match=r"c.nc: inconsistent run: speed coordinate 2.0 .* 4.0"):
        load_runs([a, c])


def test_a_silently_mixed_campaign_is_refused_by_table_and_figures(tmp_path, capsys):
    """A campaign merged without the check (older tvbo) is caught when it is analysed."""
    a = _run(tmp_path, "a.nc", seed=0)
    b = _run(tmp_path, "b.nc", seed=1, cost_table="icml")
    campaign = write_campaign(merge_runs([a, b], allow_mixed=["cost_table"]), tmp_path / "c.nc")
    with xr.open_dataset(campaign) as ds:
        mixed = ds.load()
    del mixed.attrs["mixed_allowed"]
    silent = write_campaign(mixed, tmp_path / "silent.nc")
    for command in ("figures", "table"):
        status, err = _cli([command, str(silent), "--outdir", str(tmp_path / "o")], capsys)
        assert status == 2 and err.count("\n") == 1
        assert "differ in cost_table" in err and "'metronome'" in err and "'icml'" in err
        assert str(silent) in err
    assert not (tmp_path / "o").exists()


def test_allow_mixed_rejects_unknown_fields(pair, tmp_path, capsys):
    status, err = _cli(["merge", *map(str, pair), "--out", str(tmp_path / "c.nc"),
                        "--allow-mixed", "horizon,speeed"], capsys)  # fmt: skip
    assert status == 2 and "'speeed'" in err and ", ".join(MIXABLE) in err
    assert not (tmp_path / "c.nc").exists()
    assert parse_allow_mixed(["horizon", "compute,horizon"]) == ("horizon", "compute")


def test_run_conditions_ignore_speed_and_profile_prose():
    base = {"compute_model": "counted", "tvbo_version": "0.1.0", "horizon": 60.0,
            "config_json": json.dumps({"cost_table": "icml"})}  # fmt: skip
    slow = run_conditions(base | {"compute_model_json": _compute_json(speed=1.0)})
    fast = run_conditions(base | {"compute_model_json": _compute_json(speed=8.0)})
    assert slow["compute"] == fast["compute"] and slow["cost_table"] == "icml"
    described = json.loads(_compute_json())
    described["profile"]["description"] = "reworded"
    assert run_conditions(base | {"compute_model_json": json.dumps(described)})["compute"] == (
        slow["compute"]
    )
