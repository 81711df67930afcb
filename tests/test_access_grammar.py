"""The access declaration grammars (issue 25, items 3 and 4): front matter in every spelling a
person writes is read; a declaration that cannot be read fails closed; a near-miss marker fails
closed with a message; prose that merely says "ACL:" is text."""
import codecs
import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chunkwise.access import AccessTagError, AccessTags
from chunkwise.config import ChunkConfig
from chunkwise.enrich.acl import access_problems, marker_tags, plan_access
from chunkwise.extract.audit import audit_document
from chunkwise.extract.text import extract, front_matter
from chunkwise.pipeline import ingest

CONFIG = ChunkConfig(strategy="structure", size=128)
SHARED = next((p / "shared" / "data" for p in Path(__file__).resolve().parents if (p / "shared" / "data").is_dir()),
              Path("/nonexistent"))  # ../shared/data of the checkout (a worktree may sit deeper)
BODY = "# Pay\n\nThe budget for pay.\n"

READ = {  # spelling -> the tags it must give
    "space_fence.md": " ---\nacl: hr\n ---\n" + BODY,
    "upper_key.md": "---\nACL: hr\n---\n" + BODY,
    "spaced_key.md": "---\n  Acl  :  hr, finance\n---\n" + BODY,
    "quoted_key.md": '---\n"acl": [hr]\n---\n' + BODY,
    "toml.md": '+++\nacl = ["hr", "finance"]\ntitle = "Pay"\n+++\n' + BODY,
    "toml_upper.md": '+++\nACL = "hr"\n+++\n' + BODY,
    "blank_first.md": "\n\n---\nacl: hr\n---\n" + BODY,
    "blank_space_first.md": "  \n\t\n---\nacl: hr\n---\n" + BODY,
}


def _records(db):
    rows = sqlite3.connect(db).execute("SELECT doc_id, record, text FROM chunks")
    return [(d, {**json.loads(r), "text": t}) for d, r, t in rows]


def test_front_matter_spellings_are_read_and_stay_out_of_the_chunks(tmp_path):
    root = tmp_path / "kb"
    root.mkdir()
    for name, text in READ.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "bom.md").write_bytes(codecs.BOM_UTF8 + b"\n---\nacl: hr\n---\n" + BODY.encode())
    stats = ingest([root], tmp_path / "s.db", CONFIG, acl="staff")
    assert not stats.errors
    seen = set()
    for doc, rec in _records(tmp_path / "s.db"):
        seen.add(doc)
        want = ["finance", "hr"] if doc in ("spaced_key.md", "toml.md") else ["hr"]
        assert rec["acl"] == want and rec["quality"] == "ready", (doc, rec["acl"])
        assert "acl" not in rec["text"].lower() and "+++" not in rec["text"] and "---" not in rec["text"], doc
    assert seen == set(READ) | {"bom.md"}


TEXT = {  # not declarations: served under the default, their words kept as text
    "rule_then_prose.md": "---\n\nThe ACL: budget notes follow.\n",
    "rule_prose_rule.md": "---\nThe budget is set yearly.\n---\n\nMore text.\n",
    "sentence.md": "# Pay\n\nACL: the budget is open to all staff.\n",
    "blank_rule_prose.md": "\n---\nSee the budget: it is public.\n---\n\nMore.\n",
    "toml_prose.md": "+++\nThe budget.\n+++\n",
    "rule_blank_acl.md": "---\n\nACL: the budget notes below are for everyone.\n",  # the block ends at the blank line
}


def test_a_rule_followed_by_prose_and_acl_in_a_sentence_are_text(tmp_path):
    root = tmp_path / "kb"
    root.mkdir()
    for name, text in TEXT.items():
        (root / name).write_text(text, encoding="utf-8")
    stats = ingest([root], tmp_path / "s.db", CONFIG, acl="staff")
    assert not stats.errors
    docs = {}
    for doc, rec in _records(tmp_path / "s.db"):
        assert rec["acl"] == ["staff"] and rec["quality"] == "ready", doc
        docs.setdefault(doc, []).append(rec["text"])
    assert set(docs) == set(TEXT)
    assert any("ACL: the budget" in t for t in docs["sentence.md"])


def test_audit_reports_an_unreadable_declaration_as_a_failure():
    doc = extract(b"---\nacl = hr\n---\n# Pay\n\nThe budget.\n", "a.md", "text/markdown")
    row = audit_document(doc)
    assert row.status == "error" and "access tags cannot be read" in row.error
    doc = extract(b"# Pay\n\n<!-- acl hr -->\n\nThe budget.\n", "b.md", "text/markdown")
    row = audit_document(doc)
    assert row.status == "error" and "malformed access marker" in row.error
    assert audit_document(extract(b"# Pay\n\nThe budget.\n", "c.md", "text/markdown")).status == "ok"


@pytest.mark.parametrize("bad", ["finance -", "-", "a--b", "finance --", "- x", "hr / -"])
def test_the_tag_type_rejects_malformed_values(bad):
    with pytest.raises(AccessTagError):
        AccessTags.parse(bad)
    with pytest.raises(AccessTagError):
        AccessTags.parse([bad])


@pytest.mark.parametrize("good", ["c++", "#finance", "@team", "hr-", "a-b", "hr managers", "x.y/z"])
def test_the_tag_type_keeps_tags_with_punctuation_around_a_word(good):
    assert AccessTags.parse(good).tags == (good,)


