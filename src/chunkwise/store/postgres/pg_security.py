"""Optional row-level security on a PostgreSQL store: the database itself enforces the access rule
for reader roles, a second line of defence behind the filter every chunkwise query carries.

How a caller's groups reach the policies: the reader's transaction sets the transaction-local
setting ``chunkwise.groups`` (``set_config(..., true)``) to a JSON array of the caller's canonical
tags (``access.caller_groups``: a tag never holds NUL or a control character, and JSON carries
commas, quotes, braces and backslashes exactly). ``chunkwise_caller_groups()`` reads it back as a
``text[]``; a missing, empty or non-array setting is the empty array, which overlaps no ``acl``:
no rows (fail closed); a malformed one is an error, never a guess.

The policies (one definition each, below; FOR SELECT, TO PUBLIC) apply to every role that is
neither the tables' owner, nor a member of it, nor a superuser or BYPASSRLS role:
- ``chunks``: servable rows sharing a tag with the caller (the rule of every search query);
- ``vectors``: vectors of some permitted chunk (a vector can be inverted to text);
- ``dense``: the rows of permitted chunks (it holds only servable chunks, with their tags: pg_dense.py);
- ``documents``: documents with a permitted chunk;
- ``version_links``: links whose two documents the caller may see (``visible_document``, the rule
  ``Store.version_links`` filters with);
- ``acl_stats``: only the tag sets the caller shares (their row counts and lengths);
- ``acl_sets``, ``postings``, ``term_df`` (BM25, store/postgres/pg_bm25.py): likewise, only those tag sets.

The owner (ingest, migrations, ``check``) is not subject to them: RLS is enabled, not FORCEd. The
writer must see every row to take a document's set difference, keep the per-tag-set statistics
exact and collect unused vectors; with FORCE it would need a policy letting itself see all, which
is the same trust with more machinery. The boundary is the role: readers get SELECT only.

Enabling is recorded in PostgreSQL's own catalog (``relrowsecurity``, the grants), the one source
of truth: ``reapply`` makes every secured table agree with it after migrations, so the policies
and grants survive a migration that rebuilds a table.

What the setting cannot do: a client holding the reader's credentials can set any groups it
likes. This defends against a query that forgets or breaks the filter, not against a dishonest
client; give such clients no database access (the HTTP service decides the groups).
"""
from __future__ import annotations

from dataclasses import dataclass

from chunkwise.errors import StoreError

GROUPS_SETTING = "chunkwise.groups"
# A scalar sub-select, so the planner evaluates the setting once per statement (an InitPlan, usable
# as a GIN index key) rather than once per row.
CALLER = "(SELECT chunkwise_caller_groups())"
POLICY = "chunkwise_read"
# Readers may read these without a policy: what a store is (migrations) and was built with (settings).
PLAIN_TABLES = ("migrations", "settings", "generation")
# Every table of a store (pg_schema): the only ones pg-secure grants or revokes anything on; other
# tables in the schema are not chunkwise's to touch.
STORE_TABLES = ("roots", "documents", "chunks", "vectors", "runs", "settings", "acl_stats", "version_links", "migrations",
                "generation", "acl_sets", "postings", "term_df", "dense")


def permitted(alias: str, groups: str) -> str:
    """SQL: row ``alias`` of ``chunks`` may be served to ``groups`` (an SQL ``text[]`` expression).
    The one visibility rule of the PostgreSQL store: every query and every policy says it so."""
    return f"{alias}.servable AND {alias}.acl && {groups}"


def dense_permitted(alias: str, groups: str) -> str:
    """SQL: row ``alias`` of ``dense`` may be served to ``groups``: ``permitted`` on the copy of the
    chunk's tags it carries (it holds servable chunks only; store/postgres/pg_dense.py)."""
    return f"{alias}.acl && {groups}"


def visible_document(doc_id: str, groups: str) -> str:
    """SQL: the document ``doc_id`` (an SQL expression) has a chunk ``groups`` may be served."""
    return f"EXISTS (SELECT 1 FROM chunks c WHERE c.doc_id = {doc_id} AND {permitted('c', groups)})"


