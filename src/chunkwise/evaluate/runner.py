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

from chunkwise.config import DEFAULT_EMBEDDER, ChunkConfig
from chunkwise.errors import ConfigError, about
from chunkwise.evaluate import metrics as m
from chunkwise.evaluate.golden import GoldenQuestion
from chunkwise.retrieve.passages import DEFAULT_PASSAGE_BUDGET

EVAL_GROUP = "eval"  # every document is ingested with this tag and every question asked with it


@dataclass(frozen=True)
class Settings:
    k: int = 10  # passages asked for; recall@1/3/5/10 read from their order
    budget: int | None = 1500  # context tokens, generator tokenizer, the same for every config
    embedder: str = DEFAULT_EMBEDDER
    generator_tokenizer: str | None = None
    overfetch: int = 3
    gate_k: int = 5
    split: str = "all"  # which golden questions: tune, test or all (golden.split_of)
    seed: int = 0  # of the bootstrap intervals
    passage_budget: int | None = DEFAULT_PASSAGE_BUDGET  # tokens a merged passage may grow to (None: unbounded)
    field_weights: str | None = None  # BM25 title/heading weights, "title=N,heading=N" (lexical.FieldWeights)
    fusion: str | None = None  # hybrid's weighted RRF, "bm25=N,dense=N,k=N" (retrieve.fusion.Fusion)
    reranker: str | None = None  # a second stage, "tei:URL" / "cohere:URL#MODEL" (retrieve.rerank)
    rerank_depth: int = 20  # first-stage hits the reranker reorders
    granularity: str = "passage"  # what one result is: a passage, or a page (retrieve.store.Retriever.search)


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

    def row(self, gate_k: int = 5) -> dict:
        c = self.config.chunk
        return {"name": self.config.name, "strategy": c.strategy, "size": c.size, "unit": c.unit,
                "overlap": c.overlap, "header": c.header, "mode": self.config.mode, "expand": self.config.expand,
                "metrics": self.metrics, "se": self.standard_errors(gate_k), "notes": self.notes,
                "questions": [{k: v for k, v in a.items() if k != "retrieved"} for a in self.answers]}

    def standard_errors(self, gate_k: int = 5) -> dict:
        """Standard errors over questions of the headline means (their names as in ``metrics``)."""
        from chunkwise.evaluate.stats import standard_error

        keys = {"recall@1": "hit@1", f"recall@{gate_k}": f"hit@{gate_k}", "mrr": "rr", "token_iou": "iou",
                "context_tokens": "tokens"}
        return {name: standard_error(per_question(self.answers, metric)) for name, metric in keys.items()}


def _stored_chunks(db) -> list[tuple[str, int, int, str, str, int]]:
    """(source_uri, start, end, text, chunk_id, size) of every stored chunk. Golden sets name
    documents by path under the docs root; a document's id may differ (front matter ``id``), its
    source_uri is that path."""
    from chunkwise.store import open_store

    with open_store(db, readonly=True) as store:
        return [(c.source_uri, c.record["start_char"], c.record["end_char"], c.record["text"], c.record["chunk_id"],
                 c.record["size"]) for c in store.chunks()]


