"""Helpers for the row-level security tests (tests/store/test_row_security.py, the property in
tests/property/test_row_security_property.py): a secured PostgreSQL store with a reader role, raw
reads as that role, and what each table should show a caller, computed from the owner's raw rows
in Python (never through the policies or chunkwise's own queries)."""
import json
import urllib.parse
import uuid

from chunkwise.access import AccessTags
from chunkwise.config import ChunkConfig
from chunkwise.embed import make_embedder
from chunkwise.pipeline import ingest

SETTING = "chunkwise.groups"
TABLES = {  # what a reader's raw SELECT of each secured table returns, as comparable keys
    "chunks": "SELECT chunk_id FROM chunks",
    "vectors": "SELECT embed_key FROM vectors",
    "documents": "SELECT doc_id FROM documents",
    "version_links": "SELECT newer, older FROM version_links",
    "acl_stats": "SELECT acl FROM acl_stats",
    "acl_sets": "SELECT acl FROM acl_sets",
    "postings": "SELECT lexeme, key FROM postings",
    "term_df": "SELECT lexeme, set_id FROM term_df",
    "dense": "SELECT key FROM dense",
}
# Valid tags holding what the grammar allows beyond letters: spaces, : / @ + # . - _, other
# scripts, a combining mark; and a multi-word tag beside its words.
TAGS = ("hr managers", "hr", "managers", "財務", "a:b/c@d+e#f", "x-y_z.w", "cafe\u0301", "staff")
CONFIG = ChunkConfig(strategy="structure", size=48, header="path")


def role_url(url: str, role: str) -> str:
    """The database URL with ``role`` (any characters, percent-encoded) as the user."""
    return url.replace("postgresql://postgres:@", f"postgresql://{urllib.parse.quote(role, safe='')}@", 1)


def new_role(admin_url: str, prefix: str = "reader") -> str:
    """A fresh login role whose name needs quoting (a space, a double quote)."""
    import psycopg
    from psycopg import sql

    role = f'{prefix} "{uuid.uuid4().hex[:8]}"'
    with psycopg.connect(admin_url, autocommit=True) as con:
        con.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
    return role


def drop_role(admin_url: str, role: str, *databases: str) -> None:
    """Drop ``role`` after taking its privileges in ``databases`` (URLs) away."""
    import psycopg
    from psycopg import sql

    who = sql.Identifier(role)
    for url in databases:
        try:
            with psycopg.connect(url, autocommit=True) as con:
                con.execute(sql.SQL("DROP OWNED BY {}").format(who))
        except psycopg.OperationalError:
            pass  # the database is gone already, and its privileges with it
    with psycopg.connect(admin_url, autocommit=True) as con:
        con.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(who))


def as_reader(url: str, statement: str, groups_setting: str | None = None, params=()):
    """Rows of one raw statement in a transaction of the reader at ``url``, the setting written
    first as given (``None``: not at all)."""
    import psycopg

    with psycopg.connect(url) as con:
        if groups_setting is not None:
            con.execute("SELECT set_config(%s, %s, true)", (SETTING, groups_setting))
        return [tuple(r) for r in con.execute(statement, params).fetchall()]


def seen(url: str, groups_setting: str | None) -> dict[str, set]:
    """Every secured table as the reader sees it."""
    return {table: {_key(r) for r in as_reader(url, sql, groups_setting)} for table, sql in TABLES.items()}


def _key(row):
    return tuple(tuple(v) if isinstance(v, list) else v for v in row) if len(row) > 1 else (
        tuple(row[0]) if isinstance(row[0], list) else row[0])


