"""The ``semantic`` strategy: topic boundaries from adjacent-sentence similarity, under the cap.

Controlled embedders (a vector per topic word) pin where boundaries go; the hashing embedder drives
the hypothesis invariants; one test runs the real MiniLM on two clearly different topics."""
import math
from dataclasses import dataclass, replace

import numpy as np
import pytest
from conftest import sizer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkers import chunk_text
from chunkwise.chunking import boundaries
from chunkwise.chunking.router import build_chunker
from chunkwise.chunking.semantic import (
    UNDEFINED,
    SemanticChunker,
    boundary_gaps,
    gap_similarities,
    merge_small,
    percentile,
    token_batches,
    window_pieces,
)
from chunkwise.chunking.sizing import WordSizer
from chunkwise.config import ChunkConfig
from chunkwise.embed.hashing import HashingEmbedder
from chunkwise.errors import ConfigError

TOPICS = {"alpha": [1.0, 0.0, 0.0], "beta": [0.0, 0.6, 0.8], "gamma": [0.0, 0.0, 1.0]}


class TopicEmbedder:
    """A sentence's vector is its first word's topic; no known word (e.g. ``---``) gives zero."""

    name, dim, max_tokens = "topic@1", 3, None

    def __init__(self):
        self.seen: list[str] = []

    def embed(self, texts):
        self.seen += texts
        return [next((TOPICS[w] for w in t.lower().split() if w in TOPICS), [0.0, 0.0, 0.0]) for t in texts]


class WindowedEmbedder(TopicEmbedder):
    """Like MiniLM: a window (special tokens included) and a refusal to embed anything longer."""

    max_tokens = 8

    def count_tokens(self, texts):
        return [len(t.split()) + 2 for t in texts]

    def embed(self, texts):
        assert all(n <= self.max_tokens for n in self.count_tokens(texts)), "would truncate"
        return super().embed(texts)


def chunker(embedder=None, sizer_=None, **options):
    options = {"strategy": "semantic", "unit": "words", "size": 100, "format": "text", **options}
    return SemanticChunker(ChunkConfig(**options), sizer_ or WordSizer(), embedder or TopicEmbedder())


def texts(chunks):
    return [c.text for c in chunks]


# -- where boundaries go ---------------------------------------------------------------------------------
TWO_TOPICS = "Alpha one two. Alpha three four. Alpha five six. Beta one two. Beta three four."


@pytest.mark.parametrize("options", [{"semantic_threshold": 0.5}, {}], ids=["threshold", "percentile"])
def test_boundary_at_the_topic_shift(options):
    chunks = chunker(semantic_min_size=0, **options).chunk(TWO_TOPICS)
    assert texts(chunks) == ["Alpha one two. Alpha three four. Alpha five six.", "Beta one two. Beta three four."]
    assert [c.level for c in chunks] == ["end", "end"]
    assert not any(c.needs_review for c in chunks)


def test_threshold_below_every_similarity_gives_no_boundary():
    chunks = chunker(semantic_threshold=-0.5, semantic_min_size=0).chunk(TWO_TOPICS)
    assert texts(chunks) == [TWO_TOPICS]


def test_percentile_zero_gives_no_boundary_and_hundred_cuts_all_but_the_most_similar():
    assert len(chunker(semantic_percentile=0, semantic_min_size=0).chunk(TWO_TOPICS)) == 1
    text = "Alpha one. Beta two. Gamma three. Gamma four."  # similarities 0, 0.8, 1
    assert texts(chunker(semantic_percentile=100, semantic_min_size=0).chunk(text)) == [
        "Alpha one.", "Beta two.", "Gamma three. Gamma four."]


