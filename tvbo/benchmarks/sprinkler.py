"""The 8-D garden sprinkler computer model (BOKE paper, Section 5.2, Fig. 8).

Source of the model
-------------------
Siebertz, van Bebber & Hochkirchen, *Statistische Versuchsplanung - Design of Experiments (DoE)*,
Springer (1st ed. 2010, 2nd ed. 2017), the garden sprinkler ("Rasensprenger") example: a rotating
two-arm lawn sprinkler whose rotation speed follows from a torque balance between the jets'
reaction and the bearing friction, whose water consumption follows from an energy balance over
supply line, nozzles and friction losses, and whose spray range follows from the flight of a drop
with air drag. The BOKE paper (Zhu et al.) takes it from the R package *CompModels*
(Pourmohamad, ``sprinkler()``; Pourmohamad & Lee 2021), whose inputs and domains are used here.
The book's text was not available; the equations below were read off the authors' Octave
listing of the model (``Rasensprenger.m``, (c) 2002-2009 K. Siebertz / D. van Bebber, as
published with a teaching app at github.com/mariobecerra/garden_sprinkler_simulator), written
out as mathematics and implemented here from them (vectorised; no code was copied), then
checked against CompModels' documented example (:data:`COMPMODELS_EXAMPLE`), which this module
reproduces to all printed digits. CompModels' own C source is obfuscated; it was only read
to find its start value of the line loss and the true order of its outputs (both below).

Inputs (CompModels order and domains; SI units inside the model)
---------------------------------------------------------------
====  ========================================  ==============  ==========================
x1    vertical nozzle angle alpha               [0, 90] deg     elevation of the jet
x2    tangential nozzle angle beta              [0, 90] deg     0: jet fully tangential
x3    nozzle cross-section A                    [2e-6, 4e-6]    m^2 (one nozzle per arm)
x4    sprinkler head diameter d                 [0.1, 0.2]      m (arm radius R = d / 2)
x5    dry (Coulomb) friction moment M_t         [0.01, 0.02]    N m
x6    fluid (speed-proportional) friction M_f   [0.01, 0.02]    N m s (per rev/s)
x7    entrance pressure p_in                    [1, 2]          bar
x8    supply-line diameter d_zul                [5, 10]         mm
====  ========================================  ==============  ==========================

CompModels calls x5 "dynamic" and x6 "static" friction; in the book x5 is the dry friction
moment (the torque needed to start turning) and x6 the coefficient of the speed-proportional
fluid friction. The model is what matters: x5 enters as ``M_t``, x6 as ``M_f`` below.

The equations (g = 10 m/s^2, rho = 1000 kg/m^3, as in the book)
-----------------------------------------------------------------
Pressure p = 1e5 p_in Pa, head h = p / (rho g), arm radius R = d / 2, and c = cos(alpha) cos(beta)
the share of the jet speed that points tangentially.

1. Supply-line loss ``dp_zul = c_v Q^2`` with the book's fitted coefficient (valid for
   5-10 mm lines, Q in m^3/s):  ``c_v = 10^(5.0704 - 0.579413 d_zul + 0.0196432 d_zul^2) 60000^2``.
2. Standstill: Bernoulli over line and nozzles, ``p = c_v Q0^2 + rho/2 (Q0 / (2A))^2``, so
   ``Q0 = sqrt(p / (c_v + rho / (8 A^2)))``; jet speed ``v0 = Q0 / (2A)``; reaction torque
   ``M0 = rho Q0 R v0 c``. If ``M0 <= M_t`` the sprinkler does not turn: speed 0, the jet leaves
   at ``v0``.
3. Turning at angular speed ``omega`` (n = omega / 2 pi rev/s): friction torque
   ``M_soll = M_t + n M_f``; the energy left for the jets is ``p_en = p - dp - dp_zul`` with the
   friction power as a pressure loss ``dp = |M_soll omega| / Q``; absolute jet speed
   ``v_a = sqrt(2 p_en / rho)``; the jet speed relative to the arm, ``v_r``, solves
   ``v_a^2 = v_r^2 - 2 v_r (omega R) c + (omega R)^2``, i.e.
   ``v_r = omega R c + sqrt(v_a^2 - (omega R)^2 (1 - c^2))``; tangential absolute speed
   ``v_t = v_r c - omega R``; flow ``Q = 2 A v_r``; reaction torque ``M = 2 rho A v_r R v_t``.
   The book finds the equilibrium ``M = M_soll`` by a damped multiplicative fixed point:
   ``omega <- omega (1 + 0.1 min(|M - M_soll| / |M|, p_en / (2p)))^sign(M - M_soll)``, started
   at ``omega = 0.2 pi |M0' - M_t| / (M_f + 5e-4)`` with ``M0' = 4 rho A R g h c``, stopped at a
   relative torque error of 0.5 %, or when ``p_en < 0.01 p`` (no pressure left: jet speed 0), or
   ``v_a < omega R sqrt(1 - c^2)`` (no real ``v_r``), or after 10000 steps, or when
   ``omega < 0.0062`` (stalled: speed 0). The first pressure losses are
   ``dp = |M_soll omega| / (A sqrt(2p/rho))`` and ``dp_zul = 0.1 p`` (CompModels' start value;
   the book's listing starts from ``c_v (A sqrt(2p/rho))^2``, see ``line_loss_start``). Both
   reach the same equilibrium within the 0.5 % tolerance but not to the last digit.
4. Range: one drop of the nozzle's diameter ``D = sqrt(4A / pi)`` leaves 1 mm above the ground
   at speed ``v_a`` and elevation ``alpha`` and flies with gravity and drag
   ``F = 1.25/2 v^2 (pi/4) D^2 zeta(Re)``, ``zeta = 24/Re (1 + 0.11 sqrt(Re))^2`` (Abraham 1970),
   ``Re = v D / nu_air`` (``nu_air = 1.82e-5 / 1.25``), integrated by explicit Euler with
   ``dt = 5 ms`` until it lands (or its speed falls below 1 cm/s); the range is the horizontal
   distance flown.
5. Outputs: consumption ``60000 Q`` (l/min, with the last ``v_r``), speed ``n`` (rev/s) and
   range (m).

Objective: the range, maximised
-------------------------------
The BOKE paper says it "optimize[s] the spray range" (Section 5.2), so the objective is the
range in metres, to maximise (tvbo's convention; ``raw`` is its negative). A warning for anyone
comparing with the package: CompModels documents its outputs as (consumption, speed, range) but
returns (consumption, range, speed) -- its documented example ``(4.218397, 5.321142, 3.124046)``
is 4.2 l/min, a 5.3 m range and 3.1 rev/s, as this module reproduces to all printed digits. A
user who took "the third output" as the range optimised the rotation speed; which of the two the
paper's Fig. 8 shows cannot be told from its text. The speed is available from :func:`simulate`
but not offered as an objective: its value carries the fixed point's 0.5 % stopping jitter (it
jumps by ~1 % between neighbouring inputs), so its maximum is not a meaningful reference.

The model is deterministic (noise_var 0 by default, cost 0 s, horizon 600 s as the other static
benchmarks) and non-smooth: the fixed point stops at a 0.5 % torque error and the Euler flight
ends on a whole step, so the range jumps by up to ``v_h dt`` (about 2 cm) where the drop needs
one step more, and it depends on the number of fixed-point steps taken. Its best known maximum,
8.33808 m (:data:`OPTIMUM_Z`, :data:`OPTIMUM_RANGE`), is such an artefact: a sprinkler that just
barely turns (0.001 rev/s, elevation 32.06 deg, largest nozzle, 2 bar, 10 mm line) stops after
two fixed-point steps with a jet 0.04 % faster than a standing sprinkler's, because the first
step's line loss is CompModels' start value (with the book's start the same inputs give
8.3235 m; the best standing sprinkler reaches 8.3358 m). It is the model the paper optimised,
so it is the reference here; eight differential-evolution runs (:func:`search_optimum`) agree on
it to 3e-7 m, and the tests check it against a dense random sample. Regret is measured against
it; the engine's ``refine_f_star`` still credits any query that beats it (regret never < 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tvbo.benchmarks.base import Benchmark
from tvbo.benchmarks.static import STATIC_OPTIONS, StaticBenchmark, static_factory

__all__ = [
    "COMPMODELS_EXAMPLE",
    "LOWER",
    "OPTIMUM_RANGE",
    "OPTIMUM_Z",
    "UPPER",
    "Sprinkler",
    "make_sprinkler",
    "search_optimum",
    "simulate",
]

#: input domains in CompModels' order (deg, deg, m^2, m, N m, N m s, bar, mm)
LOWER: tuple[float, ...] = (0.0, 0.0, 2e-6, 0.1, 0.01, 0.01, 1.0, 5.0)
UPPER: tuple[float, ...] = (90.0, 90.0, 4e-6, 0.2, 0.02, 0.02, 2.0, 10.0)
INPUT_NAMES: tuple[str, ...] = (
    "alpha_deg",
    "beta_deg",
    "nozzle_area_m2",
    "head_diameter_m",
    "dry_friction_Nm",
    "fluid_friction_Nms",
    "pressure_bar",
    "line_diameter_mm",
)

#: CompModels' documented example: sprinkler(33, 18, 2e-6, 0.18, 0.015, 0.0199, 1.54, 7.5)
#: -> (consumption l/min, range m, speed rev/s) in the order the package really returns them
COMPMODELS_EXAMPLE: tuple[tuple[float, ...], tuple[float, float, float]] = (
    (33.0, 18.0, 2e-6, 0.18, 0.015, 0.0199, 1.54, 7.5),
    (4.218397, 5.321142, 3.124046),
)

# constants of the book's model
G = 10.0  # gravity, m/s^2
RHO = 1000.0  # water density, kg/m^3
RHO_AIR = 1.25  # air density, kg/m^3
NU_AIR = 1.82e-5 / RHO_AIR  # kinematic viscosity of air, m^2/s
TORQUE_TOL = 0.005  # relative torque error that ends the fixed point
MAX_STEPS = 10000  # fixed-point step limit
STALL_OMEGA = 0.0062  # rad/s below which the sprinkler counts as stalled
DT_FLIGHT = 0.005  # Euler step of the drop's flight, s
MAX_FLIGHT_STEPS = 100_000  # safety bound; a drop lands after at most ~1000 steps
LINE_LOSS_STARTS: tuple[str, ...] = ("compmodels", "book")


def _line_coefficient(d_zul_mm: np.ndarray) -> np.ndarray:
    """Supply-line loss coefficient c_v (Pa s^2 / m^6): dp = c_v Q^2, the book's 5-10 mm fit."""
    exponent = 5.0704 - 0.579413 * d_zul_mm + 0.0196432 * d_zul_mm**2
    return 10.0**exponent * 60000.0**2


