"""PE-GP-UCB [P2], its baselines (MLE, fully Bayesian, Regret Balancing) and the hills toy."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import multivariate_normal

import tvbo
from tvbo.algorithms import ProblemInfo, make, names
from tvbo.algorithms.pegpucb import parts as pe
from tvbo.benchmarks import make as make_benchmark
from tvbo.benchmarks.hills import TRUE_PRIOR, AlternatingSearchSpace, HillsShape, hills_priors
from tvbo.benchmarks.intel_priors import day_prior, kronecker_log_likelihood
from tvbo.work import WorkCounter

SPACE = {"step_seconds": 1.0, "exclude": [0.05, 0.17], "period": 2}
ALGS = ("pe-gp-ucb", "mle-prior", "bayes-prior", "regret-balancing", "random-search")


def setup(alg, candidates, seed=0):
    alg.setup(
        ProblemInfo(d=candidates.shape[1], candidates=candidates),
        np.random.default_rng(seed),
        WorkCounter(),
        clock=lambda: 0.0,
    )
    return alg


def dense_posterior(prior, X, y, Xs):
    """Independent dense-solve posterior under a static prior (no incremental Cholesky)."""
    K = prior.kernel(X, np.zeros(len(X)), X, np.zeros(len(X))) + prior.noise_var * np.eye(len(X))
    Ks = prior.kernel(Xs, np.zeros(len(Xs)), X, np.zeros(len(X)))
    mean = prior.mean_at(Xs) + Ks @ np.linalg.solve(K, y - prior.mean_at(X))
    var = prior.signal_var - np.einsum("ij,ji->i", Ks, np.linalg.solve(K, Ks.T))
    return mean, np.sqrt(var), K


def test_registered():
    assert set(ALGS) <= set(names())


# -- the per-prior GP --------------------------------------------------------------------------
def test_prior_gp_matches_dense_solve_and_likelihood():
    rng = np.random.default_rng(1)
    prior = pe.CandidatePrior(
        space_kernel="matern52", signal_var=0.7, lengthscale_space=0.3, noise_var=0.05, mean=0.4
    )
    X, y, Xs = rng.uniform(size=(12, 2)), rng.normal(size=12), rng.uniform(size=(7, 2))
    gp = prior.model(WorkCounter())
    for x, v in zip(X, y, strict=True):
        gp.append(x, 0.0, v)
    pred = gp.predict(Xs, 0.0)
    mean, sd = pred.mean, np.sqrt(pred.var)
    m_ref, sd_ref, K = dense_posterior(prior, X, y, Xs)
    np.testing.assert_allclose(mean, m_ref, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(sd, sd_ref, rtol=1e-8, atol=1e-10)
    ref = multivariate_normal(np.full(12, 0.4), K).logpdf(y)
    assert gp.log_marginal_likelihood() == pytest.approx(ref, rel=1e-10)


def test_prior_gp_temporal_factor_and_hills_mean():
    prior = pe.CandidatePrior(signal_var=1.0, lengthscale_space=0.2, epsilon=0.19, time_unit=2.0)
    x = np.array([[0.3]])
    # (1 - eps)^(|t - t'| / (2 time_unit)) with |t-t'| = 8 s = 4 units: 0.81^2
    assert prior.kernel(x, np.array([0.0]), x, np.array([8.0]))[0, 0] == pytest.approx(0.81**2)
    hp = pe.CandidatePrior(mean="hills:2")
    centres = HillsShape().centres
    m = hp.mean_at(centres[:, None])
    neighbours = 2 * math.exp(-0.5 * (1 / 9 / 0.03) ** 2)  # the two adjacent small hills
    assert np.argmax(m) == 1 and m[1] == pytest.approx(3.0 + neighbours, abs=1e-5)


# -- the family as presets of registered parts ------------------------------------------------
ACQUISITION_KINDS = {"pe-gp-ucb": "prior-elimination", "mle-prior": "mle-prior",
                     "bayes-prior": "bayes-prior", "regret-balancing": "regret-balancing",
                     "random-search": "random-search"}


@pytest.mark.parametrize("name", ALGS)
def test_each_algorithm_is_a_preset_of_registered_parts(name):
    from tvbo import registry
    from tvbo.algorithms.components import ACQUISITIONS, SURROGATES
    from tvbo.algorithms.composed import ComposedAlgorithm
    from tvbo.algorithms.presets import PRESETS

    entry = registry.entry("algorithms", name)
    # random search, the family's floor row, is declared with the reference policies
    home = "reference" if name == "random-search" else "pegpucb"
    assert entry.kind == "preset" and entry.module == f"tvbo.algorithms.{home}"
    spec = PRESETS[name]
    assert spec["surrogate"]["kind"] == "candidate-priors"
    assert spec["acquisition"]["kind"] == ACQUISITION_KINDS[name]
    assert spec["dataset"] == {"kind": "keep-all"} and spec["removal"] is None
    alg = make(name)
    assert isinstance(alg, ComposedAlgorithm) and alg.preset == name
    assert type(alg.surrogate) is SURROGATES["candidate-priors"]
    assert type(alg.acquisition) is ACQUISITIONS[ACQUISITION_KINDS[name]]
    for role, kind in (("surrogate", "candidate-priors"),
                       ("acquisition", ACQUISITION_KINDS[name])):
        assert registry.entry("components", f"{role}/{kind}") is not None
    # the run file's options rebuild the same algorithm
    assert make(name, **alg.options()).options() == alg.options()


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        # a misplaced option names the part it belongs to and the valid ones
        ("pe-gp-ucb", {"acquisition": {"priors": "hills"}},
         r"acquisition 'prior-elimination': unknown option\(s\) \['priors'\]; valid: .*"
         r"'priors' is an option of surrogate 'candidate-priors'"),
        ("mle-prior", {"surrogate": {"beta": 2.0}},
         r"surrogate 'candidate-priors': unknown option\(s\) \['beta'\]; valid: \['priors'\]"
         r".*'beta' is an option of acquisition 'mle-prior'"),
        # an option of another preset's part is unknown here, and the parts' options are listed
        ("mle-prior", {"test_sigma": "post"},
         r"unknown option 'test_sigma'.*surrogate 'candidate-priors': \['priors'\]; "
         r"acquisition 'mle-prior': \['beta'"),
        # the parts only compose with each other
        ("pe-gp-ucb", {"acquisition": "ucb"}, "needs a candidate-prior acquisition"),
        ("gp-ucb", {"acquisition": "mle-prior"}, "needs the 'candidate-priors' surrogate"),
        ("regret-balancing", {"dataset": {"kind": "sliding-window"}}, "keep-all"),
    ],
)
def test_misplaced_or_incompatible_options_name_the_part(name, options, message):
    with pytest.raises(ValueError, match=message):
        make(name, **options)


def test_random_search_consults_no_model():
    cands = np.linspace(0, 1, 11)[:, None]
    work = WorkCounter()
    alg = make("random-search")
    alg.setup(ProblemInfo(d=1, candidates=cands), np.random.default_rng(0), work,
              clock=lambda: 0.0)
    for k in range(4):
        x = alg.propose(float(k))
        alg.ingest(x, float(k), 0.5, now=k + 1.0, warmup=False)
    assert alg.dataset_size() == 4 and alg.surrogate.X.shape == (4, 1)
    assert all(gp.n == 0 for gp in alg.surrogate.gps)
    assert work.counts() == {} and alg.state() == {}


# -- PE-GP-UCB's defining behaviour ----------------------------------------------------------
def two_priors(wrong_mean=5.0):
    base = {"space_kernel": "rbf", "signal_var": 0.05, "lengthscale_space": 0.2, "noise_var": 0.01}
    return [{**base, "mean": 0.0}, {**base, "mean": wrong_mean}]


def test_eliminates_a_prior_whose_errors_exceed_the_bound():
    cands = np.linspace(0, 1, 21)[:, None]
    alg = setup(make("pe-gp-ucb", priors=two_priors(), horizon_steps=50), cands)
    rng = np.random.default_rng(0)
    x = alg.propose(0.0)
    assert alg.acquisition.selected == 1  # the wrong prior claims 5: it is the optimistic one
    width = alg.acquisition._pending[3] * alg.acquisition._pending[4]  # beta_1 sigma_0(x_1)
    y = 0.1 * rng.normal()  # f = 0 (the true prior's mean), noise R = 0.1
    alg.ingest(x, 0.0, y, now=1.0, warmup=False)
    # independent check of the test: |eta| > sqrt(xi_1 * 1) + beta_1 sigma_0(x)
    xi = 2 * 0.01 * math.log(2 * math.pi**2 / (3 * 0.1))
    assert abs(y - 5.0) > math.sqrt(xi) + width
    s = alg.state()
    assert s["eliminated_prior"] == 1 and s["n_priors"] == 1
    assert not alg.surrogate.active[1] and alg.surrogate.active[0]
    for k in range(1, 15):  # never comes back, and the true prior survives
        x = alg.propose(float(k))
        assert alg.acquisition.selected == 0
        alg.ingest(x, float(k), 0.1 * rng.normal(), now=k + 1.0, warmup=False)
    assert alg.surrogate.active.tolist() == [True, False]


def test_elimination_test_uses_the_pre_update_sigma():
    cands = np.linspace(0, 1, 11)[:, None]
    alg = setup(make("pe-gp-ucb", priors=two_priors(0.0), beta=2.0), cands)
    prior = alg.surrogate.priors[0]
    rng = np.random.default_rng(3)
    X, Y = [], []
    for k in range(6):
        x = alg.propose(float(k))
        p, beta = alg.acquisition.selected, math.sqrt(2.0)
        before = alg.acquisition.sum_width[p]
        y = float(rng.normal(0, 0.2))
        alg.ingest(x, float(k), y, now=k + 1.0, warmup=False)
        if X:
            _, sd_pre, _ = dense_posterior(prior, np.array(X), np.array(Y), x[None])
        else:
            sd_pre = np.array([math.sqrt(prior.signal_var)])
        X.append(x)
        Y.append(y)
        _, sd_post, _ = dense_posterior(prior, np.array(X), np.array(Y), x[None])
        added = alg.acquisition.sum_width[p] - before
        assert added == pytest.approx(beta * sd_pre[0], rel=1e-9)
        assert added > beta * sd_post[0] * (1 + 1e-6)  # the post-update width is smaller


def test_post_update_sigma_option_uses_the_updated_posterior():
    """``test_sigma="post"``: Algorithm 1's line 12 as printed (sigma_i, after y_i joined D)."""
    cands = np.linspace(0, 1, 11)[:, None]
    alg = setup(make("pe-gp-ucb", priors=two_priors(0.0), beta=2.0, test_sigma="post"), cands)
    prior = alg.surrogate.priors[0]
    rng = np.random.default_rng(3)
    X, Y = [], []
    for k in range(5):
        x = alg.propose(float(k))
        p, mu_pre = alg.acquisition.selected, alg.acquisition._pending[2]
        before_w, before_e = alg.acquisition.sum_width[p], alg.acquisition.sum_eta[p]
        y = float(rng.normal(0, 0.2))
        alg.ingest(x, float(k), y, now=k + 1.0, warmup=False)
        X.append(x)
        Y.append(y)
        _, sd_post, _ = dense_posterior(prior, np.array(X), np.array(Y), x[None])
        acq = alg.acquisition
        assert acq.sum_width[p] - before_w == pytest.approx(math.sqrt(2.0) * sd_post[0], rel=1e-9)
        assert acq.sum_eta[p] - before_e == pytest.approx(y - mu_pre)  # eta: pre-update mean
    assert alg.options()["acquisition"]["test_sigma"] == "post"


