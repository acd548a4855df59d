"""Plugins (tvbo.plugins): outside algorithms and benchmarks found without editing tvbo, and the
one-line refusals of bad ones (a module that does not import, a built-in name, an object that
is not an Algorithm / Benchmark), before anything runs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import xarray as xr

import tvbo
from tvbo import algorithms, benchmarks, cli, plugins
from tvbo.config_check import ConfigError, check_config

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "ask_tell_example"
MODULE = "ask_tell_example.tvbo_plugin"


@pytest.fixture
def clean_plugins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """No plugin loaded; ``tmp_path`` and the example package importable; state restored."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(EXAMPLE))
    restore = plugins._reset_for_tests()
    yield tmp_path
    restore()


def _module(directory: Path, name: str, body: str) -> str:
    (directory / f"{name}.py").write_text(textwrap.dedent(body))
    return name


_SILENT = textwrap.dedent("""
    from tvbo.algorithms import Algorithm

    class Silent(Algorithm):
        '''Reports no work.'''
        def __init__(self):
            super().__init__()
            self.n = 0
        def propose(self, t):
            return self.rng.uniform(size=self.problem.d)
        def ingest(self, x, t, y, *, now, warmup):
            self.n += 1
        def dataset_size(self):
            return self.n
""")


def test_module_plugin_is_found_built_and_labelled(clean_plugins) -> None:
    plugins.load([MODULE])
    assert "ask-tell-es" in algorithms.names() and "drifting-peak" in benchmarks.names()
    algo = algorithms.make("ask-tell-es", sigma=0.3)
    assert algo.name == "ask-tell-es" and algo.options() == {"sigma": 0.3}
    from tvbo.algorithms.display import display_name

    assert display_name("ask-tell-es") == "(1+1)-ES (public code)"
    ds = tvbo.simulate("drifting-peak", "ask-tell-es", compute="measured", horizon=30.0,
                       warmup=3)
    config = json.loads(ds.attrs["config_json"])
    assert config["algorithm"]["plugin"] == {"source": f"module {MODULE}",
                                             "display": "(1+1)-ES (public code)"}
    assert str(ds["benchmark"].values[0]) == "drifting-peak"
    assert int(ds.attrs["n_iterations"]) > 3


def test_reports_label_plugin_runs_without_the_plugin(clean_plugins, tmp_path: Path) -> None:
    """The run file records the display name: a report process that never loaded the plugin
    still labels its column."""
    from tvbo.analysis.context import campaign_labels
    from tvbo.results.campaign import merge_runs, write_campaign
    from tvbo.results.io import write_run

    plugins.load([MODULE])
    paths = []
    for seed in (0, 1):
        ds = tvbo.simulate("drifting-peak", "ask-tell-es", compute="measured", horizon=20.0,
                           warmup=2, seed=seed)
        paths.append(write_run(ds, tmp_path / f"r{seed}.nc"))
    write_campaign(merge_runs(paths), tmp_path / "c.nc")
    plugins._reset_for_tests()  # a fresh report process: the plugin is not loaded
    with xr.open_dataset(tmp_path / "c.nc") as campaign:
        assert campaign_labels(campaign) == {"ask-tell-es": "(1+1)-ES (public code)"}


@pytest.mark.parametrize(("body", "cause"), [
    ("import no_such_package_xyz\n", "does not import: ModuleNotFoundError"),
    (_SILENT + "TVBO_ALGORITHMS = {'bolt': Silent}\n", "'bolt' is already a built-in tvbo"),
    ("TVBO_ALGORITHMS = {'x-algo': dict}\n", "builtins.dict is not a subclass of tvbo's "
     "Algorithm"),
    ("TVBO_BENCHMARKS = {'x-bench': 3}\n", "is neither a Benchmark subclass nor a function"),
    ("TVBO_BENCHMARKS = {'Hartmann-3': dict}\n", "names are lowercase"),
    (_SILENT + "TVBO_BENCHMARKS = {'hartmann3': Silent}\n", "already a built-in tvbo benchmark"),
    ("X = 1\n", "defines neither TVBO_ALGORITHMS nor TVBO_BENCHMARKS"),
])
def test_bad_plugins_are_one_line_before_anything_runs(clean_plugins, capsys, body: str,
                                                       cause: str) -> None:
    name = _module(clean_plugins, f"bad_plugin_{abs(hash(body))}", body)  # fresh import
    out = clean_plugins / "r.nc"
    argv = ["run", "--plugin", name, "--benchmark", "eggholder", "--algorithm", "gp-ucb",
            "--horizon", "10", "--quiet", "--out", str(out)]
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("tvbo: error: plugin ") and cause in err
    assert not out.exists()
    # the same plugin in a workflow config: the validator names it (before any job)
    cfg = {"campaign": "p", "benchmarks": ["eggholder"], "algorithms": ["gp-ucb"],
           "plugins": [name]}
    plugins._reset_for_tests()
    with pytest.raises(ConfigError, match="^config: plugins: plugin .*" + cause.split(":")[0]):
        check_config(cfg, schema=REPO / "workflow" / "schemas" / "config.schema.yaml")


