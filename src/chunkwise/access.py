"""Access tags as the store and the retrievers see them: one encoding, one rule.

A reader holding ``groups`` may see a chunk when the chunk is ``ready`` and shares at least one tag
with them. A chunk with no tags, or in ``review``, is visible to nobody (fail closed).

For SQLite FTS5 each tag becomes one index token, ``"g" + hex(utf-8 bytes)``: whatever characters a
tag has (``eng-oncall``, ``财务``, ``a b``), the token is a single alphanumeric word to the unicode61
tokenizer, so the filter can sit inside ``MATCH`` and two tags can never be confused with each other
or with a word of the text.
"""
from __future__ import annotations

from typing import Iterable

READY = "ready"


def normalise_groups(groups: Iterable[str] | str | None) -> tuple[str, ...]:
    """Caller groups as a sorted tuple of distinct non-empty tags; ``"a,b"`` is accepted too."""
    if groups is None:
        return ()
    if isinstance(groups, str):
        groups = groups.split(",")
    return tuple(sorted({g.strip() for g in groups if g and g.strip()}))


def acl_token(tag: str) -> str:
    return "g" + tag.encode("utf-8").hex()


def acl_index(tags: str | Iterable[str], quality: str) -> str:
    """The FTS column value: tokens of the tags when the chunk may be served at all, else ''."""
    if isinstance(tags, str):
        tags = tags.split()
    tags = [t for t in tags if t]
    if quality != READY or not tags:
        return ""
    return " ".join(acl_token(t) for t in sorted(set(tags)))


def acl_match(groups: Iterable[str]) -> str:
    """The FTS5 expression that admits only chunks sharing a tag with ``groups``."""
    tokens = [acl_token(g) for g in normalise_groups(groups)]
    return "acl_index : (" + " OR ".join(tokens) + ")"


def permitted(tags: Iterable[str], quality: str, groups: Iterable[str]) -> bool:
    """The one visibility rule, for chunks checked one at a time (expansion, tests)."""
    if quality != READY:
        return False
    return bool(set(tags) & set(groups))
