"""Golden answers written as a reader sees them: located in the normalised text (hyphenation repaired,
running headers removed, whitespace ignored) and mapped back to original offsets; a clear error only
when the answer is truly absent. The PDF is generated (fpdf2) and read by the real extractor."""
import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunkwise.config import ChunkConfig
from chunkwise.errors import ConfigError
from chunkwise.evaluate.golden import load_golden_texts, read_golden
from chunkwise.evaluate.locate import SourceText, locate
from chunkwise.evaluate.runner import Settings, run_eval

pytest.importorskip("fpdf")
pytest.importorskip("pypdf")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "extract"))
from pdf_fixtures import (HANDBOOK_HEAD, HANDBOOK_HYPHENATED, HANDBOOK_PAGE_CROSSING,  # noqa: E402
                          write_handbook_pdf)


@pytest.fixture(scope="module")
def handbook(tmp_path_factory):
    docs = tmp_path_factory.mktemp("docs")
    write_handbook_pdf(docs / "handbook.pdf")
    golden = docs.parent / "handbook.golden.jsonl"
    golden.write_text("\n".join(json.dumps(r) for r in (
        {"id": "hyphen", "question": "What must a vessel declare to the clerk on arrival?", "doc": "handbook.pdf",
         "answer": HANDBOOK_HYPHENATED},
        {"id": "crossing", "question": "When does the harbour master sign the departure permit?",
         "doc": "handbook.pdf", "answer": HANDBOOK_PAGE_CROSSING})) + "\n", encoding="utf-8")
    return docs, golden


def test_hyphenated_and_page_crossing_answers_map_back_to_the_original_text(handbook):
    docs, golden = handbook
    (hyphen, crossing), texts = load_golden_texts(golden, docs)
    text = texts["handbook.pdf"]
    h, c = hyphen.spans[0], crossing.spans[0]
    assert HANDBOOK_PAGE_CROSSING not in text  # as extracted, the page furniture sits inside it
    # extraction joins a word hyphenated at a line end, so that answer is found as written
    assert text[h.start:h.end] == HANDBOOK_HYPHENATED
    crossed = text[c.start:c.end]
    assert crossed.startswith("The harbour master signs every departure permit")
    assert crossed.endswith("before the tide turns")
    assert HANDBOOK_HEAD in crossed and "Page 2 of 4" in crossed  # the span runs over the removed furniture


def test_reader_form_answers_are_answered_end_to_end(handbook):
    """A sentence-packing chunk holds each located span whole, so the retriever answers both questions."""
    docs, golden = handbook
    ev = run_eval(golden, docs, [(ChunkConfig(strategy="sentences", size=64), [("bm25", "none")])],
                  Settings(k=3, budget=600))
    (result,) = ev.results
    assert result.metrics["fits"] == 1.0 and result.metrics["straddle_rate"] == 0.0
    assert result.metrics["recall@3"] == 1.0, result.answers


def test_truly_absent_answer_says_where_the_copy_departs(handbook):
    docs, _ = handbook
    bad = docs.parent / "bad.jsonl"
    bad.write_text(json.dumps({"id": "gone", "question": "?", "doc": "handbook.pdf",
                               "answer": "The harbour master signs every arrival permit"}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"question 'gone'.*does not occur.*hyphenation, running headers.*"
                                          r"matches up to 'The harbour master signs every'.*differs at 'arrival'"):
        load_golden_texts(bad, docs)


def test_offsets_given_for_a_page_crossing_span_are_checked_in_the_normalised_text(handbook):
    docs, golden = handbook
    (_, crossing), texts = load_golden_texts(golden, docs)
    s = crossing.spans[0]
    rec = {"id": "c", "question": "?", "doc": "handbook.pdf", "answer": HANDBOOK_PAGE_CROSSING,
           "start_char": s.start, "end_char": s.end}
    from chunkwise.pipeline.documents import load_document

    doc = load_document(docs / "handbook.pdf")
    source = {"handbook.pdf": SourceText(doc.text, doc)}
    assert read_golden([json.dumps(rec)], source)[0].spans == crossing.spans
    with pytest.raises(ConfigError, match="not the answer"):
        read_golden([json.dumps({**rec, "end_char": s.end - 3})], source)


def test_an_answer_repeated_only_in_removed_headers_is_ambiguous_not_guessed(handbook):
    docs, _ = handbook
    bad = docs.parent / "head.jsonl"
    bad.write_text(json.dumps({"id": "head", "question": "?", "doc": "handbook.pdf", "answer": HANDBOOK_HEAD}))
    with pytest.raises(ConfigError, match=r"occurs 4 times"):
        load_golden_texts(bad, docs)


word = st.text(alphabet="abcdefgh", min_size=4, max_size=9)


@given(st.lists(word, min_size=3, max_size=40), st.data())
def test_reader_form_answer_is_found_through_line_end_hyphenation_and_reflow(parts, data):
    """A document whose words are laid out with random line breaks, some splitting a word with a
    hyphen: the answer typed as the words read is located, and the span reads as the answer."""
    i = data.draw(st.integers(0, len(parts)))
    answer_words = ["zqmark"] + data.draw(st.lists(word, min_size=1, max_size=5)) + ["qzend"]
    words = parts[:i] + answer_words + parts[i:]
    out = []
    for w in words:
        layout = data.draw(st.sampled_from(["space", "newline", "hyphen"]))
        if layout == "hyphen" and len(w) >= 4:
            cut = data.draw(st.integers(2, len(w) - 2))
            out.append(f"{w[:cut]}-\n{w[cut:]}")
        else:
            out.append(w)
        out.append("\n" if layout == "newline" else " ")
    text = "".join(out)
    answer = " ".join(answer_words)
    start, end = locate(SourceText(text), answer)
    assert " ".join(text[start:end].replace("-\n", "").split()) == answer


def test_answer_copied_from_rendered_markdown_is_found_without_its_markup():
    md = "# Access\n\nIt is granted through the `breakglass` command, lasts for **four hours**, and pages on-call.\n"
    start, end = locate(SourceText(md), "granted through the breakglass command, lasts for four hours")
    assert md[start:end] == "granted through the `breakglass` command, lasts for **four hours**"
    start, end = locate(SourceText(md), "It is granted")  # the plain text still matches exactly first
    assert md[start:end] == "It is granted"
    with pytest.raises(ConfigError, match="does not occur"):
        locate(SourceText(md), "granted through the breakglass command, lasts for five hours")
