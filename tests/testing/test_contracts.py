"""Contract tests (issue 11 item 7): every registered algorithm and benchmark, and every model of
tvbo.testing.contracts.MODELS, passes the same suite; registering is all a new one needs."""

from __future__ import annotations

import pytest

from tvbo.registry import names
from tvbo.testing import contracts

ALGORITHMS = names("algorithms")
BENCHMARKS = names("benchmarks")

#: contracts that known algorithms fail today, ``(contract, algorithm) -> why``; each entry is a
#: strict xfail, so the test fails as soon as the algorithm passes (remove the entry then).
#: Empty: every registered algorithm passes every contract.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}


def _cases(contract: str, items: list[str]) -> list:
    return [pytest.param(name, marks=pytest.mark.xfail(
        strict=True, reason=KNOWN_FAILURES[(contract, name)]))
        if (contract, name) in KNOWN_FAILURES else name for name in items]


def test_known_failures_name_registered_algorithms():
    unknown = sorted(name for _, name in KNOWN_FAILURES if name not in ALGORITHMS)
    assert not unknown, f"KNOWN_FAILURES lists unregistered algorithms: {unknown}"
    stale = sorted(set(contracts.NO_COMPUTE) - set(ALGORITHMS))
    assert not stale, f"NO_COMPUTE lists unregistered algorithms: {stale}"


# -- algorithms --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", _cases("proposals", ALGORITHMS))
def test_algorithm_proposals_have_the_problem_shape_and_lie_in_bounds(name):
    contracts.check_proposals(name)


@pytest.mark.parametrize("name", _cases("discrete", ALGORITHMS))
def test_algorithm_proposes_candidates_on_a_discrete_problem(name):
    contracts.check_discrete_proposals(name)


@pytest.mark.parametrize("name", _cases("determinism", ALGORITHMS))
def test_algorithm_is_deterministic_under_a_seed(name):
    contracts.check_determinism(name)


@pytest.mark.parametrize("name", _cases("run-file", ALGORITHMS))
def test_algorithm_run_file_is_valid(name, tmp_path):
    contracts.check_run_file(contracts.algorithm_run(name), tmp_path, name)


@pytest.mark.parametrize("name", _cases("work", ALGORITHMS))
def test_algorithm_work_is_counted(name):
    contracts.check_work_counted(name)


@pytest.mark.parametrize("name", _cases("options", ALGORITHMS))
def test_algorithm_options_round_trip(name):
    contracts.check_options_round_trip(name)


# -- benchmarks --------------------------------------------------------------------------------

def _benchmark(name: str) -> None:
    """Skip a real-data benchmark whose prepared data file is absent, with the reason."""
    try:
        contracts.make_benchmark(name)
    except FileNotFoundError as err:
        pytest.skip(f"{name}: data file absent ({str(err).split('. ')[0]})")


@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_attributes(name):
    _benchmark(name)
    contracts.check_benchmark_attributes(name)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_evaluation_is_vectorised_and_deterministic(name):
    _benchmark(name)
    contracts.check_benchmark_evaluation(name)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_oracle_bounds_the_objective(name):
    _benchmark(name)
    contracts.check_benchmark_oracle(name)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_refuses_queries_outside_its_domain(name):
    _benchmark(name)
    contracts.check_benchmark_refuses_bad_input(name)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_run_file_is_valid(name, tmp_path):
    _benchmark(name)
    from tvbo.api import simulate

    ds = simulate(name, "random-search", seed=0, warmup=3, max_iterations=6,
                  **contracts.BENCHMARK_OPTIONS)
    contracts.check_run_file(ds, tmp_path, name)


# -- models ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(contracts.MODELS))
def test_model_posterior_after_appends_and_removals_equals_a_full_refactorisation(name):
    contracts.check_model_posterior(name)


# -- the contracts fail where they must: deliberately broken objects ---------------------------

