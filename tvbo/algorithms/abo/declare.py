"""ABO, adaptive Bayesian optimisation (Nyikosa et al. 2018): UCB over space and future time.

This package holds its acquisition (:mod:`.parts`) and the look-ahead maths (:mod:`.lookahead`).
"""

from __future__ import annotations

from tvbo.algorithms.declare import Declaration, Part

NYIKOSA = "Nyikosa et al. 2018"

ALGORITHMS: tuple[Declaration, ...] = (
    # ABO over the W-DBO model (Matérn-5/2 x the problem's temporal family), keeping all data
    Declaration("abo", "ABO", "spatio-temporal GP, UCB jointly over space and future time",
                NYIKOSA,
                preset={"surrogate": {"kind": "gp", "time_kernel": "problem"},
                        "acquisition": {"kind": "abo"}, "dataset": {"kind": "keep-all"}}),
)

PARTS: tuple[Part, ...] = (
    Part("parts:ABOAcquisition", "UCB over space and future time", NYIKOSA),
)
