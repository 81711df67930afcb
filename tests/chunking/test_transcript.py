"""Transcripts (issue 29 item 6): consecutive speaker turns share a chunk up to the budget, a turn
that fits is never cut, and every two neighbouring turns that fit together are in one chunk (a bridge
across each cut between chunks), so an answer that runs across two turns is one retrieval unit."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from chunkers import chunk_text
from chunkwise import api
from chunkwise.chunking.atoms import TURN, find_atoms
from chunkwise.config import ChunkConfig

CALL = """[00:00:41] Priya: I'm incident commander for this one. Error rate on payments-api is at eight percent.
[00:01:05] Marco: Deploy pay-742 finished promotion about twenty minutes ago, right before the spike.
[00:01:19] Priya: Then we roll back first. Freeze the pipeline and roll back to pay-741.
[00:01:34] Marco: Freeze is on. Starting the rollback now, it takes about six minutes.
[00:02:10] Aiko: Ledger queue lag is at forty seconds and climbing on the EU cluster.
[00:02:31] Priya: What is the capture failure rate on the ledger side?
[00:02:40] Aiko: Three percent of captures are timing out against the card network gateway.
[00:03:05] Marco: Rollback finished. Error rate is back under half a percent.
[00:03:22] Priya: Good. Aiko, keep watching the queue until lag drops under five seconds.
[00:03:40] Aiko: Will do. Lag is already down to twelve seconds.
"""


def _turns(text: str):
    return [a for a in find_atoms(text) if a.kind == TURN]


def test_an_answer_across_two_turns_is_inside_one_chunk():
    # Question: "what was the capture failure rate?" The answer is Priya's question and Aiko's reply.
    a = CALL.index("[00:02:31]")
    b = CALL.index("card network gateway.") + len("card network gateway.")
    for size in (48, 64, 96):  # the two turns measure 44 MiniLM tokens
        chunks = chunk_text(CALL, strategy="auto", size=size)
        assert any(c.start_char <= a and b <= c.end_char for c in chunks), size
        assert all(c.text == CALL[c.start_char:c.end_char] and c.size <= size for c in chunks)
        assert {c.kind for c in chunks} == {"turn"}


def test_turns_are_packed_whole_and_bridges_only_cross_cuts_between_turns():
    chunks = chunk_text(CALL, strategy="auto", size=64)
    turns = _turns(CALL)
    starts = {t.start for t in turns}
    ends = {t.end for t in turns}
    assert all(c.start_char in starts and c.end_char in ends for c in chunks)  # no turn is cut
    # packed chunks and the bridges between them alternate: each overlaps the one before by one turn
    assert len(chunks) > 2
    for c, d in zip(chunks, chunks[1:]):
        shared = [t for t in turns if d.start_char <= t.start and t.end <= c.end_char]
        assert len(shared) == 1 and shared[0].start == d.start_char and shared[0].end == c.end_char


def test_a_search_for_an_answer_across_two_turns_returns_both_turns(tmp_path):
    root = tmp_path / "calls"
    root.mkdir()
    (root / "incident-call.txt").write_text(CALL, encoding="utf-8")
    db = str(tmp_path / "t.db")
    api.ingest([root], db, ChunkConfig(strategy="auto", size=48), embedder="hashing", acl=["staff"])
    result = api.search(db, "capture failure rate timing out card network", ["staff"], k=1, mode="bm25")
    top = result.passages[0].text
    assert "[00:02:31] Priya: What is the capture failure rate" in top and "card network gateway." in top


_NAMES = st.sampled_from(["Priya", "Marco", "Aiko", "Dr. Chen"])
_WORDS = st.lists(st.sampled_from(["the", "rollback", "queue", "lag", "is", "fine", "now", "captures", "日本", "é",
                                   "payments", "ledger", "eight", "percent"]), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_NAMES, _WORDS), min_size=1, max_size=14), st.integers(min_value=24, max_value=160),
       st.booleans())
def test_every_pair_of_neighbouring_turns_that_fits_together_shares_a_chunk(turns, size, blank):
    sep = "\n\n" if blank else "\n"
    text = sep.join(f"[00:{i // 60:02d}:{i % 60:02d}] {who}: {' '.join(words)}." for i, (who, words) in enumerate(turns))
    chunks = chunk_text(text, strategy="auto", size=size)
    assert all(c.text == text[c.start_char:c.end_char] and c.size <= size for c in chunks)
    found = _turns(text)
    assert len(found) == len(turns)
    sizer = api.make_chunker(ChunkConfig(size=size)).sizer
    for t in found:  # a turn that fits is whole in a chunk
        if sizer.count(text[t.start:t.end]) <= size:
            assert any(c.start_char <= t.start and t.end <= c.end_char for c in chunks)
    for t, u in zip(found, found[1:]):
        if sizer.count(text[t.start:u.end]) <= size:
            assert any(c.start_char <= t.start and u.end <= c.end_char for c in chunks), (t, u)