def test_first_tie_rule_is_deterministic_and_takes_the_lowest_index():
    """``ties="first"`` (numpy/torch argmax) vs the default random rule, on exact ties."""
    cands = np.linspace(0, 1, 21)[:, None]
    base = {"space_kernel": "rbf", "signal_var": 0.05, "lengthscale_space": 0.2, "noise_var": 0.01}
    twins = [{**base, "mean": 1.0}, {**base, "mean": 1.0}, {**base, "mean": 0.0}]
    # PE: every x of priors 0 and 1 ties (flat mean, no data) -> prior 0 and the first candidate
    for seed in range(5):
        alg = setup(make("pe-gp-ucb", priors=twins, ties="first"), cands, seed=seed)
        x = alg.propose(0.0)
        assert alg.acquisition.selected == 0 and x[0] == 0.0
    picked = set()
    for seed in range(20):
        alg = setup(make("pe-gp-ucb", priors=twins), cands, seed=seed)
        x = alg.propose(0.0)
        picked.add((alg.acquisition.selected, float(x[0])))
    assert {p for p, _ in picked} == {0, 1} and len(picked) > 5
    # MLE with no data: every evidence is 0 -> prior 0; RB: the least-played prior of lowest index
    mle = setup(make("mle-prior", priors=twins, ties="first"), cands, seed=7)
    mle.propose(0.0)
    assert mle.acquisition.selected == 0
    rb = setup(make("regret-balancing", priors=twins, ties="first"), cands, seed=7)
    for k in range(3):
        x = rb.propose(float(k))
        assert rb.acquisition.selected == k
        rb.ingest(x, float(k), 1.0, now=k + 1.0, warmup=False)


