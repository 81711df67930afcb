"""``chunkwise pg-secure``: row-level security on a PostgreSQL store, so the database itself enforces
the access rule for a reader role (its own module: the CLI only parses flags and prints)."""
from __future__ import annotations

import argparse


def add_secure_parser(sub) -> None:
    p = sub.add_parser("pg-secure", help="PostgreSQL: row-level security, the database enforcing access for a reader role",
                       description="Turn on row-level security for a PostgreSQL store and name the role search and "
                                   "serve connect as: that role may only SELECT, and only the rows its callers' "
                                   "groups permit (README: PostgreSQL). Run it with the tables' owner in --db. "
                                   "Without --reader/--revoke/--off: show how the store is secured.")
    p.add_argument("--db", required=True, help="postgresql://OWNER@.../DB (the role that ingests)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--reader", metavar="ROLE", help="secure the store and let ROLE read it through the policies "
                                                        "(SELECT only; idempotent; repeat for more roles)")
    what.add_argument("--revoke", metavar="ROLE", help="take every privilege on the store from ROLE")
    what.add_argument("--off", action="store_true",
                      help="turn row-level security off (refused while a reader remains: it would see every row)")
    p.add_argument("--json", action="store_true", help="one JSON document")
    p.set_defaults(func=cmd_secure)


def cmd_secure(args: argparse.Namespace) -> int:
    from chunkwise import api
    from chunkwise.cli.output import emit_json, safe, table

    state = api.row_security(args.db, reader=args.reader, revoke=args.revoke, off=args.off)
    if args.json:
        emit_json(state.to_dict())
        return 0
    d = state.to_dict()
    print(table(["row-level security", "value"], [
        ("enabled", "yes" if state.enabled else "no"),
        ("tables", ", ".join(d["tables"])),
        ("owner (not filtered)", state.owner),
        ("readers (SELECT through the policies)", ", ".join(state.readers) or "-"),
        ("caller groups setting", d["setting"]),
        ("other grantees (not readers: cannot search)", ", ".join(state.others) or "-"),
    ]))
    if state.enabled and state.others:
        print(f"warning: {safe(', '.join(state.others))} hold privileges on the store's tables granted outside "
              f"pg-secure; make each a reader (pg-secure --reader ROLE) or take them away (--revoke ROLE)")
    if state.partial:
        print(f"warning: row-level security is off on {safe(', '.join(state.partial))}; run pg-secure --reader "
              f"ROLE again to mend it")
    if state.enabled and state.readers:
        print(f"search and serve as a reader: --db postgresql://{safe(state.readers[0])}@HOST/DB (the retriever sets "
              f"the caller's groups for each search)")
    return 0
