"""Lean start-up: the static benchmark catalogue agrees with the modules, commands import only
what they use, importing tvbo leaves ``os.environ`` alone, and ``simulate`` pins BLAS threads.

Import checks run in fresh interpreters (``sys.modules`` of the test process is polluted by
other tests); they check *which* modules load, never how long it takes (timings live in
``benchmarks/throughput.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tvbo import registry

REPO = Path(__file__).resolve().parents[1]

#: third-party packages that a listing or help must not import
HEAVY = ("numpy", "scipy", "xarray", "pandas", "matplotlib", "seaborn", "simpy", "yaml", "netCDF4",
         "numba", "llvmlite")


def _python(code: str, tmp_path: Path, env: dict[str, str] | None = None) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON line last, returned decoded."""
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    base["PYTHONPATH"] = str(REPO)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env or base, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- the benchmark catalogue agrees with what the modules define ------------------------------
# (the algorithm catalogue is generated from its declarations: tests/algorithms/test_declare.py)
def test_benchmark_catalogue_agrees_with_modules() -> None:
    from tvbo.benchmarks.static import STATIC
    from tvbo.benchmarks.synthetic import SYNTHETIC
    from tvbo.benchmarks.wdbo_functions import WDBO_SYNTHETIC

    by_kind = {kind: {e.name: registry.resolve(e) for e in registry.BENCHMARKS if e.kind == kind}
               for kind in ("synthetic", "static", "factory")}
    assert by_kind["synthetic"] == SYNTHETIC | WDBO_SYNTHETIC, "add a tvbo.registry line"
    assert by_kind["static"] == STATIC, "add a tvbo.registry line per STATIC entry"
    # every public factory of a benchmark module is listed
    import importlib

    factories = set()
    for path in (REPO / "tvbo" / "benchmarks").glob("*.py"):
        module = importlib.import_module(f"tvbo.benchmarks.{path.stem}")
        factories |= {f"{module.__name__}:{n}" for n, obj in vars(module).items()
                      if n.startswith("make_") and callable(obj)
                      and getattr(obj, "__module__", None) == module.__name__}
    listed = {e.target for e in registry.BENCHMARKS if e.kind == "factory"}
    assert listed == factories
    assert all(e.description and e.citation for e in registry.BENCHMARKS)


def test_compute_and_profile_catalogue_agree() -> None:
    from tvbo.sim.compute import COMPUTE_MODELS

    assert registry.names("compute") == sorted(COMPUTE_MODELS)
    assert all(registry.resolve(e).name == e.name for e in registry.COMPUTE_MODELS)
    files = sorted(p.stem for p in (REPO / "tvbo" / "sim" / "profiles").glob("*.yaml"))
    assert registry.names("profiles") == files
    assert all((REPO / e.target).is_file() for e in registry.PROFILES)


def test_names_are_unique_and_sections_valid() -> None:
    for section in (*registry.CATALOGUE, "components"):
        names = registry.names(section)
        assert len(names) == len(set(names)) > 0
    with pytest.raises(ValueError, match="valid: benchmarks, algorithms"):
        registry.names("datasets")


def test_make_resolves_lazily_and_in_any_order(tmp_path) -> None:
    """``make`` imports only the modules of what it builds, whatever was imported before."""
    code = r"""
import json, sys
from tvbo import algorithms, benchmarks
algorithms.make("tv-boke")          # a boke preset whose dataset part is SW-GP-UCB's
algorithms.make("pe-gp-ucb")        # a preset whose parts live in its own module
benchmarks.make("Hartmann-3")       # an alias spelling of a catalogue name
mods = sorted(m for m in sys.modules if m.startswith(("tvbo.algorithms.", "tvbo.benchmarks.")))
print(json.dumps(mods))
"""
    mods = set(_python(code, tmp_path))
    assert {"tvbo.algorithms.boke.parts", "tvbo.algorithms.weighted.sliding_window",
            "tvbo.algorithms.pegpucb.parts", "tvbo.benchmarks.synthetic"} <= mods
    assert not mods & {"tvbo.algorithms.bolt.parts", "tvbo.algorithms.wdbo.parts",
                       "tvbo.algorithms.abo.parts", "tvbo.algorithms.gpucb.resets",
                       "tvbo.benchmarks.temperature", "tvbo.benchmarks.ozone",
                       "tvbo.benchmarks.wlan", "tvbo.benchmarks.sprinkler"}


