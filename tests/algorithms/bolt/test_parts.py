"""BOLT (both versions): the response-time regression, n* from the clock, the cap on |D|."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import lsq_linear

import tvbo
from tvbo.algorithms import ProblemInfo, make
from tvbo.algorithms.bolt.parts import BoltNStar, fit_response_time
from tvbo.analysis.nstar import cubic_response_time, nstar, temporal_correlation
from tvbo.work import WorkCounter

FIXED_LT = {"surrogate": {"bounds": {"lengthscale_time": [30.0, 30.0]}}}
FAST_ACQ = {"acquisition": {"n_restarts": 2, "raw_samples": 64}}
EGGHOLDER_COST = 0.05


def _opts(**extra):
    out = {**FIXED_LT, **FAST_ACQ}
    out.update(extra)
    return out


def _simulate(algorithm, *, poly, speed=1.0, horizon=30.0, **algorithm_options):
    return tvbo.simulate(
        "eggholder",
        algorithm,
        seed=0,
        horizon=horizon,
        compute="polynomial",
        polynomial=poly,
        speed=speed,
        algorithm_options=algorithm_options or None,
    )


def _state(ds, key):
    return ds[f"state_{key}"].values.ravel()


# ------------------------------------------------------------------------------------------------
# the response-time regression
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "coeffs", [(0.05, 0.0, 0.0, 1e-5), (0.3, 2e-3, 1e-4, 2e-7), (1.0, 0.0, 0.0, 0.0)]
)
def test_regression_recovers_exact_cubic_data(coeffs):
    n = np.repeat(np.arange(15, 60), 2)
    r = cubic_response_time(coeffs)
    times = np.array([r(int(k)) for k in n])
    got = fit_response_time(n, times)
    assert np.all(got >= 0)
    assert got == pytest.approx(np.asarray(coeffs), rel=1e-6, abs=1e-12)


def test_regression_is_the_nonnegative_least_squares_solution():
    """Against an independent bounded least-squares solver, on data whose unconstrained cubic
    fit has negative coefficients (a decreasing, noisy R)."""
    rng = np.random.default_rng(1)
    n = rng.integers(10, 80, size=60).astype(float)
    times = 2.0 - 0.01 * n + 1e-6 * n**3 + rng.normal(0.0, 0.05, n.size)
    A = n[:, None] ** np.arange(4)[None, :]
    unconstrained = np.linalg.lstsq(A, times, rcond=None)[0]
    assert np.any(unconstrained < 0)
    got = fit_response_time(n, times)
    assert np.all(got >= 0)
    scale = n.max() ** np.arange(4)
    reference = lsq_linear(A / scale, times, bounds=(0.0, np.inf), tol=1e-14).x / scale
    assert np.sum((A @ got - times) ** 2) == pytest.approx(
        np.sum((A @ reference - times) ** 2), rel=1e-8
    )
    R = cubic_response_time(got)
    assert all(R(k + 1) >= R(k) > 0 for k in range(0, 200))


def test_regression_rejects_bad_input():
    with pytest.raises(ValueError, match="equal length"):
        fit_response_time([1, 2], [1.0])
    with pytest.raises(ValueError, match="non-empty"):
        fit_response_time([], [])
    with pytest.raises(ValueError, match=">= 0"):
        fit_response_time([-1, 2], [1.0, 2.0])


# ------------------------------------------------------------------------------------------------
# metronome: R measured on the clock
# ------------------------------------------------------------------------------------------------
def _drive(alg, n_iter, response, *, warmup=15, seed=0, track=None):
    """A hand-made engine: each iteration lasts ``response(|D| at its start)`` seconds; returns
    the (size at the start, duration) of each iteration and the sizes after each ingest."""
    rng = np.random.default_rng(seed)
    clock = {"now": 0.0}
    alg.setup(
        ProblemInfo(d=1), np.random.default_rng(seed), WorkCounter(), clock=lambda: clock["now"]
    )
    intervals, sizes = [], []
    for k in range(n_iter):
        warm = k < warmup
        start_size = alg.dataset_size()
        t0 = clock["now"]
        x = rng.uniform(size=1) if warm else alg.propose(t0)
        duration = response(start_size)
        clock["now"] = t0 + 0.5 * duration  # sample after the "propose" part
        t_sample = clock["now"]
        y = float(np.sin(6.0 * x[0] + t_sample / 10.0))
        clock["now"] = t0 + duration  # everything else charged before the ingest returns
        alg.ingest(x, t_sample, y, now=clock["now"], warmup=warm)
        intervals.append((start_size, duration))
        sizes.append(alg.dataset_size())
        if track is not None:
            track.append(alg.dataset.n_star)
    return intervals, sizes


def test_metronome_records_clock_intervals_labelled_by_size_and_skips_warmup():
    alg = make("bolt", **_opts())
    intervals, _ = _drive(alg, 24, lambda n: 1.0 + 0.01 * n)
    policy = alg.dataset
    # clock reads at the end of iterations 15, 16, ...: the first read after warm-up only opens
    # an interval; each interval is one iteration, labelled by |D| at its start
    assert policy.sizes == [s for s, _ in intervals[16:]]
    assert policy.times == pytest.approx([r for _, r in intervals[16:]])


def test_metronome_nstar_follows_the_fitted_response_time():
    coeffs = (0.5, 0.0, 0.0, 5e-5)
    alg = make("bolt", **_opts())
    _, sizes = _drive(alg, 40, cubic_response_time(coeffs))
    policy = alg.dataset
    assert policy.coefficients == pytest.approx(coeffs, rel=1e-6, abs=1e-12)
    expected = nstar(temporal_correlation("matern32", 30.0), cubic_response_time(coeffs))
    assert policy.n_star == expected < 40
    assert max(sizes[-5:]) == expected


def test_nothing_is_removed_before_four_distinct_sizes():
    alg = make("bolt", **_opts())
    # R so steep that n* is tiny: removal would start as soon as n* exists
    _, sizes = _drive(alg, 21, lambda n: 1.0 + 1e-2 * n**3)
    # 15 warm-up points, then 16..19: the regression has 16, 17, 18 -- three distinct sizes
    assert sizes[:19] == list(range(1, 20))
    assert alg.dataset.n_star is not None and alg.dataset.n_star < 10
    assert sizes[19:] == [19, 19]  # n* known from the 20th iteration on: one removal each


@pytest.mark.parametrize(("speed", "expected_smaller"), [(1.0, False), (0.25, True)])
def test_nstar_from_the_polynomial_compute_model_matches_nstar(speed, expected_smaller):
    poly = [0.0, 0.0, 0.0, 1e-5]
    ds = _simulate("bolt", poly=poly, speed=speed, **_opts())
    true_R = cubic_response_time([EGGHOLDER_COST] + [a / speed for a in poly[1:]])
    expected = nstar(temporal_correlation("matern32", 30.0), true_R)
    n_star = _state(ds, "bolt_nstar")
    assert n_star[-1] == expected
    assert _state(ds, "bolt_R_c3")[-1] == pytest.approx(1e-5 / speed, rel=1e-6)
    size = ds["dataset_size"].values.ravel()
    known = np.isfinite(n_star)
    assert np.all(size[known] <= n_star[known] + 1)
    assert size[-1] == expected
    assert (expected < 34) == expected_smaller  # 34 = n* at speed 1


@pytest.mark.slow
def test_slower_hardware_gives_smaller_nstar_with_the_counted_model():
    """The same problem on 10x slower (counted) hardware: larger R(n), smaller n* (~30 s).

    With only a few seconds of history the cubic is fitted on a narrow range of sizes and n* is
    dominated by regression noise, so this needs a horizon of tens of seconds."""
    kwargs = dict(seed=0, horizon=30.0, compute="counted", algorithm_options=_opts())
    fast = tvbo.simulate("eggholder", "bolt", speed=1.0, **kwargs)
    slow = tvbo.simulate("eggholder", "bolt", speed=0.1, **kwargs)
    n_fast, n_slow = _state(fast, "bolt_nstar")[-1], _state(slow, "bolt_nstar")[-1]
    assert np.isfinite(n_slow) and np.isfinite(n_fast)
    assert n_slow < n_fast
    c_fast = [_state(fast, f"bolt_R_c{j}")[-1] for j in range(4)]
    c_slow = [_state(slow, f"bolt_R_c{j}")[-1] for j in range(4)]
    sizes = np.arange(20, 400)
    assert np.all(np.polyval(c_slow[::-1], sizes) > np.polyval(c_fast[::-1], sizes))


# ------------------------------------------------------------------------------------------------
# icml: R given, n* once
# ------------------------------------------------------------------------------------------------
def test_icml_nstar_is_computed_once_from_the_given_response_time():
    response = [0.05, 0.0, 0.0, 1e-5]
    ds = _simulate("bolt-icml", poly=[0.0], horizon=6.0, response_time=response, **FAST_ACQ)
    n_star = _state(ds, "bolt_nstar")
    warm = ds["is_warmup"].values.ravel().astype(bool)
    assert np.all(np.isnan(n_star[warm]))
    post = n_star[~warm]
    assert np.all(post == post[0])
    l_T = _state(ds, "lengthscale_time")[~warm][0]  # fitted before n* was computed
    assert post[0] == nstar(temporal_correlation("matern32", l_T), cubic_response_time(response))
    assert not np.allclose(_state(ds, "lengthscale_time")[~warm], l_T)  # l_T moved, n* did not


def test_icml_without_response_time_freezes_the_first_estimate():
    """R drifts upwards over time: the metronome version follows it, the icml one must not."""

    def drifting():
        calls = iter(range(1, 1000))
        return lambda n: 0.5 + 0.05 * next(calls) + 1e-4 * n**3

    tracks = {}
    for name in ("bolt-icml", "bolt"):
        tracks[name] = []
        _drive(make(name, **_opts()), 45, drifting(), track=tracks[name])
    icml = [v for v in tracks["bolt-icml"] if v is not None]
    metronome = [v for v in tracks["bolt"] if v is not None]
    assert len(icml) > 20 and len(set(icml)) == 1
    assert len(set(metronome)) > 1


# ------------------------------------------------------------------------------------------------
# removals, ablation, errors
# ------------------------------------------------------------------------------------------------
def test_at_most_one_removal_per_iteration_unless_asked():
    response = lambda n: 1.0 + 1e-3 * n**3  # noqa: E731
    one = make("bolt", **_opts())
    _, sizes = _drive(one, 24, response)
    assert np.min(np.diff(sizes)) >= 0  # append + at most one removal: never shrinks
    many = make("bolt", **_opts(dataset={"max_removals": None}))
    _, sizes_many = _drive(many, 24, response)
    assert sizes_many[-1] == max(many.dataset.n_star, 2)
    assert sizes_many[-1] < sizes[-1]


def test_fifo_ablation_keeps_the_most_recent_observations():
    alg = make("bolt-fifo", preset="bolt", removal="oldest", **_opts())
    ds = _simulate(alg, poly=[0.0, 0.0, 0.0, 4e-5], horizon=20.0)
    n = alg.dataset_size()
    assert _state(ds, "removed_total")[-1] > 0
    assert np.sort(alg.surrogate.T) == pytest.approx(ds["t_sample"].values.ravel()[-n:])


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"version": "weekly"}, "valid: metronome, icml"),
        ({"initial_guess": "zero"}, "valid: previous, size"),
        ({"response_time": [0.1, 0, 0, 1e-6]}, "version 'icml' only"),
        ({"version": "icml", "response_time": [0.1, -1.0]}, ">= 0"),
        ({"version": "icml", "response_time": [0.0, 0.0]}, r"R\(1\) <= 0"),
        ({"n_max": 0}, "n_max"),
        ({"max_removals": 0}, "max_removals"),
        ({"min_points": 0}, "min_points"),
        ({"floor": 0}, "floor"),
    ],
)
def test_bad_options_are_rejected(options, match):
    with pytest.raises(ValueError, match=match):
        BoltNStar(**options)


def test_bad_compositions_are_rejected():
    with pytest.raises(ValueError, match="unknown algorithm 'bolt-xyz'; valid: .*bolt"):
        make("bolt-xyz")
    # wrong compositions are errors when the algorithm is built, before any run
    with pytest.raises(ValueError, match="spatio-temporal"):
        make("bolt-spatial", preset="bolt", surrogate={"time_kernel": None})
    with pytest.raises(ValueError, match="needs a removal rule"):
        make("bolt-norule", preset="bolt", removal=None)
    with pytest.raises(ValueError, match="unknown dataset 'bolt'; valid: .*bolt-nstar"):
        make("x", preset="bolt", dataset="bolt")


def test_bolt_shares_the_robust_wdbo_surrogate_and_the_reference_keeps_plain_ml() -> None:
    """BOLT is W-DBO with another dataset policy: same surrogate, priors included."""
    from tvbo.algorithms import make
    from tvbo.algorithms.wdbo.declare import ROBUST_PRIOR

    wdbo = make("w-dbo").surrogate
    for name in ("bolt", "bolt-icml"):
        surrogate = make(name).surrogate
        assert dict(surrogate.prior) == dict(ROBUST_PRIOR) == dict(wdbo.prior)
    reference = make("bolt-reference")
    assert not reference.surrogate.prior
    assert reference.dataset.kind == make("bolt").dataset.kind == "bolt-nstar"
