"""DOCX comments (opt-in) reach ``chunk`` and ``ingest`` through the chunk config, and a store knows."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("docx")

from docx_parts import build, p  # noqa: E402

from chunkwise import api  # noqa: E402
from chunkwise.cli.main import main  # noqa: E402
from chunkwise.config import ChunkConfig  # noqa: E402
from chunkwise.configfile import load_config  # noqa: E402
from chunkwise.errors import ConfigError  # noqa: E402

NOTE = "Check this number against the ledger."


def _commented(tmp_path):
    comment = ('<w:comments xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
               f'<w:comment w:id="0" w:author="Ann Reviewer"><w:p><w:r><w:t>{NOTE}</w:t></w:r></w:p>'
               '</w:comment></w:comments>')
    body = p("The budget is 4M.", extra='<w:r><w:commentReference w:id="0"/></w:r>') + p("Next year it shrinks.")
    path = tmp_path / "docs" / "budget.docx"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(build(body, {"rIdC": ("comments", "word/comments.xml", comment)}))
    return path


def test_config_key_validated_and_in_the_fingerprint_only_when_on():
    assert ChunkConfig().fingerprint() == ChunkConfig(docx_comments=False).fingerprint()
    assert ChunkConfig(docx_comments=True).fingerprint() != ChunkConfig().fingerprint()
    assert ChunkConfig.from_json(ChunkConfig(docx_comments=True).to_json()).docx_comments is True
    with pytest.raises(ConfigError, match="docx_comments must be true or false"):
        ChunkConfig(docx_comments="yes")


def test_chunk_file_and_the_chunk_command(tmp_path, capsys):
    path = _commented(tmp_path)
    assert not any(NOTE in c.text for c in api.chunk_file(path))
    assert any(NOTE in c.text for c in api.chunk_file(path, ChunkConfig(docx_comments=True)))
    assert any(NOTE in c.text for c in api.chunk_file(path, docx_comments=True))
    assert main(["chunk", str(path), "--json"]) == 0
    assert NOTE not in capsys.readouterr().out
    assert main(["chunk", str(path), "--json", "--docx-comments"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert any(NOTE in r["text"] for r in rows)


def test_ingest_records_it_and_a_store_refuses_a_silent_change(tmp_path, capsys):
    path = _commented(tmp_path)
    docs, db = path.parent, str(tmp_path / "s.db")
    assert main(["ingest", str(docs), "--db", db, "--embedder", "hashing", "--acl", "staff", "--docx-comments",
                 "--json"]) == 0
    capsys.readouterr()
    assert main(["manifest", "--db", db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["docx_comments"] is True
    with api.open_retriever(db) as r:
        result = r.search("ledger", ["staff"], k=3)
    assert NOTE in result.context
    assert main(["ingest", str(docs), "--db", db, "--acl", "staff", "--json"]) == 0  # no flag: the store's choice
    assert json.loads(capsys.readouterr().out)["added"] == 0
    cfg = tmp_path / "chunkwise.toml"
    cfg.write_text("[chunking]\ndocx_comments = false\n", encoding="utf-8")
    assert load_config(cfg).chunking == {"docx_comments": False}
    assert main(["ingest", str(docs), "--db", db, "--acl", "staff", "--config", str(cfg)]) == 2
    assert "docx_comments True -> False" in capsys.readouterr().err
