"""k asynchronous evaluators, overlap, pending strategies and current-recommendation regret."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tvbo import simulate
from tvbo.acquisition.pending import make_pending, pending_names
from tvbo.algorithms import make
from tvbo.benchmarks import make as make_benchmark
from tvbo.runspec import check_run_options, option
from tvbo.sim.compute import make_compute_model
from tvbo.sim.engine import Engine, EngineOptions
from tvbo.sim.parallel import check_parallel, parallel_label, parallel_process, parse_label

FIXTURE = Path(__file__).parents[1] / "fixtures" / "parallel_baseline_digests.json"
PROFILE = "botorch-i9-laptop"


def _engine(benchmark="hartmann3", algorithm="gp-ucb", *, horizon=60.0, cost=2.0, seed=0,
            warmup=4, **options) -> Engine:
    bench = make_benchmark(benchmark, horizon=horizon, cost=cost)
    model = make_compute_model("counted", profile=PROFILE)
    return Engine(bench, make(algorithm), model, seed=seed,
                  options=EngineOptions(warmup=warmup, **options))


def _digest(ds) -> dict[str, str]:
    out = {}
    for name in sorted(ds.data_vars):
        v = ds[name]
        h = hashlib.sha256(str(v.dims).encode() + str(v.dtype).encode()
                           + np.ascontiguousarray(v.values).tobytes())
        out[name] = h.hexdigest()[:16]
    return out


# -- engine on the SimPy clock --------------------------------------------------------------------
def test_k_evaluations_overlap_in_virtual_time_and_each_lasts_c():
    engine = _engine(evaluators=4, cost=2.0)
    rec = engine.run()
    ts = np.asarray(rec.columns["t_sample"])
    ta = np.asarray(rec.columns["t_available"])
    np.testing.assert_allclose(ta - ts, 2.0, rtol=0, atol=1e-9)  # none longer (or shorter) than c
    # number of evaluations running at each sample instant: reaches k, never exceeds it
    running = [int(np.sum((ts <= t) & (ta > t))) for t in ts]
    assert max(running) == 4
    assert all(r <= 4 for r in running)
    # the four warm-up evaluations start together
    assert np.all(ts[:4] == 0.0)


def test_completions_are_ingested_in_finish_order():
    rec = _engine(evaluators=3, cost=1.5).run()
    ta = np.asarray(rec.columns["t_available"])
    ti = np.asarray(rec.columns["t_ingested"])
    assert np.all(np.diff(ta) >= 0) and np.all(np.diff(ti) >= 0)
    assert np.all(ti >= ta)


def test_pending_queries_are_known_and_proposals_use_arrived_data():
    ds = _engine(evaluators=4, cost=3.0).run().iteration_dataset()
    assert ds["pending_at_decide"].values.max() == 3  # k - 1 others running
    # dataset size at ingestion = completed queries so far (gp-ucb keeps all)
    n = ds.sizes["iteration"]
    np.testing.assert_array_equal(ds["dataset_size"].values, np.arange(1, n + 1))


def test_one_evaluator_without_overlap_is_byte_identical_to_the_recorded_baseline():
    expected = json.loads(FIXTURE.read_text())
    for key, digests in expected.items():
        benchmark, algorithm = key.split("/")
        horizon = 12.0 if benchmark == "eggholder" else 40.0
        ds = simulate(benchmark, algorithm, seed=0, horizon=horizon, profile=PROFILE)
        # the variables the baseline recorded (variables added since, e.g. the fit-health
        # records on the `fit` dimension, are not part of the parallel loop's contract)
        got = {name: d for name, d in _digest(ds).items() if name in digests}
        assert got == digests, key


def test_parallel_loop_with_one_evaluator_reproduces_the_sequential_loop():
    """The asynchronous loop, forced with k = 1 and no overlap, takes the same decisions."""
    seq = _engine(cost=0.5, horizon=30.0).run()
    engine = _engine(cost=0.5, horizon=30.0)
    engine.algorithm.setup(engine.problem, engine.streams["algorithm"], engine.work,
                           clock=lambda: engine.env.now)
    engine.env.run(until=engine.env.process(parallel_process(engine)))
    par = engine.recorder
    assert len(par) == len(seq)
    for name in ("t_decide", "t_sample", "t_available", "t_ingested", "y", "f"):
        assert par.columns[name] == seq.columns[name], name
    np.testing.assert_array_equal(np.asarray(par.x), np.asarray(seq.x))
    assert all(e["hidden_compute"] == 0.0 for e in par.extra)


def test_overlap_hides_compute_behind_evaluation():
    c = 2.0
    seq = _engine(cost=c, horizon=60.0).run()
    ov = _engine(cost=c, horizon=60.0, overlap=True).run()
    gap_seq = np.diff(np.asarray(seq.columns["t_sample"])[4:])
    gap_ov = np.diff(np.asarray(ov.columns["t_sample"])[4:])
    # sequential: c + compute; overlapped: max(c, compute) = c here (compute < c)
    assert np.all(gap_seq > c)
    np.testing.assert_allclose(gap_ov, c, atol=1e-9)
    hidden = np.asarray([e["hidden_compute"] for e in ov.extra])
    total = np.asarray([sum(cc.values()) for cc in ov.compute])
    assert hidden[5:].min() > 0 and np.all(hidden <= total + 1e-12)
    ds = simulate("hartmann3", "gp-ucb", seed=0, horizon=60.0, cost=c, warmup=4, overlap=True,
                  profile=PROFILE)
    fraction = ds["hidden_compute_fraction"].values.item()
    assert fraction == pytest.approx(ds["hidden_compute"].sum().item()
                                     / ds["compute_total"].sum().item())
    assert 0.5 < fraction <= 1.0  # compute < c: nearly all of it runs during evaluations


def test_overlap_with_compute_longer_than_c_is_paced_by_compute():
    c = 0.05
    ov = _engine("eggholder", cost=c, horizon=40.0, overlap=True).run().iteration_dataset()
    seq = _engine("eggholder", cost=c, horizon=40.0).run().iteration_dataset()
    gaps = np.diff(ov["t_sample"].values)[5:]
    assert gaps.min() >= c - 1e-12
    # the evaluations no longer add to the compute: the samples from the 6th on span at most
    # the compute of those queries (+ one c at the end), whereas the sequential loop adds c each
    assert gaps.sum() <= ov["compute_total"].values[5:].sum() + c + 1e-9
    seq_gaps = np.diff(seq["t_sample"].values)[5:]
    assert np.all(seq_gaps > c)
    # sequential span: c per query on top of the compute between the samples
    assert seq_gaps.sum() >= c * len(seq_gaps) + seq["compute_total"].values[6:-1].sum() - 1e-9


def test_counted_k4_is_deterministic_in_another_process():
    kwargs = dict(seed=3, horizon=30.0, cost=1.0, evaluators=4, profile=PROFILE)
    a = _digest(simulate("hartmann3", "w-dbo", **kwargs))
    b = _digest(simulate("hartmann3", "w-dbo", **kwargs))
    assert a == b
    root = str(Path(__file__).parents[2])
    code = (f"import json,sys; sys.path.insert(0, {root!r}); "
            "from tests.sim.test_parallel import _digest; from tvbo import simulate; "
            "print(json.dumps(_digest(simulate('hartmann3', 'w-dbo', seed=3, horizon=30.0, "
            f"cost=1.0, evaluators=4, profile={PROFILE!r}))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == a


def test_run_key_is_labelled_and_parsed():
    ds = simulate("hartmann3", "gp-ucb", seed=0, horizon=10.0, cost=2.0, evaluators=2,
                  profile=PROFILE, warmup=2)
    assert ds["algorithm"].values.tolist() == ["gp-ucb@k2"]
    assert parallel_label("bolt", 1, True) == "bolt@k1+overlap"
    assert parse_label("bolt@k8+overlap") == ("bolt", 8, True)
    assert parse_label("w-dbo") == ("w-dbo", 1, False)


# -- pending strategies ---------------------------------------------------------------------------
def _fitted_gp_ucb(seed=0, n=12):
    bench = make_benchmark("hartmann3", horizon=100.0)
    algo = make("gp-ucb")
    engine = Engine(bench, algo, make_compute_model("counted", profile=PROFILE), seed=seed,
                    options=EngineOptions(evaluators=4))
    algo.configure_parallel(4, make_pending("hallucinate"))
    algo.setup(engine.problem, engine.streams["algorithm"], engine.work, clock=lambda: 0.0)
    rng = np.random.default_rng(seed)
    for i in range(n):
        x = rng.uniform(size=bench.d)
        algo.ingest(x, float(i), float(bench.sample(x, float(i), rng)), now=float(i),
                    warmup=i < n - 1)
    return algo


def test_hallucinated_round_gives_distinct_proposals():
    algo = _fitted_gp_ucb()
    X = []
    for _ in range(4):
        algo.set_pending(np.asarray(X).reshape(-1, 2), np.full(len(X), 12.0))
        X.append(np.asarray(algo.propose(12.0)))
    X = np.asarray(X)
    d = np.linalg.norm(X[:, None] - X[None], axis=-1)[np.triu_indices(4, 1)]
    assert d.min() > 1e-3


def _dense_posterior(gp, X, T, y, Xq, tq):
    """Independent dense-matrix GP posterior with the standardisation of the real data."""
    hp = gp.hyperparameters
    ys = (y - gp.y_mean) / gp.y_std
    K = gp.kernel.matrix(X, T, X, T, hp) + hp.noise_var * np.eye(len(y))
    k = gp.kernel.matrix(Xq, np.full(len(Xq), tq), X, T, hp)
    mean = k @ np.linalg.solve(K, ys) * gp.y_std + gp.y_mean
    var = (hp.signal_var - np.einsum("ij,ji->i", k, np.linalg.solve(K, k.T))) * gp.y_std ** 2
    return mean, var


def test_hallucination_drops_variance_by_the_formula_and_keeps_the_mean():
    algo = _fitted_gp_ucb()
    s = algo.surrogate
    gp = s.gp
    xp = np.array([[0.3, 0.6]])
    tp = 12.0
    before = s.predict(xp, tp)
    noise = gp.hyperparameters.noise_var * gp.y_std ** 2
    lie = make_pending("hallucinate").lies(s, xp, np.array([tp]))
    Xq = np.vstack([xp, [[0.35, 0.55]], [[0.9, 0.1]]])
    base = s.predict(Xq, tp)
    with s.fantasy(xp, np.array([tp]), lie):
        after = s.predict(Xq, tp)
    np.testing.assert_allclose(after.mean, base.mean, rtol=1e-9, atol=1e-9)
    v = before.var[0]
    np.testing.assert_allclose(after.var[0], v - v * v / (v + noise), rtol=1e-7)
    # elsewhere: the dense posterior conditioned on the real data plus the pending point
    X = np.vstack([gp.X, xp])
    T = np.append(gp.T, tp)
    _, var = _dense_posterior(gp, X, T, np.append(gp.y, lie), Xq, tp)
    np.testing.assert_allclose(after.var, var, rtol=1e-6, atol=1e-10)
    # restored exactly
    again = s.predict(Xq, tp)
    assert again.mean.tobytes() == base.mean.tobytes() and again.var.tobytes() == base.var.tobytes()


@pytest.mark.parametrize("name", ["constant-liar-min", "constant-liar-mean", "constant-liar-max"])
def test_constant_liar_equals_conditioning_on_the_lie(name):
    algo = _fitted_gp_ucb()
    s, gp = algo.surrogate, algo.surrogate.gp
    Xp = np.array([[0.3, 0.6], [0.7, 0.1]])
    Tp = np.array([12.0, 12.0])
    lie = make_pending(name).lies(s, Xp, Tp)
    expected = {"constant-liar-min": gp.y.min(), "constant-liar-mean": gp.y.mean(),
                "constant-liar-max": gp.y.max()}[name]
    np.testing.assert_allclose(lie, expected)
    Xq = np.random.default_rng(1).uniform(size=(5, 2))
    with s.fantasy(Xp, Tp, lie):
        got = s.predict(Xq, 12.0)
    mean, var = _dense_posterior(gp, np.vstack([gp.X, Xp]), np.append(gp.T, Tp),
                                 np.append(gp.y, lie), Xq, 12.0)
    np.testing.assert_allclose(got.mean, mean, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got.var, var, rtol=1e-6, atol=1e-10)


def test_kriging_believer_and_hallucination_give_the_same_lies():
    algo = _fitted_gp_ucb()
    Xp, Tp = np.array([[0.2, 0.2]]), np.array([12.0])
    a = make_pending("hallucinate").lies(algo.surrogate, Xp, Tp)
    b = make_pending("kriging-believer").lies(algo.surrogate, Xp, Tp)
    assert a.tobytes() == b.tobytes()
    assert make_pending("none").lies(algo.surrogate, Xp, Tp) is None


@pytest.mark.parametrize("algorithm", ["w-dbo", "bolt", "r-gp-ucb", "et-gp-ucb", "sw-gp-ucb"])
def test_removal_and_reset_policies_never_lose_a_pending_result(algorithm):
    """Every result that arrives is appended to the surrogate when it arrives -- whatever the
    policy removed or reset while it was pending -- and fantasies never reach the policies."""
    engine = _engine("hartmann3", algorithm, evaluators=4, cost=3.0, horizon=80.0)
    algo, appended, in_ingest = engine.algorithm, [], [False]
    real_ingest, real_append = algo.ingest, algo.surrogate.append

    def ingest(x, t, y, **kw):
        in_ingest[0] = True
        try:
            real_ingest(x, t, y, **kw)
        finally:
            in_ingest[0] = False

    def append(x, t, y):
        if in_ingest[0]:
            appended.append((tuple(np.asarray(x, float)), float(y)))
        real_append(x, t, y)

    algo.ingest, algo.surrogate.append = ingest, append
    rec = engine.run()
    assert appended == [(tuple(x), y) for x, y in zip(rec.x, rec.columns["y"], strict=True)]
    assert max(e["pending_at_decide"] for e in rec.extra) == 3
    assert np.all(np.isfinite(rec.columns["y"]))


# -- recommendation regret ------------------------------------------------------------------------
def test_current_regret_of_latest_completed_query_matches_an_independent_computation():
    engine = _engine(evaluators=2, cost=2.0, horizon=30.0, recommendation="latest")
    rec = engine.run()
    grid = engine.time_grid()
    tds = rec.time_dataset(engine.benchmark, grid)
    ta = np.asarray(rec.columns["t_available"])
    X = np.asarray(rec.x)
    for j, t in enumerate(grid):
        done = np.flatnonzero(ta <= t)
        if not len(done):
            assert np.isnan(tds["regret_current"].values[j])
            continue
        f = float(engine.benchmark(X[done[-1]], t))
        f_star = max(float(engine.benchmark.f_star(np.array([t]))[0]), f)
        assert tds["f_current"].values[j] == pytest.approx(f, rel=1e-12)
        assert tds["regret_current"].values[j] == pytest.approx(
            f_star - f, rel=1e-6, abs=1e-6)


def test_recommendation_does_not_change_the_run():
    plain = simulate("hartmann3", "gp-ucb", seed=1, horizon=40.0, cost=2.0, evaluators=2,
                     profile=PROFILE, warmup=3)
    rec = simulate("hartmann3", "gp-ucb", seed=1, horizon=40.0, cost=2.0, evaluators=2,
                   profile=PROFILE, warmup=3, recommendation="posterior-mean")
    for name in plain.data_vars:
        assert plain[name].values.tobytes() == rec[name].values.tobytes(), name
    assert "time_integrated_regret_current" in rec
    assert np.isfinite(rec["time_integrated_regret_current"].values.item())


# -- bad input -------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [0, -1, 2.5, True, option("evaluators").maximum + 1, "4"])
def test_bad_evaluators(k):
    with pytest.raises(ValueError, match="evaluators must be an integer in"):
        check_run_options({"evaluators": k})


def test_unknown_pending_strategy_lists_the_valid():
    with pytest.raises(ValueError, match="unknown pending strategy 'bogus'; valid: .*hallucinate"):
        check_run_options({"evaluators": 2, "pending": "bogus"})
    assert "constant-liar-min" in pending_names()


@pytest.mark.parametrize(("algorithm", "why"), [("abo", "look-ahead"),
                                                ("sparq-gp-ucb", "side queries")])
def test_algorithms_that_cannot_overlap_are_named(algorithm, why):
    with pytest.raises(ValueError, match=f"{algorithm}.*cannot run with overlap: .*{why}"):
        check_parallel(make(algorithm), EngineOptions(overlap=True))


def test_pending_strategy_needs_a_model_that_can_condition():
    with pytest.raises(ValueError, match="boke.*cannot condition on pending"):
        check_parallel(make("boke"), EngineOptions(evaluators=2))
    check_parallel(make("boke"), EngineOptions(evaluators=2, pending="none"))  # allowed


def test_cli_refuses_bad_parallel_input_before_any_work(tmp_path):
    out = tmp_path / "r.nc"
    base = [sys.executable, "-m", "tvbo", "run", "--benchmark", "hartmann3", "--out", str(out),
            "--quiet"]
    for extra, message in (
        (["--algorithm", "abo", "--overlap"], "cannot run with overlap"),
        (["--algorithm", "gp-ucb", "--evaluators", "65"], "evaluators must be an integer"),
        (["--algorithm", "gp-ucb", "--evaluators", "2", "--pending", "x"], "valid: "),
    ):
        res = subprocess.run(base + extra, capture_output=True, text=True)
        assert res.returncode != 0 and message in res.stderr, res.stderr
        assert not out.exists()


# -- BOLT and W-DBO with k evaluators ------------------------------------------------------------
def test_bolt_response_time_is_the_interarrival_time_or_one_evaluators_cycle():
    runs = {}
    for mode in ("interarrival", "per-evaluator"):
        bench = make_benchmark("hartmann3", horizon=150.0, cost=3.0)
        algo = make("bolt", dataset={"parallel_response": mode})
        engine = Engine(bench, algo, make_compute_model("counted", profile=PROFILE), seed=0,
                        options=EngineOptions(warmup=4, evaluators=4))
        rec = engine.run()
        runs[mode] = (algo.dataset, rec)
    policy, rec = runs["interarrival"]
    # R is read at each arrival: the inter-arrival time, below c (impossible with one evaluator,
    # where every cycle contains a whole evaluation of c = 3 s)
    assert len(policy.times) > 5
    assert np.median(policy.times) < 3.0
    per = runs["per-evaluator"][0]
    # same first interval (identical runs until the first n*), four times longer
    assert per.times[0] == pytest.approx(4 * policy.times[0], rel=1e-12)
    with pytest.raises(ValueError, match="parallel_response 'x'; valid: interarrival"):
        make("bolt", dataset={"parallel_response": "x"})


def test_wdbo_budget_grows_with_elapsed_time_whatever_k():
    """exponent = sum over post-warm-up cleanings of dt / l_T, dt between arrivals: recomputed
    from the recorded arrival times and fitted l_T (k = 4: four evaluations overlap)."""
    bench = make_benchmark("hartmann3", horizon=120.0, cost=3.0)
    algo = make("w-dbo")
    engine = Engine(bench, algo, make_compute_model("counted", profile=PROFILE), seed=0,
                    options=EngineOptions(warmup=4, evaluators=4))
    rec = engine.run()
    warm = np.asarray(rec.is_warmup, bool)
    t = np.asarray(rec.columns["t_available"])[~warm]
    ell = np.asarray([s["lengthscale_time"] for s in rec.state])[~warm]
    expected = float(np.sum(np.diff(t) / ell[1:]))
    assert algo.dataset.exponent == pytest.approx(expected, rel=1e-9)
    assert expected > 0


@pytest.mark.parametrize("algorithm", ["tv-gp-ucb", "w-gp-ucb", "st-gp-ucb"])
def test_every_gp_ucb_based_algorithm_conditions_on_pending_queries(algorithm):
    engine = _engine("hartmann3", algorithm, evaluators=3, cost=3.0, horizon=60.0)
    rec = engine.run()
    assert engine.algorithm.supports_pending()
    assert max(e["pending_at_decide"] for e in rec.extra) == 2
    # the surrogate is restored after every fantasy: its size is the number of arrivals held
    assert engine.algorithm.dataset_size() == rec.dataset_size[-1]
