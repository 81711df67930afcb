"""Where a contained worker's memory goes on the 60 MB-text DOCX (issue 25, item 9): peak resident
set and address space per stage of preparing one file, as ``pipeline.prepare`` and
``pipeline.pack`` do it in the worker (warm-up, read, extract, normalise + chunk, records, vectors,
record dicts, lexical fields, pack, pickle for the pipe).

A thread samples ``/proc/self/status`` (VmRSS, VmSize) every few milliseconds; each stage reports
the highest values seen while it ran and what it still holds when it ends. VmSize is what the
worker's absolute limit (``RLIMIT_AS``, default 2,048 MB) counts. One process per ``--tree``
(``PYTHONPATH`` at that source tree), run one after the other, so trees compare side by side.

    .venv/bin/python benchmarks/docx_stage_memory.py --tree before=/path/to/old/src --tree after=src
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

PROBE = r'''
import json, os, pickle, sys, threading, time
from dataclasses import replace
from pathlib import Path


def status():
    rss = size = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) // 1024
            elif line.startswith("VmSize:"):
                size = int(line.split()[1]) // 1024
    return rss, size


class Sampler(threading.Thread):
    daemon = True

    def __init__(self):
        super().__init__()
        self.peak = (0, 0)

    def reset(self):
        self.peak = status()

    def run(self):
        while True:
            r, s = status()
            self.peak = (max(self.peak[0], r), max(self.peak[1], s))
            time.sleep(0.003)


sampler = Sampler()
sampler.start()
rows = []
t_last = [time.process_time()]


def stage(name):
    r, s = status()
    peak = (max(sampler.peak[0], r), max(sampler.peak[1], s))
    now = time.process_time()
    rows.append({"stage": name, "peak_rss_mb": peak[0], "peak_vm_mb": peak[1], "end_rss_mb": r, "end_vm_mb": s,
                 "cpu_s": round(now - t_last[0], 2)})
    t_last[0] = now
    print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    sampler.reset()


path = Path(sys.argv[1])
from chunkwise.config import ChunkConfig
from chunkwise.embed.hashing import HashingEmbedder
from chunkwise.access import AccessTags
from chunkwise.pipeline.prepare import Preparer, PrepareSettings, PrepareTask
from chunkwise.pipeline.packing import PackingPreparer
from chunkwise.pipeline.documents import extract_options, read_source
from chunkwise.sources import SourceFile
from chunkwise import ids

stage("imports")
emb = HashingEmbedder()
settings = PrepareSettings(ChunkConfig(), emb.name, AccessTags.parse(["bench"], "acl"), {}, "2026-01-01T00:00:00",
                           None, emb)
prep = Preparer(settings)
prep.warm_up()
stage("warm-up (tokenizer, stemmer)")
task = PrepareTask(str(path), path.name, path.name, "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                   "0" * 64, path.stat().st_size)
packing = PackingPreparer(prep)
if os.environ.get("PROBE_WHOLE"):
    out = packing(task)
    stage("whole prepare + pack")
else:
    src = SourceFile(path, task.rel, task.media_type, task.size, task.sha256)
    doc = read_source(src, extract_options(settings.config))
    stage("read + extract")
    doc = replace(doc, doc_id=task.doc_id)
    import inspect
    if "packed" in inspect.signature(prep.prepare_document).parameters:  # records packed as they are made
        from chunkwise.pipeline.chunk import normalised_view
        view, norm = normalised_view(doc)
        stage("normalise (view alone)")
        del view, norm
        from chunkwise.enrich.acl import plan_access
        from chunkwise.pipeline.chunk import chunk_document, for_document
        access = plan_access(doc, settings.acl, settings.acl_map)
        chunks = chunk_document(doc, for_document(prep.chunker, doc), boundaries=access.boundaries)
        stage(f"normalise + chunk alone ({len(chunks)} chunks)")
        del chunks, access
        out = prep.prepare_document(task, doc, packed=True)
        stage("normalise, chunk, records, then records/lexical/vectors packed one at a time")
        del doc
        out = packing._spooled_all(out) if hasattr(packing, "_spooled_all") else out
        blob = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
        stage("pickle for the pipe")
        print(json.dumps({"rows": rows, "records": len(out.records), "pickled_bytes": len(blob)}))
        sys.exit(0)
    from array import array
    from chunkwise.enrich import build_records
    from chunkwise.enrich.acl import plan_access
    from chunkwise.lexical import LexicalFields
    from chunkwise.pipeline.chunk import chunk_document, for_document, normalised_view
    from chunkwise.pipeline.prepare import Prepared

    view, norm = normalised_view(doc)
    stage("normalise (view alone)")
    del view, norm
    access = plan_access(doc, settings.acl, settings.acl_map)
    chunker = for_document(prep.chunker, doc)
    chunks = chunk_document(doc, chunker, boundaries=access.boundaries)
    stage(f"normalise + chunk ({len(chunks)} chunks)")
    records = build_records(doc, chunks, chunker=settings.config.fingerprint(), header_mode=settings.config.header,
                            embed_model=settings.embed_model, now=settings.now, access=access, strategy=chunker.name)
    stage("records")
    texts = {r.embed_key: r.embed_text for r in records}
    keys = list(texts)
    vectors = {}
    for i in range(0, len(keys), 256):
        part = keys[i : i + 256]
        vectors.update(zip(part, (array("f", v) for v in emb.embed([texts[k] for k in part]))))
    del texts, keys
    stage("vectors")
    dicts = tuple(r.to_dict() for r in records)
    stage("record dicts")
    lexical = {d["chunk_id"]: LexicalFields.of_record(d).values() for d in dicts}
    stage("lexical")
    out = Prepared(task, doc.doc_id, doc.source, doc.title, "", "", dicts, None, access.reported, "", vectors,
                   doc.warnings, lexical)
    del doc, chunks, records, dicts, lexical, vectors
    from chunkwise.pipeline.pack import KeyedPack, RecordPack
    out = replace(out, records=RecordPack.of(out.records).spooled(),
                  lexical=KeyedPack.of(out.lexical).spooled(), vectors=KeyedPack.of(out.vectors).spooled())
    stage("pack")
blob = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
stage("pickle for the pipe")
print(json.dumps({"rows": rows, "records": len(out.records), "pickled_bytes": len(blob)}))
'''


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", required=True, help="label=path of a src/ tree")
    ap.add_argument("--docx-mb", type=int, default=60)
    ap.add_argument("--docx", help="an existing big.docx (default: made with worker_memory.big_docx)")
    ap.add_argument("--whole", action="store_true", help="one stage for the whole prepare + pack (as the worker)")
    args = ap.parse_args(argv)
    import worker_memory as wm

    with tempfile.TemporaryDirectory(prefix="chunkwise-docxstage-") as tmp:
        path = Path(args.docx) if args.docx else Path(tmp) / "big.docx"
        if not args.docx:
            wm.big_docx(path, args.docx_mb, 10)
        out = {}
        for label, src in (t.split("=", 1) for t in args.tree):
            env = {**os.environ, "PYTHONPATH": str(Path(src).resolve()), "HF_HUB_OFFLINE": "1",
                   "TIKTOKEN_CACHE_DIR": "", "TMPDIR": tmp}
            if args.whole:
                env["PROBE_WHOLE"] = "1"
            res = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, env=env)
            if res.returncode:
                print(res.stderr[-3000:], file=sys.stderr)
                out[label] = {"error": res.returncode}
                continue
            out[label] = json.loads(res.stdout.strip().splitlines()[-1])
            print(label, json.dumps(out[label]), file=sys.stderr, flush=True)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
