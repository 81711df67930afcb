"""One client cannot stall the server (issue 25 item 8): request heads and bodies have deadlines,
idle sockets cannot crowd out callers, searches run on several workers with a time limit, and a
full queue is refused at once. The latency figures are benchmarks/server_load.py's."""
from __future__ import annotations

import socket
import threading
import time
from urllib.parse import urlsplit

import pytest

from chunkwise.serve.engine import Busy, Engine, QueryTimeout

from .serving import Server

SLOW_SQL = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000000) "
            "SELECT count(*) FROM n")


@pytest.fixture(scope="module")
def strict_server(store, tmp_path_factory):
    server = Server(store, "--trust-groups-header", "--read-timeout", "1", "--max-connections", "16",
                    log=tmp_path_factory.mktemp("strict-log") / "serve.log")
    yield server
    server.stop()


def connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    return socket.create_connection((parts.hostname, parts.port), timeout=30)


def closed_within(s: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``s`` (EOF or reset) within ``seconds``."""
    s.settimeout(seconds)
    try:
        while s.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def health(url: str) -> int:
    s = connect(url)
    with s:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return int(data.split()[1])


def test_a_silent_connection_is_closed(strict_server):
    with connect(strict_server.url) as s:
        assert closed_within(s, 10)


def test_a_trickled_head_is_closed_at_its_deadline(strict_server):
    with connect(strict_server.url) as s:
        started = time.monotonic()
        head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
        try:
            for byte in head:  # one byte every 50 ms: each one resets no timer
                s.sendall(bytes([byte]))
                time.sleep(0.05)
                if time.monotonic() - started > 8:
                    break
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert closed_within(s, 5)
        assert time.monotonic() - started < 9  # 200 bytes would take 10 s: cut at the 1 s deadline


def test_a_slow_body_gets_408(strict_server):
    with connect(strict_server.url) as s:
        s.sendall(b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Chunkwise-Groups: sre\r\n"
                  b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"query\": ")
        s.settimeout(20)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 408") and b"body_timeout" in data


def test_idle_sockets_cannot_crowd_out_callers(strict_server):
    idle = [connect(strict_server.url) for _ in range(60)]  # far over --max-connections 16
    try:
        time.sleep(0.3)
        assert health(strict_server.url) == 200
        closed = sum(closed_within(s, 0.01) for s in idle[:40])
        assert closed >= 40 - 16  # the oldest idle ones made room
    finally:
        for s in idle:
            s.close()


def test_a_keep_alive_client_is_served_again(strict_server):
    with connect(strict_server.url) as s:
        for _ in range(3):
            s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            data = b""
            while b"\r\n\r\n" not in data:
                data += s.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")))
            while len(body) < length:
                body += s.recv(65536)
            assert head.startswith(b"HTTP/1.1 200") and b'"status":"ok"' in body, head
        assert closed_within(s, 10)  # then idle: closed (keep-alive / head deadline)


@pytest.fixture(scope="module")
def engine(store):
    e = Engine(str(store), workers=2, query_seconds=0.5)
    yield e
    e.close()


def test_a_runaway_statement_is_stopped_at_the_time_limit(engine):
    started = time.monotonic()
    with pytest.raises(QueryTimeout, match="limit"):
        engine.submit(lambda: engine.retriever.store.db.execute(SLOW_SQL).fetchone()).result(timeout=60)
    assert time.monotonic() - started < 30
    # the worker is whole afterwards: no snapshot left open, searches answer
    found = engine.submit(engine.search, "rollback deploy", ["sre"], k=2).result(timeout=60)
    assert found["results"] and not engine.submit(lambda: engine.retriever.store.db.in_transaction).result()


def test_light_queries_pass_a_heavy_one(engine):
    heavy = engine.submit(lambda: engine.retriever.store.db.execute(SLOW_SQL).fetchone())
    done = []
    for _ in range(5):
        done.append(engine.submit(engine.search, "rollback deploy", ["sre"], k=2).result(timeout=60))
    assert not heavy.done() and all(d["results"] for d in done)  # answered on the other worker meanwhile
    with pytest.raises(QueryTimeout):
        heavy.result(timeout=60)


def test_a_full_queue_is_refused_at_once(store):
    e = Engine(str(store), workers=1, query_seconds=30)
    gate = threading.Event()
    try:
        blocked = [e.submit(gate.wait, 30)]
        with pytest.raises(Busy):
            for _ in range(1000):
                blocked.append(e.submit(gate.wait, 30))
        assert 1 < len(blocked) <= 1 + e.max_waiting
    finally:
        gate.set()
        e.close()


def test_bad_limits_are_configuration_errors(capsys, store):
    from chunkwise.cli.main import main

    for flags in (["--search-workers", "0"], ["--search-workers", "100000"], ["--query-timeout", "-1"],
                  ["--max-connections", "3"], ["--read-timeout", "-2"]):
        capsys.readouterr()
        assert main(["serve", "--db", str(store), "--trust-groups-header", "--port", "0", *flags]) == 2, flags
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and flags[0] in err, err


def test_postgres_statements_have_the_time_limit_too(pg_url, tmp_path):
    from chunkwise.pipeline import ingest

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\n## Rollback\n\nTo roll back a deploy, run the rollback job.\n", encoding="utf-8")
    ingest([docs], pg_url, acl=("sre",), embedder="hashing")
    e = Engine(pg_url, workers=2, query_seconds=0.5)
    try:
        with pytest.raises(QueryTimeout):
            e.submit(lambda: e.retriever.store.db.execute("SELECT pg_sleep(20)").fetchone()).result(timeout=60)
        assert e.submit(e.search, "rollback deploy", ["sre"], k=1).result(timeout=60)["results"]
        shown = [e.submit(lambda: e.retriever.store.db.execute("SHOW statement_timeout").fetchone()[0]).result()
                 for _ in range(4)]
        assert shown == ["500ms"] * 4  # set for each job ...
        assert e.primary.store.db.execute("SHOW statement_timeout").fetchone()[0] == "0"  # ... and reset after
    finally:
        e.close()
