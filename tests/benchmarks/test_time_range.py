"""The ``time_range`` option of the synthetic benchmarks: where t in [0, H] lands on the time
coordinate (the papers leave it open; the default sweeps the function's whole box)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from tvbo.benchmarks import make


def test_default_sweeps_the_box_and_time_range_replaces_it():
    box = make("griewank")
    unit = make("griewank", time_range=[0.0, 1.0])
    x = np.full(5, 0.25)
    assert box.to_original(x, 0.0)[-1] == -600.0 and box.to_original(x, 600.0)[-1] == 600.0
    assert unit.to_original(x, 0.0)[-1] == 0.0 and unit.to_original(x, 600.0)[-1] == 1.0
    assert unit.to_original(x, 150.0)[-1] == 0.25
    # the spatial coordinates are untouched
    np.testing.assert_array_equal(box.to_original(x, 0.0)[:5], unit.to_original(x, 0.0)[:5])
    assert unit.describe()["domain"]["time"] == [0.0, 1.0]
    assert unit.describe()["time_range"] == [0.0, 1.0]
    assert "time_range" not in box.describe()  # default runs describe themselves as before


def test_griewank_optimum_on_a_unit_time_range_matches_the_formula():
    """On z_t in [0, 1], cos(z_t / sqrt 6) > 0, so the origin is the spatial optimum and
    f*(t) = -(z_t^2 / 4000 - cos(z_t / sqrt 6) + 1) (all spatial cosines equal 1 there)."""
    bench = make("griewank", time_range=[0.0, 1.0], horizon=60.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in (0.0, 17.0, 60.0):
            z = t / 60.0
            expected = -(z * z / 4000.0 - math.cos(z / math.sqrt(6.0)) + 1.0)
            assert bench.f_star(t) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("bad", [[1.0, 0.0], [0.0, math.inf], [0.0], "ab", 3.0])
def test_bad_time_range_is_rejected_naming_the_option(bad):
    with pytest.raises(ValueError, match="time_range"):
        make("eggholder", time_range=bad)