def evaluate_chunking(chunk: ChunkConfig, runs: Sequence[tuple[str, str]], docs: str | Path,
                      questions: Sequence[GoldenQuestion], texts: dict[str, str], settings: Settings,
                      workdir: str | Path, embedder=None) -> list[ConfigResult]:
    """Ingest ``docs`` once with ``chunk``, then ask every question once per (mode, expand) in ``runs``.
    ``embedder`` (default: ``make_embedder(settings.embedder)``) makes the stored vectors and the query
    vectors alike, so dense and hybrid runs score the real model, loaded once for every config."""
    from chunkwise.pipeline.ingest import ingest
    from chunkwise.retrieve import Retriever

    db = Path(workdir) / f"{chunk.fingerprint()}.db"
    if embedder is None:
        embedder = make_eval_embedder(settings.embedder)
    stats = ingest([docs], db, chunk, embedder=embedder, acl=(EVAL_GROUP,))
    notes = [f"ingest error: {about(e['path'], e['error'])}" for e in stats.errors]
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
    with Retriever(db, embedder=embedder, generator_tokenizer=settings.generator_tokenizer,
                   field_weights=settings.field_weights, fusion=settings.fusion, reranker=settings.reranker,
                   rerank_depth=settings.rerank_depth) as r:
        # Evaluation scores chunking, not permissions: ask as a reader holding every tag in the store
        # (front matter ``acl`` replaces the eval tag on some documents).
        groups = sorted({t for c in r.store.chunks() for t in c.acl}) or [EVAL_GROUP]
        for mode, expand in runs:
            results, answers, seconds, tokens = [], [], [], []
            for q in questions:
                t0 = time.perf_counter()
                res = r.search(q.question, groups, k=settings.k, mode=mode, expand=expand,
                               budget=settings.budget, overfetch=settings.overfetch,
                               passage_budget=settings.passage_budget, granularity=settings.granularity)
                seconds.append(time.perf_counter() - t0)
                passages = [(p.source_uri or p.doc_id, p.start_char, p.end_char, p.text) for p in res.passages]
                scores = m.score_question(q.spans, passages, copies=copy_ranges(res.passages))
                if q.pages:  # scored by page: the first result on a labelled page answers it
                    scores = replace(scores, rank=m.page_rank(q.pages, [(p.source_uri or p.doc_id, p.page, p.page)
                                                                        for p in res.passages]))
                results.append(scores)
                tokens.append(res.context_tokens)
                answers.append(_question_result(q, scores, passages, res, ranges, settings))
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


def copy_ranges(passages) -> list[list[tuple[str, int, int]]]:
    """Per passage, (doc, start, end) of each identical passage search collapsed into it: a collapsed
    hit stands for every copy, and the golden span may point at any of them."""
    return [[(v.source_uri or v.doc_id, v.start_char, v.end_char) for v in p.also_in if v.start_char is not None]
            for p in passages]


def make_eval_embedder(name: str):
    """The embedder an evaluation ingests and queries with (``none``: no vectors, bm25 runs only)."""
    from chunkwise.embed import make_embedder

    return make_embedder(name)


def _question_result(q: GoldenQuestion, scores: m.QuestionScores, passages: list, res, ranges,
                     settings: Settings) -> dict:
    """One question's outcome: the rank that completes its answer, the passages that hold it, whether
    a chunk boundary cut it (no retriever could return it whole), the context tokens it cost."""
    from chunkwise.evaluate.golden import split_of

    rank = scores.rank
    copies = copy_ranges(res.passages)
    holding = [i for i, p in enumerate(passages) if any(m.holds(r, s) for r in (p, *copies[i]) for s in q.spans)]
    return {"qid": q.id, "question": q.question, "doc": q.spans[0].doc if q.spans else (q.pages[0][0] if q.pages else ""), "split": split_of(q.id),
            "answered": m.hit(rank, settings.gate_k), "rank": rank,
            "straddled": not m.fits(q.spans, ranges), "tokens": res.context_tokens,
            "iou": scores.overlap.iou, "half_answer": scores.half_answer,
            "passages": [{"rank": i + 1, "doc": passages[i][0], "start": passages[i][1], "end": passages[i][2],
                          "chunk_ids": list(res.passages[i].chunk_ids)} for i in holding],
            "retrieved": [{"rank": i, "doc": p[0], "start": p[1], "end": p[2], "text": p[3],
                           "holds_span": i - 1 in holding,
                           "copies": [{"doc": d, "start": a, "end": b} for d, a, b in copies[i - 1]]}
                          for i, p in enumerate(passages, 1)]}


# per-question values the paired comparisons and standard errors are computed from
def per_question(answers: Sequence[dict], metric: str) -> list[float]:
    """``hit@K`` (answer complete within the top K), ``iou``, ``tokens`` or ``rr`` per question."""
    if metric.startswith("hit@") and metric[4:].isdigit():
        k = int(metric[4:])
        return [float(m.hit(a["rank"], k)) for a in answers]
    if metric == "rr":
        return [m.reciprocal_rank(a["rank"]) for a in answers]
    if metric in ("iou", "tokens"):
        return [float(a[metric]) for a in answers]
    raise ConfigError(f"unknown per-question metric {metric!r}: use hit@K, rr, iou or tokens")


COMPARED = ("hit@1", "hit@{k}", "iou", "tokens")  # what the paired comparisons report


# -- grids ---------------------------------------------------------------------------------------

GRID_KEYS = {"strategy", "size", "overlap", "header", "mode", "expand", "unit", "tokenizer"}


