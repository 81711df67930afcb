"""BM25 in PostgreSQL that scales: a postings table with per-tag-set statistics, and a top-k that
reads only the postings it needs (MaxScore).

Why: scoring through the ``tsvector`` GIN index reads every permitted row holding a query term and
de-TOASTs its term-count map (``lex_tf``): 3.3 s at a million chunks. Here each servable row's terms
are also rows of ``postings`` (lexeme, tag set, key -> body length and per-field counts), kept by
triggers on ``chunks`` in the writing statement's transaction (so no write path can forget them),
ordered by (lexeme, tag set, key): a term's permitted postings are a few index ranges, read without
touching ``chunks``. ``term_df`` holds per (lexeme, tag set) (one row per writer slot: pg_slots) the postings count and upper bounds
(largest per-field count, shortest body), so a caller's document frequency is a sum over the tag
sets it may see (statistics over what the caller may see, never the store's), and each term's
largest possible BM25 contribution is known before any posting is read.

The top k (``top``) is MaxScore: the terms whose postings are few (the rare, high-idf ones:
``essential``) are scored first; the k-th best partial score is a lower bound of the k-th best full
score, and a row holding none of the essential terms scores at most the sum of the other terms'
bounds. When that sum is below the bound, only rows of the essential postings can be in the top k,
and only those whose partial score plus the other terms' bounds reaches it are completed (their
other postings looked up by key). Otherwise more terms become essential and it runs again; with
every term essential it is the exhaustive sum. The candidates returned are a superset of every row
within ``slack`` of the k-th best, as ``PostgresReads.lexical_top`` promises.

A tag set is named by an id (``acl_sets``, never deleted, so an id always means the same set). Under
row-level security the three tables carry the policy "tag sets sharing a caller's group"
(pg_security.POLICIES), so a reader's sums and postings are its own.
"""
from __future__ import annotations

from typing import Sequence

from chunkwise.lexical import FIELDS

# Postings the first essential terms may hold together (permitted); more terms join when the bound
# is not met. At 1M generated chunks (owner, 60 queries, load 6-14): 2,000 gave p50 42.7 / p95 129.9 ms,
# 5,000 68.5 / 379.7, 15,000 32.2 / 231.4 (docs/_figures/pgbm25.md).
BUDGET = 2_000
# A completion stage looks a term up by key for each surviving row (an index probe) unless the
# term's permitted postings are fewer than this many times the rows: then it reads them (one index
# range) and joins. Probes cost ~4-7x a posting read in a range at 1M chunks (EXPLAIN ANALYZE).
PROBE_COST = 4
_F = len(FIELDS)


def postings_function(create: str, uncount: str, count: str) -> str:
    """SQL: the postings trigger's function. ``uncount``/``count``: the statement that takes a deleted
    row's terms off ``term_df`` / adds an inserted row's (over ``p``: lexeme, tag set id, key and, when
    counting, the body's length and per-field counts); migration 11 (pg_slots) gives them slots."""
    return (_POSTINGS_FUNCTION.replace("@CREATE@", create).replace("@UNCOUNT@", uncount.rstrip())
            .replace("@COUNT@", count.rstrip()))


