"""Seed 001's overlap, merge and header experiments, rebuilt on chunkwise's own parts.

The corpora are generated exactly as the seed describes (same generator, same numpy draws, so seed
0 gives the seed's 94,519-word corpus); the chunking, retrieval and merging are chunkwise's
(``fixed``/``structure`` chunkers, ``MemoryIndex``, ``merge_hits``). The seed ranked with its own
TF-IDF; the lexical ranker here is chunkwise's BM25, so figures that depend only on where the cuts
fall (straddling, inflation) match exactly and retrieval figures match within sampling error.
The seed's published figures are kept beside each result so a reader sees both.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

from chunkwise.errors import ConfigError, DependencyError
from chunkwise.evaluate.metrics import holds, touches

# --- the seed's published figures (seed 001, blocks 4, 5 and 8) ---------------------------------------
# O -> (inflation, straddle formula, straddle measured, recall@5, recall@5 | fits); 5 corpora x 800 questions
SEED_OVERLAP = {0: (1.000, 0.250, 0.242, 0.758, 1.000), 10: (1.105, 0.166, 0.154, 0.847, 1.000),
                20: (1.234, 0.064, 0.057, 0.943, 1.000), 30: (1.398, 0.002, 0.000, 1.000, 1.000),
                34: (1.477, 0.000, 0.000, 1.000, 1.000), 50: (1.919, 0.000, 0.000, 1.000, 1.000)}
SEED_OVERLAP_QUESTIONS = 4000
# S=100, O=50, corpus seed 0, 800 questions: (passages, words sent) for raw top-5, merged, over-fetch 15
SEED_MERGE = {"raw": (5.0, 500), "merged": (3.90, 435), "refilled": (5.00, 563)}
# arm -> (words/chunk, recall@1, recall@3, @1 body names product, @1 body does not); 5 corpora x 180 questions
SEED_HEADERS = {"no header": (16.5, 0.237, 0.290, 1.000, 0.010),
                "section title only": (17.8, 0.238, 0.291, 1.000, 0.011),
                "path without document title": (19.8, 0.240, 0.288, 1.000, 0.014),
                "full path": (24.8, 1.000, 1.000, 1.000, 1.000)}
SEED_HEADER_QUESTIONS = 900

# --- generators (verbatim from the seed so the draws match) --------------------------------------------
FILLER_SYL = ["be", "ro", "tu", "mi", "sa", "ne", "po", "li", "da", "vu", "ge", "ho"]
NAME_SYL = ["ka", "lo", "mir", "ven", "tal", "dre", "sho", "bru", "nel", "pax", "zor", "fim"]
THINGS = ["reactor", "bridge", "tunnel", "library", "harbor", "foundry", "station", "canal"]
AUTHORITIES = ["halden", "orsk", "pelham", "tarn", "vossen", "marek", "linden", "garrow"]
TOPICS = [
    ("Setup", "Resetting",
     "Hold the reset button for {n} seconds until the light blinks. This restores the factory settings.",
     "how many seconds do I hold the reset button on the {p}"),
    ("Setup", "Firmware updates",
     "Open the settings menu and choose update. The download is {n} megabytes and takes a few minutes.",
     "how many megabytes is the firmware update download for the {p}"),
    ("Support", "Warranty", "The warranty lasts {n} months from the date of purchase. Keep the receipt as proof.",
     "how many months does the warranty last on the {p}"),
    ("Support", "Error codes", "Error {n} means the sensor needs recalibration. Restart the device and try again.",
     "which error code means the sensor needs recalibration on the {p}"),
    ("Care", "Battery", "A full charge takes about {n} hours. Do not leave the battery charging overnight.",
     "how many hours does a full charge take on the {p}"),
    ("Care", "Cleaning", "Wipe the housing with a dry cloth. The cleaning cycle runs {n} minutes and needs no water.",
     "how many minutes does the cleaning cycle run on the {p}"),
]
GROUPS = ("all",)  # every generated chunk is public: access control is not what these experiments test


def _numpy():
    try:
        import numpy
    except ImportError as exc:
        raise DependencyError("the seed 001 experiments need numpy; install with: "
                              "pip install 'chunkwise[all]'") from exc
    return numpy


@dataclass(frozen=True)
class Fact:
    """A planted two-sentence fact: words [start, end) of document ``doc``, and its question."""

    doc: int
    start: int
    end: int
    query: str


@dataclass(frozen=True)
class FactCorpus:
    docs: tuple[tuple[str, ...], ...]
    facts: tuple[Fact, ...]

    def texts(self) -> list[str]:
        return [" ".join(words) for words in self.docs]

    def char_span(self, fact: Fact) -> tuple[int, int]:
        """Character offsets of the fact's evidence in ``texts()[fact.doc]`` (words joined by one space)."""
        words = self.docs[fact.doc]
        start = sum(len(w) + 1 for w in words[:fact.start])
        return start, start + len(" ".join(words[fact.start:fact.end]))


