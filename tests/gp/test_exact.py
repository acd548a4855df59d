"""ExactGP against dense linear algebra; incremental updates against fresh factorisations."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import multivariate_normal

from tvbo.gp.exact import ExactGP
from tvbo.gp.kernels import Hyperparameters, SeparableKernel
from tvbo.gp.linalg import JITTER_START, JitterError, cholesky_with_jitter
from tvbo.work import WorkCounter

HP = Hyperparameters(signal_var=1.3, lengthscale_space=0.35, lengthscale_time=60.0, noise_var=0.02)
HP_SPACE = Hyperparameters(0.8, lengthscale_space=0.25, lengthscale_time=None, noise_var=0.05)


def make_data(n: int, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    T = np.sort(rng.random(n) * 300.0)
    y = 5.0 + 3.0 * np.sin(4 * X[:, 0]) * np.cos(T / 80.0) + 0.2 * rng.standard_normal(n)
    return X, T, y


def dense_posterior(kern, hp, X, T, y, Xs, ts, standardize=True):
    """Posterior mean/var via np.linalg.solve of the full Delta, standardisation by hand."""
    mu, sd = (y.mean(), y.std()) if standardize else (0.0, 1.0)
    ys = (y - mu) / sd
    Delta = kern.matrix(X, T, X, T, hp) + hp.noise_var * np.eye(len(y))
    Ks = kern.matrix(Xs, ts, X, T, hp)
    mean = Ks @ np.linalg.solve(Delta, ys)
    var = hp.signal_var - np.einsum("ij,ji->i", Ks, np.linalg.solve(Delta, Ks.T))
    return mean * sd + mu, var * sd**2


@pytest.mark.parametrize("standardize", [True, False])
@pytest.mark.parametrize("time", ["matern32", "matern12", None])
def test_posterior_matches_dense_solve(standardize: bool, time: str | None) -> None:
    kern = SeparableKernel("matern52", time)
    hp = HP if time else HP_SPACE
    X, T, y = make_data(60)
    gp = ExactGP(kern, hp, standardize=standardize)
    gp.set_data(X, T if time else None, y)
    rng = np.random.default_rng(5)
    Xs = np.vstack([rng.random((15, 3)), X[:3]])  # include training inputs
    ts = np.concatenate([rng.random(15) * 300, T[:3]])
    pred = gp.predict(Xs, ts if time else None)
    mean, var = dense_posterior(kern, hp, X, T, y, Xs, ts, standardize)
    np.testing.assert_allclose(pred.mean, mean, rtol=0, atol=1e-8)
    np.testing.assert_allclose(pred.var, var, rtol=0, atol=1e-8)
    noisy = gp.predict(Xs, ts if time else None, include_noise=True)
    scale = y.std() ** 2 if standardize else 1.0
    np.testing.assert_allclose(noisy.var, var + hp.noise_var * scale, atol=1e-8)
    assert pred.dmean is None and pred.dvar is None


@pytest.mark.parametrize("time", ["matern12", "matern32", "matern52", "rbf"])
@pytest.mark.parametrize("grad", [False, True])
def test_scalar_time_broadcasts(time: str, grad: bool) -> None:
    """A scalar t takes the kernel's row path (k_T once per observation): bit for bit the
    prediction at a vector of equal times (the (m, n) path), gradients included."""
    X, T, y = make_data(30)
    gp = ExactGP(SeparableKernel("matern52", time), HP)
    gp.set_data(X, T, y)
    Xs = np.random.default_rng(1).random((4, 3))
    a = gp.predict(Xs, 123.0, grad=grad)
    b = gp.predict(Xs, np.full(4, 123.0), grad=grad)
    np.testing.assert_array_equal(a.mean, b.mean)
    np.testing.assert_array_equal(a.var, b.var)
    if grad:
        np.testing.assert_array_equal(a.dmean, b.dmean)
        np.testing.assert_array_equal(a.dvar, b.dvar)
    with pytest.raises(ValueError, match="t contains non-finite"):
        gp.predict(Xs, float("nan"), grad=grad)


def test_scalar_time_predictions_follow_every_change() -> None:
    """Scalar-time predictions (one k_T row for all queries) after every change of the data or
    hyperparameters are bit for bit those at a vector of equal times (the (m, n) path): no
    k_T row of an earlier state is ever reused."""
    X, T, y = make_data(20)
    gp = ExactGP(SeparableKernel(), HP)
    gp.set_data(X, T, y)
    Xs = np.random.default_rng(4).random((5, 3))

    def check(t: float) -> None:
        a = gp.predict(Xs, t, grad=True)
        b = gp.predict(Xs, np.full(len(Xs), t), grad=True)
        for name in ("mean", "var", "dmean", "dvar"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))

    check(310.0)
    check(311.0)  # another time
    changes = [
        lambda: gp.append(np.full(3, 0.5), 305.0, 1.0),  # new data times
        lambda: gp.remove(0),
        lambda: gp.set_hyperparameters(Hyperparameters(1.1, 0.3, 20.0, 0.05)),  # new l_T
        lambda: gp.set_data(X[:7], T[:7] + 1.0, y[:7]),  # same length history, other times
        lambda: gp.set_point_noise(np.full(gp.n, 0.03)),
    ]
    for change in changes:
        check(311.0)
        change()
        check(311.0)


def test_an_in_place_change_of_the_times_never_returns_an_old_row() -> None:
    """An in-place change of the held times, committed with the same array and hyperparameter
    objects (set_hyperparameters refactorises with ``self._T`` itself), must not return the
    k_T row of the old times (the identity-keyed row cache that predict once had did)."""
    X, T, y = make_data(15)
    gp = ExactGP(SeparableKernel(), HP)
    gp.set_data(X, T, y)
    Xs = np.random.default_rng(6).random((4, 3))
    gp.predict(Xs, 320.0)  # a row at t = 320 s computed
    held = gp._T
    held -= 40.0  # in place: the same array object, other times
    gp.set_hyperparameters(gp.hyperparameters)  # the same hyperparameters object
    assert gp._T is held
    a = gp.predict(Xs, 320.0)
    fresh = ExactGP(SeparableKernel(), HP)
    fresh.set_data(X, T - 40.0, y)
    b = fresh.predict(Xs, np.full(len(Xs), 320.0))  # independent: the uncached (m, n) path
    np.testing.assert_array_equal(a.mean, b.mean)
    np.testing.assert_array_equal(a.var, b.var)


def test_predict_leaves_inputs_and_state_untouched() -> None:
    """predict solves in its own scratch memory (dtrtrs overwrite): neither the caller's X nor
    the GP's state changes, and a repeated call gives the same floats."""
    X, T, y = make_data(25)
    gp = ExactGP(SeparableKernel(), HP)
    gp.set_data(X, T, y)
    Xs = np.random.default_rng(2).random((6, 3))
    Xs_copy = Xs.copy()
    L, alpha, Xd = gp.cholesky.copy(), gp.alpha(), gp.X.copy()
    first = gp.predict(Xs, 200.0, grad=True)
    second = gp.predict(Xs, 200.0, grad=True)
    np.testing.assert_array_equal(Xs, Xs_copy)
    np.testing.assert_array_equal(gp.cholesky, L)
    np.testing.assert_array_equal(gp.alpha(), alpha)
    np.testing.assert_array_equal(gp.X, Xd)
    for name in ("mean", "var", "dmean", "dvar"):
        np.testing.assert_array_equal(getattr(first, name), getattr(second, name))


