#!/usr/bin/env bash
# CI step: run the workflow on a real single-node SLURM cluster (tests/workflow/test_slurm.py).
#
# 1. install Debian's slurm-wlm and munge if missing (root and apt-get needed),
# 2. start the cluster with scripts/slurm_local.sh (unless one of ours already runs),
# 3. run the SLURM test with TVBO_REQUIRE_SLURM=1, so a cluster that is not up FAILS the test
#    instead of skipping it,
# 4. stop the daemons this script started (trap, also on failure or interrupt).
# Where SLURM cannot be installed or started it prints "SKIPPED: <reason>" and exits 0; a
# failing test fails the step.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 MPLBACKEND=Agg
PY=${PY:-.venv/bin/python}

skip() {
  echo "SKIPPED: SLURM cluster test: $*"
  exit 0
}

have_slurm() {
  command -v sbatch >/dev/null && command -v sinfo >/dev/null \
    && [ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] && [ -x /usr/sbin/munged ]
}

[ -x "$PY" ] || skip "no project venv at $PY (run scripts/setup.sh first)"
"$PY" -c "import snakemake_executor_plugin_slurm" 2>/dev/null \
  || skip "snakemake-executor-plugin-slurm is not installed in $PY (pip install -e '.[test]')"

if ! have_slurm; then
  [ "$(id -u)" -eq 0 ] || skip "SLURM is not installed and installing it needs root"
  command -v apt-get >/dev/null || skip "SLURM is not installed and there is no apt-get"
  echo "== installing slurm-wlm and munge"
  started=$(date +%s)
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends slurm-wlm munge; } >/tmp/tvbo-ci-slurm-apt.log 2>&1; then
    tail -n 20 /tmp/tvbo-ci-slurm-apt.log
    skip "apt-get install slurm-wlm munge failed (log above)"
  fi
  echo "installed in $(($(date +%s) - started)) s"
  have_slurm || skip "slurm-wlm installed but its commands are missing"
fi

[ "$(id -u)" -eq 0 ] || skip "starting the local SLURM daemons needs root"

# Stop only what this run started: if our daemons already ran, leave them running.
already_running=0
bash scripts/slurm_local.sh status >/dev/null 2>&1 && already_running=1
cleanup() {
  if [ "$already_running" -eq 0 ]; then
    echo "== stopping the local SLURM cluster"
    bash scripts/slurm_local.sh stop || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== starting the local SLURM cluster"
bash scripts/slurm_local.sh start || skip "the local SLURM cluster did not start (messages above)"

echo "== SLURM test: the smoke study through profiles/slurm-local vs a local run"
started=$(date +%s)
TVBO_REQUIRE_SLURM=1 "$PY" -m pytest tests/workflow/test_slurm.py -m slurm -q -rs -p no:cacheprovider
echo "SLURM test took $(($(date +%s) - started)) s"
