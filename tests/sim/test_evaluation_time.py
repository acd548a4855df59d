"""Random evaluation times (``cost_cv``): Gamma durations with mean c, their own random stream,
and evaluations that finish out of order with k evaluators."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tvbo import simulate
from tvbo.runspec import check_run_options, option

RUN = dict(benchmark="hartmann3", algorithm="gp-ucb", horizon=40.0, cost=1.0, warmup=4,
           compute="counted", profile="botorch-i9-laptop")


def _v(ds, name: str) -> np.ndarray:
    """A per-iteration variable of a one-run Dataset as a flat array of its evaluated queries."""
    values = np.asarray(ds[name].values, float).reshape(-1)
    return values[np.isfinite(np.asarray(ds["t_available"].values, float).reshape(-1))]


def _durations(ds) -> np.ndarray:
    return _v(ds, "t_available") - _v(ds, "t_sample")


def test_no_spread_is_the_constant_cost_bit_for_bit() -> None:
    base = simulate(**RUN, seed=3, evaluators=2)
    for cv in (None, 0.0):
        ds = simulate(**RUN, seed=3, evaluators=2, cost_cv=cv)
        for name in base.data_vars:
            np.testing.assert_array_equal(ds[name].values, base[name].values, err_msg=name)
    assert np.allclose(_durations(base), 1.0)


def test_gamma_durations_have_mean_c_and_the_given_cv() -> None:
    """Pooled over seeds, the durations match the Gamma's moments (mean c, sd cv c); a
    one-sample KS test against Gamma(1/cv^2, c cv^2) does not reject it."""
    from scipy import stats

    cv, cost = 0.5, 1.0
    draws = np.concatenate([
        _durations(simulate(**{**RUN, "horizon": 60.0, "cost": cost}, seed=s, evaluators=4,
                            cost_cv=cv))
        for s in range(4)])
    assert len(draws) > 150 and np.all(draws > 0)
    assert abs(draws.mean() - cost) < 4 * cv * cost / np.sqrt(len(draws))
    assert abs(draws.std(ddof=1) / draws.mean() - cv) < 0.12
    shape = 1 / cv**2
    assert stats.kstest(draws, stats.gamma(shape, scale=cost / shape).cdf).pvalue > 1e-3


def test_with_k_evaluators_some_evaluations_finish_out_of_order() -> None:
    ds = simulate(**RUN, seed=1, evaluators=4, cost_cv=1.0)
    sampled = _v(ds, "t_sample")
    done = _v(ds, "t_available")
    order = np.argsort(sampled, kind="stable")
    assert np.any(np.diff(done[order]) < 0), "a later query must sometimes finish first"
    # completions are ingested in finish order
    ingested = _v(ds, "t_ingested")
    assert np.all(np.diff(ingested) >= 0)


def test_durations_have_their_own_stream() -> None:
    """Spreading the durations changes when things happen, not what the warm-up drew: the
    warm-up queries (uniform, from the warm-up stream) are the same points with or without."""
    a = simulate(**RUN, seed=5, evaluators=4)
    b = simulate(**RUN, seed=5, evaluators=4, cost_cv=0.8)
    def warm_points(ds) -> np.ndarray:
        x = np.asarray(ds["x"].values, float).reshape(-1, ds.sizes["dim"])
        warm = np.asarray(ds["is_warmup"].values).reshape(-1).astype(bool)
        return np.sort(x[warm], axis=0)

    np.testing.assert_array_equal(warm_points(a), warm_points(b))
    assert not np.array_equal(_durations(a), _durations(b))


def test_same_seed_same_run() -> None:
    a = simulate(**RUN, seed=2, cost_cv=0.3)
    b = simulate(**RUN, seed=2, cost_cv=0.3)
    for name in a.data_vars:
        np.testing.assert_array_equal(a[name].values, b[name].values, err_msg=name)
    assert json.loads(a.attrs["config_json"])["engine"]["cost_cv"] == 0.3


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), option("cost_cv").maximum * 1.5,
                                 "wide",
                                 True])
def test_bad_spread_is_refused(bad) -> None:
    with pytest.raises(ValueError, match="cost_cv"):
        check_run_options({"cost_cv": bad})
    with pytest.raises(ValueError, match="cost_cv"):
        simulate(**RUN, cost_cv=bad)
