"""Theory figures: the plotted numbers (n*, eps_c, bound minimisers), the files and the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tvbo.analysis.bounds import eps_c, temporal_kernel
from tvbo.analysis.nstar import cubic_response_time, nstar_bruteforce, squared_norm_u
from tvbo.analysis.theory_figures import (
    DATA_COLUMNS,
    DATA_FILE,
    FIGURE_FILES,
    NSTAR_CAP,
    RESPONSE_TIMES,
    eps_c_curves,
    nstar_curves,
    response_text,
    upper_bound_curves,
)
from tvbo.cli import main


@pytest.fixture(scope="module")
def nstar_figure():
    return nstar_curves()


def _marks(frame: pd.DataFrame, mark: str) -> dict[tuple[str, str], float]:
    rows = frame[frame["mark"] == mark]
    return {(r.panel, r.curve): r.x for r in rows.itertuples()}


def test_nstar_marks_are_the_argmax_and_follow_the_papers_ordering(nstar_figure):
    fig, frame = nstar_figure
    assert list(frame.columns) == list(DATA_COLUMNS)
    marks = _marks(frame, "n*")
    kernels = {curve: n for (panel, curve), n in marks.items() if panel == "kernels"}
    # spec_bolt.md §3.2 sanity values (l_T = 100 s, R = 0.05 + 1e-6 n^3)
    assert kernels["Matérn-1/2"] == 72 and kernels["Matérn-3/2"] == 82 and kernels["RBF"] == 89
    # smoother kernels give larger n*; RBF and RQ the largest ([A] Fig. 2, [B] Fig. 1)
    assert kernels["Matérn-1/2"] < kernels["Matérn-3/2"] < kernels["Matérn-5/2"] < kernels["RBF"]
    assert kernels["RQ (α=1)"] >= kernels["Matérn-5/2"]
    # every finite mark is the argmax of the plotted curve (and of a brute-force search)
    points = frame[frame["mark"] == ""]
    for (panel, curve), n_star in marks.items():
        if n_star >= NSTAR_CAP:
            continue
        curve_points = points[(points["panel"] == panel) & (points["curve"] == curve)]
        assert curve_points.loc[curve_points["y"].idxmax(), "x"] == n_star
    assert nstar_bruteforce(temporal_kernel("matern52", 100.0),
                            cubic_response_time((0.05, 0, 0, 1e-6)), 300) == kernels["Matérn-5/2"]
    # the figure shows what the frame says: one line per curve with the plotted values
    left = fig.axes[0]
    first = points[(points["panel"] == "kernels") & (points["curve"] == "Matérn-1/2")]
    np.testing.assert_allclose(left.lines[0].get_ydata(), first["y"].to_numpy())


def test_slower_growing_response_times_give_larger_nstar(nstar_figure):
    _, frame = nstar_figure
    marks = {curve: n for (panel, curve), n in _marks(frame, "n*").items()
             if panel == "response times"}
    names = [f"R(n) {name}" for name in RESPONSE_TIMES]
    constant, linear, quadratic, cubic = (marks[n] for n in names)
    assert constant == NSTAR_CAP  # constant R: n* infinite
    assert linear > quadratic >= cubic
    # constant R: ||u_n||^2 increases over the whole plotted range
    points = frame[(frame["curve"] == names[0]) & (frame["mark"] == "")]
    assert np.all(np.diff(points["y"].to_numpy()) > 0)
    # all four response times agree at n = 100 (the comparison is fair)
    values = {cubic_response_time(c)(100) for c in RESPONSE_TIMES.values()}
    assert max(values) == pytest.approx(min(values))


def test_eps_c_figure_holds_eps_c():
    freqs = np.logspace(-2, 1, 13)
    fig, frame = eps_c_curves(kernels=("matern12", "rbf"), frequencies=freqs)
    rbf = frame[frame["curve"] == "RBF"]
    np.testing.assert_allclose(rbf["x"], freqs)
    np.testing.assert_allclose(rbf["y"], eps_c(1 / freqs, temporal_kernel("rbf", 1.0)))
    for _, group in frame.groupby("curve"):
        assert np.all(np.diff(group["y"].to_numpy()) <= 0)  # decreasing in the frequency
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="frequencies"):
        eps_c_curves(frequencies=np.array([1.0, -1.0]))


def test_upper_bound_figure_marks_each_minimiser():
    _, frame = upper_bound_curves(n_plot=150)
    marks = _marks(frame, "argmin")
    assert marks[("relative excess", "[A] Thm 3.8, eq (7)")] == 89  # = n*
    assert marks[("relative excess", "[A] eq (83), T/n kept")] == 1
    assert abs(marks[("relative excess", "[B] Thm 3.6, eq (4)")] - 89) <= 1
    assert _marks(frame, "n*")[("relative excess", "n*")] == 89
    excess = frame[(frame["panel"] == "relative excess") & (frame["mark"] == "")]
    assert excess["y"].min() == 0.0 and (excess["y"] >= 0).all()
    # left panel: R_T bound / T, and eq (83) never above eq (7)
    per_t = frame[frame["panel"] == "bound / T"].pivot(index="x", columns="curve", values="y")
    assert (per_t["[A] eq (83), T/n kept"] <= per_t["[A] Thm 3.8, eq (7)"] + 1e-12).all()


def test_write_theory_and_cli(tmp_path, capsys):
    """``tvbo theory`` = write_theory: the PNGs and one CSV of every plotted number."""
    assert main(["theory", "--outdir", str(tmp_path), "--dpi", "40"]) == 0
    written = [tmp_path / name for name in [*FIGURE_FILES.values(), DATA_FILE]]
    assert capsys.readouterr().out.split() == [str(p) for p in written]
    assert all(p.stat().st_size > 1000 for p in written)
    data = pd.read_csv(written[-1], keep_default_na=False, na_values=[""])
    assert set(data["figure"]) == {"nstar_curves", "eps_c", "upper_bounds"}
    star = data[(data["figure"] == "nstar_curves") & (data["mark"] == "n*")]
    rbf = star[(star["panel"] == "kernels") & (star["curve"] == "RBF")]
    assert rbf["x"].item() == 89
    assert rbf["y"].item() == pytest.approx(
        squared_norm_u(temporal_kernel("rbf", 100.0), cubic_response_time((0.05, 0, 0, 1e-6)), 89)
    )
    assert set(data["mark"].fillna("")) == {"", "n*", "argmin"}


def test_response_text():
    assert response_text((0.05, 0.0, 0.0, 1e-6)) == "R(n) = 0.05 + 1e-06 n^3 s"
    assert response_text((2.0,)) == "R(n) = 2 s"
