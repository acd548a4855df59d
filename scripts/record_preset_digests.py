"""Record the digests of the refactoring guard grid (tvbo.testing.preset_grid).

    python scripts/record_preset_digests.py            # every registered algorithm
    python scripts/record_preset_digests.py gp-ucb bolt  # re-record some (others kept)

Re-record only for a deliberate change of results (a bug fixed), named in the commit message.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

# the conditions of the test that checks them (tests/conftest.py): one BLAS thread (a threaded
# reduction rounds differently) and, through `import tvbo`, the pinned OpenBLAS kernel
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from tvbo.testing.preset_grid import digest_dataset, grid, run  # noqa: E402

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "preset_digests.json"


def main(argv: list[str]) -> int:
    recorded = json.loads(FIXTURE.read_text()) if FIXTURE.exists() else {}
    for entry in grid(argv or None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            recorded[entry.key] = digest_dataset(run(entry))
        print(entry.key, flush=True)
    FIXTURE.write_text(json.dumps(dict(sorted(recorded.items())), indent=1) + "\n")
    print(f"wrote {len(recorded)} runs to {FIXTURE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