def _broken_algorithm(defect: str):
    """A small algorithm with one defect (random queries plus a counted 'model' otherwise)."""
    import numpy as np

    from tvbo.algorithms.base import Algorithm

    class Broken(Algorithm):
        name = f"broken-{defect}"

        def __init__(self, scale: float = 1.0) -> None:
            super().__init__()
            self.scale, self.n = float(scale), 0

        def propose(self, t):
            if defect != "no-work":
                self.work.flops(100.0)
            x = self.rng.random(self.problem.d)
            if defect == "out-of-bounds" and self.n >= 4:
                x = x + 1.0
            if defect == "global-rng":
                x = np.random.random(self.problem.d)  # noqa: NPY002 - the defect under test
            return x

        def ingest(self, x, t, y, *, now, warmup):
            self.n += 1

        def dataset_size(self):
            return self.n

        def options(self):
            return {"scale": self.scale, **({"lost": 1} if defect == "bad-options" else {})}

    return Broken


DEFECTS = {
    "out-of-bounds": contracts.check_proposals,
    "global-rng": contracts.check_determinism,
    "no-work": contracts.check_work_counted,
    "bad-options": contracts.check_options_round_trip,
}


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_an_algorithm_with_a_defect_fails_its_contract(defect):
    from tvbo.algorithms import factory as A

    cls = _broken_algorithm(defect)
    A.register(cls.name, cls)
    try:
        if defect == "no-work":  # the engine itself refuses it under counted (issue 23)
            with pytest.raises(ValueError, match="reported no work"):
                DEFECTS[defect](cls.name)
            return
        # the engine itself refuses a query outside the domain (RuntimeError)
        with pytest.raises((AssertionError, RuntimeError)):
            DEFECTS[defect](cls.name)
        if defect != "out-of-bounds":  # it runs: the failure is the defect's, not a crash
            contracts.check_proposals(cls.name)
    finally:
        A._CUSTOM.pop(cls.name, None)
        contracts.algorithm_run.cache_clear()


def test_a_model_whose_removal_is_wrong_fails_its_contract():
    import numpy as np

    from tvbo.gp.exact import ExactGP

    class ForgetsTheFactor(ExactGP):
        """Removes the row of L instead of updating the trailing block (the classic bug)."""

        def remove(self, i):
            i = int(i) % self.n
            keep = np.delete(np.arange(self.n), i)
            self._L = np.asfortranarray(self._L[np.ix_(keep, keep)])
            self._X = np.delete(self._X, i, axis=0)
            self._T = np.delete(self._T, i)
            self._y = np.delete(self._y, i)
            self._restandardize()

    good = contracts.MODELS["exact-gp/spatio-temporal"]

    def factory():
        model = good()
        model.__class__ = ForgetsTheFactor
        return model

    with pytest.raises(AssertionError, match="full refactorisation"):
        contracts.check_model_posterior("forgets-the-factor", factory)


@pytest.mark.parametrize("defect", ["noisy-f", "accepts-anything", "wrong-oracle"])
def test_a_benchmark_with_a_defect_fails_its_contract(defect):
    import numpy as np

    import tvbo.benchmarks as B
    from tvbo.benchmarks.static import Forrester, static_factory

    class Broken(Forrester):
        name = f"broken-{defect}"

        def _evaluate(self, x, t):
            f = super()._evaluate(x, t)
            return f + np.random.random(np.shape(f)) if defect == "noisy-f" else f  # noqa: NPY002

        def __call__(self, x, t):
            if defect == "accepts-anything":
                x = np.clip(np.asarray(x, float)[..., :1], 0, 1)
                return super().__call__(x, min(float(np.max(t)), self.horizon))
            return super().__call__(x, t)

        def f_star(self, t):
            f = super().f_star(t)
            return f - 1.0 if defect == "wrong-oracle" else f

    check = {"noisy-f": contracts.check_benchmark_evaluation,
             "accepts-anything": contracts.check_benchmark_refuses_bad_input,
             "wrong-oracle": contracts.check_benchmark_oracle}[defect]
    B.register(Broken.name, static_factory(Broken))
    try:
        with pytest.raises(AssertionError):
            check(Broken.name)
        contracts.check_benchmark_attributes(Broken.name)
    finally:
        key = B.normalise_name(Broken.name)
        B._REGISTRY.pop(key, None)
        B._DISPLAY.pop(key, None)
