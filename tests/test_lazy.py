"""The packages' lazy re-exports (tvbo._lazy): a name loads its module on first access only."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

import tvbo
from tvbo._lazy import lazy_exports


@pytest.fixture
def package(monkeypatch):
    """A throw-away package ``lazypkg`` re-exporting ``dumps`` from :mod:`json`."""
    module = types.ModuleType("lazypkg")
    module.__getattr__, module.__dir__ = lazy_exports("lazypkg", {"dumps": "json"})
    module.eager = 1
    monkeypatch.setitem(sys.modules, "lazypkg", module)
    return module


def test_a_listed_name_comes_from_its_module(package):
    assert package.dumps is json.dumps
    from lazypkg import dumps  # the `from` form goes through __getattr__ too

    assert dumps is json.dumps


def test_an_unlisted_name_is_an_attribute_error_naming_package_and_name(package):
    with pytest.raises(AttributeError, match=r"module 'lazypkg' has no attribute 'loads'"):
        package.loads  # noqa: B018
    assert not hasattr(package, "loads")


def test_dir_lists_loaded_and_lazy_names(package):
    assert {"dumps", "eager"} <= set(dir(package))


def test_nothing_is_cached_so_a_patched_module_shows_through(package, monkeypatch):
    monkeypatch.setattr(json, "dumps", lambda *a, **k: "patched")
    assert package.dumps() == "patched"
    assert "dumps" not in vars(package)


@pytest.mark.parametrize("name", ["tvbo", "tvbo.algorithms", "tvbo.analysis", "tvbo.benchmarks",
                                  "tvbo.results"])
def test_every_lazy_name_of_the_packages_resolves(name):
    """Each table entry names a module that defines it (a typo would only fail on first use)."""
    module = sys.modules.get(name) or __import__(name, fromlist=["_"])
    for attr in module._LAZY:
        assert getattr(module, attr) is not None, f"{name}.{attr}"
        assert attr in dir(module)


def test_import_tvbo_loads_no_lazy_module():
    code = ("import json, sys, tvbo; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('tvbo'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == ["tvbo", "tvbo._lazy", "tvbo.blas_kernel", "tvbo.version"]
    assert tvbo.simulate is sys.modules["tvbo.api"].simulate