def load_grid(path: str | Path) -> dict:
    """A grid file: TOML (``[grid]`` table or top level) or JSON, each key a value or a list."""
    from chunkwise.textfile import read_text

    p = Path(path)
    text = read_text(p, "--grid")
    try:
        if p.suffix == ".json":
            data = json.loads(text)
        else:
            import tomllib

            data = tomllib.loads(text)
    except ValueError as exc:
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
    embedder: str = ""  # the resolved name (model@version) of the embedder that made every vector

    def rows(self) -> list[dict]:
        return [r.row(self.settings.gate_k) for r in self.results]

    def chosen(self) -> ConfigResult:
        """The config this evaluation picks: highest recall@gate_k, then recall@1, then token IoU, then
        fewer context tokens and a smaller index (then the name, so ties break the same way)."""
        k = self.settings.gate_k
        by_name = sorted(self.results, key=lambda r: r.config.name)  # max keeps the first of equals
        return max(by_name, key=lambda r: (r.metrics[f"recall@{k}"], r.metrics["recall@1"], r.metrics["token_iou"],
                                           -r.metrics["context_tokens"], -r.metrics["index_bytes"]))

    def comparisons(self) -> dict:
        """Every other config against the chosen one, question by question (same questions): the
        difference (other - chosen) of hit@1, hit@gate_k, IoU and context tokens, with its standard
        error and a seeded bootstrap interval."""
        from chunkwise.evaluate.stats import LEVEL, RESAMPLES, paired

        ref = self.chosen()
        metrics = [c.format(k=self.settings.gate_k) for c in COMPARED]
        rows = [paired(metric, ref.config.name, per_question(ref.answers, metric), r.config.name,
                       per_question(r.answers, metric), seed=self.settings.seed).to_dict()
                for r in self.results if r is not ref for metric in metrics]
        return {"reference": ref.config.name, "metrics": metrics, "resamples": RESAMPLES, "seed": self.settings.seed,
                "level": LEVEL, "rows": rows}

    def to_dict(self) -> dict:
        rows = self.rows()
        return {"settings": self.settings.__dict__, "embedder": self.embedder,
                "questions": {"split": self.settings.split, "count": len(self.questions)},
                "configs": rows, "chosen": self.chosen().config.name, "best": best_per_metric(rows),
                "pareto": pareto_front(rows), "comparisons": self.comparisons(), "skipped": self.skipped}

    def below(self, min_recall: float) -> list[str]:
        key = f"recall@{self.settings.gate_k}"
        return [r.config.name for r in self.results if r.metrics[key] < min_recall]

    def report_data(self, title: str, command: str) -> dict:
        from datetime import datetime, timezone

        data = self.to_dict()
        return {"title": title, "generated_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "command": command, "audit": self.audit, "configs": data["configs"], "best": data["best"],
                "pareto": data["pareto"], "chosen": data["chosen"], "comparisons": data["comparisons"],
                "embedder": self.embedder, "split": self.settings.split, "questions": len(self.questions),
                "viewer": viewer(self.chosen(), self.texts, self.questions)}


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
    from chunkwise.pipeline.audit import audit_sources
    from chunkwise.sources import iter_sources

    out = []
    for row in audit_sources(iter_sources([docs], root=docs)):  # parsed in a contained worker
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
    from chunkwise.evaluate.golden import load_golden_texts, select_split

    questions, texts = load_golden_texts(golden, docs)
    questions = select_split(questions, settings.split)
    needs_vectors = any(mode != "bm25" for _, runs in configs for mode, _ in runs)
    embedder = make_eval_embedder(settings.embedder) if needs_vectors else None  # BM25 alone embeds nothing
    if embedder is None and needs_vectors:
        raise ConfigError(f"--embedder {settings.embedder} stores no vectors, so dense and hybrid runs cannot be "
                          f"scored: use --mode bm25 or an embedder such as {DEFAULT_EMBEDDER}")
    results: list[ConfigResult] = []
    with tempfile.TemporaryDirectory(prefix="chunkwise-eval-") as work:
        for chunk, runs in configs:
            if progress:
                progress(chunk)
            results.extend(evaluate_chunking(chunk, runs, docs, questions, texts, settings, work, embedder))
    return Evaluation(results, list(skipped), audit_rows(docs), texts, questions, settings,
                      embedder.name if embedder is not None else "none")
