"""tvbo.qmc.sobol reproduces scipy.stats.qmc.Sobol (scrambled, 30 bits) bit for bit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import qmc

from tvbo.qmc import sobol


def _state(rng: np.random.Generator) -> tuple:
    return rng.bit_generator.state, rng.bit_generator.seed_seq.n_children_spawned


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 6, 8, 12, 40])
def test_points_and_generator_state_equal_scipy(d) -> None:
    for n in (0, 1, 2, 3, 7, 8, 100, 512, 1000, 1024):
        for seed in (0, 1, 12345):
            ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
            ours.random(), theirs.random()  # a generator that has been used before
            engine = qmc.Sobol(d, scramble=True, rng=theirs)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # scipy warns when n is not a power of 2
                expected = engine.random(n)
            got = sobol(d, n, ours)
            assert got.shape == expected.shape == (n, d) and got.dtype == expected.dtype
            assert np.array_equal(got, expected), (d, n, seed)
            assert _state(ours) == _state(theirs)
            assert ours.random() == theirs.random()


def test_random_base2_and_repeated_use_of_one_generator() -> None:
    """The engine's and the oracle's usage: random_base2 on streams spawned from a seed."""
    ours = np.random.default_rng(np.random.SeedSequence(7).spawn(4)[2])
    theirs = np.random.default_rng(np.random.SeedSequence(7).spawn(4)[2])
    for m in (0, 3, 9, 10):
        expected = qmc.Sobol(4, scramble=True, rng=theirs).random_base2(m)
        assert np.array_equal(sobol(4, 2**m, ours), expected)
    legacy = qmc.Sobol(3, scramble=True, seed=np.random.default_rng(5)).random_base2(10)
    assert np.array_equal(sobol(3, 1024, np.random.default_rng(5)), legacy)


def test_points_are_balanced_and_in_the_unit_cube() -> None:
    """Independent of scipy: every base-2 elementary interval holds the same number of points."""
    x = sobol(3, 1024, np.random.default_rng(0))
    assert x.min() >= 0.0 and x.max() < 1.0
    for j in range(3):
        counts = np.bincount((x[:, j] * 64).astype(int), minlength=64)
        assert np.all(counts == 16)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="dimension must be in"):
        sobol(0, 8, np.random.default_rng(0))
    with pytest.raises(ValueError, match="n must be >= 0"):
        sobol(2, -1, np.random.default_rng(0))
