"""Sizers and the tokenizer traps, each with a test."""
import json

import pytest
from conftest import chroma_texts, sizer

from chunkwise.chunking.sizing import make_sizer
from chunkwise.models import minilm_tokenizer_path
from chunkwise import ConfigError
from chunkers import chunk_text

LONG = " ".join(f"Rollback failure {i}: page on-call within 15 minutes with deploy ID pay-{i}." for i in range(400))


def test_minilm_tokenizer_file_ships_with_truncation_and_padding():
    spec = json.loads(minilm_tokenizer_path().read_text())
    assert spec["truncation"]["max_length"] == 128
    assert spec["padding"] is not None


def test_truncation_trap_is_disarmed():
    from tokenizers import Tokenizer

    raw = Tokenizer.from_file(str(minilm_tokenizer_path()))  # as shipped: truncates at 128
    assert len(raw.encode(LONG, add_special_tokens=False).ids) == 128
    s = sizer("tokens", "minilm", "tokenizers")
    assert s.count(LONG) > 5000
    chunks = chunk_text(LONG, strategy="fixed", size=256, backend="tokenizers")
    assert len(chunks) > 20  # a truncating sizer would return one chunk
    assert chunks[-1].end_char == len(LONG.rstrip())


def test_special_tokens_excluded_unless_configured():
    plain = make_sizer("tokens", "minilm", "tokenizers")
    special = make_sizer("tokens", "minilm", "tokenizers", special_tokens=True)
    assert special.count("hello world") == plain.count("hello world") + 2
    chunks = chunk_text(LONG, strategy="recursive", size=64, special_tokens=True)
    assert all(special.count(c.embed_text) <= 64 for c in chunks)
    assert max(c.size for c in chunks) <= 64


def test_windows_come_from_offsets_not_decoded_ids():
    text = "Rollback FAILURE: Page On-Call within 15 minutes with Deploy-ID pay-742. Straße naïve café."
    s = sizer("tokens", "minilm", "tokenizers")
    decoded = s._tok.decode(s.ids(text))
    assert decoded != text  # an uncased WordPiece decode lowercases and re-spaces
    for c in chunk_text(text, strategy="fixed", size=8, overlap=2, backend="tokenizers"):
        assert c.text == text[c.start_char : c.end_char]
        assert c.text in text


def test_tokie_ids_equal_tokenizers_reference(examples):
    ref = sizer("tokens", "minilm", "tokenizers")
    fast = sizer("tokens", "minilm", "tokie")
    texts = dict(examples)
    texts.update(chroma_texts())
    for name, text in texts.items():
        assert fast.ids(text) == ref.ids(text), name
        pieces = [p for p in text.split("\n\n") if p][:300]
        assert fast.count_many(pieces) == ref.count_many(pieces), name


def test_tiktoken_offline_counts_and_spans():
    s = sizer("tokens", "cl100k_base")
    assert s.name.endswith("@tiktoken")
    text = "Rollback failure: page on-call within 15 minutes. 東京 ü"
    starts, ends = s.spans(text)
    assert len(starts) == s.count(text)
    assert starts[0] == 0 and ends[-1] == len(text)


def test_words_and_chars():
    assert sizer("words").count("a  b\n c ") == 3
    assert sizer("chars").count("a  b") == 4


def test_unknown_tokenizer_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="tokenizer.json"):
        make_sizer("tokens", str(tmp_path / "missing.json"))


def test_tokenizer_path_is_accepted(tmp_path):
    target = tmp_path / "tok"
    target.mkdir()
    (target / "tokenizer.json").write_bytes(minilm_tokenizer_path().read_bytes())
    assert make_sizer("tokens", str(target), "tokenizers").count("hello world") == 2


@pytest.mark.parametrize("text", ["\x7f", "a \x7f b", "東京. \x7f"])  # '東京. \x7f' found by test_semantic's property
def test_tokie_routes_text_with_del_to_the_reference(text):
    # tokie 0.1.4 counts DEL as a token; the BERT normaliser of tokenizers drops it (the only ASCII
    # code point where the two disagree, measured over all 128)
    ref = sizer("tokens", "minilm", "tokenizers")
    fast = sizer("tokens", "minilm", "tokie")
    assert fast.for_text(text).count(text) == ref.count(text)
    assert all(fast.for_text(chr(c)).count(chr(c)) == ref.count(chr(c)) for c in range(128))
