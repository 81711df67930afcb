"""The feature-hashing embedder and the embedder registry (no optional dependency needed)."""
import hashlib
import json
import math
import os
import pickle
import struct
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkwise.embed import HashingEmbedder, cosine, make_embedder
from chunkwise.embed import base as embed_base
from chunkwise.embed.hashing import _PATTERNS, _tokens, tokens
from chunkwise.errors import ConfigError, DependencyError

TEXTS = [
    "",
    "   ... --- !!! ",
    "Chunk records carry exact offsets into the original text.",
    "The ingest run re-embeds only chunks whose embed_key changed.",
    "Straße, ＡＢＣ — 東京タワー, हिन्दी भाषा; 한국어 문서, naïve café",
    "机器学习是人工智能的一个分支。",
    "Short.",
    " ".join(f"word{i % 97} token{i % 13}" for i in range(2000)),  # long: the dense path
    "spam " * 1500,  # one cell counted past the weight table
]
# Pinned recipe: these vectors are stored under the names "hashing-384@1" and "hashing-256@2";
# if this changes, every stored vector under those names is silently wrong. Change the name instead.
GOLDEN = ["Chunk records carry exact offsets into the original text.",
          "Straße, ＡＢＣ — 東京タワー, हिन्दी भाषा; max_seq_length!", "spam " * 1500]
GOLDEN_DIGESTS = {
    (384, 1): "8bebc6a2255f6eca8380afc131a5e5f78e6057add5019f283d08cfc784a723c1",
    (256, 2): "509f62765ba35f027b573cfca70ab6ac2b659ad6e786614ba52d03fa8d0e839b",
}


def rounded_digest(vectors) -> str:
    """Digest of vectors rounded to 12 decimals (robust to a last-ulp libm difference elsewhere)."""
    return hashlib.sha256(";".join(",".join(f"{x:.12f}" for x in v) for v in vectors).encode()).hexdigest()


def exact_bytes(vectors) -> bytes:
    return b"".join(struct.pack(f"<{len(v)}d", *v) for v in vectors)


# -- names and the registry -----------------------------------------------------------------------

@pytest.mark.parametrize("spec, name, dim", [
    ("hashing", "hashing-384@1", 384),
    ("hashing@2", "hashing-384@2", 384),
    ("hashing-256", "hashing-256@1", 256),
    ("hashing-256@2", "hashing-256@2", 256),
    (" Hashing-64@1 ", "hashing-64@1", 64),
    ("hashing-384@1", "hashing-384@1", 384),
])
def test_names_resolve_and_round_trip(spec, name, dim):
    e = make_embedder(spec)
    assert (e.name, e.dim, e.max_tokens) == (name, dim, None)
    assert make_embedder(e.name).name == e.name  # a stored name rebuilds the same embedder
    assert isinstance(e, embed_base.Embedder)


def test_every_variant_is_a_different_model():
    variants = [make_embedder(n) for n in ("hashing", "hashing@2", "hashing-256", "hashing-256@2")]
    assert len({e.name for e in variants}) == 4
    text = ["feature hashing with a sign bit"]
    a, b = (e.embed(text)[0] for e in variants[:2])
    assert a != b and abs(cosine(a, b)) < 0.5  # another hash family: unrelated vectors, same quality


def test_none_gives_no_embedder():
    assert make_embedder("none") is None
    assert make_embedder("NONE") is None


@pytest.mark.parametrize("bad", ["bogus", "", "hashing-", "hashing@0", "hashing-1", "hashing-x", "minilm@2",
                                 "hashing-99999999"])
def test_bad_names_fail_with_the_list_of_valid_names(bad):
    with pytest.raises(ConfigError) as err:
        make_embedder(bad)
    msg = str(err.value)
    assert bad.strip() in msg or "hashing" in msg
    if bad in ("bogus", ""):
        assert "none" in msg and "hashing-DIM" in msg and "minilm" in msg


def test_constructor_validates():
    for dim, version in ((0, 1), (True, 1), (384, 0), (384, "1"), (2.5, 1)):
        with pytest.raises(ConfigError):
            HashingEmbedder(dim, version)


