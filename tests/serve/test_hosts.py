"""DNS rebinding: a real server answers only the Host names it was configured with, sets no CORS
header, and the body-groups mode stays on loopback unless callers must hold a token."""
from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

import pytest

from chunkwise.api import ConfigError
from chunkwise.serve.auth import AuthError, BearerTokens, CallerSays
from chunkwise.serve.hosts import allowed_hosts, check_name, host_name, permitted_host
from chunkwise.serve.start import policy

from .serving import SECRET, TOKENS, Server


def raw(url: str, request: bytes) -> tuple[int, dict, bytes]:
    """Send exactly ``request`` (raw bytes: any Host header, or none) and read the whole answer."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as s:
        s.sendall(request)
        data = b""
        while True:
            got = s.recv(65536)
            if not got:
                break
            data += got
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return int(lines[0].split()[1]), headers, body


def get(url: str, path: str, *host_lines: str, extra: str = "") -> tuple[int, dict, bytes]:
    hosts = "".join(f"Host: {h}\r\n" for h in host_lines)
    return raw(url, f"GET {path} HTTP/1.1\r\n{hosts}{extra}Connection: close\r\n\r\n".encode("latin-1"))


def post_search(url: str, host: str, body: dict, extra: str = "") -> tuple[int, dict, bytes]:
    data = json.dumps(body).encode()
    head = (f"POST /search HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{extra}"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n")
    return raw(url, head.encode("latin-1") + data)


def port_of(url: str) -> int:
    return urlsplit(url).port


@pytest.mark.parametrize("value, name", [
    ("localhost", "localhost"), ("LocalHost.:8080", "localhost"), ("127.0.0.1:80", "127.0.0.1"),
    ("[::1]:8080", "::1"), ("[::1]", "::1"), ("evil.example:8080", "evil.example"),
    ("", None), ("a b", None), ("evil.example:http", None), ("[::1", None), ("user@localhost", None),
    ("localhost/x", None), ("[::1]x", None),
])
def test_host_names(value, name):
    assert host_name(value) == name


def test_default_names_are_loopback_and_the_listening_address():
    assert allowed_hosts("127.0.0.1") == {"localhost", "127.0.0.1", "::1"}
    assert allowed_hosts("0.0.0.0") == {"localhost", "127.0.0.1", "::1"}  # a wildcard is no name
    assert "10.1.2.3" in allowed_hosts("10.1.2.3")
    assert "search.example.com" in allowed_hosts("0.0.0.0", ("Search.Example.com",))
    for bad in ("*.example.com", "example.com:8080", "http://example.com", "a,b", ""):
        with pytest.raises(ConfigError, match="--allowed-host"):
            check_name(bad)


def test_permitted_host_needs_exactly_one_allowed_header():
    names = allowed_hosts("127.0.0.1")
    assert permitted_host([(b"host", b"localhost:1")], names)
    assert not permitted_host([], names)
    assert not permitted_host([(b"host", b"localhost"), (b"host", b"evil.example")], names)
    assert not permitted_host([(b"host", b"evil.example")], names)
    assert not permitted_host([(b"host", "lócalhost".encode("utf-8"))], names)


def test_a_rebinding_page_cannot_search_the_body_mode_server(body_server):
    url, port = body_server.url, port_of(body_server.url)
    asked = {"query": f"payroll {SECRET}", "groups": ["finance"], "k": 5}
    for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1.evil.example:{port}", f"localhost.evil:{port}"):
        status, headers, body = post_search(url, host, asked)
        assert status == 400 and json.loads(body)["error"]["code"] == "host_not_allowed", body
        assert SECRET.encode() not in body and "access-control-allow-origin" not in headers
    status, _, body = post_search(url, f"localhost:{port}", asked)
    assert status == 200 and SECRET in json.loads(body)["results"][0]["text"]
    for host in (f"127.0.0.1:{port}", f"[::1]:{port}", "LOCALHOST"):
        assert get(url, "/health", host)[0] == 200


def test_missing_or_repeated_host_is_refused(body_server):
    url, port = body_server.url, port_of(body_server.url)
    status, _, body = raw(url, b"GET /health HTTP/1.0\r\n\r\n")
    assert status == 400 and b"host_not_allowed" in body
    status, _, _ = get(url, "/health", f"localhost:{port}", "evil.example")
    assert status == 400


def test_no_cors_by_default(body_server):
    url, port = body_server.url, port_of(body_server.url)
    origin = "Origin: https://evil.example\r\n"
    status, headers, _ = get(url, "/health", f"127.0.0.1:{port}", extra=origin)
    assert status == 200 and not [h for h in headers if h.startswith("access-control-")]
    preflight = (f"OPTIONS /search HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{origin}Access-Control-Request-Method: POST\r\n"
                 "Access-Control-Request-Headers: content-type\r\nConnection: close\r\n\r\n")
    status, headers, _ = raw(url, preflight.encode())
    assert status >= 400 and not [h for h in headers if h.startswith("access-control-")]


@pytest.fixture(scope="module")
def named_server(store, tmp_path_factory):
    server = Server(store, "--trust-groups-header", "--allowed-host", "search.example.com",
                    log=tmp_path_factory.mktemp("named-log") / "serve.log")
    yield server
    server.stop()


def test_allowed_host_adds_a_name(named_server):
    url, port = named_server.url, port_of(named_server.url)
    assert get(url, "/health", f"search.example.com:{port}")[0] == 200
    assert get(url, "/health", "search.example.com")[0] == 200
    assert get(url, "/health", f"localhost:{port}")[0] == 200
    assert get(url, "/health", f"other.example.com:{port}")[0] == 400


def test_body_mode_stays_on_loopback_without_tokens(tokens_file):
    with pytest.raises(ConfigError, match="loopback"):
        policy(insecure_groups_in_body=True, host="0.0.0.0")
    with pytest.raises(ConfigError, match="--allowed-host search.example.com"):
        policy(insecure_groups_in_body=True, allowed_hosts=("search.example.com",))
    assert isinstance(policy(insecure_groups_in_body=True, allowed_hosts=("127.0.0.2",)), CallerSays)
    with_tokens = policy(insecure_groups_in_body=True, tokens=str(tokens_file), host="0.0.0.0",
                         allowed_hosts=("search.example.com",))
    assert isinstance(with_tokens, CallerSays)


class FakeHeaders(dict):
    def getlist(self, key):
        return [v for k, v in self.items() if k.lower() == key]


def test_body_mode_with_tokens_needs_a_token(tokens_file):
    from chunkwise.serve.auth import load_tokens

    says = CallerSays(load_tokens(tokens_file))
    with pytest.raises(AuthError) as refused:
        says.groups(FakeHeaders(), ["finance"])
    assert refused.value.status == 401
    with pytest.raises(AuthError):
        says.groups(FakeHeaders(authorization="Bearer not-a-token-0123456789"), ["finance"])
    token = next(iter(TOKENS))
    assert says.groups(FakeHeaders(authorization=f"Bearer {token}"), ["finance"]) == ("finance",)
    assert CallerSays().groups(FakeHeaders(), ["finance"]) == ("finance",)
    assert isinstance(load_tokens(tokens_file), BearerTokens)
