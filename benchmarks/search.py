"""Search latency at 10k / 100k / 1M chunks (issue 5): BM25 (FTS5, sparse), dense, hybrid and the
whole ``search()`` pipeline, with the permission filter on, over generated stores.

Stores are generated (seeded) straight through ``SQLiteStore.write_document`` in big transactions
(ingest would take hours at 1M) into ``benchmarks/.cache/search-<n>.db`` and reused when present:
chunks of 60-180 words drawn from a Zipf vocabulary of 50k pseudo-words, documents of 4-16 chunks
in sections of 2-5 (so neighbour and parent expansion have something to grow into), 20 access
groups, one or two tags per document (5% of sections carry their own), 1% of chunks in ``review``
(never served, still counted by BM25), 384-d random unit vectors as float32 blobs under the
``hashing-384@1`` model name (the hashing embedder makes the query vectors: what is measured is
latency, not relevance). Queries: 5-12 Zipf words; each caller holds 3 groups.

Everything at one size runs in one process, single-threaded BLAS (set before numpy is imported).

    .venv/bin/python benchmarks/search.py --sizes 10k,100k,1M [--queries 200] [--k 10] [--json FILE]
    .venv/bin/python benchmarks/search.py --sizes 1M --build-only     # generate the store, nothing else
    .venv/bin/python benchmarks/search.py --sizes 1M --index-only     # store size and index builds, no queries
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # the figures are single-threaded; the machine is shared

import argparse  # noqa: E402
import hashlib  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import sqlite3  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from _timing import timed  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
CACHE = Path(__file__).resolve().parent / ".cache"
GENERATOR = "search-bench/1"  # bump when the generated data changes; a cached store must match it
MODEL, DIM = "hashing-384@1", 384
VOCAB, ZIPF_S = 50_000, 1.07
GROUPS = [f"grp{i:02d}" for i in range(20)]
SEED = 20240605


# -- data ------------------------------------------------------------------------------------------
def vocabulary(n: int = VOCAB) -> np.ndarray:
    """Distinct pseudo-words, shortest for the most frequent ranks (as in real text)."""
    syl = [c + v for c in "bdfghklmnprstvz" for v in "aeiou"]  # 75 syllables
    words = ("".join(t[::-1]) for length in (1, 2, 3) for t in itertools.product(syl, repeat=length))
    return np.array(list(itertools.islice(words, n)), dtype=object)


def zipf_sampler(rng: np.random.Generator, n: int = VOCAB, s: float = ZIPF_S):
    cdf = np.cumsum(1.0 / np.arange(1, n + 1) ** s)
    cdf /= cdf[-1]
    return lambda size: np.minimum(np.searchsorted(cdf, rng.random(size)), n - 1)


def tags_of(rng: np.random.Generator) -> list[str]:
    k = 1 if rng.random() < 0.5 else 2
    return sorted(GROUPS[i] for i in rng.choice(len(GROUPS), k, replace=False))


def make_docs(rng, words, sample, first_doc: int, n_chunks: int):
    """Documents (doc_row, [chunk record dicts]) until ``n_chunks`` chunks are made."""
    from chunkwise import ids

    docs, made, d = [], 0, first_doc
    while made < n_chunks:
        doc_id = f"synthetic/doc{d:07d}.md"
        count = min(int(rng.integers(4, 17)), n_chunks - made)
        doc_tags = tags_of(rng)
        lengths = rng.integers(60, 181, count)
        tokens = sample(int(lengths.sum()))
        texts, at = [], 0
        for n in lengths:
            texts.append(" ".join(words[tokens[at:at + n]].tolist()))
            at += n
        version = hashlib.sha256("\n\n".join(texts).encode()).hexdigest()
        records, start, sec, left, sec_tags, seen = [], 0, -1, 0, doc_tags, {}
        for i, text in enumerate(texts):
            if left == 0:
                sec, left = sec + 1, int(rng.integers(2, 6))
                sec_tags = tags_of(rng) if rng.random() < 0.05 else doc_tags
            left -= 1
            chash = ids.hash_text(text)
            occurrence = seen[chash] = seen.get(chash, -1) + 1
            review = rng.random() < 0.01
            heading = [f"Document {d}", f"Section {sec}"]
            records.append({
                "chunk_id": ids.chunk_id(doc_id, chash, occurrence), "doc_id": doc_id, "source_uri": doc_id,
                "chunk_index": i, "heading_path": heading, "start_char": start, "end_char": start + len(text),
                "page": None, "page_end": None, "doc_updated_at": "", "ingested_at": "2024-06-05T00:00:00Z",
                "language": "", "acl": sec_tags, "content_hash": chash, "embed_model": MODEL,
                "embed_key": ids.embed_key(MODEL, text), "text": text, "embed_text": text, "size": len(text.split()),
                "title": f"Document {d}", "author": "", "source_version": version, "chunker": "synthetic",
                "header_mode": "none", "quality": "review" if review else "ready",
                "reasons": ["needs_review"] if review else [], "section_id": ids.sha256_hex(f"{doc_id}\x1f{sec}")[:32],
                "embed_window": "",
            })
            start += len(text) + 2
        docs.append(({"doc_id": doc_id, "root": "synthetic", "source_uri": doc_id, "source_version": version,
                      "inputs": "synthetic", "title": f"Document {d}", "author": "", "updated_at": "",
                      "ingested_at": "2024-06-05T00:00:00Z", "chunk_count": count}, records))
        made += count
        d += 1
    return docs, d


def build_store(path: Path, n: int, seed: int = SEED, batch: int = 20_000) -> tuple[float, float]:
    """Generate the store at ``path`` (written to a temporary name, renamed when complete); (wall s, CPU s)."""
    from chunkwise.store import DocumentDiff, DocumentRow, SQLiteStore

    tmp = path.with_suffix(".building")
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        p.unlink(missing_ok=True)
    rng = np.random.default_rng([seed, n])
    words, sample = vocabulary(), zipf_sampler(rng)
    t0, cpu0 = time.perf_counter(), time.process_time()
    with SQLiteStore(tmp) as store:
        # A throw-away file until renamed: no journal, no syncs (the wall time was disk waits), 1 GB cache.
        store.db.execute("PRAGMA journal_mode=OFF")
        store.db.execute("PRAGMA synchronous=OFF")
        store.db.execute("PRAGMA cache_size=-1000000")
        made, next_doc = 0, 0
        while made < n:
            docs, next_doc = make_docs(rng, words, sample, next_doc, min(batch, n - made))
            keys = [r["embed_key"] for _, recs in docs for r in recs]
            vecs = rng.standard_normal((len(keys), DIM), dtype=np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            with store.atomic():
                for doc_row, records in docs:  # many documents per transaction: the store's own apply step
                    store._apply(DocumentRow(path=doc_row["doc_id"], **doc_row), DocumentDiff(added=records))
                # put_vectors packs Python floats one by one; the same rows straight from numpy.
                store.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
                                     [(k, MODEL, DIM, v.astype("<f4").tobytes()) for k, v in zip(keys, vecs)])
            made += len(keys)
            rate = made / (time.perf_counter() - t0)
            print(f"  {path.name}: {made:,}/{n:,} chunks, {rate:,.0f} chunks/s", file=sys.stderr, flush=True)
        with store.run("2024-06-05T00:00:00Z") as finish:
            finish("2024-06-05T00:00:00Z", {},
                   {"embedder": MODEL, "generator": f"{GENERATOR} seed={seed} n={n}"})
        store.db.execute("PRAGMA journal_mode=WAL")  # as ingest leaves a store
    tmp.rename(path)
    return time.perf_counter() - t0, time.process_time() - cpu0


def ensure_store(n: int, seed: int) -> tuple[Path, tuple[float, float] | None]:
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"search-{n}.db"
    if path.exists():
        con = sqlite3.connect(path)
        row = con.execute("SELECT value FROM settings WHERE key = 'generator'").fetchone()
        con.close()
        if row and row[0] == f"{GENERATOR} seed={seed} n={n}":
            return path, None
        path.unlink()
    print(f"building {path} ({n:,} chunks)", file=sys.stderr, flush=True)
    return path, build_store(path, n, seed)


# -- measurement ----------------------------------------------------------------------------------
@dataclass
class Row:
    """One engine at one size: per-query wall and CPU seconds, result counts and checks."""

    engine: str
    wall: list = field(default_factory=list)
    cpu: list = field(default_factory=list)
    full: int = 0  # queries that got min(k, available) results
    leaks: int = 0  # results the caller may not see (must stay 0)
    note: str = ""
    counts_k: bool = True  # False where fewer than k is by design (a token budget) or meaningless

    def summary(self) -> dict:
        w, c = np.array(self.wall) * 1e3, np.array(self.cpu) * 1e3
        return {"engine": self.engine, "queries": len(w), "p50_ms": float(np.percentile(w, 50)),
                "p95_ms": float(np.percentile(w, 95)), "cpu_p50_ms": float(np.percentile(c, 50)),
                "cpu_p95_ms": float(np.percentile(c, 95)), "full": self.full if self.counts_k else None,
                "leaks": self.leaks, "note": self.note}


def make_queries(n: int, seed: int) -> list[tuple[str, tuple[str, ...]]]:
    """``n`` (query, caller groups); 20 distinct callers of 3 groups (fewer than the 32 masks the
    index caches: callers repeat their groups)."""
    rng = np.random.default_rng([seed, 7])
    words, sample = vocabulary(), zipf_sampler(rng)
    callers = [tuple(sorted(GROUPS[i] for i in rng.choice(len(GROUPS), 3, replace=False))) for _ in range(20)]
    return [(" ".join(words[sample(int(rng.integers(5, 13)))].tolist()), callers[i % len(callers)]) for i in range(n)]


class Truth:
    """Who may see each rowid, from the store itself (independent of the retrieval code)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        top = db.execute("SELECT max(rowid) FROM chunks").fetchone()[0]
        self.bits = np.zeros(top + 1, np.uint32)
        self.ready = np.zeros(top + 1, bool)
        bit = {g: 1 << i for i, g in enumerate(GROUPS)}
        for rowid, acl, quality in db.execute("SELECT rowid, acl, quality FROM chunks"):
            self.bits[rowid] = sum(bit[t] for t in json.loads(acl))  # the acl column is a JSON array
            self.ready[rowid] = quality == "ready"
        self.bit = bit

    def allowed(self, groups) -> np.ndarray:
        want = sum(self.bit[g] for g in groups)
        return self.ready & ((self.bits & want) != 0)

    def leaks(self, rowids, groups) -> int:
        return int((~self.allowed(groups)[np.asarray(rowids, dtype=np.int64)]).sum()) if len(rowids) else 0


