"""Writer slots (store/postgres/pg_slots.py, migration 11) on the session's real server: a writer does
not wait for another writer's open transaction on the rows every write updates (the generation, a
tag set's statistics, the term statistics), and what readers see is still the rows' truth: the
per-tag-set statistics and document frequencies are those of the stored rows, the generation grows
with each commit, and a lone writer keeps one row per key."""
from __future__ import annotations

import json

from backends import consistent, query
from chunkwise.store import DocumentDiff, DocumentRow, open_store
from chunkwise.store.writing import write_decided


def _record(doc, i, text, acl):
    return {"chunk_id": f"{doc}-{i}", "doc_id": doc, "source_uri": doc, "chunk_index": i, "heading_path": [],
            "start_char": i, "end_char": i + 1, "page": None, "acl": list(acl), "embed_model": "none",
            "embed_key": f"{doc}-{i}", "text": text, "embed_text": text, "size": 1, "title": doc,
            "quality": "ready", "reasons": []}


def _write(store, doc: str, acl, texts) -> None:
    """``doc`` holds exactly ``texts`` afterwards (its old chunks removed), in one transaction."""
    recs = [_record(doc, i, t, acl) for i, t in enumerate(texts)]

    def decide(state, old):
        new = {r["chunk_id"] for r in recs}
        return DocumentDiff([r for r in recs if r["chunk_id"] not in old], [r for r in recs if r["chunk_id"] in old],
                            [c for c in old if c not in new], {}, "none")

    write_decided(store, DocumentRow(doc, "/r", doc, doc, f"v{len(texts)}", "i", doc, "", "", "2026-01-01T00:00:00Z",
                                     len(recs)), decide)


def _df_rows_truth(url) -> tuple[dict, dict]:
    """(document frequency per (lexeme, tag set) from the rows, the same from ``term_df``'s slots)."""
    sets = {tuple(a): i for i, a in query(url, "SELECT id, acl FROM acl_sets")}
    truth: dict = {}
    for acl, tf in query(url, "SELECT acl, lex_tf FROM chunks WHERE servable"):
        for lx in (tf if isinstance(tf, dict) else json.loads(tf)):
            truth[(lx, sets[tuple(acl)])] = truth.get((lx, sets[tuple(acl)]), 0) + 1
    got = {(lx, s): int(n) for lx, s, n in query(url, "SELECT lexeme, set_id, sum(df) FROM term_df GROUP BY 1, 2"
                                                     " HAVING sum(df) <> 0")}
    return truth, got


def test_a_writer_does_not_wait_for_another_writers_open_transaction(pg_url):
    with open_store(pg_url) as a, open_store(pg_url, timeout=1.0) as b:
        a.add_root("/r")
        _write(a, "d0", ["red"], ["w1 w2", "w2 w3"])
        before = b.generation()
        with a.atomic():  # a's transaction stays open, holding the rows it updated
            _write(a, "d1", ["red"], ["w1 w4", "w3"])
            # Same tag set, same terms: before the slots, b waited for a's rows (generation, the tag
            # set's statistics, term_df) past its 1 s lock timeout and failed with StoreBusy.
            _write(b, "d2", ["red"], ["w1 w2 w4", "w4"])
            _write(b, "d0", ["red"], ["w3"])  # a document a wrote earlier, rewritten in b's slot
            assert b.generation() > before  # b's commits are seen while a's is still open
        after_both = b.generation()
        assert after_both > before
        slots = {s for (s,) in query(pg_url, "SELECT DISTINCT slot FROM acl_stats")}
        assert len(slots) == 2, "the two writers wrote their statistics to two slots"
        consistent(pg_url)  # per tag set, the slots add up to the rows
        truth, got = _df_rows_truth(pg_url)
        assert got == truth
        assert a.lexical_df(["w1", "w2", "w3", "w4"], ["red"]) == {"w1": 2, "w2": 1, "w3": 2, "w4": 3}
        _write(a, "d2", ["red"], ["w5"])
        assert a.generation() > after_both
        truth, got = _df_rows_truth(pg_url)
        assert got == truth and a.lexical_df(["w1", "w5"], ["red"]) == {"w1": 1, "w5": 1}


def test_a_lone_writer_keeps_one_row_per_key(pg_url):
    with open_store(pg_url) as store:
        store.add_root("/r")
        for d in range(4):
            _write(store, f"d{d}", ["red"] if d % 2 else ["blue"], [f"w{d} w9", "w9"])
        _write(store, "d1", ["red"], ["w7"])
    assert query(pg_url, "SELECT DISTINCT slot FROM acl_stats") == [(0,)]
    assert query(pg_url, "SELECT DISTINCT slot FROM term_df") == [(0,)]
    assert query(pg_url, "SELECT count(*) FROM generation")[0][0] == 1
    consistent(pg_url)
    truth, got = _df_rows_truth(pg_url)
    assert got == truth
