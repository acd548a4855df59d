"""Where the offline data mirror is: $TVBO_DATA_MIRROR, else the first ``shared/data`` folder
beside the repository or beside any folder that encloses it (the project machines keep it at
``../shared/data``; a CI clone made deeper in the same tree finds the same folder higher up)."""

from __future__ import annotations

import os
from pathlib import Path


def mirror_root() -> Path:
    env = os.environ.get("TVBO_DATA_MIRROR")
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[1]
    candidates = [folder / "shared" / "data" for folder in repo.parents]
    for path in candidates:
        if path.is_dir():
            return path
    return candidates[0]


MIRROR_ROOT = mirror_root()
