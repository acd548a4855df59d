"""The fast paths of the GP fits give the same floats, bit for bit, as the plain formulations.

The ``counted`` compute model charges virtual time from counted work and the preset digests pin
every run's results, so the fast forms of the fit (``LMLObjective.lml_and_grad``, the in-place
correlations) must not move a single bit. Each test compares a fast form with a plain
re-statement of the same formula (the textbook expressions, scipy's ``cho_solve`` /
``cholesky_with_jitter``) on random data, including the jitter-escalation and
failed-factorisation branches.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tvbo.gp.kernels import (
    CORRELATIONS,
    SeparableKernel,
    correlation,
)
from tvbo.gp.lml import LMLObjective
from tvbo.work import WorkCounter

_S3, _S5 = math.sqrt(3.0), math.sqrt(5.0)


def _bits(a: object) -> bytes:
    return np.asarray(a, dtype=float).tobytes()


# ------------------------------------------------------------------------------------------------
# correlations: the textbook expressions
# ------------------------------------------------------------------------------------------------
def _textbook(name: str, r: np.ndarray) -> tuple[object, object, object]:
    """(value, d_dr, d_dr_over_r) written as the class docstrings state them."""
    if name == "matern12":
        e = np.exp(-r)
        positive = r > 0.0
        safe = np.where(positive, r, 1.0)
        return e, -e, np.where(positive, -np.exp(-safe) / safe, 0.0)
    if name == "matern32":
        e = np.exp(-_S3 * r)
        return (1.0 + _S3 * r) * e, -3.0 * r * e, -3.0 * np.exp(-_S3 * r)
    if name == "matern52":
        e = np.exp(-_S5 * r)
        s = 1.0 + _S5 * r
        return ((s + (5.0 / 3.0) * r * r) * e, -(5.0 / 3.0) * r * s * e,
                -(5.0 / 3.0) * (1.0 + _S5 * r) * np.exp(-_S5 * r))
    e = np.exp(-0.5 * r * r)
    return e, -r * e, -np.exp(-0.5 * r * r)


@pytest.mark.parametrize("name", CORRELATIONS)
def test_correlations_equal_their_textbook_expressions_bit_for_bit(name):
    rng = np.random.default_rng(3)
    base = np.concatenate([rng.random(4000) * 30.0, np.abs(rng.standard_normal(4000)) * 500.0,
                           [0.0, 5e-324, 1e-300, 1e300, np.inf]])
    inputs = [base, base[:3600].reshape(60, 60), base[:3600].reshape(60, 60).T, base[::3],
              np.float64(0.7), np.array(0.0)]
    c = correlation(name)
    with np.errstate(all="ignore"):
        for r in inputs:
            value, d_dr, over_r = _textbook(name, np.asarray(r, dtype=float))
            got = [c.value(r), c.value_and_d_dr(r)[0], c.value_and_d_dr(r)[1], c.d_dr(r),
                   c.d_dr_over_r(r), *c.value_and_d_dr_over_r(r)]
            want = [value, value, d_dr, d_dr, over_r, value, over_r]
            for g, w in zip(got, want, strict=True):
                assert type(g) is type(w) and np.shape(g) == np.shape(w)
                assert _bits(g) == _bits(w)
            if np.ndim(r) == 2:  # the buffered form of the fit's hot loop
                shape = np.shape(r)
                v, d = np.full(shape, 7.0), np.full(shape, 7.0)
                c.value_and_d_dr_into(np.ascontiguousarray(r), v, d,
                                      (np.full(shape, 3.0), np.full(shape, 5.0)))
                assert _bits(v) == _bits(value) and _bits(d) == _bits(d_dr)


# ------------------------------------------------------------------------------------------------
# the LML core: its fast form against its reference form (LMLObjective.lml_and_grad_reference)
# ------------------------------------------------------------------------------------------------
def _data(n, d, seed, duplicates=False):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    T = np.sort(rng.random(n) * 600.0)
    if duplicates:
        X[1::2] = X[::2][: n // 2]
        T[1::2] = T[::2][: n // 2]
    y = rng.standard_normal(n)
    return X, T, y


@pytest.mark.parametrize("space,time", [("matern52", "matern32"), ("matern32", "matern12"),
                                        ("rbf", None), ("matern12", "rbf")])
@pytest.mark.parametrize("fit_noise", [True, False])
def test_lml_core_equals_the_plain_formulation_bit_for_bit(space, time, fit_noise):
    kernel = SeparableKernel(space, time)
    rng = np.random.default_rng(11)
    seen_jitter = seen_failure = False
    for trial, (n, dup) in enumerate([(1, False), (5, False), (23, False), (40, True),
                                      (9, False)]):
        X, T, y = _data(n, 3, trial, duplicates=dup)
        if trial == 4:
            X[3, 0] = np.nan  # a nan covariance: every jitter fails (JitterError)
        T_in = T if kernel.has_time else None
        w_fast, w_plain = WorkCounter(), WorkCounter()
        objective = LMLObjective(kernel, X, T_in, y, fit_noise=fit_noise, noise_var=0.02,
                                 work=w_fast)
        reference = LMLObjective(kernel, X, T_in, y, fit_noise=fit_noise, noise_var=0.02,
                                 work=w_plain)
        failures = 0
        for k in range(12):
            theta = rng.normal(0.0, 2.0, len(objective.names))
            if fit_noise and k % 3 == 0:
                theta[-1] = -40.0  # no noise: duplicates need jitter, or fail to factorise
            if k == 5:
                theta[1] = math.log(1e-300)  # l_S -> 0: inf * 0 = nan in some kernels
            sv, ls, lt, nv = objective.values(theta)
            with np.errstate(all="ignore"):
                lml, grad = objective.lml_and_grad(sv, ls, lt, nv)
                p_lml, p_grad = reference.lml_and_grad_reference(sv, ls, lt, nv)
            assert _bits(lml) == _bits(p_lml)
            assert (grad is None) == (p_grad is None)
            failures += grad is None
            if grad is not None:
                assert _bits(grad) == _bits(p_grad)
                assert _bits(objective.alpha) == _bits(reference.alpha)
        assert w_fast.counts() == w_plain.counts()
        assert objective.jitter_events == reference.jitter_events
        assert objective.n_evals == reference.n_evals
        seen_jitter = seen_jitter or reference.jitter_events > 0
        seen_failure = seen_failure or failures > 0
    assert seen_failure and seen_jitter  # both branches were exercised


def test_values_reject_what_the_dataclass_rejects():
    X, T, y = _data(6, 2, 0)
    objective = LMLObjective(SeparableKernel(), X, T, y)
    assert objective.values(np.log([0.5, 0.2, 30.0, 0.01])) == (
        *(getattr(objective.to_hyperparameters(np.log([0.5, 0.2, 30.0, 0.01])), f)
          for f in ("signal_var", "lengthscale_space", "lengthscale_time", "noise_var")),)
    with pytest.raises(ValueError, match="noise_var must be a finite number >= 0"), \
            np.errstate(over="ignore"):
        objective.values(np.array([0.0, 0.0, 0.0, 800.0]))
