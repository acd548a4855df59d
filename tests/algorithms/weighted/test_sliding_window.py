"""SW-GP-UCB's sliding window: exactly the last W observations after warm-up, a removal rule
ablation, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

import tvbo.algorithms as algorithms
from tvbo.algorithms import ProblemInfo
from tvbo.algorithms.weighted.sliding_window import SlidingWindow
from tvbo.work import WorkCounter

CHEAP_UCB = {"kind": "ucb", "n_restarts": 2, "raw_samples": 64}


def make(name: str, d: int = 1, **options):
    alg = algorithms.make(name, acquisition=CHEAP_UCB, **options)
    alg.setup(ProblemInfo(d=d), np.random.default_rng(0), WorkCounter(), clock=lambda: 0.0)
    return alg


def smooth(x, k):
    return np.sin(6.0 * x[0]) + 0.5 * x[0]


def test_sliding_window_holds_exactly_the_last_w_observations():
    window, warm = 5, 8
    alg = make("sw-gp-ucb", dataset={"window": window})
    rng = np.random.default_rng(6)
    xs = rng.uniform(size=(20, 1))
    for k in range(20):
        alg.ingest(xs[k], float(k), float(smooth(xs[k], k)), now=float(k), warmup=k < warm)
        lo = 0 if k < warm else max(0, k + 1 - window)
        assert np.array_equal(alg.surrogate.X, xs[lo : k + 1])
        assert np.array_equal(alg.surrogate.y, [smooth(x, 0) for x in xs[lo : k + 1]])
    assert alg.state()["window"] == window
    assert alg.state()["removed_total"] == 20 - window


def test_sliding_window_with_propose_and_a_removal_rule_ablation():
    alg = make("sw-gp-ucb", d=2, dataset={"window": 4}, removal="random")
    rng = np.random.default_rng(7)
    for k in range(4):
        alg.ingest(rng.uniform(size=2), float(k), float(k), now=float(k), warmup=True)
    for k in range(4, 9):
        x = alg.propose(float(k))
        alg.ingest(x, float(k), float(np.sum(x)), now=float(k), warmup=False)
        assert alg.dataset_size() == 4
    assert alg.state()["removed_total"] == 5


def test_sliding_window_bad_input():
    for window in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="window must be an integer >= 1"):
            SlidingWindow(window=window)
    with pytest.raises(ValueError, match="unknown option.*window"):
        algorithms.make("sw-gp-ucb", dataset={"windw": 3})