def simulate(z: Any, *, line_loss_start: str = "compmodels") -> dict[str, np.ndarray]:
    """Run the sprinkler model at inputs ``z`` of shape ``(..., 8)`` (original units).

    Returns a dict of arrays of shape ``z.shape[:-1]``: ``consumption`` (l/min), ``speed``
    (rev/s), ``range`` (m), ``jet_speed`` (m/s, absolute, at the nozzle), ``rotating`` (bool:
    the standstill torque beat the dry friction), ``iterations`` (fixed-point steps) and
    ``flight_steps`` (Euler steps of the drop). Vectorised: every row runs the book's
    algorithm; rows that have stopped are frozen while the others continue.
    """
    if line_loss_start not in LINE_LOSS_STARTS:
        raise ValueError(
            f"line_loss_start must be one of {', '.join(LINE_LOSS_STARTS)}; "
            f"got {line_loss_start!r}"
        )
    z = np.asarray(z, float)
    if z.ndim == 0 or z.shape[-1] != 8:
        raise ValueError(f"sprinkler inputs must have last dimension 8, got shape {z.shape}")
    if not np.all(np.isfinite(z)):
        raise ValueError("sprinkler inputs must be finite")
    lo, hi = np.asarray(LOWER), np.asarray(UPPER)
    span = hi - lo
    outside = (z < lo - 1e-9 * span) | (z > hi + 1e-9 * span)
    if np.any(outside):
        bad = [INPUT_NAMES[j] for j in range(8) if np.any(outside[..., j])]
        raise ValueError(
            f"sprinkler inputs outside the domain for {', '.join(bad)}; "
            f"domains: {dict(zip(INPUT_NAMES, zip(LOWER, UPPER, strict=True), strict=True))}"
        )
    shape = z.shape[:-1]
    z = np.clip(z, lo, hi).reshape(-1, 8)
    alpha = np.deg2rad(z[:, 0])
    beta = np.deg2rad(z[:, 1])
    A, d, m_t, m_f = z[:, 2], z[:, 3], z[:, 4], z[:, 5]
    p = z[:, 6] * 1e5
    c_v = _line_coefficient(z[:, 7])
    h = p / (RHO * G)
    R = d / 2.0
    ca, sa = np.cos(alpha), np.sin(alpha)
    c = ca * np.cos(beta)

    # standstill (step 2)
    q0 = np.sqrt(p / (c_v + RHO / (8.0 * A**2)))
    v0 = q0 / (2.0 * A)
    torque = RHO * q0 * R * v0 * c
    rotating = torque > m_t

    # fixed point for the turning sprinkler (step 3)
    m0 = 2.0 * RHO * A * R * 2.0 * G * h * c
    omega = 2.0 * np.pi * 0.1 * np.abs(m0 - m_t) / (m_f + 5.0e-4)
    va_static = np.sqrt(2.0 * p / RHO)
    dp = np.abs((m_t + omega * m_f) * omega) / (A * va_static)
    dp_line = 0.1 * p if line_loss_start == "compmodels" else c_v * (A * va_static) ** 2
    m_diff = m0.copy()
    n = np.zeros_like(p)
    va = v0.copy()
    vr = v0.copy()
    iterations = np.zeros(p.shape, int)
    active = rotating & (np.abs(m_diff) > TORQUE_TOL * np.abs(torque))
    with np.errstate(divide="ignore", invalid="ignore"):
        while np.any(active):
            n = np.where(active, omega / (2.0 * np.pi), n)
            m_soll = m_t + n * m_f
            v_arm = omega * R
            p_en = p - dp - dp_line
            no_pressure = active & (p_en < 0.01 * p)
            va = np.where(no_pressure, 0.0, va)
            live = active & ~no_pressure
            va = np.where(live, np.sqrt(np.maximum(2.0 * p_en / RHO, 0.0)), va)
            disc = va**2 + v_arm**2 * (c**2 - 1.0)
            live &= disc >= 0.0
            vr = np.where(live, v_arm * c + np.sqrt(np.maximum(disc, 0.0)), vr)
            m_new = 2.0 * RHO * vr * A * R * (vr * c - v_arm)
            torque = np.where(live, m_new, torque)
            m_diff = np.where(live, m_new - m_soll, m_diff)
            step = 0.1 * np.minimum(np.abs(m_diff / torque), 0.5 * p_en / p)
            omega = np.where(live, omega * (1.0 + step) ** np.sign(m_diff), omega)
            q = 2.0 * vr * A
            dp = np.where(live, np.abs(m_soll * omega) / q, dp)
            dp_line = np.where(live, c_v * q**2, dp_line)
            iterations = iterations + live
            over = live & (iterations > MAX_STEPS)
            stalled = live & ~over & (omega < STALL_OMEGA)
            n = np.where(stalled, 0.0, n)
            active = live & ~over & ~stalled & (np.abs(m_diff) > TORQUE_TOL * np.abs(torque))
    consumption = 2.0 * vr * A * 60000.0

    # flight of a drop (step 4)
    diameter = np.sqrt(4.0 * A / np.pi)
    mass = np.pi / 6.0 * diameter**3 * RHO
    s = np.zeros_like(p)
    height = np.full_like(p, 1.0e-3)
    vh, vv = va * ca, va * sa
    v, cos_t, sin_t = va.copy(), ca.copy(), sa.copy()
    flight = np.zeros(p.shape, int)
    active = v >= 0.01
    while np.any(active):
        if flight.max() >= MAX_FLIGHT_STEPS:
            raise RuntimeError("sprinkler: a drop did not land within the step bound")
        re = v * diameter / NU_AIR
        with np.errstate(divide="ignore", invalid="ignore"):
            zeta = 24.0 / re * (1.0 + 0.11 * np.sqrt(re)) ** 2
        accel = 0.5 * RHO_AIR * v**2 * (np.pi / 4.0) * diameter**2 * zeta / mass
        s = np.where(active, s + vh * DT_FLIGHT, s)
        height = np.where(active, height + vv * DT_FLIGHT, height)
        vh_new = vh - accel * cos_t * DT_FLIGHT
        vv_new = vv - (G + accel * sin_t) * DT_FLIGHT
        vh, vv = np.where(active, vh_new, vh), np.where(active, vv_new, vv)
        v_new = np.hypot(vh, vv)
        with np.errstate(divide="ignore", invalid="ignore"):
            cos_t = np.where(active, vh / v_new, cos_t)
            sin_t = np.where(active, vv / v_new, sin_t)
        v = np.where(active, v_new, v)
        flight = flight + active
        active &= (height > 0.0) & (v >= 0.01)

    out = {
        "consumption": consumption,
        "speed": n,
        "range": s,
        "jet_speed": va,
        "rotating": rotating,
        "iterations": iterations,
        "flight_steps": flight,
    }
    return {k: v.reshape(shape) for k, v in out.items()}


