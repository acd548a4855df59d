"""Does an algorithm report its work? Asked before a campaign starts, not after hours of jobs.

Under ``compute: counted`` an algorithm's virtual compute time is the work it reports
(:mod:`tvbo.work`) priced by a hardware profile. An outside algorithm (a plugin wrapping code tvbo
cannot count) that reports nothing would be charged 0 s, so the engine refuses it at its first
post-warm-up iteration (:meth:`tvbo.sim.engine.Engine.check_work`). The workflow's config check
asks the same question before any job: :func:`probe_work` drives the algorithm through a few
warm-up observations and one post-warm-up iteration on the real engine, off the record (no f*,
no run file), and raises the engine's ``ValueError`` if it reported no work.
"""

from __future__ import annotations

from typing import Any

from tvbo.sim.compute import CountedModel
from tvbo.sim.engine import Engine, EngineOptions
from tvbo.sim.profiles import load_profile

#: warm-up observations before the probed iteration (enough data for a GP to fit)
PROBE_WARMUP = 3


def probe_work(benchmark: Any, algorithm: Any, *, seed: int = 0,
               warmup: int = PROBE_WARMUP) -> None:
    """Run ``warmup`` + 1 iterations of ``algorithm`` on ``benchmark`` under ``counted``.

    Raises ``ValueError`` (the engine's one-line refusal, naming ``measured`` and
    ``polynomial``) if the algorithm reported no work in its first post-warm-up iteration and
    does not declare ``compute_free``. Costs what those iterations cost (milliseconds for a
    light algorithm); the objects are used up (build fresh ones for the real run).
    """
    options = EngineOptions(warmup=warmup, max_iterations=warmup + 1)
    engine = Engine(benchmark, algorithm, CountedModel(load_profile(None)), seed=seed,
                    options=options)
    algorithm.setup(engine.problem, engine.streams["algorithm"], engine.work,
                    clock=lambda: engine.env.now)
    process = engine.env.process(engine._process())
    engine.env.run(until=process)  # no f* refinement, nothing recorded beyond memory
