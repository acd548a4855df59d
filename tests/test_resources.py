"""The resource guard (tvbo.resources, issue 24 item 3): the estimate grows with the sizes a run
allocates, the refusal names the estimate and the flag, and the estimate is within a factor of 2
of the peak memory measured on a real run (slow: benchmarks/memory_estimate.py does three)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tvbo.resources import MEMORY_LIMIT, check_resources, cores, estimate_run

NAMES = {"confirm_large": "--confirm-large", "threads": "--threads", "horizon": "--horizon",
         "time_grid_step": "--time-grid-step"}


def test_the_estimate_grows_with_every_size() -> None:
    base = estimate_run({"horizon": 600.0}).bytes
    assert estimate_run({"horizon": 6000.0}).bytes > base
    assert estimate_run({"horizon": 600.0, "time_grid_step": 0.01}).bytes > base
    assert estimate_run({"horizon": 600.0,
                         "benchmark_options": {"oracle_grid_step": 0.01}}).bytes > base
    assert estimate_run({"horizon": 600.0, "max_iterations": 10**6}).bytes > base


@pytest.mark.parametrize(("options", "words"), [
    ({"horizon": 1e12}, ["TiB", "more than the 4 GiB limit", "--confirm-large"]),
    ({"time_grid_step": 1e-9}, ["GiB", "time grid of 6e+11 instants", "--time-grid-step 1e-09"]),
    ({"threads": 10**5}, ["--threads 100000", f"{cores()} cores", "--confirm-large"]),
])
def test_the_refusal_names_the_estimate_and_the_flag(options, words) -> None:
    with pytest.raises(ValueError) as info:
        check_resources(options, names=NAMES)
    assert all(word in str(info.value) for word in words), str(info.value)
    check_resources({**options, "confirm_large": True}, names=NAMES)  # the flag allows it


def test_every_default_run_is_far_below_the_limit() -> None:
    assert estimate_run({}).bytes < MEMORY_LIMIT / 10


@pytest.mark.slow
def test_estimate_within_a_factor_of_2_of_the_measured_peak(tmp_path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    try:
        from memory_estimate import CASES, measure
    finally:
        sys.path.pop(0)
    label, options = CASES[-1]
    peak = measure(options, tmp_path)
    estimate = estimate_run({**options, "benchmark": "eggholder", "max_iterations": 18}).bytes
    assert 0.5 <= estimate / peak <= 2.0, (label, estimate, peak)