def test_uncatalogued_synthetic_class_still_builds(monkeypatch) -> None:
    """A SYNTHETIC entry without its catalogue line (yet) is found by the slow path."""
    from tvbo import benchmarks
    from tvbo.benchmarks.synthetic import SYNTHETIC

    monkeypatch.setitem(SYNTHETIC, "shekel-copy", SYNTHETIC["shekel"])
    monkeypatch.setattr(benchmarks, "_REGISTRY", dict(benchmarks._REGISTRY))
    monkeypatch.setattr(benchmarks, "_DISPLAY", dict(benchmarks._DISPLAY))
    assert benchmarks.make("shekel-copy").name == "shekel"
    assert "shekel-copy" in benchmarks.names()
    with pytest.raises(ValueError, match="valid names: .*shekel-copy"):
        benchmarks.make("no-such-benchmark")


def test_algorithm_errors_list_every_name() -> None:
    from tvbo import algorithms

    with pytest.raises(ValueError, match="unknown algorithm 'nope'; valid: abo, .*w-gp-ucb"):
        algorithms.make("nope")
    with pytest.raises(ValueError, match="unknown algorithm 'nope'; valid: .*w-dbo"):
        algorithms.make("x", preset="nope")
    with pytest.raises(ValueError, match="already registered"):
        algorithms.register("bolt", lambda **_: None)


# -- commands import only what they use ---------------------------------------------------------
_IMPORTS = r"""
import contextlib, io, json, sys
from tvbo import cli
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        status = cli.main(ARGV)
    except SystemExit as stop:
        status = stop.code
print(json.dumps({"status": status, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


@pytest.mark.parametrize("argv", [["list"], ["run", "--help"], ["--help"], ["list", "profiles"]])
def test_listing_and_help_import_nothing_heavy(argv, tmp_path) -> None:
    result = _python(_IMPORTS.replace("ARGV", repr(argv)), tmp_path)
    assert result["status"] == 0 and result["out"]
    heavy = sorted(m for m in result["modules"] if m.split(".")[0] in HEAVY)
    assert heavy == []
    tvbo = [m for m in result["modules"] if m.startswith("tvbo.")]
    # tvbo._catalogue: the algorithm tables generated from the declarations (literals only);
    # tvbo.version: the version constant the root package re-exports (tvbo/version.py);
    # tvbo.runspec: the static declaration of the run options (standard library only);
    # tvbo.blas_kernel: the OpenBLAS kernel pin `import tvbo` sets first (standard library only);
    # tvbo._lazy: the packages' lazy re-exports (standard library only);
    # tvbo.resources: the run-size guard the run options' check calls (standard library only);
    # tvbo.algorithms, tvbo.benchmarks: the package roots, names from the static catalogue (they
    # import no algorithm or benchmark module until make(); standard library and registry only);
    # tvbo.algorithms.factory, .labels: the functions tvbo.algorithms exposes (names, make) and
    # the label keys make() drops (standard library and registry only);
    # tvbo.benchmarks.tables: the cost tables the synthetic factories read (literals only);
    # tvbo.plugins: finds installed plugins (standard library only; none installed here);
    # tvbo.outputs: the output-path checks of the error boundary (standard library only);
    # tvbo.analysis(.figure_output): the figure commands' --format/--dpi/--style flags (the
    # package's lazy root and a module that imports matplotlib only when a figure is saved)
    assert set(tvbo) <= {"tvbo.cli", "tvbo.registry", "tvbo.version", "tvbo.runspec",
                         "tvbo.blas_kernel", "tvbo._lazy", "tvbo.plugins", "tvbo.outputs",
                         "tvbo.resources", "tvbo.algorithms", "tvbo.algorithms.factory",
                         "tvbo.algorithms.labels", "tvbo.benchmarks", "tvbo.benchmarks.tables",
                         "tvbo.analysis",
                         "tvbo.analysis.figure_output", "tvbo._catalogue"}


_CHECK = r"""
import json, sys
from tvbo.runspec import check_run_options
check_run_options(OPTIONS, style="cli")
before = sorted(sys.modules)
from tvbo.acquisition.pending import pending_names
from tvbo.registry import PENDING_STRATEGIES
same = sorted(pending_names()) == sorted(PENDING_STRATEGIES)
print(json.dumps({"modules": before, "same": same}))
"""


@pytest.mark.parametrize("pending", ["hallucinate", "none", "constant-liar-max"])
def test_checking_run_options_imports_nothing_heavy(pending, tmp_path) -> None:
    """A job's option check (tvbo run / run-many) accepts a built-in pending strategy from the
    static catalogue, without importing numpy/scipy; the catalogue lists exactly the built-ins."""
    options = {"benchmark": "hartmann3", "algorithm": "gp-ucb", "seed": 0, "compute": "counted",
               "pending": pending, "horizon": 600.0, "cost_table": "metronome"}
    result = _python(_CHECK.replace("OPTIONS", repr(options)), tmp_path)
    heavy = sorted(m for m in result["modules"] if m.split(".")[0] in HEAVY)
    assert heavy == []
    assert "tvbo.acquisition.pending" not in result["modules"]
    assert result["same"]


def test_run_imports_only_its_benchmark_and_algorithm(tmp_path) -> None:
    argv = ["run", "--benchmark", "hartmann3", "--algorithm", "gp-ucb", "--horizon", "4",
            "--warmup", "2", "--max-iterations", "3", "--quiet", "--out", str(tmp_path / "r.nc")]
    result = _python(_IMPORTS.replace("ARGV", repr(argv)), tmp_path)
    assert result["status"] == 0 and (tmp_path / "r.nc").is_file()
    modules = set(result["modules"])
    never = {"matplotlib", "seaborn", "tvbo.analysis.figures", "tvbo.analysis.tables",
             "tvbo.analysis.compare", "tvbo.results.campaign", "tvbo.benchmarks.temperature",
             "tvbo.benchmarks.ozone", "tvbo.benchmarks.wlan", "tvbo.algorithms.bolt.parts",
             "tvbo.algorithms.pegpucb.parts", "tvbo.algorithms.boke.parts",
             "scipy.stats"}  # Sobol' points come from tvbo.qmc
    assert not modules & never


# -- environment and BLAS threads ---------------------------------------------------------------
def test_importing_tvbo_leaves_environ_unchanged(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env["PYTHONPATH"] = str(REPO)
    code = r"""