def test_two_plugins_cannot_share_a_name(clean_plugins) -> None:
    _module(clean_plugins, "first_plugin", _SILENT + "TVBO_ALGORITHMS = {'same': Silent}\n")
    _module(clean_plugins, "second_plugin", _SILENT + "TVBO_ALGORITHMS = {'same': Silent}\n")
    plugins.load(["first_plugin"])
    with pytest.raises(plugins.PluginError, match="already taken by module first_plugin"):
        plugins.load(["second_plugin"])


def test_factory_returning_something_else_is_named(clean_plugins) -> None:
    _module(clean_plugins, "factory_plugin", "def make(**o):\n    return 42\n"
            "TVBO_ALGORITHMS = {'forty-two': make}\n")
    plugins.load(["factory_plugin"])
    with pytest.raises(ValueError, match="plugin 'forty-two' .* returned int, not a tvbo "
                                         "Algorithm"):
        algorithms.make("forty-two")


def test_config_plugins_make_their_names_valid(clean_plugins) -> None:
    cfg = {"campaign": "p", "benchmarks": ["drifting-peak"], "algorithms": ["ask-tell-es"],
           "plugins": [MODULE], "compute": "measured",
           "algorithm_options": {"ask-tell-es": {"sigma": 0.1}}}
    checked = check_config(cfg, schema=REPO / "workflow" / "schemas" / "config.schema.yaml")
    assert checked["plugins"] == [MODULE]
    bad = dict(cfg, algorithm_options={"ask-tell-es": {"sigma": 7}})
    with pytest.raises(ConfigError, match="sigma must be a number in"):
        check_config(bad, schema=REPO / "workflow" / "schemas" / "config.schema.yaml")


def test_list_shows_plugins_with_their_description(clean_plugins, capsys) -> None:
    assert cli.main(["list", "algorithms", "--plugin", MODULE]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("ask-tell-es"))
    assert "(1+1)-ES through its ask/tell interface" in line
    assert "[example plugin: ask_tell_example]" in line


def _distribution(site: Path, entry_points: str) -> None:
    """A fake installed distribution in ``site`` declaring ``entry_points`` (importlib.metadata
    finds it on sys.path like any pip-installed package)."""
    info = site / "fake_tvbo_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-tvbo-plugin\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)


@pytest.mark.parametrize(("entry_points", "cause"), [
    ("[tvbo.algorithms]\nbroken = no_such_module_xyz:Thing\n",
     "plugin 'broken' (entry point broken = no_such_module_xyz:Thing): does not import"),
    ("[tvbo.algorithms]\nbolt = ask_tell_example.tvbo_plugin:AskTellES\n",
     "'bolt' is already a built-in tvbo algorithm"),
    ("[tvbo.benchmarks]\nnot-a-bench = ask_tell_example.tvbo_plugin:AskTellES\n",
     "AskTellES is not a subclass of tvbo's Benchmark"),
])
def test_bad_entry_points_are_named(clean_plugins, capsys, entry_points: str,
                                    cause: str) -> None:
    _distribution(clean_plugins, entry_points)
    with pytest.raises(SystemExit) as stop:
        cli.main(["list"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1 and cause in err, err


def test_entry_points_are_found_without_any_flag(clean_plugins) -> None:
    _distribution(clean_plugins, "[tvbo.algorithms]\nes-entry = "
                  "ask_tell_example.tvbo_plugin:AskTellES\n")
    assert "es-entry" in cli._all_names("algorithm")  # no --plugin: its entry point
    algorithm = algorithms.make("es-entry")
    assert algorithm.name == "es-entry"
    assert plugins.find("algorithms", "es-entry").source == (
        "entry point es-entry = ask_tell_example.tvbo_plugin:AskTellES")


def test_example_plugins_depend_on_this_distribution_not_pypis_tvbo() -> None:
    """PyPI's `tvbo` is another project (The Virtual Brain Ontology): a plugin that depends on
    `tvbo` pulls it in, and its `tvbo` command replaces this one (seen after `.ci/run`)."""
    import re
    import tomllib
    from pathlib import Path

    examples = Path(__file__).resolve().parents[1] / "examples"
    projects = sorted(examples.glob("*/pyproject.toml"))
    assert projects
    for path in projects:
        requires = tomllib.loads(path.read_text())["project"]["dependencies"]
        names = {re.split(r"[\s<>=!~\[;]", r, maxsplit=1)[0].lower() for r in requires}
        assert "tvbo-lab" in names and "tvbo" not in names, (path, requires)
