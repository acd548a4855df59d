#!/usr/bin/env bash
# Set up .venv (if needed) and run the default campaign (config/config.yaml) on all cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export MPLBACKEND=Agg
exec .venv/bin/snakemake --cores "${CORES:-all}" "$@"
