"""The rerank stage's gain and cost on a labelled set, through the product's eval path (issue 29 item 4).

Why: a second stage is worth its latency only if it moves the first ranks. No cross-encoder packaged
for offline use was found on the package lists this machine can install from (docs/_figures/quality.md
says which were searched), and no rerank service runs here, so this script serves the stage itself:
a loopback HTTP server in text-embeddings-inference's ``/rerank`` shape (``--shape tei``) or
Cohere/Jina's ``/v1/rerank`` shape (``--shape cohere``) whose score is the default embedder's cosine
of the query and the whole candidate text (the only local model: a bi-encoder, not a cross-encoder).
The service keeps each candidate's vector once computed (candidates recur across questions; the
machine is too loaded to re-embed 20 texts per query), so the cost rows are the stage's own overhead
(HTTP, JSON, the query's embedding, cosine, reordering): a cross-encoder adds its inference on
``depth`` (query, text) pairs per query on top. The rows also show what reordering by that score
does to R@1 / R@5 / the span metric; a real cross-encoder's gain would have to be measured where one is installed, with the same command and
``--rerank`` pointed at it (``--service URL``).

    python benchmarks/rerank_gain.py --golden eval/examples.golden.jsonl --docs examples \\
        --stores /tmp/stores --chunks auto/254/0 --depth 20

Each question is asked twice in one process, on the same store: first stage only, then first stage +
rerank; one JSON line per (run, split) as ``quality_sweep.py`` prints, plus ``sec_per_query_p50`` (median
wall seconds of a search, query embedding included) and ``cpu_per_query`` (process CPU seconds, the
loopback service's scoring included: it runs in this process).
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from quality_sweep import RECALLS, _record_recall, parse_chunk, rows  # noqa: E402

from chunkwise.evaluate.golden import load_golden_texts, select_split  # noqa: E402
from chunkwise.evaluate.runner import Settings, evaluate_chunking, make_eval_embedder  # noqa: E402


class CosineService:
    """A rerank service on loopback, in one of the two request shapes, scoring by embedder cosine."""

    def __init__(self, embedder, shape: str) -> None:
        import numpy as np

        outer = self
        self.shape, self.requests = shape, 0
        self.cache: dict = {}  # text -> vector: candidates recur across questions

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                texts = body["texts"] if shape == "tei" else body["documents"]
                q = np.asarray(embedder.embed([body["query"]])[0], dtype=np.float32)
                todo = [t for t in dict.fromkeys(texts) if t not in outer.cache]
                if todo:
                    outer.cache.update(zip(todo, np.asarray(embedder.embed(todo), dtype=np.float32)))
                m = np.stack([outer.cache[t] for t in texts])
                scores = (m @ q) / (np.linalg.norm(m, axis=1) * np.linalg.norm(q) + 1e-12)
                order = sorted(range(len(texts)), key=lambda i: -scores[i])
                if shape == "tei":
                    answer = [{"index": i, "score": float(scores[i])} for i in order]
                else:
                    answer = {"results": [{"index": i, "relevance_score": float(scores[i])}
                                          for i in order][:body["top_n"]]}
                outer.requests += 1
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def spec(self) -> str:
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        return f"tei:{base}" if self.shape == "tei" else f"cohere:{base}/v1#minilm-cosine"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--golden", required=True)
    ap.add_argument("--docs", required=True)
    ap.add_argument("--stores", required=True)
    ap.add_argument("--chunks", default="auto/254/0", help="strategy/size/overlap (default: the default config's)")
    ap.add_argument("--split", default="all", choices=("all", "tune", "test"))
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--depth", type=int, default=20)
    ap.add_argument("--shape", default="tei", choices=("tei", "cohere"))
    ap.add_argument("--service", help="a real rerank service spec (tei:URL / cohere:URL#MODEL) instead of loopback")
    args = ap.parse_args(argv)
    _record_recall()
    questions, texts = load_golden_texts(args.golden, args.docs)
    questions = select_split(questions, args.split)
    base = Settings(k=args.k, budget=None, split=args.split)
    embedder = make_eval_embedder(base.embedder)
    chunk = parse_chunk(args.chunks)
    service = CosineService(embedder, args.shape)
    with service:
        from chunkwise.retrieve.rerank import make_reranker

        spec = make_reranker(args.service or service.spec())
        spec.timeout = 600.0  # a loaded machine: the stage is measured, not raced
        for name, settings in (("first stage", base), (f"+ rerank {args.shape} depth {args.depth}",
                                                       replace(base, reranker=spec, rerank_depth=args.depth))):
            RECALLS.clear()
            t0, c0 = time.perf_counter(), time.process_time()
            (result,) = evaluate_chunking(chunk, [("hybrid", "none")], args.docs, questions, texts, settings,
                                          args.stores, embedder)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            per_query = [a for a in result.answers]
            for r in rows(result, list(RECALLS), args.chunks, name, wall):
                r["sec_per_query_p50"] = round(result.metrics["latency_ms_p50"] / 1000, 4)
                r["cpu_per_query"] = round(cpu / max(len(per_query), 1), 4)
                print(json.dumps(r), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
