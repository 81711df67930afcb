"""A two-node Ray cluster on this machine writing into PostgreSQL, side by side with a local run.

Why: issue 26 asks for a documented multi-node run — a Ray head and a second node started with
``ray start`` — writing into PostgreSQL, with the numbers. One machine stands in for two: the head
and the second node are separate raylets (their own ports, object stores and worker processes),
each offering ``--cpus-per-node`` CPUs, joined the way a second machine joins (``ray start
--address HEAD:PORT``); ``chunkwise ingest --executor ray --ray-address HEAD:PORT`` then spreads its
prepare-and-write actors over both (the default widths: one actor per CPU, none larger than the
smallest node). The PostgreSQL server is a ``pgserver`` in a temporary folder.

Method: ``benchmarks/ingest.py``'s generated Markdown (``--docs`` files of 1-3 KB); hashing
embedder, chunks of 256 MiniLM tokens, one access tag. ``local``: ``chunkwise ingest --workers 2``
(two contained processes, writes from the CLI's process) into one database; ``ray, two nodes``:
the same command with ``--executor ray --ray-address`` into another (each actor writes what it
prepared, one transaction per document); the two databases are compared row for row. Both are the
real CLI in a subprocess (what a user runs), so their wall times include the interpreter's start
and, for Ray, connecting to the cluster and starting the actors. While the Ray run goes on, this
script samples ``/proc`` for the actors' processes (``ray::Prepare``) and counts them under each
node's raylet: the evidence that both nodes worked. CPU seconds: every process of the run's
subprocess tree for ``local``; for Ray, the CLI's process plus both nodes' processes (raylets,
GCS, actors), sampled like ``ingest_ray.py`` does. The PostgreSQL server's CPU is in neither.

Run: ``.venv/bin/python benchmarks/ingest_ray_nodes.py [--docs N] [--cpus-per-node C] [--keep]``
(the cluster is stopped at the end — its own processes only, found by its session name, since ``ray
stop`` would stop every Ray cluster on a shared machine; ``--keep`` leaves it and the server up).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ingest import git_head, write_corpus
from ingest_ray import _procs

HEAD_PORT = 6390
RAY = str(Path(sys.executable).with_name("ray"))


def log(message: str) -> None:
    print(f"... {message}", file=sys.stderr, flush=True)


def ray_start(*args: str) -> None:
    out = subprocess.run([RAY, "start", "--disable-usage-stats", *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"ray start {' '.join(args)} failed:\n{out.stdout}\n{out.stderr}")


def _cmdline(pid) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def session_of_head() -> str:
    """The session name (``session_<date>_<pid>``) of the cluster whose GCS listens on HEAD_PORT."""
    import re

    for pid in os.listdir("/proc"):
        line = _cmdline(pid) if pid.isdigit() else b""
        if b"gcs_server" in line and f"--gcs_server_port={HEAD_PORT}".encode() in line:
            found = re.search(rb"session_\d{4}-\d\d-\d\d_[\d_-]+", line)
            if found:
                return found.group().decode()
    raise SystemExit(f"no GCS on port {HEAD_PORT} after ray start --head")


def stop_cluster(session: str) -> int:
    """Stop this cluster's processes only — its raylets' workers, then everything whose command line
    names its session. ``ray stop`` would stop every Ray process on the machine, other users'
    clusters included (the machine is shared). Returns how many processes were signalled."""
    import signal

    procs = _procs()
    ours = {int(p) for p in procs if session.encode() in _cmdline(p)}
    workers = {p for p, (ppid, _) in procs.items() if ppid in ours}
    targets = workers | ours
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in targets:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") and _cmdline(p) for p in targets):
            time.sleep(0.2)
    return len(targets)


def raylets() -> dict[int, str]:
    """pid -> the node's manager port, of every raylet on this machine."""
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().decode("utf-8", "replace").split("\0")
        except OSError:
            continue
        if argv and argv[0].endswith("/raylet"):
            port = next((a.split("=", 1)[1] for a in argv if a.startswith("--node_manager_port=")), "?")
            found[int(pid)] = port
    return found


