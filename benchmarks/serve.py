"""Query latency through ``chunkwise serve`` vs the CLI (issue 13), side by side in one run.

The store: three of the Chroma benchmark corpora (``../shared/data/chroma/corpora``: chatlogs,
state_of_the_union, wikitexts; 208 KB) ingested with all-MiniLM-L6-v2 (structure chunker, 254
tokens, one access group) into ``benchmarks/.cache/serve-minilm.db`` on first use, reused after
(what is measured is per-query latency, which the model load dominates for the CLI, not store size). Queries: the Chroma questions
(``questions_df.csv``), the same list for both paths.

- serve: one ``chunkwise serve`` process (model loaded once, Retriever open), queried over loopback
  HTTP with one keep-alive connection, one request at a time; the figure is the client's wall time
  per ``POST /search`` (JSON encode, HTTP, search, JSON decode), after 3 warm-up requests per mode.
- CLI: ``chunkwise search QUERY --db ... --json`` as a fresh process per query (what a script calling
  the CLI pays: interpreter start, imports, model load for dense and hybrid, the search).

    .venv/bin/python benchmarks/serve.py [--serve-queries 100] [--cli-queries 8] [--json FILE]
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "benchmarks" / ".cache"
CHROMA = ROOT.parent / "shared" / "data" / "chroma"
STORE = CACHE / "serve-minilm.db"
GROUP = "staff"
MODES = ("bm25", "dense", "hybrid")
K = 5
CORPORA = ("chatlogs.md", "state_of_the_union.md", "wikitexts.md")


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
    corpus = CACHE / "serve-corpus"
    corpus.mkdir(exist_ok=True)
    for name in CORPORA:
        (corpus / name).write_bytes((CHROMA / "corpora" / name).read_bytes())
    t0 = time.perf_counter()
    subprocess.run(cli("ingest", str(corpus), "--db", str(STORE), "--embedder", "minilm", "--strategy",
                       "structure", "--size", "254", "--acl", GROUP, "--json"), check=True, env=env(),
                   stdout=subprocess.DEVNULL)
    print(f"built {STORE} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)


def questions() -> list[str]:
    with open(CHROMA / "questions_df.csv", encoding="utf-8", newline="") as fh:
        return [row["question"] for row in csv.DictReader(fh)]


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (the p95 of 8 samples is the largest)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


class Serve:
    def __init__(self, log: Path) -> None:
        self.log = open(log, "w", encoding="utf-8")
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(cli("serve", "--db", str(STORE), "--insecure-groups-in-body", "--port", "0",
                                         "--json", "--log-level", "warning"), stdout=subprocess.PIPE,
                                     stderr=self.log, env=env(), text=True)
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"chunkwise serve did not start; see {log}")
        self.url = json.loads(line)["url"]
        self.ready_s = time.perf_counter() - t0

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def measure_serve(queries: list[str], n: int, log: Path) -> tuple[dict, float]:
    import httpx

    server = Serve(log)
    out = {}
    try:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            for mode in MODES:
                def ask(q: str) -> float:
                    body = {"query": q, "groups": [GROUP], "k": K, "mode": mode}
                    t0 = time.perf_counter()
                    r = client.post("/search", json=body)
                    r.raise_for_status()
                    r.json()
                    return time.perf_counter() - t0
                for q in queries[:3]:
                    ask(q)
                out[mode] = [ask(queries[i % len(queries)]) for i in range(n)]
    finally:
        server.stop()
    return out, server.ready_s


def measure_cli(queries: list[str], n: int) -> dict:
    out = {}
    for mode in MODES:
        times = []
        for q in queries[:n]:
            t0 = time.perf_counter()
            subprocess.run(cli("search", q, "--db", str(STORE), "--groups", GROUP, "--k", str(K), "--mode", mode,
                               "--json"), check=True, env=env(), stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - t0)
        out[mode] = times
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--serve-queries", type=int, default=100, help="timed requests per mode through serve")
    p.add_argument("--cli-queries", type=int, default=8, help="timed CLI runs per mode (each a new process)")
    p.add_argument("--json", help="also write the raw figures here")
    args = p.parse_args(argv)
    build_store()
    qs = questions()
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        served, ready_s = measure_serve(qs, args.serve_queries, Path(tmp) / "serve.log")
    cli_times = measure_cli(qs, args.cli_queries)
    load1 = os.getloadavg()
    import sqlite3

    chunks = sqlite3.connect(STORE).execute("SELECT count(*) FROM chunks").fetchone()[0]
    print(f"store: {chunks} chunks (all-MiniLM-L6-v2@1), k={K}; serve ready (model loaded) in {ready_s:.1f} s; "
          f"load average {load0[0]:.1f} before, {load1[0]:.1f} after; Python {platform.python_version()}")
    print()
    print("| mode | serve p50 ms | serve p95 ms | CLI p50 ms | CLI p95 ms | CLI / serve (p50) | serve n | CLI n |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    for mode in MODES:
        s, c = served[mode], cli_times[mode]
        sp50, cp50 = statistics.median(s), statistics.median(c)
        print(f"| {mode} | {sp50 * 1000:.1f} | {pct(s, 95) * 1000:.1f} | {cp50 * 1000:.0f} | {pct(c, 95) * 1000:.0f} "
              f"| {cp50 / sp50:.0f}x | {len(s)} | {len(c)} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"serve": served, "cli": cli_times, "ready_s": ready_s, "chunks": chunks,
                                               "load": [load0, load1]}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
