"""Access tags: one validated value type, one visibility rule, one encoding per index.

**Tag grammar.** A tag is normalised, then validated:

1. Unicode NFKC, then case-folded (``Finance`` = ``finance``, a fullwidth ``ｈｒ`` = ``hr``);
2. leading/trailing white space removed, every inner run of white space (NBSP, tabs, ideographic
   space, ...) becomes one ASCII space: ``hr managers`` is *one* tag, never ``hr`` plus ``managers``;
3. then it must be 1-64 characters of letters, digits and combining marks (any script) and
   ``- _ . : / @ + #`` and inner spaces. Anything else (``,`` ``<`` ``*`` quotes, control
   characters, ...) is rejected with a one-line message naming the tag and where it came from;
4. every space-separated word holds a letter or a digit, and ``--`` appears nowhere: ``finance -``
   (what a marker closed with ``--->`` would leave) and ``-`` are not tags, and every tag can be
   written inside a section marker (an HTML comment, which may not contain ``--``).

**A set of tags** is given either as a list of tags (each item one tag: YAML/TOML/JSON lists, the
API) or as one string of comma-separated tags (``--acl``, ``--groups``, a front matter ``acl:
finance, sre``, a section marker ``<!-- acl: finance, sre -->``, a TOML or ``--acl-map`` string).
A comma is therefore never part of a tag. At most 64 tags per chunk; a caller may hold up to 4,096
groups (directory users belong to hundreds; every index looks groups up tag by tag, so the count
costs little).

A reader holding ``groups`` may see a chunk when the chunk is ``ready`` and shares at least one tag
with them. A chunk with no tags, or in ``review``, is visible to nobody (fail closed).

**Encodings** (only here): the store's ``acl`` column is a JSON array of the tags; for SQLite FTS5
each tag becomes one index token, ``"g" + hex(utf-8 bytes)``, a single alphanumeric word to the
unicode61 tokenizer, so the filter sits inside ``MATCH`` and two tags can never be confused with
each other or with a word of the text.
"""
from __future__ import annotations

import fnmatch
import json
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Iterator, Mapping

from chunkwise.errors import AccessTagError, ConfigError

READY = "ready"
MAX_TAG_CHARS = 64
MAX_TAGS = 64
MAX_CALLER_GROUPS = 4096
_PUNCT = frozenset("-_.:/@+# ")
_SPACE = re.compile(r"\s+")


def normalise_tag(raw: str, where: str = "access tag") -> str:
    """One tag in its canonical form, or ``AccessTagError``."""
    if not isinstance(raw, str):
        raise AccessTagError(f"{where}: a tag must be a string, not {type(raw).__name__} ({raw!r})")
    tag = _SPACE.sub(" ", unicodedata.normalize("NFKC", raw).casefold()).strip()
    if not tag:
        raise AccessTagError(f"{where}: empty access tag")
    if len(tag) > MAX_TAG_CHARS:
        raise AccessTagError(f"{where}: access tag {tag[:20]!r}... is longer than {MAX_TAG_CHARS} characters")
    for ch in tag:
        if ch in _PUNCT or unicodedata.category(ch)[0] in "LNM":
            continue
        raise AccessTagError(f"{where}: access tag {tag!r} has {ch!r} (U+{ord(ch):04X}); tags are letters, "
                             "digits, spaces and - _ . : / @ + # (comma separates tags)")
    if "--" in tag or any(not any(unicodedata.category(ch)[0] in "LN" for ch in word) for word in tag.split(" ")):
        raise AccessTagError(f"{where}: access tag {tag!r} is malformed: each word needs a letter or digit, and "
                             "'--' may not appear (it would end a section marker's comment)")
    return tag