import json, os
before = dict(os.environ)
import tvbo, tvbo.cli, tvbo.api, tvbo.benchmarks, tvbo.algorithms
tvbo.cli.build_parser()
tvbo.benchmarks.make("eggholder"); tvbo.algorithms.make("gp-ucb")
print(json.dumps({"same": dict(os.environ) == before}))
"""
    assert _python(code, tmp_path, env=env) == {"same": True}


def test_simulate_pins_blas_threads_for_the_call() -> None:
    import tvbo
    from tvbo.algorithms import make
    from tvbo.sim.threads import blas_threads, limit_threads

    with limit_threads(1):
        if not blas_threads():
            pytest.skip("no controllable BLAS library is loaded in this environment")
    outside = blas_threads()
    for threads in (2, 1):
        algo = make("gp-ucb")
        seen: list[set[int]] = []
        propose = algo.propose

        def spy(t, _propose=propose, _seen=seen):
            _seen.append(set(blas_threads().values()))
            return _propose(t)

        algo.propose = spy
        environ = dict(os.environ)
        tvbo.simulate("eggholder", algo, horizon=3.0, warmup=1, max_iterations=3, threads=threads)
        assert seen and all(s == {threads} for s in seen)
        assert blas_threads() == outside  # restored after the call
        assert dict(os.environ) == environ


_OPENMP = r"""
import ctypes, ctypes.util, json
from threadpoolctl import threadpool_limits
from tvbo.sim.threads import limit_threads, thread_pools
name = ctypes.util.find_library("gomp")
if name is None:
    print(json.dumps({"skip": "no libgomp on this machine"}))
    raise SystemExit
ctypes.CDLL(name)  # load an OpenMP runtime, as torch or a compiled plugin would
threadpool_limits(3, user_api="openmp")  # a known count, whatever the cores or OMP_NUM_THREADS
openmp = lambda: sorted(p["num_threads"] for p in thread_pools() if p["user_api"] == "openmp")
before = openmp()
with limit_threads(1) as previous:
    inside = openmp()
print(json.dumps({"before": before, "inside": inside, "after": openmp(),
                  "previous": sorted(previous.values())}))
"""


def test_limit_threads_limits_openmp_too(tmp_path) -> None:
    """An OpenMP runtime loaded in the process is limited and restored like the BLAS pools."""
    seen = _python(_OPENMP, tmp_path)
    if "skip" in seen:
        pytest.skip(seen["skip"])
    assert seen["before"] == [3] and seen["inside"] == [1] and seen["after"] == [3]
    assert 3 in seen["previous"]  # the yielded counts include the OpenMP pool's


def test_threads_rejects_bad_values() -> None:
    import tvbo

    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="threads must be an integer >= 1"):
            tvbo.simulate("eggholder", "gp-ucb", threads=bad)
