"""A declaration says one thing once: a preset or a class (not both), a fixed variant or
safeguards (not both); and the declarations import only the standard library, so reading them
never costs numpy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tvbo.algorithms.declare import Declaration

REPO = Path(__file__).resolve().parents[2]


def test_a_declaration_gives_a_preset_or_a_factory():
    with pytest.raises(ValueError, match="give a preset or a factory"):
        Declaration("x", "X", "x", "nobody")
    with pytest.raises(ValueError, match="give a preset or a factory"):
        Declaration("x", "X", "x", "nobody", preset={}, factory="m:C")


def test_a_declaration_gives_a_variant_or_safeguards():
    with pytest.raises(ValueError, match="fixed variant or safeguards"):
        Declaration("x", "X", "x", "nobody", preset={}, variant="paper",
                    safeguards={"surrogate.prior": (None,)})


def test_the_declarations_import_only_the_standard_library(tmp_path):
    code = (
        "import json, sys\n"
        "from tvbo.algorithms.declare import declaration_modules\n"
        "names = [m.__name__ for m in declaration_modules()]\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'scipy'))\n"
        "print(json.dumps({'names': names, 'heavy': heavy}))\n"
    )
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env=env, check=True, timeout=120)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(seen["names"]) == 10 and seen["heavy"] == []