_POSTINGS_FUNCTION = """@CREATE@ FUNCTION chunkwise_postings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    WITH p AS (SELECT e.lexeme, s.id AS set_id, o.key FROM old_rows o JOIN acl_sets s ON s.acl = o.acl
               CROSS JOIN LATERAL jsonb_object_keys(o.lex_tf) AS e(lexeme) WHERE o.servable),
         gone AS (DELETE FROM postings x USING p WHERE x.lexeme = p.lexeme AND x.set_id = p.set_id AND x.key = p.key)
@UNCOUNT@
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO acl_sets (acl) SELECT DISTINCT acl FROM new_rows WHERE servable ORDER BY acl ON CONFLICT (acl) DO NOTHING;
    WITH p AS (SELECT e.key AS lexeme, s.id AS set_id, n.key, n.lex_len AS len,
                      coalesce((e.value ->> 0)::int, 0) AS f0, coalesce((e.value ->> 1)::int, 0) AS f1,
                      coalesce((e.value ->> 2)::int, 0) AS f2
               FROM new_rows n JOIN acl_sets s ON s.acl = n.acl CROSS JOIN LATERAL jsonb_each(n.lex_tf) AS e
               WHERE n.servable),
         added AS (INSERT INTO postings SELECT lexeme, set_id, key, len, f0, f1, f2 FROM p)
@COUNT@
  END IF;
  RETURN NULL;
END $$;
"""
_UNCOUNT = """    UPDATE term_df t SET df = t.df - d.n FROM (SELECT lexeme, set_id, count(*) AS n FROM p GROUP BY 1, 2) d
     WHERE t.lexeme = d.lexeme AND t.set_id = d.set_id;
"""
_COUNT = """    INSERT INTO term_df SELECT lexeme, set_id, count(*), max(f0), max(f1), max(f2), min(len) FROM p
     GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (lexeme, set_id) DO UPDATE SET df = term_df.df + excluded.df,
       m0 = greatest(term_df.m0, excluded.m0), m1 = greatest(term_df.m1, excluded.m1),
       m2 = greatest(term_df.m2, excluded.m2), min_len = least(term_df.min_len, excluded.min_len);
"""

MIGRATION = """
CREATE TABLE acl_sets (id INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY, acl TEXT[] NOT NULL UNIQUE);
CREATE TABLE postings (
    lexeme TEXT NOT NULL,
    set_id INTEGER NOT NULL,
    key BIGINT NOT NULL,
    len INTEGER NOT NULL,
    f0 INTEGER NOT NULL, f1 INTEGER NOT NULL, f2 INTEGER NOT NULL,
    PRIMARY KEY (lexeme, set_id, key) INCLUDE (len, f0, f1, f2)
);
CREATE TABLE term_df (
    lexeme TEXT NOT NULL,
    set_id INTEGER NOT NULL,
    df BIGINT NOT NULL,
    m0 INTEGER NOT NULL, m1 INTEGER NOT NULL, m2 INTEGER NOT NULL,
    min_len INTEGER NOT NULL,
    PRIMARY KEY (lexeme, set_id)
);
""" + postings_function("CREATE", _UNCOUNT, _COUNT) + """
CREATE TRIGGER postings_insert AFTER INSERT ON chunks REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION chunkwise_postings();
CREATE TRIGGER postings_update AFTER UPDATE ON chunks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION chunkwise_postings();
CREATE TRIGGER postings_delete AFTER DELETE ON chunks REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION chunkwise_postings();
""" + """
INSERT INTO acl_sets (acl) SELECT DISTINCT acl FROM chunks WHERE servable ORDER BY acl;
INSERT INTO postings SELECT e.key, s.id, c.key, c.lex_len, coalesce((e.value ->> 0)::int, 0),
       coalesce((e.value ->> 1)::int, 0), coalesce((e.value ->> 2)::int, 0)
  FROM chunks c JOIN acl_sets s ON s.acl = c.acl CROSS JOIN LATERAL jsonb_each(c.lex_tf) AS e WHERE c.servable;
INSERT INTO term_df SELECT lexeme, set_id, count(*), max(f0), max(f1), max(f2), min(len) FROM postings GROUP BY 1, 2;
"""

# SQL: the tag sets a caller may see (``acl_sets`` is small: one row per distinct tag set stored).
SETS_SQL = "SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM acl_sets WHERE acl && %s::text[]"


def caller_sets(db, groups: Sequence[str]) -> list[int]:
    """Ids of the tag sets sharing a group with ``groups``: the postings a caller may be scored on.
    However many groups the caller holds, the filter that follows is this (short) list."""
    return list(db.execute(SETS_SQL, (list(groups),)).fetchone()[0])


