"""Throwaway PostgreSQL servers for the tests (pgserver: binaries in the wheel, no system install):
``temporary_server``, the session's shared server's (conftest ``pg_server``), and ``own_server``, a
server of one test's own for the tests that restart or stop it under a running command (issue 26,
"Bad input and faults"): restarting the shared one would cut every other test's connections. The
``own_pg`` fixture (conftest) yields one, with an empty database ``OWN_DB``; ``restart`` and
``stopped`` drive it with pgserver's ``pg_ctl``."""
from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

OWN_DB = "own_test"


@contextmanager
def temporary_server(prefix: str) -> Iterator:
    """A fresh pgserver server (PostgreSQL 16 + pgvector, listening on a Unix socket only) in a new
    temporary folder; stopped and the folder removed when the block ends, whatever happened."""
    import pgserver

    folder = Path(tempfile.mkdtemp(prefix=prefix))
    srv = pgserver.get_server(folder / "data", cleanup_mode="stop")
    try:
        yield srv
    finally:
        srv.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def own_server() -> Iterator:
    """A server of one test's own with an empty database ``OWN_DB``."""
    import psycopg

    with temporary_server("chunkwise-own-pg-") as srv:
        with psycopg.connect(srv.get_uri(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {OWN_DB}")
        yield srv


def pg_ctl(srv, *args: str) -> None:
    """``pg_ctl -w ARGS`` on the server's data folder, as its system user, logging to its log."""
    from pgserver.postgres_server import pg_ctl as run

    run(["-w", *args, "-l", str(srv.log)], pgdata=srv.pgdata, user=srv.system_user, timeout=60)


def restart(srv) -> None:
    """``pg_ctl restart -m fast``: every open connection is terminated, the server comes back."""
    pg_ctl(srv, "-m", "fast", "restart")


@contextmanager
def stopped(srv) -> Iterator[None]:
    """The server stopped (``-m fast``: connections cut) for the block, started again after it,
    listening where pgserver first told it to (a Unix socket only), whatever happened."""
    sockets = srv._postmaster_info.socket_dir
    pg_ctl(srv, "-m", "fast", "stop")
    try:
        yield
    finally:
        pg_ctl(srv, "-o", '-h ""', "-o", f"-k {sockets}", "start")