# Whether any servable chunk has a vector (search mode auto); the store's tables unqualified.
_HAS_VECTORS = ("EXISTS (SELECT 1 FROM {schema}chunks c JOIN {schema}vectors v ON v.embed_key = c.embed_key"
                " WHERE c.servable)")
HAS_VECTORS = _HAS_VECTORS.format(schema="")

POLICIES: dict[str, str] = {
    "chunks": permitted("chunks", CALLER),
    "vectors": f"EXISTS (SELECT 1 FROM chunks c WHERE c.embed_key = vectors.embed_key AND {permitted('c', CALLER)})",
    "documents": visible_document("documents.doc_id", CALLER),
    "version_links": f"{visible_document('version_links.newer', CALLER)} AND {visible_document('version_links.older', CALLER)}",
    "acl_stats": f"acl_stats.acl && {CALLER}",
    # BM25's postings and statistics (store/postgres/pg_bm25.py): only the tag sets the caller shares.
    "acl_sets": f"acl_sets.acl && {CALLER}",
    "postings": f"postings.set_id IN (SELECT s.id FROM acl_sets s WHERE s.acl && {CALLER})",
    "term_df": f"term_df.set_id IN (SELECT s.id FROM acl_sets s WHERE s.acl && {CALLER})",
    # each servable chunk's tags and vector (store/postgres/pg_dense.py): the chunk's own rule, on its own tags
    "dense": dense_permitted("dense", CALLER),
}
SECURED = tuple(POLICIES)

# Builtins schema-qualified, so no object a reader creates can stand in for one.
_CALLER_FUNCTION = f"""CREATE OR REPLACE FUNCTION chunkwise_caller_groups() RETURNS text[] LANGUAGE sql STABLE AS $$
SELECT ARRAY(SELECT x.v OPERATOR(pg_catalog.#>>) '{{}}'::pg_catalog.text[]
  FROM pg_catalog.jsonb_array_elements(CASE
      WHEN pg_catalog.jsonb_typeof(NULLIF(pg_catalog.current_setting('{GROUPS_SETTING}', true), '')::pg_catalog.jsonb)
           OPERATOR(pg_catalog.=) 'array'
      THEN pg_catalog.current_setting('{GROUPS_SETTING}', true)::pg_catalog.jsonb ELSE '[]'::pg_catalog.jsonb END) AS x(v)
  WHERE pg_catalog.jsonb_typeof(x.v) OPERATOR(pg_catalog.=) 'string')
$$"""
# What a reader's search needs and no policy would let it compute (or only slowly), and nothing more: how many rows
# the whole store serves (it sizes the HNSW search, as for the owner), whether any has a vector
# (search mode auto), and where a document the caller may partly see has chunks they may not: their
# positions, and their section only when a visible chunk shares it (expansion stops at such a
# neighbour and refuses such a parent, as on the owner's connection; never their text or tags).
# SECURITY DEFINER: the tables named with their schema, a search path holding nothing a caller can create.
_DEFINER_FUNCTIONS = {
    "chunkwise_servable_rows() RETURNS bigint": "SELECT coalesce(sum(rows), 0)::bigint FROM {schema}.acl_stats",
    "chunkwise_has_vectors() RETURNS boolean": "SELECT " + _HAS_VECTORS.replace("{schema}", "{schema}."),
    # The rows holding a lexeme that the caller may see, found through the text and tag GIN indexes
    # together: under RLS a query's own ``lex @@ q`` (not leakproof) must wait until the policy has
    # filtered, so PostgreSQL would test every permitted row instead. Applies the policy's rule
    # itself; a reader calling it learns what its own SELECT would tell it.
    "chunkwise_matching(q tsquery) RETURNS SETOF bigint":
        f"SELECT c.key FROM {{schema}}.chunks c WHERE c.lex @@ q AND"
        f" {permitted('c', '(SELECT {schema}.chunkwise_caller_groups())')}",
    "chunkwise_hidden_chunks(doc text) RETURNS TABLE (chunk_index integer, section_id text)":
        "WITH mine AS (SELECT c.chunk_index, c.record::jsonb ->> 'section_id' AS section,"
        f" ({permitted('c', '{schema}.chunkwise_caller_groups()')}) AS ok FROM {{schema}}.chunks c WHERE c.doc_id = doc)"
        " SELECT h.chunk_index, CASE WHEN h.section IN (SELECT section FROM mine WHERE ok) THEN h.section ELSE ''"
        " END FROM mine h WHERE NOT h.ok AND EXISTS (SELECT 1 FROM mine WHERE ok) ORDER BY h.chunk_index",
}

