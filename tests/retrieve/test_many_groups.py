"""Issue 25 item 13: a caller may hold a thousand groups (a directory user), on SQLite and
PostgreSQL, and gets exactly what the groups that tag documents give; above the stated bound the
refusal is one clear line. On SQLite the many-groups paths of the FTS5 ranker (only the groups that
tag rows inside MATCH; beyond 64 of those, the caller's row bitmap) rank exactly as the in-memory
BM25 engine does."""
import random

import pytest

from chunkwise.access import MAX_CALLER_GROUPS, caller_groups
from chunkwise.errors import AccessTagError
from chunkwise.pipeline.ingest import ingest
from chunkwise.retrieve import Retriever
from chunkwise.retrieve.fts import MATCH_GROUPS

TEAMS = [f"team{i:03d}" for i in range(150)]  # more than MATCH_GROUPS groups tag documents
WORDS = "ledger payout refund dispute window freeze owner rollback deploy page minutes quota audit".split()


@pytest.fixture
def store(tmp_path, new_location):
    rng = random.Random(5)
    root = tmp_path / "docs"
    root.mkdir()
    for i, team in enumerate(TEAMS):
        body = "\n\n".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60))) for _ in range(3))
        (root / f"doc{i:03d}.md").write_text(f"---\nacl: {team}\n---\n# Doc {i}\n\n{body}\n", encoding="utf-8")
    db = new_location()
    stats = ingest([root], db, chunk_options={"size": 64}, embedder="hashing", acl="fallback")
    assert not stats.errors
    return db


def ranked(db, groups, mode, **options):
    with Retriever(db, **options) as r:
        return [(key, round(score, 5)) for key, score in r.rank("ledger refund freeze quota", groups, 20, mode)]


def callers():
    rng = random.Random(9)
    unused = [f"list{i:04d}" for i in range(1000)]
    few = rng.sample(TEAMS, 3)
    many = rng.sample(TEAMS, 100)  # > MATCH_GROUPS of them tag rows: the bitmap path on SQLite
    return [(few, few + unused[:997]), (many, many + unused[:900]), (TEAMS, TEAMS + unused)]


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_a_thousand_groups_give_what_the_groups_that_tag_documents_give(store, mode):
    for used, held in callers():
        assert len(held) >= 1000
        got = ranked(store, held, mode)
        assert got and got == ranked(store, used, mode)
        with Retriever(store) as r:
            result = r.search("ledger refund", held, k=10, mode=mode)
        assert result.passages and all(set(p.acl) & set(used) for p in result.passages)


def test_the_many_groups_paths_rank_as_the_in_memory_engine(store, backend):
    if backend != "sqlite":
        pytest.skip("the FTS5 ranker's paths are SQLite's")
    for used, held in callers():
        expected = ranked(store, used, "bm25", bm25="sparse")
        assert ranked(store, held, "bm25") == expected
    assert len(callers()[1][0]) > MATCH_GROUPS


def test_more_groups_than_the_bound_is_one_clear_line():
    caller_groups([f"g{i}" for i in range(MAX_CALLER_GROUPS)])
    with pytest.raises(AccessTagError, match=f"at most {MAX_CALLER_GROUPS} groups per caller"):
        caller_groups([f"g{i}" for i in range(MAX_CALLER_GROUPS + 1)])
    with pytest.raises(AccessTagError, match="at most 64 access tags per chunk"):
        from chunkwise.access import AccessTags

        AccessTags.parse([f"t{i}" for i in range(65)], "acl")
