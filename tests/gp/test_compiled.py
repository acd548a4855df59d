"""The compiled fit (tvbo.gp.compiled, numba) gives the plain numpy form's floats, bit for bit.

The plain forms are the reference: ``LMLObjective.lml_and_grad`` with the compiled form off,
and ``adam_minimize`` on ``RawObjective``. Each test runs both on the same random inputs
(sizes 1..64, input dimensions 1..6, every correlation, duplicate points that need jitter, a
NaN that fails every factorisation) and compares every output, the work counted and the
side effects bit for bit. The switch itself (``TVBO_JIT``) is tested at the end.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from tvbo import jit
from tvbo.gp.exact import ExactGP
from tvbo.gp.fit import fit_hyperparameters
from tvbo.gp.fit_modes import gpytorch_adam
from tvbo.gp.kernels import CORRELATIONS, Hyperparameters, SeparableKernel
from tvbo.gp.lml import LMLObjective
from tvbo.work import WorkCounter

pytest.importorskip("numba")
compiled = pytest.importorskip("tvbo.gp.compiled")
if not compiled.ready():
    pytest.skip(f"compiled forms unavailable: {compiled.unavailable_reason()}",
                allow_module_level=True)


@pytest.fixture
def jit_switch(monkeypatch):
    """Set TVBO_JIT for a block; the switch is read afresh and forgotten afterwards."""

    def set_to(value: str) -> None:
        monkeypatch.setenv(jit.ENV, value)
        jit.reset()

    yield set_to
    jit.reset()


def _bits(a: object) -> bytes:
    return np.asarray(a, dtype=float).tobytes()


def _data(n: int, d: int, rng: np.random.Generator, duplicates: bool = False):
    X = rng.random((n, d))
    T = np.sort(rng.random(n) * 600.0)
    if duplicates and n > 1:
        X[1::2] = X[::2][: n // 2]
        T[1::2] = T[::2][: n // 2]
    return X, T, rng.standard_normal(n)


def test_pairwise_sum_is_numpys():
    rng = np.random.default_rng(0)
    for n in range(0, 129):
        for stride in (1, 3, n + 1):
            a = rng.standard_normal(max(1, n * stride)) * 10.0 ** rng.integers(-5, 5)
            view = a[::stride][:n]
            assert _bits(compiled.add_reduce(a, 0, n, stride)) == _bits(np.add.reduce(view))
    assert _bits(compiled.add_reduce(np.array([-0.0]), 0, 1, 1)) == _bits(np.sum([-0.0]))


def _pair(kernel, X, T, y, fit_noise):
    """(compiled, plain) objectives on the same data, each with its own counter."""
    objectives = []
    for use in (True, False):
        objective = LMLObjective(kernel, X, T, y, fit_noise=fit_noise, noise_var=0.02,
                                 work=WorkCounter())
        objective._use_compiled = use
        objectives.append(objective)
    return objectives


@pytest.mark.parametrize("space", CORRELATIONS)
@pytest.mark.parametrize("time", [*CORRELATIONS, None])
def test_lml_and_grad_equals_the_plain_form_bit_for_bit(space, time):
    kernel = SeparableKernel(space, time)
    kinds = [*CORRELATIONS, None]
    rng = np.random.default_rng(10 * kinds.index(space) + kinds.index(time))  # deterministic
    seen_jitter = seen_failure = False
    sizes = [1, 2, 3, 7, 8, 9, 16, 17, 31, 40, 64, int(rng.integers(1, 65))]
    for trial, n in enumerate(sizes):
        d = 1 + trial % 6
        X, T, y = _data(n, d, rng, duplicates=trial % 3 == 2)
        if trial == len(sizes) - 2:
            X[n // 2, 0] = np.nan  # a NaN covariance: every jitter fails
        fit_noise = trial % 4 != 1
        fast, plain = _pair(kernel, X, T if kernel.has_time else None, y, fit_noise)
        for k in range(6):
            theta = rng.normal(0.0, 2.0, len(fast.names))
            if fit_noise and k % 3 == 0:
                theta[-1] = -40.0  # no noise: duplicates need jitter or fail to factorise
            if k == 4:
                theta[1] = math.log(1e-300)  # l_S -> 0: inf * 0 = nan in some kernels
            values = fast.values(theta)
            with np.errstate(all="ignore"):
                got = fast.lml_and_grad(*values)
                want = plain.lml_and_grad(*values)
            assert _bits(got[0]) == _bits(want[0]), (n, k)
            assert (got[1] is None) == (want[1] is None)
            if want[1] is not None:
                assert _bits(got[1]) == _bits(want[1]), (n, k)
            seen_failure = seen_failure or want[1] is None
            if hasattr(plain, "alpha"):
                assert _bits(fast.alpha) == _bits(plain.alpha)
        assert fast._compiled is not None  # the compiled form did run
        assert fast.work.counts() == plain.work.counts()
        assert list(fast.work.counts()["update"]) == list(plain.work.counts()["update"])
        assert (fast.n_evals, fast.jitter_events) == (plain.n_evals, plain.jitter_events)
        seen_jitter = seen_jitter or plain.jitter_events > 0
    assert seen_failure and seen_jitter  # both branches were exercised


def _gp(n: int, d: int, rng: np.random.Generator, kernel: SeparableKernel) -> ExactGP:
    X, T, y = _data(n, d, rng, duplicates=n % 5 == 0)
    gp = ExactGP(kernel, Hyperparameters(1.0, 0.3, 50.0 if kernel.has_time else None, 0.01))
    for i in range(n):
        gp.append(X[i], T[i] if kernel.has_time else None, y[i])
    return gp


def _fit(gp: ExactGP, switch, value: str, **kwargs):
    switch(value)
    before, events = gp.hyperparameters, gp.jitter_events
    gp.work.clear()
    with np.errstate(all="ignore"):
        result = fit_hyperparameters(gp, **kwargs)
    state = (result.hyperparameters, _bits(result.lml), result.n_evals, result.success,
             result.message, result.jitter_events, gp.work.counts(),
             gp.jitter_events - events, gp.work.drain_fits())
    gp.set_hyperparameters(before)
    return state


@pytest.mark.parametrize("time_scale,learn_mean", [(1.0, True), (600.0, False)])
def test_gpytorch_adam_fit_equals_the_plain_loop_bit_for_bit(jit_switch, time_scale, learn_mean):
    rng = np.random.default_rng(int(time_scale))
    kernels = [SeparableKernel(), SeparableKernel("matern32", "matern12"),
               SeparableKernel("rbf", None)]
    for trial, n in enumerate([1, 2, 5, 10, 17, 30, 45, 64]):
        kernel = kernels[trial % len(kernels)]
        gp = _gp(n, 1 + trial % 6, rng, kernel)
        options = {"time_scale": time_scale, "learn_mean": learn_mean, "steps": 40 + 10 * trial}
        fast = _fit(gp, jit_switch, "1", mode="gpytorch-adam", mode_options=options)
        plain = _fit(gp, jit_switch, "0", mode="gpytorch-adam", mode_options=options)
        assert fast == plain, n


def test_adam_fit_runs_whole_in_compiled_code(jit_switch, monkeypatch):
    """The compiled fit never calls back into the plain objective (one call per fit)."""
    jit_switch("1")
    from tvbo.gp import fit_modes

    def forbidden(*args, **kwargs):
        raise AssertionError("the plain Adam loop ran")

    monkeypatch.setattr(fit_modes, "adam_minimize", forbidden)
    gp = _gp(30, 2, np.random.default_rng(1), SeparableKernel())
    result = fit_hyperparameters(gp, mode="gpytorch-adam")
    assert result.n_evals == 150 and math.isfinite(result.lml)


def test_lbfgs_fits_equal_the_plain_form_bit_for_bit(jit_switch):
    rng = np.random.default_rng(5)
    for trial, n in enumerate([1, 3, 12, 30, 64]):
        gp = _gp(n, 1 + trial, rng, SeparableKernel())
        assert _fit(gp, jit_switch, "1") == _fit(gp, jit_switch, "0")
        options = {"warm_start": True}
        assert (_fit(gp, jit_switch, "1", mode="botorch-map", mode_options=options)
                == _fit(gp, jit_switch, "0", mode="botorch-map", mode_options=options))


def test_adam_with_a_prior_runs_the_plain_form():
    """A mode the compiled loop does not cover (a prior) is handed back to the plain form."""
    from tvbo.gp.fit_modes import FitMode, GammaPrior, ParameterSpec, RawObjective

    mode = gpytorch_adam()
    params = dict(mode.params)
    params["lengthscale_space"] = ParameterSpec(params["lengthscale_space"].constraint,
                                                GammaPrior(3.0, 6.0))
    gp = _gp(8, 2, np.random.default_rng(2), SeparableKernel())
    objective = LMLObjective.of_gp(gp)
    objective._use_compiled = True
    names = objective.names
    raw = RawObjective(objective, [params.get(n, ParameterSpec()) for n in names],
                       learn_mean=True, per_n=True)
    assert compiled.adam_fit(raw, raw.start(None), lr=0.1, steps=5, betas=(0.9, 0.999),
                             eps=1e-8) is None
    FitMode("with-prior", "test", params).fit(gp, gp.hyperparameters)  # runs, plain


def test_switch_reads_tvbo_jit_once(jit_switch):
    jit_switch("0")
    assert not jit.enabled()
    jit_switch("1")
    assert jit.enabled() and jit.numba_module().__name__ == "numba"
    jit_switch("")
    assert jit.enabled()  # default: on where numba imports
    jit_switch("yes")
    with pytest.raises(jit.JitConfigError, match=r"TVBO_JIT must be 0 .* got 'yes'"):
        jit.enabled()


_BREAK_EVEN = """
import json, sys
import numpy as np
from tvbo import jit
from tvbo.gp import lml
from tvbo.gp.exact import ExactGP
from tvbo.gp.fit import fit_hyperparameters
from tvbo.gp.kernels import Hyperparameters, SeparableKernel
jit.LOAD_AFTER = int(sys.argv[1])
rng = np.random.default_rng(3)
X, T, y = rng.random((12, 2)), np.sort(rng.random(12) * 600.0), rng.standard_normal(12)
gp = ExactGP(SeparableKernel(), Hyperparameters(1.0, 0.3, 50.0, 0.01))
gp.set_data(X, T, y)
fits = []
for i in range(6):
    gp.set_hyperparameters(Hyperparameters(1.0, 0.3 + 0.05 * i, 50.0, 0.01))
    result = fit_hyperparameters(gp)
    bits = np.array([result.lml, *gp.hyperparameters.as_dict().values()]).tobytes().hex()
    fits.append({"loaded": "tvbo.gp.compiled" in sys.modules, "plain": lml._PLAIN_SMALL[0],
                 "bits": bits})