def test_a_topic_run_longer_than_the_cap_is_packed_by_sentences_and_never_crosses_the_boundary():
    text = " ".join(f"Alpha {i} xx yy." for i in range(10)) + " " + " ".join(f"Beta {i} xx yy." for i in range(3))
    chunks = chunker(size=9, semantic_threshold=0.5, semantic_min_size=0).chunk(text)
    assert all(c.size <= 9 and c.text.endswith(".") for c in chunks)
    assert text.index("Beta") in [c.start_char for c in chunks]  # the Beta run starts a chunk...
    assert not any("Alpha" in c.text and "Beta" in c.text for c in chunks)  # ...and shares none
    assert " ".join(texts(chunks)) == text


# -- undefined similarity ------------------------------------------------------------------------------
@pytest.mark.parametrize("options", [{"semantic_threshold": 0.5}, {"semantic_percentile": 50}],
                         ids=["threshold", "percentile"])
def test_a_zero_vector_never_makes_a_boundary_by_itself_and_is_flagged(options):
    text = "Alpha one.\n\n---\n\nAlpha two. Alpha three."
    assert TopicEmbedder().embed(["---"]) == [[0.0, 0.0, 0.0]]  # a cosine of 0 would cut twice here
    chunks = chunker(semantic_min_size=0, **options).chunk(text)
    assert texts(chunks) == [text]
    assert chunks[0].needs_review and UNDEFINED in chunks[0].reasons


def test_similarity_is_bridged_over_a_zero_vector_and_only_its_chunk_is_flagged():
    text = "Alpha one. Alpha two.\n\n***\n\nAlpha three. Beta four. Beta five."
    chunks = chunker(semantic_min_size=0).chunk(text)
    assert texts(chunks) == ["Alpha one. Alpha two.\n\n***\n\nAlpha three.", "Beta four. Beta five."]
    assert [UNDEFINED in c.reasons for c in chunks] == [True, False]
    assert [c.needs_review for c in chunks] == [True, False]
    # a real shift across the zero vector still counts, at the gap after it
    chunks = chunker(semantic_min_size=0, semantic_threshold=0.5).chunk("Alpha one.\n\n***\n\nBeta two.")
    assert texts(chunks) == ["Alpha one.\n\n***", "Beta two."]


def test_gap_similarities_skip_undefined_vectors():
    sims, undefined = gap_similarities([[1, 0], [0, 0], [1, 0], [0, 1], [float("nan"), 0], [0, 0]])
    assert undefined == [1, 4, 5]
    assert sims[0] is None and sims[1] == pytest.approx(1.0) and sims[2] == pytest.approx(0.0)
    assert sims[3:] == [None, None]  # nothing defined after sentence 3


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, 1.0, -2.0, 0.5, 3.0, float("nan"), float("inf")]), min_size=3,
                         max_size=3), max_size=12))
def test_the_matrix_path_scores_gaps_as_the_list_path(rows):
    """Sentence vectors now come as a float32 matrix: its numpy path must agree with the reference."""
    want_sims, want_undefined = gap_similarities([list(r) for r in rows])
    sims, undefined = gap_similarities(np.array(rows, dtype=np.float32).reshape(len(rows), 3))
    assert undefined == want_undefined
    assert [s is None for s in sims] == [s is None for s in want_sims]
    assert all(s is None or s == pytest.approx(w, abs=1e-6) for s, w in zip(sims, want_sims))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 300), max_size=60).map(sorted), st.integers(1, 2048), st.integers(1, 64), st.booleans())
def test_token_batches_cover_every_text_once_within_budget_and_rows(lengths, budget, rows, same_length):
    batches = token_batches(lengths, budget, rows, same_length)
    assert [j for b in batches for j in b] == list(range(len(lengths)))
    for b in batches:
        assert 0 < len(b) <= rows
        assert len(b) == 1 or len(b) * max(lengths[j] for j in b) <= budget
        assert not same_length or len({lengths[j] for j in b}) == 1  # nothing padded
    if same_length:  # and no more calls than needed: a batch ends only at a limit or a new length
        for a, b in zip(batches, batches[1:]):
            n = lengths[a[0]]
            assert lengths[b[0]] != n or len(a) == rows or (len(a) + 1) * n > budget


