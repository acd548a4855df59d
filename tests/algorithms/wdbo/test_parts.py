"""W-DBO and the W2 removal rule: the least relevant observation goes, within the budget."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tvbo
from tvbo.algorithms import ProblemInfo, make
from tvbo.algorithms.wdbo.parts import W2Relevance, WDBOBudget, spatiotemporal_gp
from tvbo.algorithms.wdbo.relevance import relevance, relevance_bruteforce
from tvbo.gp.kernels import Correlation, Hyperparameters
from tvbo.work import WorkCounter

FAST_ACQ = {"acquisition": {"n_restarts": 2, "raw_samples": 64}}
L_T = 5.0


def _fixed_lt(value=L_T):
    return {"surrogate": {"bounds": {"lengthscale_time": [value, value]}}}


def _setup(alg, d=2, seed=0):
    clock = {"now": 0.0}
    alg.setup(
        ProblemInfo(d=d), np.random.default_rng(seed), WorkCounter(), clock=lambda: clock["now"]
    )
    return clock


def _objective(x, t):
    return float(np.sin(5.0 * x[0] + t / 4.0) + np.cos(3.0 * x[-1] - t / 7.0))


def _drive(alg, n_iter, *, d=2, warmup=15, step=1.0, seed=0, before_remove=None, setup=True):
    """Run the composed algorithm on a synthetic clock (``step`` seconds per iteration)."""
    rng = np.random.default_rng(seed)
    clock = _setup(alg, d=d, seed=seed) if setup else {"now": 0.0}
    if before_remove is not None:
        original = alg.editor.remove  # the one way a policy removes (DatasetEditor)

        def spy(i):
            before_remove(alg, i, clock["now"])
            original(i)

        alg.editor.remove = spy
    for k in range(n_iter):
        warm = k < warmup
        t = clock["now"]
        x = rng.uniform(size=d) if warm else alg.propose(t)
        y = _objective(x, t) + rng.normal(0.0, 0.05)
        clock["now"] = t + step
        alg.ingest(x, t, y, now=clock["now"], warmup=warm)
    return clock


def _bruteforce(gp, now, noise_floor=1e-5):
    hp = gp.hyperparameters
    return relevance_bruteforce(
        gp.X,
        gp.T,
        gp.y_standardized,
        signal_var=hp.signal_var,
        lengthscale_space=hp.lengthscale_space,
        lengthscale_time=hp.lengthscale_time,
        noise_var=max(hp.noise_var, noise_floor),
        space_kernel=gp.kernel.space.name,
        time_kernel=gp.kernel.time.name,
        t_now=now,
    )


# ------------------------------------------------------------------------------------------------
# the W2 removal rule
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("noise_var", "floor"), [(0.02, 1e-5), (1e-8, 1e-5), (1e-4, 0.1)])
def test_w2_scores_match_the_bruteforce_relevance(noise_var, floor):
    """Against removing each point and recomputing the posterior; below the noise floor the
    criterion uses the floored noise, not the GP's."""
    alg = make("w-dbo", removal={"noise_floor": floor}, **FAST_ACQ)
    _setup(alg)
    rng = np.random.default_rng(3)
    for k in range(12):
        x = rng.uniform(size=2)
        alg.surrogate.append(x, float(k), _objective(x, k))
    gp = alg.surrogate.gp
    gp.set_hyperparameters(Hyperparameters(1.3, 0.3, 6.0, noise_var))
    scores = alg.removal.scores(alg.surrogate, 14.0)
    expected = _bruteforce(gp, 14.0, noise_floor=floor)
    assert scores == pytest.approx(expected, rel=1e-6)
    i, score = alg.removal.choose(alg.surrogate, 14.0)
    assert i == int(np.argmin(expected)) and score == pytest.approx(expected.min(), rel=1e-6)
    assert alg.removal.state()["w2_min_relevance"] == pytest.approx(expected.min(), rel=1e-6)
    if floor >= 0.1:  # a floor far above the fitted noise changes the criterion visibly
        raw = _bruteforce(gp, 14.0, noise_floor=0.0)
        assert np.max(np.abs(raw / expected - 1.0)) > 0.05


