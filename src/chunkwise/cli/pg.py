"""``chunkwise pg init|status|migrate``: a PostgreSQL store's schema, for the DBA (the CLI only
parses flags and prints; store/postgres/pg_place.py and store/postgres/postgres.py do the work)."""
from __future__ import annotations

import argparse


def add_pg_parser(sub) -> None:
    p = sub.add_parser("pg", help="PostgreSQL: create a store (init), show its schema version (status), migrate it",
                       description="A PostgreSQL store lives in its own schema, 'chunkwise' (another one: put "
                                   "?options=-csearch_path%%3DNAME in the URL). init creates the schema and the "
                                   "tables; status shows where the store is and which migrations are pending, "
                                   "changing nothing; migrate applies them (run it as the tables' owner).")
    p.add_argument("action", choices=("init", "status", "migrate"))
    p.add_argument("--db", required=True, help="postgresql://... URL")
    p.add_argument("--json", action="store_true", help="one JSON document")
    p.set_defaults(func=cmd_pg)


def cmd_pg(args: argparse.Namespace) -> int:
    from chunkwise import api
    from chunkwise.cli.output import emit_json, safe

    if not api.is_store_url(args.db):
        raise api.ConfigError(f"--db {args.db}: chunkwise pg is for postgresql:// stores")
    from chunkwise.store import open_store
    from chunkwise.store.postgres.pg_status import status

    if args.action != "status":
        with open_store(args.db, create=args.action == "init"):
            pass  # opening as a writer creates the schema and tables (init) or applies what is pending
    state = status(args.db)
    if args.json:
        emit_json(state)
    else:
        print(f"store    {safe(state['store'])}")
        print(f"schema   {safe(state['schema'])} ({state['placed']})")
        print(f"version  {state['version']} of {state['latest']}")
        for m in state["pending"]:
            print(f"pending  {m['number']}: {safe(m['name'])}")
    return 0