def _field_filter(fields: Sequence[str], alias: str = "p") -> str:
    """SQL: the posting holds the term in one of ``fields`` (positions from ``FIELDS``, never input)."""
    unknown = [f for f in fields if f not in FIELDS]
    if unknown or not fields:
        raise ValueError(f"lexical fields must be a non-empty subset of {FIELDS}, got {tuple(fields)}")
    if set(fields) == set(FIELDS):
        return ""
    return " AND (" + " OR ".join(f"{alias}.f{FIELDS.index(f)} > 0" for f in fields) + ")"


def term_stats(db, lexemes: Sequence[str], sets: Sequence[int], fields: Sequence[str] = FIELDS
               ) -> dict[str, tuple[int, tuple[int, ...], int]]:
    """Per lexeme over the tag sets ``sets``: (rows holding it in one of ``fields``, largest count per
    field, shortest body). All fields: a sum over ``term_df``; a subset: counted from ``postings``
    (the bounds stay ``term_df``'s: an upper bound for any subset)."""
    out = {lx: (0, (0,) * _F, 0) for lx in lexemes}
    if not lexemes or not sets:
        return out
    # A row per (lexeme, tag set, writer slot) (store/postgres/pg_slots.py): the slots of a tag set are
    # added up first, and a tag set counts where its sum is positive.
    rows = db.execute("SELECT lexeme, sum(df)::bigint, max(m0), max(m1), max(m2), min(min_len) FROM"
                      " (SELECT lexeme, sum(df) AS df, max(m0) AS m0, max(m1) AS m1, max(m2) AS m2,"
                      " min(min_len) AS min_len FROM term_df WHERE lexeme = ANY(%s::text[]) AND set_id = ANY(%s::int4[])"
                      " GROUP BY lexeme, set_id HAVING sum(df) > 0) s GROUP BY lexeme",
                      (list(lexemes), list(sets))).fetchall()
    for lx, df, m0, m1, m2, shortest in rows:
        out[lx] = (int(df), (m0, m1, m2), shortest)
    if set(fields) != set(FIELDS):
        counted = dict(db.execute(
            "SELECT p.lexeme, count(*) FROM postings p WHERE p.lexeme = ANY(%s::text[]) AND p.set_id = ANY(%s::int4[])"
            f"{_field_filter(fields)} GROUP BY p.lexeme", (list(lexemes), list(sets))).fetchall())
        out = {lx: (int(counted.get(lx, 0)), m, s) for lx, (_, m, s) in out.items()}
    return out


def bound(idf: float, maxima: Sequence[int], shortest: int, weights: Sequence[float], fields: Sequence[str],
          avgdl: float, k1: float, b: float) -> float:
    """The largest BM25F contribution a term can make to any row of the caller's: the weighted
    count at most the weighted per-field maxima, the length norm at least the shortest body's."""
    tf = sum(w * m for w, m in zip(weights, maxima))  # inactive fields weigh 0 (``top``)
    if tf <= 0:
        return 0.0
    norm = k1 * (1 - b + b * max(shortest, 0) / (avgdl or 1.0))
    return idf * tf * (k1 + 1) / (tf + norm)


