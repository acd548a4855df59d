"""Layers only point down (issue 11 item 6): the import rules of tvbo.testing.layers hold on the
package, with the known exceptions listed below, and the check fails on synthetic packages that
break each rule."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import tvbo
from tvbo.testing import layers
from tvbo.testing.layers import Known, check, check_table, verdict

PACKAGE = Path(tvbo.__file__).parent

#: violations inside files that other work is rewriting now; each goes when its file is fixed
#: (the test fails on a stale entry, so this list only shrinks)
ALLOWED_EXCEPTIONS: list[Known] = [
]


def test_the_declared_layers_are_consistent():
    assert check_table() == []


def test_the_package_keeps_its_layers():
    problems = verdict(check(PACKAGE), ALLOWED_EXCEPTIONS)
    assert not problems, "\n".join(problems)


def test_every_unit_of_the_table_exists_in_the_package():
    present = {layers.unit_of(m.name) for m in layers.scan(PACKAGE)}
    assert set(layers.UNITS) <= present, sorted(set(layers.UNITS) - present)


# -- the check fails where it must: synthetic packages ------------------------------------------

#: a clean package with one module per unit, each importing what it sits on (and some
#: import-time code that is NOT a side effect: reads, function bodies, the main guard)
CLEAN: dict[str, str] = {
    "__init__.py": """
        from tvbo.version import __version__

        def __getattr__(name):
            from tvbo.api import simulate
            return simulate
    """,
    "version.py": "__version__ = '0'",
    "blas_kernel.py": "import os",
    "_lazy.py": "import importlib",
    "work.py": """
        import os
        THREADS = os.environ.get("OMP_NUM_THREADS")

        def pin():
            os.environ["OMP_NUM_THREADS"] = "1"

        if __name__ == "__main__":
            os.environ["X"] = "1"
    """,
    "qmc.py": "",
    "lbfgsb.py": "",
    "registry.py": "import importlib",
    "search_space.py": "",
    "jit.py": "",
    "gp/__init__.py": "from tvbo.work import THREADS\nfrom tvbo import jit",
    "gp/core.py": "from tvbo.gp import THREADS",
    "models/__init__.py": "from tvbo.gp.core import THREADS",
    "acquisition/__init__.py": "from tvbo.models import THREADS\nfrom tvbo import qmc",
    "algorithms/__init__.py": "from tvbo import registry\nfrom tvbo.acquisition import THREADS",
    "algorithms/base.py": "from . import registry\nfrom ..gp import core",
    "data/__init__.py": "",
    "benchmarks/__init__.py": """
        import tvbo.data
        import tvbo.qmc
        from tvbo.version import __version__
    """,
    "results/__init__.py": "from tvbo.version import __version__",
    "sim/__init__.py": """
        import importlib
        from tvbo.algorithms.base import core
        from tvbo.results import __version__

        def bench():
            return importlib.import_module("tvbo.benchmarks")
    """,
    "analysis/__init__.py": "from tvbo.results import __version__\nfrom tvbo.sim import bench",
    "cli.py": "from tvbo.api import simulate",
    "api.py": "from tvbo.analysis import bench\nfrom tvbo.sim import core\nsimulate = None",
    "config_check.py": "import tvbo.benchmarks",
    "workflow_messages.py": "from tvbo.analysis import bench",
    "__main__.py": "from tvbo.cli import simulate",
    "testing/__init__.py": "from tvbo.api import simulate",
}


def _write(root: Path, files: dict[str, str]) -> Path:
    package = root / "tvbo"
    for rel, text in files.items():
        path = package / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).strip() + "\n")
    return package


def test_a_clean_synthetic_package_passes(tmp_path):
    package = _write(tmp_path, CLEAN)
    assert check(package) == []
    assert {layers.unit_of(m.name) for m in layers.scan(package)} == set(layers.UNITS)


#: id -> (files replacing or adding to CLEAN, rule expected, text expected in the message)
BROKEN: dict[str, tuple[dict[str, str], str, str]] = {
    "work imports gp": ({"work.py": "import tvbo.gp"}, "layer", "work -> gp points up"),
    "gp imports models in a function": (
        {"gp/core.py": "def f():\n    from tvbo.models import THREADS"}, "layer",
        "gp -> models points up: tvbo.gp.core imports tvbo.models inside a function"),
    "models imports acquisition": ({"models/x.py": "from tvbo.acquisition import THREADS"},
                                   "layer", "models -> acquisition points up"),
    "acquisition imports algorithms": ({"acquisition/x.py": "import tvbo.algorithms.base"},
                                       "layer", "acquisition -> algorithms points up"),
    "benchmarks import algorithms": ({"benchmarks/x.py": "from tvbo.algorithms import base"},
                                     "layer", "benchmarks never import algorithms"),
    "data imports algorithms": ({"data/x.py": "from tvbo.algorithms.base import core"},
                                "layer", "data never import algorithms"),
    "algorithms import benchmarks": ({"algorithms/x.py": "import tvbo.benchmarks"}, "layer",
                                     "algorithms -> benchmarks points sideways"),
    "algorithms import data (relative)": ({"algorithms/x.py": "from ..data import y"}, "layer",
                                          "algorithms never import data"),
    "algorithms import analysis": ({"algorithms/x.py": "from tvbo.analysis import bench"},
                                   "layer", "algorithms -> analysis points up"),
    "algorithms import sim (importlib)": (
        {"algorithms/x.py": "import importlib\nimportlib.import_module('tvbo.sim')"}, "layer",
        "algorithms never import sim"),
    "algorithms import sim (TYPE_CHECKING)": (
        {"algorithms/x.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                            "    from tvbo.sim import core"}, "layer", "algorithms -> sim"),
    "benchmarks import sim": ({"benchmarks/x.py": "import tvbo.sim"}, "layer",
                              "sim sits above the benchmarks it drives"),
    "results import analysis": ({"results/x.py": "import tvbo.analysis"}, "layer",
                                "results <- analysis"),
    "analysis imports the cli": ({"analysis/x.py": "from tvbo.cli import simulate"}, "layer",
                                 "analysis <- cli/api/workflow"),
    "a low layer imports the root package": (
        {"benchmarks/x.py": "from tvbo import simulate"}, "layer", "benchmarks -> entry"),
    "the package imports its test helpers": ({"sim/x.py": "import tvbo.testing"}, "layer",
                                             "nothing in the package depends on its test"),
    "a cycle between packages": ({"gp/core.py": "from tvbo.models import THREADS"}, "cycle",
                                 "import cycle between packages: gp -> models -> gp"),
    "os.environ written at import": ({"cli.py": "import os\nos.environ['OMP'] = '1'"},
                                     "side-effect", "tvbo.cli writes os.environ when imported"),
    "environ.setdefault via from-import, in a class body": (
        {"sim/x.py": "from os import environ\nclass C:\n    environ.setdefault('A', '1')"},
        "side-effect", "calls os.environ.setdefault()"),
    "os.environ deleted under a try at import": (
        {"data/x.py": "import os\ntry:\n    del os.environ['A']\nexcept KeyError:\n    pass"},
        "side-effect", "deletes from os.environ"),
    "warnings filter at import": ({"analysis/x.py": "import warnings\n"
                                   "warnings.simplefilter('ignore')"}, "side-effect",
                                  "calls warnings.simplefilter()"),
    "global seed at import": ({"qmc.py": "import numpy as np\nnp.random.seed(0)"},
                              "side-effect", "calls numpy.random.seed()"),
    "a module outside every unit": ({"extras/__init__.py": ""}, "unassigned",
                                    "tvbo.extras belongs to no unit"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_synthetic_package_breaking_a_rule_fails(tmp_path, case):
    files, rule, text = BROKEN[case]
    package = _write(tmp_path, {**CLEAN, **files})
    found = check(package)
    assert any(v.rule == rule and text in v.message for v in found), [str(v) for v in found]
    # and the package test above would fail on it
    problems = verdict(found, [])
    assert problems and all(p.startswith("new violation") for p in problems)


def test_a_new_violation_or_a_stale_exception_fails(tmp_path):
    package = _write(tmp_path, {**CLEAN, "algorithms/x.py": "import tvbo.benchmarks"})
    known = [Known("layer", "tvbo/algorithms/x.py", "tvbo.benchmarks", "being rewritten")]
    assert verdict(check(package), known) == []
    # a new violation next to the known one
    _write(tmp_path, {"algorithms/y.py": "import tvbo.data"})
    assert [p.split(":")[0] for p in verdict(check(package), known)] == ["new violation"]
    # the known one fixed: its exception is stale
    _write(tmp_path, {"algorithms/y.py": "", "algorithms/x.py": ""})
    (problem,) = verdict(check(package), known)
    assert problem.startswith("stale exception") and "tvbo/algorithms/x.py" in problem


def test_a_broken_table_is_refused():
    units = {**layers.UNITS}
    bad = {**layers.DEPENDS_ON, "algorithms": (*layers.DEPENDS_ON["algorithms"], "benchmarks")}
    assert any("algorithms never import benchmarks" in p for p in check_table(units, bad))
    cyclic = {**layers.DEPENDS_ON, "work": ("algorithms",)}
    assert any("DEPENDS_ON has a cycle" in p for p in check_table(units, cyclic))