# A reader's filtered nearest neighbours through the HNSW index, as the owner's query finds them:
# under RLS the policy's ``acl && (SELECT chunkwise_caller_groups())`` is an InitPlan the planner
# cannot estimate, so it planned the reader's ``ORDER BY distance LIMIT n`` as the tag index and a
# sort (an exact scan: slower, and not the owner's list). Here the groups are read first and bound
# as a value, so the statement is planned with them, like the owner's. The owner's statement too:
# ``hnsw_statement`` is the one text both run. plpgsql for the dimension (the index is on
# ``vector::vector(dim)``), an integer; ``hnsw.ef_search`` comes from the caller's transaction.
_DEFINER_PLPGSQL = {
    "chunkwise_nearest(q vector, dim integer, n integer) RETURNS TABLE (key bigint, vector vector, distance float8)":
        "DECLARE g pg_catalog.text[] := {schema}.chunkwise_caller_groups();"
        " w pg_catalog.int4 := GREATEST(n, coalesce(NULLIF(pg_catalog.current_setting('hnsw.ef_search',"
        " true), '')::pg_catalog.int4, 40)); BEGIN RETURN QUERY EXECUTE"
        " pg_catalog.format({statement}, dim) USING q, g, n, w; END",
}


def hnsw_statement(chunks: str, vectors: str, dim: str, *, q: str = "$1", groups: str = "$2", n: str = "$3",
                   walk: str = "$4", vector_schema: str = "") -> str:
    """The filtered nearest-neighbour statement: (key, vector, distance; a zero vector's NaN
    distance is 1) of the ``n`` permitted chunks nearest ``q``, from the ``walk`` vectors nearest
    it in the order of the HNSW index on ``vectors`` (``vector::vector(dim)``; a vector is stored
    once, chunks with the same embedded text share it), joined to ``chunks`` and filtered. The
    owner runs it with its parameters (``walk``: the ``hnsw.ef_search`` it set, which bounds what
    the index returns anyway), a reader's ``chunkwise_nearest`` with ``$1..$4``
    (``vector_schema``: pgvector's schema, as the function's search path holds only pg_catalog)."""
    qualified = vector_schema + "." if vector_schema else ""
    typ = f"{qualified}vector({dim})"
    distance = f"v.vector::{typ} OPERATOR({qualified}<=>) {q}::{typ}"
    return (f"SELECT c.key, v.vector, coalesce(nullif(v.distance, 'NaN'), 1) FROM (SELECT v.embed_key, v.vector,"
            f" {distance} AS distance FROM {vectors} v ORDER BY {distance} LIMIT {walk}) v"
            f" JOIN {chunks} c ON c.embed_key = v.embed_key WHERE {permitted('c', groups)}"
            f" ORDER BY v.distance, c.key LIMIT {n}")


def _signatures() -> list[str]:
    return [*_DEFINER_FUNCTIONS, *_DEFINER_PLPGSQL]


@dataclass(frozen=True)
class RowSecurity:
    """A store's row-level security as the catalog says it is."""

    enabled: bool  # on every table holding or revealing row content
    readers: tuple[str, ...]  # roles pg-secure made readers (SELECT on a secured table, EXECUTE on its functions)
    owner: str
    partial: tuple[str, ...] = ()  # secured tables whose RLS is off while others' is on (mended by reapply)
    # Other roles (not the owner, not readers) with some privilege on a store table, granted outside
    # pg-secure: the policies filter their SELECTs too, but they cannot search (no EXECUTE on the
    # functions) and may read the unfiltered runs and roots; make them readers or revoke them.
    others: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"row_security": self.enabled, "readers": list(self.readers), "owner": self.owner,
                "tables": list(SECURED), "unsecured_tables": list(self.partial), "setting": GROUPS_SETTING,
                "other_grantees": list(self.others)}