@dataclass(frozen=True)
class AccessTags:
    """A validated, normalised, sorted set of access tags. Build it with ``parse``; constructing it
    directly with anything not already canonical raises."""

    tags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.tags, tuple) or self.tags != tuple(sorted({normalise_tag(t) for t in self.tags})):
            raise AccessTagError(f"AccessTags{self.tags!r} is not canonical; use AccessTags.parse(...)")

    @classmethod
    def parse(cls, value: Any, where: str = "access tags", limit: int = MAX_TAGS) -> "AccessTags":
        """``None`` -> no tags; a string -> comma-separated tags; a list/tuple/set -> one tag per
        item (an item holding a comma is rejected: it would read as two tags elsewhere). More
        than ``limit`` distinct tags are refused."""
        if isinstance(value, AccessTags):
            return value
        if value is None:
            return cls()
        if isinstance(value, str):
            items = [p for p in value.split(",") if p.strip()]
        elif isinstance(value, (list, tuple, set, frozenset)):
            items = list(value)
            for item in items:
                if isinstance(item, str) and "," in item:
                    raise AccessTagError(f"{where}: access tag {item!r} contains a comma; give each tag as its "
                                         "own list item")
        else:
            raise AccessTagError(f"{where}: access tags must be a comma-separated string or a list of strings, "
                                 f"not {type(value).__name__}")
        tags = tuple(sorted({normalise_tag(t, where) for t in items}))
        if len(tags) > limit:
            what = "groups per caller" if limit == MAX_CALLER_GROUPS else "access tags per chunk"
            raise AccessTagError(f"{where}: {len(tags)} distinct tags; at most {limit} {what}")
        return cls(tags)

    def __iter__(self) -> Iterator[str]:
        return iter(self.tags)

    def __len__(self) -> int:
        return len(self.tags)

    def __bool__(self) -> bool:
        return bool(self.tags)

    def __contains__(self, tag: object) -> bool:
        return tag in self.tags

    def shares(self, other: "AccessTags") -> bool:
        return not set(self.tags).isdisjoint(other.tags)

    def __str__(self) -> str:
        return ", ".join(self.tags)

    # -- encodings -------------------------------------------------------------------------------
    def column(self) -> str:
        """The store's ``acl`` column: a JSON array (unambiguous whatever the tags hold)."""
        return json.dumps(list(self.tags), ensure_ascii=False)

    @classmethod
    def from_column(cls, value: str) -> "AccessTags":
        """Read the ``acl`` column back. A value that is not a valid array of canonical tags reads
        as no tags at all: an unreadable row is never served under a guess. Cached: a store has few
        distinct tag sets and an index reads one per row."""
        return _from_column(value)

    def tokens(self) -> tuple[str, ...]:
        """The FTS5 tokens, one per tag."""
        return tuple("g" + t.encode("utf-8").hex() for t in self.tags)

    def index(self, quality: str) -> str:
        """The FTS column value: the tokens when the chunk may be served at all, else ''."""
        return " ".join(self.tokens()) if quality == READY and self.tags else ""


@lru_cache(maxsize=8192)
def _from_column(value: str) -> AccessTags:
    try:
        items = json.loads(value) if value else []
        if not isinstance(items, list):
            return AccessTags()
        tags = AccessTags.parse(items)
    except (ValueError, ConfigError):
        return AccessTags()
    return tags if list(tags.tags) == items else AccessTags()


def parse_acl_map(value: Any, where: str = "--acl-map") -> dict[str, AccessTags]:
    """``{"glob": tags, ...}`` with each value a list or a comma-separated string of tags."""
    if not isinstance(value, Mapping):
        raise AccessTagError(f"{where}: expected a mapping of glob -> [tags] (e.g. {{\"finance/*\": [\"finance\"]}}), "
                             f"not {type(value).__name__}")
    out = {}
    for pattern, tags in value.items():
        if not isinstance(pattern, str) or not pattern:
            raise AccessTagError(f"{where}: glob {pattern!r} must be a non-empty string")
        out[pattern] = AccessTags.parse(tags, f"{where} {pattern!r}")
        if not out[pattern]:
            raise AccessTagError(f"{where} {pattern!r}: no tags given (a document nobody may read would be stored "
                                 "for review; say which groups may read it)")
    return out


def map_tags(doc_id: str, acl_map: Mapping[str, AccessTags] | None) -> AccessTags | None:
    """Tags of the first glob of ``acl_map`` matching ``doc_id``; None when none matches."""
    for pattern, tags in (acl_map or {}).items():
        if fnmatch.fnmatchcase(doc_id, pattern):
            return AccessTags.parse(tags)
    return None


def caller_groups(groups: Iterable[str] | str | AccessTags | None) -> AccessTags:
    """A caller's groups, under the same grammar as the tags they are compared with. A string or
    tuple is parsed once (cached): one search checks the groups at every step, and a directory
    user's thousand groups would otherwise be normalised dozens of times per query."""
    if isinstance(groups, (str, tuple)):
        return _caller_groups(groups)
    return AccessTags.parse(groups, "groups", MAX_CALLER_GROUPS)


@lru_cache(maxsize=256)
def _caller_groups(groups: str | tuple) -> AccessTags:
    return AccessTags.parse(groups, "groups", MAX_CALLER_GROUPS)


def acl_index(tags: str | Iterable[str], quality: str) -> str:
    """The FTS column value for a stored ``acl`` column (JSON) or a list of tags."""
    parsed = AccessTags.from_column(tags) if isinstance(tags, str) else AccessTags.parse(list(tags))
    return parsed.index(quality)


def permitted(tags: Iterable[str] | AccessTags, quality: str, groups) -> bool:
    """The one visibility rule, for chunks checked one at a time (expansion, re-checks, tests)."""
    if quality != READY:
        return False
    return AccessTags.parse(tags if isinstance(tags, AccessTags) else list(tags)).shares(caller_groups(groups))
