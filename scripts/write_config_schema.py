"""Regenerate the run options' properties of the config schema from the RunSpec.

    python scripts/write_config_schema.py [--check]

Rewrites ``workflow/schemas/config.schema.yaml`` in place: every run option declared in
:data:`tvbo.runspec.RUN_SPEC` with a config key gets its generated node (type, bounds, choices,
default, description); the other keys (campaign, data, paper tables, ...) are kept as they are.
``--check`` writes nothing and exits with status 1 if the file is not up to date.
"""

from __future__ import annotations

import sys
from pathlib import Path

from generated_file import write_or_check

from tvbo.runspec import render_schema_text

SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"


def main(argv: list[str]) -> int:
    generated = render_schema_text(SCHEMA.read_text(encoding="utf-8"))
    return write_or_check(SCHEMA, generated, "write_config_schema.py", argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
