"""Versions and near-duplicates end to end (issue 15 item 2): a two-version policy that differs only
in a number, declared (front matter ``supersedes``) and detected links, re-ingest, deletion, the
permission cases, the CLI and the JSON results — the store tests on SQLite and PostgreSQL."""
import json

import pytest

from chunkwise.cli.main import main
from chunkwise.config import ChunkConfig
from chunkwise.enrich.versions import (VersionInfo, date_key, minhash, order, similarity, version_key)
from chunkwise.extract.text import front_matter
from chunkwise.pipeline import ingest
from chunkwise.retrieve import Retriever
from chunkwise.retrieve.types import Hit
from chunkwise.retrieve.versions import collapse, superseded
from chunkwise.store import open_store

CONFIG = ChunkConfig(strategy="structure", size=80, header="none")
QUESTION = "how many days in advance must annual leave be requested"
# The old version's number too: the old version outranks the new one by its score (the two versions
# otherwise tie, and a tie goes to the smaller chunk id, whichever version that is).
ASKS_OLD = QUESTION + " 14"

SECTIONS = [
    ("Annual leave", "Full-time employees accrue annual leave every month and may carry unused days over into the "
                     "next calendar year when their manager approves the request in writing."),
    ("Notice", "Employees must request annual leave at least {days} days in advance through the HR portal so that "
               "rosters can be planned."),
    ("Sick leave", "Sick leave does not need advance notice; tell your manager on the first morning of absence and "
                   "bring a certificate after three consecutive days."),
    ("Public holidays", "Public holidays follow the office calendar published each December by the facilities "
                        "team for the coming year."),
]


def policy(days: int, updated: str = "", *, acl: str = "staff", version: str = "", supersedes: str = "",
           extra: str = "") -> str:
    """The leave policy; two versions differ only in ``days`` (and their front matter)."""
    front = [f"title: Leave policy", f"acl: {acl}"]
    if updated:
        front.append(f"updated_at: {updated}")
    if version:
        front.append(f"version: {version}")
    if supersedes:
        front.append(f"supersedes: {supersedes}")
    body = "\n\n".join(f"## {h}\n\n{t.format(days=days)}" for h, t in SECTIONS)
    return "---\n" + "\n".join(front) + "\n---\n# Leave policy\n\n" + body + "\n" + extra


