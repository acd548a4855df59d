"""Composable parts of a TVBO algorithm.

Every algorithm of the field is a combination of four parts:

* a **surrogate** -- the model of f over the held observations (a spatial GP, a spatio-temporal
  separable GP, TV-GP-UCB's back-to-prior GP, W-GP-UCB's weighted GP, ...);
* an **acquisition** -- how the next query is chosen from the surrogate (UCB at the current time;
  ABO's look-ahead over a future time window; ...);
* a **dataset policy** -- which observations are kept (all; periodic reset; event-triggered reset;
  sliding window; W-DBO's removal budget; BOLT's n*);
* a **removal rule** -- which observation goes when the policy asks for one (W2 relevance;
  oldest first; random).

The named algorithms are presets of these parts (:mod:`tvbo.algorithms.presets`), so ablations
-- BOLT's n* with oldest-first removal, a spatio-temporal GP that never removes -- are one config
line. Each part has a registry keyed by ``kind``; :func:`build_component` makes one from a mapping
``{"kind": ..., **options}`` and names the valid kinds and options on bad input.

The order of one iteration (W-DBO and BOLT, Algorithm 1; the engine charges each phase):
``propose``: [fit if the data changed since the last fit] -> acquisition;
``ingest``: ``policy.before_append`` (e.g. ET-GP-UCB's test on the pre-update posterior) ->
``acquisition.before_append`` (e.g. PE-GP-UCB's elimination test) -> append ->
``acquisition.after_append`` -> fit (post-warm-up) -> ``policy.after_fit`` (cleaning).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
from abc import abstractmethod
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from tvbo.acquisition import AcquisitionOptimizer, make_beta, ucb
from tvbo.algorithms.base import ProblemInfo, Query
from tvbo.gp.exact import ExactGP, Prediction
from tvbo.gp.fit import fit_hyperparameters
from tvbo.gp.fit_modes import FitMode, resolve_fit_mode
from tvbo.gp.kernels import HyperparameterBounds, Hyperparameters, SeparableKernel, correlation
from tvbo.gp.lml import FitResult, LogNormalPrior
from tvbo.work import WorkCounter


@dataclass(frozen=True)
class PartContext:
    """What a part may know about its run, handed to :meth:`Component.bind` once per run.

    Why not the owning algorithm: a part that holds its owner can reach (and depend on) every
    other part and the iteration protocol, so the composition's real dependencies are invisible.
    A part gets this context plus, for removal rules and dataset policies, the parts it works on
    (:meth:`RemovalRule.bind`, :meth:`DatasetPolicy.bind`), named in its signature.
    """

    problem: ProblemInfo
    rng: np.random.Generator
    #: the run's work counter: handed to the models and optimisers, which count their own work
    work: WorkCounter
    #: the engine's virtual clock (BOLT's clock C); never a wall clock
    clock: Callable[[], float]
    #: asynchronous evaluators (tvbo.sim.parallel); 1 for the sequential loop
    evaluators: int = 1


class DatasetEditor:
    """The one way a dataset policy changes the held data: counted removals and resets."""

    def __init__(self, surrogate: Surrogate) -> None:
        self.surrogate = surrogate
        #: observations removed so far (single removals and resets), recorded every iteration
        self.removed_total = 0

    def remove(self, i: int) -> None:
        """Remove observation i from the surrogate."""
        self.surrogate.remove(i)
        self.removed_total += 1

    def reset(self) -> None:
        """Forget the whole dataset (R-GP-UCB, ET-GP-UCB); hyperparameters are kept."""
        self.removed_total += self.surrogate.n
        self.surrogate.clear()


@dataclass(frozen=True)
class Composition:
    """The four parts of one algorithm, as :meth:`Component.check_composition` sees them."""

    surrogate: Surrogate
    acquisition: Acquisition
    dataset: DatasetPolicy
    removal: RemovalRule | None


class Component:
    """Shared plumbing: options, the run context, state.

    A part's options are the keyword arguments of its ``__init__`` (one declaration, with types
    and defaults); :func:`option_type` turns them into the part's frozen option dataclass, which
    :func:`build_component` and the presets use to reject unknown or misplaced options.
    """

    kind: str = ""

    def bind(self, context: PartContext) -> None:
        """Called once the problem is known, before the first query."""
        self.context = context

    @property
    def work(self) -> WorkCounter:
        return self.context.work

    def check_composition(self, parts: Composition) -> None:  # noqa: B027 - optional hook
        """Raise ``ValueError`` if this part cannot work with the other ``parts``.

        Called once, when the algorithm is constructed (before any problem is known), so a
        wrong combination is an error at ``make`` time and nothing is type-checked per iteration.
        """

    def state(self) -> dict[str, float]:
        """Scalars recorded every iteration (prefixed by nothing: keep names distinct)."""
        return {}

    def options(self) -> dict[str, Any]:
        """Resolved options, recorded in the run file."""
        return {}


# ------------------------------------------------------------------------------------------------
# surrogates
# ------------------------------------------------------------------------------------------------
class Surrogate(Component):
    """A model of f over the held observations ``(X, T, y)``."""

    def bind(self, context: PartContext, *,  # type: ignore[override]
             editor: DatasetEditor | None = None) -> None:
        """``editor``: the counted way to remove held observations, for a surrogate that forgets
        on its own (BOKE's discount truncation removes through it, so those removals count
        like a policy's); a surrogate that never removes by itself ignores it."""
        super().bind(context)

    @property
    @abstractmethod
    def n(self) -> int: ...

    @property
    @abstractmethod
    def X(self) -> np.ndarray: ...

    @property
    @abstractmethod
    def T(self) -> np.ndarray: ...

    @property
    @abstractmethod
    def y(self) -> np.ndarray: ...

    @abstractmethod
    def append(self, x: np.ndarray, t: float, y: float) -> None: ...

    @abstractmethod
    def remove(self, i: int) -> None: ...

    def clear(self) -> None:
        """Forget every observation (a reset); hyperparameters are kept."""
        while self.n:
            self.remove(self.n - 1)

    #: whether :meth:`fantasy` conditions exactly (pending-point strategies need it)
    supports_fantasy: bool = False
    #: True for a *set* of models on the shared data (PE-GP-UCB's candidate priors), not one
    #: model over a held dataset: nothing is removed (the run records no ``removed_total``) and
    #: there is no single posterior mean to recommend from
    model_set: bool = False

    @property
    def spatiotemporal(self) -> bool:
        """Whether the surrogate is an exact GP (``.gp``) with a separable space x time kernel.

        The capability the W2 relevance and the policies priced by l_T (W-DBO, BOLT) need; it
        is known from the options alone, so they check it once at construction.
        """
        return False

    @contextmanager
    def fantasy(self, X: np.ndarray, T: np.ndarray, Y: np.ndarray) -> Iterator[Surrogate]:
        """Condition on fantasy observations ``(X, T, Y)`` (pending queries and their lies) for
        the duration of the block, then restore the surrogate exactly.

        Why a snapshot and not ``remove``: appending may refactorise with jitter, and removal
        re-standardises; restoring the attribute dictionaries (appends replace arrays, never
        mutate them) gives back bit-identical state, so a run with pending points differs from
        one without only through the queries chosen. The GP's standardisation is frozen during
        the block (the lies are in the units of the real data). Work done here is charged.
        """
        if not self.supports_fantasy:
            raise ValueError(f"surrogate {self.kind!r} cannot condition on pending queries")
        gp = getattr(self, "gp", None)
        saved = dict(self.__dict__)
        saved_gp = None if gp is None else dict(gp.__dict__)
        try:
            if gp is not None:
                gp.frozen_standardization = True
            for x, t, y in zip(np.asarray(X, float), np.asarray(T, float).reshape(-1),
                               np.asarray(Y, float).reshape(-1), strict=True):
                self.append(x, float(t), float(y))
            yield self
        finally:
            if gp is not None:
                gp.__dict__.clear()
                gp.__dict__.update(saved_gp)
            self.__dict__.clear()
            self.__dict__.update(saved)

    @abstractmethod
    def fit(self) -> None:
        """Hyperparameter inference (in the caller's phase; :meth:`refit` marks its own)."""

    def refit(self) -> None:
        """:meth:`fit`, charged to the ``fit`` phase: the model marks the phase of its own
        work, so the iteration protocol (:class:`~tvbo.algorithms.composed.ComposedAlgorithm`)
        never touches the work counter. A refit a policy asks for inside a cleaning (W-DBO's
        ``refit_after_removal``) calls :meth:`fit` and stays in the ``clean`` phase."""
        with self.context.work.phase("fit"):
            self.fit()

    @abstractmethod
    def predict(self, X: np.ndarray, t: float | np.ndarray, *, grad: bool = False,
                include_noise: bool = False) -> Prediction: ...


#: the GP surrogate's ``hyperparameters`` option: refitted as the run goes, or kept at ``initial``
HYPERPARAMETER_POLICIES: tuple[str, ...] = ("fitted", "fixed")


class GPSurrogate(Surrogate):
    """Exact GP with the separable kernel ``lambda k_S(x, x') k_T(t, t')`` (k_T optional).

    ``time_kernel=None`` gives a purely spatial GP (GP-UCB, R-GP-UCB, ET-GP-UCB, SW-GP-UCB);
    ``time_kernel="problem"`` takes the benchmark's temporal family (Matérn-3/2 by default,
    Matérn-1/2 for WLAN, as in the papers). Hyperparameters (lambda, l_S, l_T, noise) are fitted
    by maximum likelihood with bounds; every fit warm-starts from the previous optimum.

    Two regularisers for small datasets, both off by default (plain ML, every fit with n >= 2):

    * ``prior``: weak log-normal priors, ``{name: (median, log_sd)}`` in natural units, turning
      the fit into MAP-II (:class:`tvbo.gp.lml.LogNormalPrior`). The median of
      ``lengthscale_time`` may be ``"elapsed"``: the virtual time elapsed since the FIRST
      observation ever appended (not the span of the held data, which shrinks when a policy
      removes old points and would feed back into more removals), floored at the lower bound.
    * ``min_fit_size``: no refit while the dataset holds fewer observations; the last fit (from a
      larger dataset) is kept. With 2-3 points the likelihood is degenerate (l_S, l_T -> their
      lower bounds) and a removal policy priced by l_T (W-DBO) would then remove still faster:
      an absorbing state. Must be >= 2.

    ``hyperparameters="fixed"`` never fits: the GP keeps ``initial`` for the whole run (GP-UCB as
    Srinivas et al. state it and as BOKE's Appendix A runs it, "a fixed bandwidth"). The fit's
    options (``fit_mode``, ``prior``, ``fit_max_iter``, ``fit_restarts``, ``min_fit_size``) must
    then stay unset: an error at construction, never ignored.

    ``fit_mode`` (default ``"lbfgs"``: the fit above) selects how the hyperparameters are
    fitted, e.g. ``"gpytorch-adam"`` as the W-DBO public code does (:mod:`tvbo.gp.fit_modes`;
    ``fit_mode_options`` are the mode's options, e.g. ``{"time_scale": 600}``). Other modes bring
    their own constraints, priors and optimiser, so ``prior``, ``bounds``, ``fit_max_iter`` and
    ``fit_restarts`` must stay unset with them (an error at construction, never ignored); the
    bounds still set the starting l_T before the first fit. Warm-starting modes (``uitvbo-map``)
    start the GP at the mode's initial values unless ``initial`` gives them.
    """

    kind = "gp"
    supports_fantasy = True

    @property
    def spatiotemporal(self) -> bool:
        return self.time_kernel_option is not None

    def __init__(
        self,
        *,
        space_kernel: str = "matern52",
        time_kernel: str | None = None,
        bounds: Mapping[str, Any] | None = None,
        initial: Mapping[str, float] | None = None,
        fit_max_iter: int = 50,
        fit_restarts: int = 0,
        standardize: bool = True,
        prior: Mapping[str, Any] | None = None,
        min_fit_size: int = 2,
        fit_mode: str = "lbfgs",
        fit_mode_options: Mapping[str, Any] | None = None,
        hyperparameters: str = "fitted",
    ) -> None:
        if hyperparameters not in HYPERPARAMETER_POLICIES:
            raise ValueError(f"surrogate 'gp': unknown hyperparameters {hyperparameters!r}; "
                             f"valid: {', '.join(HYPERPARAMETER_POLICIES)}")
        if hyperparameters == "fixed":
            given = [name for name, value, default in (
                ("fit_mode", fit_mode, "lbfgs"), ("fit_mode_options", fit_mode_options or {}, {}),
                ("prior", prior or {}, {}), ("fit_max_iter", fit_max_iter, 50),
                ("fit_restarts", fit_restarts, 0), ("min_fit_size", min_fit_size, 2))
                if value != default]
            if given:
                raise ValueError(f"surrogate 'gp': hyperparameters 'fixed' never fits, so "
                                 f"{', '.join(given)} cannot apply; set 'initial' instead")
        self.hyperparameter_policy = hyperparameters
        self.fit_mode = fit_mode
        self.fit_mode_options = dict(fit_mode_options or {})
        self._fit_mode: FitMode | None = resolve_fit_mode(fit_mode, self.fit_mode_options)
        if self._fit_mode is not None:
            given = [name for name, value, default in (
                ("prior", prior, None), ("bounds", bounds, None),
                ("fit_max_iter", fit_max_iter, 50), ("fit_restarts", fit_restarts, 0))
                if value != default and not (name in ("prior", "bounds") and not value)]
            if given:
                raise ValueError(
                    f"surrogate 'gp': fit_mode {fit_mode!r} has its own constraints, priors and "
                    f"optimiser; {', '.join(given)} apply to fit_mode 'lbfgs' only (use a preset "
                    "without priors, e.g. w-dbo-reference or bolt-reference)"
                )
        correlation(space_kernel)
        if time_kernel not in (None, "problem"):
            correlation(time_kernel)
        if fit_max_iter < 1 or fit_restarts < 0:
            raise ValueError("fit_max_iter must be >= 1 and fit_restarts >= 0")
        self.space_kernel = space_kernel
        self.time_kernel_option = time_kernel
        self.bounds = HyperparameterBounds(**dict(bounds or {}))
        init = {"signal_var": 1.0, "lengthscale_space": 0.2, "lengthscale_time": None,
                "noise_var": 0.01}
        unknown = sorted(set(initial or {}) - set(init))
        if unknown:
            raise ValueError(f"initial: unknown hyperparameter(s) {unknown}; valid: {sorted(init)}")
        if self._fit_mode is not None and self._fit_mode.warm_start:
            init.update(self._fit_mode.initial_values(has_time=True))
        init.update(initial or {})
        self.initial = init
        self.fit_max_iter = int(fit_max_iter)
        self.fit_restarts = int(fit_restarts)
        self.standardize = bool(standardize)
        if isinstance(min_fit_size, bool) or int(min_fit_size) != min_fit_size or min_fit_size < 2:
            raise ValueError(f"min_fit_size must be an integer >= 2, got {min_fit_size!r}")
        self.min_fit_size = int(min_fit_size)
        self.prior: dict[str, tuple[Any, ...]] = {}
        for name, pair in dict(prior or {}).items():
            if isinstance(pair, str) or not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(
                    f"prior {name!r} must be a pair (median, log_sd), got {pair!r}; the median of "
                    "'lengthscale_time' may be 'elapsed'"
                )
            self.prior[name] = tuple(pair)
        elapsed = self.prior.get("lengthscale_time", (None,))[0] == "elapsed"
        self._elapsed_prior = elapsed
        # validate now (names, medians, log_sd) with a placeholder median for "elapsed"
        self._prior_for(1.0)
        self._t_first: float | None = None
        self.gp: ExactGP | None = None
        self.last_fit_evals = 0
        # true time stamps of the held observations, also for purely spatial GPs (whose kernel
        # ignores time): policies such as oldest-first need them
        self._stamps = np.empty(0)

    def bind(self, context: PartContext, *, editor: DatasetEditor | None = None) -> None:
        super().bind(context, editor=editor)
        time_kernel = self.time_kernel_option
        if time_kernel == "problem":
            time_kernel = context.problem.temporal_kernel
        self.time_kernel = time_kernel
        init = dict(self.initial)
        if time_kernel is None:
            init["lengthscale_time"] = None
        elif init["lengthscale_time"] is None:
            # a geometric middle of the bounds: no knowledge of the horizon is assumed
            lo, hi = self.bounds.lengthscale_time
            init["lengthscale_time"] = float(np.sqrt(lo * hi))
        kernel = SeparableKernel(space=self.space_kernel, time=time_kernel)
        self.gp = ExactGP(kernel, Hyperparameters(**init), standardize=self.standardize,
                          work=context.work)
        self._stamps = np.empty(0)
        self._t_first = None

    def _prior_for(self, elapsed: float) -> LogNormalPrior | None:
        """The fit's prior, with an ``"elapsed"`` temporal median resolved to ``elapsed``."""
        if not self.prior:
            return None
        mapping = dict(self.prior)
        if self._elapsed_prior:
            lo = self.bounds.lengthscale_time[0]
            mapping["lengthscale_time"] = (max(elapsed, lo), self.prior["lengthscale_time"][1])
        return LogNormalPrior.from_mapping(mapping)

    @property
    def n(self) -> int:
        return self.gp.n

    @property
    def X(self) -> np.ndarray:
        return self.gp.X

    @property
    def T(self) -> np.ndarray:
        view = self._stamps.view()
        view.flags.writeable = False
        return view

    @property
    def y(self) -> np.ndarray:
        return self.gp.y

    def append(self, x, t, y) -> None:
        self.gp.append(np.asarray(x, float), float(t), float(y))
        self._stamps = np.append(self._stamps, float(t))
        if self._t_first is None:
            self._t_first = float(t)

    def remove(self, i: int) -> None:
        self.gp.remove(i)
        self._stamps = np.delete(self._stamps, i)

    def clear(self) -> None:
        d = self.context.problem.d
        self.gp.set_data(np.empty((0, d)), np.empty(0), np.empty(0))
        self._stamps = np.empty(0)

    def fit(self) -> None:
        if self.hyperparameter_policy == "fixed" or self.gp.n < self.min_fit_size:
            return
        if self._fit_mode is not None:
            result = fit_hyperparameters(self.gp, mode=self._fit_mode,
                                         source=f"surrogate:{self.kind}")
        else:
            elapsed = 0.0 if self._t_first is None else self.context.clock() - self._t_first
            result = fit_hyperparameters(self.gp, self.bounds, max_iter=self.fit_max_iter,
                                         n_restarts=self.fit_restarts, rng=self.context.rng,
                                         prior=self._prior_for(elapsed),
                                         source=f"surrogate:{self.kind}")
        self.last_fit_evals = result.n_evals
        self.annotate_fit(result)

    def annotate_fit(self, result: FitResult) -> None:
        """Hook: add surrogate-specific fields to the fit-health record (``result.record``)."""

    def predict(self, X, t, *, grad=False, include_noise=False) -> Prediction:
        return self.gp.predict(X, t, grad=grad, include_noise=include_noise)

    @property
    def hyperparameters(self) -> Hyperparameters:
        return self.gp.hyperparameters

    def state(self) -> dict[str, float]:
        hp = self.gp.hyperparameters
        out = {"signal_var": hp.signal_var, "lengthscale_space": hp.lengthscale_space,
               "noise_var": hp.noise_var, "jitter_events": float(self.gp.jitter_events)}
        if hp.lengthscale_time is not None:
            out["lengthscale_time"] = hp.lengthscale_time
        return out

    def recorded_bounds(self) -> dict[str, Any]:
        """The ``bounds`` option as the constructor accepts it back: the resolved bounds under
        ``fit_mode="lbfgs"``; ``{}`` under another mode, which refuses bounds (its own
        constraints apply; the default bounds only set the first l_T, as they do again)."""
        return dict(self.bounds.__dict__) if self._fit_mode is None else {}

    def options(self) -> dict[str, Any]:
        """The resolved options, exactly the constructor's: ``make(name, **recorded)`` rebuilds
        the same part (the options round-trip contract, :mod:`tvbo.testing.contracts`)."""
        return {"space_kernel": self.space_kernel, "time_kernel": self.time_kernel_option,
                "bounds": self.recorded_bounds(), "initial": self.initial,
                "fit_max_iter": self.fit_max_iter, "fit_restarts": self.fit_restarts,
                "standardize": self.standardize, "prior": dict(self.prior),
                "min_fit_size": self.min_fit_size, "fit_mode": self.fit_mode,
                "fit_mode_options": dict(self.fit_mode_options),
                "hyperparameters": self.hyperparameter_policy}


# ------------------------------------------------------------------------------------------------
# acquisitions
# ------------------------------------------------------------------------------------------------
class Acquisition(Component):
    """Chooses the next query from the surrogate."""

    @abstractmethod
    def select(self, surrogate: Surrogate, t: float) -> np.ndarray | Query:
        """The next x in [0,1]^d for time ``t``, or a :class:`~tvbo.algorithms.base.Query`
        ``(x, at)`` to sample x at a later time ``at`` (ABO's look-ahead)."""

    # an acquisition that learns from the outcome of its own choice (PE-GP-UCB's elimination
    # test, Regret Balancing's play counts) reads the observation around the append:
    def before_append(self, surrogate: Surrogate, x: np.ndarray, t: float, y: float, *,
                      warmup: bool) -> None:  # noqa: B027 - optional hook
        """Called with each observation before the surrogate takes it (pre-update posterior)."""

    def after_append(self, surrogate: Surrogate, x: np.ndarray, t: float, y: float, *,
                     warmup: bool) -> None:  # noqa: B027 - optional hook
        """Called with each observation right after the surrogate took it (before the fit)."""


class UCBAcquisition(Acquisition):
    """GP-UCB at the current time, maximised over x by multi-start L-BFGS-B (Sobol starts).

    ``beta``: schedule (name, number or mapping; default W-DBO's ``0.2 d log(2n)`` with n the
    current dataset size); ``n_restarts`` and ``raw_samples`` default to the W-DBO reference's 20
    and 512; ``include_noise`` uses the noisy predictive sigma as the W-DBO reference does (off).
    """

    kind = "ucb"

    def __init__(self, *, beta: Any = "wdbo", n_restarts: int = 20, raw_samples: int = 512,
                 include_noise: bool = False, maxiter: int = 200) -> None:
        self.beta = make_beta(beta)
        self.optimizer = AcquisitionOptimizer(n_restarts=n_restarts, raw_samples=raw_samples,
                                              maxiter=maxiter)
        self.include_noise = bool(include_noise)
        self.last_beta = float("nan")
        self.calls = 0

    def select(self, surrogate: Surrogate, t: float) -> np.ndarray:
        problem = self.context.problem
        self.calls += 1
        self.last_beta = float(self.beta(problem.d, surrogate.n, self.calls))
        beta = self.last_beta
        incumbent = surrogate.X[[int(np.argmax(surrogate.y))]] if surrogate.n else None

        def acquisition(X: np.ndarray, grad: bool):
            return ucb(surrogate, X, t, beta, grad=grad, include_noise=self.include_noise)

        x, _ = self.optimizer.maximize(acquisition, problem.d, self.context.rng,
                                       candidates=problem.candidates, extra_starts=incumbent,
                                       work=self.work)
        return x

    def state(self) -> dict[str, float]:
        return {"beta": self.last_beta}

    def options(self) -> dict[str, Any]:
        return {"beta": dict(self.beta.__dict__), "n_restarts": self.optimizer.n_restarts,
                "raw_samples": self.optimizer.raw_samples, "include_noise": self.include_noise,
                "maxiter": self.optimizer.maxiter}


# ------------------------------------------------------------------------------------------------
# removal rules and dataset policies
# ------------------------------------------------------------------------------------------------
class RemovalRule(Component):
    """Ranks observations for removal: lower score = removed first."""


    def bind(self, context: PartContext, *, surrogate: Surrogate) -> None:  # type: ignore[override]
        """``surrogate``: the model whose observations the rule ranks."""
        super().bind(context)

    @abstractmethod
    def scores(self, surrogate: Surrogate, now: float) -> np.ndarray:
        """One score per held observation (e.g. its W2 relevance); lowest goes first."""

    def choose(self, surrogate: Surrogate, now: float) -> tuple[int, float]:
        """Index and score of the observation to remove next (ties: the oldest)."""
        s = np.asarray(self.scores(surrogate, now), float)
        order = np.lexsort((surrogate.T, s))
        return int(order[0]), float(s[order[0]])


class OldestFirst(RemovalRule):
    """Removes the observation with the earliest time stamp (a FIFO window)."""

    kind = "oldest"

    def scores(self, surrogate, now):
        return np.asarray(surrogate.T, float)


class RandomRemoval(RemovalRule):
    """Removes a uniformly random observation (a control for relevance-based rules)."""

    kind = "random"

    def scores(self, surrogate, now):
        return self.context.rng.permutation(surrogate.n).astype(float)


class DatasetPolicy(Component):
    """Decides which observations the surrogate keeps.

    Bound with the parts it works on: the ``surrogate`` (read), the ``removal`` rule (None if the
    composition has none) and the ``editor`` (the only way to remove or reset, so the removals
    are counted in one place).
    """


    #: False for a policy that masks observations instead of removing them (SparQ-GP-UCB's
    #: discard rule): no removal can happen, so the run records no ``removed_total``
    removes: ClassVar[bool] = True

    def bind(self, context: PartContext, *, surrogate: Surrogate,  # type: ignore[override]
             removal: RemovalRule | None, editor: DatasetEditor) -> None:
        super().bind(context)
        self.surrogate = surrogate
        self.removal = removal
        self.editor = editor

    def before_append(self, x: np.ndarray, t: float, y: float, *, now: float,
                      warmup: bool) -> None:  # noqa: B027 - optional hook
        """Called before the new observation is added (the pre-update posterior is available)."""

    def after_fit(self, *, now: float, warmup: bool) -> None:  # noqa: B027 - optional hook
        """Called after the observation is added and the hyperparameters refitted (cleaning)."""

    # the iteration protocol calls these: the policy charges its own work to ``clean``
    def clean_before_append(self, x: np.ndarray, t: float, y: float, *, now: float,
                            warmup: bool) -> None:
        """:meth:`before_append` in the ``clean`` phase."""
        with self.context.work.phase("clean"):
            self.before_append(x, t, y, now=now, warmup=warmup)

    def clean_after_fit(self, *, now: float, warmup: bool) -> None:
        """:meth:`after_fit` in the ``clean`` phase."""
        with self.context.work.phase("clean"):
            self.after_fit(now=now, warmup=warmup)


# -- capability: side queries (SparQ-GP-UCB's expert) -----------------------------------------
@runtime_checkable
class SideQueries(Protocol):
    """A part that asks side queries -- an EXPERT's fresh values of f -- before each proposal.

    The engine's side-query protocol (:meth:`Algorithm.side_queries` then
    :meth:`Algorithm.ingest_side`, phase ``side``) is served by
    :class:`~tvbo.algorithms.composed.ComposedAlgorithm` through the one part of its composition
    that has this capability (found once, at construction). The answers complete the iteration's
    data, so the composed algorithm fits once they are in (in ``propose``), not after ``ingest``.
    """

    def side_queries(self, surrogate: Surrogate, t: float) -> np.ndarray | None:
        """Points (m, d) to ask the expert about at time ``t``, or None."""

    def ingest_side(self, surrogate: Surrogate, X: np.ndarray, T: np.ndarray,
                    Y: np.ndarray) -> None:
        """The expert's answers ``Y`` at ``X``, sampled at times ``T``."""


class KeepAll(DatasetPolicy):
    """Never removes anything (GP-UCB, TV-GP-UCB, ABO)."""

    kind = "keep-all"


# ------------------------------------------------------------------------------------------------
# registries
# ------------------------------------------------------------------------------------------------
SURROGATES: dict[str, Callable[..., Surrogate]] = {}
ACQUISITIONS: dict[str, Callable[..., Acquisition]] = {}
DATASET_POLICIES: dict[str, Callable[..., DatasetPolicy]] = {}
REMOVAL_RULES: dict[str, Callable[..., RemovalRule]] = {}

_REGISTRIES = {
    "surrogate": SURROGATES,
    "acquisition": ACQUISITIONS,
    "dataset": DATASET_POLICIES,
    "removal": REMOVAL_RULES,
}


def register_component(role: str, cls: type[Component]) -> type[Component]:
    """Register ``cls`` under ``cls.kind`` for ``role`` (surrogate|acquisition|dataset|removal)."""
    if role not in _REGISTRIES:
        raise ValueError(f"unknown component role {role!r}; valid: {', '.join(_REGISTRIES)}")
    registry = _REGISTRIES[role]
    if not cls.kind:
        raise ValueError(f"{cls.__name__} has no kind")
    if cls.kind in registry:
        raise ValueError(f"{role} {cls.kind!r} is already registered")
    registry[cls.kind] = cls
    return cls


def option_type(cls: type[Component]) -> type:
    """The frozen option dataclass of part class ``cls`` (``<Class>Options``), made once.

    Generated from the keyword arguments of ``cls.__init__`` -- names, type hints and defaults
    -- so a part declares its options in one place (its constructor, whose docstring explains
    them) and every consumer (:func:`build_component`, the presets' routing, the run file's
    record) reads the same declaration. Frozen: options never change after construction.
    """
    cached = cls.__dict__.get("_option_type")
    if cached is not None:
        return cached
    fields: list[tuple[str, Any, Any]] = []
    for p in inspect.signature(cls.__init__).parameters.values():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        annotation = Any if p.annotation is p.empty else p.annotation
        if p.default is p.empty:
            spec = dataclasses.field()
        elif isinstance(p.default, list | dict | set):
            spec = dataclasses.field(default_factory=lambda v=p.default: copy.deepcopy(v))
        else:
            spec = dataclasses.field(default=p.default)
        fields.append((p.name, annotation, spec))
    options = dataclasses.make_dataclass(f"{cls.__name__}Options", fields, frozen=True,
                                         kw_only=True)
    options.__doc__ = f"Options of the part {cls.kind!r} (:class:`{cls.__name__}`)."
    options.__module__ = cls.__module__
    cls._option_type = options
    return options


def option_names(role: str, kind: str | None) -> list[str] | None:
    """The valid options of the registered part ``role``/``kind``, or None if it is unknown."""
    cls = _REGISTRIES.get(role, {}).get(kind or "")
    if cls is None:
        return None
    return [f.name for f in dataclasses.fields(option_type(cls))]


def build_component(role: str, spec: str | Mapping[str, Any] | Component | None) -> Component:
    """Build a part from ``"kind"`` or ``{"kind": ..., **options}``; errors list valid choices.

    The options are first made into the part's frozen option dataclass (:func:`option_type`):
    an unknown option is an error naming the part and its valid options. The built part keeps
    that record as ``part.spec``.
    """
    if role not in _REGISTRIES:
        raise ValueError(f"unknown component role {role!r}; valid: {', '.join(_REGISTRIES)}")
    if isinstance(spec, Component):
        return spec
    registry = _REGISTRIES[role]
    if spec is None:
        raise ValueError(f"{role}: a kind is required; valid: {', '.join(sorted(registry))}")
    options = {"kind": spec} if isinstance(spec, str) else dict(spec)
    kind = options.pop("kind", None)
    if kind not in registry:
        raise ValueError(f"unknown {role} {kind!r}; valid: {', '.join(sorted(registry))}")
    cls = registry[kind]
    valid = sorted(option_names(role, kind) or [])
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ValueError(f"{role} {kind!r}: unknown option(s) {unknown}; valid: {valid}")
    record = option_type(cls)(**options)
    part = cls(**{f.name: getattr(record, f.name) for f in dataclasses.fields(record)})
    part.spec = record
    return part


for _role, _cls in (("surrogate", GPSurrogate), ("acquisition", UCBAcquisition),
                    ("dataset", KeepAll), ("removal", OldestFirst), ("removal", RandomRemoval)):
    register_component(_role, _cls)
