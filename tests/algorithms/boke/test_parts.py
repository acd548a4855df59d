"""BOKE, BOKE+, KR-UCB and tv-boke: numerics against independent computations, behaviour, errors."""

from __future__ import annotations

import numpy as np
import pytest

import tvbo
from tvbo.acquisition.beta import boke_beta
from tvbo.algorithms import ProblemInfo, make, names
from tvbo.algorithms.boke.ikr_ucb import IKRUCBBeta, ikr_ucb_value
from tvbo.algorithms.boke.kernel_regression import kernel_regression, scott_factor, silverman_factor
from tvbo.algorithms.boke.parts import (
    IKRUCBAcquisition,
    KernelRegressionSurrogate,
    KRUCBAcquisition,
)
from tvbo.work import WorkCounter


def _data(n=12, d=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((n, d)), rng.standard_normal(n)


def _alg(name, d=2, seed=0, **opts):
    alg = make(name, **opts)
    alg.setup(ProblemInfo(d=d), np.random.default_rng(seed), WorkCounter(), clock=lambda: 0.0)
    return alg


def _feed(alg, X, y):
    for i, (x, v) in enumerate(zip(X, y, strict=True)):
        alg.ingest(x, float(i), float(v), now=float(i), warmup=False)
    return alg


# -- the Nadaraya-Watson surrogate and the density --------------------------------------------
@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "uniform"])
def test_nw_mean_and_density_equal_the_formulas(kernel):
    X, y = _data()
    Q = np.random.default_rng(1).random((7, 2))
    h = 0.6
    r2 = ((Q[:, None, :] - X[None]) ** 2).sum(-1)
    K = {
        "gaussian": np.exp(-r2 / (2 * h * h)),
        "epanechnikov": np.maximum(1 - r2 / h**2, 0.0),
        "uniform": (np.sqrt(r2) <= h).astype(float),
    }[kernel]
    W = K.sum(1)
    assert np.all(W > 0)  # h large enough: no fallback here
    r = kernel_regression(Q, X, y, h, kernel=kernel)
    np.testing.assert_allclose(np.exp(r.log_w), W, rtol=1e-12)
    np.testing.assert_allclose(r.mean, (K @ y) / W, rtol=1e-12, atol=1e-14)


def test_time_weights_enter_both_sums():
    X, y = _data()
    w = np.linspace(0.1, 1.0, len(y))
    Q = np.array([[0.3, 0.7]])
    h = 0.25
    k = np.exp(-((Q - X) ** 2).sum(-1) / (2 * h * h)) * w
    r = kernel_regression(Q, X, y, h, weights=w)
    np.testing.assert_allclose(r.mean, [k @ y / k.sum()], rtol=1e-12)
    np.testing.assert_allclose(np.exp(r.log_w), [k.sum()], rtol=1e-12)


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_gradients_match_finite_differences(kernel):
    X, y = _data(n=20)
    Q = np.array([[0.41, 0.37], [0.8, 0.15]])
    h = 0.3
    r = kernel_regression(Q, X, y, h, kernel=kernel, grad=True)
    eps = 1e-6
    for j in range(2):
        e = np.zeros(2)
        e[j] = eps
        up = kernel_regression(Q + e, X, y, h, kernel=kernel)
        dn = kernel_regression(Q - e, X, y, h, kernel=kernel)
        np.testing.assert_allclose(
            r.grad_mean[:, j], (up.mean - dn.mean) / (2 * eps), rtol=1e-5, atol=1e-7
        )
        np.testing.assert_allclose(
            r.grad_log_w[:, j], (up.log_w - dn.log_w) / (2 * eps), rtol=1e-5, atol=1e-7
        )


def test_nearest_neighbour_fallback_compact_kernel_with_ties():
    X = np.array([[0.0, 0.0], [0.2, 0.0], [1.0, 1.0]])
    y = np.array([1.0, 3.0, 10.0])
    # (0.1, 0.5) is equidistant from the first two points and outside every support
    r = kernel_regression(np.array([[0.1, 0.5], [0.95, 0.95]]), X, y, 0.05, kernel="epanechnikov")
    assert r.log_w[0] == -np.inf  # W = 0 there
    assert r.mean[0] == pytest.approx(2.0)  # average of the tied nearest neighbours
    assert r.mean[1] == pytest.approx(10.0)  # inside the support of the last point


