"""The groups policies as pure functions: what each accepts, what it refuses, and a round trip of the
header encoding for any tag (hypothesis)."""
from __future__ import annotations

import hashlib
import json
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunkwise.access import normalise_tag
from chunkwise.errors import ConfigError
from chunkwise.serve.auth import AuthError, BearerTokens, CallerSays, TrustedHeader, load_tokens, parse_groups_header


class H:
    def __init__(self, *pairs):
        self.pairs = pairs

    def getlist(self, key):
        return [v for k, v in self.pairs if k.lower() == key]


def latin1(s: str) -> str:
    """What Starlette hands over for a header whose bytes are the UTF-8 of ``s``."""
    return s.encode("utf-8").decode("latin-1")


def valid(t: str) -> bool:
    try:
        normalise_tag(t)
    except ConfigError:
        return False
    return True


tag = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12).filter(valid)


@given(st.lists(tag, min_size=1, max_size=6))
def test_any_tags_survive_the_header(tags):
    """Percent-encoded, any valid tag arrives as the library's own canonical tag."""
    header = ",".join(quote(t, safe="") for t in tags)
    want = tuple(sorted({normalise_tag(t) for t in tags}))
    assert parse_groups_header(header) == want
    assert TrustedHeader().groups(H(("x-chunkwise-groups", header))) == want


@given(st.lists(tag, min_size=1, max_size=4))
def test_raw_utf8_header_bytes_are_read_as_utf8(tags):
    tags = [t for t in tags if "%" not in t]
    if tags:
        assert parse_groups_header(latin1(",".join(tags))) == tuple(sorted({normalise_tag(t) for t in tags}))


@given(st.text(max_size=20))
def test_any_header_is_groups_or_a_clean_refusal(value):
    try:
        groups = parse_groups_header(latin1(value))
    except AuthError as exc:
        assert exc.status in (400, 403) and exc.message
    else:
        assert groups and all(valid(g) for g in groups)


def status(fn) -> int:
    with pytest.raises(AuthError) as info:
        fn()
    return info.value.status


def test_trusted_header():
    policy = TrustedHeader()
    assert policy.groups(H(("x-chunkwise-groups", "sre, Eng-Oncall ,sre"))) == ("eng-oncall", "sre")
    assert status(lambda: policy.groups(H(("x-chunkwise-groups", "sre,<b>")))) == 400  # outside the tag grammar
    assert status(lambda: policy.groups(H())) == 401
    assert status(lambda: policy.groups(H(("x-chunkwise-groups", " , ")))) == 403
    assert status(lambda: policy.groups(H(("x-chunkwise-groups", "a"), ("X-Chunkwise-Groups", "b")))) == 400
    assert status(lambda: policy.groups(H(("x-chunkwise-groups", "a")), ["a"])) == 400
    assert status(lambda: policy.groups(H(("x-chunkwise-groups", ",".join(f"g{i}" for i in range(4097)))))) == 400


def test_bearer_tokens():
    policy = BearerTokens({hashlib.sha256(b"t" * 20).hexdigest(): ("sre",)})
    assert policy.groups(H(("authorization", "Bearer " + "t" * 20))) == ("sre",)
    assert policy.groups(H(("authorization", "bearer   " + "t" * 20 + " "))) == ("sre",)
    for bad in (H(), H(("authorization", "Basic dXNlcjpwdw==")), H(("authorization", "Bearer ")),
                H(("authorization", "Bearer " + "t" * 19))):
        with pytest.raises(AuthError) as info:
            policy.groups(bad)
        assert info.value.status == 401 and info.value.bearer
    assert status(lambda: policy.groups(H(("authorization", "Bearer " + "t" * 20)), ["sre"])) == 400
    assert status(lambda: policy.check_client(H())) == 401


def test_caller_says():
    policy = CallerSays()
    assert policy.groups(H(), ["b", "A"]) == ("a", "b")
    assert policy.groups(H(), "a,b") == ("a", "b")
    assert policy.groups(H(("x-chunkwise-groups", "a"))) == ("a",)
    assert policy.groups(H(("x-chunkwise-groups", "a,b")), ["b", "a"]) == ("a", "b")
    assert status(lambda: policy.groups(H())) == 401
    assert status(lambda: policy.groups(H(), [])) == 403
    assert status(lambda: policy.groups(H(), [" "])) == 403
    assert status(lambda: policy.groups(H(("x-chunkwise-groups", "a")), ["b"])) == 400


def test_tokens_file_hashes(tmp_path):
    secret = "s3cret-token-for-the-ci-bot"
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"sha256:" + hashlib.sha256(secret.encode()).hexdigest(): ["ci", "ci"],
                                "plain-token-0123456789": ["sre"]}), encoding="utf-8")
    policy = load_tokens(path)
    assert policy.groups(H(("authorization", f"Bearer {secret}"))) == ("ci",)
    assert policy.groups(H(("authorization", "Bearer plain-token-0123456789"))) == ("sre",)
    assert secret not in repr(vars(policy))
