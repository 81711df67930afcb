"""Evaluate chunking configs end to end: ingest each into its own temporary store, ask every golden
question through the real retriever (merge, expansion, budget), score the final context.

Every config gets the same token budget and the same k, so a config is not rewarded for sending
more text ("equal top-k is not equal context"). Retriever-free layout scores (fits, straddle,
inflation, chunk sizes, boundary coherence) come from the chunks actually stored.
"""
from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

from chunkwise.config import ChunkConfig
from chunkwise.errors import ConfigError
from chunkwise.evaluate import metrics as m
from chunkwise.evaluate.golden import GoldenQuestion

EVAL_GROUP = "eval"  # every document is ingested with this tag and every question asked with it


@dataclass(frozen=True)
class Settings:
    k: int = 10  # passages asked for; recall@1/3/5/10 read from their order
    budget: int | None = 1500  # context tokens, generator tokenizer, the same for every config
    embedder: str = "hashing"
    generator_tokenizer: str | None = None
    overfetch: int = 3
    gate_k: int = 5


@dataclass(frozen=True)
class RunConfig:
    chunk: ChunkConfig
    mode: str = "hybrid"
    expand: str = "none"

    @property
    def name(self) -> str:
        c = self.chunk
        parts = [c.strategy, f"{c.size}{'' if c.unit == 'tokens' else c.unit[0]}"]
        if c.overlap:
            parts.append(f"o{c.overlap}")
        if c.header != "none":
            parts.append(f"h-{c.header}")
        parts.append(self.mode)
        if self.expand != "none":
            parts.append(f"x-{self.expand}")
        return "/".join(parts)


@dataclass
class ConfigResult:
    config: RunConfig
    metrics: dict
    chunks: list[tuple[str, int, int, str]]  # (doc, start, end, chunk_id)
    answers: list[dict]  # per question: retrieved passages and whether it was answered
    notes: list[str] = field(default_factory=list)

    def row(self) -> dict:
        c = self.config.chunk
        return {"name": self.config.name, "strategy": c.strategy, "size": c.size, "unit": c.unit,
                "overlap": c.overlap, "header": c.header, "mode": self.config.mode, "expand": self.config.expand,
                "metrics": self.metrics, "notes": self.notes}


def _stored_chunks(db) -> list[tuple[str, int, int, str, str, int]]:
    """(source_uri, start, end, text, chunk_id, size) of every stored chunk. Golden sets name
    documents by path under the docs root; a document's id may differ (front matter ``id``), its
    source_uri is that path."""
    from chunkwise.store import open_store

    with open_store(db, readonly=True) as store:
        return [(c.source_uri, c.record["start_char"], c.record["end_char"], c.record["text"], c.record["chunk_id"],
                 c.record["size"]) for c in store.iter_chunks()]


