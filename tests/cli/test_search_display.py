"""``chunkwise search`` points at the hit: the hit chunk's heading path and text come first, the rest
of the passage is context around it, and the query's words are marked by the search analyzer
(stemmed forms match, stopwords never)."""
from __future__ import annotations

import json

import pytest

from chunkwise.cli.main import main
from chunkwise.highlight import STOPWORDS

RUNBOOK = """# Payments runbook

This runbook covers the payments service: deploys, rollbacks, paging and the usual questions.

## Deploys

Deploys go out through the release pipeline every weekday morning. The pipeline runs the smoke tests,
then shifts traffic in three steps of ten, fifty and one hundred percent. Watch the error-rate panel
while traffic shifts; the pipeline stops by itself when the error rate doubles.

## FAQ

### Who can approve a hotfix?

Any staff engineer of the payments team can approve a hotfix outside the release window.

### How do I rotate the webhook signing secret?

Run `payctl secrets rotate --webhook` from the bastion; the old secret stays valid for 24 hours.

### Where are the dashboards?

The dashboards live in the observability folder named payments-prod.
"""
QUESTION = "How do I rotate the webhook signing secret?"
FAQ = "Payments runbook > FAQ > How do I rotate the webhook signing secret?"
ANSWER = "Run `payctl secrets rotate --webhook` from the bastion"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("display")
    (root / "docs").mkdir()
    (root / "docs" / "runbook.md").write_text(RUNBOOK, encoding="utf-8")
    db = root / "store.db"
    assert main(["ingest", str(root / "docs"), "--db", str(db), "--embedder", "none", "--size", "40",
                 "--acl", "sre"]) == 0
    return db


def search(store, capsys, *flags):
    capsys.readouterr()
    assert main(["search", QUESTION, "--db", str(store), "--groups", "sre", "--mode", "bm25", "--k", "2",
                 *flags]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("expand", ["none", "neighbours"])
def test_a_faq_answer_is_shown_under_its_own_heading_with_the_answer(store, capsys, expand):
    out = search(store, capsys, "--expand", expand, "--color", "never").splitlines()
    first = next(i for i, line in enumerate(out) if line.startswith("[1] "))
    assert "runbook.md" in out[first]
    assert out[first + 1].strip() == FAQ  # the hit's heading, not the passage's first (Who can approve...)
    assert ANSWER in out[first + 2]
    assert "\x1b" not in "\n".join(out)


def test_expansion_is_shown_as_context_around_the_hit(store, capsys):
    out = search(store, capsys, "--expand", "neighbours", "--color", "never")
    block = out.split("[1] ", 1)[1].split("\n[2] ", 1)[0]
    assert "context (expanded from" in block
    before = next(line for line in block.splitlines() if line.strip().startswith("before:"))
    after = next(line for line in block.splitlines() if line.strip().startswith("after:"))
    assert "approve a hotfix" in before and "dashboards" in after
    assert block.index(ANSWER) < block.index("before:")  # the hit first, context after it


def test_json_leads_with_the_hit_and_its_context(store, capsys):
    data = json.loads(search(store, capsys, "--expand", "neighbours", "--json"))
    r = data["results"][0]
    assert list(r)[:7] == ["rank", "document_rank", "doc_id", "source_uri", "hit", "context", "marks"]
    assert " > ".join(r["hit"]["heading_path"]) == FAQ and ANSWER in r["hit"]["text"]
    assert r["context"]["before"] + r["hit"]["text"] + r["context"]["after"] == r["text"]
    assert "approve a hotfix" in r["context"]["before"]
    assert data["terms"] == ["rotat", "webhook", "sign", "secret"]  # how, do, I, the: stopwords
    marked = [r["hit"]["text"][s:e] for s, e in r["marks"]["hit"]]
    assert {w.lower() for w in marked} == {"rotate", "webhook", "signing", "secret", "secrets"}
    for side in ("before", "after"):
        words = [r["context"][side][s:e].lower() for s, e in r["marks"][side]]
        assert not set(words) & STOPWORDS


def test_color_marks_the_query_words_and_never_a_stopword(store, capsys):
    out = search(store, capsys, "--color", "always")
    hit_line = out.split("[1] ", 1)[1].splitlines()[2]
    assert "\x1b[1mrotate\x1b[0m" in hit_line and "\x1b[1msecrets\x1b[0m" in hit_line  # a stemmed form
    assert "\x1b[1mthe\x1b[0m" not in hit_line.lower() and "\x1b[1mhow\x1b[0m" not in hit_line.lower()
