#!/usr/bin/env bash
# The main job on the bundled sample corpus: chunk every file in examples/ and print a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1
.venv/bin/chunkwise audit examples/
.venv/bin/chunkwise chunk examples/ "$@"
