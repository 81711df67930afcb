"""The route that made each chunk (``auto`` -> which strategy and content type) is in its record and
in ``chunkwise manifest``; recording it changed no chunk id, and a store written before routes
existed is refreshed in place on re-ingest (nothing added, removed or re-embedded)."""
import json
import shutil
import sys

import pytest

from backends import query
from chunkwise.pipeline.executors import InlineExecutor
from chunkwise import api
from chunkwise.cli.main import main
from chunkwise.enrich import records as records_mod


@pytest.fixture()
def corpus(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    for name in ("deploy-faq.txt", "access-policy.md", "incident-runbook.md"):
        shutil.copy(f"examples/{name}", root / name)
    (root / "tool.py").write_text("def rollback(deploy_id):\n    \"\"\"Undo one deploy.\"\"\"\n    return deploy_id\n",
                                  encoding="utf-8")
    return root


def _records(db):
    return {cid: (doc, json.loads(rec)) for cid, doc, rec in query(db, "SELECT chunk_id, doc_id, record FROM chunks")}


def test_records_and_manifest_say_the_route(corpus, db_location, capsys):
    db = db_location
    api.ingest([corpus], db, api.ChunkConfig(strategy="auto", size=192), embedder="hashing", acl=["staff"])
    routes = {}
    for doc, rec in _records(db).values():
        routes.setdefault(doc, set()).add(rec["route"])
    assert "auto:transcript" in routes["deploy-faq.txt"]
    assert "auto:table" in routes["access-policy"]
    assert "auto:steps" in routes["incident-runbook"]
    assert routes["tool.py"] == {"auto>code:code"}  # auto handed the code file to the code strategy
    assert main(["manifest", "--db", db, "--json"]) == 0
    m = json.loads(capsys.readouterr().out)
    by_doc = {d["doc_id"]: d["routes"] for d in m["documents"]}
    assert set(by_doc["tool.py"]) == {"auto>code:code"} and sum(by_doc["tool.py"].values()) == 1
    assert sum(m["routes"].values()) == m["chunks"] and m["routes"]["auto:transcript"] >= 1
    assert main(["manifest", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "routes" in out and "auto>code:code 1" in out and "auto:transcript" in out


def test_an_old_store_is_refreshed_in_place(corpus, db_location, monkeypatch, capsys):
    """Records written by a chunkwise without routes (format 1) get them on re-ingest: same chunk
    ids, same vectors, every kept record updated in place; a second run is a no-op."""
    db = db_location
    config = api.ChunkConfig(strategy="auto", size=192)
    real = records_mod.build_records
    with monkeypatch.context() as m:
        m.setattr(sys.modules["chunkwise.pipeline.ingest"], "RECORD_FORMAT", 1)
        m.setattr("chunkwise.pipeline.prepare.build_records", lambda *a, strategy="", **k: real(*a, **k))
        # in this process: the patches must reach the preparer (contained workers would not see them)
        first = api.ingest([corpus], db, config, embedder="hashing", acl=["staff"], executor=InlineExecutor())
    before = _records(db)
    assert first.added == len(before) > 0 and all(rec["route"] == "" for _, rec in before.values())
    assert main(["manifest", "--db", db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["routes"] == {"unrecorded": len(before)}
    again = api.ingest([corpus], db, config, embedder="hashing", acl=["staff"])
    after = _records(db)
    assert set(after) == set(before)  # the route is no part of a chunk id
    assert (again.added, again.removed, again.embedded, again.metadata_updated) == (0, 0, 0, len(before))
    assert all(rec["route"] for _, rec in after.values())
    assert {cid: {k: v for k, v in rec.items() if k not in ("route", "ingested_at")} for cid, (_, rec) in after.items()} \
        == {cid: {k: v for k, v in rec.items() if k not in ("route", "ingested_at")} for cid, (_, rec) in before.items()}
    third = api.ingest([corpus], db, config, embedder="hashing", acl=["staff"])
    assert third.skipped_documents == 4 and not (third.added or third.metadata_updated)
