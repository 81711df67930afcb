"""Where `chunkwise chunk --strategy fixed --size 256 --json BIG` spends its CPU, stage by stage.

Why: issue 26 keeps "the CLI on a large file <= 1.5x one tokenizer pass"; this says which stages
stand between it and the target. Three parts, each in a fresh child process of this script:

- **start-up**: the CLI's own steps in the order ``cli.main`` runs them (imports, parser, tokenizer
  loads, the forked worker) on a one-line file, CPU of this process and of its children;
- **worker, cold**: the worker's stages on BIG run once each in a fresh process, as the forked worker
  runs them (user and system CPU and page faults: a fresh process faults in every page it touches);
- **worker, warm**: the same stages, min of ``--repeat`` runs in that process after the cold one
  (what each stage costs once its memory is mapped).

The stages are the functions the worker calls (``pipeline.prepare`` / ``pipeline.chunk``), called
one by one on the same document; their sum is close to, not exactly, ``Preparer.prepare_document``
(also timed). Run: ``PYTHONPATH=src python benchmarks/cli_chunk_stages.py [--copies 4] [--repeat 5] [--pycache DIR]``
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPORA = REPO / ".." / "shared" / "data" / "chroma" / "corpora"


def _usage():
    r = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime, c.ru_utime + c.ru_stime


def startup(path: str) -> None:
    """The CLI's steps on ``path``, as ``cli.main`` takes them; CPU s of this process and its children."""
    rows, last = [], _usage()

    def mark(name):
        nonlocal last
        now = _usage()
        rows.append((name, now[0] - last[0], now[1] - last[1]))
        last = now

    import chunkwise.cli.main as m
    mark("import chunkwise.cli.main")
    args = m.build_parser().parse_args(["chunk", "--strategy", "fixed", "--size", "256", "--json", path])
    mark("build the parser, parse")
    from chunkwise import api
    from chunkwise.chunking.router import build_chunker  # noqa: F401 (numpy and the chunkers)
    mark("import the chunkers (numpy)")
    config = m._config(args)
    from chunkwise.chunking import sizing
    sizing._spec(sizing.resolve_tokenizer_file(config.tokenizer))
    mark("read tokenizer.json (json)")
    preparer = api.door_preparer(config, acl=api.AccessTags(), acl_map={})
    mark("door_preparer: tokenizers (tokenizers + tokie) loaded")
    from chunkwise.cli.record_lines import record_line
    with open(os.devnull, "wb") as out:
        for item in api.prepare_paths(preparer, [path], max_bytes=args.max_bytes, encode=record_line):
            for line in item.records:
                out.write(line)
    mark("prepare_paths: fork, worker, lines written")
    for name, own, kids in rows:
        print(f"| {name} | {own:.3f} | {kids:.3f} |")
    print(f"| sum | {sum(r[1] for r in rows):.3f} | {sum(r[2] for r in rows):.3f} |")


