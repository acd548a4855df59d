"""Run-file I/O (validation, atomic writes, round trip) and merging runs into campaigns."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from tests.fake_runs import ALGORITHMS, BENCHMARKS, SEEDS, make_run, write_fake_campaign
from tvbo.results.campaign import merge_runs, read_campaign, runs_table, write_campaign
from tvbo.results.io import read_run, validate_run, write_run
from tvbo.results.schema import CODE_ATTRIBUTE, COST_ATTRIBUTES, PRESENT_VARIABLE, RUN_KEYS


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# ------------------------------------------------------------------------------------- io ----
def test_round_trip_preserves_values_and_attributes(tmp_path: Path) -> None:
    run = make_run("shekel", "bolt", 1)
    path = write_run(run, tmp_path / "run.nc")
    assert path == tmp_path / "run.nc"
    back = read_run(path)
    xr.testing.assert_equal(back, run)
    assert back.attrs.keys() == run.attrs.keys()
    for name, value in run.attrs.items():
        assert back.attrs[name] == value, name
    assert back["regret"].attrs["long_name"] == run["regret"].attrs["long_name"]
    assert back["t_decide"].dtype == np.float64  # virtual seconds are not decoded to timedelta
    assert back["is_warmup"].dtype == np.int8
    assert json.loads(back.attrs["config_json"])["seed"] == 1
    assert _leftovers(tmp_path) == ["run.nc"]


def test_write_is_compressed(tmp_path: Path) -> None:
    write_run(make_run("shekel", "bolt", 0), tmp_path / "run.nc")
    encoding = xr.open_dataset(tmp_path / "run.nc", engine="netcdf4")
    try:
        assert encoding["x"].encoding["zlib"] is True
    finally:
        encoding.close()


def test_validate_lists_every_missing_variable_and_attribute() -> None:
    run = make_run().drop_vars(["regret", "f_held"])
    del run.attrs["horizon"]
    del run.attrs["config_json"]
    with pytest.raises(ValueError) as info:
        validate_run(run)
    message = str(info.value)
    for name in ("regret", "f_held", "horizon", "config_json"):
        assert name in message


def test_validate_rejects_attributes_netcdf_cannot_store() -> None:
    run = make_run()
    run.attrs["flag"] = True
    run["y"].attrs["extra"] = None
    with pytest.raises(ValueError, match=r"flag=True.*y\.extra=None"):
        validate_run(run)


def test_validate_requires_length_one_run_keys() -> None:
    two_seeds = xr.concat(
        [make_run(seed=0, n_iterations=15), make_run(seed=1, n_iterations=15)],
        dim="seed",
        combine_attrs="drop_conflicts",
        join="outer",
    )
    with pytest.raises(ValueError, match="seed"):
        validate_run(two_seeds)
    with pytest.raises(ValueError, match="speed"):
        validate_run(make_run().isel(speed=0))


def test_invalid_run_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="f_star"):
        write_run(make_run().drop_vars("f_star"), tmp_path / "run.nc")
    assert _leftovers(tmp_path) == []


def test_failure_inside_to_netcdf_leaves_no_file(tmp_path: Path, monkeypatch) -> None:
    original = xr.Dataset.to_netcdf

    def write_then_crash(self, path, *args, **kwargs):
        original(self, path, *args, **kwargs)  # a complete temp file exists now ...
        Path(path).write_bytes(b"partial")  # ... and is then corrupted
        raise RuntimeError("disk full")

    monkeypatch.setattr(xr.Dataset, "to_netcdf", write_then_crash)
    with pytest.raises(RuntimeError, match="disk full"):
        write_run(make_run(), tmp_path / "run.nc")
    assert _leftovers(tmp_path) == []


def test_failed_overwrite_keeps_previous_file(tmp_path: Path, monkeypatch) -> None:
    target = write_run(make_run(seed=0), tmp_path / "run.nc")

    def crash(self, path, *args, **kwargs):
        Path(path).write_bytes(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(xr.Dataset, "to_netcdf", crash)
    with pytest.raises(KeyboardInterrupt):
        write_run(make_run(seed=1), target)
    monkeypatch.undo()
    assert _leftovers(tmp_path) == ["run.nc"]
    assert int(read_run(target)["seed"].values[0]) == 0


def test_read_run_rejects_a_campaign(tmp_path: Path) -> None:
    campaign = merge_runs(write_fake_campaign(tmp_path / "runs"))
    path = write_campaign(campaign, tmp_path / "campaign.nc")
    with pytest.raises(ValueError, match="campaign.nc.*length-1"):
        read_run(path)


# ------------------------------------------------------------------------------- campaign ----
@pytest.fixture(scope="module")
def run_paths(tmp_path_factory) -> list[Path]:
    return write_fake_campaign(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def campaign(run_paths) -> xr.Dataset:
    return merge_runs(run_paths)


def test_merge_shapes_and_coordinates(campaign: xr.Dataset) -> None:
    runs = [make_run(b, a, s) for b in BENCHMARKS for a in ALGORITHMS for s in SEEDS]
    assert campaign.sizes["benchmark"] == 2
    assert campaign.sizes["algorithm"] == 2
    assert campaign.sizes["seed"] == 3
    assert campaign.sizes["speed"] == 1
    assert campaign.sizes["iteration"] == max(r.sizes["iteration"] for r in runs)
    assert campaign.sizes["dim"] == max(d for d, _ in BENCHMARKS.values())
    union = np.union1d(*[r["time"].values for r in (runs[0], runs[-1])])
    np.testing.assert_array_equal(campaign["time"].values, union)
    assert list(campaign["regret"].dims) == [*RUN_KEYS, "iteration"]
    # variables stay on their own dimensions (no broadcasting over time/dim/iteration)
    assert set(campaign["t_decide"].dims) == {*RUN_KEYS, "iteration"}
    assert set(campaign["average_regret"].dims) == set(RUN_KEYS)
    assert campaign[PRESENT_VARIABLE].values.all()


def test_merge_pads_ragged_runs_with_nan(campaign: xr.Dataset) -> None:
    for benchmark, (d, _) in BENCHMARKS.items():
        for algorithm in ALGORITHMS:
            for seed in SEEDS:
                run = make_run(benchmark, algorithm, seed)
                n = run.sizes["iteration"]
                cell = campaign.sel(benchmark=benchmark, algorithm=algorithm, seed=seed, speed=1.0)
                np.testing.assert_array_equal(
                    cell["regret"].values[:n], run["regret"].values[0, 0, 0, 0]
                )
                assert np.isnan(cell["regret"].values[n:]).all()
                x = cell["x"].values
                np.testing.assert_array_equal(x[:n, :d], run["x"].values[0, 0, 0, 0])
                assert np.isnan(x[:, d:]).all() and np.isnan(x[n:]).all()
                held = cell["regret_held"].sel(time=run["time"].values).values
                np.testing.assert_array_equal(held, run["regret_held"].values[0, 0, 0, 0])


def test_merge_keeps_per_run_attributes_as_variables(campaign: xr.Dataset) -> None:
    config = campaign["attr_config_json"].sel(
        benchmark="eggholder", algorithm="gp_ucb", seed=2, speed=1.0
    )
    assert json.loads(str(config.values)) == {
        "algorithm": "gp_ucb",
        "benchmark": "eggholder",
        "seed": 2,
        "speed": 1.0,
    }
    assert float(campaign["attr_horizon"].sel(benchmark="shekel").max()) == BENCHMARKS["shekel"][1]
    assert campaign.attrs["compute_model"] == "counted"  # shared by all runs: stays global
    assert "config_json" not in campaign.attrs
    assert "config_json" in campaign.attrs["per_run_attributes"].split(",")


def test_algorithm_specific_state_is_nan_elsewhere(campaign: xr.Dataset) -> None:
    assert np.isnan(campaign["state_n_star"].sel(algorithm="gp_ucb").values).all()
    assert np.isfinite(campaign["state_n_star"].sel(algorithm="bolt", iteration=0).values).all()


def test_missing_seed_campaign(tmp_path: Path) -> None:
    paths = write_fake_campaign(tmp_path, skip={("shekel", "gp_ucb", 1)})
    campaign = merge_runs(paths)
    assert campaign.sizes["seed"] == 3
    present = campaign[PRESENT_VARIABLE]
    assert int(present.sum()) == len(paths) == 11
    missing = dict(benchmark="shekel", algorithm="gp_ucb", seed=1, speed=1.0)
    assert int(present.sel(missing)) == 0
    assert np.isnan(campaign["regret"].sel(missing).values).all()
    assert str(campaign["attr_config_json"].sel(missing).values) == ""
    table = runs_table(campaign)
    assert len(table) == 11
    assert not (
        (table["benchmark"] == "shekel") & (table["algorithm"] == "gp_ucb") & (table["seed"] == 1)
    ).any()


def test_merge_rejects_empty_and_duplicates(tmp_path: Path, run_paths: list[Path]) -> None:
    with pytest.raises(ValueError, match="empty"):
        merge_runs([])
    copy = tmp_path / "copy.nc"
    copy.write_bytes(run_paths[0].read_bytes())
    with pytest.raises(ValueError, match="duplicate run keys.*copy.nc"):
        merge_runs([*run_paths, copy])


def test_merge_drops_the_machine_cost_and_code_record_of_each_run(tmp_path: Path) -> None:
    """The same runs made twice differ only in their CPU and wall seconds and in the modules
    their processes had loaded; their campaign files must not differ at all."""
    paths = []
    for making in (1, 2):
        runs = []
        for seed in (0, 1):
            run = make_run("shekel", "bolt", seed)
            run.attrs.update({name: 1.5 * making + seed for name in COST_ATTRIBUTES})
            run.attrs[CODE_ATTRIBUTE] = f'{{"tvbo": "{making}{seed}"}}'
            runs.append(write_run(run, tmp_path / f"m{making}" / f"seed{seed}.nc"))
        paths.append(write_campaign(merge_runs(runs), tmp_path / f"campaign{making}.nc"))
    campaign = read_campaign(paths[0])
    for name in (*COST_ATTRIBUTES, CODE_ATTRIBUTE):
        assert name not in campaign.attrs and f"attr_{name}" not in campaign
    assert paths[0].read_bytes() == paths[1].read_bytes()


def test_merge_with_several_speeds(tmp_path: Path) -> None:
    campaign = merge_runs(write_fake_campaign(tmp_path, speeds=(1.0, 10.0)))
    assert campaign["speed"].values.tolist() == [1.0, 10.0]
    assert len(runs_table(campaign)) == 24


def test_campaign_round_trip(tmp_path: Path, campaign: xr.Dataset) -> None:
    path = write_campaign(campaign, tmp_path / "campaign.nc")
    back = read_campaign(path)
    xr.testing.assert_equal(
        back.drop_vars("attr_config_json"), campaign.drop_vars("attr_config_json")
    )
    np.testing.assert_array_equal(
        back["attr_config_json"].values.astype(str), campaign["attr_config_json"].values.astype(str)
    )
    assert _leftovers(tmp_path) == ["campaign.nc"]
    with pytest.raises(ValueError, match="run-key"):
        write_campaign(campaign.isel(seed=0), tmp_path / "bad.nc")


def test_runs_table(campaign: xr.Dataset) -> None:
    table = runs_table(campaign)
    assert len(table) == 12
    assert list(table.columns[:4]) == list(RUN_KEYS)
    assert table["n_iterations"].dtype == np.int64
    row = table[
        (table["benchmark"] == "eggholder") & (table["algorithm"] == "bolt") & (table["seed"] == 0)
    ].iloc[0]
    run = make_run("eggholder", "bolt", 0)
    assert row["n_iterations"] == run.sizes["iteration"]
    assert row["average_regret"] == pytest.approx(run.attrs["average_regret"], rel=0, abs=0)


def test_a_run_with_more_queries_than_the_cap_keeps_its_metrics_not_its_queries(
        tmp_path: Path) -> None:
    """The floor rows make H / c queries: padded to them, every run of a campaign would be as
    long. Above ``max_queries`` a run keeps its per-run metrics and time-grid curves; its
    per-query variables are NaN padding, and the campaign names it."""
    paths = [write_run(make_run("shekel", "gp_ucb", 0, n_iterations=12), tmp_path / "a.nc"),
             write_run(make_run("shekel", "bolt", 0, n_iterations=40), tmp_path / "b.nc")]
    capped = merge_runs(paths, max_queries=20)
    assert capped.sizes["iteration"] == 12  # the long run no longer sets the length
    long = capped.sel(algorithm="bolt").squeeze()
    assert np.isnan(long["y"].values).all()
    assert long["average_regret"].item() == pytest.approx(
        read_run(paths[1])["average_regret"].item())
    assert long["n_iterations"].item() == 40
    assert json.loads(capped.attrs["per_query_omitted_json"]) == {
        "max_queries": 20, "runs": ["shekel/bolt/0/1.0"]}
    whole = merge_runs(paths, max_queries=None)
    assert whole.sizes["iteration"] == 40 and "per_query_omitted_json" not in whole.attrs
    short = whole.sel(algorithm="gp_ucb")["y"].isel(iteration=slice(0, 12))
    assert short.equals(capped.sel(algorithm="gp_ucb")["y"])
