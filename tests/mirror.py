"""Where the offline data mirror is: $TVBO_DATA_MIRROR, else ../shared/data beside the
repository (how the project machines and CI lay it out), else /work/shared/data."""

from __future__ import annotations

import os
from pathlib import Path


def mirror_root() -> Path:
    env = os.environ.get("TVBO_DATA_MIRROR")
    candidates = [Path(env)] if env else []
    candidates += [Path(__file__).resolve().parents[2] / "shared" / "data",
                   Path("/work/shared/data")]
    for path in candidates:
        if path.is_dir():
            return path
    return candidates[0]


MIRROR_ROOT = mirror_root()