def test_hills_prior_set_follows_the_benchmark_options():
    """``{"set": "hills", ...}`` rebuilds the 11 priors with the benchmark's kernel and hills, so
    changing the benchmark's shape cannot silently leave the true prior out of the set."""
    priors = pe.parse_priors({"set": "hills", "signal_var": 0.3, "tall_height": 4.0})
    assert len(priors) == 11 and all(p.signal_var == 0.3 for p in priors)
    bench = make_benchmark("hills", signal_var=0.3, tall_height=4.0, instance_seed=1)
    true_mean = priors[TRUE_PRIOR].mean_at(bench.candidates)
    np.testing.assert_allclose(true_mean, bench.shape.mean(TRUE_PRIOR, bench.grid))
    assert np.max(true_mean) == pytest.approx(4.0, abs=1e-2)
    alg = make("pe-gp-ucb", priors={"set": "hills", "signal_var": 0.3})
    assert alg.options()["surrogate"]["priors"] == {"set": "hills", "signal_var": 0.3}
    with pytest.raises(ValueError, match="unknown key"):
        pe.parse_priors({"set": "hills", "height": 2.0})


def test_at_most_one_elimination_per_step_and_keep_last():
    cands = np.linspace(0, 1, 5)[:, None]
    alg = setup(make("pe-gp-ucb", priors=two_priors()), cands)
    # only the selected prior is tested: a huge error is charged to prior 0 alone
    assert alg.acquisition.record_error(0, 100.0, 0.0, 1)
    assert alg.surrogate.active.tolist() == [False, True]
    assert not alg.acquisition.record_error(1, 100.0, 0.0, 2)  # keep_last: the last prior stays
    strict = setup(make("pe-gp-ucb", priors=two_priors(), keep_last=False), cands)
    strict.acquisition.record_error(0, 100.0, 0.0, 1)
    with pytest.raises(RuntimeError, match="last surviving"):
        strict.acquisition.record_error(1, 100.0, 0.0, 2)


