"""WLAN transmit-power benchmark: a Shannon-capacity simulator of moving users (BOLT §F/§C).

What the papers state (spec_bolt.md §8.4 item 10): 27 moving end-users are associated with one
of 6 fixed nodes and continuously stream data; each node has a tunable power level; the objective
is the sum over nodes i and their associated users j of the Shannon capacity

    f(x, t) = sum_i sum_{j in N_i} W log2(1 + SINR_ij(x, t)),

with powers in [10^0.1, 10^2.5]^6, observation noise variance 1.5, evaluation cost 0.10 s,
horizon 600 s and a Matérn-1/2 temporal kernel. The W-DBO paper (NeurIPS'24, App. H.2) runs the
same model with 4 nodes and 18 users (``make_wlan(n_nodes=4, n_users=18)``). The simulator was
never released; every other choice below is ours, taken from standard WLAN modelling, exposed as
a :class:`WLANConfig` option with the default given here.

Choices (defaults)
------------------
Power units
    The domain [10^0.1, 10^2.5] is read as milliwatts: 1 dBm ... 25 dBm, the usual transmit-power
    range of Wi-Fi access points (regulatory limits at 5 GHz are ~20-30 dBm EIRP). ``power_scale``
    maps x in [0, 1] to power: ``"db"`` (default) linearly in dB, P = 10^(0.1 + 2.4 x) mW, the
    scale on which radio engineers tune power and on which the paper writes its domain;
    ``"linear"`` linearly in mW, P = P_min + (P_max - P_min) x.
Floor and nodes
    A 100 m x 60 m open-plan office floor (``area``); nodes on a regular grid, one per cell of the
    rows x columns factorisation of ``n_nodes`` whose cell aspect is closest to the floor's
    (3 x 2 for 6 nodes, 2 x 2 for 4), or explicit ``node_positions``. Nodes are ceiling-mounted at
    3 m, user devices held at 1 m (``node_height``, ``user_height``): the 2 m height difference
    keeps every link distance >= 2 m, so no singularity and no clamping in the plane.
Path loss (3-D distance d)
    ``"log_distance"`` (default): PL(d) = FSPL(d0) + 10 n log10(d / d0) with free-space loss
    FSPL(d0) = 20 log10(4 pi d0 f_c / c) at d0 = 1 m and exponent n = 3.0 (ITU-R P.1238 gives a
    distance power-loss coefficient N = 31, i.e. n = 3.1, for offices at 5.2 GHz); carrier
    5.18 GHz (channel 36). ``"dual_slope"``: the IEEE 802.11ax (TGax, doc. 11-14/0980)
    enterprise form without its wall term, free space (exponent 2) up to a 10 m breakpoint and
    exponent 3.5 beyond. No shadowing or fast fading: the objective is a deterministic function.
Noise floor
    Thermal noise -174 dBm/Hz + 10 log10(W) plus a 7 dB receiver noise figure: -94 dBm at 20 MHz.
Bandwidth
    W = 20 MHz (the basic 802.11 channel width), the same for every link.
Interference
    Worst case full buffer ("continuously stream"): every other node transmits all the time at its
    own power and interferes with every user; all nodes share one channel (the regime in which
    power control matters). SINR_ij = P_i g_ij / (N + sum_{k != i} P_k g_kj).
Mobility
    Random waypoint (Johnson & Maltz 1996), seeded by ``scenario_seed`` only: start uniformly on
    the floor, rest for a pause drawn uniformly in [0, ``pause_max``] = [0, 300] s, walk in a
    straight line to a uniform random destination at a speed drawn uniformly in [0.5, 1.5] m/s
    (walking, mean 1 m/s; ``speed_min > 0`` avoids the speed decay of Yoon, Liu & Noble 2003),
    rest again, and so on: office workers who walk to a desk or meeting and stay a while. The
    pauses set the time scale: an exponential fit of the temporal autocorrelation of f (pooled
    over random x, scenario seeds 0-2) gives l_T of about 80-150 s, the order of the paper's
    l_T = 120 s ([B] Table 3), whereas users walking non-stop decorrelate f within 15-30 s. The
    waypoints are precomputed over [0, H], so positions (linear interpolation between waypoints)
    and hence f are deterministic functions of t that can be evaluated at any t in any order.
    Each user has its own random stream (spawned from the seed), so user j's path does not depend
    on ``n_users``.
Association
    ``"dynamic"`` (default): at every t a user is served by the node it receives most strongly at
    a common reference power, i.e. the nearest node (isotropic, monotone path loss); handovers
    happen as users walk. ``"static"``: the same rule at t = 0, kept for the whole run. The rule
    does NOT depend on x on purpose: with power-dependent association, f would jump whenever a
    power change moved a user to another cell, making it discontinuous in x (and violating the
    Matérn-5/2 spatial model the papers fit); in practice association is a slow, separately
    managed process (roaming/steering). Handovers make f piecewise smooth in t with small jumps,
    consistent with the rough Matérn-1/2 temporal kernel the papers chose for this benchmark.
Output scale
    f is reported in units of ``throughput_unit_bps`` = 20 Mbit/s, i.e. in bit/s/Hz at the default
    W = 20 MHz (f is then the network's sum spectral efficiency). With the defaults (scenario_seed
    0, H = 600 s, measured on 2,000 random x at each of the 601 oracle grid times): f*(t) lies in
    81.5 ... 125.7; random power vectors give f in 26.6 ... 123.5 over the run; the spatial range
    of f at a fixed time is 39 ... 78 (mean 59), i.e. 32 ... 64 noise sd (sd = sqrt(1.5) = 1.22,
    1.5-3 % of the range, the order of the W-DBO protocol's "noise of 5 % of the signal
    variance"); random search has a mean regret of about 24, the order of the papers' WLAN
    regrets (GP-UCB 20, BOLT 8). ``benchmarks/wlan_eval.py`` prints these numbers.

``raw(z)`` follows the :class:`~tvbo.benchmarks.base.Benchmark` contract (minimisation form):
z = (P_1..P_d in mW, t in s) and raw(z) = -f, so ``f(x, t) = -raw(powers(x), t)``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from functools import cached_property
from itertools import product
from typing import Any

import numpy as np

from tvbo.benchmarks.base import Benchmark
from tvbo.benchmarks.tables import DEFAULT_COST_TABLE, resolve_parameters

#: speed of light (m/s), for the free-space reference loss
_C = 299_792_458.0
POWER_SCALES: tuple[str, ...] = ("db", "linear")
PATH_LOSS_MODELS: tuple[str, ...] = ("log_distance", "dual_slope")
ASSOCIATIONS: tuple[str, ...] = ("dynamic", "static")
#: options of :func:`make_wlan` that configure the Benchmark rather than the simulator
BENCHMARK_OPTIONS: tuple[str, ...] = (
    "horizon",
    "cost_table",
    "cost",
    "noise_var",
    "oracle_grid_step",
)


@dataclass(frozen=True)
class WLANConfig:
    """Every modelling choice of the WLAN simulator (see the module docstring for why)."""

    #: number of fixed nodes (access points) = spatial dimension d
    n_nodes: int = 6
    #: number of moving end-users
    n_users: int = 27
    #: floor size (m): width, depth
    area: tuple[float, float] = (100.0, 60.0)
    #: explicit node positions ((x, y), ...) in m; None: regular grid (see module doc)
    node_positions: tuple[tuple[float, float], ...] | None = None
    #: antenna heights (m)
    node_height: float = 3.0
    user_height: float = 1.0
    #: power range (mW) of the decision variables: 10^0.1 ... 10^2.5 (1 ... 25 dBm)
    power_min_mw: float = 10.0**0.1
    power_max_mw: float = 10.0**2.5
    #: how x in [0, 1] maps to power: "db" (linear in dB) or "linear" (linear in mW)
    power_scale: str = "db"
    #: channel bandwidth W (Hz)
    bandwidth_hz: float = 20e6
    #: carrier frequency (GHz), 5.18 = 5 GHz channel 36
    carrier_ghz: float = 5.18
    #: "log_distance" or "dual_slope"
    path_loss: str = "log_distance"
    #: exponent n and reference distance d0 (m) of the log-distance model
    path_loss_exponent: float = 3.0
    reference_distance: float = 1.0
    #: breakpoint (m) and far exponent of the dual-slope model (free space before)
    breakpoint_distance: float = 10.0
    far_exponent: float = 3.5
    #: thermal noise density (dBm/Hz) and receiver noise figure (dB)
    thermal_noise_dbm_hz: float = -174.0
    noise_figure_db: float = 7.0
    #: random-waypoint speed range (m/s) and maximal pause (s)
    speed_min: float = 0.5
    speed_max: float = 1.5
    pause_max: float = 300.0
    #: "dynamic" (nearest node at every t) or "static" (nearest node at t = 0)
    association: str = "dynamic"
    #: output unit (bps): f = throughput / throughput_unit_bps
    throughput_unit_bps: float = 20e6
    #: seed of the scenario (user trajectories); NOT the run seed
    scenario_seed: int = 0

    def __post_init__(self) -> None:
        for name in ("n_nodes", "n_users", "scenario_seed"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | np.integer):
                raise TypeError(f"{name} must be an integer, got {v!r}")
        if self.n_nodes < 1:
            raise ValueError(f"n_nodes must be >= 1, got {self.n_nodes}")
        if self.n_users < 1:
            raise ValueError(f"n_users must be >= 1, got {self.n_users}")
        if self.scenario_seed < 0:
            raise ValueError(f"scenario_seed must be >= 0, got {self.scenario_seed}")
        for name, valid in (
            ("power_scale", POWER_SCALES),
            ("path_loss", PATH_LOSS_MODELS),
            ("association", ASSOCIATIONS),
        ):
            v = getattr(self, name)
            if v not in valid:
                raise ValueError(f"unknown {name} {v!r}; valid choices: {', '.join(valid)}")
        positive = (
            "node_height",
            "power_min_mw",
            "power_max_mw",
            "bandwidth_hz",
            "carrier_ghz",
            "path_loss_exponent",
            "reference_distance",
            "breakpoint_distance",
            "far_exponent",
            "speed_min",
            "speed_max",
            "throughput_unit_bps",
        )
        for name in positive + ("user_height", "pause_max"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float | np.floating):
                raise TypeError(f"{name} must be a number, got {v!r}")
            if not math.isfinite(v) or (v <= 0 if name in positive else v < 0):
                rule = "> 0" if name in positive else ">= 0"
                raise ValueError(f"{name} must be finite and {rule}, got {v!r}")
        for name in ("thermal_noise_dbm_hz", "noise_figure_db"):
            if not math.isfinite(float(getattr(self, name))):
                raise ValueError(f"{name} must be finite, got {getattr(self, name)!r}")
        if self.power_max_mw <= self.power_min_mw:
            raise ValueError(
                f"power_max_mw ({self.power_max_mw!r}) must exceed power_min_mw "
                f"({self.power_min_mw!r})"
            )
        if self.speed_max < self.speed_min:
            raise ValueError(
                f"speed_max ({self.speed_max!r}) must be >= speed_min ({self.speed_min!r})"
            )
        area = np.asarray(self.area, float)
        if area.shape != (2,) or not np.all(np.isfinite(area)) or np.any(area <= 0):
            raise ValueError(f"area must be (width, depth) with both > 0 m, got {self.area!r}")
        if self.node_positions is not None:
            pos = np.asarray(self.node_positions, float)
            if pos.shape != (self.n_nodes, 2):
                raise ValueError(
                    f"node_positions must have shape (n_nodes={self.n_nodes}, 2), got {pos.shape}"
                )
            if not np.all(np.isfinite(pos)):
                raise ValueError(f"node_positions must be finite, got {self.node_positions!r}")

    # -- derived quantities ------------------------------------------------------------------
    def noise_dbm(self) -> float:
        """Noise floor (dBm): thermal density + 10 log10(W) + noise figure."""
        return (
            self.thermal_noise_dbm_hz + 10.0 * math.log10(self.bandwidth_hz) + self.noise_figure_db
        )

    def grid_nodes(self) -> np.ndarray:
        """Node positions ``(n_nodes, 2)``: explicit ones, or the grid described in the module."""
        if self.node_positions is not None:
            return np.asarray(self.node_positions, float)
        width, depth = self.area
        n = self.n_nodes
        # columns x rows = n with cells as square as possible (cell aspect closest to 1)
        pairs = [(c, n // c) for c in range(1, n + 1) if n % c == 0]
        cols, rows = min(pairs, key=lambda p: abs(math.log((width / p[0]) / (depth / p[1]))))
        xs = (np.arange(cols) + 0.5) * width / cols
        ys = (np.arange(rows) + 0.5) * depth / rows
        return np.array([(x, y) for y in ys for x in xs])

    def path_loss_db(self, d: np.ndarray) -> np.ndarray:
        """Path loss (dB) at 3-D distance ``d`` (m) under the configured model."""
        d = np.asarray(d, float)
        fc = self.carrier_ghz * 1e9
        if self.path_loss == "log_distance":
            d0 = self.reference_distance
            fspl0 = 20.0 * math.log10(4.0 * math.pi * d0 * fc / _C)
            return fspl0 + 10.0 * self.path_loss_exponent * np.log10(np.maximum(d, d0) / d0)
        fspl1 = 20.0 * math.log10(4.0 * math.pi * fc / _C)
        bp = self.breakpoint_distance
        near = 20.0 * np.log10(np.clip(d, 1.0, bp))
        far = 10.0 * self.far_exponent * np.log10(np.maximum(d / bp, 1.0))
        return fspl1 + near + far

    def gain_from_sq_distance(self, d2: np.ndarray) -> np.ndarray:
        """Linear channel gain 10^(-PL/10) from the SQUARED 3-D distance (m^2).

        The same model as :meth:`path_loss_db`, written as a power of d^2 so that the simulator
        evaluates one ``pow`` per link instead of a square root, a log and an exponential.
        """
        d2 = np.asarray(d2, float)
        fc = self.carrier_ghz * 1e9
        if self.path_loss == "log_distance":
            d0 = self.reference_distance
            g0 = (_C / (4.0 * math.pi * d0 * fc)) ** 2
            r2 = np.maximum(d2, d0 * d0) / (d0 * d0)
            return g0 * r2 ** (-0.5 * self.path_loss_exponent)
        g1 = (_C / (4.0 * math.pi * fc)) ** 2
        bp2 = self.breakpoint_distance**2
        r2 = np.clip(d2, 1.0, None)
        near = 1.0 / np.minimum(r2, bp2)
        far = np.maximum(r2 / bp2, 1.0) ** (-0.5 * self.far_exponent)
        return g1 * near * far


def _waypoints(cfg: WLANConfig, horizon: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random-waypoint trajectories covering [0, horizon]: per user (times (k,), xy (k, 2))."""
    area = np.asarray(cfg.area, float)
    streams = np.random.SeedSequence(cfg.scenario_seed).spawn(cfg.n_users)
    out = []
    for ss in streams:
        rng = np.random.default_rng(ss)
        pos = rng.uniform(0.0, 1.0, 2) * area
        times, points, now = [0.0], [pos], 0.0
        # an initial pause, so that at t = 0 some users are already resting (as they would be
        # in the process' steady state) rather than all starting to walk at once
        if cfg.pause_max > 0:
            now = float(rng.uniform(0.0, cfg.pause_max))
            times.append(now)
            points.append(pos)
        while now <= horizon:
            dest = rng.uniform(0.0, 1.0, 2) * area
            speed = rng.uniform(cfg.speed_min, cfg.speed_max)
            now += max(float(np.hypot(*(dest - pos))), 1e-9) / speed
            times.append(now)
            points.append(dest)
            pos = dest
            pause = rng.uniform(0.0, cfg.pause_max) if cfg.pause_max > 0 else 0.0
            if pause > 0:
                now += pause
                times.append(now)
                points.append(dest)
        out.append((np.asarray(times), np.asarray(points)))
    return out


