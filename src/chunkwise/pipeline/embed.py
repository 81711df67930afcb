"""Stage 2, *embed*: vectors for the embed keys the store lacks, batched across documents.

Prepared documents flow through in order; the texts whose keys have no stored vector are pooled
across documents until about ``pool`` of them wait, then embedded longest-first in batches of the
embedder's size (similar lengths per batch: little padding), outside any transaction. A cheap
embedder (hashing) has already run where each document was prepared (``PrepareSettings.embedder``):
its vectors come with the document and nothing waits. A key shared
by several waiting documents is embedded once. Each document then leaves with the vectors it needs,
to be written with it; the store is the vector cache (by embed_key) for everything later.
"""
from __future__ import annotations

from typing import Callable, Iterable, Iterator, Mapping, Sequence

from chunkwise.pipeline.prepare import Prepared, PrepareFailure

Vectors = dict[str, list[float]]


class Carried(Mapping):
    """The vectors a document brought from where it was prepared (``source``, packed when it came
    from a worker: ``pipeline.pack``), restricted to ``keys`` (those the store lacks), plus the ones
    embedded here (``extra``). Read from ``source`` when asked: a big document's vectors are never
    all held at once by this process (the writer takes them a batch at a time)."""

    def __init__(self, source: Mapping, keys: set[str], extra: Mapping | None = None) -> None:
        self.source, self.keys, self.extra = source, keys, extra or {}

    def plus(self, extra: Mapping) -> "Carried":
        return Carried(self.source, self.keys, {**self.extra, **extra}) if extra else self

    def __getitem__(self, key: str):
        if key in self.extra:
            return self.extra[key]
        if key in self.keys:
            return self.source[key]
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        yield from self.keys
        yield from (k for k in self.extra if k not in self.keys)

    def __len__(self) -> int:
        return len(self.keys) + sum(1 for k in self.extra if k not in self.keys)

    def __contains__(self, key) -> bool:
        return key in self.extra or key in self.keys


class EmbedStage:
    def __init__(self, store, embedder, *, late=None, batch_size: int = 64, pool: int = 512,
                 on_embedded: Callable[[int], None] | None = None) -> None:
        self.store = store
        self.on_embedded = on_embedded
        self.embedder = embedder
        self.late = late
        self.batch_size = batch_size
        self.pool = max(pool, batch_size)
        self.texts_embedded = 0

    def run(self, items: Iterable[Prepared | PrepareFailure]) -> Iterator[tuple[Prepared | PrepareFailure, Vectors]]:
        """(item, vectors it needs) in input order; failures pass through untouched. A document
        that carries vectors (embedded where it was prepared) gives the ones the store lacks."""
        if self.embedder is None:
            yield from ((item, {}) for item in items)
            return
        waiting: list[tuple[Prepared | PrepareFailure, set[str], Vectors]] = []
        wanted: dict[str, tuple[Prepared, int]] = {}  # key -> (document, record index) that has it
        for item in items:
            if isinstance(item, PrepareFailure):
                if not waiting:
                    yield item, {}
                else:
                    waiting.append((item, set(), Carried({}, set())))
                continue
            known = getattr(item.records, "embed_keys", None)  # encoded by a worker: no record decoded
            keys = {k: i for i, k in enumerate(known if known is not None else (r["embed_key"] for r in item.records))}
            fresh = [k for k in keys if k not in wanted]
            missing = set(fresh).difference(self.store.vectors(fresh, values=False)) if fresh else set()
            carried = Carried(item.vectors, {k for k in missing if k in item.vectors})
            if carried:
                self.texts_embedded += len(carried)
                if self.on_embedded:
                    self.on_embedded(len(carried))
            for k in missing:
                if k not in carried:
                    wanted[k] = (item, keys[k])
            waiting.append((item, {k for k in keys if k in wanted}, carried))
            if not wanted or len(wanted) >= self.pool:  # nothing left to embed here: no reason to wait
                yield from self._flush(waiting, wanted)
                waiting, wanted = [], {}
        yield from self._flush(waiting, wanted)

    def _flush(self, waiting, wanted: dict[str, tuple[Prepared, int]]):
        vectors = self.encode(wanted)
        for item, keys, carried in waiting:
            yield item, carried.plus({k: vectors[k] for k in keys if k in vectors})

    def encode(self, wanted: dict[str, tuple[Prepared, int]]) -> Vectors:
        """Vectors for ``wanted`` (key -> a document and record index holding it)."""
        if not wanted:
            return {}
        self.texts_embedded += len(wanted)
        if self.late is not None:
            out = self._encode_late(wanted)
            if self.on_embedded:
                self.on_embedded(len(out))
            return out
        texts = {k: doc.records[i]["embed_text"] for k, (doc, i) in wanted.items()}
        order = sorted(texts, key=lambda k: (-len(texts[k]), k))  # longest first: batches of like lengths
        out: Vectors = {}
        for i in range(0, len(order), self.batch_size):
            keys = order[i : i + self.batch_size]
            out.update(zip(keys, (list(map(float, v)) for v in self.embedder.embed([texts[k] for k in keys]))))
            if self.on_embedded:
                self.on_embedded(len(keys))
        return out

    def _encode_late(self, wanted: dict[str, tuple[Prepared, int]]) -> Vectors:
        from chunkwise.embed.late import encode_plans

        jobs: dict[int, tuple[Prepared, list[int]]] = {}
        for doc, i in wanted.values():
            jobs.setdefault(id(doc), (doc, []))[1].append(i)
        pairs = list(jobs.values())
        results = encode_plans([(doc.late_plan, idx) for doc, idx in pairs], self.late)
        out: Vectors = {}
        for (doc, idx), vecs in zip(pairs, results):
            for i, v in zip(idx, vecs):
                out[doc.records[i]["embed_key"]] = list(map(float, v.vector))
        return out

    def repair(self, doc: Prepared, keys: Sequence[str]) -> Vectors:
        """Vectors for keys of ``doc`` that were stored when it was embedded but are gone now (a
        concurrent run collected them): embedded again so no chunk is left without one."""
        if self.embedder is None or not keys:
            return {}
        missing = set(keys).difference(self.store.vectors(keys, values=False))
        where = {r["embed_key"]: i for i, r in enumerate(doc.records)}
        return self.encode({k: (doc, where[k]) for k in missing if k in where})
