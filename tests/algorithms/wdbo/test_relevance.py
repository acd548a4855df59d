"""The one-pass W2 relevance against leave-one-out recomputation and direct integration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate

from tvbo.algorithms.wdbo.relevance import (
    convolution_matrix,
    integrated_w2_quadrature,
    relevance,
    relevance_bruteforce,
    relevance_terms,
)
from tvbo.gp.convolutions import SUPPORTED
from tvbo.work import WorkCounter

PAIRS = list(itertools.product(SUPPORTED, SUPPORTED))


def kernel(name: str, r: np.ndarray) -> np.ndarray:
    """The four correlations, written out independently of the module under test."""
    r = np.abs(r)
    if name == "matern12":
        return np.exp(-r)
    if name == "matern32":
        return (1 + math.sqrt(3) * r) * np.exp(-math.sqrt(3) * r)
    if name == "matern52":
        return (1 + math.sqrt(5) * r + 5 * r * r / 3) * np.exp(-math.sqrt(5) * r)
    return np.exp(-r * r / 2)


def make_data(seed: int, n: int, d: int, horizon: float = 6.0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    T = np.sort(rng.uniform(0.0, horizon, n))
    y = rng.standard_normal(n)
    return X, T, (y - y.mean()) / y.std()


def hyper(space_kernel, time_kernel, **over):
    out = dict(
        signal_var=1.4,
        lengthscale_space=0.35,
        lengthscale_time=2.0,
        noise_var=0.04,
        space_kernel=space_kernel,
        time_kernel=time_kernel,
        t_now=6.3,
    )
    out.update(over)
    return out


@pytest.mark.parametrize(("space_kernel", "time_kernel"), PAIRS)
def test_one_pass_equals_leave_one_out_recomputation(space_kernel, time_kernel):
    for seed, (n, d) in enumerate([(8, 1), (12, 2), (15, 3)]):
        X, T, y = make_data(seed, n, d)
        for normalise, clamp, ls in [(True, True, 0.35), (False, False, 0.35), (True, True, 2.0)]:
            kw = hyper(space_kernel, time_kernel, lengthscale_space=ls)
            fast = relevance(X, T, y, normalise=normalise, clamp_space=clamp, **kw)
            slow = relevance_bruteforce(X, T, y, normalise=normalise, clamp_space=clamp, **kw)
            assert fast.shape == (n,)
            np.testing.assert_allclose(fast, slow, rtol=1e-8, atol=0)


def test_clamp_is_active_for_long_spatial_lengthscales_and_changes_the_result():
    X, T, y = make_data(1, 10, 2)
    kw = hyper("matern52", "matern32", lengthscale_space=2.0)
    C = convolution_matrix(
        X,
        T,
        **{
            k: kw[k]
            for k in (
                "lengthscale_space",
                "lengthscale_time",
                "space_kernel",
                "time_kernel",
                "t_now",
            )
        },
    )
    C_free = convolution_matrix(
        X,
        T,
        clamp_space=False,
        **{
            k: kw[k]
            for k in (
                "lengthscale_space",
                "lengthscale_time",
                "space_kernel",
                "time_kernel",
                "t_now",
            )
        },
    )
    assert np.all(C <= C_free + 1e-15) and np.any(C < 0.5 * C_free)
    clamped = relevance_terms(X, T, y, clamp_space=True, **kw)
    free = relevance_terms(X, T, y, clamp_space=False, **kw)
    assert np.all(clamped.removal < free.removal) and clamped.prior < free.prior


def posterior_on_grid(X, T, y, kw, x, t, drop=None):
    """Mean and variance of the latent f at (x, t) pairs (1-d space), by direct solves."""
    keep = np.ones(len(y), bool) if drop is None else np.arange(len(y)) != drop
    Xk, Tk, yk = X[keep, 0], T[keep], y[keep]
    lam = kw["signal_var"]

    def cov(xa, ta, xb, tb):
        return (
            lam
            * kernel(kw["space_kernel"], (xa[:, None] - xb[None, :]) / kw["lengthscale_space"])
            * kernel(kw["time_kernel"], (ta[:, None] - tb[None, :]) / kw["lengthscale_time"])
        )

    delta = cov(Xk, Tk, Xk, Tk) + kw["noise_var"] * np.eye(len(yk))
    kz = cov(x, t, Xk, Tk)
    sol = np.linalg.solve(delta, kz.T)
    return kz @ np.linalg.solve(delta, yk), lam - np.sum(kz * sol.T, axis=1)


def panels(breaks, width, nodes=8):
    """Composite Gauss-Legendre nodes/weights on [breaks[0], breaks[-1]], panels <= width."""
    g, w = np.polynomial.legendre.leggauss(nodes)
    xs, ws = [], []
    for lo, hi in zip(breaks[:-1], breaks[1:], strict=True):
        m = max(1, math.ceil((hi - lo) / width))
        edges = np.linspace(lo, hi, m + 1)
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            xs.append(0.5 * (a + b) + 0.5 * (b - a) * g)
            ws.append(0.5 * (b - a) * w)
    return np.concatenate(xs), np.concatenate(ws)


@pytest.mark.parametrize(("space_kernel", "time_kernel"), PAIRS)
def test_unnormalised_bound_equals_direct_integration_over_R_and_future(space_kernel, time_kernel):
    """eq. (10)/(11) before sqrt: integral over R x [t_now, t_big] of the pointwise quantities."""
    X, T, y = make_data(7, 7, 1)
    kw = hyper(space_kernel, time_kernel, lengthscale_space=0.3, lengthscale_time=1.0)
    ls, lt, t_now = kw["lengthscale_space"], kw["lengthscale_time"], kw["t_now"]
    # wide box; break at every data x (Matérn kinks); time is smooth after t_now
    # (the integrands decay at least like exp(-2 r / l): 20 lengthscales leave < 1e-17)
    xb = np.unique(np.concatenate([[-20 * ls, 1 + 20 * ls], X[:, 0]]))
    xq, xw = panels(xb, ls, nodes=10)
    tq, tw = panels(np.array([t_now, t_now + 20 * lt]), lt, nodes=10)
    xx, tt = (a.ravel() for a in np.meshgrid(xq, tq, indexing="ij"))
    ww = np.outer(xw, tw).ravel()
    mu, var = posterior_on_grid(X, T, y, kw, xx, tt)
    terms = relevance_terms(X, T, y, clamp_space=False, **kw)
    for i in range(len(y)):
        mu_i, var_i = posterior_on_grid(X, T, y, kw, xx, tt, drop=i)
        direct = np.sum(ww * ((mu - mu_i) ** 2 + np.abs(var - var_i)))
        assert terms.removal[i] == pytest.approx(direct, rel=1e-6)
    prior_direct = np.sum(ww * (mu**2 + np.abs(kw["signal_var"] - var)))
    assert terms.prior == pytest.approx(prior_direct, rel=1e-6)


def test_precision_argument_and_work_reporting():
    X, T, y = make_data(4, 11, 2)
    kw = hyper("matern52", "matern32")
    plain = relevance(X, T, y, **kw)
    # precision computed independently of the module
    dist = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1)) / kw["lengthscale_space"]
    lag = np.abs(T[:, None] - T[None]) / kw["lengthscale_time"]
    K = kw["signal_var"] * kernel("matern52", dist) * kernel("matern32", lag)
    P = np.linalg.inv(K + kw["noise_var"] * np.eye(len(y)))
    counter = WorkCounter()
    with counter.phase("clean"):
        given = relevance(X, T, y, precision=P, work=counter, **kw)
    np.testing.assert_allclose(given, plain, rtol=1e-9)
    counts = counter.counts()["clean"]
    assert counts["call"] == 1 and counts["kernel"] >= len(y) ** 2 and counts["flop"] > 0
    own = WorkCounter()
    relevance(X, T, y, work=own, **kw)
    assert own.counts()["update"]["flop"] > counts["flop"]  # the Cholesky is charged when built
    with pytest.raises(ValueError, match=r"precision must have shape \(11, 11\)"):
        relevance(X, T, y, precision=P[:5, :5], **kw)


@pytest.mark.parametrize(("space", "time"), PAIRS)
def test_convolution_matrix_per_pair_evaluation_is_bit_identical_to_the_full_grid(space, time):
    """The matrix is evaluated once per pair and mirrored; every entry equals the full-grid
    evaluation of the same factors bit for bit (duplicate points and points after t_now too)."""
    from scipy.spatial.distance import cdist

    from tvbo.gp.convolutions import space_convolution_r, time_convolution

    X, T, _ = make_data(8, 23, 3)
    X[4] = X[5]
    T[6] = T[7]
    for t_now, clamp in ((float(T.max()) + 0.5, True), (float(T[10]), False)):
        got = convolution_matrix(X, T, lengthscale_space=0.4, lengthscale_time=1.7,
                                 space_kernel=space, time_kernel=time, t_now=t_now,
                                 clamp_space=clamp)
        full_space = space_convolution_r(space, 0.4, cdist(X, X), 3)
        if clamp:
            full_space = np.minimum(full_space, 1.0)
        full = full_space * time_convolution(time, 1.7, T[:, None], T[None, :], t_now)
        assert got.tobytes() == (0.5 * (full + full.T)).tobytes()


def test_convolution_argument_is_trusted_and_checked():
    X, T, y = make_data(4, 11, 2)
    kw = hyper("matern52", "matern32")
    C = convolution_matrix(X, T, lengthscale_space=kw["lengthscale_space"],
                           lengthscale_time=kw["lengthscale_time"], t_now=kw["t_now"])
    plain, given = relevance(X, T, y, **kw), relevance(X, T, y, convolution=C, **kw)
    assert given.tobytes() == plain.tobytes()
    doubled = relevance_terms(X, T, y, convolution=2.0 * C, **kw)  # used as given
    np.testing.assert_allclose(doubled.removal, 2.0 * relevance_terms(X, T, y, **kw).removal)
    counted, own = WorkCounter(), WorkCounter()
    relevance(X, T, y, convolution=C, work=counted, **kw)
    relevance(X, T, y, work=own, **kw)
    assert counted.counts() == own.counts()  # the shortcut is not priced differently
    with pytest.raises(ValueError, match=r"convolution must have shape \(11, 11\)"):
        relevance(X, T, y, convolution=C[:5, :5], **kw)


def test_scaling_the_data_scales_eq10_and_leaves_the_ratio_unchanged():
    """y -> s y, lambda -> s^2 lambda, sigma2 -> s^2 sigma2: (10) scales by s^2, (12) does not."""
    X, T, y = make_data(2, 9, 2)
    base = hyper("matern32", "matern12")
    s = 3.0
    scaled = hyper(
        "matern32",
        "matern12",
        signal_var=s * s * base["signal_var"],
        noise_var=s * s * base["noise_var"],
    )
    np.testing.assert_allclose(
        relevance(X, T, s * y, **scaled), relevance(X, T, y, **base), rtol=1e-9
    )
    t_base, t_scaled = relevance_terms(X, T, y, **base), relevance_terms(X, T, s * y, **scaled)
    np.testing.assert_allclose(t_scaled.removal, s * s * t_base.removal, rtol=1e-9)
    assert t_scaled.prior == pytest.approx(s * s * t_base.prior, rel=1e-9)


def test_single_observation_removal_is_a_reset():
    """With one observation, removing it *is* returning to the prior: R = 1 exactly."""
    out = relevance([[0.4, 0.7]], [2.0], [1.3], **hyper("matern32", "rbf"))
    assert out.shape == (1,) and out[0] == pytest.approx(1.0, rel=1e-12)


def test_stale_data_gives_zero_relevance_not_nan():
    X, T, y = make_data(5, 8, 2)
    out = relevance(X, T, y, **hyper("matern52", "matern12", lengthscale_time=0.01, t_now=1e4))
    assert np.all(out == 0.0)


def test_old_duplicate_is_less_relevant_than_a_recent_isolated_point():
    X = np.array([[0.2], [0.2], [0.8], [0.5]])
    T = np.array([0.0, 0.0, 5.9, 3.0])
    y = np.array([1.0, 1.0, -1.0, 0.3])
    out = relevance(X, T, y, **hyper("matern52", "matern32"))
    assert out[0] == pytest.approx(out[1], rel=1e-10)
    assert out[0] < out[2]


def test_invalid_inputs_name_the_bad_value():
    X, T, y = make_data(0, 5, 2)
    with pytest.raises(ValueError, match="matern12, matern32, matern52, rbf"):
        relevance(X, T, y, **hyper("matern52", "cosine"))
    with pytest.raises(ValueError, match="noise_var"):
        relevance(X, T, y, **hyper("matern52", "matern32", noise_var=0.0))
    with pytest.raises(ValueError, match="shape"):
        relevance(X, T[:4], y, **hyper("matern52", "matern32"))
    with pytest.raises(ValueError, match="t_now must be a finite number, got nan"):
        relevance(X, T, y, **hyper("matern52", "matern32", t_now=float("nan")))
    with pytest.raises(ValueError, match="R\\^d, box"):
        relevance_bruteforce(X, T, y, domain="sphere", **hyper("matern52", "matern32"))


def test_box_domain_integral_is_below_the_R_d_bound():
    X, T, y = make_data(3, 8, 2)
    kw = hyper("rbf", "matern32", lengthscale_space=0.3)
    box = relevance_bruteforce(X, T, y, domain="box", normalise=False, n_space_points=40, **kw)
    whole = relevance_bruteforce(X, T, y, normalise=False, clamp_space=False, **kw)
    assert np.all(box <= whole * (1 + 1e-9)) and np.all(box > 0.1 * whole)


def test_exact_quadrature_matches_scipy_dblquad_in_1d():
    X, T, y = make_data(6, 6, 1)
    kw = hyper("rbf", "matern52", lengthscale_space=0.4, lengthscale_time=1.5)
    t_end, i = kw["t_now"] + 3.0, 2

    def w2(t, x):
        xs, ts = np.array([x]), np.array([t])
        m1, v1 = posterior_on_grid(X, T, y, kw, xs, ts)
        m2, v2 = posterior_on_grid(X, T, y, kw, xs, ts, drop=i)
        return float((m1 - m2)[0] ** 2 + (np.sqrt(v1) - np.sqrt(v2))[0] ** 2)

    exact = integrate.dblquad(w2, 0.0, 1.0, kw["t_now"], t_end, epsabs=0, epsrel=1e-9)[0]
    got = integrated_w2_quadrature(
        X, T, y, i, t_end=t_end, squared=True, n_points=24, n_time_points=24, **kw
    )
    assert got == pytest.approx(exact, rel=1e-6)


def test_exact_w2_is_below_the_theorem_bound():
    X, T, y = make_data(8, 9, 2)
    kw = hyper("matern52", "matern32")
    bound = relevance_terms(X, T, y, clamp_space=False, **kw).removal
    for i in (0, 4, 8):
        exact = integrated_w2_quadrature(
            X,
            T,
            y,
            i,
            t_end=kw["t_now"] + 10 * 2.0,
            squared=True,
            n_points=12,
            n_time_points=24,
            **kw,
        )
        assert 0 < exact <= bound[i]
    ratio = integrated_w2_quadrature(X, T, y, 0, t_end=26.0, normalise=True, n_points=8, **kw)
    assert 0 < ratio < 1