@pytest.mark.parametrize("space", ["matern32", "matern52", "rbf"])
def test_predict_gradients_match_finite_differences(space: str) -> None:
    kern = SeparableKernel(space, "matern32")
    X, T, y = make_data(40)
    gp = ExactGP(kern, HP)
    gp.set_data(X, T, y)
    Xs = np.random.default_rng(2).random((6, 3))
    pred = gp.predict(Xs, 150.0, grad=True)
    h = 1e-6
    for a in range(3):
        e = np.zeros(3)
        e[a] = h
        up, down = gp.predict(Xs + e, 150.0), gp.predict(Xs - e, 150.0)
        np.testing.assert_allclose(pred.dmean[:, a], (up.mean - down.mean) / (2 * h), atol=1e-6)
        np.testing.assert_allclose(pred.dvar[:, a], (up.var - down.var) / (2 * h), atol=1e-6)


def test_lml_precision_alpha_match_dense() -> None:
    kern = SeparableKernel()
    X, T, y = make_data(50)
    gp = ExactGP(kern, HP)
    gp.set_data(X, T, y)
    ys = (y - y.mean()) / y.std()
    Delta = kern.matrix(X, T, X, T, HP) + HP.noise_var * np.eye(50)
    assert gp.log_marginal_likelihood() == pytest.approx(
        multivariate_normal(np.zeros(50), Delta).logpdf(ys), rel=1e-10
    )
    np.testing.assert_allclose(gp.precision_matrix(), np.linalg.inv(Delta), atol=1e-8)
    np.testing.assert_allclose(gp.alpha(), np.linalg.solve(Delta, ys), atol=1e-8)
    np.testing.assert_allclose(gp.y_standardized, ys, atol=1e-12)
    assert gp.y_mean == pytest.approx(y.mean()) and gp.y_std == pytest.approx(y.std())