def test_gaussian_tiny_bandwidth_tends_to_nearest_neighbour():
    """Prop. 3.1: as h -> 0 the Gaussian NW mean is the NN prediction (no 0/0, Eq. 3.7)."""
    X, y = _data(n=30)
    Q = np.random.default_rng(5).random((50, 2))
    r = kernel_regression(Q, X, y, 1e-4)
    nn = np.argmin(((Q[:, None] - X[None]) ** 2).sum(-1), axis=1)
    np.testing.assert_allclose(r.mean, y[nn], atol=1e-12)
    assert np.all(np.isfinite(r.log_w))


def test_work_is_linear_in_data_times_queries():
    X, y = _data(n=40)
    work = WorkCounter()
    kernel_regression(np.zeros((9, 2)), X, y, 0.2, work=work)
    counts = work.counts()["update"]
    assert counts["kernel"] == 40 * 9
    assert counts["call"] == 1
    assert counts["flop"] > 0


# -- schedules --------------------------------------------------------------------------------
def test_bandwidth_and_beta_schedules_match_the_spec_tables():
    # spec_boke.md §2.7 and §2.8 tables (independently tabulated)
    assert scott_factor(100, 2) == pytest.approx(0.464, abs=5e-4)
    assert scott_factor(200, 8) == pytest.approx(0.643, abs=5e-4)
    assert silverman_factor(10, 1) == pytest.approx(0.668, abs=5e-4)
    assert boke_beta(t=1, noise_scale=1.0, delta=0.1) == pytest.approx(8.373, abs=1e-3)
    assert boke_beta(t=100, noise_scale=1.0, delta=0.05) == pytest.approx(28.180, abs=1e-3)


def test_boke_acquisition_is_mean_plus_scaled_density_term():
    X, y = _data(n=25)
    alg = _feed(_alg("boke"), X, y)
    n = len(y)
    h = np.sqrt(1 / 12) * n ** (-1 / 6)
    beta = boke_beta(t=n, noise_scale=0.1 * np.std(y), delta=0.1)
    assert alg.surrogate.model.bandwidth_at(n) == pytest.approx(h)
    assert alg.acquisition.beta(n, y, 2) == pytest.approx(beta)
    Q = np.random.default_rng(3).random((6, 2))
    k = np.exp(-((Q[:, None] - X[None]) ** 2).sum(-1) / (2 * h * h))
    expected = k @ y / k.sum(1) + np.sqrt(beta) / np.sqrt(k.sum(1))
    np.testing.assert_allclose(
        ikr_ucb_value(alg.surrogate.model, Q, beta), expected, rtol=1e-10
    )
    # predict() exposes the same model: NW mean and var = 1 / W
    pred = alg.surrogate.predict(Q, 0.0)
    np.testing.assert_allclose(pred.mean, k @ y / k.sum(1), rtol=1e-10)
    np.testing.assert_allclose(pred.var, 1.0 / k.sum(1), rtol=1e-10)


def test_boke_proposal_beats_random_points_on_its_acquisition():
    X, y = _data(n=25)
    alg = _feed(_alg("boke"), X, y)
    x = alg.propose(30.0)
    assert x.shape == (2,) and np.all((0 <= x) & (x <= 1))
    beta = alg.state()["beta"]
    others = np.random.default_rng(9).random((2000, 2))
    model = alg.surrogate.model
    assert ikr_ucb_value(model, x[None], beta)[0] >= ikr_ucb_value(model, others, beta).max() - 1e-9


def test_compact_kernel_proposal_fills_the_emptiest_region():
    """Where W = 0, alpha = +inf; ties go to the point farthest from the data (spec §8.8)."""
    X = np.array([[0.1, 0.1], [0.15, 0.1], [0.1, 0.2]])
    alg = _feed(_alg("boke", kernel="epanechnikov", bandwidth=0.05), X, np.array([1.0, 2, 3]))
    x = alg.propose(0.0)
    np.testing.assert_allclose(x, [1.0, 1.0], atol=1e-6)  # the corner farthest from the data


