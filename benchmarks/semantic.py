"""Semantic strategy: seconds and peak memory per MB of text, before (a git ref's semantic.py) and
after (this tree), with the same embedder, in one run; and whether the chunk boundaries agree.

Why: issue 26 asks for <= 30 s and <= 1 GB per MB of text at equal quality. Each contender runs in
its own fresh process (peak RSS is a per-process high-water mark, and a loaded model would be billed
to whoever loaded it first), on the same text: a sample of the first ``--kb`` KB of each Chroma
corpus (the whole 1.45 MB takes tens of minutes per contender on the reference model under load).

- "before": ``git show REF:src/chunkwise/chunking/semantic.py`` loaded in place of this tree's
  module (the rest of the package is this tree's: the packer and sizer are shared);
- CPU s is the process's CPU time in ``chunk()`` (all threads); wall s is printed too but the
  shared machine distorts it — read the CPU ratio;
- peak RSS is the child's ``ru_maxrss`` (model loaded + chunking), "chunking" the growth over the
  RSS after the model's warm-up call;
- "same boundaries": share of the before-run's chunk (start, end) spans found in the after-run.

Run: ``PYTHONPATH=src python benchmarks/semantic.py [--kb 40] [--ref ade19e9]
[--embedders minilm,minilm-onnx-int8] [--json FILE]``
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPORA = REPO / ".." / "shared" / "data" / "chroma" / "corpora"
NAMES = ["chatlogs", "finance", "pubmed", "state_of_the_union", "wikitexts"]


def sample(kb: int, corpora: Path = CORPORA) -> list[str]:
    """The first ``kb`` KB of each corpus, cut at a paragraph end so no sentence is torn."""
    out = []
    for name in NAMES:
        text = (corpora / f"{name}.md").read_text(encoding="utf-8")
        if kb and len(text) > kb * 1000:
            cut = text.rfind("\n\n", 0, kb * 1000)
            text = text[: cut if cut > 0 else kb * 1000]
        out.append(text)
    return out


def child(module_file: str, embedder: str, kb: int, corpora: Path) -> dict:
    """One contender in this (fresh) process: build, warm up, chunk every sample text."""
    sys.path.insert(0, str(REPO / "src"))
    if module_file:  # the "before" module replaces this tree's before anything imports it
        spec = importlib.util.spec_from_file_location("chunkwise.chunking.semantic", module_file)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["chunkwise.chunking.semantic"] = mod
        spec.loader.exec_module(mod)
    from chunkwise.pipeline.chunk import make_chunker

    texts = sample(kb, corpora)
    chunker = make_chunker(strategy="semantic", size=256, format="markdown", semantic_embedder=embedder)
    chunker.embedder.embed(["warm up the model"])
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    spans, cpu, wall = [], 0.0, 0.0
    for text in texts:
        c0, w0 = time.process_time(), time.perf_counter()
        chunks = chunker.chunk(text)
        cpu += time.process_time() - c0
        wall += time.perf_counter() - w0
        spans.append([[c.start_char, c.end_char] for c in chunks])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    return {"mb": mb, "cpu_s": cpu, "wall_s": wall, "peak_rss_mb": peak, "rss_after_warmup_mb": rss0,
            "spans": spans}


def run(label: str, module_file: str, embedder: str, kb: int, corpora: Path) -> dict:
    cmd = [sys.executable, __file__, "--child", module_file or "-", "--embedders", embedder, "--kb", str(kb),
           "--corpora", str(corpora)]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode:
        raise SystemExit(f"{label} failed:\n{out.stderr[-3000:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res.update(label=label, embedder=embedder)
    return res


def agreement(before: list, after: list) -> float:
    a = {(i, s, e) for i, doc in enumerate(before) for s, e in doc}
    b = {(i, s, e) for i, doc in enumerate(after) for s, e in doc}
    return len(a & b) / max(len(a), 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kb", type=int, default=40, help="KB taken from each corpus (0: whole files)")
    ap.add_argument("--ref", default="ade19e9", help="git ref whose semantic.py is 'before' (default: the last "
                    "commit before the token-budgeted, ONNX-backed version)")
    ap.add_argument("--embedders", default="minilm", help="comma-separated semantic embedders")
    ap.add_argument("--after-only", default="", help="embedders run only with this tree (e.g. minilm-onnx-int8)")
    ap.add_argument("--json", default="")
    ap.add_argument("--corpora", type=Path, default=CORPORA, help="folder of the Chroma corpora (*.md)")
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child("" if args.child == "-" else args.child, args.embedders, args.kb, args.corpora)))
        return
    old = subprocess.run(["git", "-C", str(REPO), "show", f"{args.ref}:src/chunkwise/chunking/semantic.py"],
                         capture_output=True, text=True, check=True).stdout
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    with tempfile.NamedTemporaryFile("w", suffix="_semantic_before.py", delete=False) as f:
        f.write(old)
    rows = []
    try:
        for emb in [e for e in args.embedders.split(",") if e]:
            before = run(f"before ({args.ref})", f.name, emb, args.kb, args.corpora)
            after = run(f"after ({commit})", "", emb, args.kb, args.corpora)
            after["same_boundaries"] = agreement(before["spans"], after["spans"])
            before["same_boundaries"] = 1.0
            rows += [before, after]
        base = rows[0] if rows else None
        for emb in [e for e in args.after_only.split(",") if e]:
            r = run(f"after ({commit})", "", emb, args.kb, args.corpora)
            r["same_boundaries"] = agreement(base["spans"], r["spans"]) if base else float("nan")
            rows.append(r)
    finally:
        os.unlink(f.name)
    load = os.getloadavg()
    print(f"text: first {args.kb} KB of each of {len(NAMES)} Chroma corpora = {rows[0]['mb']:.3f} MB; "
          f"load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print("| code | embedder | CPU s / MB | wall s / MB | peak RSS MB | chunking RSS MB | chunks | same chunks as before |")
    print("|---|---|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        mb = r["mb"]
        print(f"| {r['label']} | {r['embedder']} | {r['cpu_s'] / mb:.1f} | {r['wall_s'] / mb:.1f} | "
              f"{r['peak_rss_mb']:.0f} | {r['peak_rss_mb'] - r['rss_after_warmup_mb']:.0f} | "
              f"{sum(map(len, r['spans']))} | {r['same_boundaries']:.3f} |")
    if args.json:
        Path(args.json).write_text(json.dumps([{k: v for k, v in r.items() if k != "spans"} for r in rows], indent=1))


if __name__ == "__main__":
    main()