def test_long_documents_are_embedded_in_token_bounded_calls():
    """No embed call pads past the token budget (64 rows of 256 tokens held ~200 MB of attention)."""
    class Counting(WindowedEmbedder):
        max_tokens = 40
        calls: list = []

        def embed(self, texts):
            self.calls.append(texts)
            return super().embed(texts)

    emb = Counting()
    text = " ".join(f"Alpha {'w ' * (i % 30)}end{i}." for i in range(300))
    chunker(emb, semantic_threshold=0.5, size=400).chunk(text)
    widths = [len(c) * max(emb.count_tokens(c)) for c in emb.calls]
    assert len(emb.calls) > 1 and max(widths) <= 1024 and sum(map(len, emb.calls)) == 300


def test_the_pieces_of_a_long_sentence_share_one_embed_call():
    """Pieces are batched as window-sized texts, not as their whole sentence's length (which, over
    the budget, would send every piece alone)."""
    class Counting(WindowedEmbedder):
        calls: list = []

        def embed(self, texts):
            self.calls.append(texts)
            return super().embed(texts)

    emb = Counting()
    words = " ".join(f"w{i}" for i in range(60))
    chunker(emb, semantic_threshold=0.5, semantic_min_size=0).chunk(f"Gamma ab. Alpha {words}. Gamma cd.")
    assert len(emb.calls) == 1 and len(emb.calls[0]) > 10  # the sentences and every piece, in one call


# -- minimum size ----------------------------------------------------------------------------------------
def test_a_tiny_run_merges_into_its_more_similar_neighbour():
    alpha, beta, gamma = "Alpha bb cc dd ee ff.", "Beta xy.", "Gamma bb cc dd ee ff gg hh."
    text = f"{alpha} {beta} {gamma}"  # beta is closer to gamma (0.8) than to alpha (0)
    options = {"semantic_threshold": 0.9}
    assert texts(chunker(semantic_min_size=0, **options).chunk(text)) == [alpha, beta, gamma]
    assert texts(chunker(semantic_min_size=3, **options).chunk(text)) == [alpha, f"{beta} {gamma}"]
    # unless only the other neighbour still fits the budget
    assert texts(chunker(semantic_min_size=3, size=9, **options).chunk(text)) == [f"{alpha} {beta}", gamma]


def merge_reference(sizes, sims, min_size, budget):
    """The merge rule written the slow, obvious way."""
    runs = [[s, b] for s, b in zip(sizes, [*range(len(sims)), None])]  # [size, boundary to the right]
    sims = dict(enumerate(sims))
    while len(runs) > 1:
        small = [(s, i) for i, (s, _) in enumerate(runs) if s < min_size]
        if not small:
            break
        s, i = min(small)
        options = []
        if i > 0:
            options.append((runs[i - 1][0] + s <= budget, sims[runs[i - 1][1]], 1, i - 1))
        if i < len(runs) - 1:
            options.append((runs[i + 1][0] + s <= budget, sims[runs[i][1]], 0, i))
        j = max(options)[3]
        runs[j : j + 2] = [[runs[j][0] + runs[j + 1][0], runs[j + 1][1]]]
    return [b for _, b in runs[:-1]]


@settings(max_examples=200, deadline=None)
@given(sizes=st.lists(st.integers(1, 20), min_size=1, max_size=30), data=st.data())
def test_merge_small_matches_the_reference_and_leaves_no_small_run(sizes, data):
    sims = data.draw(st.lists(st.sampled_from([-0.5, 0.0, 0.3, 0.9]), min_size=len(sizes) - 1, max_size=len(sizes) - 1))
    min_size, budget = data.draw(st.integers(0, 25)), data.draw(st.integers(1, 40))
    kept = merge_small(sizes, sims, min_size, budget)
    assert kept == merge_reference(sizes, sims, min_size, budget)
    assert kept == sorted(set(kept)) and all(0 <= b < len(sizes) - 1 for b in kept)
    edges = [0, *(b + 1 for b in kept), len(sizes)]
    runs = [sum(sizes[a:b]) for a, b in zip(edges, edges[1:])]
    assert len(runs) == 1 or min(runs) >= min_size


