"""One preparation path (issue 24 item 3): for random documents (front matter with an acl, section
access markers, headings, repeated paragraphs) and random configs, ``chunk_file`` returns what
``ingest`` stores (read back from the SQLite store), ``chunk_text`` given the same id returns the
same, and every framework splitter yields the same chunks: ids, document ids, access tags, heading
paths, offsets, text."""
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chunkwise
from chunkwise import api

TAGS = ("staff", "sre", "finance", "ops")
WORDS = ("deploy", "rollback", "ledger", "queue", "pager", "restart", "the", "a", "is", "of", "pool", "valve",
         "error", "rate", "window", "freeze", "owner", "audit")
KEYS = ("chunk_id", "doc_id", "acl", "heading_path", "start_char", "end_char", "text", "quality", "reasons")

sentence = st.lists(st.sampled_from(WORDS), min_size=3, max_size=14).map(lambda ws: " ".join(ws).capitalize() + ".")
paragraph = st.lists(sentence, min_size=1, max_size=5).map(" ".join)
tags = st.lists(st.sampled_from(TAGS), min_size=1, max_size=2, unique=True)


@st.composite
def documents(draw) -> str:
    """A Markdown file: maybe front matter with an acl, sections with headings, some with an access
    marker right under their heading, paragraphs (a paragraph may repeat: ids count occurrences)."""
    out = []
    if draw(st.booleans()):
        front = ["title: " + draw(st.sampled_from(WORDS)).capitalize()]
        if draw(st.booleans()):
            front.append("acl: [" + ", ".join(draw(tags)) + "]")
        out.append("---\n" + "\n".join(front) + "\n---\n")
    seen: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        level = draw(st.integers(1, 3))
        out.append("#" * level + " " + " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))).title())
        if draw(st.integers(0, 3)) == 0:
            out.append("<!-- acl: " + ", ".join(draw(tags)) + " -->")
        for _ in range(draw(st.integers(1, 3))):
            para = draw(st.sampled_from(seen)) if seen and draw(st.integers(0, 4)) == 0 else draw(paragraph)
            seen.append(para)
            out.append(para)
    return "\n\n".join(out) + "\n"


configs = st.fixed_dictionaries({
    "strategy": st.sampled_from(["auto", "structure", "recursive", "fixed", "paragraphs", "sentences"]),
    "size": st.integers(24, 160),
    "unit": st.sampled_from(["tokens", "words", "chars"]),
    "header": st.sampled_from(["none", "path", "title"]),
}).map(lambda c: {**c, "size": c["size"] * (4 if c["unit"] == "chars" else 1)})


def row(r) -> tuple:
    return tuple(getattr(r, k) for k in KEYS)


def splitter_rows(text: str, rel: str, config: api.ChunkConfig, acl) -> dict[str, list[tuple]]:
    """What each installed framework's splitter yields for ``text`` named ``rel``, as record rows."""
    out = {}
    try:
        from langchain_core.documents import Document as LCDocument

        from chunkwise.integrations.langchain import ChunkwiseSplitter as LCSplitter
    except (ImportError, api.DependencyError):
        pass
    else:
        docs = LCSplitter(config, acl=acl).split_documents([LCDocument(page_content=text, metadata={"source": rel})])
        out["langchain"] = [_row(d.id, d.metadata, d.page_content, d.metadata.get("header", "")) for d in docs]
    try:
        from llama_index.core import Document as LIDocument

        from chunkwise.integrations.llamaindex import ChunkwiseNodeParser
    except (ImportError, api.DependencyError):
        pass
    else:
        nodes = ChunkwiseNodeParser(config, acl=acl)([LIDocument(text=text, metadata={"file_path": rel})])
        out["llamaindex"] = [_li_row(n) for n in nodes]
    try:
        from haystack import Document as HSDocument

        from chunkwise.integrations.haystack import ChunkwiseSplitter as HSSplitter
    except (ImportError, api.DependencyError):
        pass
    else:
        options = {k: v for k, v in vars(config).items() if k != "extra"}
        docs = HSSplitter(**options, acl=acl).run([HSDocument(content=text, meta={"file_path": rel})])["documents"]
        out["haystack"] = [_row(d.id, d.meta, d.content, d.meta.get("header", "")) for d in docs]
    return out


def _row(chunk_id, meta, content, header) -> tuple:
    quality = "review" if meta["needs_review"] else "ready"
    return (chunk_id, meta["doc_id"], tuple(meta["acl"]), tuple(meta["heading_path"]), meta["start_index"],
            meta["end_index"], content[len(header):], quality, tuple(meta["reasons"]))


def _li_row(node) -> tuple:
    m = node.metadata  # flat: lists joined (heading path by " > ", the rest by ",")
    split = (lambda v: tuple(x for x in v.split(",") if x)) if isinstance(m["acl"], str) else tuple
    path = tuple(h for h in m["heading_path"].split(" > ") if h) if isinstance(m["heading_path"], str) else \
        tuple(m["heading_path"])
    quality = "review" if m["needs_review"] else "ready"
    return (node.node_id, m["doc_id"], split(m["acl"]), path, node.start_char_idx, node.end_char_idx, node.text,
            quality, split(m["reasons"]))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents(), options=configs, default=st.one_of(st.just(()), tags.map(tuple)),
       folder=st.sampled_from(["", "team/", "a/b/"]))
def test_every_door_gives_what_ingest_stores(text, options, default, folder):
    config = api.ChunkConfig(**options)
    rel = folder + "doc.md"
    tmp = Path(tempfile.mkdtemp(prefix="one-door-"))
    try:
        root = tmp / "docs"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
        db = tmp / "x.db"
        api.ingest([root], db, config, embedder="none", acl=default)
        with api.open_store(db) as store:
            stored = sorted((api.ChunkRecord.from_dict(r) for r in store.records_of(rel).values()),
                            key=lambda r: r.chunk_index)
        assert stored, "ingest stored the document"
        from_file = chunkwise.chunk_file(root / rel, config, root=root, acl=default)
        assert [row(r) for r in from_file] == [row(r) for r in stored]
        assert [r.embed_key for r in from_file] == [r.embed_key for r in stored]  # same embedded text, same model
        from_text = chunkwise.chunk_text(text, config, doc_id=rel, acl=default)
        assert [row(r) for r in from_text] == [row(r) for r in stored]
        for name, rows in splitter_rows(text, rel, config, default).items():
            assert rows == [row(r) for r in stored], name
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
