"""Re-ingest sequences for the write-path tests (tests/pipeline/test_streamed_write.py,
test_encoded_rows.py): a document ``guide.md`` of sections named by a list of words, random edits
of that list (a section edited, added, removed, or the file left as it is), and what a store holds
(each table's rows, hashed) and what a run counted, to hold two ways of ingesting equal step by step."""
from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path

from hypothesis import strategies as st

NOW = "2026-12-07T00:00:00Z"
TABLES = {
    "documents": "SELECT * FROM documents ORDER BY doc_id",
    "chunks": "SELECT chunk_id, doc_id, chunk_index, record, text, embed_text, embed_model, embed_key, acl, quality,"
              " size, acl_index, lex_body, lex_title, lex_heading FROM chunks ORDER BY chunk_id",
    "vectors": "SELECT * FROM vectors ORDER BY embed_key",
    "access": "SELECT tag, doc_id, (SELECT chunk_id FROM chunks WHERE rowid = chunk) FROM chunk_access ORDER BY 1, 2, 3",
}

paragraphs = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "ledger", "payroll"]), min_size=0, max_size=12)
edit = st.tuples(st.sampled_from(["edit", "add", "remove", "same"]), st.integers(0, 11), st.sampled_from(["x", "y", "z"]))


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


def same_at_every_step(docs: Path, start: list[str], ops: list[list], runs: Mapping[str, Callable]) -> None:
    """``docs/guide.md`` written from ``start``, then after each step of ``ops``; at each version every
    run ``runs[name](docs, db)`` ingests the folder into its own store ``docs/../<name>.db`` and
    returns its stats: every run must count and store the same, without errors."""
    words = start
    for step in [[]] + ops:
        for op in step:
            words = apply(words, op)
        (docs / "guide.md").write_text(sections(words), encoding="utf-8")
        got = {}
        for name, run in runs.items():
            db = docs.parent / f"{name}.db"
            stats = run(docs, db)
            assert not stats.errors, stats.errors
            got[name] = (counted(stats), contents(db))
        first = next(iter(got.values()))
        assert all(g == first for g in got.values()), got