def evaluate_chunking(chunk: ChunkConfig, runs: Sequence[tuple[str, str]], docs: str | Path,
                      questions: Sequence[GoldenQuestion], texts: dict[str, str], settings: Settings,
                      workdir: str | Path) -> list[ConfigResult]:
    """Ingest ``docs`` once with ``chunk``, then ask every question once per (mode, expand) in ``runs``."""
    from chunkwise.embed import make_embedder
    from chunkwise.pipeline.ingest import ingest
    from chunkwise.retrieve import Retriever

    db = Path(workdir) / f"{chunk.fingerprint()}.db"
    embedder = make_embedder(settings.embedder)
    stats = ingest([docs], db, chunk, embedder=embedder, acl=(EVAL_GROUP,))
    notes = [f"ingest error: {e['path']}: {e['error']}" for e in stats.errors]
    stored = _stored_chunks(db)
    ranges = [(d, s, e) for d, s, e, *_ in stored]
    spans = [s for q in questions for s in q.spans]
    lengths = {doc: len(t) for doc, t in texts.items()}
    sizes = m.size_stats(c[5] for c in stored)
    layout = {
        "fits": sum(m.fits(q.spans, ranges) for q in questions) / len(questions),
        "straddle_rate": m.straddle_rate(spans, ranges),
        "index_inflation": m.index_inflation([r for r in ranges if r[0] in lengths], lengths),
        "chunks": len(stored),
        "mean_chunk_size": sizes.mean,
        "max_chunk_size": sizes.max,
        "boundary_coherence": m.boundary_coherence(c[3] for c in stored),
        "index_bytes": m.store_bytes(db),
    }
    out = []
    with Retriever(db, generator_tokenizer=settings.generator_tokenizer) as r:
        # Evaluation scores chunking, not permissions: ask as a reader holding every tag in the store
        # (front matter ``acl`` replaces the eval tag on some documents).
        groups = sorted(r.store.access_tags()) or [EVAL_GROUP]
        for mode, expand in runs:
            results, answers, seconds, tokens = [], [], [], []
            for q in questions:
                t0 = time.perf_counter()
                res = r.search(q.question, groups, k=settings.k, mode=mode, expand=expand,
                               budget=settings.budget, overfetch=settings.overfetch)
                seconds.append(time.perf_counter() - t0)
                passages = [(p.source_uri or p.doc_id, p.start_char, p.end_char, p.text) for p in res.passages]
                results.append(m.score_question(q.spans, passages))
                tokens.append(res.context_tokens)
                rank = m.answered_rank(q.spans, passages)
                answers.append({"qid": q.id, "question": q.question, "doc": q.spans[0].doc if q.spans else "",
                                "answered": rank is not None and rank <= settings.gate_k, "rank": rank,
                                "retrieved": [{"rank": i, "doc": p[0], "start": p[1], "end": p[2], "text": p[3],
                                               "holds_span": any(m.holds(p, s) for s in q.spans)}
                                              for i, p in enumerate(passages, 1)]})
            summary = m.summarise(results)
            metrics = {
                **{f"recall@{k}": summary[f"recall@{k}"] for k in (1, 3, 5, 10)},
                "mrr": summary["mrr"], "half_answer_rate": summary["half_answer_rate"],
                "token_recall": summary["overlap_recall"], "token_precision": summary["overlap_precision"],
                "token_iou": summary["overlap_iou"], "duplicate_span_rate": summary["duplicate_rate"],
                "context_tokens": sum(tokens) / len(tokens), "latency_ms_p50": 1000 * m.latency_p50(seconds),
                **layout,
            }
            out.append(ConfigResult(RunConfig(chunk, mode, expand), metrics,
                                    [(d, s, e, c[4]) for (d, s, e), c in zip(ranges, stored)], answers, list(notes)))
    return out


# -- grids ---------------------------------------------------------------------------------------

GRID_KEYS = {"strategy", "size", "overlap", "header", "mode", "expand", "unit", "tokenizer"}


def load_grid(path: str | Path) -> dict:
    """A grid file: TOML (``[grid]`` table or top level) or JSON, each key a value or a list."""
    p = Path(path)
    try:
        if p.suffix == ".json":
            data = json.loads(p.read_text(encoding="utf-8"))
        else:
            import tomllib

            data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--grid {path}: cannot read it ({exc}); expected TOML or JSON like "
                          "strategy = [\"recursive\", \"structure\"], size = [128, 256]") from exc
    data = data.get("grid", data)
    unknown = set(data) - GRID_KEYS
    if unknown:
        raise ConfigError(f"--grid {path}: unknown key(s) {sorted(unknown)}; allowed: {sorted(GRID_KEYS)}")
    return {k: v if isinstance(v, list) else [v] for k, v in data.items()}


def expand_grid(grid: dict, base: dict) -> tuple[list[tuple[ChunkConfig, list[tuple[str, str]]]], list[str]]:
    """Chunk configs (each with its retrieval runs) from a grid; impossible combinations
    (overlap >= size, ...) are listed as skipped with the reason instead of failing the sweep."""
    import itertools

    chunk_keys = [k for k in ("strategy", "size", "overlap", "header", "unit", "tokenizer") if k in grid]
    modes = grid.get("mode", [base.get("mode", "hybrid")])
    expands = grid.get("expand", [base.get("expand", "none")])
    runs = [(mo, ex) for mo in modes for ex in expands]
    base_chunk = {k: v for k, v in base.items() if k not in ("mode", "expand")}
    out, skipped = [], []
    for values in itertools.product(*(grid[k] for k in chunk_keys)):
        params = {**base_chunk, **dict(zip(chunk_keys, values))}
        try:
            out.append((ChunkConfig(**params), runs))
        except ConfigError as exc:
            skipped.append(f"{params}: {exc}")
    if not out:
        raise ConfigError("the grid has no valid configuration: " + "; ".join(skipped[:3]))
    return out, skipped


def pareto_front(rows: Sequence[dict], better: str = "recall@5", cheaper: str = "index_bytes") -> list[str]:
    """Configs no other config beats on both (higher ``better``, lower ``cheaper``)."""
    front = []
    for a in rows:
        ya, xa = a["metrics"].get(better), a["metrics"].get(cheaper)
        dominated = any(
            b is not a and b["metrics"][better] >= ya and b["metrics"][cheaper] <= xa
            and (b["metrics"][better] > ya or b["metrics"][cheaper] < xa)
            for b in rows)
        if not dominated:
            front.append(a["name"])
    return front


