"""An algorithm assembled from a surrogate, an acquisition, a dataset policy and a removal rule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tvbo.algorithms.base import Algorithm, Query
from tvbo.algorithms.components import (
    Acquisition,
    Composition,
    DatasetEditor,
    DatasetPolicy,
    PartContext,
    RemovalRule,
    SideQueries,
    Surrogate,
    build_component,
)


class ComposedAlgorithm(Algorithm):
    """The iteration protocol shared by every preset (see :mod:`tvbo.algorithms.components`).

    ``propose(t)``: fit the hyperparameters if the data changed since the last fit (only after
    warm-up, i.e. for the first query), then maximise the acquisition at ``t``.
    ``ingest``: ``policy.before_append`` -> ``acquisition.before_append`` -> append ->
    ``acquisition.after_append`` -> fit (post-warm-up; phase ``fit``) -> ``policy.after_fit``
    (phase ``clean``). The acquisition hooks let a rule learn from the outcome of its own choice
    (PE-GP-UCB's elimination test, Regret Balancing's plays); they are no-ops elsewhere.
    Fitting after the observation is the order of W-DBO's and BOLT's Algorithm 1 (and of the
    W-DBO reference code's ``tell``).

    Side queries (SparQ-GP-UCB's expert): the engine's ``side_queries`` / ``ingest_side`` go to
    the one part with the :class:`~tvbo.algorithms.components.SideQueries` capability (none:
    no side queries). With such a part the iteration's data is complete only once the answers
    are in, so the post-warm-up fit moves from ``ingest`` to ``propose`` (SparQ's Algorithm 1:
    observe, discard, ask the expert, fit, UCB).

    The protocol never touches the work counter: the model charges its fits to ``fit``
    (:meth:`Surrogate.refit`), the policy its hooks to ``clean``
    (:meth:`DatasetPolicy.clean_before_append`, :meth:`DatasetPolicy.clean_after_fit`), and the
    models and optimisers count their own work.
    """

    def __init__(
        self,
        *,
        name: str,
        surrogate: Surrogate | Mapping[str, Any] | str,
        acquisition: Acquisition | Mapping[str, Any] | str = "ucb",
        dataset: DatasetPolicy | Mapping[str, Any] | str = "keep-all",
        removal: RemovalRule | Mapping[str, Any] | str | None = None,
        preset: str | None = None,
    ) -> None:
        super().__init__()
        self.name = name
        self.preset = preset
        self.surrogate: Surrogate = build_component("surrogate", surrogate)
        self.acquisition: Acquisition = build_component("acquisition", acquisition)
        self.dataset: DatasetPolicy = build_component("dataset", dataset)
        self.removal: RemovalRule | None = (None if removal is None
                                            else build_component("removal", removal))
        # typed composition, checked once: a part that needs another part's capability (a
        # spatio-temporal GP, a removal rule) says so here, not at run time
        composition = Composition(self.surrogate, self.acquisition, self.dataset, self.removal)
        for part in self.parts():
            part.check_composition(composition)
        # the one part that asks side queries (SparQ-GP-UCB's expert), if any: checked once
        sides = [part for part in self.parts() if isinstance(part, SideQueries)]
        if len(sides) > 1:
            raise ValueError(f"algorithm {name!r}: at most one part may ask side queries, got "
                             f"{', '.join(part.kind for part in sides)}")
        self.side: SideQueries | None = sides[0] if sides else None
        self.editor = DatasetEditor(self.surrogate)
        self._stale_fit = False
        # compute-free only by the acquisition's explicit declaration (a model-free query rule
        # such as random search): `counted` refuses any other algorithm that reports no work
        self.compute_free = bool(getattr(self.acquisition, "compute_free", False))
        # open-loop (Algorithm.open_loop) only when the query rule never looks at the data and
        # no part edits the data or asks the expert: the engine may then propose first
        self.open_loop = bool(getattr(self.acquisition, "open_loop", False)
                              and self.dataset.kind == "keep-all" and self.removal is None
                              and self.side is None)

    @property
    def removed_total(self) -> int:
        """Observations removed so far (single removals and resets)."""
        return self.editor.removed_total

    def _setup(self) -> None:
        context = PartContext(self.problem, self.rng, self.work, self.clock, int(self.evaluators))
        for part in self.parts():
            if isinstance(part, Surrogate):
                part.bind(context, editor=self.editor)
            elif isinstance(part, RemovalRule):
                part.bind(context, surrogate=self.surrogate)
            elif isinstance(part, DatasetPolicy):
                part.bind(context, surrogate=self.surrogate, removal=self.removal,
                          editor=self.editor)
            else:
                part.bind(context)

    def parts(self) -> list:
        return [p for p in (self.surrogate, self.acquisition, self.dataset, self.removal) if p]

    # -- the helpers policies use --------------------------------------------------------------
    def remove(self, i: int) -> None:
        """Remove observation i from the surrogate (counted; parts use their editor)."""
        self.editor.remove(i)

    def reset(self) -> None:
        """Forget the whole dataset (R-GP-UCB, ET-GP-UCB)."""
        self.editor.reset()

    # -- iteration protocol ---------------------------------------------------------------------
    def propose(self, t: float) -> np.ndarray | Query:
        if self._stale_fit:
            self.surrogate.refit()  # charged to "fit" by the model
            self._stale_fit = False
        choice = self._select(t)
        if isinstance(choice, Query):  # sample at a future time (ABO)
            return choice
        return np.asarray(choice, float)

    def _select(self, t: float):
        """The acquisition's choice, conditioned on the pending queries (if any, and if the
        strategy uses them) through a fantasy of the surrogate."""
        strategy = self.pending_strategy
        X = getattr(self, "pending_X", None)
        if strategy is None or X is None or len(X) == 0 or self.surrogate.n == 0:
            return self.acquisition.select(self.surrogate, t)
        lies = strategy.lies(self.surrogate, X, self.pending_T)
        if lies is None:
            return self.acquisition.select(self.surrogate, t)
        with self.surrogate.fantasy(X, self.pending_T, lies):
            return self.acquisition.select(self.surrogate, t)

    def parallel_blocker(self) -> str | None:
        reason = getattr(self.acquisition, "parallel_blocker", None)
        if reason:
            return reason
        if self.side is not None:
            return "it asks the expert side queries inside each iteration (sequential protocol)"
        return None

    # -- side queries: served by the part that has the capability -------------------------------
    def side_queries(self, t: float) -> np.ndarray | None:
        return None if self.side is None else self.side.side_queries(self.surrogate, t)

    def ingest_side(self, X: np.ndarray, T: np.ndarray, Y: np.ndarray) -> None:
        if self.side is not None:
            self.side.ingest_side(self.surrogate, X, T, Y)
            self._stale_fit = True  # the iteration's data is complete: fit in propose

    def supports_pending(self) -> bool:
        return bool(self.surrogate.supports_fantasy) and self.acquisition.kind == "ucb"

    def recommend(self, t: float) -> np.ndarray | None:
        """In-sample posterior-mean maximiser at ``t``: the held point with the highest
        posterior mean (cheap, deterministic, no random stream; a continuous maximiser would
        need the algorithm's random stream and change its queries)."""
        if self.surrogate.n == 0 or self.surrogate.model_set:
            return None
        X = np.asarray(self.surrogate.X, float)
        mean = np.asarray(self.surrogate.predict(X, t).mean, float)
        return X[int(np.argmax(mean))].copy()

    def ingest(self, x: np.ndarray, t: float, y: float, *, now: float, warmup: bool) -> None:
        self.dataset.clean_before_append(x, t, y, now=now, warmup=warmup)  # "clean" phase
        self.acquisition.before_append(self.surrogate, x, t, y, warmup=warmup)
        self.surrogate.append(x, t, y)
        self.acquisition.after_append(self.surrogate, x, t, y, warmup=warmup)
        self._stale_fit = True
        if not warmup and self.side is None:  # with side queries: after the answers (propose)
            self.surrogate.refit()
            self._stale_fit = False
        self.dataset.clean_after_fit(now=now, warmup=warmup)

    def dataset_size(self) -> int:
        return self.surrogate.n

    def state(self) -> dict[str, float]:
        out: dict[str, float] = {}
        if self.dataset.removes and not self.surrogate.model_set:
            out["removed_total"] = float(self.removed_total)
        for part in self.parts():
            out.update(part.state())
        return out

    def options(self) -> dict:
        return {
            "preset": self.preset,
            "surrogate": {"kind": self.surrogate.kind, **self.surrogate.options()},
            "acquisition": {"kind": self.acquisition.kind, **self.acquisition.options()},
            "dataset": {"kind": self.dataset.kind, **self.dataset.options()},
            "removal": (None if self.removal is None
                        else {"kind": self.removal.kind, **self.removal.options()}),
        }
