"""Exploration schedules beta for GP-UCB, ``alpha = mu + sqrt(beta) * sigma``.

None of the BOLT papers states the schedule used in its experiments; the public W-DBO reference
uses ``beta = 0.2 * d * log(2 n)`` with ``n`` the *current dataset size* (so beta shrinks when
observations are removed). That is our default. The theoretical schedule of Srinivas et al. (2012,
Thm. 2) is offered for study; it is far more exploratory in practice.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: the generic schedules (registered first below); :func:`make_beta` takes any registered rule
BETA_SCHEDULES: tuple[str, ...] = ("wdbo", "constant", "srinivas", "log")


@dataclass(frozen=True)
class BetaRule:
    """A paper's exploration rule, registered by name with its citation (one small function).

    ``function(**quantities)`` returns beta (or sqrt(beta): ``returns`` says which, since the
    papers state either); the quantities are the rule's own (d, n, k, delta, |X|, a log det...).
    """

    name: str
    function: Callable[..., float]
    citation: str
    returns: str = "beta"  # "beta" or "root_beta"

    def __call__(self, **quantities: float) -> float:
        return float(self.function(**quantities))


#: every named beta rule of the package: the generic schedules below and each paper's own rule
BETA_RULES: dict[str, BetaRule] = {}


def register_beta(name: str, *, citation: str, returns: str = "beta"):
    """Decorator: register ``function`` as the beta rule ``name`` (names are unique)."""
    if returns not in ("beta", "root_beta"):
        raise ValueError(f"returns must be 'beta' or 'root_beta', got {returns!r}")

    def decorate(function: Callable[..., float]) -> Callable[..., float]:
        if name in BETA_RULES:
            raise ValueError(f"beta rule {name!r} is registered twice")
        BETA_RULES[name] = BetaRule(name, function, citation, returns)
        return function

    return decorate


def beta_rule(name: str) -> BetaRule:
    """The registered rule ``name``; an unknown name lists the valid ones."""
    try:
        return BETA_RULES[name]
    except KeyError:
        raise ValueError(
            f"unknown beta rule {name!r}; valid: {', '.join(sorted(BETA_RULES))}"
        ) from None


@register_beta("wdbo", citation="W-DBO public code (Bardou, Thiran & Ranieri 2024): 0.2 d log(2n)")
def wdbo_beta(*, d: int, n: int, scale: float = 0.2) -> float:
    return scale * d * math.log(2 * max(n, 1))


@register_beta("log", citation="Bogunovic, Scarlett & Cevher (2016), Sec. 5: c1 log(c2 k)")
def log_beta(*, k: int, c1: float = 0.8, c2: float = 4.0, floor: float = 1e-3) -> float:
    return max(floor, c1 * math.log(c2 * max(k, 1)))


@register_beta("srinivas", citation="Srinivas et al. (2012), Theorem 2 (a = b = r = 1)")
def srinivas_beta(*, d: int, k: int, delta: float = 0.1) -> float:
    k = max(k, 1)
    return 2 * math.log(k**2 * 2 * math.pi**2 / (3 * delta)) + 2 * d * math.log(
        k**2 * d * math.sqrt(math.log(4 * d / delta))
    )


@register_beta("constant", citation="a fixed beta (a tuning constant; no paper's schedule)")
def constant_beta(*, value: float = 2.0) -> float:
    return value


#: the quantities a schedule hands a rule each call: spatial dimension, dataset size, iteration
SCHEDULE_QUANTITIES: tuple[str, ...] = ("d", "n", "k")


@functools.cache
def _rule_arguments(kind: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(quantities, schedule fields) that rule ``kind`` takes, read once from its signature."""
    parameters = inspect.signature(beta_rule(kind).function).parameters
    quantities = tuple(q for q in SCHEDULE_QUANTITIES if q in parameters)
    fields = tuple(f for f in _SCHEDULE_FIELDS if f in parameters)
    missing = sorted(name for name, p in parameters.items()
                     if name not in quantities and name not in fields and p.default is p.empty)
    if missing:
        raise ValueError(
            f"beta rule {kind!r} needs {missing}, which a schedule cannot give (a schedule gives "
            f"{', '.join(SCHEDULE_QUANTITIES)} and its fields {', '.join(_SCHEDULE_FIELDS)}); "
            "the algorithm that uses it calls tvbo.acquisition.beta.beta_rule directly"
        )
    return quantities, fields


