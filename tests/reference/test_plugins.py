"""The example plugins (examples/wdbo_public, examples/botorch_gpucb) driven by tvbo's engine.

Short runs on the virtual clock with ``compute="measured"`` (the plugins report no work): each
finishes the engine's warm-up and a few of its own proposals, keeps its dataset as the library
says, and records the releases it ran. Skipped unless the ``reference`` extra and the plugin
packages are installed (``pip install -e examples/wdbo_public examples/botorch_gpucb``).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("botorch")

import tvbo  # noqa: E402


def _run(algorithm, iterations: int = 18):
    return tvbo.simulate("hartmann3", algorithm, seed=3, compute="measured",
                         max_iterations=iterations)


def test_wdbo_public_runs_on_the_virtual_clock():
    plugin = pytest.importorskip("tvbo_wdbo_public")
    pytest.importorskip("wdbo_algo")
    ds = _run(plugin.WDBOPublic())
    assert ds.attrs["n_iterations"] == 18
    config = json.loads(ds.attrs["config_json"])
    assert config["algorithm"]["options"]["wdbo_algo"] == "1.0.7"
    assert config["compute"]["model"] == "measured"
    sizes = ds["dataset_size"].values.ravel()
    assert sizes[14] == 15 and np.all(sizes[15:] >= 2)  # W-DBO never goes below its floor
    assert float(ds["state_lengthscale_time"].values.ravel()[-1]) > 0
    assert plugin.WDBOPublic.display_name == "W-DBO (public code)"


def test_botorch_gpucb_keeps_every_observation():
    plugin = pytest.importorskip("tvbo_botorch_gpucb")
    ds = _run(plugin.BoTorchGPUCB(num_restarts=2, raw_samples=32), iterations=17)
    assert ds.attrs["n_iterations"] == 17
    np.testing.assert_array_equal(ds["dataset_size"].values.ravel(), np.arange(1, 18))


@pytest.mark.parametrize(("module", "cls", "options", "message"), [
    ("tvbo_wdbo_public", "WDBOPublic", {"alpha": -1.0}, "alpha must be a finite number > 0"),
    ("tvbo_wdbo_public", "WDBOPublic", {"torch_threads": 0}, "torch_threads must be an integer"),
    ("tvbo_botorch_gpucb", "BoTorchGPUCB", {"raw_samples": 0}, "raw_samples must be an integer"),
])
def test_bad_options_name_the_option(module, cls, options, message):
    plugin = pytest.importorskip(module)
    with pytest.raises(ValueError, match=message):
        getattr(plugin, cls)(**options)


def test_counted_refuses_the_public_code():
    """It reports no work to tvbo's counter, so counted would charge it 0 s (issue 23)."""
    plugin = pytest.importorskip("tvbo_wdbo_public")
    pytest.importorskip("wdbo_algo")
    with pytest.raises(ValueError, match="reported no work.*compute: measured"):
        tvbo.simulate("hartmann3", plugin.WDBOPublic(), compute="counted", max_iterations=17)