def install(db) -> None:
    """Create (or replace) the functions and the policies: inert until RLS is enabled on a table.
    Idempotent; part of migration 4 and of every ``reapply``."""
    from psycopg import sql

    schema = sql.Identifier(db.execute("SELECT current_schema()").fetchone()[0])
    db.execute(_CALLER_FUNCTION)
    vectors = db.execute("SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
                         " WHERE e.extname = 'vector'").fetchone()[0]
    statement = hnsw_statement(schema.as_string(db) + ".chunks", schema.as_string(db) + ".vectors", "%1$s",
                               vector_schema=sql.Identifier(vectors).as_string(db))
    for language, functions in (("sql", _DEFINER_FUNCTIONS), ("plpgsql", _DEFINER_PLPGSQL)):
        for signature, body in functions.items():
            text = sql.SQL(body).format(schema=schema, statement=sql.Literal(statement)).as_string(db)
            db.execute(sql.SQL(f"CREATE OR REPLACE FUNCTION {signature} LANGUAGE {language} STABLE SECURITY DEFINER"
                               " SET search_path = pg_catalog, pg_temp AS {}").format(sql.Literal(text)))
            db.execute("REVOKE ALL ON FUNCTION " + signature.split(" RETURNS")[0] + " FROM PUBLIC")
    for table, using in POLICIES.items():
        if db.execute("SELECT to_regclass(%s)", (table,)).fetchone()[0] is None:
            continue  # an earlier migration: the table comes later, and its own migration installs again
        db.execute(f"DROP POLICY IF EXISTS {POLICY} ON {table}")
        db.execute(f"CREATE POLICY {POLICY} ON {table} FOR SELECT TO PUBLIC USING ({using})")


def status(db) -> RowSecurity:
    rows = db.execute("SELECT c.relname, c.relrowsecurity, pg_get_userbyid(c.relowner) FROM pg_class c"
                      " WHERE c.oid = ANY(ARRAY(SELECT to_regclass(t) FROM unnest(%s::text[]) AS t))", ([*SECURED],)).fetchall()
    on = {name for name, flag, _ in rows if flag}
    owner = next(o for name, _, o in rows if name == "chunks")
    grantees = db.execute(
        "SELECT coalesce(r.rolname, 'PUBLIC'), bool_or(c.relname = ANY(%s) AND a.privilege_type = 'SELECT'),"
        " bool_or(c.relname <> ALL(%s) OR a.privilege_type <> 'SELECT'), coalesce(bool_or(r.rolname IS NOT NULL"
        " AND has_function_privilege(r.oid, 'chunkwise_matching(tsquery)', 'EXECUTE')), false)"
        " FROM pg_class c, aclexplode(c.relacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee"
        " WHERE c.oid = ANY(ARRAY(SELECT to_regclass(t) FROM unnest(%s::text[]) AS t)) AND a.grantee <> c.relowner GROUP BY 1 ORDER BY 1",
        ([*SECURED], [*SECURED, *PLAIN_TABLES], [*STORE_TABLES])).fetchall()
    readers = tuple(role for role, reads, beyond, runs in grantees if reads and runs and not beyond)
    enabled = bool(on)
    return RowSecurity(enabled, readers, owner, tuple(t for t in SECURED if t not in on) if enabled else (),
                       tuple(role for role, *_ in grantees if role not in readers))


def reader_ready(db) -> bool:
    """The connection's role may run every function a reader's search calls (pg-secure granted it)."""
    names = [signature.split("(")[0] for signature in _signatures()]
    found, runnable = db.execute("SELECT count(*), count(*) FILTER (WHERE has_function_privilege(p.oid, 'EXECUTE'))"
                                 " FROM pg_proc p WHERE p.proname = ANY(%s)"
                                 " AND p.pronamespace = current_schema()::regnamespace", (names,)).fetchone()
    return found == runnable == len(names)