# -- the boundary rule -----------------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.floats(-1, 1), min_size=1, max_size=40), p=st.floats(0, 100))
def test_percentile_matches_numpy(values, p):
    assert percentile(values, p) == pytest.approx(float(np.percentile(values, p)), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(sims=st.lists(st.one_of(st.none(), st.floats(-1, 1)), max_size=40), p=st.floats(0, 100),
       threshold=st.one_of(st.none(), st.floats(-1, 1)))
def test_boundaries_are_the_least_similar_defined_gaps(sims, p, threshold):
    gaps = boundary_gaps(sims, threshold, p)
    assert all(sims[g] is not None for g in gaps)
    rest = [s for g, s in enumerate(sims) if s is not None and g not in set(gaps)]
    assert all(sims[g] < s for g in gaps for s in rest)  # a lower set: nothing less similar is skipped
    defined = [s for s in sims if s is not None]
    if threshold is not None:
        assert len(gaps) == sum(s < threshold for s in defined)
    elif defined:
        assert len(gaps) <= math.floor(p / 100 * (len(defined) - 1)) + 1


# -- long sentences: never truncated ---------------------------------------------------------------------
def test_a_sentence_longer_than_the_window_is_embedded_whole_in_pieces():
    words = [f"w{i}" for i in range(40)]
    text = "Gamma ab. " + "Alpha " + " ".join(words) + ". Gamma cd."
    emb = WindowedEmbedder()
    chunks = chunker(emb, semantic_threshold=0.5, semantic_min_size=0).chunk(text)
    assert texts(chunks) == ["Gamma ab.", "Alpha " + " ".join(words) + ".", "Gamma cd."]
    assert all(n <= emb.max_tokens for n in emb.count_tokens(emb.seen))
    long_pieces = [t for t in emb.seen if not t.startswith("Gamma")]  # embedded shortest first, in order
    assert len(long_pieces) > 1 and " ".join(long_pieces).split() == ["Alpha", *words[:-1], words[-1] + "."]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60).map(str.strip)
                .filter(bool), min_size=1, max_size=5), st.integers(3, 12))
