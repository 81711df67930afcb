#!/usr/bin/env bash
# The whole test suite (what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TIKTOKEN_CACHE_DIR="" PYTHONDONTWRITEBYTECODE=1
exec .venv/bin/python -m pytest "$@"
