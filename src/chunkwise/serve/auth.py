"""Where a caller's access groups come from: one small class per deployment, one protocol.

Groups are never taken from the query string, and from a request body only when the server was
started for local use (``--insecure-groups-in-body``). No groups means no answer (401/403), never a
default. Pure: no framework imports, so every rule is tested without a server.

Header format (``X-Chunkwise-Groups``): comma-separated tags, each percent-encoded UTF-8 where it
has to be (``%E8%B4%A2%E5%8A%A1`` for 财务), so a
browser's ``fetch`` (which sends only Latin-1 header bytes) can name any tag. Plain ``sre,eng-oncall``
needs no encoding (a comma is never part of a tag). A header sent twice is refused: a gateway that appends instead of replacing would
otherwise let the client's copy win.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Mapping, Protocol, Sequence
from urllib.parse import unquote

from chunkwise import api
from chunkwise.api import ConfigError

GROUPS_HEADER = "x-chunkwise-groups"
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_TOKEN_CHARS = re.compile(r"[!-~]+")  # visible ASCII: what an Authorization header can carry
MIN_TOKEN_LENGTH = 16


class AuthError(Exception):
    """A request refused before anything is read: ``status`` 400 (malformed), 401 (no or unknown
    credentials) or 403 (credentials that carry no group). ``bearer`` adds WWW-Authenticate."""

    def __init__(self, status: int, message: str, code: str, bearer: bool = False) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.bearer = status, message, code, bearer


class Headers(Protocol):
    def getlist(self, key: str) -> list[str]: ...


class GroupSource(Protocol):
    """``name`` is shown by /health; ``groups`` answers who the caller is for /search, /documents
    and /whoami; ``check_client`` guards endpoints that need a known caller but no groups."""

    name: str

    def groups(self, headers: Headers, body_groups: Sequence[str] | str | None) -> tuple[str, ...]: ...

    def check_client(self, headers: Headers) -> None: ...


def _one(headers: Headers, key: str) -> str | None:
    values = headers.getlist(key)
    if len(values) > 1:
        raise AuthError(400, f"the {key} header was sent {len(values)} times; send it once", "duplicate_header")
    return values[0] if values else None


def parse_groups_header(value: str) -> tuple[str, ...]:
    """``"sre,%E8%B4%A2%E5%8A%A1"`` -> ``("sre", "财务")``: split on commas, percent-decode, strip,
    drop empties. Starlette hands header bytes over as Latin-1; they are read back as UTF-8."""
    try:
        raw = value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        raise AuthError(400, "X-Chunkwise-Groups is not UTF-8; percent-encode non-ASCII tags", "bad_groups") from None
    if _BAD_PERCENT.search(raw):
        raise AuthError(400, "X-Chunkwise-Groups has a '%' that starts no %XX escape; write '%' as %25", "bad_groups")
    out = []
    for part in raw.split(","):
        try:
            tag = unquote(part, errors="strict").strip()
        except UnicodeError:
            raise AuthError(400, "X-Chunkwise-Groups: a %XX escape is not UTF-8", "bad_groups") from None
        if tag:
            out.append(tag)
    return _checked(out)


def _checked(tags: Sequence[str]) -> tuple[str, ...]:
    """Canonical groups under the library's tag grammar (a bad tag is a 400); none is a 403."""
    try:
        groups = api.caller_groups([t for t in tags if t and t.strip()])
    except api.ConfigError as exc:
        raise AuthError(400, str(exc), "bad_groups") from None
    if not groups:
        raise AuthError(403, "the caller has no access group; nothing can be served", "no_groups")
    return groups


def _refuse_body(body_groups) -> None:
    if body_groups is not None:
        raise AuthError(400, "\"groups\" in the body are not accepted by this server (its groups come from "
                             "the gateway header or the bearer token); leave the field out", "groups_in_body")


class TrustedHeader:
    """``--trust-groups-header``: a gateway in front authenticates the user and sets
    ``X-Chunkwise-Groups`` (it must replace any copy the client sent)."""

    name = "header"

    def groups(self, headers: Headers, body_groups=None) -> tuple[str, ...]:
        _refuse_body(body_groups)
        value = _one(headers, GROUPS_HEADER)
        if value is None:
            raise AuthError(401, "no X-Chunkwise-Groups header: this server takes the caller's groups from the "
                                 "gateway in front of it", "no_credentials")
        return parse_groups_header(value)

    def check_client(self, headers: Headers) -> None:
        return None  # the gateway decides who may reach the server at all


