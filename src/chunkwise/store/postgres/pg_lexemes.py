"""The PostgreSQL row's lexical columns and the SQL fragments that read them.

A chunk's analysed fields become one ``tsvector`` (``lex``: every field's lexemes, so one GIN index
finds a term in any field) and a term -> per-field counts map (``lex_tf``), the counts BM25F needs;
the same analyzer as SQLite's (``LexicalFields``), so both stores score the same terms. Words over
PostgreSQL's lexeme limit are stored and queried as a digest, so no analysed term is unfindable.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from typing import Mapping, Sequence

from chunkwise.lexical import FIELDS, LexicalFields

MAX_LEXEME_BYTES = 2046  # PostgreSQL's limit for one tsvector lexeme
_SHORT = MAX_LEXEME_BYTES // 4  # characters: a term this short is within the limit in any UTF-8


def lexeme(term: str) -> str:
    """A term as its tsvector lexeme: itself, or (a word over PostgreSQL's lexeme limit) a digest,
    so every term the analyzer finds is indexed and found again the same way."""
    if len(term.encode("utf-8")) <= MAX_LEXEME_BYTES:
        return term
    return "#" + hashlib.sha256(term.encode("utf-8")).hexdigest()


def lexical(record: Mapping) -> tuple[LexicalFields, list[str], dict[str, list[int]], int]:
    """A chunk record's analysed fields (``LexicalFields.of_record``, what SQLite keeps too), the
    lexemes of all of them (the tsvector), each lexeme's count per field in ``FIELDS`` order, and the
    body's length in terms (BM25's length)."""
    fields = LexicalFields.of_record(record)
    split = fields.terms()
    # Counted in C, the body (most terms) in one comprehension: this runs for every chunk written.
    body, *others = (Counter(terms) for terms in split)
    counts = {t: [n] + [0] * (len(FIELDS) - 1) for t, n in body.items()}
    for i, counter in enumerate(others, 1):
        for t, n in counter.items():
            counts.setdefault(t, [0] * len(FIELDS))[i] += n
    if any(len(t) > _SHORT for t in counts):  # rare: a term that may be over the lexeme limit
        long_terms, counts = counts, {}
        for t, per_field in long_terms.items():
            merged = counts.setdefault(lexeme(t), [0] * len(FIELDS))
            merged[:] = [a + b for a, b in zip(merged, per_field)]
    return fields, sorted(counts), counts, len(split[0])


def in_fields(fields: Sequence[str], lexeme_sql: str, counts_sql: str | None = None) -> str:
    """SQL: the row holds the lexeme in one of ``fields`` (nothing to add when all are asked for:
    the tsvector holds every field's terms). ``counts_sql``: the lexeme's per-field counts (a JSON
    array) when the query has already taken them out of ``lex_tf``. Field positions come from
    ``FIELDS``, never from input."""
    unknown = [f for f in fields if f not in FIELDS]
    if unknown or not fields:
        raise ValueError(f"lexical fields must be a non-empty subset of {FIELDS}, got {tuple(fields)}")
    if set(fields) == set(FIELDS):
        return ""
    counts = counts_sql or f"(c.lex_tf -> {lexeme_sql})"
    return " AND (" + " OR ".join(f"coalesce(({counts} ->> {FIELDS.index(f)})::int, 0) > 0" for f in fields) + ")"


def per_field(counts_sql: str, cast: str, names: str = "") -> str:
    """SQL: the per-field counts of one posting, from its JSON array ``counts_sql`` (one small value:
    taking it out of ``lex_tf`` once per posting, not once per field, saves two de-TOASTings of the
    row's whole term-count map, which were most of a BM25 query's time)."""
    return ", ".join(f"coalesce(({counts_sql} ->> {i})::{cast}, 0)" + (f" AS {names}{i}" if names else "")
                     for i in range(len(FIELDS)))


def tsquery(term: str) -> str:
    """One lexeme as a ``tsquery`` literal (quoted: taken verbatim, never re-parsed)."""
    return "'" + lexeme(term).replace("\\", "\\\\").replace("'", "''") + "'"
