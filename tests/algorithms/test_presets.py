"""Typed part options and preset routing (tvbo.algorithms.presets, components.option_type)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import yaml

from tvbo import algorithms
from tvbo.algorithms import ProblemInfo, make
from tvbo.algorithms.components import (
    ACQUISITIONS,
    DATASET_POLICIES,
    REMOVAL_RULES,
    SURROGATES,
    Component,
    DatasetEditor,
    PartContext,
    UCBAcquisition,
    option_names,
    option_type,
)
from tvbo.work import WorkCounter

REPO = Path(__file__).resolve().parents[2]


def test_every_part_has_a_frozen_option_dataclass_from_its_constructor():
    algorithms.load_all()
    for role, registry in (("surrogate", SURROGATES), ("acquisition", ACQUISITIONS),
                           ("dataset", DATASET_POLICIES), ("removal", REMOVAL_RULES)):
        for kind, cls in registry.items():
            options = option_type(cls)
            assert dataclasses.is_dataclass(options) and options.__dataclass_params__.frozen
            assert option_type(cls) is options  # made once
            assert option_names(role, kind) == [f.name for f in dataclasses.fields(options)]
    # subclasses get their own (tv-gp has eps options the gp surrogate lacks)
    assert "time_axis" in option_names("surrogate", "tv-gp")
    assert "time_axis" not in option_names("surrogate", "gp")
    record = option_type(UCBAcquisition)(beta=2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.beta = 3.0  # type: ignore[misc]


def test_a_built_part_keeps_its_option_record():
    alg = make("w-dbo", beta=2.0)
    assert alg.acquisition.spec.beta == 2.0
    assert alg.dataset.spec.max_removals == 2  # the robust preset's
    assert alg.acquisition.spec == option_type(UCBAcquisition)(beta=2.0)


def test_a_shortcut_goes_to_the_one_part_that_has_it():
    assert make("gp-ucb", beta=2.0).acquisition.beta.value == 2.0
    assert make("w-dbo", max_removals=None).dataset.max_removals is None
    assert make("w-dbo", alpha=0.5).dataset.alpha == 0.5


def test_an_unknown_shortcut_lists_every_part_and_its_options():
    with pytest.raises(ValueError) as info:
        make("w-dbo", betta=2)
    message = str(info.value)
    assert "unknown option 'betta'" in message
    for part in ("surrogate 'gp'", "acquisition 'ucb'", "dataset 'wdbo-budget'", "removal 'w2'"):
        assert part in message
    assert "'max_removals'" in message and "'beta'" in message


def test_an_ambiguous_shortcut_is_an_error_naming_both_parts():
    with pytest.raises(ValueError, match="'fit_max_iter' is ambiguous: it is an option of "
                                         "surrogate 'gp' and dataset 'periodic-reset'"):
        make("r-gp-ucb", fit_max_iter=10)
    # given inside its role it is fine, and goes where it was put
    alg = make("r-gp-ucb", dataset={"fit_max_iter": 10})
    assert alg.dataset.fit_max_iter == 10 and alg.surrogate.fit_max_iter == 50


def test_a_misplaced_option_names_its_part_and_where_it_belongs():
    with pytest.raises(ValueError, match=r"acquisition 'ucb': unknown option\(s\) "
                                         r"\['max_removals'\]; valid: \['beta'.*"
                                         r"'max_removals' is an option of dataset 'wdbo-budget'"):
        make("w-dbo", acquisition={"max_removals": 2})
    with pytest.raises(ValueError, match=r"dataset 'keep-all': unknown option\(s\) \['beta'\]"):
        make("gp-ucb", dataset={"beta": 2.0})


def _configs():
    for path in sorted([*REPO.glob("config/*.yaml"), *REPO.glob(".test/*.yaml")]):
        options = (yaml.safe_load(path.read_text()) or {}).get("algorithm_options") or {}
        for name, opts in options.items():
            yield path.name, name, dict(opts or {})


def test_every_algorithm_options_entry_of_the_configs_still_routes():
    """The composed presets' entries of config/*.yaml and .test/*.yaml are valid and unambiguous
    (entries of algorithms implemented as classes are checked by their own tests)."""
    from tvbo.algorithms.labels import split_label_options
    from tvbo.algorithms.presets import PRESETS

    algorithms.load_all()
    for _, name, opts in _configs():
        opts, _ = split_label_options(opts)
        if str(opts.get("preset") or name) in PRESETS:
            make(name, **opts)
    # the one-line ablations config/README.md documents
    make("gp-ucb", beta=2.0)
    make("bolt-fifo", preset="bolt", removal="oldest")
    alg = make("w-dbo-ml", preset="w-dbo", surrogate={"prior": None}, max_removals=None)
    assert not alg.surrogate.prior and alg.dataset.max_removals is None


def test_parts_get_a_context_not_their_owner():
    alg = make("w-dbo")
    clock = {"now": 0.0}
    alg.setup(ProblemInfo(d=2), np.random.default_rng(0), WorkCounter(),
              clock=lambda: clock["now"])
    for part in alg.parts():
        assert isinstance(part.context, PartContext)
        assert not hasattr(part, "algorithm")
    assert alg.dataset.surrogate is alg.surrogate and alg.dataset.removal is alg.removal
    assert isinstance(alg.dataset.editor, DatasetEditor)
    for x in np.random.default_rng(1).random((3, 2)):
        alg.surrogate.append(x, clock["now"], float(x.sum()))
    alg.dataset.editor.remove(0)
    alg.dataset.editor.reset()
    assert alg.removed_total == 3 and alg.surrogate.n == 0


def test_option_records_round_trip_through_build_component():
    from tvbo.algorithms import build_component

    alg = make("bolt", surrogate={"bounds": {"lengthscale_time": [10.0, 1000.0]}})
    for role, part in (("surrogate", alg.surrogate), ("acquisition", alg.acquisition),
                       ("dataset", alg.dataset), ("removal", alg.removal)):
        rebuilt = build_component(role, {"kind": part.kind, **dataclasses.asdict(part.spec)})
        assert rebuilt.spec == part.spec and rebuilt.options() == part.options()


def test_the_parts_mark_their_own_phases():
    """The iteration protocol never touches the counter: the model charges its fit to ``fit``,
    the policy its cleaning (here W-DBO's W2 passes) to ``clean``."""
    alg = make("w-dbo", n_restarts=2, raw_samples=16)
    work = WorkCounter()
    clock = {"now": 0.0}
    alg.setup(ProblemInfo(d=2), np.random.default_rng(0), work, clock=lambda: clock["now"])
    rng = np.random.default_rng(3)
    for k in range(8):
        x = rng.random(2)
        clock["now"] = float(k + 1)
        alg.ingest(x, float(k), float(np.sin(4 * x.sum() + k / 3)), now=clock["now"],
                   warmup=k < 5)
    counts = work.counts()
    assert counts["fit"]["call"] > 0  # post-warm-up fits, marked by Surrogate.refit
    assert counts["clean"]["flop"] > 0  # the W2 relevance of the budget's cleaning


def test_no_part_holds_its_owning_algorithm():
    """Parts get a PartContext (and the parts they work on), never the algorithm: after setup
    no part of any registered preset holds a reference to its ComposedAlgorithm."""
    from tvbo.algorithms.presets import PRESETS, build

    algorithms.load_all()
    assert not hasattr(Component, "owner_link")
    for name in PRESETS:
        alg = build(name)
        alg.setup(ProblemInfo(d=2), np.random.default_rng(0), WorkCounter(), clock=lambda: 0.0)
        for part in alg.parts():
            assert isinstance(part.context, PartContext), (name, part.kind)
            held = [key for key, value in vars(part).items() if value is alg]
            assert not held, f"{name}: part {part.kind!r} holds its algorithm as {held}"


def test_every_part_records_only_its_own_options():
    """options() records exactly the constructor's options, so the record rebuilds the part:
    no option of a parent part (tv-gp has no prior/time_kernel/min_fit_size) and no option
    another fit mode refuses (gpytorch-adam records bounds as {})."""
    from tvbo.algorithms.components import build_component
    from tvbo.algorithms.presets import PRESETS, build

    algorithms.load_all()
    for name in PRESETS:
        alg = build(name)
        for role, part in zip(("surrogate", "acquisition", "dataset", "removal"),
                              (alg.surrogate, alg.acquisition, alg.dataset, alg.removal),
                              strict=True):
            if part is None:
                continue
            recorded = part.options()
            assert sorted(recorded) == sorted(option_names(role, part.kind)), (name, role)
            again = build_component(role, {"kind": part.kind, **recorded})
            assert again.options() == recorded, (name, role)
    paper = build("w-dbo-paper")
    assert paper.surrogate.options()["bounds"] == {}
