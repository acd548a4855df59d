"""Regenerate tvbo/_catalogue.py, the static tables of the algorithm names, from their declarations.

    python scripts/write_catalogue.py [--check]

Reads ``tvbo/algorithms/declare.py`` and every ``tvbo/algorithms/<paper>/declare.py``
(:mod:`tvbo.algorithms.catalogue`) and rewrites the generated module in place. ``--check``
writes nothing and exits with status 1 if the file is not up to date.
"""

from __future__ import annotations

import sys

from generated_file import write_or_check

from tvbo.algorithms.catalogue import CATALOGUE_FILE, render


def main(argv: list[str]) -> int:
    return write_or_check(CATALOGUE_FILE, render(), "write_catalogue.py", argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
