"""Invariants for every strategy and every sizer, on generated text (hypothesis).

1. offsets are the truth: ``chunk.text == text[start:end]``;
2. the hard cap holds on the embedded text, in units and in characters (``char_cap``), and ``size``
   is what the sizer really measures;
3. the same input gives the same output;
4. nothing is lost: every non-whitespace character lies in some chunk (in order, without overlap,
   for strategies that do not overlap).
"""
import pytest
from conftest import sizer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkwise.chunking.base import char_cap
from chunkwise.chunking.markdown import parse_markdown
from chunkwise.chunking.router import STRATEGY_CLASSES, build_chunker
from chunkwise.config import ChunkConfig

WORDS = ["rollback", "failure", "page", "on-call", "within", "15", "minutes", "deploy", "ID", "pay-742",
         "Straße", "naïve", "东京", "ロールバック", "e.g.", "Dr.", "x" * 40, "a", "😀", "\u200b", "ß", "İ", "ﬁ",
         # long words (WordPiece: one [UNK] past 100 characters), Korean (spaced words), a range
         "y" * 150, "z" * 700, "https://example.com/" + "a1b2" * 40, "대한민국의", "성장하였다", "1994–95", "東京都庁舎"]
PUNCT = [".", "!", "?", "。", ",", ":", ";", "…", '."', ")."]
LINES = ["# Heading", "## Sub heading", "### Deep", "```", "```bash", "# comment in code", "| a | b |",
         "| --- | --- |", "| 1 | 2 |", "1. step one", "- item", "Q: why?", "A: because.", "Owner: SRE",
         "[00:01:02] Priya: we roll back.", "Title", "-----", "> quoted", "    indented code", "<!-- note -->"]


@st.composite
def documents(draw):
    parts = []
    for _ in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["sentence", "sentence", "line", "blank", "repeat", "spaces", "unicode"]))
        if kind == "sentence":
            words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=25))
            parts.append(" ".join(words) + draw(st.sampled_from(PUNCT)) + draw(st.sampled_from([" ", "\n", "  "])))
        elif kind == "line":
            parts.append(draw(st.sampled_from(LINES)) + "\n")
        elif kind == "blank":
            parts.append("\n\n")
        elif kind == "repeat" and parts:
            parts.append(parts[draw(st.integers(0, len(parts) - 1))])
        elif kind == "spaces":
            parts.append(draw(st.sampled_from(["   ", "\t", "\n \n", " \u3000 ", "\r\n"])))
        else:
            parts.append(draw(st.text(min_size=1, max_size=30)))
    return "x " + "".join(parts)  # never starts with front matter, which is metadata, not chunk text


HEADING_AWARE = {"structure", "table", "auto", "semantic"}
SIZERS = [("chars", "minilm", "auto"), ("words", "minilm", "auto"), ("tokens", "minilm", "auto"),
          ("tokens", "cl100k_base", "tiktoken")]


SEMANTIC = {"semantic_embedder": "hashing", "semantic_threshold": 0.2}