def run_toy(name, seed, steps=60, **opts):
    """Drive an algorithm on the hills toy one step at a time (one query per step)."""
    bench = make_benchmark("hills", instance_seed=seed, steps=steps)
    alg = setup(
        make(name, search_space=SPACE, horizon_steps=steps, **opts), bench.candidates, seed=seed
    )
    rng = np.random.default_rng(1000 + seed)
    regret = []
    for k in range(steps):
        t = float(k)
        x = np.asarray(alg.propose(t))
        assert bench.available(x[None], t)[0], "query outside X_t"
        alg.ingest(x, t, float(bench.sample(x, t, rng)), now=t + 1.0, warmup=False)
        regret.append(bench.f_star(t) - bench(x, t))
    return alg, np.array(regret)


def test_true_prior_is_never_eliminated_on_30_seeds_of_the_toy():
    eliminated_true, eliminated_wrong = 0, 0
    for seed in range(30):
        alg, regret = run_toy("pe-gp-ucb", seed)
        eliminated_true += int(not alg.surrogate.active[TRUE_PRIOR])
        eliminated_wrong += int((~alg.surrogate.active).sum())
        assert np.all(regret >= -1e-12)
    assert eliminated_true == 0
    assert eliminated_wrong >= 30  # and it does eliminate wrong priors (more than one per run)


