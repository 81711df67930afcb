"""``chunkwise review`` (issue 24 item 8): the chunks in review listed with file, offsets, reasons and
text; chosen ones released (served from then on, and after re-ingests while their text is
unchanged); access review never released this way."""
from __future__ import annotations

import json

import pytest

from chunkwise import api
from chunkwise.cli.main import main

BLOB = "Intro zebra paragraph. " + "x" * 3000 + " tail quokka.\n\nSecond paragraph about llamas.\n"


@pytest.fixture()
def store(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "blob.txt").write_text(BLOB, encoding="utf-8")
    (docs / "secret.md").write_text("# Secret\n\nNo tags here walrus.\n", encoding="utf-8")
    acl = tmp_path / "acl.json"
    acl.write_text(json.dumps({"blob.txt": ["a"]}), encoding="utf-8")
    db = tmp_path / "s.db"

    def ingest():
        assert main(["ingest", str(docs), "--db", str(db), "--embedder", "none", "--size", "64",
                     "--acl-map", str(acl), "--json"]) == 0

    ingest()
    return db, docs, ingest


def run(capsys, *argv):
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr()


def listed(capsys, db):
    code, out = run(capsys, "review", "--db", str(db), "--json")
    assert code == 0
    return json.loads(out.out)


def served(db, chunk):
    """Whether a search for the chunk's own text returns it (a chunk in review never comes back)."""
    result = api.search(db, chunk["text"], ["a"], mode="bm25", k=10)
    return any(p.start_char <= chunk["start_char"] and chunk["end_char"] <= p.end_char
               and p.doc_id == chunk["doc_id"] for p in result.passages)


def test_the_queue_lists_file_offsets_reasons_and_text(store, capsys):
    db, docs, _ = store
    data = listed(capsys, db)
    size = [c for c in data["chunks"] if not c["access"]]
    access = [c for c in data["chunks"] if c["access"]]
    assert size and all(c["reasons"] == ["char_split"] and c["source_uri"] == "blob.txt" for c in size)
    assert all(BLOB[c["start_char"]:c["end_char"]] == c["text"] for c in size)
    assert [(c["source_uri"], c["reasons"]) for c in access] == [("secret.md", ["missing_acl"])]
    assert data["count"] == len(size) + 1 and data["access"] == 1
    code, out = run(capsys, "review", "--db", str(db))
    assert code == 0
    lines = out.out.splitlines()
    assert any("blob.txt" in line and "char_split" in line and f"{size[0]['start_char']}-{size[0]['end_char']}" in line
               for line in lines)
    assert any("secret.md" in line and "missing_acl (access)" in line for line in lines)
    assert f"{len(size) + 1} chunk(s) in review" in out.out


def test_a_release_is_served_and_survives_a_reingest_while_the_text_is_unchanged(store, capsys):
    db, docs, ingest = store
    first = [c for c in listed(capsys, db)["chunks"] if not c["access"]][0]
    assert not served(db, first)
    code, out = run(capsys, "review", "--db", str(db), "--release", first["chunk_id"][:12], "--json")
    assert code == 0 and json.loads(out.out) == {"released": [first["chunk_id"]]}
    assert served(db, first)
    assert first["chunk_id"] not in {c["chunk_id"] for c in listed(capsys, db)["chunks"]}
    record = api.open_store(db).records_of(first["doc_id"])[first["chunk_id"]]
    assert record["quality"] == "ready" and record["released"]["reasons"] == ["char_split"]
    # the document changes elsewhere: the released chunk keeps its id, so its release
    (docs / "blob.txt").write_text(BLOB + "\nA third paragraph about otters.\n", encoding="utf-8")
    ingest()
    assert served(db, first)
    assert first["chunk_id"] not in {c["chunk_id"] for c in listed(capsys, db)["chunks"]}
    # its text changes: a new chunk, reviewed afresh
    changed = BLOB[:first["start_char"]] + "y" + BLOB[first["start_char"] + 1:]
    (docs / "blob.txt").write_text(changed, encoding="utf-8")
    ingest()
    again = [c for c in listed(capsys, db)["chunks"] if not c["access"]]
    assert [c["text"][0] for c in again if c["start_char"] == first["start_char"]] == ["y"]


def test_access_review_is_never_released(store, capsys):
    db, _, _ = store
    chunks = listed(capsys, db)["chunks"]
    access = next(c for c in chunks if c["access"])
    other = next(c for c in chunks if not c["access"])
    code, out = run(capsys, "review", "--db", str(db), "--release", other["chunk_id"], access["chunk_id"])
    assert code == 2 and "access review" in out.err and "missing_acl" in out.err
    assert listed(capsys, db)["count"] == len(chunks)  # all or nothing: the other one was not released either
    code, out = run(capsys, "review", "--db", str(db), "--release", "0123456789abcdef")
    assert code == 2 and "no chunk in review" in out.err
    code, out = run(capsys, "review", "--db", str(db), "--release", "abc")
    assert code == 2 and "too short" in out.err


def test_a_missing_store_is_exit_2_and_creates_nothing(tmp_path, capsys):
    code, out = run(capsys, "review", "--db", str(tmp_path / "none.db"))
    assert code == 2 and not (tmp_path / "none.db").exists()


def test_a_no_op_reingest_still_says_what_is_held(tmp_path, capsys):
    """Each run tells the user what is held (eighth session, helper frontdoor): a document whose access
    tags cannot be read is reported again, with the same error and exit status, and the store's
    verdict (chunks never served: here a document no tag reaches, missing_acl) is stated again;
    nothing held was written or re-embedded."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("---\nacl: [a]\n---\n# Ok\n\nServed walrus.\n", encoding="utf-8")
    (docs / "broken.md").write_text("---\nacl: [\n---\n# Broken\n\nHeld quokka.\n", encoding="utf-8")
    (docs / "untagged.md").write_text("# Untagged\n\nNo tags llama.\n", encoding="utf-8")
    acl = tmp_path / "acl.json"
    acl.write_text(json.dumps({"ok.md": ["a"]}), encoding="utf-8")
    argv = ["ingest", str(docs), "--db", str(tmp_path / "s.db"), "--embedder", "none", "--acl-map", str(acl), "--json"]
    runs = [run(capsys, *argv) for _ in range(2)]
    for code, out in runs:
        stats = json.loads(out.out)
        assert code == 1 and [e["path"] for e in stats["errors"]] == ["broken.md"]
        assert "broken.md: front matter" in out.err and "held for review" in out.err
        assert "2 of its 3 chunks can never be served (missing_acl 1, unreadable_acl 1)" in out.err
    second = json.loads(runs[1][1].out)
    assert (second["added"], second["removed"], second["embedded"], second["metadata_updated"]) == (0, 0, 0, 0)
    assert second["skipped_documents"] == 2 and second["unchanged"] == 3
    # Every document fixed: the run that writes says nothing is held, and so does the no-op after it.
    (docs / "broken.md").write_text("---\nacl: [a]\n---\n# Broken\n\nHeld quokka.\n", encoding="utf-8")
    acl.write_text(json.dumps({"ok.md": ["a"], "untagged.md": ["a"]}), encoding="utf-8")
    for _ in range(2):
        code, out = run(capsys, *argv)
        assert code == 0 and "never be served" not in out.err and "held" not in out.err
