"""UCB, beta schedules and the multi-start optimiser, against independent computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from tvbo.acquisition import AcquisitionOptimizer, make_beta, ucb
from tvbo.gp.exact import ExactGP
from tvbo.gp.kernels import Hyperparameters, SeparableKernel


def test_beta_schedules_match_their_formulas():
    assert make_beta(None)(3, 50, 7) == pytest.approx(0.2 * 3 * math.log(100))
    assert make_beta(2.5)(3, 50, 7) == 2.5
    assert make_beta({"kind": "log", "c1": 0.8, "c2": 4.0})(3, 50, 7) == pytest.approx(
        0.8 * math.log(28))
    assert make_beta({"kind": "log", "c2": 0.4})(1, 1, 1) == pytest.approx(1e-3)  # floored
    k, d, delta = 10, 2, 0.1
    expected = 2 * math.log(k**2 * 2 * math.pi**2 / (3 * delta)) + 2 * d * math.log(
        k**2 * d * math.sqrt(math.log(4 * d / delta)))
    assert make_beta("srinivas")(d, 5, k) == pytest.approx(expected)
    # others append their papers' rules: the generic ones are listed among them, sorted
    with pytest.raises(ValueError, match=r"valid \(registered beta rules\): .*constant, .*log, "
                                         ".*srinivas, .*wdbo"):
        make_beta("greedy")
    with pytest.raises(ValueError, match="unknown key"):
        make_beta({"kind": "log", "c3": 1})


def _gp(seed: int = 0) -> ExactGP:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(25, 2))
    y = np.sin(6 * X[:, 0]) + np.cos(5 * X[:, 1]) + 0.05 * rng.standard_normal(25)
    gp = ExactGP(SeparableKernel("matern52", None), Hyperparameters(1.0, 0.25, None, 0.01))
    gp.set_data(X, np.zeros(25), y)
    return gp


def test_ucb_value_and_gradient():
    gp = _gp()
    X = np.random.default_rng(1).uniform(size=(7, 2))
    values, grads = ucb(gp, X, 0.0, 2.0)
    pred = gp.predict(X, 0.0)
    assert values == pytest.approx(pred.mean + np.sqrt(2.0) * np.sqrt(pred.var))
    h = 1e-6
    for j in range(2):
        E = np.zeros_like(X)
        E[:, j] = h
        fd = (ucb(gp, X + E, 0.0, 2.0, grad=False)[0] - ucb(gp, X - E, 0.0, 2.0, grad=False)[0])
        assert grads[:, j] == pytest.approx(fd / (2 * h), rel=1e-5, abs=1e-6)


def test_ucb_is_the_textbook_expression_bit_for_bit():
    """The in-place evaluation gives exactly the floats of the written-out formula, and the
    prediction it reads is left as it was."""
    gp = _gp()
    X = np.random.default_rng(3).uniform(size=(9, 2))
    pred = gp.predict(X, 0.0, grad=True)
    saved = {k: getattr(pred, k).copy() for k in ("mean", "var", "dmean", "dvar")}
    from tvbo.acquisition.ucb import _VAR_FLOOR, _ucb_of

    for beta in (0.0, 2.0, 7.3):
        values, grads = _ucb_of(pred, beta, True)
        sigma = np.sqrt(np.maximum(saved["var"], _VAR_FLOOR))
        np.testing.assert_array_equal(values, saved["mean"] + np.sqrt(beta) * sigma)
        np.testing.assert_array_equal(
            grads, saved["dmean"] + np.sqrt(beta) * saved["dvar"] / (2.0 * sigma)[:, None])
    for k, v in saved.items():
        np.testing.assert_array_equal(getattr(pred, k), v)
    with np.errstate(invalid="ignore"):
        assert np.isnan(_ucb_of(pred, -1.0, False)[0]).all()  # numpy's NaN, as before


def test_optimizer_finds_the_best_of_independent_dense_multistart():
    gp = _gp(2)
    beta = 1.5

    def acq(X, grad):
        return ucb(gp, X, 0.0, beta, grad=grad)

    x, value = AcquisitionOptimizer().maximize(acq, 2, np.random.default_rng(0))
    # independent reference: scipy from every point of a 30 x 30 grid, best local optimum
    best = -np.inf
    for a in np.linspace(0, 1, 30):
        for b in np.linspace(0, 1, 30):
            res = minimize(lambda z: -acq(z[None, :], False)[0][0], [a, b], method="L-BFGS-B",
                           bounds=[(0, 1), (0, 1)])
            best = max(best, -res.fun)
    assert value == pytest.approx(acq(x[None, :], False)[0][0])
    assert value >= best - 1e-6
    assert np.all((x >= 0) & (x <= 1))


def test_discrete_candidates_are_searched_exhaustively():
    gp = _gp(3)
    candidates = np.random.default_rng(4).uniform(size=(40, 2))

    def acq(X, grad):
        return ucb(gp, X, 0.0, 1.0, grad=grad)

    x, value = AcquisitionOptimizer().maximize(acq, 2, np.random.default_rng(0),
                                               candidates=candidates)
    values = acq(candidates, False)[0]
    assert value == pytest.approx(values.max())
    assert np.array_equal(x, candidates[np.argmax(values)])


def test_optimizer_options_validate():
    with pytest.raises(ValueError, match="raw_samples"):
        AcquisitionOptimizer(n_restarts=20, raw_samples=10)
    with pytest.raises(ValueError, match="n_restarts"):
        AcquisitionOptimizer(n_restarts=0)


def test_a_schedule_takes_any_registered_rule_it_can_call(monkeypatch):
    from tvbo.acquisition import beta as beta_module

    # a private copy of the registry: the rules below exist for this test only
    monkeypatch.setattr(beta_module, "BETA_RULES", dict(beta_module.BETA_RULES))
    name = "test-halved-wdbo"

    @beta_module.register_beta(name, citation="test only", returns="root_beta")
    def _root(*, d: int, n: int, scale: float = 0.2) -> float:
        return math.sqrt(0.5 * scale * d * math.log(2 * max(n, 1)))

    @beta_module.register_beta("test-needs-horizon", citation="test only")
    def _horizon(*, d: int, horizon: int) -> float:
        return float(d * horizon)

    # a rule returning sqrt(beta) is squared; the schedule's fields reach the rules taking them
    assert make_beta({"kind": name, "scale": 0.4})(3, 50, 7) == pytest.approx(
        0.2 * 3 * math.log(100))
    assert make_beta("constant")(3, 50, 7) == 2.0
    rules = beta_module.BETA_RULES
    assert make_beta("wdbo")(2, 8, 1) == rules["wdbo"](d=2, n=8)
    with pytest.raises(ValueError, match=r"'test-needs-horizon' needs \['horizon'\]"):
        make_beta("test-needs-horizon")
    with pytest.raises(ValueError, match="test-halved-wdbo"):  # listed among the valid names
        make_beta("nope")
