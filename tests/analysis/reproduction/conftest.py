"""The fake campaigns and their report, built once for the reproduction tests
(:mod:`tests.analysis.reproduction.fakes`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.analysis.reproduction.fakes import (
    _claim_campaign,
    _spec,
    _table_campaign,
)
from tvbo.analysis.reproduction.report import build_report


@pytest.fixture(scope="package")
def fake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the spec (config/) and the two fake campaigns (results/), built once."""
    tmp_path = tmp_path_factory.mktemp("reproduction")
    _table_campaign(tmp_path / "results")
    _table_campaign(tmp_path / "results", "bolt_fake_heldout", (3, 4, 5))
    _claim_campaign(tmp_path / "results")
    _spec(tmp_path)
    return tmp_path


@pytest.fixture(scope="package")
def built(fake: Path):
    """The report of the fake campaigns, built once for the tests that read it."""
    return build_report(fake / "config" / "reproduction.yaml", fake / "results")
