"""Regenerate tvbo/_catalogue.py, the static tables of the algorithm names, from their declarations.

    python scripts/write_catalogue.py [--check]

Reads ``tvbo/algorithms/declare.py`` and every ``tvbo/algorithms/<paper>/declare.py``
(:mod:`tvbo.algorithms.catalogue`) and rewrites the generated module in place. ``--check``
writes nothing and exits with status 1 if the file is not up to date.
"""

from __future__ import annotations

import sys

from tvbo.algorithms.catalogue import CATALOGUE_FILE, render


def main(argv: list[str]) -> int:
    text = CATALOGUE_FILE.read_text(encoding="utf-8") if CATALOGUE_FILE.is_file() else ""
    generated = render()
    if "--check" in argv:
        if generated != text:
            print(f"{CATALOGUE_FILE} is out of date: run python scripts/write_catalogue.py",
                  file=sys.stderr)
            return 1
        return 0
    if generated != text:
        CATALOGUE_FILE.write_text(generated, encoding="utf-8")
        print(f"wrote {CATALOGUE_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
