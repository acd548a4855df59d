"""Run files and campaigns: atomic writes, validation, merging of ragged and incomplete grids."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

from tests.fake_runs import ALGORITHMS, BENCHMARKS, SEEDS, make_run, write_fake_campaign
from tvbo.results.campaign import merge_runs, read_campaign, runs_table, write_campaign
from tvbo.results.io import read_run, validate_run, write_run


def test_round_trip_preserves_values_and_attributes(tmp_path):
    ds = make_run("eggholder", "bolt", 1)
    path = write_run(ds, tmp_path / "run.nc")
    back = read_run(path)
    for name in ds.data_vars:
        np.testing.assert_array_equal(back[name].values, ds[name].values)
    assert back.attrs["config_json"] == ds.attrs["config_json"]
    assert json.loads(back.attrs["compute_model_json"]) == {"profile": "reference"}
    assert back["t_decide"].dtype == np.float64  # virtual seconds stay floats


def test_failed_write_leaves_nothing_behind(tmp_path, monkeypatch):
    ds = make_run()

    def explode(self, *args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(xr.Dataset, "to_netcdf", explode)
    with pytest.raises(OSError, match="disk full"):
        write_run(ds, tmp_path / "run.nc")
    assert list(tmp_path.iterdir()) == []


def test_an_invalid_run_is_rejected_by_name(tmp_path):
    ds = make_run().drop_vars("regret")
    with pytest.raises(ValueError, match="regret"):
        validate_run(ds)
    with pytest.raises(ValueError, match="regret"):
        write_run(ds, tmp_path / "bad.nc")
    assert not (tmp_path / "bad.nc").exists()


def test_merge_pads_ragged_runs_and_keeps_every_run(tmp_path):
    paths = write_fake_campaign(tmp_path)
    campaign = merge_runs(paths)
    assert dict(campaign.sizes)["benchmark"] == len(BENCHMARKS)
    assert dict(campaign.sizes)["algorithm"] == len(ALGORITHMS)
    assert dict(campaign.sizes)["seed"] == len(SEEDS)
    for path in paths:
        run = read_run(path)
        key = {k: run[k].values[0] for k in ("benchmark", "algorithm", "seed", "speed")}
        n = int(run["n_iterations"].values.ravel()[0])
        merged = campaign["regret"].sel(key).values
        np.testing.assert_allclose(merged[:n], run["regret"].values.ravel())
        assert np.all(np.isnan(merged[n:]))  # NaN padding beyond the run's own length
        d = int(run.attrs["dimension"])
        assert np.all(np.isnan(campaign["x"].sel(key).values[:, d:]))


def test_missing_seed_and_long_names_survive_writing(tmp_path):
    paths = write_fake_campaign(tmp_path, skip={("shekel", "bolt", 2)})
    campaign = merge_runs(paths)
    present = campaign["run_present"].sel(benchmark="shekel", algorithm="bolt").values.ravel()
    assert present.tolist() == [1, 1, 0]
    out = write_campaign(campaign, tmp_path / "campaign.nc")
    back = read_campaign(out)
    # regression: string coordinates must not be truncated to the first file's width
    assert sorted(back["benchmark"].values.tolist()) == sorted(BENCHMARKS)
    assert sorted(back["algorithm"].values.tolist()) == sorted(ALGORITHMS)
    table = runs_table(back)
    assert len(table) == len(BENCHMARKS) * len(ALGORITHMS) * len(SEEDS) - 1


def test_merge_rejects_empty_and_duplicate_inputs(tmp_path):
    with pytest.raises(ValueError, match="empty"):
        merge_runs([])
    a = write_run(make_run("shekel", "bolt", 0), tmp_path / "a.nc")
    b = write_run(make_run("shekel", "bolt", 0), tmp_path / "b.nc")
    with pytest.raises(ValueError, match="duplicate run keys"):
        merge_runs([a, b])


def test_written_files_follow_the_umask(tmp_path):
    import os
    import stat

    old = os.umask(0o022)
    try:
        path = write_run(make_run(), tmp_path / "run.nc")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