def assert_same_state(gp: ExactGP, ref: ExactGP) -> None:
    np.testing.assert_allclose(gp.X, ref.X)
    np.testing.assert_allclose(gp.T, ref.T)
    np.testing.assert_allclose(gp.y, ref.y)
    np.testing.assert_allclose(gp.cholesky, ref.cholesky, atol=1e-8)
    np.testing.assert_allclose(gp.alpha(), ref.alpha(), atol=1e-8)
    assert gp.y_mean == pytest.approx(ref.y_mean, abs=1e-12)
    assert gp.y_std == pytest.approx(ref.y_std, abs=1e-12)
    assert gp.log_marginal_likelihood() == pytest.approx(ref.log_marginal_likelihood(), abs=1e-8)
    Xs = np.random.default_rng(9).random((5, gp.d))
    p, q = gp.predict(Xs, 100.0, grad=True), ref.predict(Xs, 100.0, grad=True)
    np.testing.assert_allclose(p.mean, q.mean, atol=1e-8)
    np.testing.assert_allclose(p.var, q.var, atol=1e-8)
    np.testing.assert_allclose(p.dmean, q.dmean, atol=1e-7)


def fresh(kern, hp, gp: ExactGP) -> ExactGP:
    ref = ExactGP(kern, hp)
    ref.set_data(gp.X, gp.T, gp.y)
    return ref


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    n0=st.integers(min_value=0, max_value=12),
    ops=st.lists(
        st.one_of(st.just(None), st.integers(min_value=-30, max_value=30)),
        min_size=1,
        max_size=12,
    ),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_append_remove_sequences_equal_fresh_factorisation(n0, ops, seed) -> None:
    """``None`` appends a random point, an integer removes that index (mod n) if data exist."""
    kern = SeparableKernel("matern52", "matern32")
    rng = np.random.default_rng(seed)
    X, T, y = make_data(n0 + len(ops), seed=seed)
    gp = ExactGP(kern, HP)
    gp.set_data(X[:n0], T[:n0], y[:n0])
    nxt = n0
    for op in ops:
        if op is None or gp.n == 0:
            gp.append(X[nxt], T[nxt], y[nxt])
            nxt += 1
        else:
            gp.remove(int(op) % gp.n - (gp.n if rng.random() < 0.5 else 0))
        if gp.n:
            assert_same_state(gp, fresh(kern, HP, gp))
    assert gp.jitter_events == 0 and gp.jitter == 0.0


@pytest.mark.parametrize("i", [0, 7, 19, -1, -20])
def test_remove_each_position(i: int) -> None:
    kern = SeparableKernel()
    X, T, y = make_data(20, seed=4)
    gp = ExactGP(kern, HP)
    gp.set_data(X, T, y)
    gp.remove(i)
    keep = np.delete(np.arange(20), i)
    ref = ExactGP(kern, HP)
    ref.set_data(X[keep], T[keep], y[keep])
    assert_same_state(gp, ref)


def test_remove_out_of_range_raises() -> None:
    X, T, y = make_data(5)
    gp = ExactGP(SeparableKernel(), HP)
    gp.set_data(X, T, y)
    with pytest.raises(IndexError, match="out of range"):
        gp.remove(5)
    with pytest.raises(IndexError, match="out of range"):
        gp.remove(-6)


def test_spatial_only_gp_appends_from_empty() -> None:
    kern = SeparableKernel("matern52", None)
    X, _, y = make_data(25, d=2)
    gp = ExactGP(kern, HP_SPACE)
    for i in range(25):
        gp.append(X[i], None, y[i])
    assert gp.n == 25 and gp.d == 2
    np.testing.assert_array_equal(gp.T, 0.0)
    ref = ExactGP(kern, HP_SPACE)
    ref.set_data(X, None, y)
    assert_same_state(gp, ref)
    mean, var = dense_posterior(kern, HP_SPACE, X, None, y, X[:4] + 0.01, None)
    pred = gp.predict(X[:4] + 0.01, None)
    np.testing.assert_allclose(pred.mean, mean, atol=1e-8)
    np.testing.assert_allclose(pred.var, var, atol=1e-8)