def rss_mb() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_engine(name, queries, call, expected, truth, warm: int = 5, note: str = "") -> tuple[Row, list]:
    """Time ``call(query, groups)`` once per query (after ``warm`` untimed calls); ``expected(i)``
    is how many results query i must get."""
    for q, g in queries[:warm]:
        call(q, g)
    row, outs = Row(name, note=note), []
    for i, (q, g) in enumerate(queries):
        wall, cpu, out = timed(lambda: call(q, g))
        row.wall.append(wall)
        row.cpu.append(cpu)
        ids = [r for r, _ in out]
        row.full += len(ids) == expected(i)
        row.leaks += truth.leaks(ids, g)
        outs.append(ids)
    return row, outs


def overlap(a: list, b: list) -> float:
    """Mean share of the top-k of ``a`` that is also in ``b`` (same queries)."""
    return float(np.mean([len(set(x) & set(y)) / max(len(x), 1) for x, y in zip(a, b)])) if a else 1.0


def frequent_terms_dropped(index, query: str, share: float) -> str:
    """The query less the terms found in more than ``share`` of the rows (diagnostic variant)."""
    from chunkwise.retrieve.bm25 import query_terms

    bm = index.bm25
    body = bm.indptr[0]  # the body field's postings (SparseBM25 keeps one array per lexical field)
    keep = [t for t in query_terms(query)
            if t not in bm.vocab or (body[bm.vocab[t] + 1] - body[bm.vocab[t]]) <= share * bm.n_rows]
    return " ".join(keep)