def _range_objective(line_loss_start: str):
    lo, span = np.asarray(LOWER), np.asarray(UPPER) - np.asarray(LOWER)

    def fun(X: np.ndarray) -> np.ndarray:
        return simulate(lo + span * np.clip(X, 0.0, 1.0), line_loss_start=line_loss_start)["range"]

    return fun


def search_optimum(
    *,
    line_loss_start: str = "compmodels",
    seeds: tuple[int, ...] = (0, 1, 2, 3),
    popsize: int = 40,
    maxiter: int = 300,
    scan_points: int = 4001,
    rounds: int = 3,
) -> tuple[np.ndarray, float]:
    """Best range found by a global search: how :data:`OPTIMUM_Z` was produced (minutes of CPU).

    Differential evolution (SciPy, vectorised, one run per seed, no gradient polish: the range
    is piecewise constant in places and jumps elsewhere), then ``rounds`` of coordinate scans:
    each input in turn is scanned on ``scan_points`` points of a window around the incumbent
    (the whole range, then 1 % and 0.01 % of it) and the best value kept. Returns the maximiser
    in original units and its range. Deterministic given the arguments.
    """
    from scipy.optimize import differential_evolution

    fun = _range_objective(line_loss_start)
    best_x, best_f = None, -np.inf
    for seed in seeds:
        res = differential_evolution(
            lambda X: -fun(X.T),
            [(0.0, 1.0)] * 8,
            vectorized=True,
            updating="deferred",
            popsize=popsize,
            maxiter=maxiter,
            seed=seed,
            polish=False,
            tol=0.0,
        )
        if -res.fun > best_f:
            best_x, best_f = np.clip(res.x, 0.0, 1.0), float(-res.fun)
    for width in (1.0, 1e-2, 1e-4)[:rounds]:
        for j in range(8):
            grid = np.clip(best_x[j] + width * np.linspace(-1.0, 1.0, scan_points), 0.0, 1.0)
            X = np.tile(best_x, (scan_points, 1))
            X[:, j] = grid
            F = fun(X)
            i = int(np.argmax(F))
            if F[i] > best_f:
                best_x, best_f = X[i].copy(), float(F[i])
    lo, span = np.asarray(LOWER), np.asarray(UPPER) - np.asarray(LOWER)
    z = lo + span * best_x
    return z, float(simulate(z, line_loss_start=line_loss_start)["range"])


