"""The ``algorithm`` key of a run with k evaluators or overlap (tvbo.sim.parallel).

Runs that differ only in the number of evaluators or in overlap merge into one campaign without
a new run dimension: the setting is carried in the algorithm key, ``<name>@k<k>[+overlap]``;
the sequential setting (k = 1, no overlap) keeps the plain name, so today's run files and
campaigns are unchanged.
"""

from __future__ import annotations

import re


def parallel_label(name: str, evaluators: int, overlap: bool) -> str:
    """The run's ``algorithm`` key: ``name`` for the sequential loop, else ``name@k<k>`` plus
    ``+overlap`` -- so runs differing only in k or overlap merge into one campaign without a new
    run dimension (today's run files and their keys are unchanged)."""
    if int(evaluators) == 1 and not overlap:
        return name
    return f"{name}@k{int(evaluators)}" + ("+overlap" if overlap else "")


def parse_label(label: str) -> tuple[str, int, bool]:
    """Inverse of :func:`parallel_label`: ``(name, evaluators, overlap)``."""
    match = re.fullmatch(r"(.+)@k(\d+)(\+overlap)?", str(label))
    if match is None:
        return str(label), 1, False
    return match.group(1), int(match.group(2)), match.group(3) is not None