@dataclass(frozen=True)
class BetaSchedule:
    """beta as a function of the spatial dimension d, dataset size n and iteration count k.

    ``kind`` is any registered beta rule (:data:`BETA_RULES`) whose arguments a schedule can
    give: the quantities ``d``, ``n``, ``k`` and the fields below, each passed to the rules that
    take it (a rule returning sqrt(beta) is squared). The generic ones:

      * ``"wdbo"``: ``scale * d * log(2 n)`` (default scale 0.2, the W-DBO reference);
      * ``"constant"``: ``value``;
      * ``"log"``: ``c1 log(c2 k)`` floored at ``floor`` -- Bogunovic et al. (2016, Sec. 5)
        practical schedule (0.8 log(4k) on synthetic data, 0.8 log(0.4k) on temperature; the
        floor keeps it positive for small k);
      * ``"srinivas"``: Srinivas et al. (2012), Theorem 2, with ``a = b = r = 1`` on [0,1]^d:
        ``2 log(k^2 2 pi^2 / (3 delta)) + 2 d log(k^2 d b r sqrt(log(4 d a / delta)))``.
    """

    kind: str = "wdbo"
    scale: float = 0.2
    value: float = 2.0
    delta: float = 0.1
    c1: float = 0.8
    c2: float = 4.0
    floor: float = 1e-3

    def __post_init__(self) -> None:
        if self.kind not in BETA_RULES:
            raise ValueError(
                f"unknown beta schedule {self.kind!r}; valid (registered beta rules): "
                f"{', '.join(sorted(BETA_RULES))}"
            )
        _rule_arguments(self.kind)  # a rule a schedule cannot call is an error now, not later
        for name in ("scale", "value", "delta", "c1", "c2", "floor"):
            number = getattr(self, name)
            if isinstance(number, bool) or not isinstance(number, int | float) or not (
                    math.isfinite(number)):  # NaN passes min() <= 0 below (issue 24 item 5)
                raise ValueError(f"beta schedule: {name} must be a finite number, got {number!r}")
        if min(self.scale, self.value, self.c1, self.c2, self.floor) <= 0:
            raise ValueError("beta schedule: scale, value, c1, c2 and floor must be > 0")
        if not 0 < self.delta < 1:
            raise ValueError(f"beta schedule: delta must be in (0, 1), got {self.delta}")

    def __call__(self, d: int, n: int, k: int) -> float:
        quantities, fields = _rule_arguments(self.kind)
        given = {"d": d, "n": n, "k": k}
        rule = BETA_RULES[self.kind]
        value = rule.function(**{q: given[q] for q in quantities},
                              **{f: getattr(self, f) for f in fields})
        return value * value if rule.returns == "root_beta" else value


_SCHEDULE_FIELDS: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(BetaSchedule) if f.name != "kind"
)


def make_beta(spec: str | float | dict | BetaSchedule | None) -> BetaSchedule:
    """Build a schedule from a registered rule name, a constant number, or a mapping of its
    fields (``{"kind": name, **fields}``); an unknown name lists the registered rules."""
    if spec is None:
        return BetaSchedule()
    if isinstance(spec, BetaSchedule):
        return spec
    if isinstance(spec, bool):
        raise ValueError(f"beta must be a schedule name, a number or a mapping, got {spec!r}")
    if isinstance(spec, int | float):
        return BetaSchedule(kind="constant", value=float(spec))
    if isinstance(spec, str):
        return BetaSchedule(kind=spec)
    if isinstance(spec, dict):
        allowed = {"kind", *_SCHEDULE_FIELDS}
        unknown = sorted(set(spec) - allowed)
        if unknown:
            raise ValueError(f"beta: unknown key(s) {unknown}; valid: {sorted(allowed)}")
        return BetaSchedule(**spec)
    raise ValueError(f"beta must be a schedule name, a number or a mapping, got {spec!r}")


# -- SparQ-GP-UCB (appended by the sparq helper) ----------------------------------------------
@register_beta(
    "sparq-gp-ucb",
    citation="Mauduit, Berthier & Simonetto, SparQ-GP-UCB, Theorem 3.1 / Proposition 4: "
    "sqrt(beta_t) = sqrt(2 ln(2/delta) + ln det(Sigma + K) - ln det Sigma) + B",
    returns="root_beta",
)
def sparq_root_beta(*, information_gain: float, delta: float = 0.05,
                    rkhs_norm: float = 1.0) -> float:
    """The multiplier of sigma; ``information_gain`` = 1/2 (ln det(Sigma+K) - ln det Sigma) comes
    from the model (:meth:`tvbo.gp.exact.ExactGP.information_gain`) on the sparse set."""
    return math.sqrt(2.0 * math.log(2.0 / delta) + 2.0 * information_gain) + rkhs_norm


