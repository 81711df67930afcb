"""Search over a real ingested store: FTS5 and sparse BM25 agree, the filter holds end to end,
expansion notices a re-ingested document, and the CLI prints the documented JSON. On SQLite and on
PostgreSQL (where "fts5" names the server's BM25)."""
import json
import random

import pytest

from chunkwise.access import permitted
from chunkwise.cli.main import main
from chunkwise.config import ChunkConfig
from chunkwise.embed import make_embedder
from chunkwise.errors import ConfigError, StaleLink
from chunkwise.pipeline import ingest
from chunkwise.retrieve import Retriever, search
from chunkwise.retrieve.expand import expand_parent
from chunkwise.retrieve.merge import to_passage
from backends import acl_rows, demote_to_review, is_pg, query
from conftest import BACKENDS, module_location

TOPICS = ["rollback", "deploy", "freeze", "incident", "pager", "backup", "restore", "billing", "refund", "audit"]
FILLER = [f"w{i}" for i in range(60)] + ["the", "a", "step", "team", "check"]
GROUPS = ["sre", "finance", "legal", "support", "eng"]
CONFIG = ChunkConfig(strategy="structure", size=64, header="path")


def make_corpus(root, n_docs=24, seed=7):
    rng = random.Random(seed)
    for d in range(n_docs):
        parts = [f"# Manual {d}\n"]
        for s in range(4):
            topic = rng.choice(TOPICS)
            parts.append(f"## {topic.title()} section {s}\n")
            if rng.random() < 0.3:
                parts.append(f"<!-- acl: {rng.choice(GROUPS)} -->\n")
            body = " ".join(rng.choice(FILLER) if rng.random() < 0.85 else topic for _ in range(rng.randint(20, 90)))
            parts.append(body + ".\n")
        (root / f"doc{d:02d}.md").write_text("\n".join(parts), encoding="utf-8")
    return {f"doc{d:02d}.md": [GROUPS[d % len(GROUPS)]] for d in range(n_docs)}


