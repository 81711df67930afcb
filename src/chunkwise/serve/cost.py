"""Which requests are heavy: a cost predicted from the request alone, before any work is done.

The engine admits heavy jobs to at most ``workers - 1`` workers (engine.py), so one worker is
always free for light ones: a client sending wide queries back to back can slow light callers by
what the two share (CPU, the GIL between native calls) but never queue them behind seconds of
its work (issue 25 item 8). The prediction must be cheap (it runs on the event loop for every
request) and must not read the store (a lookup per request would be the work it means to avoid),
so it uses the request's shape, which is what makes a search expensive:

- terms: every distinct query word is one more posting list read and scored (BM25) and one more
  term to mark; a 400-word query reads hundreds of lists where a question reads ten;
- hits fetched: ``k x overfetch`` candidates are ranked, merged, de-duplicated and expanded;
- expansion: neighbours read two more chunks per hit, parent/page a whole section or page;
- an unbounded passage (``passage_budget`` null) may grow a hit to its whole section.

The unit is "a default question" (about ten terms, ``k`` 5, ``overfetch`` 3, no expansion) = 1;
a request at or above ``HEAVY`` of them is heavy. Misjudging costs little either way: a heavy query
taken for light runs in the light lane (as every query did before the lanes); a light one taken for
heavy waits for a heavy slot.
"""
from __future__ import annotations

import re

HEAVY = 8.0  # default questions' worth of work from which a request is heavy
HEAVY_EMBED_INPUTS = 32  # /v1/embeddings: inputs per request from which it is heavy
_BASE_TERMS, _BASE_FETCH = 10, 15
_EXPANSION = {"none": 1.0, "neighbours": 2.0, "parent": 4.0, "page": 4.0, "pages": 6.0}
_WORD = re.compile(r"\w+")
_MAX_SCAN = 4000  # characters looked at for terms (the request model caps a query at 4,000)


def search_cost(query: str, k: int = 5, overfetch: int = 3, expand: str = "none",
                passage_budget: int | None = 1, **_ignored) -> float:
    """Predicted work of one search, in default questions (see the module docstring)."""
    terms = len(set(_WORD.findall(query[:_MAX_SCAN].lower())))
    term_factor = max(1.0, terms / _BASE_TERMS)
    fetch_factor = max(1.0, k * overfetch / _BASE_FETCH)
    spread = _EXPANSION.get(expand, 4.0) * (2.0 if passage_budget is None else 1.0)
    return term_factor * fetch_factor * spread


def heavy_search(query: str, **options) -> bool:
    return search_cost(query, **options) >= HEAVY


def heavy_embedding(inputs: int) -> bool:
    return inputs >= HEAVY_EMBED_INPUTS