def test_input_errors_are_clear() -> None:
    gp = ExactGP(SeparableKernel(), HP)
    with pytest.raises(ValueError, match="no data"):
        gp.predict(np.zeros((1, 2)), 0.0)
    X, T, y = make_data(5)
    with pytest.raises(ValueError, match="T is required"):
        gp.set_data(X, None, y)
    gp.set_data(X, T, y)
    with pytest.raises(ValueError, match="d = 3"):
        gp.predict(np.zeros((1, 2)), 0.0)
    with pytest.raises(ValueError, match="lengthscale_time"):
        gp.set_hyperparameters(HP_SPACE)
    with pytest.raises(ValueError, match="finite"):
        gp.append(np.zeros(3), 1.0, float("nan"))
    assert gp.n == 5


def test_jitter_escalation_recorded_on_duplicates_with_zero_noise() -> None:
    kern = SeparableKernel("rbf", "matern32")
    hp = Hyperparameters(1.0, 0.3, 50.0, 0.0)
    X, T, y = make_data(10)
    X = np.vstack([X, X[:3]])
    T = np.concatenate([T, T[:3]])
    y = np.concatenate([y, y[:3] + 0.1])
    gp = ExactGP(kern, hp)
    gp.set_data(X, T, y)
    assert gp.jitter_events >= 1
    assert gp.jitter >= JITTER_START * hp.signal_var
    pred = gp.predict(np.vstack([X, np.random.default_rng(0).random((5, 3))]), 100.0, grad=True)
    for a in (pred.mean, pred.var, pred.dmean, pred.dvar):
        assert np.all(np.isfinite(a))
    # appending yet another duplicate cannot use the O(n^2) row update: recorded fallback
    gp2 = ExactGP(kern, hp)
    gp2.set_data(X[:10], T[:10], y[:10])
    before = gp2.jitter_events
    gp2.append(X[0], T[0], y[0] + 0.2)
    assert gp2.jitter_events > before and gp2.jitter > 0
    assert np.all(np.isfinite(gp2.predict(X[:2], 10.0).mean))
    # the factor still represents K + jitter I exactly
    K = kern.matrix(gp2.X, gp2.T, gp2.X, gp2.T, hp) + gp2.jitter * np.eye(gp2.n)
    np.testing.assert_allclose(gp2.cholesky @ gp2.cholesky.T, K, atol=1e-12)


def test_cholesky_jitter_cap_raises_and_counts() -> None:
    work = WorkCounter()
    with pytest.raises(JitterError, match="jitter") as info:
        cholesky_with_jitter(-np.eye(4), 1.0, work)
    assert info.value.escalations == 9  # 0 -> 1e-10 -> ... -> 1e-2: nine levels
    assert work.counts()["update"]["flop"] == pytest.approx(10 * 4**3 / 3)  # ten attempts
    with pytest.raises(ValueError, match="start_jitter"):
        cholesky_with_jitter(np.eye(2), 1.0, work, start_jitter=-1.0)


def test_work_counts_reported_and_deterministic() -> None:
    def run() -> dict:
        work = WorkCounter()
        X, T, y = make_data(30)
        gp = ExactGP(SeparableKernel(), HP, work=work)
        gp.set_data(X[:25], T[:25], y[:25])
        for i in range(25, 30):
            gp.append(X[i], T[i], y[i])
        gp.remove(3)
        gp.predict(X[:7], 10.0, grad=True)
        gp.precision_matrix()
        return work.counts()

    first, second = run(), run()
    assert first == second
    counts = first["update"]
    assert counts["call"] == 1 + 5 + 1 + 1 + 1
    assert counts["flop"] > 0 and counts["kernel"] > 0
    # predict reports exactly m * n kernel entries for values and again for gradients
    work = WorkCounter()
    X, T, y = make_data(30)
    gp = ExactGP(SeparableKernel(), HP, work=work)
    gp.set_data(X, T, y)
    before = work.counts()["update"]["kernel"]
    gp.predict(X[:7], 10.0, grad=True)
    assert work.counts()["update"]["kernel"] - before == 2 * 7 * 30
    # append costs O(n^2) flops, a fresh factorisation O(n^3)
    before = work.counts()["update"]["flop"]
    gp.append(np.full(3, 0.5), 11.0, 1.0)
    append_flops = work.counts()["update"]["flop"] - before
    assert append_flops == pytest.approx(30**2 + 2 * 30 + 2 * 31**2)
