"""The W-DBO relevance of every observation, in one O(n^3) pass.

Bardou, Thiran & Ranieri ("This Too Shall Pass", NeurIPS 2024) measure how much removing
observation ``o_i`` changes the GP's *future* predictions: the integrated 2-Wasserstein distance
between the posteriors with and without ``o_i`` over ``F_t0 = S x [t0, inf)`` (eq. (8)), divided by
the distance between the posterior and the prior (eq. (9)). Theorem 4.1 bounds both integrals in
closed form: the pointwise W2^2 ``(mu - mu~)^2 + (sigma - sigma~)^2`` is bounded by
``(mu - mu~)^2 + |sigma^2 - sigma~^2|``, and the space integral over S by the one over R^d. The
public C++ reference evaluates the bound observation by observation with fresh block inverses,
O(n^3) each and O(n^4) per pass. We use the exact leave-one-out downdates instead. With
``P = Delta^-1`` (``Delta = K + sigma2 I``), ``a_i = P e_i`` and ``alpha = P y``:

``mu_D(z) - mu_{D\\i}(z) = (k_z^T a_i) alpha_i / P_ii``,
``sigma2_{D\\i}(z) - sigma2_D(z) = (k_z^T a_i)^2 / P_ii >= 0``.

Integrating ``k_z k_z^T`` over the domain gives ``lambda^2 C`` with
``C_jk = (kS * kS)(x_j - x_k) (kT * kT)_{t0}(t_j, t_k)``, so that

``W^2_i = lambda^2 (a_i^T C a_i) (alpha_i^2 / P_ii^2 + 1 / P_ii)``   (eq. (10))
``W^2_prior = lambda^2 (alpha^T C alpha + tr(P C))``                (eq. (11))

and every ``a_i^T C a_i`` comes from ``diag(P C P)``: one matrix product, O(n^3) for all i together.
The relevance is ``sqrt(W^2_i / W^2_prior)`` (eq. (12)).

Two reference computations live here too: :func:`relevance_bruteforce` removes each point and
recomputes the posterior (O(n^4)), and :func:`integrated_w2_quadrature` integrates the *exact*
W2^2 on a bounded domain by tensor Gauss-Legendre quadrature, for studying how loose the bound is.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from scipy import linalg
from scipy.spatial.distance import cdist

from tvbo.gp.convolutions import (
    check_name,
    correlation,
    space_convolution_r,
    time_convolution,
)
from tvbo.work import WorkCounter

#: Integration domains for the space factor of :func:`relevance_bruteforce`.
DOMAINS: tuple[str, ...] = ("R^d", "box")


class RelevanceTerms(NamedTuple):
    """The two squared integrated distances behind the relevance (both include ``lambda^2``)."""

    #: ``W^2(GP_D, GP_{D\\i})`` upper bound for every i (eq. (10)), shape ``(n,)``
    removal: np.ndarray
    #: ``W^2(GP_D, GP_prior)`` upper bound (eq. (11)), the normaliser
    prior: float


class _Data(NamedTuple):
    X: np.ndarray
    T: np.ndarray
    y: np.ndarray


# ---------------------------------------------------------------------------------------------
# validation and shared building blocks
# ---------------------------------------------------------------------------------------------
def _positive(name: str, value: float) -> float:
    v = float(value)
    if not (v > 0.0 and math.isfinite(v)):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return v


def _finite(name: str, value: float) -> float:
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return v


def _check_data(X, T, y) -> _Data:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must have shape (n, d) with n >= 1, got shape {X.shape}")
    n = X.shape[0]
    T = np.asarray(T, dtype=float).reshape(-1)
    y = np.asarray(y, dtype=float).reshape(-1)
    if T.shape != (n,) or y.shape != (n,):
        raise ValueError(
            f"T and y must have shape ({n},) to match X {X.shape}, got {T.shape} and {y.shape}"
        )
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(T)) and np.all(np.isfinite(y))):
        raise ValueError("X, T and y must be finite")
    return _Data(X, T, y)


def _prior_covariance(data: _Data, signal_var, ls_space, ls_time, space_kernel, time_kernel):
    """``K = lambda kS(|x - x'| / lS) kT(|t - t'| / lT)`` for the observations."""
    dist = cdist(data.X, data.X)
    lag = np.abs(data.T[:, None] - data.T[None, :])
    return (
        signal_var
        * correlation(space_kernel, dist / ls_space)
        * correlation(time_kernel, lag / ls_time)
    )


def _precision(K: np.ndarray, noise_var: float) -> np.ndarray:
    """``(K + sigma2 I)^-1`` through a Cholesky factor, symmetrised."""
    n = K.shape[0]
    delta = K + noise_var * np.eye(n)
    try:
        factor = linalg.cho_factor(delta, lower=True, check_finite=False)
    except linalg.LinAlgError as err:
        raise ValueError(
            f"K + noise_var I is not positive definite (noise_var={noise_var!r}); "
            "increase noise_var"
        ) from err
    P = linalg.cho_solve(factor, np.eye(n), check_finite=False)
    return 0.5 * (P + P.T)


def convolution_matrix(
    X,
    T,
    *,
    lengthscale_space: float,
    lengthscale_time: float,
    space_kernel: str = "matern52",
    time_kernel: str = "matern32",
    t_now: float,
    clamp_space: bool = True,
) -> np.ndarray:
    """``C_jk = (kS * kS)(x_j - x_k) * integral_{t_now}^{inf} kT(t - t_j) kT(t - t_k) dt``.

    The space factor is the exact convolution over R^d (Theorem 4.1's bound of the integral over
    S). With ``clamp_space`` it is capped at 1, as the reference C++ code does. That cap is still
    an upper bound for the integral over ``S = [0, 1]^d``, because that set has volume 1 and
    ``kS <= 1``; it tightens the bound a lot for spatial lengthscales comparable to the domain.
    The clamped matrix need not be positive semi-definite; see :func:`relevance_terms`.
    """
    check_name(space_kernel)
    check_name(time_kernel)
    X = np.asarray(X, dtype=float)
    T = np.asarray(T, dtype=float).reshape(-1)
    # Both factors are evaluated element by element on symmetric arguments, so each is computed
    # once per pair (j <= k) and mirrored: the same values as the full n x n evaluation, at half
    # the cost of the special functions (kve, exp) that dominate a pass. The RBF time factor is
    # the exception: its erfc argument (2 t0 - t_j) - t_k is not exactly symmetric in j, k, so it
    # is still evaluated on the full grid (and symmetrised below, as before).
    rows, cols = _upper_pairs(X.shape[0])
    space = space_convolution_r(
        space_kernel, lengthscale_space, cdist(X, X)[rows, cols], X.shape[1]
    )
    if clamp_space:
        space = np.minimum(space, 1.0)
    if time_kernel == "rbf":
        C = _mirror(space, rows, cols, X.shape[0]) * time_convolution(
            time_kernel, lengthscale_time, T[:, None], T[None, :], t_now
        )
    else:
        pairs = space * time_convolution(time_kernel, lengthscale_time, T[rows], T[cols], t_now)
        C = _mirror(pairs, rows, cols, X.shape[0])
    return 0.5 * (C + C.T)


@lru_cache(maxsize=64)
def _upper_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the upper triangle (diagonal included) of an n x n matrix."""
    rows, cols = np.triu_indices(n)
    rows.flags.writeable = False
    cols.flags.writeable = False
    return rows, cols


