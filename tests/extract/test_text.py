"""Markdown / plain text extraction: decoding, empty files, front matter."""
from __future__ import annotations

import codecs

import pytest

from chunkwise.access import AccessTags

from chunkwise.errors import ConfigError, InputError
from chunkwise.extract.text import decode, extract, front_matter

MD, TXT = "text/markdown", "text/plain"


def test_utf8_text_is_the_original():
    data = "Grüße, 世界\r\nline two\n".encode()
    doc = extract(data, "a.txt", TXT)
    assert doc.text == data.decode() and doc.doc_id == doc.source == "a.txt"
    assert doc.blocks == () and doc.body_start == 0 and doc.warnings == ()
    assert len(doc.sha256) == 64


def test_utf8_bom_stripped_and_recorded():
    doc = extract(codecs.BOM_UTF8 + b"# Hello\n", "a.md", MD)
    assert doc.text == "# Hello\n"  # offsets index the text without the BOM
    assert len(doc.warnings) == 1 and "byte order mark removed" in doc.warnings[0]


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_with_bom(codec):
    text = "Ünïcödé text — 中文\n"
    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}.get(codec, b"")
    doc = extract(bom + text.encode(codec), "a.txt", TXT)
    assert doc.text == text and "UTF-" in doc.warnings[0]


def test_invalid_utf8_names_byte_and_line():
    data = b"first line\nsecond caf\xe9 line\n"
    with pytest.raises(InputError) as err:
        extract(data, "notes.txt", TXT)
    msg = str(err.value)
    assert msg.startswith("notes.txt: invalid UTF-8 at byte 21 (line 2: 0xe9")
    assert "re-save the file as UTF-8" in msg
    assert err.value.__cause__ is None and err.value.__suppress_context__  # no decode traceback attached


def test_truncated_utf16_is_a_clear_error():
    with pytest.raises(InputError, match="invalid UTF-16 at byte"):
        decode(codecs.BOM_UTF16_LE + "ab".encode("utf-16-le") + b"\x00", "x.txt")


@pytest.mark.parametrize("data", [b"", b"   \n\t\r\n  ", codecs.BOM_UTF8, "\u200b\u00a0\n".encode()])
def test_empty_and_whitespace_only_files_skipped(data):
    with pytest.raises(InputError, match=r"^a\.txt is empty; skipped$"):
        extract(data, "a.txt", TXT)


def test_wrong_media_type_is_a_config_error():
    with pytest.raises(ConfigError, match="text/html"):
        extract(b"<p>x</p>", "a.html", "text/html")


FM = b"""---
title: Leave policy
id: HR-0012
acl: hr-team
updated_at: 2024-05-01
version: 1.10
language: en
author: Ana
tags: [ignored]
---
# Leave

Body text.
"""


def test_front_matter_metadata_and_body_start():
    doc = extract(FM, "policies/leave.md", MD)
    assert doc.metadata == {
        "title": "Leave policy", "id": "HR-0012", "acl": AccessTags(("hr-team",)), "updated_at": "2024-05-01",
        "version": "1.10", "language": "en", "author": "Ana",
    }
    assert doc.doc_id == "HR-0012" and doc.source == "policies/leave.md" and doc.title == "Leave policy"
    assert doc.text == FM.decode() and doc.text[doc.body_start :] == "# Leave\n\nBody text.\n"


def test_front_matter_acl_list_and_scalars_kept_as_written():
    doc = extract(b"---\nid: 0012\nacl: [hr, 'finance']\ntitle: yes\n---\nx\n", "a.md", MD)
    assert doc.metadata == {"id": "0012", "acl": AccessTags(("finance", "hr")), "title": "yes"}


def test_malformed_yaml_warns_and_still_excludes_block():
    doc = extract(b"---\ntitle: [unclosed\n---\nBody\n", "a.md", MD)
    assert doc.text[doc.body_start :] == "Body\n"
    assert any("not valid YAML" in w for w in doc.warnings)
    assert doc.metadata == {}  # declares no access: nothing to fail closed on
    # Fail closed: a block that declares access and cannot be read never falls back to a default.
    doc = extract(b"---\ntitle: [unclosed\nacl: hr\n---\nBody\n", "a.md", MD)
    assert doc.text[doc.body_start :] == "Body\n"
    assert set(doc.metadata) == {"acl_error"} and "not valid YAML at line 3" in doc.metadata["acl_error"]


@pytest.mark.parametrize(
    "data, warn",
    [(b"---\n- a\n- b\n---\nBody\n", "not a key: value mapping"),
     (b"---\nacl: {a: 1}\n---\nBody\n", "acl must be"),
     (b"---\ntitle: [a, b]\n---\nBody\n", "title must be a single value")],
)
def test_front_matter_of_the_wrong_shape_warns(data, warn):
    doc = extract(data, "a.md", MD)
    assert doc.text[doc.body_start :] == "Body\n" and any(warn in w for w in doc.warnings)


def test_front_matter_fences():
    assert front_matter("---\ntitle: A\n...\nBody", "a.md")[:2] == ({"title": "A"}, 17)
    assert front_matter("---\r\ntitle: A\r\n---\r\nBody", "a.md")[1] == len("---\r\ntitle: A\r\n---\r\n")
    assert front_matter("---\ntitle: A\n---", "a.md")[1] == len("---\ntitle: A\n---")
    assert front_matter("---\ntitle: A\nno closing fence\n", "a.md") == ({}, 0, [])
    assert front_matter("text\n---\ntitle: A\n---\n", "a.md") == ({}, 0, [])
    assert front_matter("----\ntitle: A\n---\n-----\nBody", "a.md")[1] == len("----\ntitle: A\n---\n-----\n")


def test_front_matter_only_counts_as_empty():
    with pytest.raises(InputError, match="empty after its front matter; skipped"):
        extract(b"---\ntitle: A\n---\n\n", "a.md", MD)


def test_plain_text_front_matter_is_just_text():
    doc = extract(FM.replace(b"acl: hr-team\n", b""), "a.txt", TXT)
    assert doc.metadata == {} and doc.body_start == 0 and doc.doc_id == "a.txt"
    # ... but an access declaration there is not silently ignored: it fails closed
    doc = extract(FM, "a.txt", TXT)
    assert set(doc.metadata) == {"acl_error"} and "read only in Markdown" in doc.metadata["acl_error"]


def test_bom_then_front_matter():
    doc = extract(codecs.BOM_UTF8 + FM, "a.md", MD)
    assert doc.metadata["id"] == "HR-0012" and doc.text[doc.body_start :].startswith("# Leave")


@pytest.mark.parametrize(
    "text",
    ["---\ntitle: A\n---\nBody\n", "---\na: 1\n...\nBody\n", "---\r\na: 1\r\n---\r\nBody", "----\na\n---\n----\nB\n",
     "---\na: 1\n  ---\nB\n"],
)
def test_body_start_agrees_with_markdown_it_front_matter_plugin(text):
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    tokens = MarkdownIt("commonmark").use(front_matter_plugin).parse(text)
    fm = [t for t in tokens if t.type == "front_matter"]
    lines = text.splitlines(keepends=True)
    expected = sum(len(line) for line in lines[: fm[0].map[1]]) if fm else 0
    assert front_matter(text, "a.md")[1] == expected
