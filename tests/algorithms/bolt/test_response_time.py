"""BOLT's online response-time fit R(n): the counted fit equals the plain one and records itself."""

from __future__ import annotations

import numpy as np
import pytest

from tvbo.algorithms.bolt.response_time import fit_response_time, fit_response_time_counted
from tvbo.work import WorkCounter


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
