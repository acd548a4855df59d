"""The engine's open-loop path (Engine._run_open_loop) against its event loop: whole run files
equal, bit for bit, for the floor rows (centre, best-static, random-search), with and without
warm-up, recommendations and an iteration cap, and the path is taken only where every charge is
0 s."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from tvbo.algorithms import make
from tvbo.api import simulate
from tvbo.results.schema import RUN_FILE_ONLY_ATTRIBUTES
from tvbo.sim.engine import Engine


def _without_cost(ds: xr.Dataset) -> xr.Dataset:
    ds = ds.copy()
    for key in RUN_FILE_ONLY_ATTRIBUTES:
        ds.attrs.pop(key, None)
    return ds


def run_both(monkeypatch, benchmark: str, algorithm: str, **options) -> tuple[xr.Dataset, ...]:
    """The same run through the open-loop path and through the event loop."""
    taken: list[bool] = []
    run = Engine._run_open_loop

    def spy(self):
        taken.append(True)
        return run(self)

    monkeypatch.setattr(Engine, "_run_open_loop", spy)
    fast = simulate(benchmark, algorithm, **options)
    assert taken, "the open-loop path was not taken"
    monkeypatch.setattr(Engine, "open_loop", property(lambda self: False))
    loop = simulate(benchmark, algorithm, **options)
    return _without_cost(fast), _without_cost(loop)


@pytest.mark.parametrize(("bench_name", "algorithm", "options"), [
    ("powell", "centre", {"horizon": 3.0}),
    ("hartmann3", "best-static", {"horizon": 2.0, "cost": 0.05,
                                  "recommendation": "posterior-mean",
                                  "algorithm_options": {"time_points": 64, "raw_samples": 32}}),
    ("eggholder", "centre", {"horizon": 2.0, "recommendation": "latest", "warmup": 0}),
    ("ackley", "centre", {"horizon": 5.0, "max_iterations": 40, "seed": 3}),
    ("hills", "centre", {"horizon": 30.0}),
    ("powell", "random-search", {"horizon": 3.0, "recommendation": "posterior-mean"}),
    ("hills", "random-search", {"horizon": 30.0, "seed": 2}),
    ("ackley", "random-search", {"horizon": 2.0, "warmup": 3}),
])
def test_open_loop_path_gives_the_event_loop_run_file(monkeypatch, bench_name, algorithm,
                                                        options) -> None:
    fast, loop = run_both(monkeypatch, bench_name, algorithm, **options)
    assert fast.sizes["iteration"] > 15
    xr.testing.assert_identical(fast, loop)


def test_open_loop_path_only_where_every_charge_is_zero() -> None:
    from tvbo.benchmarks import make as make_benchmark
    from tvbo.sim.compute import make_compute_model
    from tvbo.sim.engine import EngineOptions

    bench = make_benchmark("powell", horizon=5.0)
    counted = make_compute_model("counted")
    assert Engine(bench, make("centre"), counted).open_loop
    # a model that charges a free phase (CPU time, R(n)), k evaluators, random durations,
    # or a policy that is not declared fixed: the event loop
    assert not Engine(bench, make("centre"), make_compute_model("measured")).open_loop
    assert not Engine(bench, make("centre"),
                      make_compute_model("polynomial", polynomial=[0.1])).open_loop
    assert not Engine(bench, make("centre"), counted,
                      options=EngineOptions(evaluators=2)).open_loop
    assert not Engine(bench, make("centre"), counted,
                      options=EngineOptions(cost_cv=0.5)).open_loop
    assert Engine(bench, make("random-search"), counted).open_loop
    assert not Engine(bench, make("pe-gp-ucb"), counted).open_loop
    assert not Engine(bench, make("gp-ucb"), counted).open_loop


def test_a_policy_that_breaks_the_declaration_is_refused() -> None:
    """A policy declaring open_loop that reports work would be charged by the event loop: the
    path refuses it instead of pricing it 0 s."""
    from tvbo.algorithms.reference.policies import CentrePolicy
    from tvbo.benchmarks import make as make_benchmark
    from tvbo.sim.compute import make_compute_model

    class Working(CentrePolicy):
        name = "working-centre"

        def propose(self, t: float) -> np.ndarray:
            self.work.flops(10.0)
            return super().propose(t)

    engine = Engine(make_benchmark("powell", horizon=1.0), Working(), make_compute_model("counted"))
    with pytest.raises(RuntimeError, match="declares open_loop but reported work"):
        engine.run()
