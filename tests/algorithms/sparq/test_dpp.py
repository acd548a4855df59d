"""SparQ-GP-UCB's M-DPP sampler (Appendix A): the swap ratio, the greedy start, the chain's law
against the enumerated M-DPP, and bad input."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from tvbo.algorithms.sparq.dpp import greedy_map, mdpp_probabilities, sample_mdpp, swap_ratio


def rbf_gram(x: np.ndarray, ls: float) -> np.ndarray:
    return np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / ls**2)


def test_swap_ratio_equals_the_determinant_ratio():
    rng = np.random.default_rng(2)
    K = rbf_gram(rng.uniform(size=9), 0.3)
    Z = np.array([0, 4, 7])
    A = np.linalg.inv(K[np.ix_(Z, Z)])
    for pos, j in ((0, 1), (1, 8), (2, 3)):
        Z2 = Z.copy()
        Z2[pos] = j
        exact = np.linalg.det(K[np.ix_(Z2, Z2)]) / np.linalg.det(K[np.ix_(Z, Z)])
        assert swap_ratio(K, Z, A, pos, j) == pytest.approx(exact, rel=1e-8)


def test_greedy_start_maximises_the_determinant_greedily():
    rng = np.random.default_rng(3)
    K = rbf_gram(rng.uniform(size=8), 0.2)
    chosen = greedy_map(K, 3)
    # independent check: at every stage the pick maximises det of the enlarged set
    for m in range(1, 4):
        prefix = list(chosen[: m - 1])
        dets = {
            j: np.linalg.det(K[np.ix_(prefix + [j], prefix + [j])])
            for j in range(8)
            if j not in prefix
        }
        assert chosen[m - 1] == max(dets, key=dets.get)


def test_mcmc_frequencies_match_the_enumerated_mdpp():
    # 6 points, 2 near-duplicate pairs: the exact M-DPP strongly avoids them
    x = np.array([0.0, 0.02, 0.5, 0.52, 1.0, 0.75])
    K = rbf_gram(x, 0.25)
    exact = mdpp_probabilities(K, 2)
    rng = np.random.default_rng(4)
    counts: Counter = Counter()
    Z = None
    n_draws, thin = 6000, 4
    for _ in range(200):  # burn-in from the greedy start
        Z = sample_mdpp(K, 2, 1, rng, init=Z).indices if Z is not None else greedy_map(K, 2)
    for _ in range(n_draws):
        Z = sample_mdpp(K, 2, thin, rng, init=Z).indices
        counts[tuple(int(i) for i in Z)] += 1
    empirical = {S: counts[S] / n_draws for S in exact}
    tv = 0.5 * sum(abs(empirical[S] - exact[S]) for S in exact)
    assert tv < 0.05
    # and the law favours diversity: the near-duplicate pairs are rare, far pairs common
    assert empirical[(0, 1)] < 0.02 and empirical[(2, 3)] < 0.02
    assert exact[(0, 4)] > 1 / len(exact) and empirical[(0, 4)] > 1 / len(exact)
    uniform_tv = 0.5 * sum(abs(1 / len(exact) - exact[S]) for S in exact)
    assert uniform_tv > 0.15


def test_sampler_returns_the_requested_size_of_distinct_indices():
    rng = np.random.default_rng(5)
    K = rbf_gram(rng.uniform(size=30), 0.1)
    s = sample_mdpp(K, 7, 200, rng)
    assert s.indices.shape == (7,) and len(set(s.indices.tolist())) == 7
    assert s.logdet == pytest.approx(
        np.linalg.slogdet(K[np.ix_(s.indices, s.indices)])[1], abs=1e-6
    )
    assert 0.0 <= s.acceptance <= 1.0
    full = sample_mdpp(K, 30, 10, rng)
    assert full.indices.tolist() == list(range(30))


def test_sampler_rejects_bad_sizes():
    K = rbf_gram(np.linspace(0, 1, 5), 0.3)
    with pytest.raises(ValueError, match=r"M = 6 is larger than the candidate set \(N = 5\)"):
        sample_mdpp(K, 6, 10, np.random.default_rng(0))
    with pytest.raises(ValueError, match="integer >= 1"):
        greedy_map(K, 0)
    with pytest.raises(ValueError, match="n_steps"):
        sample_mdpp(K, 2, -1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="square"):
        sample_mdpp(K[:3], 2, 1, np.random.default_rng(0))


def test_exact_probabilities_are_normalised_determinants():
    K = rbf_gram(np.array([0.0, 0.3, 0.9, 1.0]), 0.4)
    p = mdpp_probabilities(K, 2)
    total = sum(np.linalg.det(K[np.ix_(S, S)]) for S in combinations(range(4), 2))
    assert p[(0, 2)] == pytest.approx(np.linalg.det(K[np.ix_([0, 2], [0, 2])]) / total)
    assert sum(p.values()) == pytest.approx(1.0)