# One MaxScore round, one statement: the essential terms' permitted postings summed per row (index
# ranges of the primary key: lexeme, then each permitted tag set); the n-th best partial score
# (``cut``); the ``m`` best partial rows completed (the other terms looked up by key), whose n-th
# best full score, with ``cut`` and the previous rounds' bound (``floor``), is ``bound``: n real rows
# score at least it, so the n-th best full score does too. When the other terms' bounds sum below
# it, only rows of the essential postings can reach the top, and they are completed one other term
# at a time, highest bound first, each row dropped as soon as its score so far plus the bounds of
# the terms still to add falls below ``bound`` (one probe per surviving row and term: LATERAL with
# LIMIT 1, so it is never flattened into a scan of a common term's postings). Only the rows within
# ``slack`` of the n-th best full score leave the server, with every term's counts (a few probes).
# Tag-set ids are bound as int4[] so they are index conditions.
_CONTRIB = "{x} * ({w}) * (%(k1)s + 1) / (({w}) + %(k1)s * (1 - %(b)s + %(b)s * p.len / %(avgdl)s))"
_LOOKUP = "FROM postings p WHERE p.lexeme = {lx} AND p.set_id = {c}.set_id AND p.key = {c}.key{fields} LIMIT 1"
_HEAD = """WITH q AS (SELECT * FROM unnest(%(ls)s::text[], %(idf)s::float8[]) WITH ORDINALITY AS t(lexeme, idf, i)),
 s AS MATERIALIZED (SELECT p.key, p.set_id, sum({contrib_q}) AS score
                    FROM q JOIN postings p ON p.lexeme = q.lexeme AND p.set_id = ANY(%(sets)s::int4[])
                    WHERE q.i = ANY(%(ess)s::int8[]){fields} GROUP BY p.key, p.set_id),
 facts AS MATERIALIZED (SELECT (SELECT score FROM s ORDER BY score DESC LIMIT 1 OFFSET %(last)s) AS cut,
                        (SELECT count(*) FROM s) AS matched),
 c0 AS MATERIALIZED (SELECT s.key, s.set_id, s.score FROM s ORDER BY s.score DESC LIMIT %(m)s),
 f0 AS MATERIALIZED (SELECT c0.key, c0.score + coalesce((SELECT sum(p.c) FROM q CROSS JOIN LATERAL
                     (SELECT {contrib_q} AS c {lookup_q}) p WHERE NOT q.i = ANY(%(ess)s::int8[])), 0) AS score FROM c0),
 ok AS MATERIALIZED (SELECT t.bound, %(every)s OR (t.bound IS NOT NULL AND %(rest)s < t.bound * (1 - %(slack)s)) AS ok
                     FROM (SELECT greatest(facts.cut, %(floor)s::float8,
                           (SELECT score FROM f0 ORDER BY score DESC LIMIT 1 OFFSET %(last)s)) AS bound FROM facts) t),
 a0 AS MATERIALIZED (SELECT s.key, s.set_id, s.score FROM s, ok
                     WHERE ok.ok AND (%(every)s OR s.score + %(r0)s >= ok.bound * (1 - %(slack)s)))"""
_STAGE = """,
 t{j} AS MATERIALIZED (SELECT p.key, p.set_id, {contrib} AS c FROM postings p WHERE p.lexeme = %(l{t})s
                       AND p.set_id = ANY(%(sets)s::int4[]){fields} AND (SELECT count(*) FROM a{i}) * %(ratio)s >= %(df{t})s),
 a{j} AS MATERIALIZED (SELECT a.key, a.set_id, a.score + coalesce(p.c, 0) AS score FROM a{i} a
                     LEFT JOIN LATERAL (SELECT {contrib} AS c {lookup}) p ON true, ok
                     WHERE (SELECT count(*) FROM a{i}) * %(ratio)s < %(df{t})s
                       AND a.score + coalesce(p.c, 0) + %(r{j})s >= ok.bound * (1 - %(slack)s)
                     UNION ALL
                     SELECT a.key, a.set_id, a.score + coalesce(t.c, 0) FROM a{i} a
                     LEFT JOIN t{j} t ON t.key = a.key AND t.set_id = a.set_id, ok
                     WHERE (SELECT count(*) FROM a{i}) * %(ratio)s >= %(df{t})s
                       AND a.score + coalesce(t.c, 0) + %(r{j})s >= ok.bound * (1 - %(slack)s))"""
_TAIL = """,
 keep AS MATERIALIZED (SELECT a.key, a.set_id FROM a{j} a WHERE a.score >= coalesce(
                       (SELECT score FROM a{j} ORDER BY score DESC LIMIT 1 OFFSET %(last)s), '-Infinity'::float8) * (1 - %(slack)s)),
 y AS (SELECT keep.key, q.i, p.len, p.f0, p.f1, p.f2 FROM keep CROSS JOIN q CROSS JOIN LATERAL
       (SELECT p.len, p.f0, p.f1, p.f2 {lookup_keep}) p)
SELECT facts.cut, facts.matched, ok.bound, y.key, y.i, y.len, y.f0, y.f1, y.f2 FROM facts CROSS JOIN ok LEFT JOIN y ON true"""


