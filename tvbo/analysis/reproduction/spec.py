"""The reproduction spec: which campaign reproduces which table or claim, and why cells differ.

The spec is a YAML file (``config/reproduction.yaml``; not a workflow config) read by
:func:`load_spec`, which validates every name *before* any campaign is read, so that a typo is one
clear line naming the field, the value and the valid choices. Sections:

``campaigns``
    key -> ``{config: FILE | [FILE, ...], overrides: {key: value}, note: text, replicate: KEY}``
    (``replicate``: the campaign that repeats this one on held-out seeds). ``config`` is
    resolved relative to the spec file; later files and then ``overrides`` win, as Snakemake's
    ``--configfile A B --config k=v``. The campaign's results are ``<results>/<campaign>/
    campaign.nc`` (``campaign`` from the merged config), and :attr:`CampaignSpec.command` is the
    command that produces them.
``tables``
    ``[{paper: PAPER, campaign: KEY, aliases: {paper name: campaign name}}]``: a published table
    (:data:`tvbo.analysis.published.PAPERS`) and the campaign that reproduces it; ``aliases``
    defaults to the campaign config's ``paper_aliases`` (those naming the paper's algorithms).
    Optional ``head_to_head: [A, B]`` (two of the table's algorithms, campaign names): the
    report counts the benchmarks on which A is better than B by more than the standard errors,
    on each side (a paper's headline comparison, e.g. BOLT vs W-DBO).
``sensitivity``
    ``[{paper: PAPER, campaign: KEY, base: KEY}]``: a campaign with several hardware speeds whose
    pairwise orderings are checked at every speed. Optional ``base``: a campaign of the same
    settings whose runs supply the speeds the sensitivity campaign does not run (the table's own
    campaign at speed 1: those runs are not made twice); every setting but the campaign's name,
    seeds, speeds, algorithms, benchmarks and grouping must be equal.
``overlay``
    ``{name, config, campaigns, note}``: a config laid after the named campaigns' files when the
    papers' setting cannot be had (the offline Temperature day); their results folder becomes
    ``<campaign>_<name>`` and the report's summary line names the stand-in.
``explanations``
    ``[{table | claim, benchmarks, algorithms, focus, explains, predictions, cause, evidence}]``:
    why tvbo orders some pairs of a published table differently, or (``claim``: a claim's
    ``id``) why a seed paper's claim fails on some comparisons (``explains``: tvbo's order on
    the claim's measure, e.g. ``"sphere6: gp-ucb < boke"``; the claim's campaign is the
    predictions' default and, without a replicate in the spec, they are judged on its seeds).
    ``explains``: the pairs the entry explains with tvbo's predicted order (``"[BENCHMARK:] A <
    B"``, lower regret first), each within the entry's benchmarks and algorithms.
    ``predictions``: at least one, each a ``quantity`` of :data:`QUANTITY_NAMES` with ``order:
    "A < B"`` (or ``<=``, ``=``, ``>``, ``>=``, chained ``A <= B <= C``; ``ALG@CAMPAIGN`` names
    another campaign), ``bound: "A > VALUE"`` (or ``<``) or ``towards_paper: "COLUMN ->
    VARIANT"``, optional ``benchmarks`` and ``campaign``. An entry with ``all`` benchmarks or
    algorithms is *broad*: context only, it may not have ``explains``. Causes carry no numerals
    (:data:`NUMERAL`). ``evidence``: context lines, not judged.
    :mod:`tvbo.analysis.reproduction.predict` evaluates the predictions.
``fit_causes``
    ``[{table, algorithms, paper_setting, source, cause, evidence: [...]}]``: why an algorithm of
    a table's campaign fits a temporal lengthscale beyond the horizon in more than the limit's
    share of its fits (the report's fit-health subsection). ``paper_setting`` (true / false) says
    whether its paper's own setting produces it (``source``: where the paper or its code states
    that setting; ``quote``, required with true: the words that state it);
    ``algorithms`` are names of the table's campaign (its extra rows included).
``claims``
    ``[{id, paper, source, quote, campaign, benchmarks, algorithms, baselines, measure, relation,
    reason, evidence}]``: a seed paper's headline claim and how tvbo's runs test it.
``published_code``
    ``{runs, explanations, page, sides, comparisons}``: the published code's runs (a committed
    table of measured runs) against tvbo's campaigns, with the explanations file's predictions;
    read by :mod:`tvbo.analysis.reproduction.published_spec`, which documents the keys.

Evidence kinds (:data:`EVIDENCE_KINDS`): ``variant`` (two algorithms of one campaign side by side,
e.g. the faithful ``w-dbo-reference`` vs ``w-dbo``), ``fit_health`` (fits at a bound, runs with
l_T beyond the horizon, from the ``fit_*`` run-file variables), ``metric`` (average vs
time-integrated regret and number of queries), ``state`` (a ``state_*`` variable per algorithm) and
``setting`` (the same algorithms in another campaign that changes one setting the papers leave
open, e.g. the time range of Griewank's time coordinate, beside the ``reference`` campaign).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from tvbo.analysis.reproduction.published_spec import PublishedCode

EVIDENCE_KINDS: dict[str, tuple[str, ...]] = {
    # kind -> required keys besides ``kind`` and ``campaign``
    "variant": ("algorithm_a", "algorithm_b"),
    "fit_health": (),
    "metric": (),
    "state": ("variable",),
    "setting": ("reference",),
}


#: optional keys of every evidence kind
EVIDENCE_OPTIONAL: dict[str, tuple[str, ...]] = {
    "variant": ("metric", "benchmarks"),
    "fit_health": ("algorithms", "benchmarks"),
    "metric": ("algorithms", "benchmarks"),
    "state": ("algorithms", "benchmarks", "summary"),
    "setting": ("algorithms", "benchmarks", "metric", "setting"),
}


#: the curves of :data:`tvbo.analysis.paper_figures.CURVES` (repeated so that reading the spec,
#: which the workflow does when it is parsed, does not import matplotlib; a test keeps them equal)
CURVE_NAMES: tuple[str, ...] = ("average", "cumulative", "simple")


STATE_SUMMARIES: tuple[str, ...] = ("mean", "final")


VARIANT_METRICS: tuple[str, ...] = ("average_regret", "time_integrated_regret", "n_iterations")


RELATIONS: tuple[str, ...] = ("better", "not_worse")


MEASURE_AT: tuple[str, ...] = ("final", "cpu_time")


SECTIONS: tuple[str, ...] = (
    "campaigns", "overlay", "tables", "sensitivity", "explanations", "fit_causes", "claims",
    "published_code",
)


#: the declared vocabulary of measured quantities a prediction may name (one definition each,
#: computed by :mod:`tvbo.analysis.reproduction.predict`; a test keeps the two equal)
QUANTITY_NAMES: tuple[str, ...] = (
    "average_regret", "time_integrated_regret", "queries", "dataset_size", "resets",
    "removals", "noise_var", "forgetting_rate", "lookahead", "nstar", "lT_beyond_horizon",
    "fits_at_bound",
    # read from the queries (tvbo/analysis/reproduction/query_quantities.py)
    "bowl_share", "bowl_median", "face_share", "beats_warmup", "simple_regret",
    "cumulative_regret", "true_prior_share",
)

#: the relations of an ``order`` prediction (``A > B`` is read as ``B < A``, ``A >= B`` as
#: ``B <= A``) and of a ``bound`` prediction
ORDER_RELATIONS: tuple[str, ...] = ("<", "<=", ">", ">=", "=")
BOUND_RELATIONS: tuple[str, ...] = (">", "<")


#: a number typed into a cause text: digits not glued to a name (``Hartmann-6``, ``W2`` and
#: ``[B]`` are names; ``0.54``, ``1e-5``, ``l_T/3`` and ``10 %`` are numbers)
NUMERAL = re.compile(r"(?<![A-Za-z_\-])\d+(?:[.,]\d+)?")


@dataclass(frozen=True)
class CampaignSpec:
    """A campaign named in the spec: its config files, overrides and the merged config."""

    key: str
    configs: tuple[Path, ...]
    overrides: dict[str, Any]
    merged: dict[str, Any]
    note: str = ""
    #: the key of the campaign that replicates this one on held-out seeds
    replicate: str | None = None
    #: the overlay applied to it (a stand-in), or None
    overlay: str | None = None

    @property
    def name(self) -> str:
        """The campaign's results folder name (``campaign`` of the merged config)."""
        return str(self.merged["campaign"])

    @property
    def benchmarks(self) -> list[str]:
        return [str(b) for b in self.merged.get("benchmarks") or []]

    @property
    def algorithms(self) -> list[str]:
        return [str(a) for a in self.merged.get("algorithms") or []]

    def config_text(self, root: Path | None = None) -> str:
        """The campaign's config: its files (relative to ``root``) and overrides, in words."""
        files = []
        for path in self.configs:
            try:
                files.append(str(path.resolve().relative_to((root or Path.cwd()).resolve())))
            except ValueError:
                files.append(str(path))
        text = " + ".join(files)
        if self.overrides:
            text += " with " + ", ".join(
                f"{k}: {yaml.safe_dump(v, default_flow_style=True, width=10**6).strip()}"
                .removesuffix("\n...") for k, v in self.overrides.items())
        return text

    def command(self, root: Path | None = None) -> str:
        """The command that builds this campaign: the workflow's driver rule
        (``reproduction_campaign``) runs Snakemake on :meth:`config_text`'s files and overrides
        (written to a config file: ``--config`` reads list items as text)."""
        del root  # the command names the results file, relative to the working directory
        return shlex.join(["snakemake", "--cores", "N", f"results/{self.name}/campaign.nc"])