# -- BOKE+ ------------------------------------------------------------------------------------
def test_boke_plus_with_p_one_never_exploits_and_matches_boke():
    X, y = _data(n=20)
    plus = _feed(_alg("boke-plus", seed=4, p=1.0), X, y)
    base = _feed(_alg("boke", seed=4), X, y)
    for _ in range(5):
        xp, xb = plus.propose(0.0), base.propose(0.0)
        assert plus.state()["exploit"] == 0.0
        np.testing.assert_array_equal(xp, xb)


def test_boke_plus_with_tiny_p_always_exploits_the_mean():
    X, y = _data(n=20)
    alg = _feed(_alg("boke-plus", p=1e-12), X, y)
    others = np.random.default_rng(2).random((2000, 2))
    for _ in range(3):
        x = alg.propose(0.0)
        assert alg.state()["exploit"] == 1.0
        best = alg.surrogate.model.regression(others).mean.max()
        assert alg.surrogate.model.regression(x[None]).mean[0] >= best - 1e-9


def test_boke_plus_exploits_with_probability_one_minus_p():
    X, y = _data(n=10)
    alg = _feed(_alg("boke-plus", p=0.3, n_candidates=8, n_starts=1, maxiter=2), X, y)
    flags = []
    for _ in range(200):
        alg.propose(0.0)
        flags.append(alg.state()["exploit"])
    assert 0.6 < np.mean(flags) < 0.8


# -- KR-UCB -----------------------------------------------------------------------------------
def _arm_scores(X, y, h, C):
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / (2 * h * h))
    W = K.sum(1)
    m = K @ y / W
    return m + C * np.std(y) * np.sqrt(np.log(W.sum()) / W)


def test_kr_ucb_resamples_the_best_arm_when_arms_exceed_t_alpha():
    X, y = _data(n=16)
    alg = _feed(_alg("kr-ucb"), X, y)
    x = alg.propose(0.0)
    h = alg.surrogate.model.bandwidth_at(16)
    assert alg.state()["resample"] == 1.0  # 16 distinct > 16^0.5
    np.testing.assert_array_equal(x, X[np.argmax(_arm_scores(X, y, h, 1.0))])


def test_kr_ucb_widens_near_the_arm_into_low_density():
    base, yb = _data(n=3)
    X = np.repeat(base, [6, 5, 5], axis=0)  # 16 observations, 3 distinct <= 16^0.5
    y = np.repeat(yb, [6, 5, 5])
    alg = _feed(_alg("kr-ucb"), X, y)
    x = alg.propose(0.0)
    assert alg.state()["resample"] == 0.0
    h = alg.surrogate.model.bandwidth_at(16)
    arm = X[np.argmax(_arm_scores(X, y, h, 1.0))]
    rho = alg.acquisition.radius("gaussian", h)
    assert rho == pytest.approx(h)  # tau = exp(-1/2), Gaussian kernel
    assert np.linalg.norm(x - arm) <= rho + 1e-12
    w = alg.surrogate.model.regression(np.vstack([x, arm])).log_w
    assert w[0] < w[1]


# -- tv-boke ----------------------------------------------------------------------------------
def test_tv_boke_window_forgets_old_observations():
    X, y = _data(n=30)
    alg = _feed(_alg("tv-boke", window=10), X, y)
    assert alg.dataset_size() == 10
    Q = np.random.default_rng(1).random((5, 2))
    h = alg.surrogate.model.bandwidth_at(10)
    ref = kernel_regression(Q, X[-10:], y[-10:], h)
    np.testing.assert_allclose(alg.surrogate.model.regression(Q).mean, ref.mean, rtol=1e-12)
    assert alg.state()["removed_total"] == 20.0


def test_tv_boke_discount_weights_and_truncation():
    X, y = _data(n=40)
    alg = _feed(
        _alg(
            "tv-boke",
            surrogate={"forgetting": "discount", "gamma": 0.8, "min_weight": 1e-3},
            dataset="keep-all",
        ),
        X,
        y,
    )
    keep = int(np.floor(np.log(1e-3) / np.log(0.8))) + 1  # 0.8^age >= 1e-3
    assert alg.dataset_size() == keep
    assert alg.state()["removed_total"] == 40 - keep
    w = 0.8 ** np.arange(keep - 1, -1, -1)
    Q = np.array([[0.5, 0.5]])
    h = alg.surrogate.model.bandwidth_at(w.sum())
    assert alg.state()["n_eff"] == pytest.approx(w.sum())
    k = np.exp(-((Q - X[-keep:]) ** 2).sum(-1) / (2 * h * h)) * w
    np.testing.assert_allclose(
        alg.surrogate.model.regression(Q).mean, [k @ y[-keep:] / k.sum()], rtol=1e-12
    )


