"""``tvbo export``: the campaign as tidy long tables, read back into pandas exactly.

The campaign is built from real (short) runs of different lengths with one cell of the run grid
left empty, so the export has padding of both kinds to drop. The values read back are compared
with the RUN FILES themselves (not with the campaign the export read), so a merge or export
error that shifts, pads or rounds a value fails here.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import tvbo
from tvbo.cli import main
from tvbo.results.campaign import merge_runs, write_campaign
from tvbo.results.export import iteration_metrics, run_metrics
from tvbo.results.io import write_run

#: (algorithm, seed) -> max_iterations: ragged on purpose; ("gp-ucb", 1) is not run at all
RUNS = {("gp-ucb", 0): 9, ("r-gp-ucb", 0): 7, ("r-gp-ucb", 1): 10}
HAVE_PYARROW = importlib.util.find_spec("pyarrow") is not None


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("export")
    runs = {}
    for (algorithm, seed), n in RUNS.items():
        ds = tvbo.simulate("forrester", algorithm, seed=seed, warmup=3, max_iterations=n)
        runs[(algorithm, seed)] = ds
        write_run(ds, root / f"{algorithm}_{seed}.nc")
    path = write_campaign(merge_runs(sorted(root.glob("*.nc"))), root / "campaign.nc")
    return path, runs


def _read(path: Path, fmt: str) -> pd.DataFrame:
    if fmt == "csv":  # pandas 3 parses floats exactly by default; 2.x needs "round_trip"
        exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
        return pd.read_csv(path, keep_default_na=False, na_values=[""], **exact)
    return pd.read_parquet(path)


FORMATS = ["csv", pytest.param("parquet", marks=pytest.mark.skipif(
    not HAVE_PYARROW, reason="pyarrow is not installed (the parquet extra)"))]


@pytest.mark.parametrize("fmt", FORMATS)
def test_per_run_table_round_trips(campaign, tmp_path: Path, fmt: str) -> None:
    path, runs = campaign
    out = tmp_path / f"runs.{fmt}"
    assert main(["export", str(path), "--format", fmt, "--out", str(out)]) == 0
    table = _read(out, fmt)
    assert list(table.columns) == ["benchmark", "algorithm", "seed", "speed", "metric", "value",
                                   "unit"]
    with xr.open_dataset(path) as ds:
        metrics = run_metrics(ds)
    assert {"average_regret", "time_integrated_regret", "n_iterations"} <= set(metrics)
    assert len(table) == len(RUNS) * len(metrics)  # the empty grid cell has no row
    for (algorithm, seed), ds in runs.items():
        rows = table[(table.algorithm == algorithm) & (table.seed == seed)]
        assert (rows.benchmark == "forrester").all() and (rows.speed == 1.0).all()
        assert rows.metric.tolist() == metrics
        got = rows.set_index("metric")["value"]
        for metric in metrics:
            expected = float(np.asarray(ds[metric]).item())
            assert got[metric] == expected or (np.isnan(expected) and np.isnan(got[metric])), metric


@pytest.mark.parametrize("fmt", FORMATS)
def test_per_iteration_table_round_trips(campaign, tmp_path: Path, fmt: str) -> None:
    path, runs = campaign
    out = tmp_path / f"iterations.{fmt}"
    assert main(["export", str(path), "--per-iteration", "--out", str(out)]) == 0
    table = _read(out, fmt)
    assert list(table.columns) == ["benchmark", "algorithm", "seed", "speed", "iteration",
                                   "metric", "value", "unit"]
    with xr.open_dataset(path) as ds:
        metrics = iteration_metrics(ds)
        units = {m: str(ds[m].attrs.get("units", "")) for m in metrics}
    assert {"regret", "t_sample", "y", "dataset_size", "compute_total"} <= set(metrics)
    assert units["t_sample"] == "s"
    for (algorithm, seed), ds in runs.items():
        rows = table[(table.algorithm == algorithm) & (table.seed == seed)]
        n = int(np.asarray(ds["n_iterations"]).item())
        assert sorted(set(rows.iteration)) == list(range(n))  # no padded iteration
        for metric in metrics:
            cells = rows[rows.metric == metric].sort_values("iteration")
            if metric not in ds:  # another algorithm's state variable: NaN for this run
                assert cells["value"].isna().all(), metric
                continue
            np.testing.assert_array_equal(cells["value"].to_numpy(),
                                          np.asarray(ds[metric], dtype=float).ravel(),
                                          err_msg=metric)
            assert (cells["unit"].fillna("") == units[metric]).all(), metric
    assert len(table) == sum(RUNS.values()) * len(metrics)


def test_format_from_suffix_and_conflicts(campaign, tmp_path: Path, capsys) -> None:
    path, _ = campaign
    for args, message in [
        (["--out", str(tmp_path / "t.txt")], "cannot tell the format"),
        (["--format", "csv", "--out", str(tmp_path / "t.parquet")], "ends in .parquet"),
        (["--format", "csv", "--out", str(tmp_path)], "is a directory"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            main(["export", str(path), *args])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1


def test_parquet_without_pyarrow_says_how_to_install(campaign, tmp_path: Path, capsys,
                                                     monkeypatch) -> None:
    path, _ = campaign
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyarrow" else real(name, *a))
    with pytest.raises(SystemExit) as exit_info:
        main(["export", str(path), "--out", str(tmp_path / "t.parquet")])
    assert exit_info.value.code == 2
    assert "pip install 'tvbo-lab[parquet]'" in capsys.readouterr().err
    assert not (tmp_path / "t.parquet").exists()