def expected(owner_url: str, groups) -> dict[str, set]:
    """What each table should show a caller holding ``groups``, from the owner's raw rows."""
    import psycopg

    g = set(AccessTags.parse(groups).tags)
    with psycopg.connect(owner_url) as con:
        chunks = con.execute("SELECT chunk_id, doc_id, embed_key, acl, quality FROM chunks").fetchall()
        vectors = {k for (k,) in con.execute("SELECT embed_key FROM vectors")}
        links = con.execute("SELECT newer, older FROM version_links").fetchall()
        stats = [tuple(a) for (a,) in con.execute("SELECT acl FROM acl_stats")]
        keys = dict(con.execute("SELECT chunk_id, key FROM chunks").fetchall())
        terms = dict(con.execute("SELECT chunk_id, lex_tf FROM chunks").fetchall())
        sets = {i: tuple(a) for i, a in con.execute("SELECT id, acl FROM acl_sets")}
        term_df = con.execute("SELECT lexeme, set_id FROM term_df").fetchall()
    ok = [c for c in chunks if c[4] == "ready" and set(c[3]) & g]
    docs = {c[1] for c in ok}
    return {
        "chunks": {c[0] for c in ok},
        "vectors": {c[2] for c in ok} & vectors,
        "documents": docs,
        "version_links": {(n, o) for n, o in links if n in docs and o in docs},
        "acl_stats": {a for a in stats if set(a) & g},
        "acl_sets": {a for a in sets.values() if set(a) & g},
        "postings": {(lx, keys[c[0]]) for c in ok for lx in terms[c[0]]},  # every term of every permitted row
        "term_df": {(lx, i) for lx, i in term_df if set(sets[i]) & g},
        "dense": {keys[c[0]] for c in ok if c[2] in vectors},  # each permitted chunk that has a vector
    }


def corpus(root, seed: int = 5) -> dict[str, list[str]]:
    """~14 documents under random tags (sections with their own, a review file, an untagged one, a
    declared newer version under other tags); returns the acl map."""
    import random

    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    words = ["salary", "leave", "deploy", "rollback", "budget", "audit", "pager", "refund", "policy", "team"]
    acl_map = {}
    for d in range(12):
        parts = [f"# Doc {d}\n"]
        for s in range(3):
            parts.append(f"## {rng.choice(words).title()} {s}\n")
            if rng.random() < 0.3:
                parts.append(f"<!-- acl: {', '.join(rng.sample(TAGS, 2))} -->\n")
            parts.append(" ".join(rng.choice(words) for _ in range(rng.randint(10, 50))) + ".\n")
        if d == 4:
            parts.insert(0, "---\nacl: [unclosed\n---\n")  # unreadable front matter: review
        (root / f"d{d:02d}.md").write_text("\n".join(parts), encoding="utf-8")
        if d != 9:  # d09 has no tags at all
            acl_map[f"d{d:02d}.md"] = rng.sample(TAGS, rng.randint(1, 2))
    body = "# Leave policy\n\nAnnual leave must be requested {n} days in advance through the portal.\n"
    (root / "p0.md").write_text("---\nversion: 1\n---\n" + body.format(n=14), encoding="utf-8")
    (root / "p1.md").write_text("---\nversion: 2\nsupersedes: p0.md\n---\n" + body.format(n=21), encoding="utf-8")
    acl_map["p0.md"], acl_map["p1.md"] = ["staff", "hr"], ["hr managers"]
    return acl_map


def build(root, url: str) -> dict:
    acl_map = corpus(root)
    ingest([root], url, CONFIG, embedder=make_embedder("hashing"), acl_map=acl_map)
    return acl_map


def retag(owner: str, assignment: dict[int, tuple[str, ...]]) -> None:
    """Give each chunk its drawn tags, as an ingest would leave them: ``servable`` and the
    per-tag-set statistics follow the rows (one transaction)."""
    import psycopg

    with psycopg.connect(owner) as con:
        with con.cursor() as cur:
            cur.executemany("UPDATE chunks SET acl = %s, servable = (quality = 'ready' AND cardinality(%s::text[]) > 0)"
                            " WHERE key = %s", [(list(t), list(t), k) for k, t in assignment.items()])
        con.execute("DELETE FROM acl_stats")
        con.execute("INSERT INTO acl_stats (acl, rows, total_len) SELECT acl, count(*), sum(lex_len) FROM chunks"
                    " WHERE servable GROUP BY acl")


def groups_json(groups) -> str:
    return json.dumps(list(AccessTags.parse(groups).tags), ensure_ascii=False)