def test_tv_boke_follows_a_change_that_static_boke_ignores():
    """After the optimum moves, the recent data dominate tv-boke's mean, not BOKE's."""
    rng = np.random.default_rng(0)
    old = rng.random((60, 1))
    new = rng.random((20, 1))
    y_old = np.where(old[:, 0] < 0.5, 1.0, 0.0)  # first the left half is good
    y_new = np.where(new[:, 0] < 0.5, 0.0, 1.0)  # then the right half
    X, y = np.vstack([old, new]), np.concatenate([y_old, y_new])
    tv = _feed(_alg("tv-boke", d=1, window=20, bandwidth=0.1), X, y)
    st = _feed(_alg("boke", d=1, bandwidth=0.1), X, y)
    q = np.array([[0.2], [0.8]])
    assert tv.surrogate.model.regression(q).mean[1] > tv.surrogate.model.regression(q).mean[0]
    assert st.surrogate.model.regression(q).mean[1] < st.surrogate.model.regression(q).mean[0]


# -- errors and registry ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cls", "opts", "match"),
    [
        (KernelRegressionSurrogate, {"bandwidth": 0.0}, "bandwidth"),
        (KernelRegressionSurrogate, {"bandwidth": -1.0}, "bandwidth"),
        (KernelRegressionSurrogate, {"bandwidth": "wide"}, "scott, silverman"),
        (KernelRegressionSurrogate, {"bandwidth_scale": 0.0}, "bandwidth"),
        (KernelRegressionSurrogate, {"kernel": "cosine"}, "gaussian, epanechnikov, uniform"),
        (KernelRegressionSurrogate, {"forgetting": "never"}, "none, discount"),
        (KernelRegressionSurrogate, {"gamma": 1.0}, "gamma"),
        (IKRUCBAcquisition, {"beta": "huge"}, "paper, wdbo"),
        (IKRUCBAcquisition, {"beta": -1.0}, "beta must be finite"),
        (IKRUCBAcquisition, {"search": "grid"}, "screen, multistart"),
        (IKRUCBAcquisition, {"n_starts": 0}, "n_starts"),
        (IKRUCBAcquisition, {"delta": 1.5}, "delta"),
        (IKRUCBAcquisition, {"p": 0.0}, "p "),
        (KRUCBAcquisition, {"alpha": 1.0}, "alpha"),
        (KRUCBAcquisition, {"tau": 0.0}, "tau"),
    ],
)
def test_bad_options_raise_clear_errors(cls, opts, match):
    with pytest.raises(ValueError, match=match):
        cls(**opts)


def test_bad_options_through_the_registry():
    with pytest.raises(ValueError, match="bandwidth must be finite and > 0"):
        make("boke", bandwidth=-0.5)
    with pytest.raises(ValueError, match="window"):
        make("tv-boke", window=0)
    with pytest.raises(ValueError, match="bogus"):
        make("boke", bogus=1)


def test_kernel_regression_rejects_non_positive_bandwidth():
    X, y = _data()
    with pytest.raises(ValueError, match="bandwidth"):
        kernel_regression(X, X, y, 0.0)


def test_registry_names_and_parts():
    for name, acq in [
        ("boke", "ikr-ucb"),
        ("boke-plus", "ikr-ucb"),
        ("kr-ucb", "kr-ucb"),
        ("tv-boke", "ikr-ucb"),
    ]:
        assert name in names()
        alg = make(name)
        assert (alg.surrogate.kind, alg.acquisition.kind) == ("kernel-regression", acq)
    assert make("boke-plus").acquisition.p == 0.5
    assert make("tv-boke").dataset.kind == "sliding-window"


