"""Honest compute: `counted` refuses an algorithm that reports no work (instead of charging it
0 s), `compute_free` is the only way around it, and `measured` charges every thread's CPU."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tvbo
from tvbo import cli, registry
from tvbo.algorithms import Algorithm, make
from tvbo.algorithms.display import REFERENCE_POLICIES
from tvbo.benchmarks import make as make_benchmark
from tvbo.sim.work_probe import probe_work


class Silent(Algorithm):
    """Random queries that report no work (an outside optimiser tvbo cannot count)."""

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def propose(self, t: float) -> np.ndarray:
        return self.rng.uniform(size=self.problem.d)

    def ingest(self, x, t, y, *, now, warmup) -> None:
        self.n += 1

    def dataset_size(self) -> int:
        return self.n


class Free(Silent):
    """The same, declared compute-free."""

    compute_free = True


def _spin(seconds: float, out: list[float]) -> None:
    """Numpy work in this thread for about ``seconds`` of its CPU time (recorded in ``out``)."""
    start = time.thread_time()
    a = np.random.default_rng(0).standard_normal(200_000)
    while time.thread_time() - start < seconds:
        np.sort(a)  # releases the GIL: the two workers really run side by side
    out.append(time.thread_time() - start)


class TwoThreads(Silent):
    """Each proposal runs a numpy workload in two worker threads (as BLAS/torch pools do)."""

    compute_free = True  # reports no work: run under `measured`
    per_thread = 0.05
    spent: list[float]

    def _setup(self) -> None:
        self.spent = []

    def propose(self, t: float) -> np.ndarray:
        workers = [threading.Thread(target=_spin, args=(self.per_thread, self.spent))
                   for _ in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return super().propose(t)


def test_counted_refuses_an_algorithm_that_reports_no_work() -> None:
    with pytest.raises(ValueError, match="reported no work.*measured.*polynomial"):
        tvbo.simulate("eggholder", Silent(), horizon=30.0, warmup=3)
    ds = tvbo.simulate("eggholder", Silent(), compute="measured", horizon=10.0, warmup=3)
    assert int(ds.attrs["n_iterations"]) > 3
    ds = tvbo.simulate("eggholder", Free(), horizon=10.0, warmup=3)  # declared: priced 0 s
    assert float(ds["compute_total"].sum()) == 0.0


def test_refusal_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "silent_plugin.py").write_text(
        "from tests.sim.test_honest_compute import Silent\nTVBO_ALGORITHMS = {'silent': Silent}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "run.nc"
    with pytest.raises(SystemExit) as stop:
        cli.main(["run", "--plugin", "silent_plugin", "--benchmark", "eggholder", "--algorithm",
                  "silent", "--horizon", "30", "--warmup", "3", "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1
    assert "'silent' reported no work" in err and "measured" in err and "polynomial" in err
    assert not out.exists()


@pytest.mark.parametrize("name", registry.names("algorithms"))
def test_every_builtin_reports_work_or_declares_it_needs_none(name: str) -> None:
    """A built-in under `counted` is never refused: it counts its work or says it has none."""
    benchmark = "hills" if registry.entry("algorithms", name).module.endswith("pegpucb") else (
        "moving-bump" if name == "sparq-gp-ucb" else "eggholder")
    algorithm = make(name)
    probe_work(make_benchmark(benchmark), algorithm)  # raises if refused
    # the model-free policies: random search and the floor rows (tvbo.algorithms.reference.policies)
    assert algorithm.compute_free == (name in ("random-search", *REFERENCE_POLICIES))


def test_measured_charges_every_thread_of_the_process() -> None:
    """Two worker threads busy with numpy in each proposal: the measured compute of the run is
    their CPU time (within 20 %), not the ~0 s of the thread that called them."""
    algorithm = TwoThreads()
    before = time.process_time()
    ds = tvbo.simulate("eggholder", algorithm, compute="measured", horizon=60.0, warmup=2,
                       max_iterations=8)
    process = time.process_time() - before
    workers = sum(algorithm.spent)  # CPU time the two workers spent, measured in each of them
    charged = float(ds["compute_acquisition"].sum())
    assert workers >= 6 * 2 * TwoThreads.per_thread
    assert 0.8 * workers <= charged <= 1.2 * workers
    assert charged <= process  # the run's whole process CPU time bounds it


def test_counted_prices_a_phase_without_work_at_zero_without_asking() -> None:
    """The engine's shortcut for a phase that reported no work under ``counted`` (every phase
    0 s, the model not asked) gives what the model itself gives for it, at any speed and
    dataset size: the shortcut may only skip, never change, a price."""
    from tvbo.sim.compute import COMPUTE_MODELS, make_compute_model

    for speed in (0.1, 1.0, 7.0):
        counted = make_compute_model("counted", speed=speed)
        assert counted.free_without_work
        for n in (0, 3, 500):
            assert counted.seconds("update", {}, 2.5, n, call="ingest", warmup=False) == 0.0
    others = [make_compute_model(m, polynomial=[0.1, 0.01]) if m == "polynomial"
              else make_compute_model(m) for m in COMPUTE_MODELS if m != "counted"]
    assert others and not any(model.free_without_work for model in others)
    # a model that charges CPU or R(n) would charge a phase without work: no shortcut there
    assert others[0].seconds("acquisition", {}, 2.5, 3, call="propose", warmup=False) > 0
