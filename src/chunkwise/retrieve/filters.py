"""Search filters a caller may add to narrow results: documents, a source prefix, file types, dates.

Filters only narrow what the caller's groups already permit (the access filter runs first, inside
the ranking query); they never widen it, so no filter value can reveal a hidden document. They are
applied to the ranked, permitted hits before passages are assembled, and the retriever fetches more
hits when filtering leaves fewer than ``k`` passages (up to its refetch limit: a very selective
filter over a large store may return fewer than ``k``).
"""
from __future__ import annotations

import datetime as dt
import posixpath
from dataclasses import dataclass

from chunkwise.errors import ConfigError

MAX_VALUES = 100  # documents or file types in one filter


def _date(value: str | None, name: str) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        raise ConfigError(f"filter {name}: {value!r} is not an ISO date (YYYY-MM-DD)") from None


def _extension(source: str) -> str:
    return posixpath.splitext(source.replace("\\", "/"))[1].lstrip(".").lower()


@dataclass(frozen=True)
class Filters:
    """``doc_ids``: only these documents; ``source_prefix``: sources starting with it (a folder);
    ``file_types``: extensions without the dot (``md``, ``pdf``); ``updated_after``/``updated_before``:
    the document's date (front matter ``updated_at``/``date``) on or after / on or before it, ISO
    dates (a document without a date does not match a date filter; ``updated_after`` later than
    ``updated_before`` is refused, a ConfigError). Empty fields do not filter."""

    doc_ids: tuple[str, ...] = ()
    source_prefix: str = ""
    file_types: tuple[str, ...] = ()
    updated_after: str | None = None
    updated_before: str | None = None

    def __post_init__(self) -> None:
        for name in ("doc_ids", "file_types"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
                raise ConfigError(f"filter {name}: a list of non-empty strings, got {value!r}")
            if len(value) > MAX_VALUES:
                raise ConfigError(f"filter {name}: at most {MAX_VALUES} values, got {len(value)}")
            object.__setattr__(self, name, tuple(value))
        object.__setattr__(self, "file_types", tuple(t.lower().lstrip(".") for t in self.file_types))
        if not isinstance(self.source_prefix, str):
            raise ConfigError(f"filter source_prefix: a string, got {type(self.source_prefix).__name__}")
        after, before = _date(self.updated_after, "updated_after"), _date(self.updated_before, "updated_before")
        if after is not None and before is not None and after > before:
            # The one check of a date range for every entry point (library, HTTP, MCP, integrations):
            # a reversed range is a mistake (swapped fields), never a request for no results.
            raise ConfigError(f"filter: updated_after {after.isoformat()} is later than updated_before "
                              f"{before.isoformat()}; the range is empty (swap them?)")

    @property
    def empty(self) -> bool:
        return not (self.doc_ids or self.source_prefix or self.file_types or self.updated_after or self.updated_before)

    def accepts(self, hit) -> bool:
        """Whether a hit (anything with doc_id, source_uri, updated_at) passes every filter."""
        if self.doc_ids and hit.doc_id not in self.doc_ids:
            return False
        if self.source_prefix and not hit.source_uri.startswith(self.source_prefix):
            return False
        if self.file_types and _extension(hit.source_uri) not in self.file_types:
            return False
        if self.updated_after or self.updated_before:
            try:
                day = dt.date.fromisoformat((hit.updated_at or "")[:10])
            except ValueError:
                return False
            if self.updated_after and day < _date(self.updated_after, "updated_after"):
                return False
            if self.updated_before and day > _date(self.updated_before, "updated_before"):
                return False
        return True

    def to_dict(self) -> dict:
        return {"doc_ids": list(self.doc_ids), "source_prefix": self.source_prefix, "file_types": list(self.file_types),
                "updated_after": self.updated_after, "updated_before": self.updated_before}
