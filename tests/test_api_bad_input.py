"""Non-finite and non-integer numbers are refused by the API and the CLI (issue 12 item 3).

NaN fails every comparison, so checks written as ``x < 0`` let it through: ``polynomial=[nan,
0.1]`` was charged zero compute (a NaN charge clipped to 0 s), ``max_iterations=nan`` meant "no
cap" and ``speed=inf`` made computation free. Each must raise a ValueError naming the field and
the value before any work (the benchmark is never built), and ``tvbo run`` must exit with
status 2 and one line.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import tvbo.api
from tvbo import cli
from tvbo.runspec import check_run_options
from tvbo.sim.compute import make_compute_model

NAN, INF = math.nan, math.inf


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if simulate gets as far as building the benchmark."""

    def refuse(*args, **kwargs):
        raise AssertionError("bad input reached the benchmark: no check before the work")

    monkeypatch.setattr(tvbo.api, "make_benchmark", refuse)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"compute": "polynomial", "polynomial": [NAN, 0.1]}, ["a0", "nan"]),
        ({"compute": "polynomial", "polynomial": [0.1, INF]}, ["a1", "inf"]),
        ({"compute": "polynomial", "polynomial": [0.1, -0.5]}, ["a1", "-0.5"]),
        ({"compute": "polynomial", "polynomial": ["0.1"]}, ["a0", "'0.1'"]),
        ({"speed": INF}, ["speed", "inf"]),
        ({"speed": NAN}, ["speed", "nan"]),
        ({"speed": 0.0}, ["speed", "0.0"]),
        ({"speed": True}, ["speed", "True"]),
        ({"max_iterations": NAN}, ["max_iterations", "nan"]),
        ({"max_iterations": 2.5}, ["max_iterations", "2.5"]),
        ({"max_iterations": 0}, ["max_iterations", "0"]),
        ({"warmup": NAN}, ["warmup", "nan"]),
        ({"warmup": 1.5}, ["warmup", "1.5"]),
        ({"warmup": -1}, ["warmup", "-1"]),
        ({"time_grid_step": INF}, ["time_grid_step", "inf"]),
        ({"time_grid_step": NAN}, ["time_grid_step", "nan"]),
        ({"horizon": INF}, ["horizon", "inf"]),
        ({"horizon": NAN}, ["horizon", "nan"]),
        ({"cost": INF}, ["cost", "inf"]),
        ({"noise_var": NAN}, ["noise_var", "nan"]),
    ],
    ids=lambda v: str(v) if not isinstance(v, dict) else ",".join(f"{k}={v[k]}" for k in v),
)
def test_simulate_rejects_bad_numbers_before_any_work(no_work, kwargs, words):
    with pytest.raises(ValueError) as info:
        tvbo.api.simulate("eggholder", "random-search", **kwargs)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message, message


def test_good_numbers_pass_and_are_recorded_as_plain_values():
    """The control: numpy integers and an int step are accepted and recorded as int/float."""
    ds = tvbo.api.simulate("eggholder", "random-search", horizon=10.0, warmup=np.int64(1),
                           max_iterations=np.int64(3), time_grid_step=1, speed=2)  # fmt: skip
    assert int(ds["n_iterations"].item()) == 3
    engine = json.loads(ds.attrs["config_json"])["engine"]
    assert engine["warmup"] == 1 and isinstance(engine["warmup"], int)
    assert engine["max_iterations"] == 3 and engine["time_grid_step"] == 1.0


def test_compute_models_and_run_options_check_on_their_own():
    with pytest.raises(ValueError, match=r"a0 must be a finite number >= 0.*nan"):
        make_compute_model("polynomial", polynomial=[NAN, 0.1])
    with pytest.raises(ValueError, match="speed must be a finite number > 0, got inf"):
        make_compute_model("measured", speed=INF)
    with pytest.raises(ValueError, match="max_iterations must be an integer >= 1 or None, got nan"):
        check_run_options({"max_iterations": NAN})
    assert make_compute_model("polynomial", polynomial=[np.float64(0.5), 1]).coefficients == [
        0.5, 1.0]  # fmt: skip


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--compute", "polynomial", "--polynomial", "nan,0.1"], ["--polynomial", "nan"]),
        (["--speed", "inf"], ["--speed", "inf"]),
        (["--speed", "nan"], ["--speed", "nan"]),
        (["--max-iterations", "nan"], ["--max-iterations", "nan"]),
        (["--max-iterations", "2.5"], ["--max-iterations", "2.5"]),
        (["--horizon", "inf"], ["--horizon", "inf"]),
        (["--time-grid-step", "nan"], ["--time-grid-step", "nan"]),
    ],
)
def test_cli_run_rejects_bad_numbers(tmp_path, capsys, flags, words):
    out = tmp_path / "run.nc"
    argv = ["run", "--benchmark", "eggholder", "--algorithm", "random-search", "--out", str(out)]
    with pytest.raises(SystemExit) as info:
        cli.main([*argv, *flags])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tvbo: error: ")
    for word in words:
        assert word in err, err
    assert not out.exists()