def test_w2_reuses_the_convolution_within_a_pass_bit_for_bit(monkeypatch):
    """Within one cleaning (same lengthscales and t_now) the rule reuses the previous pass's
    convolution matrix without the removed row and column; the scores are bit-identical to a
    fresh computation, and anything else (new t_now, changed lengthscales) recomputes it."""
    import tvbo.algorithms.wdbo.parts as wdbo_module

    alg = make("w-dbo", **FAST_ACQ)
    _setup(alg)
    rng = np.random.default_rng(5)
    for k in range(14):
        x = rng.uniform(size=2)
        alg.surrogate.append(x, float(k), _objective(x, k))
    gp = alg.surrogate.gp
    gp.set_hyperparameters(Hyperparameters(1.3, 0.3, 6.0, 0.02))
    calls = []
    real = wdbo_module.convolution_matrix
    monkeypatch.setattr(
        wdbo_module, "convolution_matrix", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    rule = alg.removal
    steps = [(15.0, 3, None), (15.0, 0, None), (15.0, 9, None), (16.0, 2, None),
             (16.0, None, Hyperparameters(1.3, 0.25, 6.0, 0.02))]
    expected_calls = [1, 1, 1, 2, 3]
    for (now, remove, new_hp), n_calls in zip(steps, expected_calls, strict=True):
        if new_hp is not None:
            gp.set_hyperparameters(new_hp)
        scores = rule.scores(alg.surrogate, now)
        hp = gp.hyperparameters
        fresh = relevance(
            gp.X, gp.T, gp.y_standardized, signal_var=hp.signal_var,
            lengthscale_space=hp.lengthscale_space, lengthscale_time=hp.lengthscale_time,
            noise_var=hp.noise_var, space_kernel=gp.kernel.space.name,
            time_kernel=gp.kernel.time.name, t_now=now, precision=gp.precision_matrix(),
        )
        assert scores.tobytes() == fresh.tobytes()
        assert len(calls) == n_calls
        if remove is not None:
            alg.surrogate.remove(remove)
    assert _w2_removed_row_cases()


def _w2_removed_row_cases() -> bool:
    from tvbo.algorithms.wdbo.parts import _removed_row

    X = np.arange(12.0).reshape(6, 2)
    T = np.arange(6.0)
    for i in range(6):
        assert _removed_row(X, T, np.delete(X, i, axis=0), np.delete(T, i)) == i
    assert _removed_row(X, T, X, T) is None  # nothing removed
    assert _removed_row(X, T, X[[0, 2, 1, 3, 4]], T[[0, 2, 1, 3, 4]]) is None  # reordered
    moved = np.delete(X, 2, axis=0)
    moved[3, 1] += 1e-12
    assert _removed_row(X, T, moved, np.delete(T, 2)) is None  # changed data
    return True


# ------------------------------------------------------------------------------------------------
# the budget policy
# ------------------------------------------------------------------------------------------------
def test_wdbo_removes_the_least_relevant_within_its_budget():
    alg = make("w-dbo-reference", **FAST_ACQ, **_fixed_lt())
    seen = []
    consumed = {"log": 0.0}

    def check(alg, i, now):
        expected = _bruteforce(alg.surrogate.gp, now)
        assert i == int(np.argmin(expected))
        consumed["log"] += math.log1p(expected[i])
        # the budget identity: prod (1 + R_i) <= (1 + alpha) ** (elapsed / l_T)
        elapsed = now - first_clean["now"]
        assert consumed["log"] <= elapsed / L_T * math.log1p(0.25) + 1e-9
        seen.append(i)

    first_clean = {"now": 16.0}  # the first post-warm-up cleaning: ingest of iteration 15
    _drive(alg, 45, before_remove=check)
    policy = alg.dataset
    assert len(seen) >= 3  # the test exercised removals
    assert len(policy.removals) == len(seen)
    assert policy.exponent == pytest.approx((45.0 - first_clean["now"]) / L_T)
    product = sum(math.log1p(r) for _, r in policy.removals)
    assert product <= policy.exponent * math.log1p(0.25) + 1e-9
    assert policy.budget == pytest.approx(math.exp(policy.exponent * math.log1p(0.25) - product))
    # nothing was affordable when cleaning stopped: budget <= 1 + least relevance
    assert policy.budget <= 1.0 + alg.removal.scores(alg.surrogate, 45.0).min()


def test_larger_alpha_removes_more_and_the_floor_holds():
    sizes = {}
    for alpha in (0.25, 1e6):
        alg = make(
            "w-dbo-reference", **FAST_ACQ, **_fixed_lt(), dataset={"alpha": alpha, "floor": 4}
        )
        _drive(alg, 30)
        sizes[alpha] = alg.dataset_size()
    assert sizes[1e6] == 4 < sizes[0.25]


def test_no_cleaning_during_warmup():
    alg = make("w-dbo-reference", **FAST_ACQ, **_fixed_lt(1.0), dataset={"alpha": 1e6})
    _drive(alg, 15)
    assert alg.dataset_size() == 15 and alg.dataset.budget == 1.0


def test_refit_after_removal_refits_once_per_removal():
    alg = make("w-dbo-reference", **FAST_ACQ, **_fixed_lt(), dataset={"refit_after_removal": True})
    _setup(alg)
    calls = {"n": 0}
    original = alg.surrogate.fit

    def counting_fit():
        calls["n"] += 1
        original()

    alg.surrogate.fit = counting_fit
    _drive(alg, 35, setup=False)
    removals = len(alg.dataset.removals)
    assert removals > 0
    ingest_fits = 35 - 15
    propose_fits = 1  # the first query after warm-up fits on the 15 warm-up points
    assert calls["n"] == ingest_fits + propose_fits + removals


def test_wdbo_runs_end_to_end_and_records_its_state():
    ds = tvbo.simulate(
        "eggholder",
        "w-dbo",
        seed=0,
        horizon=2.0,
        compute="polynomial",
        polynomial=[0.0],
        algorithm_options=FAST_ACQ,
    )
    for key in (
        "wdbo_budget",
        "wdbo_budget_exponent",
        "wdbo_removed",
        "wdbo_removed_relevance",
        "w2_min_relevance",
    ):
        assert f"state_{key}" in ds
    assert np.all(ds["state_wdbo_budget"].values >= 1.0 - 1e-12)
    warm = ds["is_warmup"].values.astype(bool)
    assert ds["dataset_size"].values[~warm].min() >= 2


# ------------------------------------------------------------------------------------------------
# errors
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cls", "options", "match"),
    [
        (WDBOBudget, {"alpha": 0.0}, "alpha must be a finite number > 0"),
        (WDBOBudget, {"alpha": -1.0}, "alpha"),
        (WDBOBudget, {"alpha": math.nan}, "alpha"),
        (WDBOBudget, {"floor": 0}, "floor must be an integer >= 1"),
        (WDBOBudget, {"floor": 2.5}, "floor"),
        (W2Relevance, {"noise_floor": -1e-3}, "noise_floor"),
    ],
)
def test_bad_options_are_rejected(cls, options, match):
    with pytest.raises(ValueError, match=match):
        cls(**options)


