"""No hash oracles: nothing a caller is sent (documents, search results, omissions) is derived from
text it may not read, so it cannot confirm a guess of hidden content by comparing ids or hashes."""
from __future__ import annotations

import hashlib
import json
import re

import pytest

from chunkwise import api
from chunkwise.config import ChunkConfig
from chunkwise.embed import make_embedder
from chunkwise.pipeline import ingest

from .serving import DOCS, SECRET

PUBLIC = "# Handbook\n\n## Leave\n\nStaff book leave in the portal; the pager handover is on Monday.\n\n"
HIDDEN = "## Payroll\n<!-- acl: finance -->\n\nThe payroll {word} figures are kept in the vault room.\n"


def build(root, word: str):
    docs = root / "docs"
    docs.mkdir(parents=True)
    (docs / "handbook.md").write_text(PUBLIC + HIDDEN.format(word=word), encoding="utf-8")
    db = root / "store.db"
    ingest([docs], db, ChunkConfig(strategy="structure", size=64), embedder=make_embedder("hashing"),
           acl_map={"handbook.md": ["staff"]})
    return db


def without_times(value):
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k not in ("ingested_at",)}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


@pytest.mark.parametrize("guess", ["qwertyuio", "zanzibar1"])
def test_answers_do_not_depend_on_hidden_text(tmp_path, guess):
    """Two stores that differ only in the words of a section the caller may not read (same length)
    give a staff reader the very same document and search answers: no source hash, section id or
    other digest of the hidden words gets through."""
    answers = []
    for name, word in (("real", "secretxyz"), ("guess", guess)):
        retriever = api.open_retriever(str(build(tmp_path / name, word)))
        try:
            doc = api.visible_document(retriever, "handbook.md", ["staff"]).to_dict()
            found = [retriever.search("leave portal pager payroll", ["staff"], mode=mode, expand=expand, k=3).to_dict()
                     for mode in ("bm25", "hybrid") for expand in ("none", "neighbours", "parent")]
            answers.append(without_times({"document": doc, "searches": found}))
            assert all("payroll" not in r["text"].lower() for s in found for r in s["results"])
        finally:
            retriever.close()
    assert answers[0] == answers[1]


def test_served_document_carries_no_source_hash_or_section_id(header_server, store):
    """``mixed.md`` for an sre caller: its Payroll section is finance-only."""
    from chunkwise.store import open_store

    with open_store(str(store)) as s:
        stored = s.records_of("mixed.md")
    hidden = [r for r in stored.values() if "finance" in r["acl"] and "sre" not in r["acl"]]
    assert hidden and SECRET in hidden[0]["text"]
    source = DOCS["mixed.md"][0].encode("utf-8")
    r = header_server.client(**{"X-Chunkwise-Groups": "sre"}).get("/documents/mixed.md")
    assert r.status_code == 200
    body = r.text
    assert "source_version" not in body and "section_id" not in body and "embed_key" not in body
    digests = {hashlib.sha256(source).hexdigest(), *(r["source_version"] for r in stored.values())}
    for rec in hidden:
        digests |= {rec["chunk_id"], rec["section_id"], rec["content_hash"], rec["embed_key"]}
    for digest in digests:
        assert digest[:12] not in body
    assert set(json.loads(body)["records"][0]) <= set(api_served_fields())


def api_served_fields():
    from chunkwise.retrieve.documents import SERVED_FIELDS

    return SERVED_FIELDS


def test_mcp_fetch_has_no_source_hash():
    from chunkwise.mcp.tools import fetch_answer

    doc = {"doc_id": "d", "source_uri": "d.md", "title": "", "version": "2", "boundaries": [[0, 3]],
           "records": [{"chunk_id": "c", "chunk_index": 0, "heading_path": [], "page": None, "start_char": 0,
                        "end_char": 3, "text": "abc", "source_uri": "d.md"}]}
    answer = fetch_answer(doc, None)
    assert "source_version" not in answer and answer["version"] == "2"


def test_a_stale_link_names_no_version_hash():
    from chunkwise.errors import StaleLink
    from chunkwise.retrieve.expand import expand_parent
    from chunkwise.retrieve.index import Item
    from chunkwise.retrieve.merge import to_passage

    class Source:
        def document_version(self, doc_id):
            return "f" * 64

        def doc_chunks(self, doc_id):
            return []

    item = Item("c0", "doc", 0, 0, 5, "hello", acl=("staff",), quality="ready", section_id="s0",
                source_version="a" * 64)
    with pytest.raises(StaleLink) as stale:
        expand_parent(Source(), to_passage(item.hit(1.0, 1)), ["staff"])
    assert not re.search(r"[0-9a-f]{8}", str(stale.value)), str(stale.value)