def test_window_pieces_fit_and_keep_every_character(items, limit):
    def count(ts):
        return [len(t) // 2 + 2 for t in ts]  # any monotone count with special tokens

    for text, pieces in zip(items, window_pieces(items, count, limit)):
        assert all(n <= limit for n in count(pieces)) and all(pieces)
        assert "".join("".join(pieces).split()) == "".join(text.split())  # only whitespace may go


# -- invariants on generated text (hashing embedder) -----------------------------------------------------
WORDS = ["rollback", "deploy", "failure", "pasta", "garlic", "basil", "kubectl", "pod", "node", "15", "e.g.",
         "Dr.", "x" * 30, "東京", "Straße", "😀", "a"]
ODD = ["---", "| --- | --- |", "...", "```", "* * *", "  ", "\n\n", "\u200b", "!!"]
HASHING = HashingEmbedder()


@st.composite
def documents(draw):
    parts = []
    for _ in range(draw(st.integers(1, 16))):
        kind = draw(st.sampled_from(["sentence", "sentence", "sentence", "odd", "text"]))
        if kind == "sentence":
            parts.append(" ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=18)))
                         + draw(st.sampled_from([". ", "? ", ".\n\n", "。", "\n"])))
        elif kind == "odd":
            parts.append(draw(st.sampled_from(ODD)) + draw(st.sampled_from(["\n\n", " ", "\n"])))
        else:
            parts.append(draw(st.text(min_size=1, max_size=20)))
    return "".join(parts)


@pytest.mark.parametrize("unit", ["words", "tokens", "chars"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents(), data=st.data())
def test_invariants_with_the_hashing_embedder(unit, text, data):
    size = data.draw(st.integers({"chars": 12, "words": 3, "tokens": 4}[unit], 80), label="size")
    config = ChunkConfig(
        strategy="semantic", unit=unit, size=size, format="text", title="Runbook",
        header=data.draw(st.sampled_from(["none", "title"]), label="header") if size >= 20 else "none",
        overlap=data.draw(st.sampled_from([0, 0, size // 3]), label="overlap"),
        semantic_threshold=data.draw(st.one_of(st.none(), st.floats(-1, 1)), label="threshold"),
        semantic_percentile=data.draw(st.floats(0, 100), label="percentile"),
        semantic_min_size=data.draw(st.one_of(st.none(), st.integers(0, size)), label="min_size"),
    )
    s = sizer(unit)
    made = SemanticChunker(config, s, HASHING)
    chunks = made.chunk(text)
    s = s.for_text(text)  # a fast backend hands documents it cannot count exactly to its reference
    for c in chunks:
        assert c.text == text[c.start_char : c.end_char] and c.text == c.text.strip() and c.text
        assert s.count(c.embed_text) == c.size <= size
    assert [c.to_dict() for c in made.chunk(text)] == [c.to_dict() for c in chunks]  # deterministic
    covered = bytearray(len(text))
    for c in chunks:
        covered[c.start_char : c.end_char] = b"\x01" * (c.end_char - c.start_char)
    assert all(covered[i] for i, ch in enumerate(text) if not ch.isspace())  # nothing lost
    # in order (with overlap the shared packer may repeat a tail: ``sentences`` does the same)
    assert all(a.start_char < b.start_char and a.end_char <= b.end_char for a, b in zip(chunks, chunks[1:]))
    if config.overlap == 0:
        assert all(a.end_char <= b.start_char for a, b in zip(chunks, chunks[1:]))
    # a chunk is flagged exactly when it holds a sentence the embedder gives no direction
    spans = boundaries.sentence_spans(text)
    zero = [sp for sp, v in zip(spans, HASHING.embed([text[a:b] for a, b in spans])) if not any(v)]
    for c in chunks:
        holds = any(a < c.end_char and c.start_char < b for a, b in zero)
        assert (UNDEFINED in c.reasons) == holds
        assert c.needs_review or not holds
    # with no merging, no chunk crosses a topic boundary
    if config.semantic_min_size == 0:
        sims, _ = gap_similarities(made.vectors([text[a:b] for a, b in spans]))
        cuts = [spans[g][1] for g in boundary_gaps(sims, config.semantic_threshold, config.semantic_percentile)]
        assert not any(c.start_char < p < c.end_char for c in chunks for p in cuts)


def test_repeated_text_keeps_its_own_offsets():
    para = "Questions about this policy go to the security team at #sec-help."
    text = "\n\n".join([para, "Alpha words here.", para, para])
    chunks = chunker(HASHING, sizer("tokens"), size=16, unit="tokens", semantic_threshold=0.5).chunk(text)
    assert [c.start_char for c in chunks if c.text == para] == [0, text.index(para, 1), text.rindex(para)]


def test_empty_and_whitespace_only_documents_give_no_chunks():
    assert chunker().chunk("") == [] and chunker().chunk(" \n\n\t ") == []


# -- wiring and configuration ----------------------------------------------------------------------------
def test_router_and_api_build_it_with_the_named_embedder():
    config = ChunkConfig(strategy="semantic", semantic_embedder="hashing-64")
    made = build_chunker(config)
    assert isinstance(made, SemanticChunker) and made.embedder.name == "hashing-64@1"
    chunks = chunk_text(TWO_TOPICS, strategy="semantic", semantic_embedder="hashing", size=32)
    assert " ".join(texts(chunks)) == TWO_TOPICS


def test_a_twin_for_another_sizer_keeps_the_injected_embedder():
    @dataclass(frozen=True)
    class Routing(WordSizer):
        def for_text(self, text):
            return WordSizer()

    emb = TopicEmbedder()
    made = chunker(emb, Routing(), semantic_min_size=0)
    twin = made.for_text(TWO_TOPICS)
    assert twin is not made and twin.embedder is emb
    assert texts(made.chunk(TWO_TOPICS)) == texts(chunker(semantic_min_size=0).chunk(TWO_TOPICS))


@pytest.mark.parametrize("bad", [
    {"semantic_percentile": 101}, {"semantic_percentile": -1}, {"semantic_percentile": float("nan")},
    {"semantic_threshold": 1.5}, {"semantic_threshold": -1.01}, {"semantic_threshold": True},
    {"semantic_min_size": 257}, {"semantic_min_size": -1}, {"semantic_min_size": 2.5},
    {"semantic_embedder": "none"}, {"semantic_embedder": ""},
])
def test_bad_configuration_fails_fast(bad):
    with pytest.raises(ConfigError, match="semantic_"):
        ChunkConfig(strategy="semantic", size=256, **bad)


def test_unknown_embedder_fails_at_construction():
    with pytest.raises(ConfigError, match="unknown embedder"):
        build_chunker(ChunkConfig(strategy="semantic", semantic_embedder="word2vec"))


def test_fingerprint_covers_semantic_fields_only_for_semantic():
    base = ChunkConfig(strategy="semantic")
    changed = [replace(base, semantic_threshold=0.4), replace(base, semantic_percentile=20),
               replace(base, semantic_min_size=3), replace(base, semantic_embedder="hashing")]
    prints = {c.fingerprint() for c in [base, *changed]}
    assert len(prints) == 5
    other = ChunkConfig(strategy="recursive")
    assert replace(other, semantic_threshold=0.4, semantic_embedder="hashing").fingerprint() == other.fingerprint()


# -- the real model ---------------------------------------------------------------------------------------
COOKING = ("The pasta should boil for ten minutes in salted water. Add garlic and olive oil to the pan. "
           "Grate parmesan over the finished dish. Fresh basil makes the tomato sauce fragrant. "
           "Serve the spaghetti warm with crusty bread.")
CLUSTER = ("Kubernetes schedules pods onto nodes in the cluster. A deployment manages replica sets for "
           "rolling updates. Use kubectl to inspect the pod logs. Services expose pods through a stable "
           "virtual IP. Configure liveness probes so failed containers restart.")


def test_minilm_puts_the_boundary_between_two_topics():
    made = build_chunker(ChunkConfig(strategy="semantic", size=256, format="text"))
    assert made.embedder.name == "all-MiniLM-L6-v2-onnx-int8@1"  # the default: int8 weights on ONNX Runtime
    assert build_chunker(ChunkConfig(strategy="semantic", semantic_embedder="minilm")).embedder.name == \
        "all-MiniLM-L6-v2-onnx@1"  # 'minilm': the same weights, fp32
    text = f"{COOKING} {CLUSTER}"
    assert texts(made.chunk(text)) == [COOKING, CLUSTER]
    # a sentence over the model's window is embedded whole, in pieces, not refused or cut to its head
    run_on = "and the cluster keeps scheduling pods onto healthy nodes " * 40
    long = f"{COOKING} Then {run_on.strip()}. {CLUSTER}"
    assert made.embedder.count_tokens([run_on])[0] > made.embedder.max_tokens
    chunks = made.chunk(long)
    assert chunks[0].text == COOKING and all(c.size <= 256 for c in chunks)
    # int8 quantizes activations per batch; the batching is deterministic, so the chunks are too
    again = build_chunker(ChunkConfig(strategy="semantic", size=256, format="text")).chunk(long)
    assert [c.to_dict() for c in again] == [c.to_dict() for c in chunks]
    assert "".join(texts(chunks)).replace(" ", "") == long.replace(" ", "")


def test_a_repeated_sentence_is_embedded_once():
    emb = TopicEmbedder()
    chunks = chunker(emb, semantic_min_size=0).chunk("Alpha one. Alpha one.\n\nAlpha one. Beta two.")
    assert sorted(emb.seen) == ["Alpha one.", "Beta two."]
    assert texts(chunks) == ["Alpha one. Alpha one.\n\nAlpha one.", "Beta two."]


def test_minilm_on_onnx_cuts_where_minilm_on_pytorch_cuts():
    """'minilm' runs on ONNX Runtime for speed: the chunks must be those of the PyTorch model."""
    from chunkwise.embed.minilm import MiniLMEmbedder

    config = ChunkConfig(strategy="semantic", size=64, format="text", semantic_min_size=0, semantic_embedder="minilm")
    fast = build_chunker(config)
    torch_made = SemanticChunker(config, fast.sizer, MiniLMEmbedder())
    run_on = "and the cluster keeps scheduling pods onto healthy nodes " * 40
    for text in (f"{COOKING} {CLUSTER}", f"{CLUSTER}\n\n{COOKING} Then {run_on.strip()}. {COOKING}"):
        assert [(c.start_char, c.end_char) for c in fast.chunk(text)] == \
            [(c.start_char, c.end_char) for c in torch_made.chunk(text)]


def test_token_ids_path_cuts_where_the_text_path_cuts():
    """The ONNX MiniLM takes token ids (one tokenizer pass, unpadded batches of one length): the
    chunks are those of embedding the sentence texts, long sentences (window pieces) included."""
    class TextsOnly:  # the same model without embed_ids: the path taken before
        def __init__(self, inner):
            self.inner, self.name, self.max_tokens = inner, inner.name, inner.max_tokens
            self.calls = 0

        def count_tokens(self, texts):
            return self.inner.count_tokens(texts)

        def embed(self, texts):
            self.calls += 1
            return self.inner.embed(texts)

    config = ChunkConfig(strategy="semantic", size=64, format="text", semantic_min_size=0)
    fast = build_chunker(config)
    assert fast._by_ids
    slow = SemanticChunker(config, fast.sizer, TextsOnly(fast.embedder))
    run_on = "and the cluster keeps scheduling pods onto healthy nodes " * 40
    text = f"{CLUSTER}\n\n{COOKING} Then {run_on.strip()}. {COOKING} {CLUSTER}"
    assert [(c.start_char, c.end_char) for c in fast.chunk(text)] == \
        [(c.start_char, c.end_char) for c in slow.chunk(text)]
    assert slow.embedder.calls and not slow._by_ids


@st.composite
def markdown_documents(draw):
    """Markdown of headed sections (levels 1-3, some empty) holding sentences and paragraphs."""
    parts = []
    for _ in range(draw(st.integers(1, 8))):
        level = draw(st.integers(1, 3))
        parts.append("#" * level + " " + " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)))
                     .capitalize() + "\n\n")
        for _ in range(draw(st.integers(0, 6))):
            parts.append(" ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=14))).capitalize()
                         + draw(st.sampled_from([". ", ".\n\n", "? "])))
        parts.append("\n\n")
    return draw(st.sampled_from(["", "Preface words here. "])) + "".join(parts)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown_documents(), size=st.integers(8, 60), header=st.sampled_from(["none", "path", "full"]),
       percentile=st.floats(0, 100))
def test_every_chunk_carries_its_sections_heading_path_and_stays_inside_it(text, size, header, percentile):
    """Issue 29 item 6: semantic chunks carry heading paths — each chunk lies inside one Markdown
    section and carries that section's path, whatever the topic boundaries."""
    from chunkwise.chunking.markdown import parse_markdown

    config = ChunkConfig(strategy="semantic", unit="words", size=size, format="markdown", header=header,
                         semantic_percentile=percentile, semantic_min_size=0)
    chunks = SemanticChunker(config, WordSizer(), HASHING).chunk(text)
    sections = [s for s in parse_markdown(text).sections if text[s.start:s.end].strip()]
    for c in chunks:
        sec = next(s for s in sections if s.start <= c.start_char < s.end)
        assert c.end_char <= sec.end, (c.text, sec)
        assert c.heading_path == sec.heading_path
    if any(s.heading_path for s in sections):
        assert any(c.heading_path for c in chunks)
