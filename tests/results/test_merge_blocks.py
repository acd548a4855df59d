"""The campaign merge combines the run grid block by block, optionally in worker processes
(issue 14); the campaign must be the one a single combine over the whole grid gives.

The runs are fake (:mod:`tests.fake_runs`) with fit records added to some of them (strings,
integers and flags of ragged length) and none to others (run files from before fit recording),
on a grid with a missing run and two speeds: every step of the merge has something to do.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from tests.fake_runs import ALGORITHMS, BENCHMARKS, SEEDS, make_run
from tvbo import cli
from tvbo.results.campaign import (
    _combine,
    _combine_grid,
    _prepared_grid,
    decode_categories,
    merge_runs,
    write_campaign,
)
from tvbo.results.io import write_run
from tvbo.results.schema import RUN_KEYS
from tvbo.results.validate import load_runs

SPEEDS = (1.0, 10.0)
MISSING = ("eggholder", "bolt", 1, 10.0)
SOURCES = ("surrogate:gp", "surrogate:gp-time", "")


def _with_fits(ds: xr.Dataset, seed: int) -> xr.Dataset:
    """``ds`` with ``seed + 2`` fit records: a string (one empty), an integer and a flag."""
    n = seed + 2
    keys = {k: ds[k].values for k in RUN_KEYS}
    source = np.array([SOURCES[i % len(SOURCES)] for i in range(n)])
    fits = xr.Dataset(
        {
            "fit_source": ("fit", source),
            "fit_n_data": ("fit", np.arange(n, dtype=np.int64) + 3),
            "fit_success": ("fit", (np.arange(n) % 2).astype(np.int8)),
        },
        coords={"fit": np.arange(n)},
    ).expand_dims(keys)
    return xr.merge([ds, fits], combine_attrs="override")


@pytest.fixture(scope="module")
def run_paths(tmp_path_factory) -> list[Path]:
    directory = tmp_path_factory.mktemp("runs")
    paths = []
    for benchmark in BENCHMARKS:
        for algorithm in ALGORITHMS:
            for seed in SEEDS:
                for speed in SPEEDS:
                    if (benchmark, algorithm, seed, speed) == MISSING:
                        continue
                    run = make_run(benchmark, algorithm, seed, speed)
                    if algorithm == "bolt":  # gp_ucb runs stay without fit records
                        run = _with_fits(run, seed)
                    path = directory / f"{benchmark}_{algorithm}_{seed}_{speed:g}.nc"
                    paths.append(write_run(run, path))
    return paths


def test_block_combine_equals_the_whole_grid_combine(run_paths) -> None:
    grid, _, _, _ = _prepared_grid(run_paths, (), 1)
    whole, _, _, _ = _prepared_grid(run_paths, (), 1)
    blocks = _combine_grid(grid)
    reference = _combine(whole, RUN_KEYS)
    xr.testing.assert_identical(blocks, reference)
    assert list(blocks.variables) == list(reference.variables)
    for name, variable in reference.variables.items():
        assert blocks.variables[name].dtype == variable.dtype, name


def test_merge_in_worker_processes_gives_the_same_file(tmp_path, run_paths) -> None:
    one = merge_runs(run_paths)
    two = merge_runs(run_paths, jobs=2)
    xr.testing.assert_identical(one, two)
    assert list(one.variables) == list(two.variables)
    a = write_campaign(one, tmp_path / "one.nc").read_bytes()
    b = write_campaign(two, tmp_path / "two.nc").read_bytes()
    assert a == b
    # the campaign itself: the missing run is padding, fit strings are campaign-wide codes
    assert int(one["run_present"].sum()) == len(run_paths)
    assert int(one["run_present"].sel(dict(zip(RUN_KEYS, MISSING, strict=True)))) == 0
    cell = one.sel(benchmark="shekel", algorithm="bolt", seed=2, speed=1.0)
    assert decode_categories(cell["fit_source"]).tolist()[:4] == [*SOURCES, SOURCES[0]]
    assert cell["fit_n_data"].values[:4].tolist() == [3, 4, 5, 6]
    assert one["fit_n_data"].attrs["original_dtype"] == "int64"
    assert np.isnan(one["fit_n_data"].sel(algorithm="gp_ucb").values).all()


def test_jobs_must_be_a_positive_integer(run_paths) -> None:
    for jobs in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="jobs must be a positive integer"):
            merge_runs(run_paths[:2], jobs=jobs)


def test_workers_name_the_first_bad_file_in_order(tmp_path, run_paths) -> None:
    first, second = tmp_path / "first.nc", tmp_path / "second.nc"
    first.write_bytes(b"")
    second.write_bytes(b"benchmark,seed\n")
    with pytest.raises(ValueError, match="first.nc: empty file"):
        load_runs([*run_paths[:5], first, *run_paths[5:9], second], jobs=2)


def test_cli_merge_jobs(tmp_path, run_paths, capsys) -> None:
    out = tmp_path / "campaign.nc"
    assert cli.main(["merge", *map(str, run_paths), "--out", str(out), "--jobs", "2"]) == 0
    assert out.read_bytes() == write_campaign(merge_runs(run_paths), tmp_path / "c.nc").read_bytes()
    with pytest.raises(SystemExit):
        cli.main(["merge", str(run_paths[0]), "--out", str(out), "--jobs", "0"])
    assert "--jobs" in capsys.readouterr().err


def test_campaigns_are_read_lazily_with_the_same_content(tmp_path, run_paths) -> None:
    """Analyses hold only the variables they use (the OOM of parallel analysis jobs)."""
    from tvbo.results.campaign import read_campaign
    from tvbo.results.validate import load_campaign

    path = write_campaign(merge_runs(run_paths), tmp_path / "campaign.nc")
    eager = xr.load_dataset(path, decode_timedelta=False)
    for lazy in (load_campaign(path), read_campaign(path)):
        assert not lazy["regret"].variable._in_memory  # not read yet
        xr.testing.assert_identical(lazy, eager)
        assert lazy["regret"].variable._in_memory  # read once, then kept
