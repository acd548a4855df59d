"""Write a generated file, or check that it is current: the one loop behind the ``write_*`` scripts.

``scripts/write_config_schema.py`` and ``scripts/write_catalogue.py`` each render a committed file
from its declarations (the run options, the algorithm declarations); both then do the same thing
with the text, so that a stale file is caught by ``--check`` (CI, the tests) and rewritten
otherwise.
"""

from __future__ import annotations

import sys
from pathlib import Path


def write_or_check(path: Path, generated: str, script: str, argv: list[str]) -> int:
    """Exit status of a ``write_*`` script: with ``--check`` in ``argv`` write nothing and return 1
    (one line naming ``script`` on stderr) if ``path`` is not ``generated``; else rewrite ``path``
    when it differs (saying so) and return 0."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if "--check" in argv:
        if generated != text:
            print(f"{path} is out of date: run python scripts/{script}", file=sys.stderr)
            return 1
        return 0
    if generated != text:
        path.write_text(generated, encoding="utf-8")
        print(f"wrote {path}")
    return 0