def rule_beta(rule: BetaRule, **quantities: float) -> float:
    """beta of a registered rule for :func:`tvbo.acquisition.ucb` (which takes beta), whichever
    the rule returns: a ``root_beta`` rule's value r gives ``r * r``, and ``ucb``'s ``sqrt`` of it
    is r again, bit for bit (sqrt(fl(r^2)) = |r| in binary floating point)."""
    value = rule(**quantities)
    return value * value if rule.returns == "root_beta" else value
# -- BOKE (Zhu et al.): the IKR-UCB weight, t = (effective) number of observations held ---------
@register_beta(
    "boke",
    citation="Zhu et al. (2025), BOKE, Theorem 4.13: 2 s^2 M_Psi log(2 pi^2 t^2 / (3 delta))",
)
def boke_beta(*, t: float, noise_scale: float, delta: float = 0.1, m_psi: float = 1.0) -> float:
    """``noise_scale`` is the sub-Gaussian scale s in units of y (what the experiments use)."""
    return 2.0 * noise_scale**2 * m_psi * np.log(2.0 * np.pi**2 * t**2 / (3.0 * delta))


@register_beta(
    "boke-wdbo",
    citation="W-DBO public code's 0.2 d log(2t) (Bardou et al. 2024), in units of var(y), for "
    "BOKE's IKR-UCB (a like-for-like comparison; not in Zhu et al. 2025)",
)
def boke_wdbo_beta(*, d: int, t: float, y_scale: float) -> float:
    return 0.2 * d * np.log(2.0 * max(t, 1.0)) * y_scale**2


# -- ABO (Nyikosa, Osborne & Roberts 2018) ------------------------------------------------------
@register_beta(
    "abo",
    citation="Nyikosa, Osborne & Roberts (2018), ABO, arXiv 1803.03432, author's code "
    "calculateUCBKappa1: kappa_i = (1/5) sqrt(2 log(i^(d/2+2) pi^2 / (3 delta)))",
    returns="root_beta",
)
def abo_kappa(i: int, d: int, delta: float = 0.1) -> float:
    """ABO's exploration weight ``kappa_i`` (= sqrt(beta)); ``i`` is ABO's iteration count.

    The 1/5 is the "practical factor" of Srinivas et al.; computed in log space.
    """
    if i < 1 or d < 1 or not 0 < delta < 1:
        raise ValueError(f"abo_kappa needs i >= 1, d >= 1, 0 < delta < 1; got {i}, {d}, {delta}")
    log_arg = (d / 2.0 + 2.0) * math.log(i) + math.log(math.pi**2 / (3.0 * delta))
    return 0.2 * math.sqrt(2.0 * max(log_arg, 0.0))
# -- PE-GP-UCB [P2]: Ziomek, Adachi & Osborne, "Time-Varying Gaussian Process Bandits with Unknown
# Prior" (spec_sparq_pegpucb.md PART B). Its UCB is mu + sqrt(beta_t) sigma. ---------------------
@register_beta(
    "pe-gp-ucb",
    citation="Ziomek, Adachi & Osborne [P2], Theorem 4.1 case A (spec_sparq_pegpucb.md B.5): "
    "UCB = mu + sqrt(beta_t) sigma, beta_t = 2 log(T |X| pi^2 t^2 / (3 delta)), "
    "T the horizon in steps, |X| the candidate-set size, t the step index",
)
def pegpucb_beta(*, horizon_steps: int, n_candidates: int, t: int, delta: float) -> float:
    return 2.0 * math.log(horizon_steps * n_candidates * math.pi**2 * t**2 / (3.0 * delta))


@register_beta(
    "pe-gp-ucb-xi",
    citation="Ziomek, Adachi & Osborne [P2], Lemma 5.1 with delta_B = delta / 2 "
    "(spec_sparq_pegpucb.md B.5): the elimination test's noise radius "
    "xi_t = 2 R^2 log(|U| pi^2 t^2 / (3 delta)), R^2 the tested prior's noise variance, "
    "|U| the number of candidate priors",
)
def pegpucb_xi(*, noise_var: float, n_priors: int, t: int, delta: float) -> float:
    return 2.0 * noise_var * math.log(n_priors * math.pi**2 * t**2 / (3.0 * delta))


def root_beta(beta: float) -> float:
    """The multiplier of sigma, ``sqrt(beta)`` (a negative beta counts as 0)."""
    return math.sqrt(max(beta, 0.0))
