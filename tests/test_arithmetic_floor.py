"""benchmarks/arithmetic_floor.py: the counts it prices are the run files' own, tallied here
independently (xarray, not the script's netCDF4 loop), on a real small run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from tests.scripts import load_script


@pytest.fixture(scope="module")
def floor():
    return load_script("benchmarks/arithmetic_floor.py")


@pytest.fixture(scope="module")
def run_file(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("floor") / "camp" / "runs" / "hartmann3" / "gp-ucb" / "s0.nc"
    subprocess.run([sys.executable, "-m", "tvbo", "run", "--benchmark", "hartmann3",
                    "--algorithm", "gp-ucb", "--horizon", "20", "--warmup", "4", "--cost", "0.5",
                    "--seed", "0", "--quiet", "--out", str(out)], check=True)
    return out


def test_counts_are_the_run_files_fits_and_post_warmup_acquisitions(floor, run_file):
    fits, scores, cpu = floor._counts(run_file)
    with xr.open_dataset(run_file) as ds:
        n_data = ds["fit_n_data"].values.ravel()
        n_evals = ds["fit_n_evals"].values.ravel()
        sizes = ds["dataset_size"].values.ravel()
        warm = ds["is_warmup"].values.ravel().astype(bool)
        assert cpu == ds.attrs["run_cpu_seconds"] > 0
    assert len(n_data) > 0 and sum(fits.values()) == int(n_evals.sum())
    for n in set(n_data.tolist()):
        assert fits[int(n)] == int(n_evals[n_data == n].sum())
    # each post-warm-up iteration scores 512 raw samples (gp-ucb's default) against the data
    # held before it: the previous iteration's dataset size
    chose = np.flatnonzero(~warm)
    assert len(chose) > 0
    assert sum(scores.values()) == 512 * len(chose)
    assert scores[int(sizes[chose[0] - 1])] >= 512


def test_price_counts_n_cubed_per_fit_evaluation(floor):
    from collections import Counter

    costs = {"n": np.array([1.0, 100.0]), "chol": np.array([1e-6, 1e-3]),
             "solve": np.array([1e-6, 1e-4]), "lapack_rate": 1e9, "gemm_rate": 2e9}
    p = floor.price(Counter({10: 3, 20: 1}), Counter({10: 1024}), costs, 512)
    assert p["fit_flop_count"] == 3 * 10**3 + 20**3
    assert p["score_flop_count"] == 1024 * 10**2
    assert p["fit_peak"] == pytest.approx(p["fit_flop_count"] / 2e9)
    # log-log interpolation between the timed sizes: 1e-6 s at n = 1, 1e-3 s at n = 100
    assert p["fit_lapack"] == pytest.approx(3 * 10 ** -4.5 + 1 * 10 ** (-6 + 3 * np.log10(20) / 2))


def test_unknown_campaign_is_refused(floor, tmp_path, capsys):
    (tmp_path / "a" / "runs").mkdir(parents=True)
    assert floor.main(["--results", str(tmp_path), "--campaigns", "nope"]) == 2
    assert "no runs folder for nope" in capsys.readouterr().err