def fact_corpus(seed: int, n_docs: int = 100, facts_per_doc: int = 8, n_filler_words: int = 300) -> FactCorpus:
    """Seed 001 block 2: pseudo-word documents with facts of 18-34 words at known positions. Sentence A
    names a thing, sentence B says who approved "it": the question needs both halves in one chunk."""
    if n_docs < 1 or facts_per_doc < 1 or n_docs * facts_per_doc > len(NAME_SYL) ** 3:
        raise ConfigError(f"need 1 <= docs x facts <= {len(NAME_SYL) ** 3} (one unique name per fact), "
                          f"got {n_docs} x {facts_per_doc}")
    np = _numpy()
    rng = np.random.default_rng(seed)
    pool = sorted({"".join(rng.choice(FILLER_SYL, size=rng.integers(2, 4))) for _ in range(n_filler_words * 3)})
    vocab = [str(w) for w in rng.permutation(pool)[:n_filler_words]]
    zipf = 1 / np.arange(1, len(vocab) + 1)
    zipf /= zipf.sum()
    names = rng.choice(len(NAME_SYL) ** 3, size=n_docs * facts_per_doc, replace=False)

    def filler(n):
        return list(rng.choice(vocab, size=n, p=zipf))

    docs, facts, k = [], [], 0
    for d in range(n_docs):
        words: list = []
        for _ in range(facts_per_doc):
            words += filler(rng.integers(20, 140))
            i = int(names[k])
            k += 1
            ent = NAME_SYL[i % 12] + NAME_SYL[(i // 12) % 12] + NAME_SYL[i // 144]
            thing, auth = rng.choice(THINGS), rng.choice(AUTHORITIES)
            a = ["the", ent, thing, "was", "built", "in", "the", filler(1)[0], "district"] + filler(rng.integers(0, 9))
            b = ["it", "was", "approved", "by", "the", auth, "committee", "in", str(rng.integers(1900, 2000))]
            b += filler(rng.integers(0, 9))
            start = len(words)
            words += a + b
            facts.append(Fact(d, start, len(words), f"which committee approved the {ent} {thing}"))
        words += filler(rng.integers(20, 140))
        docs.append(tuple(str(w) for w in words))
    return FactCorpus(tuple(docs), tuple(facts))


@dataclass(frozen=True)
class ManualQuestion:
    text: str
    doc_id: str
    section: str  # the subsection holding the answer
    body_names_product: bool


@dataclass(frozen=True)
class Manuals:
    docs: tuple[tuple[str, str], ...]  # (doc_id, markdown)
    questions: tuple[ManualQuestion, ...]


def product_manuals(seed: int, n_products: int = 30, p_named: float = 0.25) -> Manuals:
    """Seed 001 block 8: one Markdown manual per product, the same boilerplate in every manual except
    one number; only a fraction ``p_named`` of section bodies name the product (the H1 always does)."""
    if not 1 <= n_products <= len(NAME_SYL) ** 2:
        raise ConfigError(f"products must be in 1..{len(NAME_SYL) ** 2}, got {n_products}")
    if not 0.0 <= p_named <= 1.0:
        raise ConfigError(f"p_named is a fraction in 0..1, got {p_named}")
    rng = _numpy().random.default_rng(seed)
    picks = rng.choice(len(NAME_SYL) ** 2, size=n_products, replace=False)
    docs, questions = [], []
    for i, pick in enumerate(picks):
        product = (NAME_SYL[pick % 12] + NAME_SYL[pick // 12]).capitalize() + f" X{rng.integers(100, 999)}"
        md, last = f"# {product} User Guide\n", None
        for section, sub, body, question in TOPICS:
            if section != last:
                md, last = md + f"\n## {section}\n", section
            lead = f"Note for {product} owners: " if rng.random() < p_named else ""
            md += f"\n### {sub}\n{lead}{body.format(n=rng.integers(2, 99))}\n"
            questions.append(ManualQuestion(question.format(p=product), f"manual-{i}", sub, bool(lead)))
        docs.append((f"manual-{i}", md))
    return Manuals(tuple(docs), tuple(questions))


# --- retrieval through chunkwise's index ---------------------------------------------------------------
def items_for(doc_id: str, chunks, embed_texts: Sequence[str] | None = None) -> list:
    """MemoryIndex items for one document's chunks; ids are chunkwise's (content-hash based), so ties
    break in an order unrelated to document order, as the seed's shuffle intended."""
    from chunkwise.ids import chunk_ids
    from chunkwise.retrieve.index import Item

    chunks = list(chunks)
    out = []
    for n, (c, (cid, _)) in enumerate(zip(chunks, chunk_ids(doc_id, [c.text for c in chunks]))):
        embed = embed_texts[n] if embed_texts is not None else c.embed_text
        out.append(Item(cid, doc_id, c.index, c.start_char, c.end_char, c.text,
                        embed, heading_path=c.heading_path))
    return out


def search_all(items: Sequence, queries: Sequence[str], k: int, mode: str = "bm25", embedder=None) -> list[list]:
    """Top-``k`` Hits per query; query vectors are embedded in one batch (MiniLM is slow one by one).
    BM25 reads the embedded text alone (title and heading fields weighted 0): the seed's arms differ
    only in what the header puts into that text, and a weighted heading field would add it to all."""
    from chunkwise.lexical import FieldWeights
    from chunkwise.retrieve.index import MemoryIndex, check_mode

    check_mode(mode)
    if mode != "bm25" and embedder is None:
        raise ConfigError(f"mode {mode!r} needs an embedder: pass --embedder hashing or --embedder minilm")
    index = MemoryIndex(items, embedder=embedder if mode != "bm25" else None, field_weights=FieldWeights(0, 0))
    vectors = embedder.embed(list(queries)) if mode != "bm25" else [None] * len(queries)
    return [index.search(q, GROUPS, k, mode, query_vector=v) for q, v in zip(queries, vectors)]


def _holds(hit_or_chunk, doc_id: str, span: tuple[int, int]) -> bool:
    """metrics.holds on a Hit/Item/Passage (the one definition of a passage holding an answer)."""
    return holds((hit_or_chunk.doc_id, hit_or_chunk.start_char, hit_or_chunk.end_char), (doc_id, *span))


def _touches(hit, doc_id: str, span: tuple[int, int]) -> bool:
    return touches((hit.doc_id, hit.start_char, hit.end_char), (doc_id, *span))


def _fixed_items(corpus: FactCorpus, size: int, overlap: int) -> list:
    from chunkwise.pipeline.chunk import make_chunker
    from chunkwise.config import ChunkConfig

    chunker = make_chunker(ChunkConfig(strategy="fixed", size=size, overlap=overlap, unit="words"))
    items = []
    for d, text in enumerate(corpus.texts()):
        items += items_for(f"doc-{d}", chunker.chunk(text))
    return items


# --- block 4: the overlap sweep ------------------------------------------------------------------------
@dataclass(frozen=True)
class OverlapRow:
    overlap: int
    inflation: float
    straddle_formula: float
    straddle_measured: float
    recall: float
    recall_given_fits: float | None
    half_answer_at_top1: float | None  # of straddling questions: top-1 touches the evidence, holds only part
    questions: int
    guaranteed: int  # questions whose evidence is at most O + 1 words: the derivation says these never straddle
    guaranteed_straddled: int  # ... and how many did (must be 0)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class OverlapSweep:
    size: int
    k: int
    mode: str
    seeds: tuple[int, ...]
    rows: tuple[OverlapRow, ...]

    def to_dict(self) -> dict:
        return {"experiment": "overlap", "size": self.size, "k": self.k, "mode": self.mode, "seeds": list(self.seeds),
                "rows": [r.to_dict() for r in self.rows],
                "seed_001": {str(o): dict(zip(("inflation", "straddle_formula", "straddle_measured", "recall",
                                                "recall_given_fits"), v)) for o, v in SEED_OVERLAP.items()}}


def overlap_sweep(size: int = 100, overlaps: Sequence[int] = (0, 10, 20, 30, 34, 50), seeds: Sequence[int] = range(5),
                  k: int = 5, n_docs: int = 100, facts_per_doc: int = 8, mode: str = "bm25",
                  embedder=None) -> OverlapSweep:
    """For each overlap O: cut every corpus into ``fixed`` windows of ``size`` words, index, ask every
    question; a question counts only if a top-``k`` chunk holds its whole evidence. ``fits`` is the
    retriever-free ceiling (some chunk anywhere holds it); the formula is planning.straddle_probability."""
    from chunkwise.planning import straddle_probability

    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")
    overlaps = list(overlaps)
    for o in overlaps:
        if not 0 <= o < size:
            raise ConfigError(f"every overlap must be in 0..{size - 1} (below the chunk size), got {o}")
    acc: dict[int, list[list]] = {o: [[] for _ in range(7)] for o in overlaps}
    for seed in seeds:
        corpus = fact_corpus(seed, n_docs, facts_per_doc)
        spans = [corpus.char_span(f) for f in corpus.facts]
        total_words = sum(len(w) for w in corpus.docs)
        for o in overlaps:
            items = _fixed_items(corpus, size, o)
            by_doc: dict[str, list] = {}
            for it in items:
                by_doc.setdefault(it.doc_id, []).append(it)
            hits = search_all(items, [f.query for f in corpus.facts], k, mode, embedder)
            a = acc[o]
            a[0].append(sum(len(it.text.split()) for it in items) / total_words)
            for f, span, top in zip(corpus.facts, spans, hits):
                doc = f"doc-{f.doc}"
                fits = any(_holds(c, doc, span) for c in by_doc[doc])
                found = any(_holds(h, doc, span) for h in top)
                a[1].append(straddle_probability(size, o, f.end - f.start))
                a[2].append(not fits)
                a[3].append(found)
                if f.end - f.start <= o + 1:
                    a[6].append(not fits)
                if fits:
                    a[4].append(found)
                else:
                    a[5].append(bool(top) and _touches(top[0], doc, span) and not _holds(top[0], doc, span))
    rows = []
    for o in overlaps:
        infl, formula, straddled, found, given, half, safe = acc[o]
        rows.append(OverlapRow(o, _mean(infl), _mean(formula), _mean(straddled), _mean(found),
                               _mean(given) if given else None, _mean(half) if half else None,
                               len(found), len(safe), sum(safe)))
    return OverlapSweep(size, k, mode, tuple(seeds), tuple(rows))


def _mean(values) -> float:
    values = list(values)
    return float(sum(values)) / len(values) if values else math.nan


# --- block 5: duplicate hits and merge_hits --------------------------------------------------------------
@dataclass(frozen=True)
class MergeResult:
    size: int
    overlap: int
    k: int
    fetch: int
    mode: str
    seed: int
    questions: int
    raw_passages: float  # k chunks as retrieved
    raw_words: float
    merged_passages: float  # merge_hits over the k retrieved chunks
    merged_words: float
    refilled_passages: float  # over-fetch ``fetch`` chunks, merge_hits, keep k passages
    refilled_words: float
    recall_raw: float  # some top-k chunk holds the whole evidence
    recall_refilled: float  # some of the k refilled passages holds it
    short_questions: float  # share of questions whose merged top-k has fewer than k passages

    def to_dict(self) -> dict:
        return {"experiment": "merge", **asdict(self),
                "seed_001": {name: {"passages": p, "words": w} for name, (p, w) in SEED_MERGE.items()}}


def merge_experiment(seed: int = 0, size: int = 100, overlap: int = 50, k: int = 5, fetch: int = 15,
                     n_docs: int = 100, facts_per_doc: int = 8, mode: str = "bm25", embedder=None) -> MergeResult:
    """With overlap, a top-k holds near-copies; merge_hits joins them, and over-fetching before the
    merge gives back k distinct passages. Words sent = words in the passages' stitched texts."""
    from chunkwise.retrieve.merge import merge_hits

    if not 1 <= k <= fetch:
        raise ConfigError(f"need 1 <= k <= fetch (over-fetch at least k chunks), got k={k}, fetch={fetch}")
    if not 0 <= overlap < size:
        raise ConfigError(f"overlap must be in 0..{size - 1}, got {overlap}")
    corpus = fact_corpus(seed, n_docs, facts_per_doc)
    items = _fixed_items(corpus, size, overlap)
    deep = search_all(items, [f.query for f in corpus.facts], fetch, mode, embedder)
    raw, merged, refilled = [], [], []
    found_raw, found_refilled = [], []
    for f, hits in zip(corpus.facts, deep):
        top = hits[:k]  # ranking is deterministic, so the first k of a deeper list is the top-k
        span, doc = corpus.char_span(f), f"doc-{f.doc}"
        m, r = merge_hits(top), merge_hits(hits, k)
        raw.append((len(top), sum(len(h.text.split()) for h in top)))
        merged.append((len(m), sum(len(p.text.split()) for p in m)))
        refilled.append((len(r), sum(len(p.text.split()) for p in r)))
        found_raw.append(any(_holds(h, doc, span) for h in top))
        found_refilled.append(any(_holds(p, doc, span) for p in r))
    col = lambda rows, i: _mean(x[i] for x in rows)  # noqa: E731
    return MergeResult(size, overlap, k, fetch, mode, seed, len(corpus.facts), col(raw, 0), col(raw, 1),
                       col(merged, 0), col(merged, 1), col(refilled, 0), col(refilled, 1), _mean(found_raw),
                       _mean(found_refilled), _mean(n < k for n, _ in merged))


# --- block 8: contextual headers -------------------------------------------------------------------------
SEED_ARMS = ("no header", "section title only", "path without document title", "full path")
LIBRARY_MODES = ("none", "title", "path", "full")


def seed_arm_header(arm: str, path: tuple[str, ...]) -> tuple[str, ...]:
    """The seed's four header arms, as the heading path each one keeps."""
    return {"no header": (), "section title only": path[-1:], "path without document title": path[1:],
            "full path": path}[arm]


@dataclass(frozen=True)
class HeaderRow:
    arm: str
    kind: str  # "seed arm" (the seed's four embedded texts) or "chunkwise --header" (the library's modes)
    words_per_chunk: float
    recall_at_1: float
    recall_at_3: float
    recall_at_1_named: float | None  # questions whose section body names the product
    recall_at_1_unnamed: float | None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class HeaderExperiment:
    seeds: tuple[int, ...]
    n_products: int
    p_named: float
    mode: str
    questions: int
    rows: tuple[HeaderRow, ...]

    def to_dict(self) -> dict:
        return {"experiment": "headers", "seeds": list(self.seeds), "n_products": self.n_products,
                "p_named": self.p_named, "mode": self.mode, "questions": self.questions,
                "rows": [r.to_dict() for r in self.rows],
                "seed_001": {arm: dict(zip(("words_per_chunk", "recall_at_1", "recall_at_3", "recall_at_1_named",
                                             "recall_at_1_unnamed"), v)) for arm, v in SEED_HEADERS.items()}}


def _manual_chunks(md: str, header: str) -> list:
    from chunkwise.pipeline.chunk import make_chunker
    from chunkwise.config import ChunkConfig

    return make_chunker(ChunkConfig(strategy="structure", size=200, unit="words", header=header)).chunk(md)


def header_experiment(seeds: Sequence[int] = range(5), n_products: int = 30, p_named: float = 0.25,
                      mode: str = "bm25", embedder=None) -> HeaderExperiment:
    """One chunk per manual section (``structure`` chunker). Two families of embedded text: the seed's
    four arms (its header built from the chunk's heading path, the body without heading lines), and
    chunkwise's own ``--header`` modes (``chunk.embed_text`` as ingest would embed it). A question is
    answered at rank r when a top-r chunk is the right manual's right subsection."""
    arms = [(a, "seed arm") for a in SEED_ARMS] + [(m, "chunkwise --header") for m in LIBRARY_MODES]
    acc: dict[str, list[list]] = {a: [[] for _ in range(5)] for a, _ in arms}
    n_questions = 0
    for seed in seeds:
        manuals = product_manuals(seed, n_products, p_named)
        queries = [q.text for q in manuals.questions]
        n_questions += len(queries)
        for arm, kind in arms:
            items = []
            for doc_id, md in manuals.docs:
                if kind == "seed arm":  # header="path" keeps heading lines out of the body, as the seed's parser
                    chunks = _manual_chunks(md, "path")
                    heads = [" > ".join(seed_arm_header(arm, c.heading_path)) for c in chunks]
                    texts = [f"{h}\n{c.text}" if h else c.text for h, c in zip(heads, chunks)]
                    items += items_for(doc_id, chunks, texts)
                else:
                    items += items_for(doc_id, _manual_chunks(md, arm))
            hits = search_all(items, queries, 3, mode, embedder)
            a = acc[arm]
            a[0] += [len(it.embed_text.split()) for it in items]
            for q, top in zip(manuals.questions, hits):
                right = [h.doc_id == q.doc_id and h.heading_path[-1:] == (q.section,) for h in top]
                a[1].append(bool(right[:1]) and right[0])
                a[2].append(any(right))
                (a[3] if q.body_names_product else a[4]).append(bool(right[:1]) and right[0])
    rows = tuple(HeaderRow(arm, kind, _mean(acc[arm][0]), _mean(acc[arm][1]), _mean(acc[arm][2]),
                           _mean(acc[arm][3]) if acc[arm][3] else None, _mean(acc[arm][4]) if acc[arm][4] else None)
                 for arm, kind in arms)
    return HeaderExperiment(tuple(seeds), n_products, p_named, mode, n_questions, rows)


def sampling_tolerance(p: float, n: int, n_reference: int | None = None, z: float = 3.0) -> float:
    """``z`` binomial standard errors of a rate ``p`` measured over ``n`` questions, combined with the
    reference figure's own error when it came from ``n_reference`` questions. Never below 1/n: a rate
    of exactly 0 or 1 still has a resolution of one question."""
    var = p * (1 - p) / n + (p * (1 - p) / n_reference if n_reference else 0.0)
    return max(z * math.sqrt(var), 1.0 / n)
