"""Served throughput (issue 26 item 4): the same searches in process and through ``chunkwise serve``,
side by side in one run, at 100k chunks with the default model (all-MiniLM-L6-v2, ONNX int8).

The store: generated as ``benchmarks/search.py`` generates its stores (seeded Zipf pseudo-words,
documents of 4-16 chunks, 20 access groups, 1% in review), but its vectors are recorded under the
default model's name, so the server and the in-process Retriever load the real ONNX model and embed
every dense and hybrid query with it (the stored vectors are random unit vectors: what is measured
is latency and CPU, not relevance; a real ingest of 100k chunks would take hours here). Cached in
``--cache`` (default ``benchmarks/.cache``) and reused.

Queries: ``search.py``'s (5-12 Zipf words, 20 callers of 3 groups each), k=5, the server's
defaults otherwise. For each mode (bm25, dense, hybrid):

Each mode's phases run in ``--rounds`` interleaved blocks (in process, 1 client, 8 clients, in
process again, ...), so the load other processes put on the machine falls on them alike.

- in process: one ``api.open_retriever`` (the server's engine opens the same), ``search(...)`` and
  ``to_dict()`` (what the server sends) one after another; wall and CPU time of this process;
- served, 1 client: one keep-alive ``http.client`` connection (TCP_NODELAY, as urllib3 and aiohttp
  set it), one request at a time; the client's
  wall time per ``POST /search`` (encode, HTTP, search, JSON, decode);
- served, 8 clients: eight threads, each with its own keep-alive connection, back to back; requests
  per second, p50 and p95 of the client's wall time;
- server CPU per request: the server process's CPU time (``/proc/PID/stat``, user + system, all its
  threads) over the phase, divided by the requests answered in it.

The targets: 1 client, served p50 <= in-process p50 + 5 ms; 8 clients, server CPU per request <=
in-process CPU per query + 1 ms. The machine is shared: read the load average printed with it.

    .venv/bin/python benchmarks/serve.py [--chunks 100k] [--queries 200] [--cache DIR] [--json FILE]
    .venv/bin/python benchmarks/serve.py --cli-queries 6      # also a fresh CLI process per query
"""
from __future__ import annotations

import argparse
import http.client
import socket
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import search as generated  # noqa: E402  (sets single-threaded BLAS for this process and the server)

ROOT = Path(__file__).resolve().parents[1]
MODEL = "all-MiniLM-L6-v2-onnx-int8@1"  # config.DEFAULT_EMBEDDER's vectors
MODES = ("bm25", "dense", "hybrid")
K = 5
CLIENTS = 8
NO_MATCH = "qqxxqq"  # no pseudo-word has q or x: a bm25 search that finds nothing, so what is left is
NO_MATCH_ROW = "bm25, no match"  # the server's own per-request cost (HTTP, validation, hand-over, JSON)


def env() -> dict:
    src = str(ROOT / "src")
    return {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", ""), "HF_HUB_OFFLINE": "1",
            "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", "")}


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "chunkwise.cli.main", *args]


def ensure_store(cache: Path, n: int) -> Path:
    """search.py's generated store at ``n`` chunks, vectors under the default model's name."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"serve-{n}-minilm-int8.db"
    if path.exists():
        if _setting(path, "generator") == f"{generated.GENERATOR} seed={generated.SEED} n={n}" \
                and _setting(path, "embedder") == MODEL:
            return path
        path.unlink()
    generated.MODEL = MODEL  # make_docs and build_store read it: embed keys and the run's embedder name
    print(f"building {path} ({n:,} chunks)", file=sys.stderr, flush=True)
    generated.build_store(path, n)
    return path


def _setting(path: Path, key: str) -> str | None:
    con = sqlite3.connect(path)
    try:
        row = con.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
    finally:
        con.close()
    return row[0] if row else None


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system, every thread) of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def search_threads_cpu(pid: int) -> float:
    """CPU seconds so far of the server's search workers (threads named ``chunkwise-search-N``): the
    rest of the server's CPU is the event loop (HTTP, validation, JSON) and helper threads."""
    total = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            if not (task / "comm").read_text().startswith("chunkwise-searc"):
                continue
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


# -- in process ---------------------------------------------------------------------------------
class InProcess:
    """One Retriever, opened as the server's engine opens it; searches one after another."""

    def __init__(self, db: Path) -> None:
        from chunkwise import api

        self.r = api.open_retriever(str(db))
        self.r.warm()

    def run(self, queries, start: int, n: int, mode: str) -> dict:
        for q, g in queries[start:start + 3]:
            self.r.search(q, g, k=K, mode=mode).to_dict()
        wall, cpu = [], []
        for i in range(start, start + n):
            q, g = queries[i % len(queries)]
            w0, c0 = time.perf_counter(), time.process_time()
            json.dumps(self.r.search(q, g, k=K, mode=mode).to_dict())
            wall.append(time.perf_counter() - w0)
            cpu.append(time.process_time() - c0)
        return {"wall": wall, "cpu": cpu}

    def close(self) -> None:
        self.r.close()


