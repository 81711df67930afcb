"""The guides name the defaults the code has: the default embedder is the one ingest, eval and serve
use (they once said `hashing` or PyTorch `minilm` after the default became ONNX int8)."""
import re
from pathlib import Path

from chunkwise import api

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_embedders_table_marks_the_default_embedder():
    rows = [line for line in (DOCS / "guides" / "embedders.md").read_text().splitlines() if "(default)" in line]
    assert len(rows) == 1 and rows[0].startswith(f"| `{api.DEFAULT_EMBEDDER}` (default)"), rows


def test_the_evaluation_guide_names_evals_default_embedder():
    text = " ".join((DOCS / "guides" / "evaluation.md").read_text().split())
    said = re.search(r"`--embedder` \(default: the config file's `\[ingest\] embedder`, else `([^`]+)`\)", text)
    assert said and said.group(1) == api.DEFAULT_EMBEDDER, said and said.group(0)


def test_the_serve_guide_gives_model_names_a_default_store_serves():
    text = " ".join((DOCS / "guides" / "serve.md").read_text().split())
    said = re.search(r"`model` the served name, e\.g\. `([^`]+)` or `([^`]+)`", text)
    served = api.make_embedder(api.DEFAULT_EMBEDDER).name
    assert said and said.groups() == (served, served.rsplit("@", 1)[0]), (said and said.groups(), served)


def test_the_evaluation_guide_describes_the_gated_config_as_it_is():
    import tomllib

    gated = tomllib.loads((DOCS.parent / "eval" / "chunkwise.toml").read_text())
    text = " ".join((DOCS / "guides" / "evaluation.md").read_text().split())
    said = re.search(r"`eval/chunkwise\.toml` is that config \(`(\w+)`, (\d+) tokens", text)
    assert said and (said.group(1), int(said.group(2))) == (gated["chunking"]["strategy"], gated["chunking"]["size"])
