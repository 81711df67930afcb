"""Recall against IoU for many assembly settings at once: rank every question once, replay assembly.

Why: through ``chunkwise eval`` (benchmarks/quality_sweep.py) every retrieval setting re-ranks every
question: a query embedding, BM25 and the dense scan each time, which on a loaded 2-core machine is
most of a run. The ranking does not depend on the passage budget, k or the fusion weights, so this
script ranks each question once per chunk config (the BM25 and dense lists, 100 deep, cached beside
the store), then for each setting fuses them with the product's ``Fusion``, turns them into hits with
the product's ``Retriever.hits`` and ``resolve_versions`` (latest only) and assembles them with the
product's ``assemble_hits`` -- the steps ``Retriever.search`` runs. It leaves out what a question can
switch on through its words (a named version, ``retrieve/version_intent.py``): on a corpus without
versions (Chroma's) a row equals ``chunkwise eval --k 5 --budget none`` with the same flags; on
examples/, which holds versioned documents, quality_sweep.py is the reference.

``--focus N`` (an experiment, not a product option) cuts each passage to the run of whole sentences of
at most N generator tokens holding the most idf-weighted query terms, to measure whether lexical
trimming keeps the answer (it does not: see docs/_figures/s3-chroma.md).

    python benchmarks/assembly_frontier.py --golden chroma.jsonl --docs ../shared/data/chroma/corpora \\
        --stores CACHE/stores --chunks auto/128/0 --runs "pb=512;pb=256;pb=1;mode=bm25 pb=512"

A run is space-separated ``key=value``: ``k`` (5), ``pb`` (passage budget, ``none`` for unbounded;
512), ``mode`` (hybrid, bm25, dense), ``fusion`` (``bm25=1/dense=0.5``), ``focus`` (tokens), ``trim``
(1: the shortest best window). One JSON line per (run, split) with Chroma's span recall and IoU (%),
R@1, R@5 and the context tokens (generator tokenizer), means over questions.
"""
from __future__ import annotations

import argparse
import json
import math
import pickle
import sys
import time
from pathlib import Path

from chunkwise.chunking.boundaries import sentence_spans
from chunkwise.config import ChunkConfig
from chunkwise.evaluate import metrics as m
from chunkwise.evaluate.golden import load_golden_texts, split_of
from chunkwise.evaluate.runner import EVAL_GROUP, copy_ranges, make_eval_embedder
from chunkwise.lexical import analyze, query_terms
from chunkwise.pipeline.ingest import ingest
from chunkwise.retrieve import Retriever
from chunkwise.retrieve.assembly import assemble_hits
from chunkwise.retrieve.fusion import Fusion

DEPTH = 100  # of each cached list; hybrid fuses the first 50 (retrieve.index.HYBRID_DEPTH)


def parse_chunk(spec: str) -> ChunkConfig:
    parts = spec.split("/")
    return ChunkConfig(strategy=parts[0], size=int(parts[1]), overlap=int(parts[2]) if len(parts) > 2 else 0)


def ranked_lists(r: Retriever, questions, groups, cache: Path) -> list:
    if cache.exists():
        return pickle.loads(cache.read_bytes())
    lists = [([k for k, _ in r._rank(q.question, groups, DEPTH, "bm25")],
              [k for k, _ in r._rank_dense(r._query_vector(q.question), groups, DEPTH)]) for q in questions]
    cache.write_bytes(pickle.dumps(lists))
    return lists


