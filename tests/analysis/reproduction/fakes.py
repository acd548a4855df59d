"""Hand-built campaigns and a spec for the reproduction report's tests.

Campaigns are built from tests/fake_runs.py with chosen per-seed values, so every expected number
(ranks, pairwise counts, ratios, verdicts) is worked out by hand in the tests' comments, not taken
from the code under test. The published numbers are BOLT [B] Table 2's: Shekel GP-UCB 2.57,
R-GP-UCB 2.58, BOLT 2.51; Eggholder GP-UCB 517, R-GP-UCB 298, BOLT 262.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from tests.fake_runs import make_run
from tvbo.results.campaign import merge_runs, write_campaign
from tvbo.results.io import write_run

REPO = Path(__file__).resolve().parents[3]
#: the seed papers as text (the project's shared folder beside the repository; the test that
#: quotes them skips without it)
SEEDS_DIR = REPO.parent / "shared" / "seeds"

# tvbo's per-benchmark means; each algorithm gets seeds (m - d, m, m + d): mean m, se d / sqrt(3)
TVBO = {
    ("shekel", "gp-ucb"): (2.0, 0.03),
    ("shekel", "r-gp-ucb"): (2.5, 0.03),
    ("shekel", "bolt"): (3.0, 0.03),
    ("eggholder", "gp-ucb"): (500.0, 3.0),
    ("eggholder", "r-gp-ucb"): (310.0, 30.0),
    ("eggholder", "bolt"): (300.0, 30.0),
}


def _run(benchmark: str, algorithm: str, seed: int, average: float, *, regret=None,
         speed: float = 1.0):
    """A fake run renamed to ``algorithm`` whose summaries (and regret) are set by hand."""
    ds = make_run(benchmark, "bolt" if algorithm == "bolt" else "gp_ucb", seed, speed,
                  n_iterations=12)
    ds = ds.assign_coords(algorithm=[algorithm])
    ds["average_regret"] = (ds["average_regret"].dims, np.full(ds["average_regret"].shape,
                                                                average))
    ds["time_integrated_regret"] = (ds["average_regret"].dims,
                                    np.full(ds["average_regret"].shape, 10 * average))
    if regret is not None:
        ds["regret"] = (ds["regret"].dims, np.broadcast_to(regret, ds["regret"].shape).copy())
    return ds


def _campaign(path: Path, runs) -> Path:
    files = []
    for i, ds in enumerate(runs):
        files.append(write_run(ds, path.parent / "runs" / f"{i}.nc"))
    return write_campaign(merge_runs(files), path)


def _table_campaign(results: Path, name: str = "bolt_fake", seeds=(0, 1, 2)) -> Path:
    runs = [
        _run(b, a, seed, m + (i - 1) * d)
        for (b, a), (m, d) in TVBO.items()
        for i, seed in enumerate(seeds)
    ]
    return _campaign(results / name / "campaign.nc", runs)


def _claim_campaign(results: Path) -> Path:
    # claimed bolt: regret 0.1 + 0.01 seed at every query; gp-ucb 1.0 + 0.01 seed
    runs = [
        _run("shekel", a, seed, 0.0, regret=base + 0.01 * seed)
        for a, base in (("bolt", 0.1), ("gp-ucb", 1.0))
        for seed in (0, 1, 2)
    ]
    return _campaign(results / "claims_fake" / "campaign.nc", runs)


def _spec(tmp_path: Path, **edits) -> Path:
    """A spec in tmp_path/config with two fake campaigns and one never run (``missing``)."""
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    grid = {"benchmarks": ["shekel", "eggholder"], "algorithms": ["gp-ucb", "r-gp-ucb", "bolt"]}
    (config / "bolt_fake.yaml").write_text(yaml.safe_dump({"campaign": "bolt_fake", **grid}))
    (config / "claims_fake.yaml").write_text(yaml.safe_dump({"campaign": "claims_fake", **grid}))
    (config / "missing.yaml").write_text(yaml.safe_dump({"campaign": "never_run", **grid}))
    spec = {
        "campaigns": {
            "bolt_fake": {"config": "bolt_fake.yaml", "replicate": "heldout"},
            "heldout": {"config": "bolt_fake.yaml",
                        "overrides": {"campaign": "bolt_fake_heldout", "seeds": [3, 4, 5]}},
            "claims_fake": {"config": "claims_fake.yaml"},
            "missing": {"config": "missing.yaml", "overrides": {"cost_table": "icml"}},
        },
        "tables": [
            {"paper": "bolt-metronome", "campaign": "bolt_fake",
             "head_to_head": ["bolt", "gp-ucb"]},
            {"paper": "bolt-icml", "campaign": "missing"},
        ],
        "sensitivity": [{"paper": "bolt-metronome", "campaign": "bolt_fake"}],
        "explanations": [
            {
                "table": "bolt-metronome",
                "benchmarks": ["shekel"],
                "algorithms": ["r-gp-ucb", "bolt"],
                "cause": "a test cause",
                "explains": ["r-gp-ucb < bolt"],
                "predictions": [{"quantity": "time_integrated_regret",
                                 "order": "r-gp-ucb < bolt"}],
                "evidence": [
                    {"kind": "variant", "campaign": "bolt_fake", "algorithm_a": "r-gp-ucb",
                     "algorithm_b": "bolt"},
                    {"kind": "fit_health", "campaign": "bolt_fake"},
                    {"kind": "state", "campaign": "missing", "variable": "state_n_star"},
                ],
            }
        ],
        "claims": [
            {
                "id": "bolt beats gp-ucb", "paper": "a paper", "source": "x.txt",
                "quote": "BOLT is better.", "campaign": "claims_fake", "benchmarks": ["shekel"],
                "algorithms": ["bolt"], "baselines": ["gp-ucb"],
                "measure": {"curve": "average", "at": "final"}, "relation": "better",
                "reason": "a reason",
            },
            {
                "id": "never run", "paper": "a paper", "source": "x.txt", "quote": "q",
                "campaign": "missing", "benchmarks": ["shekel"], "algorithms": ["bolt"],
                "baselines": ["gp-ucb"], "measure": {"curve": "simple", "at": "final"},
                "relation": "not_worse", "reason": "r",
            },
        ],
    }
    for path, value in edits.items():
        target = spec
        *head, last = path.split(".")
        for key in head:
            target = target[int(key)] if isinstance(target, list) else target[key]
        target[last] = value
    path = config / "reproduction.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path