def _mirror(values: np.ndarray, rows: np.ndarray, cols: np.ndarray, n: int) -> np.ndarray:
    """The symmetric n x n matrix whose upper triangle (``rows``, ``cols``) holds ``values``."""
    out = np.empty((n, n))
    out[rows, cols] = values
    out[cols, rows] = values
    return out


# ---------------------------------------------------------------------------------------------
# the one-pass criterion
# ---------------------------------------------------------------------------------------------
def relevance_terms(
    X,
    T,
    y,
    *,
    signal_var: float,
    lengthscale_space: float,
    lengthscale_time: float,
    noise_var: float,
    space_kernel: str = "matern52",
    time_kernel: str = "matern32",
    t_now: float,
    clamp_space: bool = True,
    precision: np.ndarray | None = None,
    convolution: np.ndarray | None = None,
    work: WorkCounter | None = None,
) -> RelevanceTerms:
    """Squared integrated distances of eqs. (10) and (11) for all observations, O(n^3) total.

    ``removal[i]`` is ``integral over R^d x [t_now, inf)`` of ``(mu_D - mu_{D\\i})^2 +
    |sigma2_D - sigma2_{D\\i}|`` (space factor capped at 1 with ``clamp_space``). ``precision`` may
    be the caller's ``(K + noise_var I)^-1`` for exactly these inputs; it is then trusted, not
    recomputed. Likewise ``convolution`` may be the caller's :func:`convolution_matrix` for exactly
    these inputs (e.g. the previous pass's matrix without the removed row and column, when the
    hyperparameters and ``t_now`` are unchanged: every entry depends only on its pair). Work
    (kernel entries, flops, one call) goes to ``work`` if given, counted the same either way: the
    counted compute model prices the algorithm, not this implementation's shortcuts.

    Without the clamp ``C`` is positive semi-definite and every term is >= 0. With it, rounding or
    a non-PSD ``C`` can give tiny negative quadratic forms; they are clipped to 0. The reference
    code returns a -1 sentinel there, which its cleaning loop also treats as "remove first".
    """
    lam = _positive("signal_var", signal_var)
    ls_s = _positive("lengthscale_space", lengthscale_space)
    ls_t = _positive("lengthscale_time", lengthscale_time)
    noise = _positive("noise_var", noise_var)
    t_now = _finite("t_now", t_now)
    check_name(space_kernel)
    check_name(time_kernel)
    data = _check_data(X, T, y)
    n = data.X.shape[0]
    if work is not None:
        work.call(1)
    if precision is None:
        K = _prior_covariance(data, lam, ls_s, ls_t, space_kernel, time_kernel)
        P = _precision(K, noise)
        if work is not None:
            work.kernel(n * n)
            work.flops(n**3 / 3.0 + 2.0 * n**3)
    else:
        P = np.asarray(precision, dtype=float)
        if P.shape != (n, n):
            raise ValueError(f"precision must have shape ({n}, {n}), got {P.shape}")
    if convolution is None:
        C = convolution_matrix(
            data.X,
            data.T,
            lengthscale_space=ls_s,
            lengthscale_time=ls_t,
            space_kernel=space_kernel,
            time_kernel=time_kernel,
            t_now=t_now,
            clamp_space=clamp_space,
        )
    else:
        C = np.asarray(convolution, dtype=float)
        if C.shape != (n, n):
            raise ValueError(f"convolution must have shape ({n}, {n}), got {C.shape}")
    alpha = P @ data.y
    CP = C @ P
    quad = np.maximum(np.einsum("ji,ji->i", P, CP), 0.0)  # a_i^T C a_i = diag(P C P)
    p_diag = np.diag(P)
    removal = lam * lam * quad * (alpha * alpha / (p_diag * p_diag) + 1.0 / p_diag)
    prior = lam * lam * (float(alpha @ C @ alpha) + float(np.einsum("ij,ij->", P, C)))
    if work is not None:
        work.kernel(n * n)
        work.flops(2.0 * n**3 + 10.0 * n * n)
    return RelevanceTerms(removal=removal, prior=prior)


