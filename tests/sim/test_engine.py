"""The engine's time semantics, compute models and recording, with a toy benchmark and an
algorithm that reports fixed, known work (so every instant can be computed by hand)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.toys import ToyBenchmark
from tvbo.algorithms.base import Algorithm
from tvbo.sim.compute import (
    CountedModel,
    MeasuredModel,
    PolynomialModel,
    make_compute_model,
)
from tvbo.sim.engine import Engine, EngineOptions
from tvbo.sim.profiles import HardwareProfile

# a profile that makes the dummy's work cost round numbers of seconds
PROFILE = HardwareProfile("unit", {"flop": 1e-9, "kernel": 1e-6, "call": 1e-3})


class FixedWork(Algorithm):
    """Proposes x = 0.25 after a 'fit' of 1e9 flops (1 s) and one call (1 ms); each ingest
    computes 1e6 kernel entries (1 s). Records the stamps and the query times it was given."""

    name = "fixed-work"

    def __init__(self) -> None:
        super().__init__()
        self.data: list[tuple[float, float, float]] = []
        self.query_times: list[float] = []

    def propose(self, t):
        self.query_times.append(t)
        with self.work.phase("fit"):
            self.work.flops(1e9)
        self.work.call()
        return np.array([0.25])

    def ingest(self, x, t, y, *, now, warmup):
        self.work.kernel(1e6)
        self.data.append((float(x[0]), t, y))

    def dataset_size(self):
        return len(self.data)

    def state(self):
        return {"n_plus_one": len(self.data) + 1.0}


def run(horizon=20.0, cost=0.5, speed=1.0, model=None, **opts):
    algo = FixedWork()
    model = model or CountedModel(PROFILE, speed)
    engine = Engine(ToyBenchmark(horizon, cost), algo, model, seed=3,
                    options=EngineOptions(**opts))
    return engine, algo, engine.run()


def test_instants_follow_the_time_semantics():
    _, algo, rec = run(warmup=2)
    c = rec.columns
    # warm-up: no propose; ingest costs 1 s of kernel work after the 0.5 s evaluation
    assert c["t_decide"][0] == 0.0 and c["t_sample"][0] == 0.0
    assert c["t_available"][0] == pytest.approx(0.5)
    assert c["t_ingested"][0] == pytest.approx(1.5)
    assert c["t_decide"][1] == pytest.approx(1.5)
    # first real iteration: fit 1 s + acquisition 1 ms, then cost, then ingest 1 s
    k = 2
    assert c["t_sample"][k] - c["t_decide"][k] == pytest.approx(1.001)
    assert c["t_available"][k] - c["t_sample"][k] == pytest.approx(0.5)
    assert c["t_ingested"][k] - c["t_available"][k] == pytest.approx(1.0)
    # the next decision happens when ingestion ends
    gaps = np.asarray(c["t_ingested"][:-1]) - c["t_decide"][:-1]
    assert np.allclose(np.diff(c["t_decide"]), gaps)
    # observations are stamped with their true sample time
    assert [t for _, t, _ in algo.data] == pytest.approx(c["t_sample"])


def test_horizon_ends_the_run_and_no_late_sample_is_recorded():
    _, _, rec = run(horizon=20.0, warmup=1)
    t_sample = np.asarray(rec.columns["t_sample"])
    assert t_sample.max() <= 20.0
    assert rec.columns["t_decide"][-1] < 20.0
    # one more iteration would have started before H only if the last ingest ended before H
    assert rec.columns["t_ingested"][-1] >= 20.0 or rec.columns["t_ingested"][-1] + 1.001 > 20.0


def test_speed_divides_compute_time_but_not_evaluation_cost():
    _, _, slow = run(speed=1.0, warmup=1)
    _, _, fast = run(speed=10.0, warmup=1)
    k = 1
    assert slow.columns["t_sample"][k] - slow.columns["t_decide"][k] == pytest.approx(1.001)
    assert fast.columns["t_sample"][k] - fast.columns["t_decide"][k] == pytest.approx(0.1001)
    assert fast.columns["t_available"][k] - fast.columns["t_sample"][k] == pytest.approx(0.5)
    assert len(fast) > len(slow)


def test_per_phase_compute_is_recorded():
    _, _, rec = run(warmup=1)
    phases = rec.compute[1]
    assert phases["fit"] == pytest.approx(1.0)
    assert phases["acquisition"] == pytest.approx(0.001)
    assert phases["update"] == pytest.approx(1.0)
    assert phases["clean"] == 0.0
    assert rec.compute[0]["fit"] == 0.0  # warm-up: no fit


def test_stamp_decide_and_lookahead():
    _, algo, rec = run(warmup=1, stamp="decide")
    assert [t for _, t, _ in algo.data] == pytest.approx(rec.columns["t_decide"])
    _, algo, rec = run(warmup=1, lookahead=True)
    # first acquisition: nothing to predict from; afterwards the last propose duration (1.001 s)
    assert algo.query_times[0] == pytest.approx(rec.columns["t_decide"][1])
    lead = np.asarray(rec.columns["t_query"][2:]) - rec.columns["t_decide"][2:]
    assert lead == pytest.approx(1.001)


def test_polynomial_model_charges_response_time_polynomial():
    model = PolynomialModel([0.2, 0.0, 0.01])  # R(n) - c = 0.2 + 0.01 n^2
    _, _, rec = run(model=model, warmup=1)
    for k in range(1, len(rec)):
        n = rec.dataset_size[k - 1]
        assert rec.columns["t_sample"][k] - rec.columns["t_decide"][k] == pytest.approx(
            0.2 + 0.01 * n**2)
        assert rec.columns["t_ingested"][k] == pytest.approx(rec.columns["t_available"][k])


def test_measured_model_charges_cpu_time():
    _, _, rec = run(model=MeasuredModel(), warmup=1, max_iterations=5)
    assert len(rec) == 5
    assert all(v >= 0 for c in rec.compute for v in c.values())


def test_counted_runs_are_deterministic():
    _, _, a = run(warmup=2)
    _, _, b = run(warmup=2)
    assert a.columns == b.columns
    assert np.array_equal(np.asarray(a.x), np.asarray(b.x))


def test_zero_duration_iterations_are_rejected():
    free = HardwareProfile("free", {"flop": 0.0, "kernel": 0.0, "call": 0.0})
    with pytest.raises(RuntimeError, match="does not advance"):
        run(cost=0.0, model=CountedModel(free), warmup=1)


def test_options_and_models_validate():
    from tvbo.runspec import check_run_options

    # the engine's options are judged by their one declaration (tvbo.runspec), not by the engine
    with pytest.raises(ValueError, match="warmup"):
        check_run_options({"warmup": -1})
    with pytest.raises(ValueError, match="stamp"):
        check_run_options({"stamp": "later"})
    with pytest.raises(ValueError, match="time_grid_step"):
        check_run_options({"time_grid_step": 0})
    with pytest.raises(ValueError, match="speed"):
        MeasuredModel(speed=0)
    with pytest.raises(ValueError, match="valid: counted, measured, polynomial"):
        make_compute_model("guessed")
    with pytest.raises(ValueError, match="coefficients"):
        make_compute_model("polynomial")
    with pytest.raises(ValueError, match=">= 0"):
        PolynomialModel([1.0, -1.0])


def test_time_grid_and_held_quantities():
    engine, _, rec = run(horizon=20.0, warmup=2)
    grid = engine.time_grid()
    assert grid[0] == 0.0 and grid[-1] == 20.0 and np.allclose(np.diff(grid), 1.0)
    ds = rec.time_dataset(engine.benchmark, grid)
    # the toy's f* is 0, so held regret is -f(x_held(t), t) and never negative
    assert np.all(ds["regret_held"].values >= 0)
    # dataset size in force is non-decreasing and ends at the final size
    sizes = ds["dataset_size_held"].values
    assert np.all(np.diff(sizes) >= 0) and sizes[-1] <= rec.dataset_size[-1]


class WaitsTwoSeconds(FixedWork):
    """Asks to sample 2 s after the decision (ABO-style look-ahead)."""

    def propose(self, t):
        from tvbo.algorithms.base import Query

        x = super().propose(t)
        return Query(x=x, at=t + 2.0)


def test_a_query_for_a_future_time_waits_for_it():
    algo = WaitsTwoSeconds()
    engine = Engine(ToyBenchmark(20.0, 0.5), algo, CountedModel(PROFILE), seed=0,
                    options=EngineOptions(warmup=1))
    rec = engine.run()
    k = 1
    # computing takes 1.001 s; the query asked for t_decide + 2 s, so it is sampled then
    assert rec.columns["t_sample"][k] - rec.columns["t_decide"][k] == pytest.approx(2.0)
    assert rec.compute[k]["fit"] + rec.compute[k]["acquisition"] == pytest.approx(1.001)


class AsksTheExpert(FixedWork):
    """Asks the expert about 3 points before each proposal and keeps the answers."""

    def __init__(self):
        super().__init__()
        self.answers = []

    def side_queries(self, t):
        return np.array([[0.1], [0.5], [0.9]])

    def ingest_side(self, X, T, Y):
        self.answers.append((X.copy(), T.copy(), Y.copy()))


def test_expert_queries_are_simulation_events_with_their_own_cost():
    algo = AsksTheExpert()
    engine = Engine(ToyBenchmark(20.0, 0.5), algo, CountedModel(PROFILE), seed=0,
                    options=EngineOptions(warmup=1, expert_cost=0.25, expert_noise_var=0.0))
    rec = engine.run()
    k = 1
    # 3 expert answers of 0.25 s each, then fit 1 s + acquisition 1 ms
    assert rec.columns["t_sample"][k] - rec.columns["t_decide"][k] == pytest.approx(0.75 + 1.001)
    assert rec.expert_queries[k] == 3 and rec.expert_time[k] == pytest.approx(0.75)
    assert rec.expert_queries[0] == 0  # warm-up asks nobody
    X, T, Y = algo.answers[0]
    assert np.allclose(np.diff(T), 0.25)
    # noiseless expert: the answers are the objective at the answer times
    assert Y == pytest.approx(engine.benchmark(X, T))
    ds = rec.iteration_dataset()
    assert int(ds["expert_queries"].sum()) == 3 * (len(rec) - 1)


def test_algorithms_without_an_expert_record_no_side_phase():
    _, _, rec = run(warmup=1)
    assert "expert_queries" not in rec.iteration_dataset()
    assert "side" not in rec.compute[1]