def bench_size(path: Path, n: int, queries, k: int, budget: int, drop_share: float, index_only: bool = False) -> dict:
    """Every engine at one size; ``index_only``: the store's size and the index builds, no queries."""
    from chunkwise.retrieve import Retriever

    out: dict = {"chunks": n, "k": k, "budget": budget, "rows": [], "index": [], "checks": {},
                 "load_before": os.getloadavg()[0]}
    files = {p.name: p.stat().st_size for p in path.parent.glob(path.name + "*")}
    out["db_bytes"] = sum(files.values())
    fts = Retriever(path, bm25="fts5")
    truth = Truth(fts.store.db)
    servable = fts.store.db.execute("SELECT count(*) FROM chunks WHERE acl_index != ''").fetchone()[0]
    out["servable"] = servable
    visible = [int(truth.allowed(g).sum()) for _, g in queries]
    out["visible_mean"] = float(np.mean(visible))

    index = time_index(fts, "vectors only (fts5 retriever)", out)
    if index_only:
        fts.close()
        fts = index = None
        sp = Retriever(path, bm25="sparse")
        time_index(sp, "vectors + sparse BM25 (sparse retriever)", out)
        return finish(out, sp)
    emb = fts.embedder
    row, _ = run_engine("query embedding (hashing-384)", queries, lambda q, g: (emb.embed([q]), [])[1],
                        lambda i: 0, truth)
    row.counts_k = False
    out["rows"].append(row.summary())
    dense_k = lambda i: min(k, visible[i])  # noqa: E731
    # BM25 availability: permitted rows holding at least one query term; the sparse index (built
    # below) counts them, so the fts5 rows are checked afterwards.
    rows: dict = {}
    rows["fts5"], res_fts = run_engine("BM25 FTS5", queries, lambda q, g: fts.rank(q, g, k, "bm25"),
                                       lambda i: k, truth, note="access tokens inside MATCH, terms OR-ed")
    rows["dense"], res_dense = run_engine("dense exact (numpy)", queries, lambda q, g: fts.rank(q, g, k, "dense"),
                                          dense_k, truth, note="query embedding included")
    rows["hyb_fts"], _ = run_engine("hybrid FTS5 + dense (RRF)", queries, lambda q, g: fts.rank(q, g, k, "hybrid"),
                                    dense_k, truth, note="50 from each list")
    fts.close()
    fts = index = None  # free the vectors-only index before the sparse one is built

    sp = Retriever(path, bm25="sparse")
    index = time_index(sp, "vectors + sparse BM25 (sparse retriever)", out)
    from chunkwise.retrieve.bm25 import query_terms

    db = sp.store.db

    def fts_query(q, g, order_by="ORDER BY rank, rowid"):  # every query term, straight to FTS5
        from chunkwise.store.sqlite.sqlite_read import fts_match

        match = fts_match(query_terms(q), g)
        sql = f"SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ? {order_by} LIMIT ?"
        return [] if match is None else db.execute(sql, (match, k)).fetchall()

    # How many results a query must get: min(k, permitted rows holding any query term), counted by
    # FTS5 without ranking (stops at k), independent of what either engine leaves out of a query.
    bm_avail = [len(fts_query(q, g, order_by="")) for q, g in queries]
    rows["fts5"].full = sum(len(r) == e for r, e in zip(res_fts, bm_avail))
    rows["sparse"], res_sparse = run_engine("BM25 sparse (in memory)", queries, lambda q, g: sp.rank(q, g, k, "bm25"),
                                            lambda i: bm_avail[i], truth, note="mask before top-k")
    rows["hyb_sp"], _ = run_engine("hybrid sparse + dense (RRF)", queries, lambda q, g: sp.rank(q, g, k, "hybrid"),
                                   dense_k, truth, note="50 from each list")
    out["checks"]["FTS5 vs sparse top-k overlap"] = overlap(res_fts, res_sparse)
    # Diagnostics (not in src): FTS5 with every query term (exact BM25: the engines leave out terms
    # at the idf floor), and both engines on queries less every term in more than drop_share of rows.
    order = ["fts5", "sparse", "dense", "hyb_fts", "hyb_sp", "fts5_all"]
    rows["fts5_all"], res_all = run_engine("BM25 FTS5, every query term", queries, fts_query, lambda i: bm_avail[i],
                                           truth, note="diagnostic: the MATCH before floor-idf terms were left out")
    out["checks"]["FTS5 top-k overlap with every-term FTS5"] = overlap(res_fts, res_all)
    reduced = [(frequent_terms_dropped(index, q, drop_share), g) for q, g in queries]
    for key, name, call in (("fts5_drop", "BM25 FTS5", fts_query),
                            ("sparse_drop", "BM25 sparse", lambda q, g: sp.rank(q, g, k, "bm25"))):
        rows[key], res = run_engine(f"{name}, terms in >{drop_share:.0%} of chunks dropped", reduced, call,
                                    lambda i: bm_avail[i], truth, note="diagnostic, not in src")
        out["checks"][f"{key} top-k overlap with every-term FTS5"] = overlap(res, res_all)
        order.append(key)
    out["checks"]["query terms (mean)"] = float(np.mean([len(query_terms(q)) for q, _ in queries]))
    out["checks"]["floor-idf terms per query (mean)"] = float(np.mean(
        [len(query_terms(q)) - len(query_terms(frequent_terms_dropped(index, q, 0.5))) for q, _ in queries]))
    for key in order:
        out["rows"].append(rows[key].summary())

    ranked = [sp.rank(q, g, 3 * k, "hybrid") for q, g in queries]
    row = Row("  of which: read 3k hits from SQLite", note="hits(): JSON records of the top 30 rows")
    for (q, g), r in zip(queries, ranked):
        wall, cpu, hits = timed(lambda: sp.hits(r, g))
        row.wall.append(wall)
        row.cpu.append(cpu)
        row.full += len(hits) == len(r)
    out["rows"].append(row.summary())
    for b in (None, budget):
        for expand in ("none", "neighbours", "parent"):
            out["rows"].append(pipeline_row(sp, truth, queries, k, expand, b).summary())
    return finish(out, sp)


