"""Property: a version the caller may not see never influences what they get.

For random families of policy versions (random tags, dates, version labels and declared
``supersedes``, texts near-duplicates or not) and a random caller, searching the whole store gives
exactly what searching a store holding only the documents the caller may see gives — in both
version modes: the same passages, texts, scores, versions listed and ``superseded_by``. So a newer
version they cannot see neither hides an older one they can, nor shows up anywhere (no side channel).
On SQLite and on PostgreSQL (links filtered inside the server's query, BM25 ranked by the server)."""
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chunkwise.config import ChunkConfig
from chunkwise.pipeline import ingest
from chunkwise.retrieve import Retriever
from conftest import BACKENDS, PgDatabases

CONFIG = ChunkConfig(strategy="structure", size=80, header="none")
TAGS = ("staff", "hr", "legal")
QUERIES = ("how many days in advance must annual leave be requested", "sick leave certificate")
BODY = ("# Leave policy\n\n## Annual leave\n\nFull-time employees accrue annual leave every month and may carry "
        "unused days over into the next calendar year when their manager approves.\n\n## Notice\n\nEmployees must "
        "request annual leave at least {days} days in advance through the HR portal so rosters can be planned.\n\n"
        "## Sick leave\n\nSick leave needs no advance notice; bring a certificate after {sick} consecutive days.\n")
OTHER = ("# Travel\n\nBook trains through the travel desk at least {days} days before you leave, keep every receipt "
         "and file the claim within a month of the trip.\n")

doc = st.fixed_dictionaries({
    "tag": st.sampled_from(TAGS),
    "days": st.sampled_from((14, 21)),
    "sick": st.sampled_from((3, 5)),
    "other": st.booleans(),
    "updated": st.sampled_from(("", "2023-01-10", "2024-03-01", "2025-02-01")),
    "version": st.sampled_from(("", "1", "2", "1.10")),
    "supersedes": st.sampled_from((None, 0, 1, 2)),
})


def text(d: dict, i: int) -> str:
    front = [f"acl: {d['tag']}"]
    if d["updated"]:
        front.append(f"updated_at: {d['updated']}")
    if d["version"]:
        front.append(f"version: {d['version']}")
    if d["supersedes"] is not None and d["supersedes"] != i:
        front.append(f"supersedes: p{d['supersedes']}.md")
    body = (OTHER if d["other"] else BODY).format(days=d["days"], sick=d["sick"])
    return "---\n" + "\n".join(front) + "\n---\n" + body


@pytest.fixture(scope="module", params=BACKENDS)
def fresh_store(request):
    """Makes an empty store of one backend per call: a file in the given folder, or a database."""
    if request.param == "sqlite":
        yield lambda folder: folder / "s.db"
        return
    server = request.getfixturevalue("pg_server")
    pair: list[PgDatabases] = []

    def make(folder):
        if len(pair) == 2:  # an example compares two stores; the previous example's are dropped
            for dbs in pair:
                dbs.drop()
            pair.clear()
        pair.append(PgDatabases(server))
        return pair[-1].new()

    yield make
    for dbs in pair:
        dbs.drop()


def results(folder: Path, db, docs: dict[int, dict], groups: list[str]) -> list[str]:
    root = folder / "docs"
    root.mkdir()
    for i, d in docs.items():
        (root / f"p{i}.md").write_text(text(d, i), encoding="utf-8")
    if docs:
        ingest([root], db, CONFIG, embedder=None, acl="staff")
    else:
        return ["nothing"] * (2 * len(QUERIES))
    out = []
    with Retriever(db, embedder=None) as r:
        for q in QUERIES:
            for versions in ("latest", "all"):
                res = r.search(q, groups, k=4, mode="bm25", versions=versions).to_dict()
                for row in res["results"]:
                    row["score"] = round(row["score"], 9)
                out.append(json.dumps(res, sort_keys=True) if res["results"] else "nothing")
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(doc, min_size=2, max_size=3),
       st.lists(st.sampled_from(TAGS), min_size=1, max_size=2, unique=True))
@example([{"tag": "staff", "days": 14, "sick": 3, "other": False, "updated": "2023-01-10", "version": "",
           "supersedes": None},
          {"tag": "hr", "days": 21, "sick": 3, "other": False, "updated": "2024-03-01", "version": "",
           "supersedes": 0}], ["staff"])
@example([{"tag": "staff", "days": 14, "sick": 3, "other": False, "updated": "2023-01-10", "version": "1",
           "supersedes": None},
          {"tag": "hr", "days": 21, "sick": 5, "other": True, "updated": "2024-03-01", "version": "2",
           "supersedes": 0},
          {"tag": "staff", "days": 21, "sick": 3, "other": False, "updated": "2025-02-01", "version": "",
           "supersedes": 1}], ["staff"])
def test_hidden_versions_change_nothing_a_caller_gets(fresh_store, family, groups):
    everything = dict(enumerate(family))
    visible = {i: d for i, d in everything.items() if d["tag"] in groups}
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        a, b = Path(a), Path(b)
        assert results(a, fresh_store(a), everything, groups) == results(b, fresh_store(b), visible, groups)
