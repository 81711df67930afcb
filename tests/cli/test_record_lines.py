"""``chunk --json`` writes its records with orjson (``cli.record_lines``, in the worker): the same values as the
``json`` path, escaped the same way (no control, C1 or bidirectional character reaches the terminal
raw), and whatever orjson refuses still written by ``json``. (A non-finite float, which no chunk
record holds, is ``null`` there: ``json`` wrote ``Infinity``, which is not JSON.)"""
import json

import pytest
from hypothesis import given, settings, strategies as st

from chunkwise.access import AccessTags
from chunkwise.cli import output, record_lines
from chunkwise.enrich.records import ChunkRecord

orjson = pytest.importorskip("orjson")

HOSTILE = st.text(st.sampled_from(list("ab é東\n\r\t\x00\x1b\x7f\x85\x9f\u00ad\u200b\u202e\u2028\u2066\ufeff\"\\/"))
                  | st.characters(), max_size=40)
VALUES = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False, allow_infinity=False) | HOSTILE,
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(HOSTILE, inner, max_size=4),
                      max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(HOSTILE, VALUES, max_size=6))
def test_record_lines_hold_the_json_paths_values_and_nothing_raw(record):
    try:
        reference = output._json_line(record)
    except (TypeError, ValueError):
        return
    line = output._record_line(record, orjson)
    assert "\n" not in line and not output._UNSAFE.search(line)
    assert json.loads(line) == json.loads(reference)


def test_access_tags_and_lone_surrogates_are_written():
    record = {"acl": AccessTags.parse("team:a,team:b", "--acl"), "text": "x\ud800y", "n": 2**80}
    line = output._record_line(record, orjson)
    assert json.loads(line) == json.loads(output._json_line(record))
    assert json.loads(output._record_line({"acl": AccessTags.parse("g:1", "--acl")}, orjson))["acl"] == ["g:1"]


def test_lines_without_orjson_are_the_json_path(monkeypatch):
    records = [_record(text="a\u202eb", size=3), _record(text="c", size=1)]
    fast = b"".join(record_lines.record_line(r) for r in records).decode()
    monkeypatch.setattr(output, "_ORJSON", None)
    slow = b"".join(record_lines.record_line(r) for r in records).decode()
    assert [json.loads(x) for x in fast.splitlines()] == [json.loads(x) for x in slow.splitlines()] == \
        [{**r.to_dict(), "needs_review": r.needs_review} for r in records]
    assert "\u202e" not in fast and "\\u202e" in fast


def test_a_non_finite_float_is_valid_json():
    assert json.loads(output._record_line({"x": float("inf")}, orjson)) == {"x": None}


def _record(**fields) -> ChunkRecord:
    base = dict(chunk_id="c" * 32, doc_id="d.md", source_uri="d.md", chunk_index=0, heading_path=("A", "B"),
                start_char=0, end_char=1, page=None, page_end=None, doc_updated_at="", ingested_at="", language="en",
                acl=(), content_hash="h", embed_model="none", embed_key="k", text="t", embed_text="t", size=1,
                title="", author="", source_version="s", chunker="f", header_mode="none", quality="review",
                reasons=("missing_acl",), section_id="x")
    return ChunkRecord(**{**base, **fields})


STRINGS = st.lists(HOSTILE, max_size=3).map(tuple)


@settings(max_examples=300, deadline=None)
@given(text=HOSTILE, embed=HOSTILE, path=STRINGS, acl=STRINGS, reasons=STRINGS, title=HOSTILE,
       quality=st.sampled_from(["ready", "review"]), page=st.none() | st.integers(-2**70, 2**70))
def test_a_records_line_is_the_line_the_caller_wrote(text, embed, path, acl, reasons, title, quality, page):
    """``record_line`` (the worker) gives byte for byte what the caller wrote before: ``_record_line``
    of the record's dict with ``needs_review`` added, a newline, UTF-8; a line it cannot write raw
    (a lone surrogate: stdout refused it) is valid JSON with the surrogate escaped."""
    record = _record(text=text, embed_text=embed, heading_path=path, acl=acl, reasons=reasons, title=title,
                     quality=quality, page=page)
    line = record_lines.record_line(record)
    before = output._record_line({**record.to_dict(), "needs_review": quality != "ready"}, orjson) + "\n"
    try:
        assert line == before.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped, the same values
        assert json.loads(line) == json.loads(before)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert not output._UNSAFE.search(line.decode("utf-8")[:-1])


def test_cli_json_lines_are_the_records_of_the_door(tmp_path, capsys):
    """``chunkwise chunk --json``: the lines are the door's records with ``needs_review``, in order."""
    from chunkwise import api
    from chunkwise.cli.main import main

    doc = tmp_path / "doc.md"
    text = "# Title\n\n" + "Some words \u202e here, and more.\n\n" * 300 + "Ünïcode — end.\n"
    doc.write_text(text, encoding="utf-8")
    assert main(["chunk", "--strategy", "fixed", "--size", "64", "--json", str(doc)]) == 0
    out = capsys.readouterr().out
    records = api.chunk_file(doc, api.ChunkConfig(strategy="fixed", size=64))
    expected = "".join(output._record_line({**r.to_dict(), "needs_review": r.needs_review}, orjson) + "\n"
                       for r in records)
    assert len(records) > 5 and out == expected
