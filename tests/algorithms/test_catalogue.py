"""The algorithm catalogue is generated from the declarations: the generated module is current,
every paper package is read, and generation refuses declarations that contradict each other."""

from __future__ import annotations

import pytest

from tvbo import _catalogue, registry
from tvbo.algorithms import catalogue
from tvbo.algorithms.declare import Declaration, Part, declaration_modules

PAPERS = ("abo", "boke", "bolt", "gpucb", "pegpucb", "reference", "sparq", "wdbo", "weighted")


def test_the_generated_catalogue_is_current():
    """Regenerating gives the committed bytes (else: python scripts/write_catalogue.py)."""
    assert catalogue.render() == catalogue.CATALOGUE_FILE.read_text(encoding="utf-8"), (
        "tvbo/_catalogue.py is stale: run python scripts/write_catalogue.py"
    )


def test_every_paper_package_is_read():
    names = [m.__name__ for m in declaration_modules()]
    assert names[0] == "tvbo.algorithms.declare"
    assert names[1:] == [f"tvbo.algorithms.{paper}.declare" for paper in PAPERS]


def test_the_tables_the_start_up_path_reads_come_from_the_catalogue():
    from tvbo.algorithms.display import ALGORITHM_INFO, REFERENCE_POLICIES
    from tvbo.algorithms.presets import PRESETS

    presets = {e.name for e in registry.ALGORITHMS if e.kind == "preset"}
    assert presets == set(_catalogue.PRESETS) <= set(PRESETS)
    assert PRESETS["bolt"] is not _catalogue.PRESETS["bolt"]  # register_preset never edits it
    assert set(registry.names("algorithms")) == set(_catalogue.DISPLAY) <= set(ALGORITHM_INFO)
    assert REFERENCE_POLICIES == ("random-search", "centre", "best-static")


def _with(monkeypatch, package: str, *, algorithms=None, parts=None) -> None:
    module = next(m for m in declaration_modules()
                  if m.__name__ == f"tvbo.algorithms.{package}.declare")
    if algorithms is not None:
        monkeypatch.setattr(module, "ALGORITHMS", (*module.ALGORITHMS, *algorithms))
    if parts is not None:
        monkeypatch.setattr(module, "PARTS", (*module.PARTS, *parts))


def test_a_name_declared_twice_is_refused(monkeypatch):
    again = Declaration("bolt", "BOLT", "again", "nobody", preset={"surrogate": "gp"})
    _with(monkeypatch, "abo", algorithms=[again])
    with pytest.raises(ValueError, match="'bolt' is declared twice"):
        catalogue.tables()


def test_a_preset_of_an_undeclared_part_is_refused(monkeypatch):
    odd = Declaration("odd", "Odd", "odd", "nobody",
                      preset={"surrogate": {"kind": "gp"}, "acquisition": {"kind": "nope"}})
    _with(monkeypatch, "abo", algorithms=[odd])
    with pytest.raises(ValueError, match="preset 'odd': acquisition 'nope' is not a declared"):
        catalogue.tables()


def test_a_part_declared_twice_and_a_factory_of_another_name_are_refused(monkeypatch):
    _with(monkeypatch, "abo", parts=[Part("parts:ABOAcquisition", "again", "nobody")])
    with pytest.raises(ValueError, match=r"declared twice: \['acquisition/abo'\]"):
        catalogue.tables()
    monkeypatch.undo()
    wrong = Declaration("middle", "Middle", "x", "nobody", factory="policies:CentrePolicy")
    _with(monkeypatch, "reference", algorithms=[wrong])
    with pytest.raises(ValueError, match="builds another name"):
        catalogue.tables()


def test_a_role_a_preset_does_not_have_is_refused(monkeypatch):
    odd = Declaration("odd", "Odd", "odd", "nobody", preset={"surogate": {"kind": "gp"}})
    _with(monkeypatch, "abo", algorithms=[odd])
    with pytest.raises(ValueError, match=r"unknown role\(s\) \['surogate'\]"):
        catalogue.tables()
