"""The streamed write (issue 25, item 9): a document is written ``WriteStage.BATCH_RECORDS`` records
at a time in its one transaction, the diff against the stored document taken per batch. Whatever
the batch size, the store ends up holding exactly what the whole-document write (one batch) gives,
and the run counts the same changes."""
from __future__ import annotations

import hashlib
import sqlite3

from hypothesis import HealthCheck, given, settings, strategies as st

from chunkwise.config import ChunkConfig
from chunkwise.embed import make_embedder
from chunkwise.pipeline import ingest
from chunkwise.pipeline.executors import InlineExecutor
from chunkwise.pipeline.write import DocumentPlan, WriteStage

CONFIG = ChunkConfig(strategy="structure", size=32)
NOW = "2026-12-07T00:00:00Z"
TABLES = {
    "documents": "SELECT * FROM documents ORDER BY doc_id",
    "chunks": "SELECT chunk_id, doc_id, chunk_index, record, text, embed_text, embed_model, embed_key, acl, quality,"
              " size, acl_index, lex_body, lex_title, lex_heading FROM chunks ORDER BY chunk_id",
    "vectors": "SELECT * FROM vectors ORDER BY embed_key",
    "access": "SELECT tag, doc_id, (SELECT chunk_id FROM chunks WHERE rowid = chunk) FROM chunk_access ORDER BY 1, 2, 3",
}


def contents(db) -> dict[str, list[str]]:
    """Each table's rows, hashed (sorted chunk ids with their record hashes, and the rest)."""
    con = sqlite3.connect(db)
    try:
        return {name: [hashlib.sha256(repr(row).encode()).hexdigest() for row in con.execute(sql)]
                for name, sql in TABLES.items()}
    finally:
        con.close()


def sections(words: list[str]) -> str:
    return "# Handbook\n\n" + "".join(f"## Part {i}\n\nThe {w} clause {i} covers item {i} of the {w} ledger.\n\n"
                                      for i, w in enumerate(words))


def counted(stats) -> tuple:
    return (stats.added, stats.removed, stats.embedded, stats.metadata_updated, stats.unchanged, stats.in_store)


def test_a_document_of_many_records_is_written_in_several_batches_as_in_one(tmp_path, monkeypatch):
    """In worker processes (records packed), 300 sections: batches of 7 and one batch of all give
    identical stores, first ingest and after an edit that keeps, changes, adds and removes chunks."""
    docs = tmp_path / "docs"
    docs.mkdir()
    batches = []
    diff = DocumentPlan.diff

    def spy(self, old, part):
        batches.append(len(part))
        return diff(self, old, part)

    monkeypatch.setattr(DocumentPlan, "diff", spy)
    words = [f"w{i % 17}" for i in range(300)]
    edits = [words, words[:100] + ["changed"] * 20 + words[140:] + ["added"] * 30]
    seen = {}
    for batch in (7, 10**9):
        monkeypatch.setattr(WriteStage, "BATCH_RECORDS", batch)
        db = tmp_path / f"b{batch}.db"
        steps = []
        for text in edits:
            (docs / "guide.md").write_text(sections(text), encoding="utf-8")
            batches.clear()
            stats = ingest([docs], db, CONFIG, embedder=make_embedder("hashing"), acl=("staff",), now=NOW)
            assert not stats.errors, stats.errors
            steps.append((counted(stats), contents(db), list(batches)))
        seen[batch] = steps
    (small_first, small_db, parts), (_, _, edit_parts) = seen[7]
    assert len(parts) > 10 and max(parts) == 7 and sum(parts) == small_first[0] >= 300
    assert len(edit_parts) > 10
    for (c7, s7, _), (cbig, sbig, one) in zip(seen[7], seen[10**9]):
        assert len(one) == 1
        assert c7 == cbig and s7 == sbig
    first, second = seen[7][0][0], seen[7][1][0]
    assert second[1] > 0 and second[0] > 0 and second[4] > 0  # the edit removed, added and kept chunks


paragraphs = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "ledger", "payroll"]), min_size=0, max_size=12)
edit = st.tuples(st.sampled_from(["edit", "add", "remove", "same"]), st.integers(0, 11), st.sampled_from(["x", "y", "z"]))


def apply(words: list[str], op) -> list[str]:
    kind, at, word = op
    words = list(words)
    if kind == "edit" and words:
        words[at % len(words)] = word
    elif kind == "add":
        words.insert(at % (len(words) + 1), word)
    elif kind == "remove" and words:
        del words[at % len(words)]
    return words


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=paragraphs, ops=st.lists(st.lists(edit, min_size=1, max_size=4), min_size=1, max_size=4))
def test_the_streamed_diff_is_the_whole_document_diff(tmp_path_factory, start, ops):
    """Random re-ingest sequences (sections edited, added, removed, files unchanged): batches of 2
    count and store exactly what one whole-document batch does, step by step."""
    tmp = tmp_path_factory.mktemp("seq")
    docs = tmp / "docs"
    docs.mkdir()
    dbs = {2: tmp / "two.db", 10**9: tmp / "whole.db"}
    words = start
    for step in [[]] + ops:
        for op in step:
            words = apply(words, op)
        (docs / "guide.md").write_text(sections(words), encoding="utf-8")
        got = {}
        for batch, db in dbs.items():
            default, WriteStage.BATCH_RECORDS = WriteStage.BATCH_RECORDS, batch
            try:
                stats = ingest([docs], db, CONFIG, embedder=make_embedder("hashing"), acl=("staff",), now=NOW,
                               executor=InlineExecutor())
            finally:
                WriteStage.BATCH_RECORDS = default
            assert not stats.errors, stats.errors
            got[batch] = (counted(stats), contents(db))
        assert got[2] == got[10**9]