class WLAN(Benchmark):
    """Sum of Shannon capacities of moving WLAN users over node transmit powers (maximise).

    ``x`` in [0, 1]^d maps to node powers (:meth:`powers`); ``t`` in [0, H] s moves the users.
    Everything is vectorised: ``x`` of shape (..., d), ``t`` broadcastable against ``x[..., 0]``.
    """

    name = "wlan"
    temporal_kernel = "matern12"
    #: 2^d corners are screened per oracle solve (binary power control is often near-optimal
    #: for sum rate, Gjendemsjø et al. 2008); the best few seed the multistart polish
    oracle_corner_top_k: int = 3
    max_corner_dim: int = 12

    def __init__(
        self,
        config: WLANConfig | None = None,
        *,
        horizon: float,
        noise_var: float,
        cost: float,
        table: str | None = None,
        lengthscale_time: float | None = None,
        oracle_grid_step: float = 1.0,
    ) -> None:
        super().__init__(
            horizon=horizon,
            noise_var=noise_var,
            cost=cost,
            table=table,
            lengthscale_time=lengthscale_time,
            oracle_grid_step=oracle_grid_step,
        )
        self.config = WLANConfig() if config is None else config
        if not isinstance(self.config, WLANConfig):
            raise TypeError(f"config must be a WLANConfig, got {type(self.config).__name__}")
        cfg = self.config
        self.d = cfg.n_nodes
        self.nodes = cfg.grid_nodes()
        self._dz2 = (cfg.node_height - cfg.user_height) ** 2
        self._noise_mw = 10.0 ** (cfg.noise_dbm() / 10.0)
        self._lp_lo = math.log10(cfg.power_min_mw)
        self._lp_span = math.log10(cfg.power_max_mw) - self._lp_lo
        self._trajectories = _waypoints(cfg, self.horizon)
        self._map_cache: dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._map_cache_size = 16
        # capacity per unit of log(1 + SINR), in output units
        self._scale = cfg.bandwidth_hz / cfg.throughput_unit_bps / math.log(2.0)

    # -- scenario ---------------------------------------------------------------------------
    def positions(self, t: Any) -> np.ndarray:
        """User positions (m) at times ``t``: shape ``t.shape + (n_users, 2)``."""
        t = self._check_times(t)
        flat = t.ravel()
        # np.interp is several times faster on sorted abscissae: sort once, scatter back
        order = np.argsort(flat, kind="stable")
        ts = flat[order]
        out = np.empty((flat.size, self.config.n_users, 2))
        for j, (times, pts) in enumerate(self._trajectories):
            out[order, j, 0] = np.interp(ts, times, pts[:, 0])
            out[order, j, 1] = np.interp(ts, times, pts[:, 1])
        return out.reshape(t.shape + (self.config.n_users, 2))

    def gains(self, t: Any) -> tuple[np.ndarray, np.ndarray]:
        """Link gains normalised by the noise power, and the association, at times ``t``.

        Returns ``(G, a)``: ``G`` of shape ``t.shape + (n_nodes, n_users)`` with
        ``G[..., i, j] = 10^(-PL_ij / 10) / N`` (so P_i G_ij is the SNR in mW units), and ``a``
        of shape ``t.shape + (n_users,)``, the serving node of each user.
        """
        t = self._check_times(t)
        G = self._gains_at(self.positions(t))
        if self.config.association == "dynamic":
            a = np.argmax(G, axis=-2)
        else:
            a0 = np.argmax(self._gains_at(self.positions(0.0)), axis=-2)
            a = np.broadcast_to(a0, t.shape + a0.shape).copy()
        return G, a

    def _gains_at(self, pos: np.ndarray) -> np.ndarray:
        px = np.ascontiguousarray(pos[..., 0])[..., None, :]  # (..., 1, m)
        py = np.ascontiguousarray(pos[..., 1])[..., None, :]
        dx = px - self.nodes[:, 0, None]  # (..., n, m)
        d2 = dx * dx
        dy = np.subtract(py, self.nodes[:, 1, None], out=dx)
        d2 += dy * dy
        d2 += self._dz2
        G = self.config.gain_from_sq_distance(d2)
        G /= self._noise_mw
        return G

    # -- power mapping ----------------------------------------------------------------------
    def powers(self, x: Any) -> np.ndarray:
        """Node powers (mW) of normalised ``x`` (..., d) under ``power_scale``."""
        x = np.asarray(x, float)
        cfg = self.config
        if cfg.power_scale == "db":
            return 10.0 ** (self._lp_lo + self._lp_span * x)
        return cfg.power_min_mw + (cfg.power_max_mw - cfg.power_min_mw) * x

    def _dpower_dx(self, P: np.ndarray) -> np.ndarray:
        if self.config.power_scale == "db":
            return P * (math.log(10.0) * self._lp_span)
        return np.full_like(P, self.config.power_max_mw - self.config.power_min_mw)

    def normalise(self, powers_mw: Any) -> np.ndarray:
        """Inverse of :meth:`powers`: x in [0, 1]^d of node powers in mW."""
        P = np.asarray(powers_mw, float)
        cfg = self.config
        if cfg.power_scale == "db":
            return (np.log10(P) - self._lp_lo) / self._lp_span
        return (P - cfg.power_min_mw) / (cfg.power_max_mw - cfg.power_min_mw)

    # -- the physics ------------------------------------------------------------------------
    def _links(
        self, P: np.ndarray, t: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Signal and interference-plus-noise of every user for powers ``P`` (..., d) at ``t``.

        Returns ``(S, I, Gint, Gsig, a)``, in noise units: ``S`` the received signal and ``I``
        (>= 1) the noise plus the interference, both ``batch + (n_users,)``; ``Gint`` the gains
        with the serving links zeroed (``(n, m)`` for a single time, else ``batch + (n, m)``);
        ``Gsig`` the serving-link gains and ``a`` the serving nodes (``(m,)`` or
        ``batch + (m,)``). Interference is summed directly, never as total minus signal, so a
        user with S >> I keeps full relative precision in I.
        """
        batch = np.broadcast_shapes(P.shape[:-1], t.shape)
        m = self.config.n_users
        users = np.arange(m)
        Pf = np.broadcast_to(P, batch + P.shape[-1:]).reshape(-1, self.d)
        if t.size == 1:
            Gint, Gsig, a = self._radio_map(float(t.reshape(())))
            S = Pf[:, a] * Gsig
            I = 1.0 + Pf @ Gint
            return S.reshape(batch + (m,)), I.reshape(batch + (m,)), Gint, Gsig, a
        tf = np.broadcast_to(t, batch).ravel()
        ut, inv = np.unique(tf, return_inverse=True)
        if len(ut) < len(tf):  # repeated times: compute the radio map once per distinct time
            Gint, a = self.gains(ut)
            Gint, a = Gint[inv], a[inv]
        else:
            Gint, a = self.gains(tf)
        rows = np.arange(len(tf))[:, None]
        Gsig = Gint[rows, a, users]
        Gint[rows, a, users] = 0.0
        S = np.take_along_axis(Pf, a, axis=1) * Gsig
        I = np.matmul(Pf[:, None, :], Gint)[:, 0, :]
        I += 1.0
        shape_nm = batch + Gint.shape[1:]
        return (
            S.reshape(batch + (m,)),
            I.reshape(batch + (m,)),
            Gint.reshape(shape_nm),
            Gsig.reshape(batch + (m,)),
            a.reshape(batch + (m,)),
        )

    def _radio_map(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(Gint, Gsig, a)`` at one time, cached (read-only) for the last few times.

        The oracle's L-BFGS-B evaluates f and its gradient dozens of times at the same t; the
        user positions and gains at that t need computing only once.
        """
        hit = self._map_cache.get(t)
        if hit is not None:
            return hit
        Gint, a = self.gains(t)
        users = np.arange(self.config.n_users)
        Gsig = Gint[a, users].copy()
        Gint[a, users] = 0.0
        for arr in (Gint, Gsig, a):
            arr.setflags(write=False)
        if len(self._map_cache) >= self._map_cache_size:
            self._map_cache.pop(next(iter(self._map_cache)))
        self._map_cache[t] = (Gint, Gsig, a)
        return Gint, Gsig, a

    def _throughput(self, P: np.ndarray, t: np.ndarray) -> np.ndarray:
        S, I, *_ = self._links(P, t)
        return self._scale * np.sum(np.log1p(S / I), axis=-1)

    def sinr(self, x: Any, t: Any) -> tuple[np.ndarray, np.ndarray]:
        """Per-user SINR (linear) and serving node at normalised powers ``x`` and times ``t``.

        Returns ``(sinr, assoc)``, both of shape ``batch + (n_users,)``.
        """
        x, t = self._inputs(x, t)
        S, I, _, _, a = self._links(self.powers(x), t)
        batch = S.shape[:-1]
        return S / I, np.broadcast_to(a, batch + a.shape[-1:]).copy()

    def _evaluate(self, x: np.ndarray, t: np.ndarray) -> np.ndarray:
        return self._throughput(self.powers(x), np.asarray(t, float))

    def _gradient(self, x: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Analytic d f / d x.

        log(1 + S_j / I_j) = log(R_j) - log(I_j) with R_j = S_j + I_j the total received power,
        so d/dP_k = sum_j Gint_kj (1/R_j - 1/I_j) + [k = a_j] Gsig_j / R_j.
        """
        P = self.powers(x)
        t = np.asarray(t, float)
        S, I, Gint, Gsig, a = self._links(P, t)
        R = S + I
        coef = 1.0 / R - 1.0 / I
        own = Gsig / R
        nodes = np.arange(self.d)
        onehot = (a[..., None, :] == nodes[:, None]).astype(float)  # (..., n, m)
        if Gint.ndim == 2:
            dP = coef @ Gint.T + own @ onehot.T
        else:
            dP = np.einsum("...m,...nm->...n", coef, Gint) + np.einsum(
                "...m,...nm->...n", own, onehot
            )
        return self._scale * dP * self._dpower_dx(P)

    def raw(self, z: Any) -> np.ndarray:
        """Minimisation form on the original domain: ``-throughput`` at z = (P_1..P_d mW, t s).

        Powers must lie in [power_min_mw, power_max_mw] and t in [0, H].
        """
        z = np.asarray(z, float)
        if z.ndim == 0 or z.shape[-1] != self.d + 1:
            raise ValueError(
                f"wlan: z must have last dimension d + 1 = {self.d + 1}, got {z.shape}"
            )
        P, t = z[..., : self.d], self._check_times(z[..., self.d])
        lo, hi = self.config.power_min_mw, self.config.power_max_mw
        tol = 1e-9 * hi
        if not np.all(np.isfinite(P)) or P.min() < lo - tol or P.max() > hi + tol:
            raise ValueError(
                f"wlan: powers must lie in [{lo:.6g}, {hi:.6g}] mW, got values in "
                f"[{np.min(P):.6g}, {np.max(P):.6g}]"
            )
        return -self._throughput(np.clip(P, lo, hi), t)

    # -- oracle hooks -----------------------------------------------------------------------
    @cached_property
    def _corners(self) -> np.ndarray:
        return np.array(list(product((0.0, 1.0), repeat=self.d)))

    def candidate_starts(self, t: float) -> np.ndarray:
        """All-max power plus the best corners of the box (exhaustive when d <= 12)."""
        full = np.ones((1, self.d))
        if self.d > self.max_corner_dim:
            return full
        C = self._corners
        vals = self._evaluate(C, np.float64(t))
        top = C[np.argsort(-vals, kind="stable")[: self.oracle_corner_top_k]]
        return np.vstack([full, top])

    # -- metadata ---------------------------------------------------------------------------
    def domain(self) -> dict[str, Any]:
        cfg = self.config
        return {
            "spatial": [[0.0, 1.0]] * self.d,
            "time": [0.0, self.horizon],
            "power_mw": [[cfg.power_min_mw, cfg.power_max_mw]] * self.d,
            "power_scale": cfg.power_scale,
        }

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        sim = asdict(self.config)
        sim["node_positions"] = self.nodes.tolist()
        sim["area"] = list(self.config.area)
        out["simulator"] = sim
        out["units"] = f"f in units of {self.config.throughput_unit_bps:g} bit/s"
        out["objective"] = (
            "maximise f(x, t) = sum_i sum_{j in N_i} W log2(1 + SINR_ij) / throughput_unit_bps "
            "= -raw(powers(x), t)"
        )
        return out


CONFIG_OPTIONS: tuple[str, ...] = tuple(f.name for f in fields(WLANConfig))


def make_wlan(**opts: Any) -> WLAN:
    """Build the WLAN benchmark from flat options.

    Simulator options are the fields of :class:`WLANConfig` (``n_nodes``, ``n_users``,
    ``scenario_seed``, ``power_scale``, ...); benchmark options are ``horizon``, ``cost_table``,
    ``cost``, ``noise_var`` (None: from the cost table) and ``oracle_grid_step`` (s, default 1).
    """
    valid = CONFIG_OPTIONS + BENCHMARK_OPTIONS
    unknown = sorted(set(opts) - set(valid))
    if unknown:
        raise TypeError(
            f"unknown option(s) {', '.join(unknown)} for benchmark 'wlan'; "
            f"valid options: {', '.join(valid)}"
        )
    cfg_opts = {k: v for k, v in opts.items() if k in CONFIG_OPTIONS}
    # lists (YAML/JSON configs) become the tuples a frozen, hashable config holds
    if cfg_opts.get("area") is not None:
        cfg_opts["area"] = tuple(np.asarray(cfg_opts["area"], float).ravel().tolist())
    if cfg_opts.get("node_positions") is not None:
        pos = np.asarray(cfg_opts["node_positions"], float)
        cfg_opts["node_positions"] = tuple(map(tuple, pos.reshape(len(pos), -1).tolist()))
    config = WLANConfig(**cfg_opts)
    params = resolve_parameters(
        "wlan",
        cost_table=opts.get("cost_table") or DEFAULT_COST_TABLE,
        horizon=opts.get("horizon"),
        cost=opts.get("cost"),
        noise_var=opts.get("noise_var"),
    )
    step = opts.get("oracle_grid_step")
    return WLAN(config, **params, oracle_grid_step=1.0 if step is None else step)
