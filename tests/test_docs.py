"""The documentation site's sources, checked without building it (``mkdocs build --strict`` in
.ci/run does the full check, with the ``docs`` extra): every page is in the nav, every nav entry
exists, and every API reference (``::: module``) names a module that imports, so a renamed or
removed module shows up in the fast suite rather than only in CI's docs build."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def _nav_pages(node) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [page for item in node for page in _nav_pages(item)]
    if isinstance(node, dict):
        return [page for value in node.values() for page in _nav_pages(value)]
    return []


def test_every_page_is_in_the_nav_and_every_nav_entry_exists() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    nav = _nav_pages(config["nav"])
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(nav) == pages
    assert len(nav) == len(set(nav)), "a page listed twice"


REFERENCES = sorted(
    (page.name, match) for page in (DOCS / "reference").glob("*.md")
    for match in re.findall(r"^::: ([\w.]+)\s*$", page.read_text(), flags=re.M)
)


def test_the_api_reference_is_not_empty() -> None:
    assert len(REFERENCES) >= 10


@pytest.mark.parametrize(("page", "module"), REFERENCES)
def test_api_reference_modules_import(page: str, module: str) -> None:
    imported = importlib.import_module(module)
    assert (imported.__doc__ or "").strip(), f"{module} ({page}) has no module docstring"


#: an absolute path: a slash that starts a token, followed by two or more path components (not
#: inside a URL, nor a relative path after a placeholder such as ``results/<campaign>/figures/``)
_ABSOLUTE = re.compile(r"(?<![\w.:/~\-\]\)>}*])(/[A-Za-z_][\w.\-]*/[\w.\-/]*)")
#: the file types a reader opens: the generated reports (docs/reproduction.md,
#: docs/side-by-side.md) and the configs they name are among them
_TEXT_SUFFIXES = {".md", ".yaml", ".yml", ".csv", ".rst", ".txt", ".html", ".json"}


def test_no_committed_document_names_a_machine_path() -> None:
    """Why: a page that says where one machine keeps its files (``/work/...``, ``/home/...``)
    cannot be followed on another, and a generated report that prints one changes its bytes with
    the folder it was built in (issue 22's "no absolute path under docs/")."""
    files = [REPO / "README.md", *(p for root in ("docs", "config")
                                   for p in sorted((REPO / root).rglob("*"))
                                   if p.suffix in _TEXT_SUFFIXES)]
    found = [f"{path.relative_to(REPO)}:{number}: {match}"
             for path in files
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             for match in _ABSOLUTE.findall(line)]
    assert not found, "absolute paths in committed documents:\n" + "\n".join(found)