# -- baselines --------------------------------------------------------------------------------
def test_mle_selects_the_maximum_likelihood_prior():
    alg, _ = run_toy("mle-prior", 0, steps=20)
    X = alg.surrogate.gps[0].X
    ys = alg.surrogate.gps[0].y
    T = alg.surrogate.gps[0].T
    ref = [
        multivariate_normal(
            p.mean_at(X), p.kernel(X, T, X, T) + p.noise_var * np.eye(len(X))
        ).logpdf(ys)
        for p in alg.surrogate.priors
    ]
    x = alg.propose(20.0)
    assert alg.acquisition.selected == int(np.argmax(ref))
    np.testing.assert_allclose(alg.acquisition.log_evidence, ref, rtol=1e-9)
    assert x.shape == (1,)


def test_bayes_posterior_over_priors():
    alg, regret = run_toy("bayes-prior", 1, steps=20)
    alg.propose(20.0)
    assert alg.acquisition.posterior.sum() == pytest.approx(1.0)
    lml = np.array([g.log_marginal_likelihood() for g in alg.surrogate.gps])
    ref = np.exp(lml - lml.max()) / np.exp(lml - lml.max()).sum()
    np.testing.assert_allclose(alg.acquisition.posterior, ref, rtol=1e-12)
    assert alg.state()["selected_prior"] == np.argmax(ref)
    assert np.all(regret >= -1e-12)


def test_regret_balancing_plays_least_played_prior():
    alg, _ = run_toy("regret-balancing", 2, steps=11)
    # R^p(t) = t: the first |U| steps play each prior exactly once
    assert alg.acquisition.count.tolist() == [1] * 11 or alg.surrogate.active.sum() < 11
    alg2, _ = run_toy("regret-balancing", 2, steps=40)
    assert alg2.surrogate.active.sum() >= 1
    played = alg2.acquisition.count[alg2.surrogate.active]
    assert played.max() - played.min() <= 1 or alg2.surrogate.active.sum() == 1


def test_random_search_stays_in_the_search_space():
    alg, regret = run_toy("random-search", 3, steps=30)  # run_toy asserts x in X_t
    assert alg.dataset_size() == 30 and np.all(regret >= -1e-12)