def time_index(retriever, what: str, out: dict):
    """Build ``retriever``'s in-memory index, timed; its wall/CPU seconds and sizes go to ``out["index"]``."""
    rss0 = rss_mb()
    wall, cpu, index = timed(retriever.index)
    entry = {"what": what, "s": wall, "cpu_s": cpu, "nbytes": index.nbytes, "rss_delta_mb": rss_mb() - rss0}
    if getattr(index, "bm25", None) is not None:
        entry.update(dense_nbytes=index.dense.nbytes, bm25_nbytes=index.bm25.nbytes)
    out["index"].append(entry)
    return index


def finish(out: dict, sp) -> dict:
    """The size's closing figures (load after, peak RSS, bytes per table); closes ``sp``."""
    out["load_after"] = os.getloadavg()[0]
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["table_bytes"] = table_split(sp.store.db)
    sp.close()
    return out


def pipeline_row(sp, truth, queries, k: int, expand: str, budget: int | None) -> Row:
    """The whole ``search()``: rank, read hits, merge, expand, assemble (budget in generator tokens)."""
    row = Row(f"search(): hybrid sparse, expand={expand}" + (f", budget={budget}" if budget else ""),
              counts_k=budget is None)
    omitted: dict = {}
    tokens, passages = [], []
    for q, g in queries[:3]:
        sp.search(q, g, k=k, mode="hybrid", expand=expand, budget=budget)
    for q, g in queries:
        wall, cpu, res = timed(lambda: sp.search(q, g, k=k, mode="hybrid", expand=expand, budget=budget))
        row.wall.append(wall)
        row.cpu.append(cpu)
        row.full += len(res.passages) == k
        ids = [c for p in res.passages for c in p.chunk_ids]
        got = sp.store.db.execute(f"SELECT rowid FROM chunks WHERE chunk_id IN ({','.join('?' * len(ids))})", ids).fetchall()
        row.leaks += truth.leaks([r for (r,) in got], g) + (len(got) != len(set(ids)))
        tokens.append(res.context_tokens)
        passages.append(len(res.passages))
        for o in res.omitted:
            omitted[o.reason] = omitted.get(o.reason, 0) + 1
    row.note = (f"context tokens p50 {int(np.percentile(tokens, 50))}, passages mean {np.mean(passages):.1f}"
                + ("; omitted per query: " + ", ".join(f"{r} {c / len(queries):.1f}" for r, c in omitted.items())
                   if omitted else ""))
    return row


