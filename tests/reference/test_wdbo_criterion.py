"""tvbo's W-DBO relevance (tvbo/algorithms/wdbo/relevance.py) against the public C++ criterion.

``wdbo_criterion.wasserstein_criterion`` (wdbo-criterion 2.2.1, the code ``wdbo-algo`` calls in
``clean``) and :func:`tvbo.algorithms.wdbo.relevance.relevance` on the same data, hyperparameters
and present time, spatial Matérn-5/2 (as both W-DBO codes use), time in the library's unit (over
600 s, as ``w-dbo-paper``; the normalised criterion does not depend on the unit).

* Matérn-3/2 time (every synthetic benchmark) and Matérn-5/2: equal to 1e-6 relative wherever
  the relevance is not lost in cancellation (values below 1e-6 of the largest are differences
  of nearly equal numbers; the C++ then often returns its -1 sentinel where tvbo clips to 0,
  and both cleaning loops remove such a point first).
* Matérn-1/2 (WLAN): the C++ floors every time distance at 1e-5 (library units) before the
  kernel, so its K has ``exp(-1e-5 / l_T)`` instead of 1 on the diagonal: first order for the
  non-differentiable Matérn-1/2 (second order, invisible, for 3/2 and 5/2). With time over
  600 s and l_T ~ 60 s that is a 1e-4 relative difference (up to 1e-3 in the criterion); with
  time in seconds it shrinks below 2e-6 (checked below). tvbo's convolution is the exact
  integral (checked against quadrature).
* RBF time: the C++ (and the paper's eq. (70)) write ``2 l^2`` where the exact convolution has
  ``4 l^2`` (tvbo/gp/convolutions.py); tvbo keeps the exact form, a documented difference of
  30-50 % (a strict xfail pins it). No benchmark of the papers uses an RBF in time.

Skipped without the ``reference`` extra.
"""

from __future__ import annotations

import numpy as np
import pytest

wdbo_criterion = pytest.importorskip("wdbo_criterion")

from tests.reference._data import dataset, standardized  # noqa: E402
from tvbo.algorithms.wdbo.relevance import relevance  # noqa: E402

UNIT = 600.0
#: (d, n, seed, (signal, l_S, l_T seconds, noise))
CASES = [(1, 10, 3, (1.0, 0.2, 60.0, 0.02)), (2, 20, 0, (1.2, 0.3, 120.0, 0.05)),
         (3, 25, 1, (0.8, 0.5, 90.0, 0.03)), (4, 15, 2, (1.5, 0.9, 400.0, 0.2)),
         (3, 40, 4, (1.1, 0.35, 200.0, 0.01))]
_CPP_TIME = {"matern12": ("MaternKernel", [0.5]), "matern32": ("MaternKernel", [1.5]),
             "matern52": ("MaternKernel", [2.5]), "rbf": ("RBFKernel", [])}


def _both(case, time_kernel: str, unit: float = UNIT) -> tuple[np.ndarray, np.ndarray]:
    d, n, seed, (lam, ls, lt, nv) = case
    X, T, y = dataset(d, n, seed)
    ys = standardized(y)
    t_now = float(T[-1]) + 5.0
    cls, args = _CPP_TIME[time_kernel]
    cpp = np.asarray(wdbo_criterion.wasserstein_criterion(
        np.ascontiguousarray(X), np.ascontiguousarray(ys), np.ascontiguousarray(T / unit),
        n, d, lam, nv, wdbo_criterion.MaternKernel(ls, 2.5),
        getattr(wdbo_criterion, cls)(*([lt / unit] + args)), t_now / unit, 0, 1))
    ours = relevance(X, T, ys, signal_var=lam, lengthscale_space=ls, lengthscale_time=lt,
                     noise_var=nv, time_kernel=time_kernel, t_now=t_now)
    return cpp, ours


@pytest.mark.parametrize("time_kernel", ["matern32", "matern52"])
@pytest.mark.parametrize("case", CASES)
def test_relevance_matches_the_cpp_criterion(case, time_kernel):
    cpp, ours = _both(case, time_kernel)
    resolved = cpp > 1e-6 * cpp.max()
    assert resolved.sum() >= len(cpp) // 2
    np.testing.assert_allclose(ours[resolved], cpp[resolved], rtol=1e-6)
    # the least relevant resolved point (the one a cleaning pass weighs first) is the same
    assert np.argmin(np.where(resolved, ours, np.inf)) == np.argmin(np.where(resolved, cpp, np.inf))


@pytest.mark.parametrize("case", CASES)
def test_matern12_differs_from_the_cpp_by_its_time_distance_floor(case):
    """The difference scales with 1e-5 / l_T in the library's unit: the C++'s floor."""
    errors = {}
    for unit in (UNIT, 1.0):
        cpp, ours = _both(case, "matern12", unit)
        resolved = cpp > 1e-6 * cpp.max()
        errors[unit] = np.max(np.abs(ours[resolved] - cpp[resolved]) / cpp[resolved])
    assert 1e-5 < errors[UNIT] < 2e-3
    assert errors[1.0] < 2e-6
    assert errors[1.0] < errors[UNIT] / 50


def test_matern12_time_convolution_is_exact():
    from scipy.integrate import quad

    from tvbo.gp.convolutions import time_convolution

    ell, t0 = 0.2, 1.0
    for ti, tj in ((0.5, 0.9), (0.95, 0.99), (0.1, 0.7)):
        exact = quad(lambda t, a=ti, b=tj: np.exp(-abs(t - a) / ell - abs(t - b) / ell),
                     t0, np.inf, epsabs=1e-15, epsrel=1e-13)[0]
        ours = float(time_convolution("matern12", ell, np.array([ti]), np.array([tj]),
                                      t0).ravel()[0])
        assert ours == pytest.approx(exact, rel=1e-12)


@pytest.mark.xfail(strict=True, reason="documented: the C++ RBF time convolution uses 2 l^2, "
                   "tvbo the exact 4 l^2 (tvbo/gp/convolutions.py)")
def test_rbf_time_matches_the_cpp_criterion():
    cpp, ours = _both(CASES[1], "rbf")
    np.testing.assert_allclose(ours, cpp, rtol=1e-2)
