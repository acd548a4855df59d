"""Reference policies: floor rows, not competitors (issue 22 item 2; :mod:`.policies`).

They consult no model (``centre``, ``best-static`` do no computation at all; ``random-search``
none beyond drawing a point), run through the same engine and metrics, and show per benchmark
what a useless algorithm scores (``random-search``, ``centre``) and how much of the difficulty
is time variation (``best-static``: the best fixed point, chosen with hindsight from the
oracle). Tables render them as floor rows and keep them out of rankings (``floor``).
"""

from __future__ import annotations

from tvbo.algorithms.declare import TVBO, Declaration
from tvbo.algorithms.pegpucb.declare import PEGPUCB, prior_set

ALGORITHMS: tuple[Declaration, ...] = (
    # PE-GP-UCB's Random Search ([P2] B.7.4): no model is consulted; one default prior keeps the
    # family's option set uniform (its part: tvbo.algorithms.pegpucb.parts)
    Declaration("random-search", "Random search", "uniform random queries", PEGPUCB,
                preset=prior_set("random-search", priors=[{}]),
                floor="a uniformly random point of the domain at every query"),
    Declaration("centre", "Centre", "reference policy: always the centre of the domain", TVBO,
                factory="policies:CentrePolicy", floor="always the centre of the domain"),
    Declaration("best-static", "Best static",
                "reference policy: the best fixed point in hindsight (max time-average of f)",
                TVBO, factory="policies:BestStaticPolicy",
                floor="the single point maximising the time-average of f(x, t) over the "
                "horizon, chosen with hindsight from the oracle"),
)