def test_acquisition_needs_the_kernel_regression_surrogate():
    alg = _alg("boke", surrogate={"kind": "gp"})
    _feed(alg, *_data(n=5))
    with pytest.raises(TypeError, match="kernel-regression"):
        alg.propose(0.0)


def test_boke_runs_on_the_engine_and_finds_the_forrester_optimum():
    ds = tvbo.simulate("forrester", "boke", seed=0, horizon=600, warmup=5, max_iterations=40)
    regret = ds["regret"].values.ravel()
    assert np.all(np.isfinite(regret)) and np.all(regret >= -1e-9)
    assert regret.min() < 0.05  # simple regret on a 1-D problem after 35 BOKE steps
    assert ds.attrs["n_iterations"] == 40


def test_boke_with_the_shared_multistart_search_and_the_wdbo_beta():
    X, y = _data(n=20)
    alg = _feed(_alg("boke", search="multistart", beta="wdbo"), X, y)
    x = alg.propose(0.0)
    assert alg.state()["beta"] == pytest.approx(IKRUCBBeta("wdbo")(20, y, 2))
    others = np.random.default_rng(9).random((2000, 2))
    model, beta = alg.surrogate.model, alg.state()["beta"]
    assert ikr_ucb_value(model, x[None], beta)[0] >= ikr_ucb_value(model, others, beta).max() - 1e-9
    assert alg.acquisition.options()["search"] == "multistart"


# -- discrete problems (ProblemInfo.candidates) -----------------------------------------------
@pytest.mark.parametrize("name", ["boke", "boke-plus", "kr-ucb", "tv-boke"])
def test_every_boke_query_on_hills_is_a_candidate(name):
    """hills defines f only on its candidates: every query (warm-up and BOKE's) is one of them
    (the bug: the screen-and-polish search proposed points between the candidates)."""
    bench = tvbo.benchmarks.make("hills", horizon=20.0)
    C = np.asarray(bench.candidates, float)
    ds = tvbo.simulate("hills", name, seed=0, horizon=20.0, warmup=3, max_iterations=14)
    X = np.asarray(ds["x"].values, float).reshape(-1, bench.d)
    assert len(X) == 14
    off = [i for i, x in enumerate(X) if not np.any(np.all(C == x, axis=1))]
    assert not off, f"{name}: queries {off} are not candidates of hills"


@pytest.mark.parametrize("search", ["screen", "multistart"])
def test_ikr_ucb_on_candidates_is_the_exhaustive_argmax(search):
    """On a finite set both searches return the best candidate, computed independently from the
    formula (Eq. 3.12), first index on ties."""
    X, y = _data(n=15, d=2, seed=4)
    C = np.random.default_rng(8).random((300, 2))
    C[7] = C[3]  # an exact tie: the lower index wins
    alg = make("boke", search=search)
    alg.setup(ProblemInfo(d=2, candidates=C), np.random.default_rng(0), WorkCounter(),
              clock=lambda: 0.0)
    _feed(alg, X, y)
    x = alg.propose(0.0)
    values = ikr_ucb_value(alg.surrogate.model, C, alg.state()["beta"])
    np.testing.assert_array_equal(x, C[int(np.argmax(values))])


def test_kr_ucb_widening_on_candidates_takes_the_emptiest_candidate_of_the_ball():
    base, yb = _data(n=3)
    X = np.repeat(base, [6, 5, 5], axis=0)  # 3 distinct <= 16^0.5: widen
    y = np.repeat(yb, [6, 5, 5])
    C = np.vstack([base, np.random.default_rng(2).random((400, 2))])
    alg = make("kr-ucb")
    alg.setup(ProblemInfo(d=2, candidates=C), np.random.default_rng(0), WorkCounter(),
              clock=lambda: 0.0)
    _feed(alg, X, y)
    x = alg.propose(0.0)
    assert alg.state()["resample"] == 0.0
    model = alg.surrogate.model
    h = model.bandwidth_at(16)
    arm = X[np.argmax(_arm_scores(X, y, h, 1.0))]
    dist = np.linalg.norm(C - arm, axis=1)
    ball = np.flatnonzero((dist > 0) & (dist < alg.acquisition.radius("gaussian", h)))
    assert ball.size > 1
    expected = C[ball[int(np.argmin(model.regression(C[ball]).log_w))]]
    np.testing.assert_array_equal(x, expected)