def table_split(db: sqlite3.Connection) -> dict:
    """Bytes per table (FTS5 shadow tables folded into their table) via dbstat, when compiled in."""
    try:
        rows = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
    except sqlite3.OperationalError as exc:
        return {"error": str(exc)}
    owner = {name: tbl for name, tbl in db.execute("SELECT name, tbl_name FROM sqlite_master")}
    out: dict = {}
    for name, size in rows:
        key = owner.get(name, name)
        key = "chunks_fts" if key.startswith("chunks_fts") else key
        out[key] = out.get(key, 0) + size
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


# -- report ---------------------------------------------------------------------------------------
def fmt_n(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def report(results: list[dict], queries: int) -> str:
    lines = []
    sizes = [r["chunks"] for r in results]
    head = ("| engine | " + " | ".join(f"{fmt_n(n)} p50 / p95 ms (cpu p50)" for n in sizes)
            + " | k results | leaks | note (largest size) |")
    names = [r["engine"] for r in results[0]["rows"]]
    lines += [head, "|---|" + "--:|" * len(sizes) + "--:|--:|---|"] if names else []  # none: --index-only
    for name in names:
        cells, full, leaks = [], [], 0
        for res in results:
            r = next((x for x in res["rows"] if x["engine"] == name), None)
            if r is None:
                cells.append("")
                continue
            cells.append(f"{r['p50_ms']:.2f} / {r['p95_ms']:.2f} ({r['cpu_p50_ms']:.2f})")
            full.append("—" if r["full"] is None else f"{r['full'] / r['queries']:.0%}")
            leaks += r["leaks"]
        full = full if len(set(full)) > 1 else full[:1]
        note = next((x["note"] for x in results[-1]["rows"] if x["engine"] == name), "")
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {' / '.join(full)} | {leaks} | {note} |")
    lines += ["", "| size | servable | visible to a caller (mean) | db file (+WAL) | index build: vectors only | "
                  "index build: vectors + sparse | index nbytes (dense + sparse) | peak RSS | store generated |",
              "|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for res in results:
        a, b = res["index"]
        lines.append(f"| {fmt_n(res['chunks'])} | {res['servable']:,} | {res['visible_mean']:,.0f} | "
                     f"{res['db_bytes'] / 1e6:,.1f} MB ({res['db_bytes'] / res['chunks']:,.0f} B/chunk) | "
                     f"{a['s']:.1f} s (cpu {a['cpu_s']:.1f}) | {b['s']:.1f} s (cpu {b['cpu_s']:.1f}) | "
                     f"{b['dense_nbytes'] / 1e6:,.0f} + {b['bm25_nbytes'] / 1e6:,.0f} MB | "
                     f"{res['peak_rss_mb']:,.0f} MB | " + (f"{res['build_s']:.1f} s (cpu {res['build_cpu_s']:.1f})"
                                                            if res.get("build_cpu_s") is not None else "reused") + " |")
    lines += ["", "| size | store bytes by table | checks |", "|---|---|---|"]
    for res in results:
        split = ", ".join(f"{t} {b / 1e6:,.1f} MB" for t, b in res["table_bytes"].items() if isinstance(b, int))
        checks = [f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in res["checks"].items()]
        checks = ", ".join(checks + [f"load average {res['load_before']:.1f} before / {res['load_after']:.1f} after"])
        lines.append(f"| {fmt_n(res['chunks'])} | {split} | {checks} |")
    return "\n".join(lines)


def profile(path: Path, queries, k: int, what: str, budget: int) -> None:
    """cProfile (CPU time) of ``Retriever(bm25="sparse")``: ``rank(mode)`` for bm25|dense|hybrid, or
    ``search(hybrid, expand=what, budget)`` for none|neighbours|parent."""
    from chunkwise.retrieve import Retriever
    from chunkwise.retrieve.bm25 import query_terms

    with Retriever(path, bm25="sparse") as sp:
        index = sp.index()
        if what in ("bm25", "dense", "hybrid"):
            call = lambda q, g: sp.rank(q, g, k, what)  # noqa: E731
            everything = np.ones(len(index), dtype=bool)
            matched = [index.bm25.scores(query_terms(q), everything, index.bm25.stats(everything), False)[0]
                       for q, _ in queries]
            print(f"rows with a BM25 score per query: mean {np.mean([m.size for m in matched]):,.0f} "
                  f"of {len(index):,}; permitted among them: "
                  f"{np.mean([index.layout.mask(g)[m].sum() for m, (_, g) in zip(matched, queries)]):,.0f}")
        else:
            call = lambda q, g: sp.search(q, g, k=k, mode="hybrid", expand=what, budget=budget)  # noqa: E731
        for q, g in queries[:3]:
            call(q, g)
        cpu_profile(call, queries, f"{path.name}, {len(queries)} queries, {what}")


def cpu_profile(call, queries, title: str, lines: int = 16) -> None:
    """Print the cProfile (CPU time: the machine is shared) of ``call(query, groups)`` over ``queries``."""
    import cProfile
    import pstats

    prof = cProfile.Profile(time.process_time)
    prof.enable()
    for q, g in queries:
        call(q, g)
    prof.disable()
    print(f"## cProfile (CPU s), {title}")
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(lines)


def parse_size(text: str) -> int:
    text = text.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(text[-1], 1)
    return int(float(text.rstrip("km")) * mult)


def main(argv=None) -> int:
    global CACHE
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10k,100k,1M")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--budget", type=int, default=3000, help="context budget (generator tokens) for search()")
    ap.add_argument("--drop-share", type=float, default=0.05, help="diagnostic FTS5 variant: drop terms in more "
                    "than this share of chunks")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--index-only", action="store_true", help="measure only the store's size and the index "
                    "builds (no queries): the size table without the latency runs")
    ap.add_argument("--report", action="store_true", help="print the table from the saved per-size results only")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--cache", type=Path, default=CACHE, help="directory of the generated stores and saved "
                    "results (default benchmarks/.cache; the 1M store is ~6 GB)")
    ap.add_argument("--profile", choices=("bm25", "dense", "hybrid", "none", "neighbours", "parent"),
                    help="only cProfile the sparse retriever: rank(mode), or search(hybrid, expand=..., budget)")
    args = ap.parse_args(argv)
    CACHE = args.cache
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    results = []
    for n in sizes:
        saved = CACHE / f"search-{'index' if args.index_only else 'results'}-{n}.json"
        if args.report:
            results.append(json.loads(saved.read_text()))
            continue
        path, built = ensure_store(n, args.seed)
        print(f"{path}: {'reused' if built is None else f'built in {built[0]:.1f} s (cpu {built[1]:.1f})'}",
              file=sys.stderr, flush=True)
        if args.build_only:
            continue
        if args.profile:
            profile(path, make_queries(args.queries, args.seed), args.k, args.profile, args.budget)
            continue
        res = bench_size(path, n, make_queries(args.queries, args.seed), args.k, args.budget, args.drop_share,
                         args.index_only)
        res["build_s"], res["build_cpu_s"] = built or (None, None)
        saved.write_text(json.dumps(res, indent=1))
        results.append(res)
        print(f"{fmt_n(n)} done", file=sys.stderr, flush=True)
    if results:
        print(f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, numpy {np.__version__}; "
              f"{args.queries} queries, k={args.k}, budget={args.budget}; single-threaded BLAS\n")
        print(report(results, args.queries))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