@dataclass(frozen=True)
class Overlay:
    """A config laid over some campaigns when the papers' setting cannot be had (the offline
    Temperature day): their results folder is ``<campaign>_<name>``, the report says so."""

    name: str
    config: Path
    campaigns: tuple[str, ...]
    note: str


@dataclass(frozen=True)
class Evidence:
    """One evidence spec: a kind, the campaign it reads and the kind's parameters."""

    kind: str
    campaign: str
    params: dict[str, Any]


@dataclass(frozen=True)
class TableSpec:
    paper: str
    campaign: str
    aliases: dict[str, str] = field(default_factory=dict)
    #: (A, B): count the benchmarks where A beats B beyond the s.e., on both sides
    head_to_head: tuple[str, str] | None = None


@dataclass(frozen=True)
class SensitivitySpec:
    paper: str
    campaign: str
    #: the campaign's ``paper_aliases`` naming the paper's algorithms (as a table's default)
    aliases: dict[str, str] = field(default_factory=dict)
    #: the campaign whose runs supply the speeds the campaign does not run, or None
    base: str | None = None


@dataclass(frozen=True)
class Term:
    """One side of an order: an algorithm of a campaign (the prediction's, unless named)."""

    algorithm: str
    campaign: str

    def label(self, default: str) -> str:
        return self.algorithm if self.campaign == default else f"{self.algorithm}@{self.campaign}"