def _ratio(terms: RelevanceTerms, normalise: bool) -> np.ndarray:
    """``sqrt(removal)``, divided by ``sqrt(prior)`` when normalising (eq. (12))."""
    if not normalise:
        return np.sqrt(terms.removal)
    if terms.prior > 0.0:
        return np.sqrt(terms.removal / terms.prior)
    # The prior distance vanishes only when every temporal convolution underflows (data stale to
    # machine precision) or a clamped C is badly non-PSD: removal distances are then 0 as well
    # (relevance 0, x/0 -> inf otherwise).
    return np.where(terms.removal > 0.0, np.inf, 0.0)


def relevance(
    X,
    T,
    y,
    *,
    signal_var: float,
    lengthscale_space: float,
    lengthscale_time: float,
    noise_var: float,
    space_kernel: str = "matern52",
    time_kernel: str = "matern32",
    t_now: float,
    normalise: bool = True,
    clamp_space: bool = True,
    precision: np.ndarray | None = None,
    convolution: np.ndarray | None = None,
    work: WorkCounter | None = None,
) -> np.ndarray:
    """W-DBO relevance ``R_i`` of every observation (eq. (12)), shape ``(n,)``, O(n^3) total.

    ``R_i = sqrt(W^2_i / W^2_prior)`` with the bounds of :func:`relevance_terms`; with
    ``normalise=False`` it is ``sqrt(W^2_i)`` (eq. (10) alone, in the units of y). Inputs: ``X``
    (n, d) in ``[0, 1]^d``, ``T`` (n,) in seconds, ``y`` (n,) standardised (the criterion assumes
    a zero prior mean); the prior covariance is ``signal_var * kS(|x - x'| / lengthscale_space) *
    kT(|t - t'| / lengthscale_time)``. ``noise_var`` must be > 0; the reference floors it at 1e-5,
    which callers should do themselves if they want that. The smaller ``R_i``, the less removing
    ``o_i`` changes the future predictions. ``precision`` and ``convolution``: trusted matrices
    for exactly these inputs (see :func:`relevance_terms`).
    """
    terms = relevance_terms(
        X,
        T,
        y,
        signal_var=signal_var,
        lengthscale_space=lengthscale_space,
        lengthscale_time=lengthscale_time,
        noise_var=noise_var,
        space_kernel=space_kernel,
        time_kernel=time_kernel,
        t_now=t_now,
        clamp_space=clamp_space,
        precision=precision,
        convolution=convolution,
        work=work,
    )
    return _ratio(terms, normalise)


