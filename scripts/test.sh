#!/usr/bin/env bash
# Set up .venv (if needed) and run the default test suite (slow tests excluded).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
export MKL_NUM_THREADS=${MKL_NUM_THREADS:-1} MPLBACKEND=Agg
exec .venv/bin/python -m pytest -m "not slow" "$@"