# -- served -------------------------------------------------------------------------------------
class Serve:
    def __init__(self, db: Path, log: Path, *flags: str) -> None:
        self.log = open(log, "w", encoding="utf-8")
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(cli("serve", "--db", str(db), "--trust-groups-header", "--port", "0", "--json",
                                         "--log-level", "warning", *flags), stdout=subprocess.PIPE,
                                     stderr=self.log, env=env(), text=True)
        line = self.proc.stdout.readline()
        if not line:
            self.log.close()
            raise SystemExit(f"chunkwise serve did not start:\n{log.read_text(encoding='utf-8')[-3000:]}")
        host, port = json.loads(line)["url"].removeprefix("http://").split(":")
        self.host, self.port = host, int(port)
        self.ready_s = time.perf_counter() - t0

    def cpu(self) -> float:
        return proc_cpu(self.proc.pid)

    def search_cpu(self) -> float:
        return search_threads_cpu(self.proc.pid)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


class NoDelayConnection(http.client.HTTPConnection):
    """``http.client`` sends a POST's headers and body in two writes; with Nagle's algorithm on, the
    body waits for the server's (delayed, ~40 ms) ACK of the headers. HTTP clients in use disable
    Nagle (urllib3/requests and aiohttp set TCP_NODELAY by default), so the served figures do too."""

    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Client:
    def __init__(self, server: Serve) -> None:
        self.conn = NoDelayConnection(server.host, server.port, timeout=600)

    def search(self, query: str, groups, mode: str) -> float:
        body = json.dumps({"query": query, "k": K, "mode": mode})
        headers = {"Content-Type": "application/json", "X-Chunkwise-Groups": ",".join(groups)}
        t0 = time.perf_counter()
        try:
            self.conn.request("POST", "/search", body, headers)
            r = self.conn.getresponse()
        except (http.client.HTTPException, OSError):  # an idle keep-alive connection closed by the server
            self.conn.close()
            t0 = time.perf_counter()
            self.conn.request("POST", "/search", body, headers)
            r = self.conn.getresponse()
        data = r.read()
        if r.status != 200:
            raise SystemExit(f"POST /search answered {r.status}: {data[:300]!r}")
        json.loads(data)
        return time.perf_counter() - t0


def served(server: Serve, queries, n: int, clients: int, mode: str) -> dict:
    """``n`` requests over ``clients`` connections (each its own thread), after a warm-up."""
    conns = [Client(server) for _ in range(clients)]
    for i, c in enumerate(conns):
        q, g = queries[i % len(queries)]
        c.search(q, g, mode)
    times: list[list[float]] = [[] for _ in conns]

    def run(j: int) -> None:
        for i in range(j, n, clients):
            q, g = queries[i % len(queries)]
            times[j].append(conns[j].search(q, g, mode))

    threads = [threading.Thread(target=run, args=(j,)) for j in range(clients)]
    cpu0, s0, w0 = server.cpu(), server.search_cpu(), time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall, cpu, search_cpu = time.perf_counter() - w0, server.cpu() - cpu0, server.search_cpu() - s0
    flat = [x for ts in times for x in ts]
    return {"wall": flat, "requests": len(flat), "phase_s": wall, "server_cpu_s": cpu, "search_cpu_s": search_cpu,
            "rps": len(flat) / wall}


def merge(parts: list[dict]) -> dict:
    """One phase's rounds as one: samples joined, CPU and time summed."""
    out = {"wall": [x for p in parts for x in p["wall"]]}
    if "cpu" in parts[0]:
        out["cpu"] = [x for p in parts for x in p["cpu"]]
    else:
        for key in ("requests", "phase_s", "server_cpu_s", "search_cpu_s"):
            out[key] = sum(p[key] for p in parts)
        out["rps"] = out["requests"] / out["phase_s"]
    return out


