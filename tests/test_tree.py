"""The test tree mirrors the package: ``tests/<package>/`` holds the tests of ``tvbo/<package>/``,
``tests/workflow/`` those of the Snakemake workflow, and ``tests/`` itself those of the top-level
modules (``cli``, ``api``, ``runspec``, ...) and the shared helpers (``toys``, ``fake_runs``).
A newcomer looking for the tests of a module finds them where the module is."""

from pathlib import Path

import tvbo

TESTS = Path(__file__).resolve().parent
PACKAGE = Path(tvbo.__file__).resolve().parent
NOT_TESTS = {"fixtures", "__pycache__"}


def _subpackages() -> set[str]:
    return {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}


def _test_folders() -> set[str]:
    return {p.name for p in TESTS.iterdir() if p.is_dir() and p.name not in NOT_TESTS}


def test_every_package_has_a_test_folder() -> None:
    missing = sorted(_subpackages() - _test_folders())
    assert not missing, f"tvbo packages without tests/<package>/: {missing}"


def test_every_test_folder_is_a_package_or_the_workflow() -> None:
    # reference: tvbo against the published code it emulates (GPyTorch, BoTorch, wdbo-algo;
    # the `reference` extra), across packages
    stray = sorted(_test_folders() - _subpackages() - {"workflow", "reference"})
    assert not stray, f"test folders that mirror no tvbo package: {stray}"


def test_test_folders_are_packages() -> None:
    """Same-named test modules in two folders (e.g. ``models/test_nstar.py`` and
    ``analysis/test_nstar.py``) need ``__init__.py`` so pytest imports them by package."""
    bare = sorted(name for name in _test_folders() if not (TESTS / name / "__init__.py").is_file())
    assert not bare, f"test folders without __init__.py: {bare}"


def test_root_holds_only_top_level_module_tests() -> None:
    """A root test named after a package belongs in that package's folder."""
    misplaced = sorted(p.name for p in TESTS.glob("test_*.py")
                       if p.stem.removeprefix("test_").split("_")[0] in _subpackages())
    assert not misplaced, f"move into tests/<package>/: {misplaced}"
