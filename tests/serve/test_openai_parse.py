"""The /v1/embeddings request rules, without a server: every JSON body is either a valid call or an
OpenAI-style 4xx naming the field (never another exception), token ids decode to the very text they
encode, and the published limits are cl100k_base's own."""
from __future__ import annotations

import pytest
from hypothesis import example, given, strategies as st

pytest.importorskip("fastapi")
tiktoken = pytest.importorskip("tiktoken")

import chunkwise.serve.models as m  # noqa: E402
import chunkwise.serve.openai as openai  # noqa: E402

REQUEST = m.embedding_request("hashing-384@1", 384)
ENC = tiktoken.get_encoding(openai.TOKEN_ENCODING)

json_values = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                                       max_size=3), max_leaves=12)


def test_limits_are_cl100k_bases():
    assert m.MAX_TOKEN_ID == ENC.max_token_value
    undefined = []
    for t in range(ENC.max_token_value + 1):
        try:
            ENC.decode_single_token_bytes(t)
        except KeyError:
            undefined.append(t)
    assert tuple(undefined) == m.UNDEFINED_TOKEN_IDS


@given(payload=st.fixed_dictionaries({"model": st.just("hashing-384@1")},
                                     optional={"input": json_values, "encoding_format": json_values,
                                               "dimensions": json_values, "user": json_values}) | json_values)
@example(payload={"model": "hashing-384@1", "input": [[1, 100256]]})
@example(payload={"model": "hashing-384@1", "input": [2**64]})
@example(payload={"model": "hashing-384@1", "input": ["\ud800"]})
@example(payload={"model": "hashing-384@1", "input": "x", "dimenions": 384})
def test_any_body_is_a_call_or_a_4xx(payload):
    try:
        call = openai.parse(payload, REQUEST)
        texts = openai.texts(call)
    except openai.EmbeddingError as exc:
        assert 400 <= exc.status < 500 and exc.message and "pydantic" not in exc.message.lower()
        assert "loc" not in exc.message and "[type=" not in exc.message
        return
    assert len(texts) == len(call.inputs) >= 1 and all(isinstance(t, str) for t in texts)


@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=5))
def test_token_ids_decode_to_the_text_they_encode(texts):
    call = openai.parse({"model": "x", "input": [ENC.encode_ordinary(t) for t in texts]}, REQUEST)
    assert openai.texts(call) == texts


@pytest.mark.parametrize("payload, param, words", [
    ({"model": "x", "input": "a", "mdoel": 1}, "mdoel", "Unrecognized request argument"),
    ({"input": "a"}, "model", "required"),
    ({"model": "x", "input": {"a": 1}}, "input", "token ids"),
    ({"model": "x", "input": "a", "dimensions": 5}, "dimensions", "384"),
    ({"model": "x", "input": "a", "encoding_format": "int8"}, "encoding_format", "base64"),
    ({"model": "x", "input": [[1] * 8193]}, "input", "8192"),
    ({"model": "x", "input": [[1] * 8000] * 40}, "input", "300000"),
    ([1, 2], None, "JSON object"),
])
def test_errors_name_the_field(payload, param, words):
    with pytest.raises(openai.EmbeddingError) as err:
        openai.parse(payload, REQUEST)
    assert err.value.status == 400 and err.value.param == param and words in err.value.message


def test_aliases_and_models():
    assert openai.accepts("TEXT-EMBEDDING-ADA-002", "m@1", ("text-embedding-ada-002",))
    assert not openai.accepts("text-embedding-3-large", "m@1", ("text-embedding-ada-002",))
    assert openai.find_model("m@1", "m") == openai.model_object("m@1")
    with pytest.raises(openai.EmbeddingError) as err:
        openai.find_model(None, "m")
    assert err.value.status == 404
    with pytest.raises(Exception, match="--model-alias"):
        openai.check_aliases(["two words"])