def worker(path: str, repeat: int) -> None:
    """The worker's stages on ``path``: cold (first run: user, sys, page faults) and warm (min)."""
    from dataclasses import replace

    from chunkwise import api, ids
    from chunkwise.cli import main as m
    from chunkwise.cli.record_lines import record_line
    from chunkwise.enrich.acl import plan_access
    from chunkwise.enrich.records import iter_records
    from chunkwise.pipeline.chunk import for_document, normalised_view
    from chunkwise.pipeline.documents import extract_options, read_source
    from chunkwise.pipeline.pack import RecordPack
    from chunkwise.pipeline.prepare import PrepareTask
    from chunkwise.sources import SourceFile, iter_sources

    args = m.build_parser().parse_args(["chunk", "--strategy", "fixed", "--size", "256", "--json", path])
    config = m._config(args)
    preparer = api.door_preparer(config, acl=api.AccessTags(), acl_map={})
    s = preparer.settings
    src = next(iter(iter_sources([path], max_bytes=args.max_bytes)))
    task = PrepareTask(str(src.path), src.doc_id, src.doc_id, src.media_type, src.sha256, src.size)
    rows = []

    def stage(name, fn, fresh=lambda: None):
        fresh()
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        out = fn()
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        warm = []
        for _ in range(repeat):
            fresh()
            c = time.process_time()
            fn()
            warm.append(time.process_time() - c)
        rows.append((name, r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime, r1.ru_minflt - r0.ru_minflt,
                     min(warm)))
        return out

    sf = SourceFile(Path(src.path), src.doc_id, src.media_type, src.size, src.sha256)
    doc = stage("read + extract (read_source)", lambda: replace(read_source(sf, extract_options(config)),
                                                                doc_id=src.doc_id))
    access = stage("access plan (acl markers)", lambda: plan_access(doc, s.acl, s.acl_map))
    chunker = for_document(preparer.chunker, doc)
    view, norm = stage("normalised view + offset map", lambda: normalised_view(doc))
    text = view.text[view.body_start:]
    fast = stage("sizer.for_text (characters tokie is trusted on)", lambda: chunker.for_text(text))
    sizer = fast.sizer

    def no_index():
        sizer._index = None

    index = stage("tokie pass (encode_batch_flat, ids)", lambda: sizer._fast.encode_batch_flat(
        [text], add_special_tokens=False))
    index = stage("token index: tokie pass + starts and safe cuts", lambda: sizer._build_index(text))
    sizer._index = (text, index)
    from chunkwise.chunking.word_ends import word_ends
    stage("word ends", lambda: word_ends(text, cjk_alone=True, as_array=True))
    chunks = stage("pack + finalize (index already built)", lambda: fast._chunk(text),
                   fresh=lambda: setattr(sizer, "_index", (text, index)))
    if norm is not None:
        chunks = stage("chunk offsets mapped back", lambda: [replace(c, start_char=a, end_char=b) for c in chunks
                                                             for a, b in [norm.original_span(c.start_char, c.end_char)]])
    records = stage("records (ids, access tags, quality)", lambda: list(iter_records(
        doc, chunks, chunker=config.fingerprint(), header_mode=config.header, embed_model=s.embed_model,
        now=s.now, access=access, strategy=chunker.name)))
    stage("  of which content_hash + chunk_id", lambda: list(ids.iter_chunk_ids(doc.doc_id, (c.text for c in chunks))))
    lines = stage("JSON lines (record_line)", lambda: [record_line(r) for r in records])

    def pack():
        w = RecordPack.writer()
        for line in lines:
            w.add(line)
        return w.done()

    stage("pack written (worker) and read (caller)", lambda: sum(map(len, pack())))
    with open(os.devnull, "wb") as out:
        stage("lines written to stdout (/dev/null)", lambda: [out.write(line) for line in lines])
    stage("whole: Preparer.prepare_document (packed lines)", lambda: preparer.prepare_document(task, doc, record_line),
          fresh=no_index)
    print(f"{len(doc.text):,} characters, {len(chunks):,} chunks; warm: min of {repeat}")
    print("| stage | cold user s | cold sys s | cold page faults | warm CPU s |")
    print("|---|--:|--:|--:|--:|")
    for name, user, system, faults, warm in rows:
        print(f"| {name} | {user:.3f} | {system:.3f} | {faults:,} | {warm:.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", type=Path, default=CORPORA)
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--pycache", type=Path, default=None,
                    help="byte-code cache for the child processes (warmed by one untimed start-up): start-up as an "
                         "installed package has it; without it PYTHONDONTWRITEBYTECODE=1 compiles every module")
    ap.add_argument("--part", choices=("startup", "worker"), help=argparse.SUPPRESS)
    ap.add_argument("--file", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.part == "startup":
        return startup(args.file)
    if args.part == "worker":
        return worker(args.file, args.repeat)
    text = "".join((args.corpora / f).read_text(encoding="utf-8") for f in sorted(os.listdir(args.corpora))
                   if f.endswith(".md")) * args.copies
    me = [sys.executable, __file__]
    env = dict(os.environ)
    if args.pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(args.pycache)
    with tempfile.TemporaryDirectory() as tmp:
        big, tiny = Path(tmp) / "big.md", Path(tmp) / "tiny.md"
        big.write_text(text, encoding="utf-8")
        tiny.write_text("# One line\n\nA short file.\n", encoding="utf-8")
        print(f"load {os.getloadavg()[0]:.1f}; file {len(text.encode()) / 1e6:.2f} MB ({args.copies} copies)\n")
        print("start-up, one-line file (CPU s):\n\n| step | this process | children |\n|---|--:|--:|", flush=True)
        if args.pycache is not None:  # warm the byte-code cache, untimed
            subprocess.run([*me, "--part", "startup", "--file", str(tiny)], check=True, env=env,
                           stdout=subprocess.DEVNULL)
        subprocess.run([*me, "--part", "startup", "--file", str(tiny)], check=True, env=env)
        print("\nworker stages on the big file:\n", flush=True)
        subprocess.run([*me, "--part", "worker", "--file", str(big), "--repeat", str(args.repeat)], check=True, env=env)
    print(f"\nload {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