def test_w2_needs_a_spatiotemporal_gp_with_a_closed_form():
    # a wrong composition is an error when the algorithm is built, before any run
    with pytest.raises(ValueError, match="spatio-temporal"):
        make("w2-spatial", preset="w-dbo", surrogate={"time_kernel": None})
    with pytest.raises(ValueError, match="removal rule 'w2' needs a spatio-temporal"):
        make("w2-keep", preset="w-dbo", dataset="keep-all", surrogate={"time_kernel": None})

    class Periodic(Correlation):
        name = "periodic"

    alg = make("w-dbo")
    _setup(alg)
    alg.surrogate.gp.kernel.time = Periodic()
    with pytest.raises(ValueError, match="'periodic' has no closed form.*matern12"):
        spatiotemporal_gp(alg.surrogate, "removal rule 'w2'")

    class NotAGP:
        kind = "weighted"

    with pytest.raises(ValueError, match="exact GP"):
        spatiotemporal_gp(NotAGP(), "removal rule 'w2'")


def test_budget_needs_a_removal_rule_and_names_are_checked():
    with pytest.raises(ValueError, match="'wdbo-budget' needs a removal rule"):
        make("w-dbo-norule", preset="w-dbo", removal=None)
    with pytest.raises(ValueError, match="unknown removal 'w3'; valid: .*w2"):
        make("x", preset="w-dbo", removal="w3")
    with pytest.raises(ValueError, match="unknown algorithm 'wdbo'; valid: .*w-dbo"):
        make("wdbo")


