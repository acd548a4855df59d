"""Theory figures of BOLT: n* curves ([A] Fig. 2 / [B] Fig. 1), eps_c ([A] Fig. 1), upper bounds.

The papers give neither the constants nor the kernel lists of these figures (spec_bolt.md §13
item 15), so the defaults below are our choices, stated here and written into the CSV beside
every figure:

* **n* curves** -- ``l_T = 100 s`` and ``R(n) = 0.05 + 1e-6 n^3`` s on the left (the spec's
  sanity values, n* = 72 / 82 / 89 for Matérn-1/2 / Matérn-3/2 / RBF), five temporal
  kernels; on the right an RBF ``k_T`` with four response times that all take the same value
  at ``n = 100`` (1.05 s) but grow as ``n^0`` (constant), ``n``, ``n^2``, ``n^3``. A constant
  ``R`` makes ``||u_n||^2`` increase forever; its n* is reported as infinite when the direct
  search runs into the cap :data:`NSTAR_CAP`.
* **eps_c** -- as [A] Fig. 1: ``d = 4``, ``L = l_S = l_T = lambda = 1``, sampling frequencies
  ``1/c`` from 0.01 to ~32 Hz. The spatial kernel (needed for ``k_S(sqrt d)``) is not given by
  the paper; we use the papers' experimental spatial kernel, Matérn-5/2. eps_c decays like
  ``exp(-const / sigma_c^2)`` and underflows to 0 within a few decades of frequency, so the
  y-axis is cut at :data:`EPS_FLOOR` (the CSV keeps every value, zeros included).
* **upper bounds** -- [A] eq (7), [A] eq (83) (the factor T/n kept) and [B] eq (4) as functions
  of the maximal dataset size ``n`` for ``T = 10^4`` iterations and the left panel's RBF and
  cubic ``R``, with :class:`tvbo.analysis.bounds.BoundSettings` defaults. The bounds differ by
  orders of magnitude and depend on ``n`` only through a tiny term, so the second panel shows
  the relative excess over each bound's own minimum, where its minimiser is visible.

Every figure function returns ``(Figure, DataFrame)``: the frame holds the plotted numbers
(long form, see :data:`DATA_COLUMNS`) so tests check values, not only that a PNG exists.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tvbo.algorithms.bolt.nstar import cubic_response_time, nstar, squared_norm_u
from tvbo.analysis.bounds import (
    BoundSettings,
    TemporalKernel,
    eps_c,
    temporal_kernel,
    upper_bound_icml,
    upper_bound_metronome,
)
from tvbo.analysis.figure_output import FigureOptions

#: temporal lengthscale (s) and response time (s) of the n* and upper-bound figures
NSTAR_LENGTHSCALE = 100.0
NSTAR_RESPONSE: tuple[float, ...] = (0.05, 0.0, 0.0, 1e-6)
#: kernels of the left n* panel and of the eps_c figure, roughest first
KERNELS: tuple[str, ...] = ("matern12", "matern32", "matern52", "rq", "rbf")
#: response times of the right n* panel: equal (1.05 s) at n = 100, growing as n^0 ... n^3
RESPONSE_TIMES: dict[str, tuple[float, ...]] = {
    "constant: 1.05": (1.05,),
    "linear: 0.05 + 1e-2 n": (0.05, 1e-2),
    "quadratic: 0.05 + 1e-4 n²": (0.05, 0.0, 1e-4),
    "cubic: 0.05 + 1e-6 n³": (0.05, 0.0, 0.0, 1e-6),
}
#: dataset sizes shown in the n* and upper-bound figures
N_PLOT = 300
#: the direct search's cap: reaching it means n* is infinite (bounded R) or beyond it
NSTAR_CAP = 10_000
#: sampling frequencies 1/c (Hz) of the eps_c figure, and the bottom of its y-axis
FREQUENCIES = np.logspace(-2.0, 1.5, 141)
EPS_FLOOR = 1e-20
#: iterations T of the upper-bound figure
BOUND_ITERATIONS = 10_000

DATA_COLUMNS: tuple[str, ...] = ("figure", "panel", "curve", "x_name", "x", "y_name", "y", "mark")
FIGURE_FILES: dict[str, str] = {
    "nstar_curves": "nstar_curves.png",
    "eps_c": "eps_c_vs_frequency.png",
    "upper_bounds": "upper_bounds_vs_n.png",
}
DATA_FILE = "theory_data.csv"
PANEL_SIZE = (5.0, 3.8)


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{"mark": "", **row} for row in rows], columns=list(DATA_COLUMNS))


def _figure(ncols: int) -> tuple[Figure, list[Axes]]:
    fig = Figure(figsize=(PANEL_SIZE[0] * ncols, PANEL_SIZE[1]), layout="constrained")
    with sns.axes_style("whitegrid"):
        axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def response_text(coeffs: Sequence[float]) -> str:
    """``R(n) = 0.05 + 1e-06 n^3 s`` (the non-zero terms of a cubic response time)."""
    terms = [
        f"{float(c):g}" + ("" if k == 0 else " n" if k == 1 else f" n^{k}")
        for k, c in enumerate(coeffs)
        if float(c) != 0.0
    ]
    return "R(n) = " + (" + ".join(terms) if terms else "0") + " s"


def _nstar_label(n_star: int, cap: int) -> str:
    return "∞ (search cap reached)" if n_star >= cap else str(n_star)


def nstar_curve(
    kernel: TemporalKernel, coeffs: Sequence[float], *, n_plot: int = N_PLOT, cap: int = NSTAR_CAP
) -> tuple[np.ndarray, np.ndarray, int]:
    """``(n, ||u_n||^2, n*)`` for ``n = 1..n_plot``; n* by the papers' direct search up to ``cap``.

    A constant ``R`` (no coefficient beyond ``c0``) gets n* = ``cap``, i.e. infinite, as in the
    papers and in BOLT itself: the search would otherwise stop where ``Delta u`` underflows to 0
    (lags of ~27 lengthscales for an RBF), a floating-point artefact, not a maximum.
    """
    R = cubic_response_time(coeffs)
    n = np.arange(1, int(n_plot) + 1)
    values = np.array([squared_norm_u(kernel, R, int(m)) for m in n])
    if not any(float(c) != 0.0 for c in tuple(coeffs)[1:]):
        return n, values, int(cap)
    return n, values, nstar(kernel, R, n_max=int(cap))


def nstar_curves(
    *,
    kernels: Sequence[str] = KERNELS,
    lengthscale: float = NSTAR_LENGTHSCALE,
    response: Sequence[float] = NSTAR_RESPONSE,
    response_times: Mapping[str, Sequence[float]] = RESPONSE_TIMES,
    n_plot: int = N_PLOT,
    cap: int = NSTAR_CAP,
) -> tuple[Figure, pd.DataFrame]:
    """[A] Fig. 2 / [B] Fig. 1: ``||u_n||^2`` vs ``n`` with the argmax n* marked.

    Left: several temporal kernels, cubic ``R``. Right: RBF ``k_T``, several ``R``. The frame
    has one row per plotted point plus one ``mark == "n*"`` row per curve (``x`` = n*, ``y`` =
    ``||u_{n*}||^2``; ``x`` = ``cap`` when the search reached the cap, i.e. n* infinite).
    """
    fig, (left, right) = _figure(2)
    rows: list[dict] = []
    panels = [
        ("kernels", left, [(temporal_kernel(k, lengthscale), tuple(response)) for k in kernels]),
        (
            "response times",
            right,
            [(temporal_kernel("rbf", lengthscale), tuple(c)) for c in response_times.values()],
        ),
    ]
    curve_names = {"kernels": None, "response times": list(response_times)}
    palette = sns.color_palette("colorblind", max(len(kernels), len(response_times)))
    for panel, ax, curves in panels:
        for i, (kernel, coeffs) in enumerate(curves):
            names = curve_names[panel]
            name = kernel.label if names is None else f"R(n) {names[i]}"
            n, values, n_star = nstar_curve(kernel, coeffs, n_plot=n_plot, cap=cap)
            label = f"{name} (n* = {_nstar_label(n_star, cap)})"
            ax.plot(n, values, color=palette[i], label=label)
            rows += [
                {"figure": "nstar_curves", "panel": panel, "curve": name, "x_name": "n",
                 "x": float(m), "y_name": "||u_n||^2", "y": float(v)}
                for m, v in zip(n, values, strict=True)
            ]
            star_value = squared_norm_u(kernel, cubic_response_time(coeffs), n_star)
            rows.append({"figure": "nstar_curves", "panel": panel, "curve": name, "x_name": "n",
                         "x": float(n_star), "y_name": "||u_n||^2", "y": star_value, "mark": "n*"})
            if n_star <= n_plot:
                ax.plot([n_star], [star_value], marker="*", markersize=11, color=palette[i],
                        markeredgecolor="black", linestyle="none")
        ax.set_xlabel("maximal dataset size n")
        ax.set_ylabel(r"$\|u_n\|_2^2$")
        ax.legend(fontsize="small", loc="best")
    left.set_title(
        f"temporal kernels, l_T = {lengthscale:g} s, {response_text(response)}", fontsize="medium"
    )
    right.set_title(f"RBF k_T, l_T = {lengthscale:g} s, several R(n)", fontsize="medium")
    return fig, _frame(rows)


def eps_c_curves(
    *,
    kernels: Sequence[str] = KERNELS,
    frequencies: np.ndarray = FREQUENCIES,
    d: int = 4,
    lipschitz: float = 1.0,
    lengthscale: float = 1.0,
    space_lengthscale: float = 1.0,
    signal_var: float = 1.0,
    space_kernel: str = "matern52",
    floor: float = EPS_FLOOR,
) -> tuple[Figure, pd.DataFrame]:
    """[A] Fig. 1: the lower-bound slope eps_c vs the sampling frequency ``1/c``, log-log."""
    frequencies = np.asarray(frequencies, dtype=float)
    if frequencies.ndim != 1 or frequencies.size < 2 or np.any(~(frequencies > 0)):
        raise ValueError("frequencies must be a 1-d array of at least 2 positive numbers (Hz)")
    fig, (ax,) = _figure(1)
    palette = sns.color_palette("colorblind", len(kernels))
    rows: list[dict] = []
    for i, name in enumerate(kernels):
        kernel = temporal_kernel(name, lengthscale)
        values = eps_c(
            1.0 / frequencies, kernel, d=d, lipschitz=lipschitz, signal_var=signal_var,
            space_kernel=space_kernel, space_lengthscale=space_lengthscale,
        )
        ax.plot(frequencies, np.where(values > 0, values, np.nan), color=palette[i],
                label=kernel.label)
        rows += [
            {"figure": "eps_c", "panel": "eps_c", "curve": kernel.label, "x_name": "1/c [Hz]",
             "x": float(f), "y_name": "eps_c", "y": float(v)}
            for f, v in zip(frequencies, values, strict=True)
        ]
    ax.set_xscale("log")
    ax.set_yscale("log")
    finite = [r["y"] for r in rows if r["y"] > 0]
    ax.set_ylim(floor, 3.0 * max(finite) if finite else 1.0)
    ax.set_xlabel("sampling frequency 1/c [Hz]")
    ax.set_ylabel(r"regret slope $\epsilon_c$")
    ax.set_title(
        f"d = {d}, L = {lipschitz:g}, l_S = {space_lengthscale:g}, l_T = {lengthscale:g}, "
        f"λ = {signal_var:g}; k_S {space_kernel}",
        fontsize="medium",
    )
    ax.legend(title="temporal kernel", fontsize="small", loc="lower left")
    return fig, _frame(rows)


def upper_bound_curves(
    *,
    settings: BoundSettings | None = None,
    iterations: int = BOUND_ITERATIONS,
    kernel: str = "rbf",
    lengthscale: float = NSTAR_LENGTHSCALE,
    response: Sequence[float] = NSTAR_RESPONSE,
    n_plot: int = N_PLOT,
) -> tuple[Figure, pd.DataFrame]:
    """The upper bounds on ``R_T`` as functions of the maximal dataset size ``n``.

    Left: ``R_T`` bound / ``T`` (a bound on the average regret). Right: ``bound(n) / min_n
    bound - 1``, log scale, with each bound's minimiser marked (``mark == "argmin"``) and
    Recommendation 1's n* as a vertical line (``mark == "n*"`` row, curve ``"n*"``).
    """
    settings = settings or BoundSettings()
    k_T = temporal_kernel(kernel, lengthscale)
    R = cubic_response_time(response)
    n = np.arange(1, int(n_plot) + 1)
    T = int(iterations)
    curves = {
        "[A] Thm 3.8, eq (7)": upper_bound_icml(n, T, k_T, R, settings.with_(icml_form="eq7")),
        "[A] eq (83), T/n kept": upper_bound_icml(n, T, k_T, R, settings.with_(icml_form="eq83")),
        "[B] Thm 3.6, eq (4)": upper_bound_metronome(n, T, k_T, R, settings),
    }
    n_star = nstar(k_T, R, n_max=NSTAR_CAP)
    fig, (left, right) = _figure(2)
    palette = sns.color_palette("colorblind", len(curves))
    rows: list[dict] = []
    for i, (name, bound) in enumerate(curves.items()):
        per_iteration = bound / T
        excess = bound / np.nanmin(bound) - 1.0
        best = int(n[np.nanargmin(bound)])
        left.plot(n, per_iteration, color=palette[i], label=name)
        right.plot(n, np.where(excess > 0, excess, np.nan), color=palette[i],
                   label=f"{name}: argmin n = {best}")
        right.axvline(best, color=palette[i], linestyle=":", linewidth=1)
        for panel, values, y_name in (("bound / T", per_iteration, "R_T bound / T"),
                                      ("relative excess", excess, "bound / min bound - 1")):
            rows += [
                {"figure": "upper_bounds", "panel": panel, "curve": name, "x_name": "n",
                 "x": float(m), "y_name": y_name, "y": float(v)}
                for m, v in zip(n, values, strict=True)
            ]
        rows.append({"figure": "upper_bounds", "panel": "relative excess", "curve": name,
                     "x_name": "n", "x": float(best), "y_name": "bound / min bound - 1",
                     "y": 0.0, "mark": "argmin"})
    rows.append({"figure": "upper_bounds", "panel": "relative excess", "curve": "n*",
                 "x_name": "n", "x": float(n_star), "y_name": "", "y": math.nan, "mark": "n*"})
    right.axvline(n_star, color="black", linestyle="--", linewidth=1,
                  label=f"Recommendation 1: n* = {_nstar_label(n_star, NSTAR_CAP)}")
    left.set_yscale("log")
    right.set_yscale("log")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel("maximal dataset size n")
    left.set_ylabel(r"upper bound on $R_T$ / T")
    right.set_ylabel("bound / its minimum - 1")
    s = settings
    left.set_title(
        f"T = {T}, {k_T.label} k_T (l_T = {lengthscale:g} s), "
        f"{response_text(response)}\n"
        f"d = {s.d}, λ = {s.signal_var:g}, σ0² = {s.noise_var:g}, δ = {s.delta:g}, "
        f"L = {s.lipschitz:g}, a = {s.a:g}, b = {s.b:g}, β {s.beta_form}",
        fontsize="small",
    )
    left.legend(fontsize="small")
    right.legend(fontsize="small")
    return fig, _frame(rows)


def theory_figures() -> dict[str, tuple[Figure, pd.DataFrame]]:
    """Every theory figure with its defaults, keyed like :data:`FIGURE_FILES`."""
    return {
        "nstar_curves": nstar_curves(),
        "eps_c": eps_c_curves(),
        "upper_bounds": upper_bound_curves(),
    }


def write_theory(outdir: str | Path, *, options: FigureOptions | None = None) -> list[Path]:
    """Save the theory figures (format, dpi and style of ``options``) and one CSV of every
    plotted number under ``outdir``."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    options = options or FigureOptions()
    written, frames = [], []
    with options.context():
        for name, (fig, frame) in theory_figures().items():
            written.append(options.save(fig, outdir, Path(FIGURE_FILES[name]).stem))
            frames.append(frame)
    data = outdir / DATA_FILE
    pd.concat(frames, ignore_index=True).to_csv(data, index=False)
    written.append(data)
    return written
