"""SparQ-GP-UCB's shared parts: the query-the-expert acquisition (M-DPP over the model's prior
covariance, work counted by the model and the sampler) and the registered beta rule."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tvbo.acquisition.beta import BETA_RULES, beta_rule, rule_beta
from tvbo.algorithms.sparq.dpp import sample_mdpp
from tvbo.algorithms.sparq.expert import expert_locations, mcmc_steps, n_expert_queries
from tvbo.gp.exact import ExactGP
from tvbo.gp.kernels import Hyperparameters, SeparableKernel
from tvbo.work import WorkCounter

HP = Hyperparameters(signal_var=1.4, lengthscale_space=0.2, lengthscale_time=None, noise_var=0.01)


def test_expert_locations_are_the_mdpp_sample_of_the_prior_covariance():
    kern = SeparableKernel(space="rbf", time=None)
    ground = np.random.default_rng(0).random((12, 2))
    work = WorkCounter()
    gp = ExactGP(kern, HP, work=work)
    sample = expert_locations(gp, ground, 4, 30, np.random.default_rng(1))
    # independent: the Gram matrix by hand, the same chain with the same random stream
    K = kern.matrix(ground, None, ground, None, HP)
    ref = sample_mdpp(K, 4, 30, np.random.default_rng(1))
    np.testing.assert_array_equal(sample.indices, ref.indices)
    assert sample.logdet == ref.logdet and sample.acceptance == ref.acceptance
    counts = work.counts()["update"]
    assert counts["kernel"] == 144.0  # charged by the model's prior_covariance
    assert counts["flop"] > 0 and counts["step"] >= 30  # ... and the chain by the sampler


def test_query_counts():
    assert n_expert_queries(1.0) == 0
    assert n_expert_queries(20.0) == math.ceil(6 * math.log(20))
    assert n_expert_queries(20.0, fixed=3) == 3
    assert mcmc_steps(10, 3) == 30 and mcmc_steps(10, 3, factor=0.5) == 15
    assert mcmc_steps(10, 3, fixed=7) == 7


def test_sparq_beta_rule_is_registered_with_its_citation():
    rule = beta_rule("sparq-gp-ucb")
    assert rule is BETA_RULES["sparq-gp-ucb"]
    assert rule.returns == "root_beta" and "Theorem 3.1" in rule.citation
    value = rule(information_gain=1.7, delta=0.05, rkhs_norm=0.5)
    assert value == pytest.approx(math.sqrt(2 * math.log(2 / 0.05) + 2 * 1.7) + 0.5, rel=1e-15)


def test_rule_beta_squares_a_root_rule_and_ucb_recovers_it_bit_for_bit():
    rule = beta_rule("sparq-gp-ucb")
    for gain in np.random.default_rng(0).uniform(0, 50, size=2000):
        r = rule(information_gain=float(gain))
        assert np.sqrt(rule_beta(rule, information_gain=float(gain))) == r
    wdbo = beta_rule("wdbo")
    assert rule_beta(wdbo, d=2, n=10) == wdbo(d=2, n=10)


def test_expert_ucb_beta_and_step_use_the_shared_rule_ucb_and_optimiser():
    from tvbo.acquisition import AcquisitionOptimizer, make_beta, ucb
    from tvbo.algorithms.sparq.expert import ExpertUCBBeta, maximize_ucb

    rng = np.random.default_rng(3)
    X = rng.random((6, 1))
    y = np.sin(6 * X[:, 0])
    gp = ExactGP(SeparableKernel(space="rbf", time=None), HP, work=WorkCounter())
    gp.set_standardization(float(np.mean(y)), float(np.std(y)))
    gp.set_data(X, None, y, noise=rng.uniform(0.01, 0.1, size=6))
    # the paper's beta: Theorem 3.1's sqrt(beta) on the model's information gain, squared
    paper = ExpertUCBBeta(delta=0.05, rkhs_norm=0.5)
    root = math.sqrt(2 * math.log(2 / 0.05) + 2 * gp.information_gain()) + 0.5
    assert paper(gp, 1, 3) == pytest.approx(root**2, rel=1e-14)
    # a schedule gets (d, the model's n, the call count)
    assert ExpertUCBBeta(make_beta("wdbo"))(gp, 1, 3) == pytest.approx(0.2 * math.log(12))
    assert ExpertUCBBeta(make_beta("log"))(gp, 1, 3) == pytest.approx(0.8 * math.log(12))
    # the step: the shared optimiser on the shared UCB, from the incumbent
    optimizer = AcquisitionOptimizer(n_restarts=3, raw_samples=32, maxiter=50)
    x = maximize_ucb(gp, 4.0, optimizer, 1, np.random.default_rng(0))
    grid = np.linspace(0, 1, 2001)[:, None]
    best = float(ucb(gp, grid, None, 4.0, grad=False)[0].max())
    assert float(ucb(gp, x[None, :], None, 4.0, grad=False)[0][0]) >= best - 1e-6
    candidates = np.array([[0.1], [0.5], [0.9]])
    pick = maximize_ucb(gp, 4.0, optimizer, 1, np.random.default_rng(0), candidates=candidates)
    values = ucb(gp, candidates, None, 4.0, grad=False)[0]
    np.testing.assert_array_equal(pick, candidates[int(np.argmax(values))])