def test_missing_optional_dependency_gives_the_install_hint(monkeypatch):
    real = embed_base.importlib.util.find_spec
    monkeypatch.setattr(embed_base.importlib.util, "find_spec",
                        lambda name, *a: None if name in ("torch", "sentence_transformers") else real(name, *a))
    with pytest.raises(DependencyError) as err:
        make_embedder("minilm")
    assert "pip install 'chunkwise[embed]'" in str(err.value)
    assert err.value.exit_code == 2


def test_import_is_light():
    code = ("import sys, chunkwise.embed; "
            "print(','.join(m for m in ('numpy', 'torch', 'sentence_transformers', 'transformers', "
            "'tokenizers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# -- the vectors ----------------------------------------------------------------------------------

def test_shape_and_unit_norm():
    vs = HashingEmbedder().embed(TEXTS)
    assert len(vs) == len(TEXTS) and all(len(v) == 384 and isinstance(v, list) for v in vs)
    assert all(type(x) is float for v in vs for x in v)
    for text, v in zip(TEXTS, vs):
        if tokens(text):
            assert math.isclose(math.hypot(*v), 1.0, rel_tol=1e-12)
    assert HashingEmbedder().embed([]) == []


def test_empty_text_is_the_zero_vector_and_never_a_match():
    e = HashingEmbedder()
    empty, punct, real = e.embed(["", "  -- !! ..", "some words"])
    assert empty == [0.0] * 384 and punct == [0.0] * 384
    assert cosine(empty, real) == 0.0 and cosine(empty, empty) == 0.0  # "no evidence", not 1.0


def test_shared_words_score_higher_than_unrelated():
    e = HashingEmbedder()
    pairs = [
        ("How do I rotate the database credentials?", "Rotate database credentials every 90 days.",
         "The quarterly revenue grew by twelve percent."),
        ("kubernetes pod restart loop", "Why does my kubernetes pod keep restarting in a loop",
         "Preheat the oven and bake the bread for forty minutes"),
        ("机器学习模型", "机器学习是人工智能的一个分支", "今天天气很好"),
        ("हिन्दी भाषा का इतिहास", "हिन्दी भाषा भारत में बोली जाती है", "quantum chromodynamics"),
    ]
    for query, near, far in pairs:
        q, a, b = e.embed([query, near, far])
        assert cosine(q, a) > cosine(q, b) + 0.2, (query, cosine(q, a), cosine(q, b))


def test_word_order_matters_through_bigrams():
    e = HashingEmbedder()
    a, b, c = e.embed(["new york times", "times new york", "york new times"])
    assert cosine(a, b) < 0.999 and cosine(a, a) == pytest.approx(1.0)
    assert cosine(a, b) > cosine(a, c)  # "a b" keeps the bigram "new york"; the other shares none


def test_case_and_unicode_normalisation():
    e = HashingEmbedder()
    a, b = e.embed(["STRASSE ABC File", "straße ＡＢＣ ﬁle"])  # case-fold, NFKC width and ligature
    assert exact_bytes([a]) == exact_bytes([b])


def test_tokens():
    assert tokens("Hello, World! max_seq_length=256") == ["hello", "world", "max", "seq", "length", "256"]
    assert tokens("東京タワー 한국어") == ["東", "京", "タ", "ワ", "ー", "한국어"]
    assert tokens("हिन्दी भाषा। naïve") == ["हिन्दी", "भाषा", "naïve"]  # marks stay in words
    assert tokens("") == [] and tokens(" ,.;") == []


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200))
def test_ascii_fast_path_matches_the_unicode_tokenizer(text):
    fast = [t.decode() for t in _tokens(text)]
    assert fast == _PATTERNS[False, False].findall(text.lower())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=6))
def test_python_and_numpy_paths_are_bit_identical_property(texts):
    pytest.importorskip("numpy")
    py = HashingEmbedder(numpy=False).embed(texts)
    npv = HashingEmbedder(numpy=True).embed(texts)
    assert exact_bytes(py) == exact_bytes(npv)