# -- the hills benchmark ----------------------------------------------------------------------
def test_hills_oracle_and_alternating_search_space():
    bench = make_benchmark("hills", instance_seed=4)
    grid = bench.candidates
    even, odd = 10.0, 11.0
    assert bench.available(grid, even).all()
    mask = bench.available(grid, odd)
    assert not mask[np.abs(grid[:, 0] - 1 / 9) < 0.05].any()  # the true tall hill is excluded
    assert bench.f_star(even) == pytest.approx(bench.values.max())
    assert bench.f_star(odd) == pytest.approx(bench.values[mask].max())
    assert bench.f_star(odd) < bench.f_star(even) - 0.5
    # an unavailable query never raises f*: regret stays measured against max over X_t
    top = grid[np.argmax(bench.values)]
    assert bench.refine_f_star(odd, top) == pytest.approx(bench.values[mask].max())
    assert bench.horizon == 100 and bench.cost == 1.0
    space = AlternatingSearchSpace(step_seconds=2.0, period=3)
    assert [space.restricted(t) for t in (0.0, 2.0, 4.0, 5.9, 6.0)] == [
        False,
        False,
        True,
        True,
        False,
    ]
    assert len(hills_priors()) == 11


def test_simulate_end_to_end_one_query_per_step():
    ds = tvbo.simulate(
        "hills",
        "pe-gp-ucb",
        seed=0,
        compute="polynomial",
        polynomial=[0.0],
        warmup=0,
        benchmark_options={"steps": 25},
        algorithm_options={"search_space": SPACE, "horizon_steps": 25},
    ).squeeze()
    np.testing.assert_allclose(ds["t_sample"].values, np.arange(25.0))
    assert np.all(ds["regret"].values >= -1e-12)
    for key in ("state_selected_prior", "state_n_priors", "state_eliminated_prior"):
        assert key in ds


# -- bad input --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"priors": []}, "empty"),
        ({"priors": "nope"}, "valid: hills, benchmark"),
        ({"priors": {"set": "intel", "paths": []}}, "prior_paths"),
        ({"priors": [{"space_kernel": "cosine"}]}, "valid names"),
        ({"priors": [{"lengthscale": 1.0}]}, "unknown key"),
        ({"priors": [{"noise_var": 0.0}]}, "noise_var"),
        ({"priors": [{"mean": "hills:12"}]}, "0..10"),
        ({"delta": 1.5}, "delta"),
        ({"beta": "bogus"}, "valid"),
        ({"search_space": {"exclude": [0.5, 0.2]}}, "band"),
        ({"search_space": {"width": 1}}, "unknown search_space"),
        ({"ties": "last"}, "valid: random, first"),
    ],
)
def test_bad_input(options, message):
    for name in ALGS:
        with pytest.raises(ValueError, match=message):
            make(name, **options)


def test_bad_test_sigma():
    with pytest.raises(ValueError, match="valid: pre, post"):
        make("pe-gp-ucb", test_sigma="during")


def test_bad_benchmark_options():
    with pytest.raises(TypeError, match="valid options"):
        make_benchmark("hills", hill_count=3)
    with pytest.raises(ValueError, match="steps"):
        make_benchmark("hills", steps=0)


# -- Intel priors (empirical covariance x (1 - eps)^(|t - t'| / 2)) -------------------------
def test_kronecker_likelihood_matches_dense():
    rng = np.random.default_rng(5)
    Y = rng.normal(size=(6, 3))
    B = rng.normal(size=(3, 3))
    C = B @ B.T + 0.1 * np.eye(3)
    k = np.arange(6)
    A = 0.8 ** (np.abs(k[:, None] - k[None, :]) / 2)
    dense = multivariate_normal(np.zeros(18), np.kron(A, C) + 0.3 * np.eye(18)).logpdf(Y.ravel())
    assert kronecker_log_likelihood(Y, C, 0.2, 0.3) == pytest.approx(dense, rel=1e-10)


def test_empirical_prior_kernel():
    C = np.array([[2.0, 0.5], [0.5, 1.0]])
    locs = np.array([[0.1, 0.2], [0.7, 0.4]])
    prior = pe.CandidatePrior(
        space_kernel="empirical",
        covariance=C,
        locations=locs,
        epsilon=0.36,
        time_unit=10.0,
        mean=20.0,
    )
    K = prior.kernel(locs, np.array([0.0, 0.0]), locs, np.array([20.0, 20.0]))
    np.testing.assert_allclose(K, C * 0.64)  # (1 - 0.36)^(2 steps / 2)
    new = np.array([[0.5, 0.5]])  # a sensor the prior's day did not have
    assert prior.prior_var(new)[0] == pytest.approx(1.5)
    assert prior.kernel(new, np.zeros(1), locs, np.zeros(2)).tolist() == [[0.0, 0.0]]
    with pytest.raises(ValueError, match="covariance"):
        pe.CandidatePrior(space_kernel="empirical")


