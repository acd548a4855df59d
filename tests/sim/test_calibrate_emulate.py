"""Emulated hardware profiles: prices fitted to target response times of another implementation."""

from __future__ import annotations

import numpy as np
import pytest

from tvbo.sim.calibrate import emulate, iteration_counts
from tvbo.sim.profiles import HardwareProfile, load_profile

SIZES = (16, 32, 64)


@pytest.fixture(scope="module")
def counts() -> dict[int, dict[str, float]]:
    return dict(iteration_counts(SIZES, algorithm="gp-ucb", d=2, seeds=(0,)))


def test_iteration_counts_are_deterministic_and_grow_with_n(counts) -> None:
    again = dict(iteration_counts(SIZES, algorithm="gp-ucb", d=2, seeds=(0,)))
    assert again == counts
    # the number of optimiser calls varies with the data; the work per call grows like n^2..n^3
    per_call = [counts[n]["flop"] / counts[n]["call"] for n in SIZES]
    assert per_call == sorted(per_call) and per_call[-1] > 8 * per_call[0]


def test_emulate_recovers_the_prices_that_generated_its_targets(counts, monkeypatch) -> None:
    """Targets priced by a known profile are matched exactly: the NNLS finds consistent prices."""
    truth = HardwareProfile(
        name="truth", coefficients={"flop": 3e-8, "kernel": 0.0, "call": 2e-3, "step": 0.0}
    )
    targets = {n: truth.seconds(c) for n, c in counts.items()}
    monkeypatch.setattr(
        "tvbo.sim.calibrate.iteration_counts",
        lambda sizes, **kw: [(n, counts[n]) for n in sizes],
    )
    profile = emulate(targets, "emulated", algorithm="gp-ucb", d=2)
    for n, c in counts.items():
        assert profile.seconds(c) == pytest.approx(targets[n], rel=1e-6)
    assert profile.machine["relative_rms_error"] < 1e-6
    assert profile.machine["targets"] == {n: pytest.approx(s) for n, s in targets.items()}


@pytest.mark.parametrize(
    "targets, message",
    [
        ({64: 1.0}, ">= 2 dataset sizes"),
        ({16: 0.3, 64: 0.0}, "> 0"),
        ({16: 0.3, 64: np.nan}, "> 0"),
    ],
)
def test_emulate_rejects_bad_targets(targets, message) -> None:
    with pytest.raises(ValueError, match=message):
        emulate(targets, "bad")


def test_packaged_botorch_profile_prices_a_response_time_like_the_papers() -> None:
    """The shipped emulation profile: sub-second at small n, seconds at n = 256 (its targets)."""
    profile = load_profile("botorch-i9-laptop")
    fitted = profile.machine["fitted"]
    assert 0.1 < fitted[16] < 0.6 and 3.0 < fitted[256] < 15.0
    assert profile.coefficients["call"] > 10 * load_profile("reference-2core").coefficients["call"]