def test_python_and_numpy_paths_are_bit_identical():
    pytest.importorskip("numpy")
    for dim in (384, 16, 1000):
        py = HashingEmbedder(dim, numpy=False).embed(TEXTS)
        npv = HashingEmbedder(dim, numpy=True).embed(TEXTS)
        assert exact_bytes(py) == exact_bytes(npv), dim
    # batches larger than one vectorised step
    many = [f"text number {i} about topic {i % 7}" for i in range(1100)]
    assert exact_bytes(HashingEmbedder(numpy=False).embed(many)) == exact_bytes(HashingEmbedder(numpy=True).embed(many))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=6), st.sampled_from([384, 16]))
def test_float32_vectors_are_the_float_vectors_rounded_property(texts, dim):
    """``embed_float32`` (what ingest stores) is ``array("f", v)`` of each ``embed`` vector, bit for
    bit, on both paths."""
    from array import array

    for numpy in (False, True):
        e = HashingEmbedder(dim, numpy=numpy)
        got = e.embed_float32(texts)
        assert all(isinstance(v, array) and v.typecode == "f" for v in got)
        assert [v.tobytes() for v in got] == [array("f", v).tobytes() for v in e.embed(texts)]


def test_batch_composition_does_not_change_vectors():
    e = HashingEmbedder()
    alone = [e.embed([t])[0] for t in TEXTS]
    assert exact_bytes(alone) == exact_bytes(HashingEmbedder().embed(TEXTS))
    assert exact_bytes(alone[::-1]) == exact_bytes(e.embed(TEXTS[::-1]))


def test_golden_recipe():
    for (dim, version), digest in GOLDEN_DIGESTS.items():
        for numpy in (False, None):
            assert rounded_digest(HashingEmbedder(dim, version, numpy=numpy).embed(GOLDEN)) == digest


def test_same_vectors_across_processes_and_hash_seeds():
    here = exact_bytes(HashingEmbedder(numpy=False).embed(TEXTS))
    code = (
        "import hashlib, json, struct, sys\n"
        "from chunkwise.embed import make_embedder\n"
        "texts = json.loads(sys.stdin.read())\n"
        "vs = make_embedder('hashing').embed(texts)\n"
        "print(hashlib.sha256(b''.join(struct.pack(f'<{len(v)}d', *v) for v in vs)).hexdigest())\n"
    )
    digests = set()
    for seed in ("0", "4242", "random"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", code], input=json.dumps(TEXTS), env=env,
                             capture_output=True, text=True, check=True)
        digests.add(out.stdout.strip())
    assert digests == {hashlib.sha256(here).hexdigest()}


def test_pickles_as_its_recipe():
    e = HashingEmbedder(256, 2)
    e.embed(TEXTS)  # fills the token table
    clone = pickle.loads(pickle.dumps(e))
    assert clone.name == e.name and len(pickle.dumps(e)) < 200
    assert exact_bytes(clone.embed(TEXTS)) == exact_bytes(e.embed(TEXTS))


def test_one_string_is_refused():
    with pytest.raises(TypeError):
        HashingEmbedder().embed("a whole text, not a list")


def test_a_subclass_that_overrides_embed_is_obeyed_by_the_float32_path():
    # Ingest asks for float32 vectors; a subclass (a test double, a wrapper that calls a service)
    # that changes embed() must get its own vectors and errors there, not the base class's.
    class Down(HashingEmbedder):
        def embed(self, texts):
            raise RuntimeError("service down")

    class Doubled(HashingEmbedder):
        def embed(self, texts):
            return [[2 * x for x in v] for v in super().embed(texts)]

    with pytest.raises(RuntimeError, match="service down"):
        Down().embed_float32(TEXTS)
    base, doubled = HashingEmbedder(), Doubled()
    assert [list(v) for v in doubled.embed_float32(TEXTS)] == \
        [[2 * x for x in v] for v in base.embed_float32(TEXTS)]