def measure(db: Path, queries, n: int, rounds: int, log: Path, flags: list[str],
            modes: tuple[str, ...] = MODES) -> tuple[dict, dict, float]:
    """Every phase in ``rounds`` interleaved blocks (in process, 1 client, 8 clients, again), so a
    change of the machine's load during the run falls on all three alike."""
    local = InProcess(db)
    server = Serve(db, log, *flags)
    per = max(1, n // rounds)
    rows = [*modes, NO_MATCH_ROW]
    parts: dict = {m: {"local": [], "one": [], "eight": []} for m in rows}
    try:
        for row in rows:
            mode, asked = ("bm25", [(NO_MATCH, g) for _, g in queries]) if row == NO_MATCH_ROW else (row, queries)
            for r in range(rounds):
                start = r * per
                block = asked[start:] + asked[:start]
                parts[row]["local"].append(local.run(asked, start, per, mode))
                parts[row]["one"].append(served(server, block, per, 1, mode))
                parts[row]["eight"].append(served(server, block, per, CLIENTS, mode))
    finally:
        server.stop()
        local.close()
    in_proc = {m: merge(parts[m]["local"]) for m in rows}
    remote = {m: {"one": merge(parts[m]["one"]), "eight": merge(parts[m]["eight"])} for m in rows}
    return in_proc, remote, server.ready_s


def measure_cli(db: Path, queries, n: int) -> dict:
    out = {}
    for mode in MODES:
        times = []
        for q, g in queries[:n]:
            t0 = time.perf_counter()
            subprocess.run(cli("search", q, "--db", str(db), "--groups", ",".join(g), "--k", str(K), "--mode", mode,
                               "--json"), check=True, env=env(), stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - t0)
        out[mode] = times
    return out


def parse_n(s: str) -> int:
    s = s.lower().replace("_", "").replace(",", "")
    return int(float(s[:-1]) * 1000) if s.endswith("k") else int(float(s[:-1]) * 1e6) if s.endswith("m") else int(s)


def table(local: dict, remote: dict) -> list[str]:
    ms = 1000
    lines = ["| mode | in-process p50 / p95 ms | served 1 client p50 / p95 ms | p50 difference ms (target <= 5) "
             "| in-process CPU/query ms | served 8 clients p50 / p95 ms | requests/s (8 clients) "
             "| server CPU/request ms (8 clients) | CPU difference ms (target <= 1) | server CPU/request ms (1 client) "
             "| of it in search workers, 8 / 1 clients ms |",
             "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for mode in local:
        lw, lc = local[mode]["wall"], local[mode]["cpu"]
        one, eight = remote[mode]["one"], remote[mode]["eight"]
        lcpu = statistics.mean(lc) * ms
        cpu8 = eight["server_cpu_s"] / eight["requests"] * ms
        cpu1 = one["server_cpu_s"] / one["requests"] * ms
        d50 = (statistics.median(one["wall"]) - statistics.median(lw)) * ms
        lines.append(
            f"| {mode} | {statistics.median(lw) * ms:.1f} / {pct(lw, 95) * ms:.1f} "
            f"| {statistics.median(one['wall']) * ms:.1f} / {pct(one['wall'], 95) * ms:.1f} | {d50:+.1f} "
            f"| {lcpu:.2f} | {statistics.median(eight['wall']) * ms:.1f} / {pct(eight['wall'], 95) * ms:.1f} "
            f"| {eight['rps']:.0f} | {cpu8:.2f} | {cpu8 - lcpu:+.2f} | {cpu1:.2f} "
            f"| {eight['search_cpu_s'] / eight['requests'] * ms:.2f} / {one['search_cpu_s'] / one['requests'] * ms:.2f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chunks", default="100k", help="store size (100k, 1M, ...)")
    p.add_argument("--queries", type=int, default=200, help="timed searches per mode and path")
    p.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of bm25,dense,hybrid")
    p.add_argument("--rounds", type=int, default=4, help="interleaved blocks per mode (in process, 1, 8 clients)")
    p.add_argument("--cache", default=str(ROOT / "benchmarks" / ".cache"), help="where the generated store is kept")
    p.add_argument("--server-flag", action="append", default=[], help="extra flag for chunkwise serve (repeatable)")
    p.add_argument("--cli-queries", type=int, default=0, help="also time a fresh CLI process per query (n per mode)")
    p.add_argument("--json", help="also write the raw figures here")
    args = p.parse_args(argv)
    n = parse_n(args.chunks)
    db = ensure_store(Path(args.cache), n)
    queries = generated.make_queries(max(args.queries, 50), generated.SEED)
    load0 = os.getloadavg()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=ROOT, capture_output=True, text=True).stdout
    commit += " (src modified)" if dirty.strip() else ""
    with tempfile.TemporaryDirectory() as tmp:
        local, remote, ready_s = measure(db, queries, args.queries, args.rounds, Path(tmp) / "serve.log",
                                         args.server_flag, tuple(args.modes.split(",")))
    cli_times = measure_cli(db, queries, args.cli_queries) if args.cli_queries else {}
    load1 = os.getloadavg()
    print(f"store: {n:,} generated chunks, vectors under {MODEL} (queries embedded by the real model), k={K}, "
          f"{args.queries} queries per mode and path; serve ready in {ready_s:.1f} s; commit {commit}; "
          f"load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} before, {load1[0]:.2f} {load1[1]:.2f} "
          f"{load1[2]:.2f} after; {os.cpu_count()} CPUs; Python {platform.python_version()}")
    print()
    print("\n".join(table(local, remote)))
    for mode, times in cli_times.items():
        print(f"CLI {mode}: p50 {statistics.median(times) * 1000:.0f} ms, p95 {pct(times, 95) * 1000:.0f} ms "
              f"({len(times)} fresh processes)")
    if args.json:
        Path(args.json).write_text(json.dumps({"in_process": local, "served": remote, "cli": cli_times,
                                               "ready_s": ready_s, "chunks": n, "load": [load0, load1],
                                               "commit": commit}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
