"""The one-step postings read (store/sqlite/postings.py) gives what the row-by-row read gives."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from chunkwise.store.sqlite import postings
from chunkwise.store.sqlite.sqlite_read import _varints


def _encode(value: int) -> bytes:
    """SQLite's varint as FTS5 writes a docsize count: 7 bits a byte, high bit on all but the last."""
    groups = [value & 0x7F]
    value >>= 7
    while value:
        groups.append(value & 0x7F)
        value >>= 7
    return bytes([g | 0x80 for g in reversed(groups[1:])] + [groups[0]])


counts = st.integers(min_value=0, max_value=2**40)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(counts, min_size=4, max_size=4), max_size=40))
def test_varint_table_equals_the_per_record_decoder(records):
    blobs = [b"".join(_encode(v) for v in rec) for rec in records]
    table = postings.varint_table(b"".join(blobs), len(records))
    assert table is not None
    assert table.shape == (len(records), 4)
    assert [list(map(int, row)) for row in table] == [_varints(b) for b in blobs] == records


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(counts, min_size=0, max_size=6), min_size=1, max_size=20))
def test_varint_table_refuses_records_of_another_width(records):
    if all(len(r) == 4 for r in records):
        records = [*records, [1, 2, 3]]
    blob = b"".join(_encode(v) for rec in records for v in rec)
    table = postings.varint_table(blob, len(records))
    # Refused unless the numbers happen to add up to rows x 4; then it is at least what they are.
    flat = [v for rec in records for v in rec]
    if table is not None:
        assert [int(v) for v in table.ravel()] == flat


def test_varint_table_refuses_a_cut_number():
    assert postings.varint_table(_encode(300)[:1] + _encode(1) * 3, 1) is None
    assert postings.varint_table(_encode(1) * 4 + b"\x81", 1) is None


def test_one_step_read_matches_the_row_by_row_read(tmp_path):
    from chunkwise import api
    from chunkwise.lexical import FIELDS
    from chunkwise.store.sqlite.sqlite_read import fts_match

    docs = tmp_path / "docs"
    docs.mkdir()
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
    for i in range(30):
        body = " ".join(words[(i + j) % len(words)] for j in range(40 + 17 * (i % 9)))
        (docs / f"d{i}.md").write_text(f"# Title {words[i % 10]} {i}\n\n## Part {words[(i * 3) % 10]}\n\n{body}\n")
    db = tmp_path / "s.db"
    api.ingest([docs], str(db), acl=("team",), embedder="none")
    with api.open_store(str(db)) as store:
        stored = " ".join(r[0] + " " + r[1] + " " + r[2] for r in
                          store.db.execute("SELECT lex_body, lex_title, lex_heading FROM chunks"))
        terms = sorted(set(stored.split()))
        assert len(terms) >= 10
        for term in terms:
            match = fts_match([term], ["team"], FIELDS)
            with store._snapshot():
                row = store.db.execute(postings.matched_sql(len(FIELDS)), (match,)).fetchone()
                bulk = postings.decode(row, len(FIELDS))
                slow = store._matched_rows(match)
            assert bulk is not None and len(bulk[0]) > 0
            for a, b in zip(bulk, slow):
                np.testing.assert_array_equal(a, b) if a.dtype == np.int64 else np.testing.assert_allclose(a, b, rtol=1e-12)
            got = store.term_matches(term, ["team"])
            np.testing.assert_array_equal(got.keys, slow[0])
            assert got.tf.sum() > 0
