"""Model-layer helpers of BOLT: the counted n* search and the counted R(n) fit."""

from __future__ import annotations

from tvbo.algorithms.bolt.nstar import (
    cubic_response_time,
    nstar,
    search_nstar,
    temporal_correlation,
)
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


def test_the_analysis_path_is_the_same_code():
    from tvbo.algorithms.bolt import nstar as models_nstar
    from tvbo.analysis import nstar as analysis_nstar

    assert analysis_nstar.nstar is models_nstar.nstar
    assert analysis_nstar.temporal_correlation is models_nstar.temporal_correlation