def refusal(db, role: str) -> str | None:
    """Why ``role`` cannot be a reader under RLS (it does not exist, or the policies would not
    apply to it), or None."""
    from psycopg import sql

    row = db.execute("SELECT rolsuper, rolbypassrls, pg_has_role(oid, (SELECT relowner FROM pg_class"
                     " WHERE oid = 'chunks'::regclass), 'MEMBER'), EXISTS (SELECT 1 FROM pg_roles s WHERE"
                     " (s.rolsuper OR s.rolbypassrls) AND s.oid <> r.oid AND pg_has_role(r.oid, s.oid, 'MEMBER'))"
                     " FROM pg_roles r WHERE rolname = %s", (role,)).fetchone()
    if row is None:
        return (f"role {role!r} does not exist; create it first (as an administrator: CREATE ROLE "
                f"{sql.Identifier(role).as_string(db)} LOGIN PASSWORD '...')")
    superuser, bypass, owner, escalates = row
    if superuser or bypass:
        kind = "superuser" if superuser else "BYPASSRLS role"
        return f"role {role!r} is a {kind}: row-level security never applies to it; use an ordinary role"
    if escalates:
        return (f"role {role!r} is a member of a superuser or BYPASSRLS role (SET ROLE would bypass row-level "
                f"security); use a role without such memberships")
    if owner:
        return (f"role {role!r} owns the store's tables (or may act as their owner), so row-level security never "
                f"applies to it; use a role of its own")
    return None


def enable(db) -> None:
    for table in SECURED:
        db.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")


def grant(db, role: str) -> None:
    """``role`` may read the secured tables through the policies and the plain ones, nothing else."""
    from psycopg import sql

    who = sql.Identifier(role)
    revoke(db, role)
    db.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(
        sql.Identifier(db.execute("SELECT current_schema()").fetchone()[0]), who))
    db.execute(sql.SQL("GRANT SELECT ON " + ", ".join((*SECURED, *PLAIN_TABLES)) + " TO {}").format(who))
    for signature in _signatures():
        db.execute(sql.SQL("GRANT EXECUTE ON FUNCTION " + signature.split(" RETURNS")[0] + " TO {}").format(who))


def revoke(db, role: str) -> None:
    """Take every privilege on the store's tables and functions from ``role`` (and none on any other
    table: a role's rights elsewhere in the database are not the store's to change)."""
    from psycopg import sql

    who = sql.Identifier(role)
    db.execute(sql.SQL("REVOKE ALL ON {} FROM {}").format(sql.SQL(", ").join(map(sql.Identifier, STORE_TABLES)), who))
    for signature in _signatures():
        db.execute(sql.SQL("REVOKE ALL ON FUNCTION " + signature.split(" RETURNS")[0] + " FROM {}").format(who))


def disable(db) -> None:
    for table in SECURED:
        db.execute(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")


def reapply(db) -> None:
    """After migrations: a secured store's policies, RLS flags and readers' grants on every
    secured table again (a migration may have rebuilt one)."""
    state = status(db)
    if not state.enabled:
        return
    install(db)
    enable(db)
    for role in state.readers:
        if role != "PUBLIC":
            grant(db, role)


def change(db, location: str, *, reader: str | None = None, revoke_role: str | None = None, off: bool = False) -> None:
    """``chunkwise pg-secure``'s one transaction: secure the store and make ``reader`` a reader,
    take a reader's access away, or (``off``, refused while a reader remains: it would see every
    row) turn row-level security off. Only the tables' owner may."""
    me, owner, allowed = db.execute(
        "SELECT current_user, pg_get_userbyid(relowner), pg_has_role(current_user, relowner, 'USAGE')"
        " FROM pg_class WHERE oid = 'chunks'::regclass").fetchone()
    if not allowed:
        raise StoreError(f"{location}: only the owner of the store's tables ({owner}) may change their row-level "
                         f"security; connected as {me}: put the owner's role in --db")
    if reader is not None:
        why = refusal(db, reader)
        if why:
            raise StoreError(f"{location}: {why}")
        install(db)
        enable(db)
        grant(db, reader)
    if revoke_role is not None:
        if not db.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (revoke_role,)).fetchone():
            raise StoreError(f"{location}: role {revoke_role!r} does not exist")
        revoke(db, revoke_role)
    if off:
        state = status(db)
        left = (*state.readers, *state.others)
        if left:
            raise StoreError(f"{location}: {', '.join(left)} may still read the tables; with row-level security off "
                             f"they would see every row: revoke them first (chunkwise pg-secure --revoke ROLE)")
        disable(db)
