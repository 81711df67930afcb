"""``chunk --json`` writes its records with orjson (``output.emit_records``): the same values as the
``json`` path, escaped the same way (no control, C1 or bidirectional character reaches the terminal
raw), and whatever orjson refuses still written by ``json``. (A non-finite float, which no chunk
record holds, is ``null`` there: ``json`` wrote ``Infinity``, which is not JSON.)"""
import json

import pytest
from hypothesis import given, settings, strategies as st

from chunkwise.access import AccessTags
from chunkwise.cli import output

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


def test_emit_records_without_orjson_is_the_json_path(monkeypatch, capsys):
    rows = [{"text": "a\u202eb", "size": 3}, {"text": "c", "size": 1}]
    output.emit_records(rows)
    fast = capsys.readouterr().out
    monkeypatch.setattr(output, "_ORJSON", None)
    output.emit_records(rows)
    slow = capsys.readouterr().out
    assert [json.loads(x) for x in fast.splitlines()] == [json.loads(x) for x in slow.splitlines()] == rows
    assert "\u202e" not in fast and "\\u202e" in fast


def test_a_non_finite_float_is_valid_json():
    assert json.loads(output._record_line({"x": float("inf")}, orjson)) == {"x": None}