def test_kr_ucb_widening_on_a_coarse_grid_takes_the_nearest_other_candidate():
    """rho below the grid spacing: the ball holds only the arm, so widening takes a nearest
    other candidate (a new arm), never the arm itself."""
    from tvbo.algorithms.boke.kr_ucb import widen_on_candidates

    C = np.linspace(0.0, 1.0, 5)[:, None]
    model = _feed(_alg("kr-ucb", d=1), C[[2, 2, 2]], np.zeros(3)).surrogate.model
    x = widen_on_candidates(model, C[2], 1e-3, C, np.random.default_rng(0))
    assert x[0] in (0.25, 0.75)
    assert widen_on_candidates(model, C[0], 1e-3, C[:1], np.random.default_rng(0))[0] == 0.0


# -- the paper's GP-UCB baseline (App. A.1): a fixed bandwidth and a fixed beta ----------------
def _gaussian_gp_ucb(X, y, Xq, lengthscale, noise_var, beta):
    """mu + sqrt(beta) sigma of a GP with k = exp(-|x - x'|^2 / (2 l^2)) on y standardised by
    its mean and population std, written out with numpy's solve (independent of tvbo.gp)."""
    mean, std = y.mean(), y.std()
    ys = (y - mean) / std

    def k(A, B):
        return np.exp(-((A[:, None, :] - B[None, :, :]) ** 2).sum(-1) / (2 * lengthscale**2))

    K = k(X, X) + noise_var * np.eye(len(X))
    kq = k(Xq, X)
    mu = kq @ np.linalg.solve(K, ys)
    var = 1.0 - np.einsum("ij,ji->i", kq, np.linalg.solve(K, kq.T))
    return mean + std * mu + np.sqrt(beta) * std * np.sqrt(np.maximum(var, 0.0))


def test_gp_ucb_fixed_never_refits_and_maximises_the_gaussian_kernel_ucb():
    X, y = _data(n=15)
    alg = _feed(_alg("gp-ucb-fixed"), X, y)
    x = alg.propose(0.0)
    hp = alg.surrogate.hyperparameters
    assert (hp.signal_var, hp.lengthscale_space, hp.noise_var) == (1.0, 0.2, 0.01)
    assert alg.surrogate.space_kernel == "rbf" and alg.state()["beta"] == 2.0
    assert alg.surrogate.last_fit_evals == 0
    others = np.random.default_rng(4).random((3000, 2))
    at_x = _gaussian_gp_ucb(X, y, x[None], 0.2, 0.01, 2.0)[0]
    assert at_x >= _gaussian_gp_ucb(X, y, others, 0.2, 0.01, 2.0).max() - 1e-6


def test_gp_ucb_fixed_on_the_engine_records_no_fit_and_constant_hyperparameters():
    ds = tvbo.simulate("forrester", "gp-ucb-fixed", seed=0, horizon=600, warmup=5,
                       max_iterations=12)
    assert ds["fit_n_evals"].size == 0
    assert np.all(ds["compute_fit"].values[np.isfinite(ds["compute_fit"].values)] == 0)
    steps = ~ds["is_warmup"].values.ravel().astype(bool)
    assert np.all(ds["state_lengthscale_space"].values.ravel()[steps] == 0.2)
    fitted = tvbo.simulate("forrester", "gp-ucb", seed=0, horizon=600, warmup=5, max_iterations=12)
    assert fitted["fit_n_evals"].size > 0
    assert np.any(fitted["state_lengthscale_space"].values.ravel()[steps] != 0.2)


@pytest.mark.parametrize(
    "surrogate, match",
    [
        ({"fit_restarts": 2}, "fit_restarts cannot apply"),
        ({"fit_mode": "gpytorch-adam"}, "fit_mode cannot apply"),
        ({"prior": {"noise_var": [0.01, 1.0]}}, "prior cannot apply"),
        ({"hyperparameters": "frozen"}, "unknown hyperparameters 'frozen'; valid: fitted, fixed"),
    ],
)
def test_fixed_hyperparameters_refuse_the_fits_options(surrogate, match):
    with pytest.raises(ValueError, match=match):
        make("gp-ucb-fixed", surrogate=surrogate)
