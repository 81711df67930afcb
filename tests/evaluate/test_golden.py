import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunkwise.errors import ConfigError
from chunkwise.evaluate.golden import (GoldenQuestion, Span, load_golden, load_golden_texts, locate,
                                       read_golden, to_record, write_golden)

DOC = "Alpha beta.\nThe reactor was approved in 1987.\ngamma delta gamma delta.\n"
TEXTS = {"a.md": DOC, "b.txt": "Second file: the answer is forty-two."}


def lines(*records):
    return [json.dumps(r) for r in records]


def test_offsets_given_are_kept_and_checked_against_the_answer():
    start = DOC.index("approved in 1987")
    q = read_golden(lines({"id": "q1", "question": "When?", "doc": "a.md", "answer": "approved in 1987",
                           "start_char": start, "end_char": start + 16}), TEXTS)[0]
    assert q == GoldenQuestion("q1", "When?", (Span("a.md", start, start + 16),), "approved in 1987")
    with pytest.raises(ConfigError, match=r"question 'q1'.*not the answer"):
        read_golden(lines({"id": "q1", "question": "When?", "doc": "a.md", "answer": "approved in 1987",
                           "start_char": start + 1, "end_char": start + 17}), TEXTS)


def test_span_located_from_answer_when_offsets_absent():
    q = read_golden(lines({"id": 7, "question": "Who?", "doc": "b.txt", "answer": "forty-two"}), TEXTS)[0]
    s = q.spans[0]
    assert q.id == "7" and TEXTS["b.txt"][s.start:s.end] == "forty-two"


def test_answer_reflowed_across_a_line_break_is_still_found_once():
    s = read_golden(lines({"id": "q", "question": "?", "doc": "a.md", "answer": "beta. The reactor"}), TEXTS)[0].spans[0]
    assert DOC[s.start:s.end] == "beta.\nThe reactor"


def test_ambiguous_or_missing_answer_is_an_error_naming_the_question():
    with pytest.raises(ConfigError, match=r"question 'dup'.*occurs 2 times"):
        read_golden(lines({"id": "dup", "question": "?", "doc": "a.md", "answer": "gamma delta"}), TEXTS)
    with pytest.raises(ConfigError, match=r"question 'gone'.*does not occur"):
        read_golden(lines({"id": "gone", "question": "?", "doc": "a.md", "answer": "approved in 1988"}), TEXTS)
    with pytest.raises(ConfigError, match=r"question 'e'.*empty"):
        read_golden(lines({"id": "e", "question": "?", "doc": "a.md"}), TEXTS)


def test_several_spans_over_several_documents():
    rec = {"id": "m", "question": "Both?", "answer": "x", "spans": [
        {"doc": "a.md", "start_char": 0, "end_char": 5},
        {"doc": "b.txt", "text": "Second file"}]}
    q = read_golden(lines(rec), TEXTS)[0]
    assert q.spans == (Span("a.md", 0, 5), Span("b.txt", 0, 11))


@pytest.mark.parametrize("record, message", [
    ({"question": "?", "doc": "a.md", "answer": "Alpha"}, "missing \"id\""),
    ({"id": "q", "doc": "a.md", "answer": "Alpha"}, "\"question\" must be"),
    ({"id": "q", "question": "?", "answer": "Alpha"}, "names no \"doc\""),
    ({"id": "q", "question": "?", "doc": "a.md", "start_char": 0}, "both start_char and end_char"),
    ({"id": "q", "question": "?", "doc": "a.md", "start_char": 5, "end_char": 5000}, "not inside a.md"),
    ({"id": "q", "question": "?", "doc": "a.md", "start_char": 5, "end_char": 5}, "is empty"),
    ({"id": "q", "question": "?", "doc": "../a.md", "answer": "Alpha"}, "inside the docs folder"),
    ({"id": "q", "question": "?", "doc": "a.md", "answer": "Alpha", "colour": 1}, "unknown field"),
    ({"id": "q", "question": "?", "spans": []}, "non-empty list"),
    ({"id": "q", "question": "?", "doc": "a.md", "start_char": 0, "end_char": 3, "spans": [{}]}, "not both"),
])
def test_bad_lines_fail_with_a_fix(record, message):
    with pytest.raises(ConfigError, match=message):
        read_golden(lines(record), TEXTS)


def test_duplicate_ids_bad_json_and_empty_sets_are_rejected():
    rec = {"id": "q", "question": "?", "doc": "a.md", "answer": "Alpha"}
    with pytest.raises(ConfigError, match="repeats line 1"):
        read_golden(lines(rec, rec), TEXTS)
    with pytest.raises(ConfigError, match=r"gs:2: not valid JSON"):
        read_golden([json.dumps(rec), "{oops"], TEXTS, name="gs")
    with pytest.raises(ConfigError, match="no questions"):
        read_golden(["", "# only a comment"], TEXTS)


def test_load_from_files_offsets_count_in_the_original_text(tmp_path):
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    md = "---\ntitle: Guide\n---\n# Guide\n\nThe pump runs at 40 bar.\n"
    (docs / "sub" / "guide.md").write_text(md, encoding="utf-8")
    html = "<html><body><nav>menu</nav><p>Valves close at dusk.</p></body></html>"
    (docs / "page.html").write_text(html, encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    golden.write_text("\n".join(lines(
        {"id": "md", "question": "Pressure?", "doc": "sub/guide.md", "answer": "40 bar"},
        {"id": "html", "question": "When?", "doc": "page.html", "answer": "close at dusk"})) + "\n")
    qs, texts = load_golden_texts(golden, docs)
    md_span, html_span = qs[0].spans[0], qs[1].spans[0]
    assert md_span.start == md.index("40 bar")  # front matter counted: offsets are into the decoded file
    assert texts["page.html"][html_span.start:html_span.end] == "close at dusk"
    assert "<p>" not in texts["page.html"]  # extracted text, not markup
    assert load_golden(golden, docs) == qs
    golden.write_text(json.dumps({"id": "x", "question": "?", "doc": "nope.md", "answer": "a"}))
    with pytest.raises(ConfigError, match="'nope.md' not found"):
        load_golden(golden, docs)


def test_write_then_read_round_trips(tmp_path):
    qs = [GoldenQuestion("a", "one?", (Span("a.md", 0, 5),), "Alpha"),
          GoldenQuestion("b", "two?", (Span("a.md", 12, 15), Span("b.txt", 0, 6)), "")]
    path = tmp_path / "g.jsonl"
    assert write_golden(qs, path) == 2
    assert read_golden(path.read_text().splitlines(), TEXTS) == qs
    assert to_record(qs[0]) == {"id": "a", "question": "one?", "answer": "Alpha", "doc": "a.md",
                                "start_char": 0, "end_char": 5}


words = st.text(alphabet="abcde", min_size=1, max_size=6)


@given(st.lists(words, min_size=1, max_size=30), st.data())
def test_locate_finds_a_unique_marked_answer(parts, data):
    i = data.draw(st.integers(0, len(parts)))
    answer = "ZQ " + data.draw(words) + " QZ"  # Z/Q never occur elsewhere, so exactly one place
    text = " ".join(parts[:i] + [answer] + parts[i:])
    start, end = locate(text, answer)
    assert text[start:end] == answer
    with pytest.raises(ConfigError, match="occurs 2 times"):
        locate(text + " " + answer, answer)
