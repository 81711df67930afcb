"""Same chunks before and after a speed change: this tree's chunkers against another commit's.

Why: the chunking speed work (issue 26 item 7) must not move a single boundary. This script chunks
the same texts with the working tree's ``src`` and with ``git archive REF src`` (default 2d8a35f, main before this work),
each in its own fresh process, and compares every chunk's (start, end, size, level, needs_review,
reasons, embed_text) for several strategies, units and sizes. It also times both (CPU seconds of the
chunking calls alone, best of ``--repeat``), so the same run gives the before/after ratio.

The timing is ``benchmarks/chunking.py``'s for the same chunker: one ``chunk()`` call per file after a
full untimed pass, the outputs kept, GC collected before and off during a repetition, and the least
process CPU time (every thread) of the repetitions. The two used to disagree by up to 1.7x: chunking.py
reported the CPU time of the repetition with the best *wall* time, a random draw on a loaded machine,
where this script keeps the least CPU of ``--repeat`` x ``--rounds``; and with tokie a chunker counts
batches of 200 pieces or more on tokie's thread pool, whose helper adds about as much CPU again as the
calling thread at load 13, more or less with the load of the moment (chunking.py now shows the calling
thread's CPU beside it). GC, the kept outputs and the warm-up made no measurable difference (same
process, interleaved).

Run: ``PYTHONPATH=src python benchmarks/chunk_identity.py [--ref 2d8a35f] [--corpora DIR] [--repeat 3]
[--rounds N] [--only "recursive@256 tokens overlap 0 (tokie),recursive@800"]``
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import io
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPORA = REPO / ".." / "shared" / "data" / "chroma" / "corpora"
CONFIGS = [
    ("recursive", 256, "tokens", 0, "tokie"),
    ("fixed", 256, "tokens", 0, "tokie"),
    ("fixed", 128, "tokens", 32, "tokie"),
    ("recursive", 800, "chars", 0, "auto"),
    ("recursive", 128, "tokens", 16, "tokie"),
    ("paragraphs", 200, "tokens", 0, "tokie"),
    ("sentences", 256, "tokens", 0, "tokie"),
    ("structure", 256, "tokens", 0, "tokie"),
    ("auto", 256, "tokens", 0, "tokie"),
    ("fixed", 200, "words", 20, "auto"),
    ("recursive", 256, "tokens", 0, "tokenizers"),
]
SEPARATORS = ["\n\n", "\n", ".", "?", "!", " ", ""]

CHILD = r"""
import gc, hashlib, json, sys, time
sys.path.insert(0, sys.argv[1])
from chunkwise.pipeline.chunk import make_chunker
texts = json.load(open(sys.argv[2]))
configs = json.load(open(sys.argv[3]))
repeat = int(sys.argv[4])
out = {}
for strategy, size, unit, overlap, backend in configs:
    kw = dict(strategy=strategy, size=size, unit=unit, overlap=overlap)
    if unit == "tokens":
        kw.update(tokenizer="minilm", backend=backend)
    if unit == "chars":
        kw.update(separators=%r)
    ch = make_chunker(**kw)
    rows = []
    for t in texts:
        rows.append([[c.start_char, c.end_char, c.size, c.level, c.needs_review, list(c.reasons), c.kind,
                      hashlib.sha1(c.embed_text.encode("utf-8", "surrogatepass")).hexdigest()[:12]]
                     for c in ch.chunk(t)])
    best = None
    for _ in range(repeat):  # timed as benchmarks/chunking.py times a contender (_timing.timed)
        kept = None
        gc.collect()
        gc.disable()
        c0 = time.process_time()
        kept = [ch.chunk(t) for t in texts]
        cpu = time.process_time() - c0
        gc.enable()
        best = cpu if best is None else min(best, cpu)
    out[f"{strategy}@{size} {unit} overlap {overlap} ({backend})"] = {"chunks": rows, "cpu": best}
json.dump(out, open(sys.argv[5], "w"))
""" % (SEPARATORS,)


def config_name(config) -> str:
    strategy, size, unit, overlap, backend = config
    return f"{strategy}@{size} {unit} overlap {overlap} ({backend})"


def run(src: Path, texts: Path, configs: Path, repeat: int, tmp: Path, tag: str) -> dict:
    out = tmp / f"{tag}.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("PYTHONPATH", None)
    subprocess.run([sys.executable, "-c", CHILD, str(src), str(texts), str(configs), str(repeat), str(out)],
                   check=True, env=env)
    return json.loads(out.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # Default: main just before the chunking speed work of issue 26 (the previous implementation).
    ap.add_argument("--ref", default="2d8a35f")
    ap.add_argument("--corpora", type=Path, default=CORPORA)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--extra", type=Path, nargs="*", default=[], help="more text files to chunk")
    ap.add_argument("--rounds", type=int, default=1,
                    help="run before and after alternately this many times; CPU s is the best of all rounds "
                         "(interleaving evens out a machine whose load changes during the run)")
    ap.add_argument("--only", default="", help="comma-separated prefixes of the config names to run")
    args = ap.parse_args()
    prefixes = [p.strip() for p in args.only.split(",") if p.strip()]
    configs = [c for c in CONFIGS if not prefixes or any(config_name(c).startswith(p) for p in prefixes)]
    texts = [(args.corpora / f).read_text(encoding="utf-8") for f in sorted(os.listdir(args.corpora))
             if f.endswith(".md")]
    texts += [p.read_text(encoding="utf-8", errors="replace") for p in args.extra]
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        archive = subprocess.run(["git", "archive", args.ref, "src"], cwd=REPO, check=True, capture_output=True).stdout
        tarfile.open(fileobj=io.BytesIO(archive)).extractall(tmp / "ref")
        (tmp / "texts.json").write_text(json.dumps(texts))
        (tmp / "configs.json").write_text(json.dumps(configs))
        before: dict = {}
        after: dict = {}
        for r in range(args.rounds):
            for tree, out in ((tmp / "ref" / "src", before), (REPO / "src", after)):
                got = run(tree, tmp / "texts.json", tmp / "configs.json", args.repeat, tmp, f"run{r}")
                for name, res in got.items():
                    if name in out and res["chunks"] != out[name]["chunks"]:
                        raise SystemExit(f"{name}: one tree gave different chunks in two rounds")
                    out[name] = {"chunks": res["chunks"], "cpu": min(res["cpu"], out.get(name, res)["cpu"])}
    ref_sha = subprocess.run(["git", "rev-parse", "--short", args.ref], cwd=REPO, capture_output=True, text=True).stdout.strip()
    load = os.getloadavg()
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(f"texts: {len(texts)} ({mb:.2f} MB); before = {args.ref} ({ref_sha}), after = working tree; "
          f"CPU s best of {args.repeat} x {args.rounds} interleaved round(s); "
          f"load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print("| config | chunks | identical | before CPU s | after CPU s | after / before |")
    print("|---|--:|--:|--:|--:|--:|")
    bad = 0
    for name, b in before.items():
        a = after[name]
        n = sum(len(r) for r in b["chunks"])
        same = sum(x == y for rb, ra in zip(b["chunks"], a["chunks"]) for x, y in zip(rb, ra))
        same = same if all(len(rb) == len(ra) for rb, ra in zip(b["chunks"], a["chunks"])) else min(same, n - 1)
        bad += same != n
        print(f"| {name} | {n} | {same}/{n} | {b['cpu']:.4f} | {a['cpu']:.4f} | {a['cpu'] / b['cpu']:.2f} |")
    print("\nALL IDENTICAL" if not bad else f"\n{bad} CONFIGS DIFFER")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
