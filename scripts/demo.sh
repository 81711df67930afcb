#!/usr/bin/env bash
# The main job on the bundled sample corpus: audit, chunk and ingest examples/ (SQLite, idempotent),
# then evaluate chunking configs on its golden questions and write the HTML report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1
.venv/bin/chunkwise audit examples/
.venv/bin/chunkwise chunk examples/
# Index into SQLite with the default model (all-MiniLM-L6-v2 on ONNX Runtime, int8; its graph is
# built from the packaged weights on first use, no torch) at the size it reads whole (254 tokens);
# run the demo twice and the second ingest changes nothing (every document skipped, all counts zero).
mkdir -p .chunkwise
.venv/bin/chunkwise ingest examples/ --db .chunkwise/demo.db --acl staff
# Search it as a reader in the oncall group: permissions apply before ranking, passages come with
# citations, and the context stays within the token budget.
.venv/bin/chunkwise search "who can lift a deploy freeze during an incident" --db .chunkwise/demo.db \
  --groups oncall,staff --k 3 --expand neighbours --budget 600
# Ask the tune half of eval/'s golden questions through the real retriever for every config of
# eval/grid.toml (each in its own temporary store) and write the report: configs, the chosen one and
# paired comparisons with it, Pareto front, chunk boundaries with every answer span marked, and what
# was retrieved for each question (the test half is kept for the CI gate).
.venv/bin/chunkwise eval --golden eval/examples.golden.jsonl --docs examples/ --config eval/chunkwise.toml \
  --grid eval/grid.toml --split tune --out .chunkwise/report.html