LOWER_IS_BETTER = {"straddle_rate", "half_answer_rate", "index_inflation", "chunks", "duplicate_span_rate",
                   "context_tokens", "latency_ms_p50", "index_bytes", "max_chunk_size", "mean_chunk_size"}


def best_per_metric(rows: Sequence[dict]) -> dict[str, str]:
    out = {}
    for key in rows[0]["metrics"] if rows else ():
        vals = [(r["metrics"][key], r["name"]) for r in rows if isinstance(r["metrics"].get(key), (int, float))]
        if not vals:
            continue
        pick = min(vals, key=lambda v: (v[0], v[1])) if key in LOWER_IS_BETTER else min(vals, key=lambda v: (-v[0], v[1]))
        out[key] = pick[1]
    return out


# -- the whole evaluation ------------------------------------------------------------------------

@dataclass
class Evaluation:
    results: list[ConfigResult]
    skipped: list[str]
    audit: list[dict]
    texts: dict[str, str]
    questions: list[GoldenQuestion]
    settings: Settings

    def rows(self) -> list[dict]:
        return [r.row() for r in self.results]

    def to_dict(self) -> dict:
        rows = self.rows()
        return {"settings": self.settings.__dict__, "configs": rows, "best": best_per_metric(rows),
                "pareto": pareto_front(rows), "skipped": self.skipped}

    def below(self, min_recall: float) -> list[str]:
        key = f"recall@{self.settings.gate_k}"
        return [r.config.name for r in self.results if r.metrics[key] < min_recall]

    def report_data(self, title: str, command: str) -> dict:
        from datetime import datetime, timezone

        data = self.to_dict()
        shown = max(self.results, key=lambda r: (r.metrics["recall@5"], -r.metrics["index_bytes"]))
        return {"title": title, "generated_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "command": command, "audit": self.audit, "configs": data["configs"], "best": data["best"],
                "pareto": data["pareto"], "viewer": viewer(shown, self.texts, self.questions)}


def viewer(result: ConfigResult, texts: dict[str, str], questions: Sequence[GoldenQuestion]) -> dict:
    """The chunk-boundary viewer's data: documents with boundaries and answer spans, and answers."""
    ranges = [(d, s, e) for d, s, e, _ in result.chunks]
    docs = []
    for doc in sorted({s.doc for q in questions for s in q.spans}):
        spans = [{"qid": q.id, "start": s.start, "end": s.end, "straddled": not m.fits([s], ranges)}
                 for q in questions for s in q.spans if s.doc == doc]
        docs.append({"doc": doc, "text": texts.get(doc, ""),
                     "chunks": [{"chunk_id": c, "start": s, "end": e} for d, s, e, c in result.chunks if d == doc],
                     "spans": spans})
    return {"config": result.config.name, "documents": docs, "questions": result.answers}


def audit_rows(docs: str | Path) -> list[dict]:
    """The extraction audit in the report's shape (tier 1: a bad PDF shows before any chunk does)."""
    from chunkwise.extract.audit import audit_document, audit_failure
    from chunkwise.pipeline.documents import SourceFailure, iter_documents

    out = []
    for item in iter_documents([docs], root=docs):
        row = audit_failure(item.source, item.error, item.skipped) if isinstance(item, SourceFailure) else audit_document(item)
        d = row.to_dict()
        status = {"ok": "ok", "warn": "warning"}.get(d.get("status", ""), "error")
        out.append({"source": d.get("source", ""), "status": status, "pages": d.get("pages"),
                    "empty_pages": d.get("empty_pages", 0), "chars_per_page": d.get("chars_per_page"),
                    "cid_garbage": d.get("cid_artifacts", 0), "language": d.get("language", ""),
                    "needs_ocr": bool(d.get("needs_ocr")),
                    "notes": list(d.get("warnings") or ()) + ([d["error"]] if d.get("error") else [])})
    return out


def run_eval(golden: str | Path, docs: str | Path, configs: Sequence[tuple[ChunkConfig, list[tuple[str, str]]]],
             settings: Settings = Settings(), *, skipped: Sequence[str] = (), progress=None) -> Evaluation:
    """Evaluate every chunk config (each in its own temporary store) on the golden set."""
    from chunkwise.evaluate.golden import load_golden_texts

    questions, texts = load_golden_texts(golden, docs)
    results: list[ConfigResult] = []
    with tempfile.TemporaryDirectory(prefix="chunkwise-eval-") as work:
        for chunk, runs in configs:
            if progress:
                progress(chunk)
            results.extend(evaluate_chunking(chunk, runs, docs, questions, texts, settings, work))
    return Evaluation(results, list(skipped), audit_rows(docs), texts, questions, settings)