class BearerTokens:
    """``--tokens FILE``: ``Authorization: Bearer TOKEN``, each token mapped to its groups. Only
    SHA-256 digests are kept in memory and looked up, so the comparison never runs on the secret."""

    name = "tokens"

    def __init__(self, digests: Mapping[str, tuple[str, ...]]) -> None:
        self._digests = dict(digests)

    def _lookup(self, headers: Headers) -> tuple[str, ...]:
        value = _one(headers, "authorization")
        if value is None:
            raise AuthError(401, "no bearer token: send Authorization: Bearer TOKEN", "no_credentials", bearer=True)
        scheme, _, token = value.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise AuthError(401, "send the token as Authorization: Bearer TOKEN", "no_credentials", bearer=True)
        groups = self._digests.get(hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest())
        if groups is None:
            raise AuthError(401, "unknown bearer token", "invalid_token", bearer=True)
        return groups

    def groups(self, headers: Headers, body_groups=None) -> tuple[str, ...]:
        _refuse_body(body_groups)
        return _checked(self._lookup(headers))

    def check_client(self, headers: Headers) -> None:
        self._lookup(headers)


class CallerSays:
    """``--insecure-groups-in-body``: the caller names its groups, as ``"groups"`` in a JSON body or,
    for GET requests that have no body, in ``X-Chunkwise-Groups``. Loopback only, or (``tokens``)
    any address for callers that hold a token of the file (its groups are not used)."""

    name = "body"

    def __init__(self, tokens: BearerTokens | None = None) -> None:
        self._tokens = tokens

    def groups(self, headers: Headers, body_groups=None) -> tuple[str, ...]:
        self.check_client(headers)
        value = _one(headers, GROUPS_HEADER)
        from_header = parse_groups_header(value) if value is not None else None
        if body_groups is None and from_header is None:
            raise AuthError(401, "no groups: put \"groups\": [\"...\"] in the JSON body (or X-Chunkwise-Groups "
                                 "on a GET)", "no_credentials")
        if body_groups is not None:
            listed = body_groups.split(",") if isinstance(body_groups, str) else list(body_groups)
            from_body = _checked(listed)
            if from_header is not None and set(from_header) != set(from_body):
                raise AuthError(400, "the body's \"groups\" and X-Chunkwise-Groups differ; send one", "bad_groups")
            return from_body
        return from_header

    def check_client(self, headers: Headers) -> None:
        if self._tokens is not None:
            self._tokens.check_client(headers)


def load_tokens(path: str | Path) -> BearerTokens:
    """Read a tokens file: a JSON object ``{"TOKEN": ["group", ...], "sha256:HEX": [...]}``. A key
    ``sha256:HEX`` holds the digest of a token instead of the token itself (keep secrets out of the
    file: ``printf %s TOKEN | sha256sum``). Tokens are at least 16 visible ASCII characters."""
    where = f"--tokens {path}"
    from chunkwise.textfile import read_text

    text = read_text(path, "--tokens")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{where}: not JSON ({exc}); expected {{\"TOKEN\": [\"group\", ...]}}") from exc
    if not isinstance(data, dict) or not data:
        raise ConfigError(f"{where}: expected a non-empty JSON object {{\"TOKEN\": [\"group\", ...]}}")
    digests: dict[str, tuple[str, ...]] = {}
    for i, (key, groups) in enumerate(data.items(), start=1):
        if key.startswith("sha256:"):
            digest = key[len("sha256:"):].lower()
            if not re.fullmatch(r"[0-9a-f]{64}", digest):
                raise ConfigError(f"{where}: entry {i}: 'sha256:' must be followed by 64 hex digits")
        else:
            if not _TOKEN_CHARS.fullmatch(key) or len(key) < MIN_TOKEN_LENGTH:
                raise ConfigError(f"{where}: entry {i}: a token must be at least {MIN_TOKEN_LENGTH} visible ASCII "
                                  "characters; make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'")
            digest = hashlib.sha256(key.encode("ascii")).hexdigest()
        if (not isinstance(groups, list) or not groups
                or not all(isinstance(g, str) and g.strip() for g in groups)):
            raise ConfigError(f"{where}: entry {i}: the groups must be a non-empty list of non-empty strings")
        if digest in digests:
            raise ConfigError(f"{where}: entry {i}: the same token is listed twice")
        try:
            digests[digest] = api.caller_groups(groups)
        except ConfigError as exc:
            raise ConfigError(f"{where}: entry {i}: {exc}") from None
    return BearerTokens(digests)