class Watch:
    """Samples /proc while a run goes on: the ``ray::Prepare`` actors under each raylet, and the CPU
    seconds of a set of process trees (each process up to its last sample)."""

    def __init__(self, roots: set[int], nodes: dict[int, str]) -> None:
        self.roots, self.nodes, self.base, self.last = roots, nodes, {}, {}
        self.actors: dict[int, set[int]] = {}
        self.stop = threading.Event()

    def _sample(self) -> None:
        procs = _procs()
        children: dict[int, list[int]] = {}
        for pid, (ppid, _) in procs.items():
            children.setdefault(ppid, []).append(pid)
        todo = [r for r in self.roots if r in procs]
        while todo:
            pid = todo.pop()
            self.last[pid] = procs[pid][1]
            todo += children.get(pid, [])
        for raylet in self.nodes:  # this cluster's raylets only: the machine may run other clusters
            for pid in children.get(raylet, []):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        if f.read().startswith(b"ray::Prepare"):
                            self.actors.setdefault(raylet, set()).add(pid)
                except OSError:
                    pass

    def add(self, pid: int) -> None:
        self.roots.add(pid)

    def _loop(self) -> None:
        while not self.stop.wait(0.2):
            self._sample()

    def __enter__(self) -> "Watch":
        self._sample()
        self.base = dict(self.last)
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()

    @property
    def cpu(self) -> float:
        return sum(v - self.base.get(pid, 0.0) for pid, v in self.last.items())


def cli_ingest(corpus: Path, url: str, extra: list[str], cluster_roots: set[int], nodes: dict[int, str]
               ) -> tuple[float, float, dict, dict]:
    """(wall s, CPU s, stats, actors per raylet) of one ``chunkwise ingest`` subprocess."""
    argv = [sys.executable, "-m", "chunkwise.cli.main", "ingest", str(corpus), "--db", url, "--acl", "bench",
            "--embedder", "hashing", "--size", "256", "--json", *extra]
    with Watch(set(cluster_roots), nodes) as watch:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        watch.add(proc.pid)
        out, err = proc.communicate()
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"ingest failed ({proc.returncode}):\n{err[-3000:]}")
    return wall, watch.cpu, json.loads(out), {k: len(v) for k, v in watch.actors.items()}