@pytest.fixture(scope="module", params=BACKENDS)
def store(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    acl_map = make_corpus(root)
    db = module_location(request, tmp_path_factory, request.param)
    ingest([root], db, CONFIG, embedder=make_embedder("hashing"), acl_map=acl_map)
    # One chunk goes to review: it must never be served, whatever the query.
    demote_to_review(db, 3)
    return root, db


def all_rows(db):
    return {cid: (tags.tags, q) for cid, (tags, q) in acl_rows(db).items()}


def test_fts5_and_sparse_bm25_return_the_same_ranking(store):
    _, db = store
    with Retriever(db, bm25="fts5") as a, Retriever(db, bm25="sparse") as b:
        for q in ("rollback freeze", "refund audit billing", "pager incident"):
            for groups in (["sre"], ["finance", "legal"], GROUPS):
                fa, fb = a.rank(q, groups, 10, "bm25"), b.rank(q, groups, 10, "bm25")
                assert [r for r, _ in fa] == [r for r, _ in fb]
                assert [s for _, s in fa] == pytest.approx([s for _, s in fb], rel=1e-4)
                assert fa and fa[0][1] > 0.1


def test_no_leaks_and_k_results_in_every_mode_and_expansion(store):
    _, db = store
    rows = all_rows(db)
    rng = random.Random(1)
    with Retriever(db) as r:
        for _ in range(25):
            groups = rng.sample(GROUPS + ["nobody"], rng.randint(1, 3))
            query = " ".join(rng.sample(TOPICS, 2))
            visible = [c for c, (acl, q) in rows.items() if permitted(acl, q, groups)]
            for mode in ("bm25", "dense", "hybrid"):
                for expand in ("none", "neighbours", "parent"):
                    res = r.search(query, groups, k=5, mode=mode, expand=expand)
                    for p in res.passages:
                        for cid in p.chunk_ids:
                            assert permitted(*rows[cid], groups), (cid, groups)
                if mode == "dense" and len(visible) >= 5:
                    hits = r.hits(r.rank(query, groups, 5, mode), groups)
                    assert len(hits) == 5


def test_stale_link_after_the_document_changed(store, tmp_path, request):
    root, _ = store
    import shutil

    copy = tmp_path / "c"
    shutil.copytree(root, copy)
    db = tmp_path / "x.db" if not is_pg(store[1]) else request.getfixturevalue("pg_url")
    ingest([copy], db, CONFIG, acl=("staff",))
    with Retriever(db, embedder=None) as r:
        hit = r.hits(r.rank("rollback", ["staff"], 1, "bm25"), ["staff"])[0]
        path = copy / hit.doc_id
        path.write_text(path.read_text(encoding="utf-8") + "\n## Appendix\n\nA new rollback note.\n", encoding="utf-8")
        ingest([copy], db, CONFIG, acl=("staff",))
        with pytest.raises(StaleLink):
            expand_parent(r, to_passage(hit), ["staff"])


def test_cli_search_json_shape(store, capsys):
    _, db = store
    assert main(["search", "rollback deploy", "--db", str(db), "--groups", "sre,eng", "--k", "3",
                 "--expand", "neighbours", "--budget", "400", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"query", "results", "context_tokens"}
    assert out["results"] and out["context_tokens"] <= 400
    for r in out["results"]:
        assert set(r) >= {"rank", "chunk_id", "doc_id", "source_uri", "text", "score", "start_char", "end_char",
                          "page", "heading_path", "acl", "expanded_from"}
        assert set(r["acl"]) & {"sre", "eng"}
    assert main(["search", "rollback", "--db", str(db), "--groups", "sre"]) == 0
    assert "[1]" in capsys.readouterr().out


def test_bad_usage_is_a_config_error(store, capsys):
    _, db = store
    assert main(["search", "x", "--db", str(db) + (".missing" if not is_pg(db) else "x"), "--groups", "sre"]) == 2
    assert main(["search", "x", "--db", str(db), "--groups", " , "]) == 2
    assert "groups" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="re-ingest|embedder"):
        search(db, "x", ["sre"], embedder="minilm")


def test_review_chunk_is_invisible_to_every_engine(store):
    _, db = store
    cid, text = query(db, "SELECT chunk_id, embed_text FROM chunks WHERE {} = 3".format("key" if is_pg(db) else "rowid"))[0]
    with Retriever(db, bm25="sparse") as r:
        for mode in ("bm25", "dense", "hybrid"):
            res = r.search(text, GROUPS, k=20, mode=mode)
            assert all(cid not in p.chunk_ids for p in res.passages)


@pytest.mark.parametrize("bm25", ["fts5", "sparse"])
def test_hybrid_with_the_dense_list_in_a_thread_ranks_as_in_one_thread(tmp_path, monkeypatch, bm25):
    """Above ``PARALLEL_ROWS`` the dense list of a hybrid search is ranked in a thread beside BM25:
    the same fused ranking as one thread, for every caller and query; an error in the thread (a
    query vector of the wrong size) reaches the caller as in one thread. SQLite only: a server store
    ranks inside the server and has no in-memory index."""
    import numpy as np

    from chunkwise.retrieve import store as retrieve_store

    (tmp_path / "corpus").mkdir()
    db = str(tmp_path / "x.db")
    ingest([tmp_path / "corpus"], db, CONFIG, embedder=make_embedder("hashing"), acl_map=make_corpus(tmp_path / "corpus"))
    queries = ["rollback freeze", "refund audit billing", "pager incident w3", "restore the backup step"]
    callers = [["sre"], ["finance", "legal"], GROUPS]
    with Retriever(db, bm25=bm25) as r:
        assert not r.native
        got = {}
        for threshold in (10 ** 9, 0):
            monkeypatch.setattr(retrieve_store, "PARALLEL_ROWS", threshold)
            got[threshold] = [r.rank(q, g, 7, "hybrid") for q in queries for g in callers]
            with pytest.raises(ValueError, match="dimensions"):
                r._hybrid_lists("rollback", ["sre"], lambda: np.ones(5, np.float32), 50)
    assert got[0] == got[10 ** 9] and any(got[0])


def test_no_dense_thread_when_no_core_is_spare(tmp_path, monkeypatch):
    """``spare_core`` answering False (a server whose workers fill the cores): a hybrid search ranks
    both lists in the caller's thread, starts no other, and ranks exactly as with the thread."""
    import threading

    from chunkwise.retrieve import store as retrieve_store

    (tmp_path / "corpus").mkdir()
    db = str(tmp_path / "x.db")
    ingest([tmp_path / "corpus"], db, CONFIG, embedder=make_embedder("hashing"), acl_map=make_corpus(tmp_path / "corpus"))
    monkeypatch.setattr(retrieve_store, "PARALLEL_ROWS", 0)
    started: list[str] = []
    start = threading.Thread.start

    def counting(self):
        started.append(self.name)
        return start(self)

    monkeypatch.setattr(threading.Thread, "start", counting)
    queries = ["rollback freeze", "refund audit billing", "pager incident w3"]
    with Retriever(db) as r:
        split = [r.rank(q, GROUPS, 7, "hybrid") for q in queries]
        assert started.count("chunkwise-dense") == len(queries)
        r.spare_core = lambda: False
        started.clear()
        alone = [r.rank(q, GROUPS, 7, "hybrid") for q in queries]
        assert "chunkwise-dense" not in started
        r.spare_core = lambda: True
        again = [r.rank(q, GROUPS, 7, "hybrid") for q in queries]
        assert started.count("chunkwise-dense") == len(queries)
    assert alone == split == again and any(alone)
