"""Versions the query asks for (issue 29 item 1): the latest version by default, the named version or
the version in force in a named year when the query says so, every version (newest first) for
"previous"/"old", and `--versions latest|all` still meaning what they say."""
import json

import pytest
from hypothesis import given, strategies as st

from chunkwise.cli.main import main
from chunkwise.config import ChunkConfig
from chunkwise.pipeline import ingest
from chunkwise.retrieve import Retriever
from chunkwise.retrieve.types import Hit, VersionRef
from chunkwise.retrieve.version_intent import VersionIntent, parse, select

CONFIG = ChunkConfig(strategy="structure", size=80, header="none")
DAYS = {"1": 7, "2": 14, "3": 21}
DATES = {"1": "2022-03-01", "2": "2023-05-10", "3": "2024-09-01"}


def leave_policy(v: str) -> str:
    older = "" if v == "1" else f"supersedes: leave-v{int(v) - 1}.md\n"
    return (f"---\ntitle: Leave policy\nacl: staff\nversion: {v}.0\nupdated_at: {DATES[v]}\n{older}---\n"
            f"# Leave policy\n\n## Notice\n\nEmployees must request annual leave at least {DAYS[v]} days in "
            f"advance through the HR portal so that rosters can be planned.\n\n## Sick leave\n\nTell your "
            f"manager on the first morning of absence and bring a certificate after three days.\n")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("policies")
    for v in DAYS:
        (root / f"leave-v{v}.md").write_text(leave_policy(v), encoding="utf-8")
    (root / "travel.md").write_text("---\nacl: staff\n---\n# Travel\n\nBook trains at least 14 days in advance "
                                    "of the trip through the travel desk.\n", encoding="utf-8")
    db = str(root / "kb.db")
    ingest([root], db, CONFIG, embedder=None, acl="staff")
    return db


def answers(db, query, **kw):
    with Retriever(db) as r:
        res = r.search(query, ["staff"], k=3, mode="bm25", **kw)
    return [(p.source_uri.rsplit("/", 1)[-1], p.version) for p in res.passages]


def stands_for(db, query, **kw):
    """Per result, every document its text stands for (its own and identical passages collapsed in)."""
    with Retriever(db) as r:
        res = r.search(query, ["staff"], k=3, mode="bm25", **kw)
    return [{v.source_uri.rsplit("/", 1)[-1] for v in p.versions} for p in res.passages]


@pytest.mark.parametrize("query, expected", [
    ("how many days in advance must annual leave be requested", "leave-v3.md"),      # current text
    ("annual leave notice in version 1", "leave-v1.md"),                              # a named version
    ("what did the v2 policy say about requesting annual leave", "leave-v2.md"),
    ("how many days in advance was annual leave requested in 2023", "leave-v2.md"),  # in force in 2023
    ("annual leave request notice in 2022", "leave-v1.md"),
    ("annual leave notice days in 2025", "leave-v3.md"),                              # the latest one in force
])
def test_the_version_the_query_names_comes_first(store, query, expected):
    got = answers(store, query)
    assert got[0][0] == expected
    if "version" in query or "v2" in query or any(y in query for y in ("2022", "2023", "2025")):
        # only the version named: a result of another version is a passage identical in the named one
        for docs in stands_for(store, query):
            assert expected in docs or not any(d.startswith("leave") for d in docs), docs


def test_previous_serves_every_version_newest_first(store):
    got = [name for name, _ in answers(store, "what was the previous annual leave request notice")]
    leave = [n for n in got if n.startswith("leave")]
    assert len(leave) >= 2 and leave == sorted(leave, reverse=True), got


def test_no_intent_keeps_latest_only_and_explicit_choices_win(store):
    q = "how many days in advance must annual leave be requested in version 1"
    assert {n for n, _ in answers(store, q, versions="latest") if n.startswith("leave")} == {"leave-v3.md"}
    assert len({n for n, _ in answers(store, q, versions="all") if n.startswith("leave")}) >= 2
    assert answers(store, q)[0][0] == "leave-v1.md"


def test_the_cli_follows_the_query(store, capsys):
    assert main(["search", "annual leave request notice in 2022", "--db", store, "--groups", "staff",
                 "--mode", "bm25", "--k", "2", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert results[0]["version"] == "1.0" and results[0]["superseded_by"]  # says a newer one exists
    assert main(["search", "annual leave request notice in 2022", "--db", store, "--groups", "staff",
                 "--mode", "bm25", "--k", "2", "--versions", "latest", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["version"] == "3.0"


@pytest.mark.parametrize("query, intent", [
    ("what is the notice period", VersionIntent()),
    ("keep 30 days of logs", VersionIntent()),                       # a bare number is not a version
    ("notice period in v2", VersionIntent(labels=("2",))),
    ("Version 1.0 rules", VersionIntent(labels=("1",))),
    ("rev. 3.2 of the runbook", VersionIntent(labels=("3.2",))),
    ("what did the 2023 policy say", VersionIntent(years=(2023,))),
    ("port 20231 is open", VersionIntent()),                         # not a year
    ("the old rule", VersionIntent(looks_back=True)),
    ("what was it before the change", VersionIntent(looks_back=True)),
])
def test_parse(query, intent):
    assert parse(query) == intent


def _hit(doc, rank, version="", updated="", superseded=(), also=()):
    return Hit(chunk_id=f"{doc}-{rank}", doc_id=doc, chunk_index=0, start_char=0, end_char=1, score=1.0 / rank,
               rank=rank, text=doc, version=version, updated_at=updated, superseded_by=superseded, also_in=also)


def test_an_identical_passage_of_the_named_version_keeps_its_hit():
    """The passage is the same words in v1 and v2, collapsed onto v2: asking for v1 keeps it."""
    same = _hit("b", 1, "2", "2023-01-01", also=(VersionRef("a", version="1", updated_at="2022-01-01"),))
    other = _hit("a", 2, "1", "2022-01-01", superseded=("b",))
    got = select([same, other], VersionIntent(labels=("1",)), {"a": 0, "b": 0})
    assert [h.doc_id for h in got] == ["b", "a"]


@given(st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from(["", "1", "2", "3"]),
                          st.sampled_from(["", "2021-01-01", "2022-06-01", "2023-12-31"])), max_size=12),
       st.sampled_from([VersionIntent(), VersionIntent(labels=("2",)), VersionIntent(years=(2022,)),
                        VersionIntent(looks_back=True)]))
def test_select_only_drops_or_reorders_within_a_family(rows, intent):
    """Whatever the intent: ranks are 1..n, nothing is invented, documents without a family keep
    their hits and their order."""
    hits = [_hit(doc, i + 1, v, u) for i, (doc, v, u) in enumerate(rows)]
    family = {"a": 0, "b": 0, "c": 1}  # d has no links
    got = select(hits, intent, family)
    assert [h.rank for h in got] == list(range(1, len(got) + 1))
    assert {h.chunk_id for h in got} <= {h.chunk_id for h in hits}
    assert [h.chunk_id for h in got if h.doc_id == "d"] == [h.chunk_id for h in hits if h.doc_id == "d"]
    if not intent.labels and not intent.years:
        assert len(got) == len(hits)