def config_for(strategy, unit_spec, data):
    unit, tok, backend = unit_spec
    # one character can cost 4 byte-level BPE tokens: a cap below that cannot be met by any split
    low = {"chars": 12, "words": 3}.get(unit, 3 if tok == "minilm" else 8)
    size = data.draw(st.integers(low, 80), label="size")
    extra = {}
    if strategy == "sentence_window":
        window = data.draw(st.integers(1, 4), label="window")
        extra = {"window": window, "overlap": data.draw(st.integers(0, window - 1), label="overlap")}
    elif strategy in ("fixed", "recursive", "sentences", "paragraphs", "structure"):
        extra = {"overlap": data.draw(st.integers(0, size // 2), label="overlap")}
    elif strategy == "semantic":
        extra = SEMANTIC  # the real model is exercised in tests/chunking/test_semantic.py
    header = data.draw(st.sampled_from(["none", "path", "full", "context"]), label="header") if size >= 40 else "none"
    if header == "context":  # a description as long as enrich/describe.py allows: the cap must still hold
        extra = {**extra, "description": data.draw(st.text(min_size=1, max_size=240), label="description")}
    fmt = data.draw(st.sampled_from(["markdown", "text"]), label="format")
    return ChunkConfig(strategy=strategy, size=size, unit=unit, tokenizer=tok, backend=backend,
                       header=header, title="Runbook", format=fmt, **extra)


def heading_lines(text, config):
    """Heading lines are carried by the header (not the chunk text) when it holds the path."""
    if config.header not in ("path", "full", "context") or config.strategy not in HEADING_AWARE:
        return set()
    if config.format == "markdown":
        doc = parse_markdown(text)
        spans = [(b.start, b.end) for sec in doc.sections for b in sec.blocks if b.kind == "heading"]
        spans += [(sec.start, sec.blocks[0].start) for sec in doc.sections if sec.blocks]  # folded parents
    else:
        from chunkwise.chunking.structure import StructureChunker
        spans = [(b.start, b.end) for sec in StructureChunker.text_sections(text) for b in sec.blocks
                 if b.kind == "heading"]
    return {i for a, b in spans for i in range(a, b)}


def check(text, config, metadata_end=0):
    s = sizer(config.unit, config.tokenizer, config.backend)
    chunker = build_chunker(config, s)
    chunks = chunker.chunk(text)
    s = s.for_text(text)  # a fast backend hands documents it cannot count exactly to its reference
    for c in chunks:
        assert c.text == text[c.start_char : c.end_char]
        assert c.text.strip() and c.text == c.text.strip()
        measured = s.count(c.embed_text)
        assert measured == c.size, (c, measured)
        assert c.size <= config.size, c
        assert len(c.embed_text) <= char_cap(config), (len(c.embed_text), c)
    assert [c.to_dict() for c in chunker.chunk(text)] == [c.to_dict() for c in chunks]
    covered = bytearray(len(text))
    for c in chunks:
        covered[c.start_char : c.end_char] = b"\x01" * (c.end_char - c.start_char)
    headings = heading_lines(text, config)
    lost = [i for i, ch in enumerate(text)
            if i >= metadata_end and not ch.isspace() and not covered[i] and i not in headings]
    assert not lost, (lost[:5], text[lost[0] - 5 : lost[0] + 5])
    if not chunker.overlapping and config.overlap == 0:
        assert all(a.end_char <= b.start_char for a, b in zip(chunks, chunks[1:]))
    # with overlap, no chunk lies inside its neighbour (it would add nothing but a duplicate)
    assert not any(a.start_char <= b.start_char and b.end_char <= a.end_char
                   or b.start_char <= a.start_char and a.end_char <= b.end_char for a, b in zip(chunks, chunks[1:]))
    return chunks


@pytest.mark.parametrize("unit_spec", SIZERS, ids=lambda u: f"{u[0]}-{u[1]}")
@pytest.mark.parametrize("strategy", sorted(STRATEGY_CLASSES))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents(), data=st.data())
def test_invariants(strategy, unit_spec, text, data):
    check(text, config_for(strategy, unit_spec, data))


@pytest.mark.parametrize("strategy", sorted(STRATEGY_CLASSES))
def test_invariants_on_sample_corpus(strategy, examples):
    for name, text in examples.items():
        for size in (48, 256):
            fmt = "markdown" if name.endswith(".md") else "text"
            extra = {"window": 3, "overlap": 1} if strategy == "sentence_window" else {}
            extra = SEMANTIC if strategy == "semantic" else extra
            # front matter is metadata: heading-aware strategies leave it out of chunk text
            meta_end = parse_markdown(text).body_start if fmt == "markdown" and strategy in HEADING_AWARE else 0
            chunks = check(text, ChunkConfig(strategy=strategy, size=size, format=fmt, **extra), meta_end)
            assert chunks


@pytest.mark.parametrize("strategy", sorted(STRATEGY_CLASSES))
def test_repeated_paragraphs_get_their_own_offsets(strategy):
    para = "Questions about this policy go to the security team at #sec-help."
    text = "\n\n".join([para, "Other words here.", para, para])
    extra = {"window": 1, "overlap": 0} if strategy == "sentence_window" else {}
    extra = SEMANTIC if strategy == "semantic" else extra
    chunks = check(text, ChunkConfig(strategy=strategy, size=16, format="text", **extra))
    starts = [c.start_char for c in chunks]
    assert starts == sorted(set(starts))  # every chunk has its own place, even with identical text
    if strategy not in ("fixed", "balanced"):  # the boundary-aware ones keep each copy whole
        whole = [c.start_char for c in chunks if c.text == para]
        assert whole == [0, text.index(para, 1), text.rindex(para)]