# ------------------------------------------------------------------------------------------------
# robustness safeguards (the ``w-dbo`` preset; ``w-dbo-reference`` is the faithful algorithm)
# ------------------------------------------------------------------------------------------------
def test_max_removals_caps_each_cleaning_and_the_budget_carries_over():
    cap = {"dataset": {"alpha": 1e6, "max_removals": 2}}
    alg = make("w-dbo-reference", **FAST_ACQ, **_fixed_lt(), **cap)
    per_clean = []
    original = alg.dataset.after_fit

    def spy(*, now, warmup):
        original(now=now, warmup=warmup)
        per_clean.append(alg.dataset.removed_last)

    alg.dataset.after_fit = spy
    _drive(alg, 20)
    assert max(per_clean) == 2  # the cap binds (alpha = 1e6 could afford everything)
    assert alg.dataset_size() == 20 - sum(per_clean) > 2
    # the cap, not the budget, stopped the last cleaning: the unspent budget is kept
    assert alg.dataset.budget > 1.0 + alg.removal.scores(alg.surrogate, 20.0).min()
    free = make("w-dbo-reference", **FAST_ACQ, **_fixed_lt(), dataset={"alpha": 1e6})
    _drive(free, 20)
    assert free.dataset_size() == 2  # without the cap one cleaning empties to the floor


def test_min_fit_size_keeps_the_last_fit():
    alg = make("w-dbo-reference", **FAST_ACQ, surrogate={"min_fit_size": 40})
    _drive(alg, 20)
    hp = alg.surrogate.hyperparameters
    assert (hp.lengthscale_space, hp.noise_var) == (0.2, 0.01)  # never fitted: the initial values
    fitted = make("w-dbo-reference", **FAST_ACQ, surrogate={"min_fit_size": 2})
    _drive(fitted, 20)
    assert fitted.surrogate.hyperparameters.lengthscale_space != 0.2


def test_elapsed_temporal_prior_is_centred_on_the_time_since_the_first_observation():
    sharp = {"lengthscale_time": ("elapsed", 1e-3)}
    alg = make("w-dbo-reference", **FAST_ACQ, surrogate={"prior": sharp})
    clock = _drive(alg, 20, step=3.0)
    # the last fit ran in the last ingest, at clock 60 s; the first observation was at t = 0
    assert clock["now"] == 60.0
    assert alg.surrogate.hyperparameters.lengthscale_time == pytest.approx(60.0, rel=1e-2)


def test_robust_preset_never_collapses_where_the_reference_does():
    """Hartmann-3, seed 2 (the diagnosed case): the faithful algorithm's ML fit makes every old
    point irrelevant and one cleaning leaves 2 points for good; the robust preset keeps some."""
    runs = {
        name: tvbo.simulate("hartmann3", name, seed=2).squeeze()
        for name in ("w-dbo-reference", "w-dbo")
    }
    post = {
        name: ds["dataset_size"].values[ds["is_warmup"].values == 0] for name, ds in runs.items()
    }
    assert post["w-dbo-reference"].min() == 2  # the hard case really is hard
    assert post["w-dbo"].min() >= 5
    assert "state_lengthscale_time" in runs["w-dbo"]


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"dataset": {"max_removals": 0}}, "max_removals must be None or an integer >= 1"),
        ({"dataset": {"max_removals": 1.5}}, "max_removals"),
        ({"surrogate": {"min_fit_size": 1}}, "min_fit_size must be an integer >= 2"),
        ({"surrogate": {"prior": {"lengthscale": (1.0, 1.0)}}}, "valid: signal_var"),
        ({"surrogate": {"prior": {"noise_var": ("elapsed", 1.0)}}}, "must be a pair"),
        ({"surrogate": {"prior": {"noise_var": 0.1}}}, "must be a pair .median, log_sd."),
    ],
)
def test_bad_safeguard_options_are_rejected(options, match):
    with pytest.raises(ValueError, match=match):
        make("w-dbo", **options)
