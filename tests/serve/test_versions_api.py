"""serve's /search over a store holding two versions of a policy: the latest by default, every
version with ``versions: all``, the version in each result, and nothing of a version the caller's
groups may not see; the same JSON as ``chunkwise search --json``."""
from __future__ import annotations

import json

import pytest

from .serving import Server

from chunkwise.cli.main import main

POLICY = ("---\nacl: {acl}\nupdated_at: {date}\nversion: '{version}'\n---\n# Leave policy\n\n## Notice\n\nEmployees "
          "must request annual leave at least {days} days in advance through the HR portal so that rosters can be "
          "planned by the team leads.\n\n## Sick leave\n\nSick leave needs no advance notice; bring a certificate "
          "after three consecutive days of absence.\n")


@pytest.fixture(scope="module")
def versions_server(tmp_path_factory):
    from chunkwise.config import ChunkConfig
    from chunkwise.pipeline import ingest

    root = tmp_path_factory.mktemp("versions-store")
    docs = root / "docs"
    docs.mkdir()
    (docs / "leave-v1.md").write_text(POLICY.format(acl="staff", date="2023-01-10", version="1", days=14), "utf-8")
    (docs / "leave-v2.md").write_text(POLICY.format(acl="hr", date="2024-03-01", version="2", days=21), "utf-8")
    db = root / "store.db"
    ingest([docs], db, ChunkConfig(strategy="structure", size=64), embedder=None, acl="staff")
    server = Server(db, "--trust-groups-header", log=root / "serve.log")
    yield server, db
    server.stop()


def test_search_serves_the_latest_version_it_may_see_with_its_version(versions_server, capsys):
    server, db = versions_server
    q = {"query": "how many days in advance to request annual leave", "k": 1, "mode": "bm25"}
    with server.client(**{"X-Chunkwise-Groups": "staff,hr"}) as c:
        latest = c.post("/search", json=q).json()
        every = c.post("/search", json={**q, "k": 2, "versions": "all"}).json()
        assert c.post("/search", json={**q, "versions": "newest"}).status_code == 400
    [r] = latest["results"]
    assert (r["doc_id"], r["version"], r["updated_at"], r["superseded_by"]) == ("leave-v2.md", "2", "2024-03-01", [])
    assert "21 days" in r["text"] and r["versions"][0]["doc_id"] == "leave-v2.md"
    assert {x["doc_id"]: x["superseded_by"] for x in every["results"]} == {"leave-v1.md": ["leave-v2.md"],
                                                                            "leave-v2.md": []}
    capsys.readouterr()
    assert main(["search", q["query"], "--db", str(db), "--groups", "staff,hr", "--json", "--k", "1",
                 "--mode", "bm25"]) == 0
    assert json.loads(capsys.readouterr().out) == latest
    with server.client(**{"X-Chunkwise-Groups": "staff"}) as c:
        staff = c.post("/search", json={**q, "versions": "all", "k": 3})
    assert staff.status_code == 200 and "leave-v2" not in staff.text and "21 days" not in staff.text
    assert staff.json()["results"][0]["doc_id"] == "leave-v1.md"