def test_options_of_empirical_priors_are_json():
    """The run file records the options as JSON: an empirical prior's covariance (a numpy
    array) once made every Intel run fail in ``tvbo.simulate``."""
    import json

    C = np.array([[2.0, 0.5], [0.5, 1.0]])
    prior = pe.CandidatePrior(space_kernel="empirical", covariance=C, locations=np.eye(2))
    for name in ("pe-gp-ucb", "mle-prior", "bayes-prior", "regret-balancing"):
        opts = json.loads(json.dumps(make(name, priors=[prior]).options()))
        assert opts["surrogate"]["priors"][0]["covariance"] == C.tolist()


def write_day(path, day, seed, n_sensors=5, n_bins=48):
    """A small prepared Intel day (the layout of ``python -m tvbo.data prepare-intel``)."""
    import pandas as pd
    import xarray as xr

    rng = np.random.default_rng(seed)
    times = pd.date_range(day, periods=n_bins, freq="10min").values
    coords = rng.uniform(size=(n_sensors, 2))
    trend = 20 + 2 * np.sin(np.linspace(0, 2 * np.pi, n_bins))[:, None]
    values = trend + coords[:, 0] + 0.3 * rng.normal(size=(n_bins, n_sensors))
    xr.Dataset(
        {
            "temperature": (("time", "sensor"), values),
            "x": ("sensor", coords[:, 0]),
            "y": ("sensor", coords[:, 1]),
            "x_m": ("sensor", 40 * coords[:, 0]),
            "y_m": ("sensor", 30 * coords[:, 1]),
            "mote_id": ("sensor", np.arange(1, n_sensors + 1)),
        },
        coords={"time": times},
    ).to_netcdf(path)
    return values, coords


def test_benchmark_declares_the_intel_priors_and_the_algorithms_take_them(tmp_path):
    """``prior_paths`` makes ``temperature-sensors`` declare one prior per previous day; the
    engine hands them over (``ProblemInfo.candidate_priors``) to ``priors: benchmark``."""
    days = {}
    for k, day in enumerate(("2004-03-01", "2004-03-02", "2004-03-03")):
        days[day] = write_day(tmp_path / f"intel_{day}.nc", day, seed=k)
    target, prior_paths = tmp_path / "intel_2004-03-03.nc", [
        str(tmp_path / "intel_2004-03-01.nc"),
        str(tmp_path / "intel_2004-03-02.nc"),
    ]
    bench = make_benchmark(
        "temperature-sensors",
        path=str(target),
        step_seconds=12.5,
        prior_paths=prior_paths,
        prior_epsilon_grid=[0.0, 0.05, 0.5],
    )
    assert len(bench.candidate_priors) == 2
    values, coords = days["2004-03-01"]
    want = day_prior(values, coords, step_seconds=12.5, epsilon_grid=[0.0, 0.05, 0.5])
    got = bench.candidate_priors[0]
    np.testing.assert_array_equal(got["covariance"], want["covariance"])
    assert got["mean"] == want["mean"] and got["epsilon"] == want["epsilon"]
    assert got["time_unit"] == 12.5 and got["noise_var"] == 0.16
    alg = make("pe-gp-ucb", priors="benchmark")
    alg.setup(
        ProblemInfo(d=2, candidates=bench.candidates, candidate_priors=bench.candidate_priors),
        np.random.default_rng(0),
        WorkCounter(),
    )
    assert len(alg.surrogate.priors) == 2 and alg.surrogate.priors[1].space_kernel == "empirical"
    assert alg.surrogate.active.tolist() == [True, True]
    ds = tvbo.simulate(
        "temperature-sensors",
        "pe-gp-ucb",
        compute="polynomial",
        polynomial=[0.0],
        warmup=0,
        cost=12.5,
        max_iterations=4,
        benchmark_options={"path": str(target), "step_seconds": 12.5,
                           "prior_paths": prior_paths},
        algorithm_options={"priors": "benchmark", "horizon_steps": 10},
    )
    assert int(ds["n_iterations"].squeeze()) == 4
    assert '"priors": "benchmark"' in ds.attrs["config_json"]
    with pytest.raises(ValueError, match="declares no candidate priors"):
        setup(make("mle-prior", priors="benchmark"), bench.candidates)