# ---------------------------------------------------------------------------------------------
# references for tests and studies
# ---------------------------------------------------------------------------------------------
def _box_space_matrix(X: np.ndarray, name: str, ls: float, n_points: int) -> np.ndarray:
    """``integral_{[0,1]^d} kS(x - x_j) kS(x - x_k) dx`` by tensor Gauss-Legendre quadrature."""
    d = X.shape[1]
    nodes, weights = np.polynomial.legendre.leggauss(n_points)
    nodes, weights = 0.5 * (nodes + 1.0), 0.5 * weights
    grid = np.stack(np.meshgrid(*([nodes] * d), indexing="ij"), axis=-1).reshape(-1, d)
    w = np.prod(np.stack(np.meshgrid(*([weights] * d), indexing="ij"), axis=-1), axis=-1)
    phi = correlation(name, cdist(grid, X) / ls)
    return phi.T @ (w.reshape(-1, 1) * phi)


def relevance_bruteforce(
    X,
    T,
    y,
    *,
    signal_var: float,
    lengthscale_space: float,
    lengthscale_time: float,
    noise_var: float,
    space_kernel: str = "matern52",
    time_kernel: str = "matern32",
    t_now: float,
    normalise: bool = True,
    clamp_space: bool = True,
    domain: str = "R^d",
    n_space_points: int = 24,
) -> np.ndarray:
    """The same relevance, by removing each observation and recomputing the posterior (O(n^4)).

    For every i it inverts ``Delta`` without row/column i from scratch and integrates the
    *differences of the two posteriors* (mean weights ``alpha_D - alpha_{D\\i}`` and precision
    ``P_D - P_{D\\i}``, zero-padded) against the convolution matrix; no downdate identity is used.
    ``domain="R^d"`` uses the closed-form space convolution (capped at 1 with ``clamp_space``),
    as :func:`relevance` does. ``domain="box"`` integrates space over ``[0, 1]^d`` instead, by
    tensor Gauss-Legendre with ``n_space_points`` per dimension (for study: slow in high d and
    only algebraically convergent for Matérn kernels, whose products have kinks at the data).
    """
    if domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r}; valid choices: {', '.join(DOMAINS)}")
    lam = _positive("signal_var", signal_var)
    ls_s = _positive("lengthscale_space", lengthscale_space)
    ls_t = _positive("lengthscale_time", lengthscale_time)
    noise = _positive("noise_var", noise_var)
    t_now = _finite("t_now", t_now)
    data = _check_data(X, T, y)
    n = data.X.shape[0]
    K = _prior_covariance(data, lam, ls_s, ls_t, space_kernel, time_kernel)
    delta = K + noise * np.eye(n)
    if domain == "R^d":
        C = convolution_matrix(
            data.X,
            data.T,
            lengthscale_space=ls_s,
            lengthscale_time=ls_t,
            space_kernel=space_kernel,
            time_kernel=time_kernel,
            t_now=t_now,
            clamp_space=clamp_space,
        )
    else:
        space = _box_space_matrix(data.X, space_kernel, ls_s, n_space_points)
        time = time_convolution(time_kernel, ls_t, data.T[:, None], data.T[None, :], t_now)
        C = space * time
    P = np.linalg.inv(delta)
    alpha = P @ data.y
    removal = np.empty(n)
    for i in range(n):
        keep = np.arange(n) != i
        P_red = np.zeros((n, n))
        P_red[np.ix_(keep, keep)] = np.linalg.inv(delta[np.ix_(keep, keep)])
        alpha_red = P_red @ data.y
        mean_diff = alpha - alpha_red  # mu_D - mu_{D\i} = k_z^T (alpha - alpha_red)
        # sigma2_{D\i} - sigma2_D = k_z^T (P - P_red) k_z, >= 0 at every z (conditioning on more
        # data never increases the variance), so its absolute value integrates to this trace.
        var_gain = P - P_red
        removal[i] = lam * lam * (mean_diff @ C @ mean_diff + np.sum(var_gain * C))
    prior = lam * lam * (float(alpha @ C @ alpha) + float(np.sum(P * C)))
    return _ratio(RelevanceTerms(removal=np.maximum(removal, 0.0), prior=prior), normalise)


