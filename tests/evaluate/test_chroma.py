import json
import shutil
from pathlib import Path

import pytest
from conftest import CHROMA, chroma_texts
from hypothesis import given
from hypothesis import strategies as st

from chunkwise.errors import InputError
from chunkwise.evaluate.chroma import (chroma_row, chroma_scores, import_chroma, locate_like_chroma,
                                       omegas_for, precision_omega)
from chunkwise.evaluate.golden import GoldenQuestion, Span, read_golden, to_record
from chunkwise.evaluate.metrics import Overlap


def test_importer_reads_every_question_and_excerpt_exactly():
    texts = chroma_texts()  # skips when ../shared/data is absent
    docs, qs = import_chroma(CHROMA.parent)
    assert docs == texts
    assert len(qs) == 472 and len({q.id for q in qs}) == 472
    spans = [s for q in qs for s in q.spans]
    assert len(spans) == 790
    assert {s.doc for s in spans} == set(texts)
    for q in qs:
        assert len({s.doc for s in q.spans}) == 1  # one corpus per question
        assert q.answer == "\n".join(docs[s.doc][s.start:s.end] for s in q.spans)
    # The imported set is a valid golden set: written as JSON Lines it reads back equal.
    assert read_golden([json.dumps(to_record(q)) for q in qs], docs) == qs


def test_importer_rejects_a_corpus_that_does_not_match(tmp_path):
    root = tmp_path / "chroma"
    (root / "corpora").mkdir(parents=True)
    (root / "corpora" / "c.md").write_text("Hello there. General Kenobi.", encoding="utf-8")
    ref = {"content": "General Kenobi", "start_index": 13, "end_index": 27}
    row = lambda refs, corpus="c": f"q?,\"{json.dumps(refs).replace(chr(34), chr(34) * 2)}\",{corpus}\n"  # noqa: E731
    head = "question,references,corpus_id\n"
    (root / "questions_df.csv").write_text(head + row([ref]), encoding="utf-8")
    docs, qs = import_chroma(root)
    assert qs == [GoldenQuestion("chroma-000", "q?", (Span("c.md", 13, 27),), "General Kenobi")]
    (root / "questions_df.csv").write_text(head + row([dict(ref, start_index=12)]), encoding="utf-8")
    with pytest.raises(InputError, match="row 2: reference \\[12, 27\\) of c.md"):
        import_chroma(root)
    (root / "questions_df.csv").write_text(head + row([ref], "zz"), encoding="utf-8")
    with pytest.raises(InputError, match="no file corpora/zz.md"):
        import_chroma(root)
    shutil.rmtree(root / "corpora")
    with pytest.raises(InputError, match="needs questions_df.csv and corpora/"):
        import_chroma(root)


def test_chroma_scores_by_hand():
    # Two excerpts (40 chars); five retrieved chunks, one from another corpus, two overlapping.
    spans = [("c.md", 100, 120), ("c.md", 300, 320)]
    top5 = [("c.md", 90, 130), ("c.md", 110, 150), ("d.md", 0, 50), ("c.md", 310, 400), ("c.md", 500, 600)]
    o = chroma_scores(spans, top5)
    covered, retrieved = 20 + 10, 40 + 40 + 50 + 90 + 100
    assert o == Overlap(covered / 40, covered / retrieved, covered / (retrieved + 10), covered, retrieved, 40)
    row = chroma_row([o, Overlap(0.5, 0.1, 0.1, 1, 10, 2)], [0.2, 0.4])
    assert (row.recall, row.precision, row.n) == (pytest.approx(100 * (0.75 + 0.5) / 2),
                                                  pytest.approx(100 * (30 / 320 + 0.1) / 2), 2)
    assert row.omega == pytest.approx(30.0)
    with pytest.raises(ValueError):
        chroma_row([])


def test_precision_omega_by_hand_including_abutting_chunks():
    spans = [("c.md", 100, 120), ("c.md", 130, 140)]
    chunks = [("c.md", 0, 90), ("c.md", 90, 125), ("c.md", 125, 135), ("c.md", 135, 200), ("x.md", 100, 200)]
    # Touching chunks [90,200) cover all 30 excerpt chars: 30 / 110.
    assert precision_omega(spans, chunks) == pytest.approx(30 / 110)
    # A chunk ending exactly where an excerpt starts still "touches" it in Chroma's code.
    assert precision_omega([("c.md", 90, 95)], [("c.md", 0, 90), ("c.md", 90, 100)]) == pytest.approx(5 / 100)
    assert precision_omega(spans, [("x.md", 0, 500)]) == 0.0
    q = GoldenQuestion("q", "?", tuple(Span(*s) for s in spans))
    assert omegas_for([q, q], chunks) == [pytest.approx(30 / 110)] * 2


@given(st.lists(st.integers(1, 40), min_size=1, max_size=12), st.integers(0, 200), st.integers(1, 60))
def test_omega_equals_iou_of_retrieving_exactly_the_touching_chunks(widths, start, length):
    # For chunks that tile a document, perfect retrieval = returning every chunk that touches.
    cuts = [0]
    for w in widths:
        cuts.append(cuts[-1] + w)
    chunks = [("d", a, b) for a, b in zip(cuts, cuts[1:])]
    end = min(start + length, cuts[-1])
    if start >= end:
        return
    span = [("d", start, end)]
    touching = [c for c in chunks if max(c[1], start) <= min(c[2], end)]
    assert precision_omega(span, chunks) == pytest.approx(chroma_scores(span, touching).iou)


def test_locate_like_chroma_keeps_their_quirks():
    text = "One fact. Two facts.\nOne fact. Three  facts."
    assert locate_like_chroma(text, "One fact.") == (0, 8)  # full stop dropped, first occurrence
    at = text.index("Three")
    assert locate_like_chroma(text, "three facts") == (at, at + 12)  # whitespace- and case-insensitive
    assert locate_like_chroma(text, "Four facts") is None
    assert locate_like_chroma(text, " \n") is None


def test_conftest_corpora_path_is_the_shared_data():
    assert Path(CHROMA).name == "corpora"