def build(root, files, db, **kw):
    root.mkdir(exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return ingest([root], db, CONFIG, embedder=None, acl="staff", **kw)


def links(db):
    with open_store(db, readonly=True) as s:
        return [(link.newer, link.older, link.how) for link in s.version_links(None, None)]


def top(db, groups="staff", k=1, question=QUESTION, **kw):
    with Retriever(db, embedder=None) as r:
        return r.search(question, groups, k=k, mode="bm25", **kw)


# -- pure parts ------------------------------------------------------------------------------------

def test_fingerprints_of_two_versions_are_near_duplicates_and_of_other_texts_not():
    a, b = minhash(policy(14)), minhash(policy(21))
    assert len(a) == 128 and similarity(a, b) >= 0.85
    other = minhash("Rollback the deploy with the release tool, then page the owner of the failing service and "
                    "write the incident note before the end of the shift.")
    assert similarity(a, other) < 0.2 and similarity(a, a) == 1.0
    assert minhash("too short to compare") == ()
    info = VersionInfo("2", ("old.md",), a, ("staff",))
    assert VersionInfo.from_json(info.to_json()) == info and VersionInfo.from_json("") == VersionInfo()


def test_version_labels_sort_naturally_and_dates_are_read_as_utc():
    assert version_key("1.10") > version_key("1.9") > version_key("v1.2") and version_key("2.0") == version_key("2")
    assert version_key("") is None
    assert date_key("2024-03-01") < date_key("2024-03-01T10:00:00Z") and date_key("March") is None
    assert order("2", "2020-01-01", "1", "2024-01-01") == 1  # a version outranks a date
    assert order("", "2024-01-01", "", "2023-06-30") == 1 and order("", "2024-01-01", "1", "2023-06-30") == 1
    assert order("", "", "", "2024-01-01") == 0 and order("3", "", "3", "") == 0


def test_front_matter_supersedes_is_a_name_or_a_list():
    meta, _, warnings = front_matter("---\nsupersedes: old/leave.md\n---\nx", "a.md")
    assert meta["supersedes"] == ("old/leave.md",) and not warnings
    meta, _, _ = front_matter("---\nsupersedes: [a.md, b.md, a.md]\n---\nx", "a.md")
    assert meta["supersedes"] == ("a.md", "b.md")
    meta, _, warnings = front_matter("---\nsupersedes: {a: 1}\n---\nx", "a.md")
    assert "supersedes" not in meta and "supersedes must be" in warnings[0]


def _hit(doc, rank, text, chunk="c"):
    return Hit(f"{doc}-{chunk}", doc, 0, 0, len(text), 1.0 / rank, rank, text, doc)


def test_collapse_keeps_the_latest_copy_at_the_best_rank_and_lists_the_others():
    newer = superseded({"v2": {"v1"}})
    hits = [_hit("v1", 1, "Leave: 14 days."), _hit("v2", 2, "leave 14  DAYS"), _hit("v1", 3, "Notice is 14 days", "n"),
            _hit("v2", 4, "Notice is 21 days", "n"), _hit("other", 5, "Leave: 14 days!")]
    out = collapse(hits, newer)
    assert [(h.doc_id, h.rank, h.chunk_id) for h in out] == [("v2", 1, "v2-c"), ("v2", 2, "v2-n")]
    assert [v.doc_id for v in out[0].also_in] == ["v1", "other"] and out[0].score == 1.0
    every = collapse(hits, newer, latest_only=False)
    assert [(h.doc_id, h.superseded_by) for h in every] == [("v2", ()), ("v1", ("v2",)), ("v2", ())]


def test_a_cycle_of_declared_links_supersedes_nobody_in_it():
    assert superseded({"a": {"b"}, "b": {"a"}}) == {}
    assert superseded({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == {"a": ("c",), "b": ("c",)}
    assert superseded({"v3": {"v2"}, "v2": {"v1"}}) == {"v2": ("v3",), "v1": ("v2", "v3")}


# -- a store ---------------------------------------------------------------------------------------

def test_detected_pair_serves_the_latest_version_at_k1(tmp_path, db_location):
    db = db_location
    build(tmp_path / "docs", {"leave-2023.md": policy(14, "2023-01-10"), "leave-2024.md": policy(21, "2024-03-01")}, db)
    assert links(db) == [("leave-2024.md", "leave-2023.md", "detected")]
    every = top(db, k=2, versions="all", question=ASKS_OLD)  # what search did before: the old version first
    assert [p.doc_id for p in every.passages] == ["leave-2023.md", "leave-2024.md"]
    assert every.passages[0].superseded_by == ("leave-2024.md",) and "14 days" in every.passages[0].text
    [p] = top(db, question=ASKS_OLD).passages
    assert p.doc_id == "leave-2024.md" and "21 days" in p.text and p.updated_at == "2024-03-01"
    assert p.superseded_by == ()
    # A passage both versions hold word for word comes back once, from the latest, listing the other.
    with Retriever(db, embedder=None) as r:
        res = r.search("sick leave certificate after three consecutive days", "staff", k=3, mode="bm25")
    sick = [q for q in res.passages if "certificate" in q.text]
    assert len(sick) == 1 and sick[0].doc_id == "leave-2024.md"
    assert [v.doc_id for v in sick[0].versions] == ["leave-2024.md", "leave-2023.md"]
    assert all(q.doc_id == "leave-2024.md" for q in res.passages)


def test_declared_links_by_path_and_id_and_version_labels(tmp_path, db_location):
    db = db_location
    files = {"old/leave.md": policy(14, version="1.9"),
             "leave.md": policy(21, version="1.10", supersedes="old/leave.md"),
             "memo.md": "---\nacl: staff\nversion: 3\nsupersedes: [leave.md, nowhere.md]\n---\n# Memo\n\nLeave "
                        "requests now go to the people team; the notice period is unchanged.\n"}
    (tmp_path / "docs" / "old").mkdir(parents=True)
    stats = build(tmp_path / "docs", files, db)
    assert sorted(links(db)) == [("leave.md", "old/leave.md", "declared"), ("memo.md", "leave.md", "declared")]
    assert any("nowhere.md" in w and "no document" in w for w in stats.warnings)
    res = top(db, k=3)
    assert [p.doc_id for p in res.passages] == ["memo.md"]  # memo supersedes leave.md, which supersedes old/
    every = top(db, k=3, versions="all")
    assert {p.doc_id: p.version for p in every.passages} == {"memo.md": "3", "leave.md": "1.10", "old/leave.md": "1.9"}
    assert {p.doc_id: p.superseded_by for p in every.passages}["old/leave.md"] == ("leave.md", "memo.md")
    from chunkwise.quality import manifest

    m = manifest(db)
    assert {d["doc_id"]: d["version"] for d in m["documents"]} == {"leave.md": "1.10", "memo.md": "3",
                                                                   "old/leave.md": "1.9"}
    assert [(x["newer"], x["older"], x["how"]) for x in m["version_links"]] == sorted(links(db))


def test_manifest_lists_versions_and_links(tmp_path, db_location, capsys):
    db = db_location
    build(tmp_path / "docs", {"v1.md": policy(14, version="1"), "v2.md": policy(21, version="2")}, db)
    assert main(["manifest", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "v2.md supersedes v1.md (detected, similarity 0." in out and "2 documents" in out and "1 version links" in out


def test_links_are_rederived_on_reingest_edit_and_deletion(tmp_path, db_location):
    db, root = db_location, tmp_path / "docs"
    build(root, {"a.md": policy(14, "2023-01-10"), "b.md": policy(21, "2024-03-01"),
                 "c.md": policy(28, "2025-02-01")}, db)
    first = links(db)
    assert first == [("b.md", "a.md", "detected"), ("c.md", "a.md", "detected"), ("c.md", "b.md", "detected")]
    stats = ingest([root], db, CONFIG, embedder=None, acl="staff")
    assert links(db) == first and stats.added == stats.removed == stats.metadata_updated == 0  # idempotent
    (root / "c.md").unlink()
    ingest([root], db, CONFIG, embedder=None, acl="staff")
    assert links(db) == [("b.md", "a.md", "detected")]
    assert top(db).passages[0].doc_id == "b.md"
    (root / "b.md").write_text("---\nacl: staff\nupdated_at: 2024-03-01\n---\n# Travel\n\nBook trains through the "
                               "travel desk at least a week before you leave and keep every receipt.\n", "utf-8")
    ingest([root], db, CONFIG, embedder=None, acl="staff")
    assert links(db) == []  # no longer a near-duplicate
    assert top(db).passages[0].doc_id == "a.md"
    (root / "b.md").write_text(policy(21), "utf-8")  # same text again but no date: a duplicate, not a version
    ingest([root], db, CONFIG, embedder=None, acl="staff")
    assert links(db) == []


def test_a_newer_version_the_caller_may_not_see_never_hides_the_older_one(tmp_path, db_location):
    db = db_location
    build(tmp_path / "docs", {"leave-2023.md": policy(14, "2023-01-10"),
                              "leave-2024.md": policy(21, "2024-03-01", acl="hr")}, db)
    assert links(db) == [("leave-2024.md", "leave-2023.md", "detected")]
    staff = top(db, "staff", k=3)
    assert staff.passages[0].doc_id == "leave-2023.md" and "14 days" in staff.passages[0].text
    blob = json.dumps(staff.to_dict())
    assert "leave-2024" not in blob and "21 days" not in blob  # no trace of the hidden version
    assert json.dumps(top(db, "staff", k=3, versions="all").to_dict()) == blob
    both = top(db, "staff,hr", k=3)
    assert both.passages[0].doc_id == "leave-2024.md" and all(p.doc_id == "leave-2024.md" for p in both.passages)
    assert [p.doc_id for p in top(db, "hr", k=3).passages][0] == "leave-2024.md"


def test_a_restricted_section_keeps_a_document_out_of_detection(tmp_path, db_location):
    db = db_location
    secret = "\n## Salaries\n\n<!-- acl: hr -->\n\nBands are reviewed every April by the pay committee.\n"
    build(tmp_path / "docs", {"leave-2023.md": policy(14, "2023-01-10"),
                              "leave-2024.md": policy(21, "2024-03-01", extra=secret)}, db)
    assert links(db) == []  # its fingerprint would cover text a staff reader cannot see
    with open_store(db, readonly=True) as s:
        info = {d.doc_id: VersionInfo.from_json(d.versioning) for d in s.documents()}
    assert info["leave-2024.md"].minhash == () and len(info["leave-2023.md"].minhash) == 128


def test_cli_table_and_json_carry_the_version(tmp_path, db_location, capsys):
    db = db_location
    build(tmp_path / "docs", {"v1.md": policy(14, version="1"), "v2.md": policy(21, version="2")}, db)
    base = ["search", ASKS_OLD, "--db", str(db), "--groups", "staff", "--mode", "bm25", "--k", "1"]
    assert main(base + ["--json"]) == 0
    [result] = json.loads(capsys.readouterr().out)["results"]
    assert (result["doc_id"], result["version"], result["superseded_by"]) == ("v2.md", "2", [])
    assert result["versions"][0]["doc_id"] == "v2.md"
    assert main(base + ["--json", "--all-versions", "--k", "2"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert [(r["doc_id"], r["superseded_by"]) for r in rows] == [("v1.md", ["v2.md"]), ("v2.md", [])]
    assert main(base + ["--all-versions", "--k", "2"]) == 0
    out = capsys.readouterr().out
    assert "v1.md  version 1" in out and "superseded by: v2.md" in out


def test_unknown_versions_choice_is_a_config_error(tmp_path):
    from chunkwise.errors import ConfigError

    db = tmp_path / "s.db"
    build(tmp_path / "docs", {"v1.md": policy(14)}, db)
    with pytest.raises(ConfigError, match="versions"):
        top(db, versions="newest")