def integrated_w2_quadrature(
    X,
    T,
    y,
    i: int,
    *,
    signal_var: float,
    lengthscale_space: float,
    lengthscale_time: float,
    noise_var: float,
    space_kernel: str = "matern52",
    time_kernel: str = "matern32",
    t_now: float,
    t_end: float,
    space_bounds: tuple[float, float] = (0.0, 1.0),
    n_points: int = 16,
    n_time_points: int = 32,
    squared: bool = False,
    normalise: bool = False,
    chunk_points: int = 65_536,
) -> float:
    """Exact integrated W2 between ``GP_D`` and ``GP_{D\\i}`` on a box, by quadrature (for study).

    Integrates ``(mu_D - mu_{D\\i})^2 + (sigma_D - sigma_{D\\i})^2`` (the true squared W2 between
    the Gaussian marginals of the latent f, eq. (7)) over ``space_bounds^d x [t_now, t_end]`` with
    tensor Gauss-Legendre: ``n_points`` nodes per spatial dimension and ``n_time_points`` in time.
    Returns the W2 distance (eq. (8)), or its square with ``squared=True``. With ``normalise`` it
    is divided by the same distance between ``GP_D`` and the prior (eq. (9)), so it is the exact
    version of what :func:`relevance` bounds. Expensive: ``n_points^d * n_time_points`` posterior
    evaluations (processed in chunks of ``chunk_points``). Accuracy: spectral for the RBF, only
    algebraic for Matérn kernels across the kinks at the data; keep ``t_end - t_now`` within a few
    ``lengthscale_time`` or raise ``n_time_points``.
    """
    lam = _positive("signal_var", signal_var)
    ls_s = _positive("lengthscale_space", lengthscale_space)
    ls_t = _positive("lengthscale_time", lengthscale_time)
    noise = _positive("noise_var", noise_var)
    t_now = _finite("t_now", t_now)
    check_name(space_kernel)
    check_name(time_kernel)
    data = _check_data(X, T, y)
    n, d = data.X.shape
    if not 0 <= int(i) < n:
        raise ValueError(f"observation index i={i!r} out of range for n={n}")
    if not float(t_end) > float(t_now):
        raise ValueError(f"t_end={t_end!r} must exceed t_now={t_now!r}")
    lo, hi = map(float, space_bounds)
    if not hi > lo:
        raise ValueError(f"space_bounds must be (low, high) with high > low, got {space_bounds!r}")
    for label, count in (("n_points", n_points), ("n_time_points", n_time_points)):
        if int(count) < 1:
            raise ValueError(f"{label} must be >= 1, got {count!r}")

    K = _prior_covariance(data, lam, ls_s, ls_t, space_kernel, time_kernel)
    delta = K + noise * np.eye(n)
    keep = np.arange(n) != int(i)
    P_full = np.linalg.inv(delta)
    P_red = np.zeros((n, n))
    P_red[np.ix_(keep, keep)] = np.linalg.inv(delta[np.ix_(keep, keep)])
    a_full, a_red = P_full @ data.y, P_red @ data.y

    xs, xw = np.polynomial.legendre.leggauss(int(n_points))
    xs, xw = lo + (hi - lo) * 0.5 * (xs + 1.0), 0.5 * (hi - lo) * xw
    ts, tw = np.polynomial.legendre.leggauss(int(n_time_points))
    ts = float(t_now) + (float(t_end) - float(t_now)) * 0.5 * (ts + 1.0)
    tw = 0.5 * (float(t_end) - float(t_now)) * tw
    kt = correlation(time_kernel, np.abs(ts[:, None] - data.T[None, :]) / ls_t)  # (Mt, n)

    total_space = int(n_points) ** d
    per_chunk = max(1, int(chunk_points) // max(1, ts.size))
    removal = 0.0
    prior = 0.0
    for start in range(0, total_space, per_chunk):
        flat = np.arange(start, min(total_space, start + per_chunk))
        idx = np.unravel_index(flat, (int(n_points),) * d)
        pts = np.stack([xs[k] for k in idx], axis=-1)
        w_space = np.prod(np.stack([xw[k] for k in idx], axis=-1), axis=-1)
        ks = correlation(space_kernel, cdist(pts, data.X) / ls_s)  # (Ms, n)
        kz = lam * ks[:, None, :] * kt[None, :, :]  # (Ms, Mt, n)
        w = w_space[:, None] * tw[None, :]
        mu_f, mu_r = kz @ a_full, kz @ a_red
        sd_f = np.sqrt(np.maximum(lam - np.einsum("abj,jk,abk->ab", kz, P_full, kz), 0.0))
        sd_r = np.sqrt(np.maximum(lam - np.einsum("abj,jk,abk->ab", kz, P_red, kz), 0.0))
        removal += float(np.sum(w * ((mu_f - mu_r) ** 2 + (sd_f - sd_r) ** 2)))
        prior += float(np.sum(w * (mu_f**2 + (math.sqrt(lam) - sd_f) ** 2)))
    value = removal / prior if normalise else removal
    if normalise and prior <= 0.0:
        value = 0.0 if removal <= 0.0 else math.inf
    return value if squared else math.sqrt(value)
