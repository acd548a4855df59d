"""Compute-time models: how many virtual seconds an algorithm's computation costs.

The engine asks a model for the duration of every phase of every iteration. Three models:

``counted`` (default)
    deterministic: the phase's *work counts* (see :mod:`tvbo.work`) times the coefficients of
    a hardware profile. The same seed gives bit-identical runs on any machine.
``measured``
    the CPU time the phase really took on this machine, all threads of the process (not GPU
    time, not other processes). Realistic, not reproducible.
``polynomial``
    the response time is given explicitly as ``R(n) = c + a0 + a1 n + a2 n^2 + ...``: each
    post-warm-up ``propose`` is charged ``sum_i a_i n^i`` seconds for dataset size ``n`` and every
    other phase is free. This is the model the regret analysis (and BOLT's ICML version) assumes.
    With a response-time model file instead of coefficients (``profile: R.yaml``, written by
    ``tvbo calibrate --from-runs`` from measured runs), it replays an algorithm tvbo cannot count
    deterministically (:class:`ResponseTimeModel`).

Every model divides by ``speed``, the hardware speed factor of what-if studies: ``speed = 10``
is hardware ten times faster.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from numbers import Real

from tvbo.sim.calibrate_runs import OUTER_PHASE, load_response_model, replay_seconds
from tvbo.sim.profiles import HardwareProfile, load_profile

COMPUTE_MODELS: tuple[str, ...] = ("counted", "measured", "polynomial")


class ComputeModel(ABC):
    """Converts one phase of computation into virtual seconds."""

    name: str
    #: whether the model prices reported work (the engine then refuses an algorithm that reports
    #: none after warm-up, unless it declares ``compute_free``): only ``counted``
    requires_work: bool = False
    #: whether a phase that reported no work costs exactly 0 s whatever its CPU time and the
    #: dataset size (``counted``): the engine then prices such a phase without asking
    free_without_work: bool = False

    def __init__(self, speed: float = 1.0) -> None:
        # finite: speed = inf would make every computation free, silently (NaN fails "> 0")
        if isinstance(speed, bool) or not isinstance(speed, Real) or not (
            math.isfinite(speed) and speed > 0
        ):
            raise ValueError(f"speed must be a finite number > 0, got {speed!r}")
        self.speed = float(speed)

    @abstractmethod
    def phase_seconds(
        self,
        phase: str,
        counts: Mapping[str, float],
        cpu_seconds: float,
        dataset_size: int,
        *,
        call: str,
        warmup: bool,
    ) -> float:
        """Virtual seconds charged for ``phase`` (before the speed factor is applied).

        ``call`` is the engine call the phase ran in (``"propose"`` or ``"ingest"``).
        """

    def seconds(self, phase: str, counts: Mapping[str, float], cpu_seconds: float,
                dataset_size: int, *, call: str, warmup: bool) -> float:
        """Virtual seconds charged for a phase, hardware speed factor included."""
        raw = self.phase_seconds(phase, counts, cpu_seconds, dataset_size, call=call,
                                 warmup=warmup)
        return max(0.0, raw) / self.speed

    @abstractmethod
    def describe(self) -> dict:
        """Parameters recorded in every result file."""


class CountedModel(ComputeModel):
    """Work counts times hardware-profile coefficients: deterministic virtual time."""

    name = "counted"
    requires_work = True
    free_without_work = True  # profile.seconds({}) == 0.0, and max(0, 0) / speed == 0.0

    def __init__(self, profile: HardwareProfile, speed: float = 1.0) -> None:
        super().__init__(speed)
        self.profile = profile

    def phase_seconds(self, phase, counts, cpu_seconds, dataset_size, *, call, warmup):
        return self.profile.seconds(counts)

    def describe(self) -> dict:
        return {"model": self.name, "speed": self.speed, "profile": self.profile.to_dict()}


class MeasuredModel(ComputeModel):
    """The CPU time of each phase on this machine, summed over every thread of the process.

    The clock is ``time.process_time()`` (:meth:`tvbo.work.WorkCounter.phase`): user + system
    CPU time of all threads of this process, so BLAS/OpenMP and torch worker threads are
    charged (``time.thread_time()`` of the calling thread missed them). What it cannot see:
    time on a GPU or another device (a CUDA kernel runs while the CPU waits or idles), work done
    by other processes (a solver server, a subprocess), and time spent waiting (I/O, sleep,
    network); and it does charge any unrelated thread of the process that runs during the
    phase. Two threads busy for 1 s each are charged 2 s: CPU time, not wall time.
    """

    name = "measured"

    def phase_seconds(self, phase, counts, cpu_seconds, dataset_size, *, call, warmup):
        return cpu_seconds

    def describe(self) -> dict:
        return {"model": self.name, "speed": self.speed, "clock": "time.process_time"}


class PolynomialModel(ComputeModel):
    """An explicit response-time polynomial in the dataset size, charged on ``propose``."""

    name = "polynomial"

    def __init__(self, coefficients: Sequence[float], speed: float = 1.0) -> None:
        super().__init__(speed)
        given = list(coefficients)
        if not given:
            raise ValueError("polynomial compute model needs at least one coefficient")
        for i, a in enumerate(given):
            # NaN fails every comparison, so "a < 0" let it through and a NaN charge was then
            # clipped to 0 s: a polynomial [nan, 0.1] ran with free compute, silently
            if isinstance(a, bool) or not isinstance(a, Real) or not (math.isfinite(a) and a >= 0):
                raise ValueError(
                    f"polynomial coefficient a{i} must be a finite number >= 0 (R(n) must be "
                    f"non-decreasing), got {a!r} in {given}"
                )
        self.coefficients = [float(a) for a in given]

    def response_compute(self, n: int) -> float:
        """Compute part of R(n): ``sum_i a_i n^i`` (the evaluation cost c comes on top)."""
        return sum(a * float(n) ** i for i, a in enumerate(self.coefficients))

    def phase_seconds(self, phase, counts, cpu_seconds, dataset_size, *, call, warmup):
        # one charge per post-warm-up iteration, on the propose call's outermost phase
        if call != "propose" or warmup or phase != "acquisition":
            return 0.0
        return self.response_compute(dataset_size)

    def describe(self) -> dict:
        return {"model": self.name, "speed": self.speed, "coefficients": self.coefficients}


class ResponseTimeModel(PolynomialModel):
    """``polynomial`` replaying a response-time model of ``tvbo calibrate --from-runs``.

    Per phase p, R_p(n) was fitted to measured CPU times (:mod:`tvbo.sim.calibrate_runs`); each
    call is charged the sum of its phases' R_p(n) on its outer phase (``acquisition`` for
    ``propose``, ``update`` for ``ingest``, warm-up ingestions included, as they were measured).
    Deterministic: the same seed gives the same run on any machine. ``describe`` records the
    model file, its coefficients, its fit error, its leave-one-run-out error and its source runs
    (provenance).
    """

    def __init__(self, path: str, speed: float = 1.0) -> None:
        ComputeModel.__init__(self, speed)
        self.path = str(path)
        self.model = load_response_model(path)
        self.algorithm = str(self.model.get("algorithm", ""))
        self.phases = {str(p): [float(a) for a in c] for p, c in self.model["phases"].items()}

    def response_compute(self, n: int) -> float:
        """Compute part of one iteration's R(n): every phase's R_p(n)."""
        return sum(replay_seconds(self.phases, call, n) for call in ("propose", "ingest"))

    def phase_seconds(self, phase, counts, cpu_seconds, dataset_size, *, call, warmup):
        if call not in OUTER_PHASE or phase != OUTER_PHASE[call]:
            return 0.0
        return replay_seconds(self.phases, call, dataset_size)

    def describe(self) -> dict:
        keys = ("name", "algorithm", "degree", "phases", "fit_error", "validation", "source")
        return {"model": self.name, "speed": self.speed,
                "replay": {"file": self.path, **{k: self.model.get(k) for k in keys}}}


def make_compute_model(
    name: str,
    *,
    speed: float = 1.0,
    profile: str | HardwareProfile | None = None,
    polynomial: Sequence[float] | None = None,
) -> ComputeModel:
    """Build a compute model by name; errors name the problem and list valid choices."""
    if name == "counted":
        prof = profile if isinstance(profile, HardwareProfile) else load_profile(profile)
        return CountedModel(prof, speed)
    if name == "measured":
        return MeasuredModel(speed)
    if name == "polynomial":
        if profile is not None and polynomial is None:  # a response-time model file (replay)
            if isinstance(profile, HardwareProfile):
                raise ValueError("compute model 'polynomial' takes a response-time model file "
                                 "(tvbo calibrate --from-runs), not a hardware profile")
            return ResponseTimeModel(str(profile), speed)
        if polynomial is None:
            raise ValueError(
                "compute model 'polynomial' needs coefficients (polynomial=[a0, a1, ...])"
            )
        return PolynomialModel(polynomial, speed)
    raise ValueError(f"unknown compute model {name!r}; valid: {', '.join(COMPUTE_MODELS)}")
