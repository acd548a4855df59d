"""SparQ-GP-UCB (Mauduit, Berthier & Simonetto): injection, discarding, the expert on the virtual
clock, and the moving-bump benchmark (the M-DPP sampler: test_dpp.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tvbo
import tvbo.algorithms
import tvbo.benchmarks
from tvbo.algorithms import ProblemInfo, make
from tvbo.algorithms.composed import ComposedAlgorithm
from tvbo.algorithms.sparq.parts import (
    discard_threshold,
    injected_variance,
    kept_mask,
    n_expert_queries,
)
from tvbo.gp.exact import ExactGP
from tvbo.gp.kernels import Hyperparameters, SeparableKernel
from tvbo.work import WorkCounter

FAST = {"n_restarts": 4, "raw_samples": 64, "maxiter": 30, "fit_max_iter": 15, "mcmc_factor": 0.5}


def sparq_gp_ucb(**options) -> ComposedAlgorithm:
    """The preset ``sparq-gp-ucb`` with ``options`` (shortcuts routed to their parts)."""
    return make("sparq-gp-ucb", **options)




# -- the formulas ---------------------------------------------------------------------------
def test_injected_variance_follows_eq_10_and_the_drift_variant():
    ages = np.array([0.0, 1.0, 2.0, 7.0])
    assert injected_variance(ages, 0.01) == pytest.approx(0.01 * np.array([1, 2, 5, 50]))
    drift = injected_variance(ages, 0.01, injection="drift", drift=0.5)
    assert drift == pytest.approx(0.25 * ages**2 / 3 + 0.01)
    with pytest.raises(ValueError, match="valid: paper, drift"):
        injected_variance(ages, 0.01, injection="linear")


def test_discarding_keeps_the_ages_the_threshold_allows():
    # sigma^2 (a^2 + 1) <= sigma^2 ln t  <=>  a <= sqrt(ln t - 1) (spec §A.4.2 table)
    for t, kept_ages in (
        (2, []),
        (5, [0]),
        (8, [0, 1]),
        (148, [0, 1]),
        (149, [0, 1, 2]),
        (500, [0, 1, 2]),
    ):
        ages = np.arange(t, dtype=float)[::-1]  # oldest first, newest (age 0) last
        var = injected_variance(ages, 0.01)
        keep = kept_mask(var, discard_threshold(t, 0.01), keep_newest=False)
        assert sorted(ages[keep].astype(int).tolist()) == kept_ages, t
    # the guard keeps the fresh observation even when ln t < 1
    var = injected_variance(np.array([1.0, 0.0]), 0.01)
    assert kept_mask(var, discard_threshold(2, 0.01)).tolist() == [False, True]
    assert discard_threshold(100, 0.02, kind="power", exponent=0.2) == pytest.approx(
        0.02 * 100**0.2
    )
    assert discard_threshold(0.5, 0.01) == -math.inf


def test_number_of_expert_queries():
    assert n_expert_queries(500) == math.ceil(6 * math.log(500)) == 38
    assert n_expert_queries(1) == 0 and n_expert_queries(15, scale=2.0) == 6
    assert n_expert_queries(500, fixed=7) == 7


def test_algorithm_discards_by_age_in_steps():
    alg = sparq_gp_ucb(noise_var=0.01, **FAST)
    alg.setup(ProblemInfo(d=1), np.random.default_rng(0), WorkCounter())
    for i in range(10):
        alg.ingest(np.array([i / 10]), float(i), 1.0, now=float(i), warmup=True)
    # t = 10: ages 9..0; variances 0.01 (a^2 + 1); kept a <= sqrt(ln 10 - 1) = 1.14
    rule = alg.dataset
    assert rule.ages() == pytest.approx(np.arange(9, -1, -1))
    assert rule.injected() == pytest.approx(0.01 * (np.arange(9, -1, -1.0) ** 2 + 1))
    assert rule.kept().tolist() == [False] * 8 + [True, True]
    assert rule.threshold() == pytest.approx(0.01 * math.log(10))
    assert alg.dataset_size() == 2


def test_algorithm_ages_in_time_units():
    alg = sparq_gp_ucb(noise_var=0.01, age_unit="time", time_unit=2.0, **FAST)
    alg.setup(ProblemInfo(d=1), np.random.default_rng(0), WorkCounter())
    for t in (0.0, 3.0, 10.0):
        alg.ingest(np.array([0.5]), t, 1.0, now=t + 1, warmup=True)
    assert alg.dataset.ages(now=20.0) == pytest.approx([10.0, 8.5, 5.0])
    assert alg.dataset.current_t(20.0) == pytest.approx(10.0)


# -- the heteroscedastic posterior ------------------------------------------------------------
def test_heteroscedastic_posterior_matches_a_dense_solve_and_finite_differences():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(7, 2))
    y = rng.normal(size=7) + 3.0
    noise = rng.uniform(0.01, 0.5, size=7)
    hp = Hyperparameters(
        signal_var=1.7, lengthscale_space=0.3, lengthscale_time=None, noise_var=0.01
    )
    kern = SeparableKernel(space="rbf", time=None)
    # the heteroscedastic posterior is the exact GP with per-point noise (standardised units)
    gp = ExactGP(kern, hp)
    gp.set_standardization(3.0, 2.0)
    gp.set_data(X, None, y, noise=noise / 4.0)
    Xq = rng.uniform(size=(5, 2))

    def k(A, B):
        d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
        return 1.7 * np.exp(-0.5 * d2 / 0.09)

    C = k(X, X) + np.diag(noise / 4.0)
    ks = k(Xq, X)
    mean = 3.0 + 2.0 * ks @ np.linalg.solve(C, (y - 3.0) / 2.0)
    var = 4.0 * (1.7 - np.einsum("ij,ji->i", ks, np.linalg.solve(C, ks.T)))
    pred = gp.predict(Xq, None, grad=True)
    assert pred.mean == pytest.approx(mean, rel=1e-9)
    assert pred.var == pytest.approx(var, rel=1e-8)
    h = 1e-6
    for j in range(2):
        e = np.zeros(2)
        e[j] = h
        up, dn = gp.predict(Xq + e, None), gp.predict(Xq - e, None)
        assert pred.dmean[:, j] == pytest.approx((up.mean - dn.mean) / (2 * h), abs=1e-5)
        assert pred.dvar[:, j] == pytest.approx((up.var - dn.var) / (2 * h), abs=1e-5)
    # beta's log term: 1/2 log det(Sigma + K) - 1/2 log det(Sigma)
    gain = 0.5 * (np.linalg.slogdet(C)[1] - np.sum(np.log(noise / 4.0)))
    assert gp.information_gain() == pytest.approx(gain, rel=1e-10)


def test_paper_beta_is_theorem_3_1():
    alg = sparq_gp_ucb(noise_var=0.01, delta=0.05, rkhs_norm=0.5, **FAST)
    alg.setup(ProblemInfo(d=1), np.random.default_rng(0), WorkCounter())
    for i in range(6):
        alg.ingest(np.array([i / 6]), float(i), float(np.sin(i)), now=float(i), warmup=True)
    alg.ingest_side(np.array([[0.1], [0.9]]), np.zeros(2), np.array([0.3, -0.2]))
    post = alg.surrogate.condition()
    expected = math.sqrt(2 * math.log(2 / 0.05) + 2 * post.information_gain()) + 0.5
    assert alg.acquisition.root_beta(post) == pytest.approx(expected)
    wdbo = sparq_gp_ucb(beta="wdbo", **FAST)
    wdbo.setup(ProblemInfo(d=1), np.random.default_rng(0), WorkCounter())
    assert wdbo.acquisition.root_beta(post) == pytest.approx(math.sqrt(0.2 * math.log(2 * post.n)))


# -- the algorithm's side queries ----------------------------------------------------------------
def test_side_queries_are_distinct_past_inputs_of_size_q():
    alg = sparq_gp_ucb(**FAST)
    alg.setup(ProblemInfo(d=1), np.random.default_rng(0), WorkCounter())
    xs = np.random.default_rng(1).uniform(size=30)
    for i, x in enumerate(xs):
        alg.ingest(np.array([x]), float(i), 1.0, now=float(i), warmup=True)
    pts = alg.side_queries(30.0)
    assert pts.shape == (n_expert_queries(30), 1)
    assert len(np.unique(pts)) == len(pts)
    assert np.all(np.isin(pts[:, 0], xs))
    # duplicates in the history shrink the ground set; Q_t is capped at its size
    alg2 = sparq_gp_ucb(n_queries=10, **FAST)
    alg2.setup(ProblemInfo(d=1), np.random.default_rng(0), WorkCounter())
    for i in range(12):
        alg2.ingest(np.array([0.25 * (i % 3)]), float(i), 1.0, now=float(i), warmup=True)
    assert sorted(alg2.side_queries(12.0)[:, 0].tolist()) == [0.0, 0.25, 0.5]


def test_bad_options_are_rejected_with_valid_choices():
    with pytest.raises(ValueError, match="valid: step, time"):
        sparq_gp_ucb(age_unit="day")
    with pytest.raises(ValueError, match="valid: all, discarded"):
        sparq_gp_ucb(ground_set="recent")
    with pytest.raises(ValueError, match="query_scale"):
        sparq_gp_ucb(query_scale=0)
    with pytest.raises(ValueError, match="threshold_exponent"):
        sparq_gp_ucb(threshold="power", threshold_exponent=0.5)
    with pytest.raises(ValueError, match="delta"):
        sparq_gp_ucb(delta=1.5)
    with pytest.raises(ValueError, match="unknown algorithm 'sparq'"):
        tvbo.algorithms.make("sparq")


def _trapped(cold_start: bool) -> ComposedAlgorithm:
    """A SparQ whose warm start sits in the "everything is noise" optimum, on moving-bump data
    (the inputs of seed 2 of the paper study at step 19, where the run got trapped)."""
    z = np.array([-50.0, -49.6, -43.1, -37.2, -30.1, -24.6, -14.6, -6.0, -0.4, 1.5, 4.7, 5.0])
    z = np.concatenate([z, [11.1, 19.9, 26.9, 34.5, 38.7, 43.6, 50.0]])
    x = ((z + 50.0) / 100.0)[:, None]
    y = tvbo.benchmarks.make("moving-bump")(x, 19.0)
    y = y + 0.1 * np.random.default_rng(0).standard_normal(len(y))
    alg = sparq_gp_ucb(fit_cold_start=cold_start, **FAST)
    alg.setup(ProblemInfo(d=1), np.random.default_rng(0), WorkCounter())
    alg.ingest(x[-1], 19.0, float(y[-1]), now=19.0, warmup=False)
    alg.ingest_side(x[:-1], np.full(len(y) - 1, 19.0), y[:-1])
    trap = Hyperparameters(
        signal_var=0.05, lengthscale_space=8.26, lengthscale_time=None, noise_var=1.0
    )
    alg.surrogate.hp = trap
    alg.surrogate.fit_gp.set_hyperparameters(trap)
    alg.surrogate.fit()
    return alg


def test_cold_start_escapes_the_all_noise_optimum_a_warm_start_keeps():
    stuck = _trapped(cold_start=False)
    freed = _trapped(cold_start=True)
    # the warm start alone stays in the flat, all-noise optimum ...
    stuck_hp, freed_hp = stuck.surrogate.hp, freed.surrogate.hp
    assert stuck_hp.lengthscale_space > 1.0 and stuck_hp.signal_var < 0.1
    # ... the second start from ``initial`` finds the structure (bump ~0.03-0.06 wide once
    # normalised), and its likelihood is higher
    assert 0.01 < freed_hp.lengthscale_space < 0.2 and freed_hp.signal_var > 0.3
    assert freed.state()["cold_start_won"] == 1.0
    assert math.isnan(stuck.state()["cold_start_won"])

    def lml(alg: ComposedAlgorithm) -> float:
        model = alg.surrogate
        X, y = model.fit_set()
        mean, std = model.standardization()
        gp = ExactGP(model.kernel, model.hp, standardize=False)
        gp.set_data(X, None, (y - mean) / std)
        return float(gp.log_marginal_likelihood())

    assert lml(freed) > lml(stuck) + 1.0


# -- the engine: expert on the virtual clock ---------------------------------------------------
def test_expert_queries_advance_the_clock_by_their_cost():
    kwargs = dict(seed=0, horizon=30.0, warmup=5, compute="polynomial", polynomial=[0.0])
    free = tvbo.simulate("moving-bump", sparq_gp_ucb(**FAST), expert_cost=1e-6, **kwargs)
    paid = tvbo.simulate("moving-bump", sparq_gp_ucb(**FAST), expert_cost=0.1, **kwargs)
    q = paid["expert_queries"].values.ravel()
    warm = paid["is_warmup"].values.ravel()
    assert np.all(q[warm] == 0) and np.all(q[~warm] > 0)
    # no compute charged: an iteration = its expert answers + one 1 s evaluation
    gap = np.diff(paid["t_decide"].values.ravel())
    assert gap == pytest.approx(1.0 + 0.1 * q[:-1])
    assert paid["expert_time"].values.ravel() == pytest.approx(0.1 * q)
    assert free["expert_time"].values.ravel() == pytest.approx(0.0, abs=1e-4)
    assert free.sizes["iteration"] > paid.sizes["iteration"]
    for bad in (-1.0, 0.0):
        with pytest.raises(ValueError, match="expert_cost must be a finite number > 0"):
            tvbo.simulate("moving-bump", sparq_gp_ucb(**FAST), expert_cost=bad, **kwargs)


def test_end_to_end_by_name_records_expert_queries_and_state():
    ds = tvbo.simulate(
        "moving-bump",
        "sparq-gp-ucb",
        seed=1,
        horizon=25.0,
        warmup=5,
        expert_cost=1e-6,
        algorithm_options=FAST,
    )
    assert "sparq-gp-ucb" in tvbo.algorithms.names()
    q = ds["expert_queries"].values.ravel()
    warm = ds["is_warmup"].values.ravel()
    steps = ds["state_history_size"].values.ravel()[~warm]
    # Q_t = min(ceil(6 ln t), distinct past inputs) with t = observations so far
    expected = [min(n_expert_queries(t), t) for t in (steps - 1).astype(int)]
    assert q[~warm].tolist() == expected
    assert np.all(ds["state_n_kept"].values.ravel()[~warm] >= 1)
    assert ds["dataset_size"].values.ravel()[-1] == pytest.approx(
        ds["state_n_kept"].values.ravel()[-1] + ds["state_n_expert"].values.ravel()[-1]
    )
    assert np.isfinite(float(ds["average_regret"].values.ravel()[0]))


# -- the moving-bump benchmark -------------------------------------------------------------------
def test_moving_bump_is_the_papers_function_with_an_exact_oracle():
    b = tvbo.benchmarks.make("moving-bump")
    assert (b.d, b.horizon, b.noise_var, b.cost) == (1, 500.0, 0.01, 1.0)
    z, s = 3.0, 17.0
    x = np.array([(z + 50) / 100])
    f = math.exp(-0.05 * (z - 5 * math.sin(0.1 * s)) ** 2) + 0.5 * math.cos(0.2 * z) + 1.5
    assert b(x, s) == pytest.approx(f)
    # oracle against a brute-force grid (spacing 1e-3 in z)
    grid = np.linspace(0, 1, 100001)[:, None]
    for t in (0.0, 15.7, 250.0, 499.0):
        assert b.f_star(t) >= b(grid, t).max() - 1e-9
        assert b.f_star(t) - b(grid, t).max() < 1e-6
    # step_seconds maps the paper's step onto the virtual clock
    slow = tvbo.benchmarks.make("moving-bump", step_seconds=2.0)
    assert slow.horizon == 1000.0 and slow.cost == 2.0
    assert slow(x, 2 * s) == pytest.approx(f)


def test_moving_bump_options_are_validated():
    with pytest.raises(TypeError, match="valid options"):
        tvbo.benchmarks.make("moving-bump", amplitude=3)
    with pytest.raises(ValueError, match="step_seconds"):
        tvbo.benchmarks.make("moving-bump", step_seconds=0)
    with pytest.raises(ValueError, match="steps"):
        tvbo.benchmarks.make("moving-bump", steps=0)


def test_discarded_ground_set_never_queries_kept_points():
    alg = sparq_gp_ucb(ground_set="discarded", **FAST)
    alg.setup(ProblemInfo(d=1), np.random.default_rng(0), WorkCounter())
    xs = np.linspace(0.0, 1.0, 20)
    for i, x in enumerate(xs):
        alg.ingest(np.array([x]), float(i), 1.0, now=float(i), warmup=True)
    kept_x = xs[alg.dataset.kept()]
    assert len(kept_x) == 2  # t = 20: ages 0 and 1
    pts = alg.side_queries(20.0)[:, 0]
    assert len(pts) == n_expert_queries(20) and not np.any(np.isin(pts, kept_x))


def test_known_noise_is_used_and_not_fitted():
    alg = sparq_gp_ucb(noise_var=0.02, expert_noise_var=0.05, **FAST)
    alg.setup(ProblemInfo(d=1), np.random.default_rng(0), WorkCounter())
    rng = np.random.default_rng(1)
    for i, x in enumerate(rng.uniform(size=12)):
        alg.ingest(np.array([x]), float(i), float(np.sin(6 * x)), now=float(i), warmup=True)
    pts = alg.side_queries(12.0)
    alg.ingest_side(pts, np.full(len(pts), 12.0), np.sin(6 * pts[:, 0]))
    x = alg.propose(12.0)
    assert x.shape == (1,) and 0.0 <= x[0] <= 1.0
    mean, std = alg.surrogate.standardization()
    assert alg.surrogate.hp.noise_var * std**2 == pytest.approx(0.02)
    noise = alg.surrogate.posterior.point_noise * std**2  # the GP holds it in standardised units
    assert noise[-len(pts) :] == pytest.approx(0.05)  # expert answers: sigma-bar^2
    assert noise[: -len(pts)] == pytest.approx(0.02 * (np.array([1.0, 0.0]) ** 2 + 1))


# -- the preset: registered parts, typed options, the side-query capability --------------------
def test_the_preset_is_composed_of_the_registered_parts():
    from tvbo import registry
    from tvbo.algorithms.components import (
        ACQUISITIONS,
        DATASET_POLICIES,
        SURROGATES,
        SideQueries,
        option_type,
    )
    from tvbo.algorithms.presets import PRESETS

    assert registry.entry("algorithms", "sparq-gp-ucb").kind == "preset"
    assert PRESETS["sparq-gp-ucb"] == {
        "surrogate": {"kind": "sparq-gp"},
        "acquisition": {"kind": "expert-ucb"},
        "dataset": {"kind": "uncertainty-injection"},
        "removal": None,
    }
    alg = make("sparq-gp-ucb")
    assert isinstance(alg, ComposedAlgorithm) and alg.preset == "sparq-gp-ucb"
    assert type(alg.surrogate) is SURROGATES["sparq-gp"]
    assert type(alg.acquisition) is ACQUISITIONS["expert-ucb"]
    assert type(alg.dataset) is DATASET_POLICIES["uncertainty-injection"]
    assert alg.removal is None
    for part in (alg.surrogate, alg.acquisition, alg.dataset):
        assert part.spec == option_type(type(part))()  # the frozen record of its defaults
    # the engine's side queries are served by the one part with that capability
    assert isinstance(alg.acquisition, SideQueries) and alg.side is alg.acquisition
    assert "side queries" in alg.parallel_blocker()
    plain = make("gp-ucb")
    assert plain.side is None and plain.side_queries(1.0) is None
    assert plain.parallel_blocker() is None
    # shortcuts go to the one part that has them (the option names users pass today)
    tuned = make("sparq-gp-ucb", injection="drift", beta="wdbo", noise_var=0.02)
    assert tuned.dataset.injection == "drift"
    assert tuned.acquisition.options()["beta"] == "wdbo"
    assert tuned.surrogate.noise_var == 0.02


def test_a_misplaced_option_names_its_part():
    with pytest.raises(ValueError) as err:
        make("sparq-gp-ucb", surrogate={"injection": "drift"})
    message = str(err.value)
    assert "surrogate 'sparq-gp': unknown option(s) ['injection']" in message
    assert "'injection' is an option of dataset 'uncertainty-injection'" in message
    with pytest.raises(ValueError, match=r"acquisition 'expert-ucb': \[.*'query_scale'"):
        make("sparq-gp-ucb", queries=3)  # unknown: every part's options are listed
    with pytest.raises(ValueError, match="needs the 'sparq-gp' surrogate, got 'gp'"):
        make("sparq-gp-ucb", surrogate="gp")
    with pytest.raises(ValueError, match="dataset 'uncertainty-injection'"):
        make("sparq-gp-ucb", dataset="keep-all")
    with pytest.raises(ValueError, match="removal must be None"):
        make("sparq-gp-ucb", removal="oldest")


def test_flat_options_of_earlier_run_files_rebuild_the_same_algorithm():
    # the options the former class recorded (flat, resolved): each goes to its one part
    flat = dict(
        age_unit="step", time_unit=1.0, injection="paper", drift=1.0, threshold="log",
        threshold_exponent=0.2, keep_newest=True, query_scale=6.0, n_queries=None,
        ground_set="all", mcmc_factor=1.0, mcmc_steps=None, beta="paper", delta=0.05,
        rkhs_norm=1.0, noise_var=None, expert_noise_var=None, space_kernel="rbf",
        hyperparameters="ml", bounds={},
        initial={"signal_var": 1.0, "lengthscale_space": 0.1, "noise_var": 0.01},
        fit_max_iter=50, fit_cold_start=True, n_restarts=20, raw_samples=512, maxiter=200,
    )
    assert make("sparq-gp-ucb", **flat).options() == make("sparq-gp-ucb").options()
    recorded = make("sparq-gp-ucb", **FAST).options()
    assert make("sparq-gp-ucb", **recorded).options() == recorded


def test_at_most_one_part_asks_side_queries():
    from tvbo.algorithms.sparq.parts import ExpertUCB, SparQGPSurrogate, UncertaintyInjection

    class AskingPolicy(UncertaintyInjection):
        def side_queries(self, surrogate, t):
            return None

        def ingest_side(self, surrogate, X, T, Y):
            pass

    with pytest.raises(ValueError, match="at most one part may ask side queries"):
        ComposedAlgorithm(name="two", surrogate=SparQGPSurrogate(), acquisition=ExpertUCB(),
                          dataset=AskingPolicy())


def test_the_policy_masks_and_the_fit_waits_for_the_expert():
    work = WorkCounter()
    alg = sparq_gp_ucb(noise_var=0.01, **FAST)
    alg.setup(ProblemInfo(d=1), np.random.default_rng(0), work)
    for i in range(8):
        alg.ingest(np.array([i / 8]), float(i), float(np.sin(i)), now=float(i), warmup=i < 4)
    # nothing is removed (no removed_total), the history keeps every input for the expert
    assert "removed_total" not in alg.state()
    assert alg.surrogate.history_size == 8 and alg.dataset_size() == 2
    assert alg.surrogate.n == int(alg.dataset.kept().sum())
    # post-warm-up ingestion does not fit (a GP-UCB's does): the fit waits for the answers
    assert work.drain_fits() == []
    pts = alg.side_queries(8.0)
    alg.ingest_side(pts, np.full(len(pts), 8.0), np.sin(8 * pts[:, 0]))
    assert alg.dataset_size() == 2 + len(pts) and work.drain_fits() == []
    alg.propose(8.0)
    assert {record["source"] for record in work.drain_fits()} == {"sparq:warm", "sparq:cold"}
    gp = make("gp-ucb", n_restarts=2, raw_samples=16)
    gp_work = WorkCounter()
    gp.setup(ProblemInfo(d=1), np.random.default_rng(0), gp_work)
    for i in range(3):
        gp.ingest(np.array([i / 3]), float(i), float(np.sin(i)), now=float(i), warmup=i < 2)
    assert gp_work.drain_fits() != []
    # the posterior-mean recommendation conditions on the current sparse set
    x = alg.recommend(9.0)
    assert any(np.allclose(x, row) for row in alg.surrogate.X)