def _round_sql(others: Sequence[int], fields: Sequence[str]) -> str:
    """The statement of one round whose non-essential terms are ``others`` (query positions from 0,
    highest bound first): one completion stage per term."""
    w = " + ".join(f"%(w{i})s * p.f{i}" for i in range(_F))
    where = _field_filter(fields)
    sql = _HEAD.format(contrib_q=_CONTRIB.format(x="q.idf", w=w), fields=where,
                       lookup_q=_LOOKUP.format(lx="q.lexeme", c="c0", fields=where))
    for j, t in enumerate(others, 1):
        sql += _STAGE.format(j=j, i=j - 1, t=t, fields=where, contrib=_CONTRIB.format(x=f"%(x{t})s", w=w),
                             lookup=_LOOKUP.format(lx=f"%(l{t})s", c="a", fields=where))
    return sql + _TAIL.format(j=len(others), lookup_keep=_LOOKUP.format(lx="q.lexeme", c="keep", fields=where))


def top(db, lexemes: Sequence[str], idf: Sequence[float], stats: dict, sets: Sequence[int], avgdl: float, n: int,
        k1: float, b: float, fields: Sequence[str], weights: Sequence[float], slack: float, budget: int | None = None
        ) -> tuple[int, list[tuple]]:
    """(rows holding an essential term, [(key, term index from 1, body length, count per field)] of
    the candidates for the top ``n``): see the module's docstring. ``stats``: ``term_stats`` of the
    lexemes. ``matched`` is exact when every term was essential and otherwise at least ``n``."""
    budget = BUDGET if budget is None else budget
    weights = [float(w) if f in fields else 0.0 for f, w in zip(FIELDS, weights)]
    ub = [bound(x, stats[lx][1], stats[lx][2], weights, fields, avgdl, k1, b) for lx, x in zip(lexemes, idf)]
    order = sorted(range(len(lexemes)), key=lambda i: (-ub[i], stats[lexemes[i]][0]))  # highest bound first
    essential, held = set(), 0
    for i in order:  # the terms with the highest bounds, while their postings fit the budget (one at least)
        if essential and held + stats[lexemes[i]][0] > budget:
            break
        essential.add(i)
        held += stats[lexemes[i]][0]
    args = {"ls": list(lexemes), "idf": [float(x) for x in idf], "sets": list(sets), "k1": float(k1), "b": float(b),
            "avgdl": float(avgdl or 1.0), "last": int(n) - 1, "slack": float(slack), "m": 2 * int(n) + 8,
            **{f"w{i}": w for i, w in enumerate(weights)}, **{f"l{i}": lx for i, lx in enumerate(lexemes)},
            **{f"x{i}": float(x) for i, x in enumerate(idf)}, "ratio": PROBE_COST,
            **{f"df{i}": int(stats[lx][0]) for i, lx in enumerate(lexemes)}}
    floor = None
    while True:
        others = [i for i in order if i not in essential]  # highest bound first
        rest = sum(ub[i] for i in others)
        every = not others
        left = [rest - sum(ub[i] for i in others[:j]) for j in range(len(others) + 1)]
        rows = db.execute(_round_sql(others, fields), {
            **args, "ess": [i + 1 for i in sorted(essential)], "rest": float(rest), "every": every, "floor": floor,
            **{f"r{j}": float(r) for j, r in enumerate(left)}}).fetchall()
        matched, floor = int(rows[0][1]), rows[0][2]
        if every or (floor is not None and rest < floor * (1 - slack)):
            return matched, [r[3:] for r in rows if r[3] is not None]
        # Other terms could still lift a row past the bound: the next highest become essential, until
        # the bound is met (known bound) or another budget's worth of postings joins (fewer than n rows yet).
        grown = 0
        for i in others:
            essential.add(i)
            rest -= ub[i]
            grown += stats[lexemes[i]][0]
            if (rest < floor * (1 - slack)) if floor is not None else grown >= budget:
                break
