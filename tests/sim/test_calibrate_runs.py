"""`tvbo calibrate --from-runs`: a deterministic response-time model from measured runs of an
algorithm tvbo cannot count, replayed bit for bit, merged with counted runs under a caveat, and
its bad input refused in one line with nothing written."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

import tvbo
from tvbo import cli, plugins
from tvbo.analysis.context import campaign_setting, setting_text
from tvbo.results.campaign import merge_runs
from tvbo.results.io import write_run
from tvbo.results.validate import MixedRunsError
from tvbo.sim.calibrate_runs import fit_polynomial, leave_one_run_out, replay_seconds
from tvbo.testing.preset_grid import digest_dataset

REPO = Path(__file__).resolve().parents[2]
MODULE = "ask_tell_example.tvbo_plugin"
RUN = {"horizon": 40.0, "warmup": 3}


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch):
    """The example plugin loaded (as ``--plugin`` would); plugin state restored afterwards."""
    monkeypatch.syspath_prepend(str(REPO / "examples" / "ask_tell_example"))
    restore = plugins._reset_for_tests()
    plugins.load([MODULE])
    yield
    restore()


def _measured(folder: Path, seeds=(0, 1), algorithm: str = "ask-tell-es") -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return [write_run(tvbo.simulate("drifting-peak", algorithm, compute="measured", seed=s,
                                    **RUN), folder / f"{algorithm}-{s}.nc") for s in seeds]


def _calibrate(capsys, *argv: str) -> tuple[int, str]:
    try:
        status = cli.main(["calibrate", *argv])
    except SystemExit as stop:
        status = stop.code
    return status, capsys.readouterr().err


def test_fit_recovers_a_known_polynomial_and_reports_its_error() -> None:
    n = np.arange(5, 400, dtype=float)
    truth = [0.02, 3e-4, 2e-6]
    seconds = truth[0] + truth[1] * n + truth[2] * n**2
    coefficients, error = fit_polynomial(n, seconds, 2)
    assert np.allclose(coefficients, truth, rtol=1e-6)
    assert error["r2"] == pytest.approx(1.0) and error["rmse_s"] < 1e-9
    # noisy and decreasing data: coefficients stay >= 0 and the error says how bad the fit is
    coefficients, error = fit_polynomial(n, 1.0 - 1e-3 * n, 1)
    assert min(coefficients) >= 0 and error["relative_rmse"] > 0.1


def test_leave_one_run_out_predicts_each_run_from_the_others() -> None:
    n = np.arange(15.0, 60.0)
    truth = 0.1 + 2e-3 * n
    same = [{"update": (list(n), list(truth))} for _ in range(3)]
    check = leave_one_run_out(same, ["a", "b", "c"], 1)
    assert check["phases"]["update"]["rmse_s"] < 1e-9
    assert check["run_totals"]["max_abs_relative_error"] < 1e-9
    # a run twice as slow as the others is predicted at half its cost: the error says so
    slow = [*same[:2], {"update": (list(n), list(2 * truth))}]
    totals = leave_one_run_out(slow, ["a", "b", "c"], 1)["run_totals"]
    assert [t["run"] for t in totals["runs"]] == ["a", "b", "c"]
    assert totals["runs"][2]["relative_error"] == pytest.approx(-0.5, rel=1e-6)
    assert totals["runs"][0]["relative_error"] > 0.4  # fitted to one normal and one slow run


def test_measured_runs_become_a_deterministic_replay(plugin, tmp_path: Path, capsys) -> None:
    runs = _measured(tmp_path / "runs")
    model = tmp_path / "R.yaml"
    status, err = _calibrate(capsys, "--from-runs", str(tmp_path / "runs"), "--out", str(model),
                             "--note", "made by the test")
    assert status == 0, err
    data = yaml.safe_load(model.read_text())
    assert data["algorithm"] == "ask-tell-es" and data["degree"] == 2
    # provenance names the runs relative to the folder given: no machine path in the file
    source = data["source"]
    assert [r["file"] for r in source["runs"]] == [f"runs/{p.name}" for p in runs]
    assert [r["seed"] for r in source["runs"]] == [0, 1] and source["n_runs"] == 2
    assert source["runs"][0]["sha256"] == hashlib.sha256(runs[0].read_bytes()).hexdigest()
    assert source["note"] == "made by the test" and str(tmp_path) not in model.read_text()
    assert source["algorithm_options"] == [{"sigma": 0.2}]
    # leave-one-run-out: each run predicted by the model of the other
    totals = data["validation"]["run_totals"]["runs"]
    assert [t["run"] for t in totals] == [r["file"] for r in source["runs"]]
    assert set(data["validation"]["phases"]) <= set(data["phases"])
    assert set(data["fit_error"]) == set(data["phases"]) and "acquisition" in data["phases"]
    assert all(a >= 0 for c in data["phases"].values() for a in c)

    first, second = (tvbo.simulate("drifting-peak", "ask-tell-es", compute="polynomial",
                                   profile=str(model), seed=7, **RUN) for _ in range(2))
    assert digest_dataset(first) == digest_dataset(second)  # deterministic: bit-identical
    recorded = json.loads(first.attrs["compute_model_json"])["replay"]
    assert recorded["fit_error"] == data["fit_error"] and recorded["source"] == data["source"]
    assert recorded["validation"] == data["validation"]
    # every post-warm-up proposal is charged the propose phases' R_p(n), n before ingestion
    warm = first["is_warmup"].values.ravel()
    sizes = first["dataset_size"].values.ravel()
    charged = first["compute_acquisition"].values.ravel()
    k = int(np.argmin(warm))
    assert charged[k] == pytest.approx(replay_seconds(data["phases"], "propose", sizes[k - 1]))
    # a model describes one algorithm
    with pytest.raises(ValueError, match="response-time model of 'ask-tell-es', not of 'gp-ucb'"):
        tvbo.simulate("drifting-peak", "gp-ucb", compute="polynomial", profile=str(model), **RUN)


@pytest.mark.parametrize("case", ["counted", "empty", "two algorithms"])
def test_bad_runs_are_one_line_and_nothing_written(plugin, tmp_path: Path, capsys,
                                                   case: str) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    if case == "counted":
        write_run(tvbo.simulate("drifting-peak", "gp-ucb", **RUN), folder / "g.nc")
        cause = "made under compute 'counted', not 'measured'"
    elif case == "two algorithms":
        _measured(folder, seeds=(0,))
        _measured(folder, seeds=(0,), algorithm="gp-ucb")
        cause = "runs of 2 algorithms (ask-tell-es, gp-ucb)"
    else:
        cause = "no run files (*.nc) in this folder"
    out = tmp_path / "R.yaml"
    status, err = _calibrate(capsys, "--from-runs", str(folder), "--out", str(out))
    assert status == 2 and len(err.strip().splitlines()) == 1 and cause in err, err
    assert not out.exists() and not list(tmp_path.glob(".R.yaml*"))


def test_replayed_runs_merge_with_counted_runs_under_a_caveat(plugin, tmp_path: Path,
                                                              capsys) -> None:
    measured = _measured(tmp_path / "runs", seeds=(0,))
    model = tmp_path / "R.yaml"
    assert _calibrate(capsys, "--from-runs", *map(str, measured), "--out", str(model))[0] == 0
    replay = write_run(tvbo.simulate("drifting-peak", "ask-tell-es", compute="polynomial",
                                     profile=str(model), **RUN), tmp_path / "replay.nc")
    counted = write_run(tvbo.simulate("drifting-peak", "gp-ucb", **RUN), tmp_path / "gp.nc")
    campaign = merge_runs([replay, counted])
    assert sorted(map(str, campaign["algorithm"].values)) == ["ask-tell-es", "gp-ucb"]
    text = setting_text(campaign_setting(campaign))
    assert "Caveat: (1+1)-ES (public code) (fit error" in text and "replays its measured" in text
    # measured runs still merge with nothing else
    with pytest.raises(MixedRunsError, match="replayed runs merge only with counted runs"):
        merge_runs([replay, measured[0]])
    # one algorithm, two different models: refused
    other = tmp_path / "R1.yaml"
    assert _calibrate(capsys, "--from-runs", *map(str, measured), "--degree", "1", "--out",
                      str(other))[0] == 0
    again = write_run(tvbo.simulate("drifting-peak", "ask-tell-es", compute="polynomial",
                                    profile=str(other), seed=1, **RUN), tmp_path / "again.nc")
    with pytest.raises(MixedRunsError, match="replay different response-time models"):
        merge_runs([replay, again])
    with xr.open_dataset(replay) as ds:
        assert json.loads(ds.attrs["compute_model_json"])["replay"]["file"] == str(model)


def test_a_campaign_replays_one_algorithm_beside_counted_ones(plugin, tmp_path: Path,
                                                              capsys) -> None:
    """compute_per_algorithm: checked before any job, and only mixes `tvbo merge` accepts."""
    from tvbo.config_check import ConfigError, check_config, compute_values

    measured = _measured(tmp_path / "runs", seeds=(0,))
    model = tmp_path / "R.yaml"
    assert _calibrate(capsys, "--from-runs", *map(str, measured), "--out", str(model))[0] == 0
    schema = REPO / "workflow" / "schemas" / "config.schema.yaml"

    def config(**per_algorithm) -> dict:
        return {"campaign": "c", "benchmarks": ["drifting-peak"], "plugins": [MODULE],
                "algorithms": ["ask-tell-es", "gp-ucb"], "compute_per_algorithm": per_algorithm}

    good = check_config(config(**{"ask-tell-es": {"compute": "polynomial",
                                                  "profile": str(model)}}), schema=schema)
    assert compute_values(good, "ask-tell-es") == {"compute": "polynomial",
                                                   "profile": str(model), "polynomial": None}
    assert compute_values(good, "gp-ucb")["compute"] == "counted"
    for per_algorithm, message in [
        ({"ask-tell-es": {"compute": "measured"}}, "the runs could not be merged"),
        ({"gp-ucb": {"compute": "polynomial", "profile": str(model)}},
         "response-time model of 'ask-tell-es', not of 'gp-ucb'"),
        ({"nope": {"compute": "measured"}}, "'nope' is not an algorithm of the grid"),
        ({"ask-tell-es": {"compute": "polynomial"}}, "must be set exactly when compute is"),
    ]:
        with pytest.raises(ConfigError, match=message):
            check_config(config(**per_algorithm), schema=schema)
    # without a replay, the plugin under counted is refused before any job (it reports no work)
    with pytest.raises(ConfigError, match="'ask-tell-es' reported no work"):
        check_config(config(), schema=schema)
