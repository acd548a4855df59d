"""Noise protocols: where a benchmark's observation-noise variance comes from.

``"table"`` (default)
    The benchmark's own noise: the row of its cost table (the BOLT papers' Table 3 [B] / Table 2
    [A] for the BOLT benchmarks, tvbo's documented rows for the others), or the documented
    default of benchmarks without a table. Nothing changes.
``"wdbo"``
    The W-DBO paper's protocol (App. H.1: "a Gaussian noise with variance equal to 5 % of the
    signal variance is added"), for every benchmark, synthetic or real. The paper does not say
    how the signal variance was measured; tvbo takes the variance of the noiseless objective
    over the whole spatio-temporal domain, ``Var[f(x, t)]`` for ``(x, t)`` uniform on
    ``[0, 1]^d x [0, H]`` (the domain the paper normalises to [0, 1]^(d+1)), estimated on a fixed
    scrambled Sobol design of :data:`SIGNAL_VARIANCE_POINTS` points (seed 0, so every run of a
    benchmark gets the same noise; the estimate's relative error is well below 1 % for these
    smooth functions). Because time is mapped linearly onto [0, H], the value does not depend on
    the horizon for the synthetic benchmarks.

The protocol is a benchmark option (``noise_protocol``, accepted by every continuous benchmark
through :func:`tvbo.benchmarks.make`); the run file records it, with the measured signal
variance, in the benchmark's description (``describe()``) when it is not the default. It
cannot be combined with an explicit ``noise_var`` (two sources for one number).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tvbo.benchmarks.base import Benchmark
from tvbo.benchmarks.oracle import sobol_points

NOISE_PROTOCOLS: tuple[str, ...] = ("table", "wdbo")
DEFAULT_NOISE_PROTOCOL = "table"
#: W-DBO App. H.1: noise variance = 5 % of the signal variance
WDBO_NOISE_FRACTION = 0.05
#: Sobol points of the signal-variance estimate (a power of two)
SIGNAL_VARIANCE_POINTS = 8192


def check_noise_protocol(protocol: Any) -> str:
    """``protocol`` if valid, else a ValueError naming it and listing the valid ones."""
    if protocol not in NOISE_PROTOCOLS:
        raise ValueError(
            f"unknown noise_protocol {protocol!r}; valid noise protocols: "
            f"{', '.join(NOISE_PROTOCOLS)}"
        )
    return str(protocol)


def signal_variance(bench: Benchmark, n: int = SIGNAL_VARIANCE_POINTS, seed: int = 0) -> float:
    """Variance of the noiseless ``bench(x, t)`` over ``[0, 1]^d x [0, H]`` (Sobol estimate)."""
    if bench.is_discrete:
        raise ValueError(
            f"noise_protocol 'wdbo' needs a continuous benchmark; {bench.name!r} is discrete"
        )
    pts = sobol_points(bench.d + 1, n, seed)
    x = pts[:, : bench.d]
    t = pts[:, bench.d] * bench.horizon
    f = np.asarray(bench(x, t), float)
    return float(np.var(f))


def apply_noise_protocol(
    bench: Benchmark, protocol: str, *, noise_var_given: bool = False
) -> Benchmark:
    """Set ``bench.noise_var`` by ``protocol`` (in place) and record it; returns ``bench``.

    ``noise_var_given``: the caller also passed an explicit ``noise_var``, which the ``wdbo``
    protocol would silently overwrite, so the combination is refused.
    """
    protocol = check_noise_protocol(protocol)
    if protocol == DEFAULT_NOISE_PROTOCOL:
        return bench
    if noise_var_given:
        raise ValueError(
            f"noise_var and noise_protocol={protocol!r} both set the noise of {bench.name!r}; "
            "give one of them"
        )
    var = signal_variance(bench)
    bench.noise_var = WDBO_NOISE_FRACTION * var
    bench.noise_protocol = protocol
    bench.signal_var = var
    return bench
