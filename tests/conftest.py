"""Test-session setup: pin BLAS to one thread before numpy is imported.

Unpinned OpenBLAS oversubscribes small problems (a 256 x 256 Cholesky becomes ~25x slower when
two processes each use two threads on two cores), which makes the suite slow and noisy.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("MPLBACKEND", "Agg")

# the OpenBLAS kernel of the recorded digests, before a test imports numpy (tvbo/blas_kernel.py)
from tvbo.blas_kernel import pin_kernel  # noqa: E402

pin_kernel()