def pg_rows(url: str):
    import psycopg

    from chunkwise.store.postgres.pg_place import DEFAULT_SCHEMA

    with psycopg.connect(url) as con:
        con.execute(f"SET search_path = {DEFAULT_SCHEMA}")
        return (con.execute("SELECT chunk_id, doc_id, text, embed_text, embed_key FROM chunks ORDER BY chunk_id")
                .fetchall(),
                con.execute("SELECT embed_key, vector::text FROM vectors ORDER BY embed_key").fetchall())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--cpus-per-node", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="leave the cluster and the server running")
    args = ap.parse_args()
    import pgserver
    import psycopg

    # Token authentication on every process of the cluster and on the CLI (Ray enables it for a head
    # when a token file exists, ~/.ray/auth_token, but not for a node joining it): one token, read
    # from that file (another machine needs a copy of it, or RAY_AUTH_TOKEN).
    os.environ["RAY_AUTH_MODE"] = "token"
    load0 = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="chunkwise-ray-nodes-", dir=os.environ.get("TMPDIR")))
    corpus = write_corpus(tmp / "corpus", args.docs, 1000, 3000).root
    before = set(raylets())
    address = f"127.0.0.1:{HEAD_PORT}"
    srv, session = None, None
    try:
        log(f"ray start --head --port {HEAD_PORT}")
        t0 = time.perf_counter()
        ray_start("--head", f"--port={HEAD_PORT}", f"--num-cpus={args.cpus_per_node}", "--include-dashboard=false",
                  "--node-manager-port=6391", "--object-manager-port=6392", "--min-worker-port=20000",
                  "--max-worker-port=20499", "--runtime-env-agent-port=6394",
                  "--dashboard-agent-grpc-port=6395", "--dashboard-agent-listen-port=6396",
                  "--metrics-export-port=6397")
        head_s = time.perf_counter() - t0
        session = session_of_head()
        log(f"ray start --address {address} (the second node)")
        t0 = time.perf_counter()
        ray_start(f"--address={address}", f"--num-cpus={args.cpus_per_node}", "--node-manager-port=6401",
                  "--object-manager-port=6402", "--min-worker-port=20500", "--max-worker-port=20999",
                  "--runtime-env-agent-port=6404", "--dashboard-agent-grpc-port=6405",
                  "--dashboard-agent-listen-port=6406", "--metrics-export-port=6407")
        node_s = time.perf_counter() - t0
        nodes = {pid: port for pid, port in raylets().items() if pid not in before}
        roots = set(nodes)
        for pid, (ppid, _) in _procs().items():  # the head's GCS and its helpers: children of no raylet
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if f"{HEAD_PORT}".encode() in f.read() and pid not in nodes:
                        roots.add(pid)
            except OSError:
                pass
        log(f"raylets: {nodes}")
        srv = pgserver.get_server(tmp / "pg", cleanup_mode=None if args.keep else "stop")
        urls = {}
        with psycopg.connect(srv.get_uri(), autocommit=True) as admin:
            for label in ("local", "ray"):
                admin.execute(f"CREATE DATABASE nodes_{label}")
                urls[label] = srv.get_uri(f"nodes_{label}")
        log("local: chunkwise ingest --workers 2")
        local = cli_ingest(corpus, urls["local"], ["--workers", "2"], set(), nodes)
        log(f"ray: chunkwise ingest --executor ray --ray-address {address}")
        remote = cli_ingest(corpus, urls["ray"], ["--executor", "ray", "--ray-address", address], roots, nodes)
        same = "yes, row for row" if pg_rows(urls["local"]) == pg_rows(urls["ray"]) else "NO"
    finally:
        if not args.keep:
            if session is not None:
                log(f"stopped {stop_cluster(session)} processes of {session}")
            if srv is not None:
                srv.cleanup()
            shutil.rmtree(tmp, ignore_errors=True)
    load1 = os.getloadavg()
    print(f"Commit {git_head()}; `benchmarks/ingest_ray_nodes.py --docs {args.docs} --cpus-per-node "
          f"{args.cpus_per_node}`; load average {load0[0]:.2f} at the start, {load1[0]:.2f} at the end "
          f"(2 cores shared).\n")
    print(f"`ray start --head`: {head_s:.1f} s; `ray start --address` (second node): {node_s:.1f} s; "
          f"raylets (pid: node manager port): {nodes}.\n")
    print("| run | files | chunks | s | files/s | CPU s | prepare actors per node | errors |")
    print("|---|--:|--:|--:|--:|--:|---|--:|")
    for name, (wall, cpu, stats, actors) in (("local, `--workers 2`", local), ("ray, two nodes", remote)):
        per_node = ", ".join(f"node :{nodes.get(r, '?')}: {n}" for r, n in sorted(actors.items())) or "-"
        print(f"| {name} | {args.docs:,} | {stats['added']:,} | {wall:.1f} | {args.docs / wall:.1f} | {cpu:.1f} | "
              f"{per_node} | {len(stats['errors'])} |")
    stats_same = "equal" if local[2] | {"warnings": []} == remote[2] | {"warnings": []} else "DIFFERENT"
    print(f"| ray / local | | | | **{local[0] / remote[0]:.2f}x** | | | stats {stats_same}; "
          f"databases identical: {same} |")


if __name__ == "__main__":
    main()
