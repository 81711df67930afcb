"""One client must not stall ``chunkwise serve`` (issue 25 item 8): light-query latency while heavy
queries run, and while 2,000 idle sockets are open.

The store: the five Chroma benchmark corpora (``../shared/data/chroma/corpora``, 1.4 MB) ingested
with the hashing embedder (structure chunker, 128 tokens, one group) into
``benchmarks/.cache/server-load.db`` on first use. One ``chunkwise serve`` process per setting,
queried over loopback HTTP (stdlib ``http.client``, one keep-alive connection per client thread).

- light: a Chroma question, ``k=5``, mode hybrid (BM25 + dense), sent one after another;
- heavy: 400 distinct corpus words, ``k=100``, ``overfetch=20``, ``expand=parent``, mode hybrid,
  sent back to back by ``--heavy-clients`` threads during the loaded phase;
- idle sockets: ``--idle`` TCP connections opened and left silent, then the light queries again
  (they must all be answered; the server closes idle sockets after its read timeout, so the
  phase runs inside it, and re-opens them if it lasts longer).

Phases: idle server, heavy load, idle sockets; for ``--search-workers 1`` (what one engine thread
gave before) and for the default workers (heavy queries on at most workers - 1 of them: the light
lane, serve/cost.py and serve/engine.py). The target: light p95 under heavy load <= 3x idle p95.

    .venv/bin/python benchmarks/server_load.py [--light 200] [--heavy-clients 2] [--idle 2000] [--data DIR] [--json FILE]
"""
from __future__ import annotations

import argparse
import csv
import http.client
import json
import os
import platform
import re
import resource
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "benchmarks" / ".cache"
CHROMA = ROOT.parent / "shared" / "data" / "chroma"  # --data DIR overrides (the folder holding chroma/)
STORE = CACHE / "server-load.db"
GROUP = "staff"


def env() -> dict:
    src = str(ROOT / "src")
    return {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", ""), "HF_HUB_OFFLINE": "1",
            "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", "")}


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "chunkwise.cli.main", *args]


def build_store() -> None:
    if STORE.exists():
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run(cli("ingest", str(CHROMA / "corpora"), "--db", str(STORE), "--embedder", "hashing", "--strategy",
                       "structure", "--size", "128", "--acl", GROUP, "--json"), check=True, env=env(),
                   stdout=subprocess.DEVNULL)


def questions() -> list[str]:
    with open(CHROMA / "questions_df.csv", encoding="utf-8", newline="") as fh:
        return [row["question"] for row in csv.DictReader(fh)]


def heavy_query() -> str:
    text = (CHROMA / "corpora" / "finance.md").read_text(encoding="utf-8")
    words = []
    for w in re.findall(r"[a-z]{4,}", text.lower()):
        if w not in words:
            words.append(w)
        if len(words) == 400:
            break
    return " ".join(words)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


class Client:
    def __init__(self, url: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=600)
        self.headers = {"Content-Type": "application/json", "X-Chunkwise-Groups": GROUP}

    def search(self, body: dict) -> tuple[float, int]:
        data = json.dumps(body)
        t0 = time.perf_counter()
        try:
            self.conn.request("POST", "/search", data, self.headers)
            r = self.conn.getresponse()
            r.read()
        except (http.client.HTTPException, OSError):  # closed by the server: reconnect once
            self.conn.close()
            self.conn.request("POST", "/search", data, self.headers)
            r = self.conn.getresponse()
            r.read()
        return (time.perf_counter() - t0) * 1000, r.status


class Serve:
    def __init__(self, *flags: str, log: Path) -> None:
        self.log = open(log, "w", encoding="utf-8")
        self.proc = subprocess.Popen(cli("serve", "--db", str(STORE), "--trust-groups-header", "--port", "0", "--json",
                                         "--log-level", "warning", *flags), stdout=subprocess.PIPE,
                                     stderr=self.log, env=env(), text=True)
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"chunkwise serve did not start; see {log}")
        self.url = json.loads(line)["url"]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def light_run(url: str, qs: list[str], n: int) -> dict:
    c = Client(url)
    times, bad = [], 0
    for i in range(n):
        ms, status = c.search({"query": qs[i % len(qs)], "k": 5, "mode": "hybrid"})
        times.append(ms)
        bad += status != 200
    return {"n": n, "p50_ms": round(pct(times, 50), 2), "p95_ms": round(pct(times, 95), 2),
            "max_ms": round(max(times), 2), "non_200": bad}


def measure(flags: list[str], args, qs: list[str], heavy: str, tmp: Path) -> dict:
    server = Serve(*flags, log=tmp / f"serve{'-'.join(flags) or '-default'}.log")
    try:
        warm = Client(server.url)
        for q in qs[:10]:
            warm.search({"query": q, "k": 5, "mode": "hybrid"})
        out = {"flags": flags, "idle": light_run(server.url, qs, args.light)}

        stop = threading.Event()
        heavy_times: list[float] = []
        statuses: list[int] = []

        def hammer() -> None:
            c = Client(server.url)
            while not stop.is_set():
                ms, status = c.search({"query": heavy, "k": 100, "overfetch": 20, "expand": "parent",
                                       "mode": "hybrid", "passage_budget": None})
                heavy_times.append(ms)
                statuses.append(status)

        threads = [threading.Thread(target=hammer, daemon=True) for _ in range(args.heavy_clients)]
        for t in threads:
            t.start()
        time.sleep(1.0)  # the heavy queries are running
        # one worker: each light query waits for a heavy one (seconds): fewer samples keep the run short
        out["loaded"] = light_run(server.url, qs, args.light if flags != ["--search-workers", "1"] else args.light_one)
        stop.set()
        for t in threads:
            t.join(timeout=600)
        out["heavy"] = {"n": len(heavy_times), "p50_ms": round(pct(heavy_times, 50), 1) if heavy_times else None,
                        "statuses": sorted(set(statuses))}
        out["loaded_over_idle_p95"] = round(out["loaded"]["p95_ms"] / out["idle"]["p95_ms"], 2)

        host, port = server.url.removeprefix("http://").split(":")
        idle = []
        t0 = time.perf_counter()
        for _ in range(args.idle):
            idle.append(socket.create_connection((host, int(port)), timeout=30))
        opened = time.perf_counter() - t0
        out["idle_sockets"] = {"open": len(idle), "opened_in_s": round(opened, 2),
                               "light": light_run(server.url, qs, min(args.light, 100))}
        for s in idle:
            s.close()
        return out
    finally:
        server.stop()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--light", type=int, default=200)
    ap.add_argument("--light-one", type=int, default=20, help="light queries under load with one worker")
    ap.add_argument("--heavy-clients", type=int, default=2)
    ap.add_argument("--idle", type=int, default=2000)
    ap.add_argument("--json", default=None)
    ap.add_argument("--data", default=None, help="the shared data folder (default: ../shared/data)")
    args = ap.parse_args(argv)
    if args.data:
        global CHROMA
        CHROMA = Path(args.data) / "chroma"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < args.idle + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, args.idle + 256), hard))
    build_store()
    qs = questions()
    heavy = heavy_query()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        load0 = os.getloadavg()
        results = {"python": platform.python_version(), "cpus": os.cpu_count(), "store": STORE.name,
                   "runs": [measure(flags, args, qs, heavy, Path(tmp)) for flags in (["--search-workers", "1"], [])]}
        results["load_average"] = {"before": [round(x, 2) for x in load0],
                                   "after": [round(x, 2) for x in os.getloadavg()]}
    print(json.dumps(results, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