print(json.dumps(fits))
"""


@pytest.mark.parametrize("setting", ["", "0"])
def test_lbfgs_fits_load_numba_at_break_even(setting):
    """With TVBO_JIT unset, a process whose fits are all L-BFGS-B runs them plain until it has
    evaluated the plain LML jit.LOAD_AFTER times at small n, then loads numba and runs them
    compiled, with the same bits as a process that never does (TVBO_JIT=0)."""
    def fits(value: str, after: int) -> list[dict]:
        env = {**os.environ, jit.ENV: value}
        out = subprocess.run([sys.executable, "-c", _BREAK_EVEN, str(after)], env=env,
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)

    reference = fits("0", 0)  # never compiled, whatever the count
    assert not any(f["loaded"] for f in reference)
    run = fits(setting, 60)
    assert [f["bits"] for f in run] == [f["bits"] for f in reference]
    loaded = [f["loaded"] for f in run]
    if setting == "0":
        assert not any(loaded)
        return
    first = loaded.index(True)  # the first fit that starts with the count past the threshold
    assert not any(loaded[:first]) and all(loaded[first:])
    assert 2 <= first < len(run) and run[first - 1]["plain"] >= 60 > run[first - 2]["plain"]
    assert run[-1]["plain"] == run[first - 1]["plain"]  # compiled from there on
