"""Model-layer helpers of BOLT: the counted n* search and the counted R(n) fit."""

from __future__ import annotations

import numpy as np
import pytest

from tvbo.models.nstar import cubic_response_time, nstar, search_nstar, temporal_correlation
from tvbo.models.response_time import fit_response_time, fit_response_time_counted
from tvbo.work import WorkCounter


def test_search_nstar_is_nstar_and_counts_its_own_work():
    R = cubic_response_time((0.5, 0.01, 0.0, 1e-5))
    expected = nstar(temporal_correlation("matern32", 60.0), R, n0=10, n_max=5000)
    work = WorkCounter()
    with work.phase("clean"):
        got = search_nstar("matern32", 60.0, R, n0=10, n_max=5000, work=work)
    assert got == expected == search_nstar("matern32", 60.0, R, n0=10, n_max=5000)
    counts = work.counts()["clean"]
    assert counts["call"] == 1.0
    # every k_T evaluation is counted: its entries and one step each
    assert counts["step"] >= abs(expected - 10) and counts["kernel"] >= counts["step"]


def test_fit_response_time_counted_counts_and_records_the_fit():
    sizes = np.arange(5, 25)
    times = 0.2 + 0.01 * sizes + 1e-4 * sizes**3
    work = WorkCounter()
    coefficients = fit_response_time_counted(sizes, times, work=work, source="test")
    np.testing.assert_allclose(coefficients, fit_response_time(sizes, times))
    np.testing.assert_allclose(coefficients, [0.2, 0.01, 0.0, 1e-4], atol=1e-9)
    counts = work.counts()["update"]
    assert counts == {"call": 1.0, "flop": 128.0 * len(sizes)}
    (record,) = work.drain_fits()
    assert record["source"] == "test" and record["n_data"] == len(sizes)
    assert record["response_c3"] == pytest.approx(1e-4) and "response_c2_at_lower" in record


def test_the_analysis_path_is_the_same_code():
    from tvbo.analysis import nstar as analysis_nstar
    from tvbo.models import nstar as models_nstar

    assert analysis_nstar.nstar is models_nstar.nstar
    assert analysis_nstar.temporal_correlation is models_nstar.temporal_correlation
