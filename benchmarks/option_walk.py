"""Walk one run option from the caller to the engine and count its checks per process.

Issue 25 item 3 asks that a run option be checked once per process. This script runs the three
ways a value enters a process -- ``tvbo.simulate`` from Python, ``tvbo run`` and the workflow's
config check (``tvbo.config_check.check_config``, what ``workflow/rules/common.smk`` runs at
parse time) -- and counts, for one option, every check of its value:

* ``field``: a per-field check of the declaration (``tvbo.runspec._check_field``);
* ``engine``: ``EngineOptions.__post_init__`` judging the value again (before issue 25 item 3);
* ``schema``: the config's JSON Schema (generated from the declaration) judging the config.

Usage: ``python benchmarks/option_walk.py [--option warmup] [--out walk.json]``; a run of a
few virtual seconds (eggholder, gp-ucb), so the whole walk takes seconds. It prints one line per
entry point; exit status 0 always (a measurement, not a gate: tests/test_runspec.py is the gate).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import tvbo  # noqa: F401  (pins the BLAS kernel first)
from tvbo import config_check, runspec
from tvbo.sim import engine

RUN = {"horizon": 6.0, "cost": 0.5, "warmup": 3, "max_iterations": 5, "cost_cv": 0.5}


@contextlib.contextmanager
def counting(option: str) -> Iterator[Counter]:
    """Count the checks of ``option`` while the block runs (patches restored afterwards)."""
    counts: Counter = Counter()
    patches: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, wrapper: Callable[[Callable], Callable]) -> None:
        original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        patches.append((owner, name, original))
        setattr(owner, name, wrapper(original))

    def field(original: Callable) -> Callable:
        def wrapped(opt: Any, where: str, value: Any) -> None:
            if opt.name == option:
                counts["field"] += 1
            return original(opt, where, value)
        return wrapped

    def post_init(original: Callable) -> Callable:
        def wrapped(self: Any) -> None:
            if option in {f for f in self.__dataclass_fields__}:
                counts["engine"] += 1
            return original(self)
        return wrapped

    def schema(original: Callable) -> Callable:
        def wrapped(cfg: Any, *args: Any, **kwargs: Any) -> Any:
            counts["schema"] += 1
            return original(cfg, *args, **kwargs)
        return wrapped

    patch(runspec, "_check_field", field)
    if "__post_init__" in engine.EngineOptions.__dict__:
        patch(engine.EngineOptions, "__post_init__", post_init)
    patch(config_check, "_check_schema", schema)
    try:
        yield counts
    finally:
        for owner, name, original in reversed(patches):
            setattr(owner, name, original)


def walk_api(option: str) -> Counter:
    with counting(option) as counts:
        tvbo.simulate("eggholder", "gp-ucb", seed=0, **RUN)
    return counts


def walk_cli(option: str, tmp: Path) -> Counter:
    from tvbo import cli

    argv = ["run", "--benchmark", "eggholder", "--algorithm", "gp-ucb", "--quiet",
            "--out", str(tmp / "run.nc")]
    for key, value in RUN.items():
        argv += [runspec.option(key).cli_flag, str(value)]
    with counting(option) as counts, contextlib.redirect_stdout(io.StringIO()):
        status = cli.main(argv)
    assert status == 0, status
    return counts


def walk_workflow(option: str) -> Counter:
    import yaml

    cfg = yaml.safe_load((Path(__file__).parents[1] / "config" / "smoke.yaml").read_text())
    cfg.update(benchmarks=["eggholder"], algorithms=["gp-ucb"], seeds=[0], evaluators=[1, 2],
               **{k: v for k, v in RUN.items() if k != "cost"})
    with counting(option) as counts:
        config_check.check_config(cfg)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--option", default="warmup", help="the run option to follow")
    parser.add_argument("--out", type=Path, help="also write the counts as JSON")
    args = parser.parse_args(argv)
    runspec.option(args.option)  # an unknown name lists the valid ones
    with tempfile.TemporaryDirectory() as tmp:
        walks = {"tvbo.simulate (Python)": walk_api(args.option),
                 "tvbo run (CLI)": walk_cli(args.option, Path(tmp)),
                 "workflow config check": walk_workflow(args.option)}
    result = {where: dict(c, total=sum(c.values())) for where, c in walks.items()}
    for where, c in result.items():
        parts = ", ".join(f"{k} {v}" for k, v in c.items() if k != "total")
        print(f"{args.option}: {where}: {c['total']} check(s) in the process ({parts or 'none'})")
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