#: best known maximiser of the range (original units, CompModels' variant) and its range in m.
#: Found by ``search_optimum(seeds=(4, 5, 6, 7), popsize=60)`` (about 6 CPU minutes); the default
#: ``search_optimum()`` (seeds 0-3, popsize 40) reached 8.3380779 m, 3e-7 m lower, at the same
#: elevation 32.0606 deg with other values of the inputs the range barely depends on there.
OPTIMUM_Z: tuple[float, ...] = (
    32.06056613808802,
    86.5710612198375,
    4e-06,
    0.1875182048940113,
    0.015065091214577882,
    0.013844390724287368,
    2.0,
    10.0,
)
OPTIMUM_RANGE = 8.338078178286908


class Sprinkler(StaticBenchmark):
    """The garden sprinkler's spray range (m) over its 8 inputs, maximised; time-invariant.

    ``raw(z)`` is minus the range at inputs ``z`` in original units (tvbo's minimisation form);
    ``f(x, t) = range(lo + (hi - lo) x)``. ``outputs(x)`` gives all of the model's outputs at
    normalised inputs. The oracle is the stored best known optimum (:data:`OPTIMUM_Z`); the
    engine's ``refine_f_star`` still credits a query that beats it (regret never < 0).
    """

    name, d = "sprinkler", 8
    lower, upper = LOWER, UPPER
    argmin_raw = OPTIMUM_Z
    min_raw = -OPTIMUM_RANGE

    def raw(self, z: np.ndarray) -> np.ndarray:
        return -simulate(z)["range"]

    def oracle_solve(self, t: float, warm: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
        """The stored optimum, evaluated once: the model is time-invariant and a run's oracle
        asks at every grid time (600 evaluations of ~10 ms each otherwise)."""
        if getattr(self, "_optimum", None) is None:
            self._optimum = super().oracle_solve(t, warm, mode)
        X, F = self._optimum
        return X.copy(), F.copy()

    def outputs(self, x: Any) -> dict[str, np.ndarray]:
        """Every output of :func:`simulate` at normalised inputs ``x`` of shape ``(..., 8)``."""
        x, _ = self._inputs(x, 0.0)
        return simulate(self.to_original(x))

    def domain(self) -> dict[str, Any]:
        out = super().domain()
        out["names"] = list(INPUT_NAMES)
        return out

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["objective"] = (
            "maximise the spray range [m] of the garden sprinkler model (Siebertz et al. 2010, "
            "as in R CompModels::sprinkler); time-invariant"
        )
        return out


def make_sprinkler(**opts: Any) -> Benchmark:
    """Build the ``sprinkler`` benchmark; options: horizon, cost, noise_var (defaults 600, 0, 0).

    ``cost_table`` and ``oracle_grid_step`` are accepted for symmetry with the other benchmarks.
    """
    unknown = sorted(set(opts) - set(STATIC_OPTIONS))
    if unknown:
        raise TypeError(
            f"unknown option(s) {', '.join(unknown)} for benchmark 'sprinkler'; "
            f"valid options: {', '.join(STATIC_OPTIONS)}"
        )
    return static_factory(Sprinkler)(**opts)
