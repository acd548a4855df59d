"""The one display-name lookup of tables and figures (tvbo/analysis/context.py
``campaign_labels``), on plain keys and on the parallel what-if's setting-carrying keys."""

from __future__ import annotations

from pathlib import Path

from tests.fake_runs import make_run
from tvbo.analysis.context import campaign_labels
from tvbo.analysis.parallel_whatif import campaign_names
from tvbo.results.campaign import merge_runs
from tvbo.results.io import write_run
from tvbo.sim.parallel import parse_label


def _campaign(tmp_path: Path, keys: list[str]):
    files = []
    for i, key in enumerate(keys):
        run = make_run("shekel", "gp_ucb", 0, n_iterations=6).assign_coords(algorithm=[key])
        files.append(write_run(run, tmp_path / f"{i}.nc"))
    return merge_runs(files)


def test_plain_keys_take_the_label_of_their_algorithm(tmp_path: Path) -> None:
    campaign = _campaign(tmp_path, ["gp-ucb", "gp-ucb@k2", "gp-ucb@k4+overlap", "mystery@k2"])
    labels = campaign_labels(campaign)
    assert labels["gp-ucb"] == "GP-UCB"
    assert labels["gp-ucb@k2"] != "GP-UCB"  # distinct keys keep distinct labels
    plain = campaign_labels(campaign, plain=lambda key: parse_label(key)[0])
    # one entry per algorithm; an unknown name without a record names itself
    assert plain == {"gp-ucb": "GP-UCB", "mystery": "mystery"}
    assert campaign_names(campaign) == plain
