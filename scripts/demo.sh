#!/usr/bin/env bash
# The main job on the bundled sample corpus: audit, chunk and ingest examples/ (SQLite, idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1
.venv/bin/chunkwise audit examples/
.venv/bin/chunkwise chunk examples/
# Index into SQLite with the dependency-free hashing embedder; run the demo twice and the second
# ingest changes nothing (every document skipped, all counts zero).
mkdir -p .chunkwise
.venv/bin/chunkwise ingest examples/ --db .chunkwise/examples.db --acl staff