class Focus:
    """The experiment: a passage cut to its best window of whole sentences by idf-weighted query terms."""

    def __init__(self, r: Retriever, texts: dict[str, str]) -> None:
        self.r, self.texts, self.df, self.n = r, texts, {}, 0
        for c in r.store.chunks():
            self.n += 1
            for t in set(analyze(c.record["text"])):
                self.df[t] = self.df.get(t, 0) + 1

    def weight(self, term: str) -> float:
        df = self.df.get(term, 0)
        return math.log(1 + (self.n - df + 0.5) / (df + 0.5))

    def __call__(self, query: str, passages, limit: int, shortest: bool):
        terms, out, tokens = set(query_terms(query)), [], 0
        for doc, a, b, text in passages:
            full = self.texts[doc]
            sents = sentence_spans(full, a, b)
            if not sents:
                out.append((doc, a, b, text))
                tokens += self.r.sizer.count(text)
                continue
            found = [set(analyze(full[x:y])) & terms for x, y in sents]
            sizes = [self.r.sizer.count(full[x:y]) for x, y in sents]
            best = None
            for i in range(len(sents)):
                held, size = set(), 0
                for j in range(i, len(sents)):
                    if j > i and size + sizes[j] > limit:
                        break
                    size += sizes[j]
                    held |= found[j]
                    key = (sum(self.weight(t) for t in held), -size if shortest else size)
                    if best is None or key > best[0]:
                        best = (key, i, j)
            x, y = sents[best[1]][0], sents[best[2]][1]
            out.append((doc, x, y, full[x:y]))
            tokens += self.r.sizer.count(full[x:y])
        return out, tokens


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--golden", required=True)
    ap.add_argument("--docs", required=True)
    ap.add_argument("--stores", required=True, help="folder of the persistent per-config stores (and rank caches)")
    ap.add_argument("--chunks", required=True, help="comma-separated strategy/size/overlap")
    ap.add_argument("--runs", required=True, help="';'-separated runs of space-separated key=value settings")
    ap.add_argument("--embedder", default="minilm-onnx-int8")
    args = ap.parse_args(argv)
    questions, texts = load_golden_texts(args.golden, args.docs)
    embedder = make_eval_embedder(args.embedder)
    Path(args.stores).mkdir(parents=True, exist_ok=True)
    for spec in args.chunks.split(","):
        chunk = parse_chunk(spec)
        db = Path(args.stores) / f"{chunk.fingerprint()}.db"
        t0 = time.perf_counter()
        ingest([args.docs], db, chunk, embedder=embedder, acl=(EVAL_GROUP,))
        with Retriever(db, embedder=embedder) as r:
            groups = sorted({t for c in r.store.chunks() for t in c.acl}) or [EVAL_GROUP]
            lists = ranked_lists(r, questions, groups, db.with_suffix(f".{Path(args.golden).stem}.ranks.pkl"))
            print(f"{spec}: ingested and ranked in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
            focus = None
            for run in args.runs.split(";"):
                opts = dict(x.split("=", 1) for x in run.split())
                k, mode = int(opts.get("k", 5)), opts.get("mode", "hybrid")
                pb = None if opts.get("pb", "512") == "none" else int(opts.get("pb", "512"))
                fusion = Fusion.parse(opts.get("fusion", "bm25=1/dense=0.5").replace("/", ","))
                if "focus" in opts and focus is None:
                    focus = Focus(r, texts)
                rows: dict[str, list] = {"all": [], "tune": [], "test": []}
                for q, (bm25, dense) in zip(questions, lists):
                    if mode == "hybrid":
                        ranked = fusion.fuse(bm25[:50], dense[:50], r._tie_order, 60)
                    else:
                        ranked = [(key, 1.0 / i) for i, key in enumerate((bm25 if mode == "bm25" else dense)[:60], 1)]
                    hits = r.resolve_versions(r.hits(ranked, groups), groups, latest_only=True)
                    ctx = assemble_hits(hits, k=k, measure=r.sizer.count, budget=None, passage_budget=pb)
                    got = [(p.source_uri or p.doc_id, p.start_char, p.end_char, p.text) for p in ctx.passages]
                    copies, tokens = copy_ranges(ctx.passages), ctx.tokens
                    if "focus" in opts:
                        got, tokens = focus(q.question, got, int(opts["focus"]), opts.get("trim") == "1")
                        copies = None
                    s = m.score_question(q.spans, got, copies=copies)
                    row = (s.overlap.recall, s.overlap.iou, s.rank is not None and s.rank <= 1,
                           s.rank is not None and s.rank <= 5, tokens)
                    rows["all"].append(row)
                    rows[split_of(q.id)].append(row)
                for split, got_rows in rows.items():
                    if not got_rows:
                        continue
                    mean = lambda i: sum(float(x[i]) for x in got_rows) / len(got_rows)  # noqa: E731
                    print(json.dumps({"chunks": spec, "run": run, "split": split, "n": len(got_rows),
                                      "recall": round(100 * mean(0), 1), "iou": round(100 * mean(1), 2),
                                      "r1": round(mean(2), 3), "r5": round(mean(3), 3), "ctx": round(mean(4))}),
                          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
