"""A caller's groups narrowed to those the store uses, so a directory user's hundreds of groups do
not become hundreds of index probes in every filter (issue 25 item 13).

``acl && $groups`` is answered through the tag GIN index one group at a time: a caller of 1,000
groups made every permission filter 1,000 index searches, most for groups that tag nothing
(0.9 s per BM25 search at 20k chunks against 0.08 s for 64). The tags the servable rows carry are
all in ``acl_stats`` (a row per distinct tag set and writer slot, kept in each document's transaction), so the
groups that can match any row are the caller's groups found there: read once per caller
transaction (the same snapshot as the search) and used by every filter and, on a secured store, by
the policies. It never widens what a caller sees: the result is a subset of the caller's groups,
read through the caller's own view of ``acl_stats`` (a reader's policy shows only tag sets it shares).
"""
from __future__ import annotations

from typing import Sequence

# Callers with up to this many groups are not narrowed: one more round trip would cost more than it saves.
NARROW_FROM = 16


def narrowed(db, groups: Sequence[str]) -> list[str]:
    """The caller's ``groups`` that tag some servable row (a subset, in the given order)."""
    if len(groups) <= NARROW_FROM:
        return list(groups)
    used = set(db.execute("SELECT DISTINCT t FROM (SELECT acl FROM acl_stats WHERE acl && %s::text[] GROUP BY acl"
                          " HAVING sum(rows) > 0) s CROSS JOIN LATERAL unnest(s.acl) AS t WHERE t = ANY(%s::text[])",
                          (list(groups), list(groups))).fetchall())
    return [g for g in groups if (g,) in used]
