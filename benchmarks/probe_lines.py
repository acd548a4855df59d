"""Shared output of the probe scripts (griewank_probe, boke_probe, pegpucb_probe): one JSON
line per run, printed and appended to ``--out`` so an interrupted probe keeps what it ran."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def emit(row: dict[str, Any], out: Path | None) -> None:
    """Print ``row`` as one sorted JSON line and append it to ``out`` (created with its folder)."""
    line = json.dumps(row, sort_keys=True)
    print(line, flush=True)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("a") as handle:
            handle.write(line + "\n")


def probe_parser(description: str, variants: list[str]) -> argparse.ArgumentParser:
    """The options every variant probe shares: ``--variants`` (default all), ``--seeds`` (0-5)
    and ``--out``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--variants", nargs="+", default=variants, choices=variants)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4, 5])
    parser.add_argument("--out", type=Path, default=None, help="append JSON lines here")
    return parser