def test_strict_marker_grammar():
    assert marker_tags("<!-- acl: hr, finance -->") == "hr, finance"
    assert marker_tags("<!--acl:hr-->") == "hr"
    assert marker_tags("  <!-- ACL : hr -->  ") == "hr"
    for bad in ("<!--- acl: hr -->", "<!-- acl hr -->", "<!-- acl： hr -->", "<!-- acl: hr --->",
                "<!-- acl: a--b -->", "<!-- acl: hr --> x", "<!--\nacl: hr\n-->", "<!-- note acl: hr -->"):
        assert marker_tags(bad) is None, bad


@pytest.mark.skipif(not SHARED.is_dir(), reason="no shared data")
def test_no_file_of_the_shared_data_is_refused_by_the_access_rules():
    """The grammars must not catch ordinary documents: every Markdown and text file of the reference
    corpora is read without an access problem."""
    from chunkwise.errors import InputError

    kinds = {".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain", ".rst": "text/x-rst",
             ".org": "text/x-org", ".itxt": "text/plain"}
    checked = 0
    for path in sorted(SHARED.rglob("*")):
        media = kinds.get(path.suffix.lower())
        if media is None or not path.is_file():
            continue
        try:
            doc = extract(path.read_bytes(), str(path.relative_to(SHARED)), media)
        except InputError:
            continue  # undecodable or empty: not this rule's business
        assert access_problems(doc) == (), path
        checked += 1
    assert checked > 200


# -- properties: every spelling of a declaration is read exactly, or refused; never the default ------
KEY = st.sampled_from(["acl", "ACL", "Acl", "aCl", "ａｃｌ"])
TAGS = st.lists(st.sampled_from(["hr", "finance", "sre team", "c++", "财务"]), min_size=1, max_size=3, unique=True)


@st.composite
def declarations(draw):
    """A front matter block in a random spelling, and whether the grammar reads it."""
    tags = draw(TAGS)
    key = draw(KEY)
    toml = draw(st.booleans())
    lead = draw(st.sampled_from(["", "\n", "  \n\n", " ", "\t", "\ufeff"]))
    indent = draw(st.sampled_from(["", " ", "  "]))
    fence = "+++" if toml else draw(st.sampled_from(["---", "----"]))
    sep = draw(st.sampled_from([":", " :", "=", " = ", "：", ""]))
    if draw(st.booleans()):
        value = "[" + ", ".join(json.dumps(t, ensure_ascii=False) for t in tags) + "]"
    else:
        value = json.dumps(", ".join(tags), ensure_ascii=False)
    closed = draw(st.booleans())
    extra = draw(st.sampled_from(["", "title: Pay\n", 'title = "Pay"\n']))
    block = f"{extra}{key}{sep} {value}\n" if sep else f"{extra}{key} {value}\n"
    text = f"{lead}{indent}{fence}\n{block}" + (f"{indent}{fence}\n" if closed else "\n") + BODY
    sep_ok = sep.strip() == ("=" if toml else ":")
    extra_ok = not extra or (("=" in extra) == toml)
    key_ok = not (toml and key == "ａｃｌ")  # TOML bare keys are ASCII; YAML keys are read under NFKC
    readable = closed and sep_ok and extra_ok and key_ok
    return text, AccessTags.parse(tags), readable


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(declarations())
@example(("---\nACL: hr\n---\n" + BODY, AccessTags(("hr",)), True))
@example(("+++\nacl: hr\n+++\n" + BODY, AccessTags(("hr",)), False))
@example(("---\nacl：hr\n---\n" + BODY, AccessTags(("hr",)), False))
def test_a_declaration_is_read_exactly_or_refused_never_defaulted(case):
    text, tags, readable = case
    doc = extract(text.encode(), "a.md", "text/markdown")
    plan = plan_access(doc, AccessTags.parse("staff"))
    if plan.problems:
        assert not readable, (text, plan.problems)
        assert "acl" not in doc.metadata
        return
    assert readable, (text, plan.default)
    assert plan.default == tags, text
    assert "acl" not in doc.text[doc.body_start :].lower()


NEAR = st.sampled_from([
    "<!-- acl: {t} -->", "<!--acl:{t}-->", "<!-- ACL : {t} -->",  # well formed
    "<!--- acl: {t} -->", "<!-- acl {t} -->", "<!-- acl： {t} -->", "<!-- acl: {t} --->", "<!-- acl = {t} -->",
    "<!--\nacl: {t}\n-->", "<!-- ａｃｌ: {t} -->", "<!-- acl: {t} -- -->", "<!-- -acl: {t} -->",
])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(marker=NEAR, tags=TAGS, blank=st.booleans())
@example(marker="<!-- acl: {t} --->", tags=["finance"], blank=False)
def test_a_marker_is_honoured_exactly_or_the_document_fails_closed(marker, tags, blank):
    raw = marker.format(t=", ".join(tags))
    text = f"# Intro\n\nOpen words.\n\n## Pay\n{chr(10) if blank else ''}{raw}\n\nSecret words.\n"
    doc = extract(text.encode(), "a.md", "text/markdown")
    plan = plan_access(doc, AccessTags.parse("staff"))
    secret = text.index("Secret")
    well_formed = marker_tags(raw) is not None  # a blank line before it is still "right under"
    if well_formed:
        assert not plan.problems
        assert plan.tags_for(secret, secret + 6) == AccessTags.parse(tags)
    else:
        assert plan.problems and not plan.tags_for(secret, secret + 6)


def test_front_matter_body_start_of_every_spelling():
    assert front_matter(" ---\nacl: hr\n ---\nB", "a.md")[1] == len(" ---\nacl: hr\n ---\n")
    assert front_matter("\n\n+++\ntitle = 'x'\n+++\nB", "a.md")[:2] == ({"title": "x"}, len("\n\n+++\ntitle = 'x'\n+++\n"))
    assert front_matter("\n---\ntitle: x\n---\nB", "a.md") == ({}, 0, [])  # after a blank line: text unless acl
