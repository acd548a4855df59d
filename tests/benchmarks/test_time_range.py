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


# -- spatial_range: the reading option of the spatial box (issue 22 item 4) -----------------------
def test_spatial_range_replaces_the_spatial_box_only():
    small = make("griewank", spatial_range=[-5.0, 5.0])
    x = np.full(5, 0.75)
    np.testing.assert_array_equal(small.to_original(x, 0.0)[:5], 2.5)
    assert small.to_original(x, 0.0)[-1] == -600.0  # time keeps the published box
    assert small.describe()["domain"]["spatial"] == [[-5.0, 5.0]] * 5
    assert small.describe()["spatial_range"] == [-5.0, 5.0]
    assert "spatial_range" not in make("griewank").describe()


def test_exact_argmaxes_follow_the_spatial_range():
    # the origin moves in normalised coordinates when the box is not centred on it
    shifted = make("griewank", spatial_range=[-2.0, 8.0])
    times = np.linspace(0.0, 600.0, 601)
    t_pos = next(t for t in times if shifted._time_cos(t) > 0)
    t_neg = next(t for t in times if shifted._time_cos(t) < 0)
    np.testing.assert_allclose(shifted.exact_argmax(t_pos), 0.2)
    assert shifted.exact_argmax(t_neg) is None
    assert make("ackley", spatial_range=[1.0, 5.0]).exact_argmax(0.0) is None  # 0 excluded
    np.testing.assert_allclose(make("ackley", spatial_range=[-1.0, 3.0]).exact_argmax(0.0), 0.25)
    # Schwefel's per-coordinate argmax is solved for each box: z ~ 420.97 on the published one,
    # and on [-100, 100] the best of g(z) = z sin sqrt|z| within it
    published = make("schwefel").exact_argmax(0.0)
    np.testing.assert_allclose(-500.0 + 1000.0 * published, 420.9687, atol=1e-3)
    small = make("schwefel", spatial_range=[-100.0, 100.0])
    z = -100.0 + 200.0 * small.exact_argmax(0.0)[0]
    grid = np.linspace(-100.0, 100.0, 200001)
    assert z * np.sin(np.sqrt(abs(z))) >= np.max(grid * np.sin(np.sqrt(np.abs(grid)))) - 1e-9


@pytest.mark.parametrize("bad", [[1.0, 0.0], [0.0, math.nan], "ab"])
def test_bad_spatial_range_is_rejected_naming_the_option(bad):
    with pytest.raises(ValueError, match="spatial_range"):
        make("griewank", spatial_range=bad)