@dataclass(frozen=True)
class Prediction:
    """A measured quantity with the sign or order an explanation predicts, per benchmark.

    ``kind`` ``order``: ``quantity(lower) < quantity(higher)`` beyond the s.e. (the report's
    tie rule: the intervals mean ± 1 s.e. do not overlap) with ``relation`` ``<``; ``<=``: not
    beyond the s.e. above; ``=``: a tie. ``bound``: ``quantity(lower)`` beyond ``bound`` by
    more than its s.e., above it (``relation`` ``>``) or below (``<``); ``higher`` is
    ``lower``. ``towards_paper``: switching the table's column ``lower`` (its algorithm) to the
    variant ``higher`` moves the quantity towards the paper's cell of ``lower`` by more than the
    two s.e. together. Evaluated on each of ``benchmarks`` in ``campaign`` and in its held-out
    replicate.
    """

    kind: str
    quantity: str
    lower: Term
    higher: Term
    benchmarks: tuple[str, ...]
    campaign: str
    #: the spec's text of the prediction (the report prints it)
    text: str = ""
    #: order: ``<``, ``<=`` or ``=``; bound: ``>`` or ``<``
    relation: str = "<"
    #: the value of a ``bound`` prediction
    bound: float | None = None


@dataclass(frozen=True)
class Direction:
    """A disagreeing pair an entry explains and tvbo's order it predicts: ``lower`` < ``higher``
    in the table's regret on ``benchmark``."""

    benchmark: str
    lower: str
    higher: str

    def pair(self) -> frozenset[str]:
        return frozenset((self.lower, self.higher))