def test_hills_benchmark_declares_its_own_priors():
    bench = make_benchmark("hills", signal_var=0.3, tall_height=4.0)
    declared = pe.parse_priors(list(bench.candidate_priors))
    assert declared == pe.parse_priors({"set": "hills", "signal_var": 0.3, "tall_height": 4.0})
    ds = tvbo.simulate(
        "hills",
        "mle-prior",
        compute="polynomial",
        polynomial=[0.0],
        warmup=0,
        benchmark_options={"steps": 6, "signal_var": 0.3, "tall_height": 4.0},
        algorithm_options={"priors": "benchmark", "horizon_steps": 6},
    )
    assert int(ds["n_iterations"].squeeze()) == 6


def test_intel_priors_from_a_prepared_day():
    from pathlib import Path

    path = Path("data/intel/intel_2004-03-06.nc")
    if not path.is_file():
        pytest.skip("prepared Intel day not present (snakemake data rules make it)")
    bench = make_benchmark(
        "temperature-sensors",
        path=str(path),
        step_seconds=12.5,
        prior_paths=[str(path)],
        prior_epsilon_grid=[0.0, 0.05, 0.5],
    )
    (prior,) = pe.parse_priors(list(bench.candidate_priors))
    assert prior.covariance.shape == (len(bench.candidates),) * 2
    assert prior.epsilon in (0.0, 0.05, 0.5) and prior.time_unit == 12.5
    # a prior whose mean is off by far more than its first confidence width beta_1 sigma_0
    beta1 = math.sqrt(2 * math.log(100 * len(bench.candidates) * math.pi**2 / 0.3))
    offset = 3.0 * beta1 * math.sqrt(np.max(np.diag(prior.covariance)))
    alg = setup(
        make(
            "pe-gp-ucb",
            priors=[
                prior,
                pe.CandidatePrior(
                    space_kernel="empirical",
                    covariance=prior.covariance,
                    locations=prior.locations,
                    mean=prior.mean + offset,
                    time_unit=12.5,
                    noise_var=0.16,
                ),
            ],
        ),
        bench.candidates,
    )
    rng = np.random.default_rng(0)
    for k in range(8):
        t = 12.5 * k
        x = alg.propose(t)
        alg.ingest(x, t, float(bench.sample(x, t, rng)), now=t + 12.5, warmup=False)
    assert alg.surrogate.active.tolist() == [True, False]  # the shifted prior is eliminated


def test_the_algorithms_import_no_benchmark_data_or_simulation_module():
    """Layering (issue 11): what the algorithms need from a benchmark comes through the problem
    (``ProblemInfo.candidate_priors``), never by importing it."""
    import subprocess
    import sys

    code = (
        "import sys, tvbo.algorithms.pegpucb.parts\n"
        "bad = sorted(m for m in sys.modules if m.startswith(('tvbo.benchmarks', 'tvbo.data', "
        "'tvbo.sim', 'tvbo.analysis')))\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
    source = Path(pe.__file__).read_text()
    for layer in ("tvbo.benchmarks", "tvbo.data", "tvbo.sim", "tvbo.analysis"):
        assert f"from {layer}" not in source and f"import {layer}" not in source
