"""SQLite's memory statistics switched off for a server's search threads (store/sqlite/threads.py):
only when nothing of SQLite is in use and no other thread could start using it; never otherwise;
searches answer the same either way. Each case runs in a fresh interpreter: the setting is the
process's."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from chunkwise.store.sqlite.threads import _library

SRC = str(Path(__file__).resolve().parents[2] / "src")

pytestmark = pytest.mark.skipif(_library() is None, reason="this Python's SQLite does not export its C interface")


def run(code: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_switched_off_in_a_process_with_nothing_open():
    assert run("""
        import sqlite3
        from chunkwise.store.sqlite.threads import memory_statistics_on, without_memory_statistics
        print(memory_statistics_on(), without_memory_statistics(), memory_statistics_on(), without_memory_statistics())
        con = sqlite3.connect(":memory:")  # SQLite works as before
        print(con.execute("SELECT 40 + 2").fetchone()[0])
    """) == ["True", "True", "False", "True", "42"]


def test_left_alone_while_a_connection_is_open():
    assert run("""
        import sqlite3
        from chunkwise.store.sqlite.threads import memory_statistics_on, without_memory_statistics
        con = sqlite3.connect(":memory:")
        con.execute("CREATE TABLE t (x)")
        print(without_memory_statistics(), memory_statistics_on(), con.execute("SELECT count(*) FROM t").fetchone()[0])
    """) == ["False", "True", "0"]


def test_left_alone_while_another_thread_runs():
    assert run("""
        import threading
        from chunkwise.store.sqlite.threads import memory_statistics_on, without_memory_statistics
        go = threading.Event()
        other = threading.Thread(target=go.wait)
        other.start()
        print(without_memory_statistics(), memory_statistics_on())
        go.set()
        other.join()
    """) == ["False", "True"]


def test_the_server_engine_switches_them_off_and_searches_the_same(tmp_path):
    """The engine, made as ``chunkwise serve`` makes it (first thing in a fresh process), runs with
    the statistics off; its searches equal a Retriever's in a process that keeps them on."""
    from tests.serve.serving import make_store

    db = str(make_store(tmp_path))
    search = """
        import json, sys
        from chunkwise import api
        from chunkwise.store.sqlite.threads import memory_statistics_on
        queries = ["rollback freeze", "refund audit billing", "pager incident"]
        groups = [["sre"], ["finance", "legal"], ["sre", "finance", "legal", "public"]]
        def results(search):
            return json.dumps([search(q, g, mode) for q in queries for g in groups for mode in ("bm25", "dense", "hybrid")])
    """
    served = run(search + f"""
        from chunkwise.serve.engine import Engine
        engine = Engine({db!r}, workers=2)
        try:
            out = results(lambda q, g, m: engine.submit(engine.search, q, g, k=4, mode=m).result(timeout=60))
            print(engine.sqlite_statistics_off, memory_statistics_on(), out)
        finally:
            engine.close()
    """)
    local = run(search + f"""
        r = api.open_retriever({db!r})
        print(memory_statistics_on(), results(lambda q, g, m: r.search(q, g, k=4, mode=m).to_dict()))
    """)
    assert served[:2] == ["True", "False"] and local[0] == "True"
    assert served[2:] == local[1:]