@dataclass(frozen=True)
class Explanation:
    table: str
    benchmarks: tuple[str, ...]
    algorithms: tuple[str, ...]
    cause: str
    evidence: tuple[Evidence, ...]
    focus: tuple[str, ...] = ()
    #: the pairs it explains, each with the direction tvbo's runs must show (empty: context only)
    explains: tuple[Direction, ...] = ()
    predictions: tuple[Prediction, ...] = ()
    #: ``benchmarks: all`` or ``algorithms: all``: adds context, never explains a pair
    broad: bool = False
    #: its place in the spec (``explanations[i]``), named by every line about it
    where: str = ""
    #: the id of the seed paper's claim it explains (``table`` is then empty): its ``explains``
    #: are comparisons of the claim that did not succeed, in tvbo's order on the claim's measure
    claim: str = ""

    def covers(self, table: str, benchmark: str, a: str, b: str) -> bool:
        """Whether the entry's names include the pair (context: it explains only ``explains``).

        Both must be among ``algorithms``; with ``focus`` (a subset of them), one of the two must
        be a focus algorithm (e.g. ABO against every other: ``focus: [abo]``).
        """
        return (
            table == self.table
            and benchmark in self.benchmarks
            and a in self.algorithms
            and b in self.algorithms
            and (not self.focus or a in self.focus or b in self.focus)
        )

    def direction(self, benchmark: str, a: str, b: str) -> Direction | None:
        """The entry's direction for the pair (a, b) on ``benchmark`` (None: not explained)."""
        if self.broad:
            return None
        pair = frozenset((a, b))
        return next((d for d in self.explains if d.benchmark == benchmark and d.pair() == pair),
                    None)


@dataclass(frozen=True)
class FitCause:
    """Why an algorithm's fits put l_T beyond the horizon, and whether its paper's setting does."""

    table: str
    algorithms: tuple[str, ...]
    paper_setting: bool
    source: str
    cause: str
    evidence: tuple[Evidence, ...]
    #: the quoted words of ``source`` that state the setting (required with paper_setting)
    quote: str = ""


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    source: str
    quote: str
    campaign: str
    benchmarks: tuple[str, ...]
    algorithms: tuple[str, ...]
    baselines: tuple[str, ...]
    curve: str
    at: str
    cpu_time: float | None
    relation: str
    reason: str
    evidence: tuple[Evidence, ...]


@dataclass(frozen=True)
class Spec:
    path: Path
    campaigns: dict[str, CampaignSpec]
    tables: tuple[TableSpec, ...]
    sensitivity: tuple[SensitivitySpec, ...]
    explanations: tuple[Explanation, ...]
    claims: tuple[Claim, ...]
    fit_causes: tuple[FitCause, ...] = ()
    overlay: Overlay | None = None
    #: the published code's runs against tvbo's campaigns (None: no such section)
    published_code: PublishedCode | None = None

    def replicate(self, campaign: str) -> str | None:
        """The held-out replicate's campaign key of ``campaign`` (None: it has none)."""
        return self.campaigns[campaign].replicate
