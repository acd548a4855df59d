#!/usr/bin/env bash
# Create (or reuse) the project virtual environment .venv and install tvbo with its test tools.
#
# The install is editable, so code changes need no reinstall; only a change of pyproject.toml
# (dependencies, entry points) or of the interpreter does. A stamp in .venv records the hash of
# both after a successful install, and a later call with the same hash (and an importable tvbo)
# skips pip entirely. TVBO_FORCE_INSTALL=1 reinstalls regardless.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp_file=.venv/.tvbo-install-stamp
stamp=$( { .venv/bin/python -c 'import sys; print(sys.version)'; cat pyproject.toml; } | sha256sum | cut -d' ' -f1)
if [ "${TVBO_FORCE_INSTALL:-0}" != 1 ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ] \
   && .venv/bin/python -c 'import tvbo' 2>/dev/null; then
  echo "setup: .venv is current (pyproject.toml unchanged); skipping install (TVBO_FORCE_INSTALL=1 forces it)"
  exit 0
fi
rm -f "$stamp_file"
.venv/bin/python -m pip install --quiet --upgrade pip
# the distribution was called `tvbo` before it became `tvbo-lab` (PyPI's `tvbo` is another
# project): drop an old install of that name from this private venv so one package owns `tvbo`
.venv/bin/python -m pip uninstall --quiet --yes tvbo 2>/dev/null || true
.venv/bin/python -m pip install --quiet -e ".[test]"
echo "$stamp" > "$stamp_file"
