"""The streamed write (issue 25, item 9): a document is written ``WriteStage.BATCH_RECORDS`` records
at a time in its one transaction, the diff against the stored document taken per batch. Whatever
the batch size, the store ends up holding exactly what the whole-document write (one batch) gives,
and the run counts the same changes."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st
from reingest import NOW, contents, counted, edit, paragraphs, same_at_every_step, sections

from chunkwise.config import ChunkConfig
from chunkwise.embed import make_embedder
from chunkwise.pipeline import ingest
from chunkwise.pipeline.executors import InlineExecutor
from chunkwise.pipeline.write import DocumentPlan, WriteStage

CONFIG = ChunkConfig(strategy="structure", size=32)


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


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=paragraphs, ops=st.lists(st.lists(edit, min_size=1, max_size=4), min_size=1, max_size=4))
def test_the_streamed_diff_is_the_whole_document_diff(tmp_path_factory, start, ops):
    """Random re-ingest sequences (sections edited, added, removed, files unchanged): batches of 2
    count and store exactly what one whole-document batch does, step by step."""
    tmp = tmp_path_factory.mktemp("seq")
    docs = tmp / "docs"
    docs.mkdir()

    def batches_of(batch):
        def run(docs, db):
            default, WriteStage.BATCH_RECORDS = WriteStage.BATCH_RECORDS, batch
            try:
                return ingest([docs], db, CONFIG, embedder=make_embedder("hashing"), acl=("staff",), now=NOW,
                              executor=InlineExecutor())
            finally:
                WriteStage.BATCH_RECORDS = default
        return run

    same_at_every_step(docs, start, ops, {"two": batches_of(2), "whole": batches_of(10**9)})
