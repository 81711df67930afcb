"""Parsing always in a limited worker (issue 25 item 9): ingest speed with one worker before and
after, and the peak memory of the main process and of the workers on hostile files.

Before/after: the same script runs the CLI with ``PYTHONPATH`` at two source trees (``--before``, a
checkout where ``--workers 1`` parses in the main process; ``--after``, this one), alternating,
``--repeat`` times each, on ordinary files: the Docling test documents (DOCX, HTML, Markdown)
and the Chroma benchmark's Markdown (``../shared/data``), hashing embedder (cheap: the worker's cost
is the largest share it can be), ``--workers 1``, a fresh store each run. Reported: the median wall
time and the after/before ratio, and the same for CPU time (main process and workers, user and
system: what a loaded machine does not inflate).

Hostile, each inside the extraction guards: a DOCX whose ``document.xml`` inflates to ``--docx-mb``
MB of varied words, with 10 MB of media (about 28 MB on disk), and a Markdown file of one
``--line-mb`` MB line (under the 50 MB ``--max-bytes``), each in a folder with one ordinary file,
``--workers 1``, default limits. Peak memory is read by a wrapper process that runs the CLI's
``main()`` in itself: ``RUSAGE_SELF`` is the main process, ``RUSAGE_CHILDREN`` the largest worker.

    .venv/bin/python benchmarks/worker_memory.py --before /work/main/src --after src [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zipfile  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
if not DATA.is_dir():
    DATA = Path("/work/shared/data")

WRAPPER = """
import json, resource, sys
from chunkwise.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
except BaseException as exc:  # a MemoryError in the main process is a figure too
    code = type(exc).__name__
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": code, "main_mb": me.ru_maxrss / 1024, "worker_mb": kids.ru_maxrss / 1024,
                  "main_cpu_s": me.ru_utime + me.ru_stime, "worker_cpu_s": kids.ru_utime + kids.ru_stime}),
      file=sys.stderr)
"""


def cli(src: str, args: list[str], limit_gb: float | None = None) -> tuple[float, dict, str]:
    env = {**os.environ, "PYTHONPATH": str(Path(src).resolve()), "HF_HUB_OFFLINE": "1", "TIKTOKEN_CACHE_DIR": ""}
    pre = None
    if limit_gb:  # keeps a runaway main process from taking the shared machine down
        import resource

        def pre():
            resource.setrlimit(resource.RLIMIT_AS, (int(limit_gb * 2**30), int(limit_gb * 2**30)))
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", WRAPPER, *args], capture_output=True, text=True, env=env,
                         preexec_fn=pre)
    wall = time.perf_counter() - t0
    last = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "{}"
    try:
        figures = json.loads(last)
    except ValueError:
        figures = {"code": out.returncode}
    return wall, figures, out.stdout


def ingest_args(folder: Path, db: Path) -> list[str]:
    return ["ingest", str(folder), "--db", str(db), "--acl", "bench", "--embedder", "hashing", "--workers", "1",
            "--json"]


def big_docx(path: Path, xml_mb: int, media_mb: int) -> None:
    """A DOCX inside every extraction guard (ooxml.py: under 100:1 per member, XML under 64 MiB):
    ``xml_mb`` MB of paragraphs of varied words and ``media_mb`` MB of incompressible media."""
    import random

    rng = random.Random(3)
    words = [f"w{rng.randrange(1 << 20):x}" for _ in range(50_000)]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml",
                   '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                   '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                   '<Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" '
                   'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
                   '</Types>')
        z.writestr("_rels/.rels",
                   '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
                   'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
                   '2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>')
        with z.open("word/document.xml", "w", force_zip64=True) as f:
            f.write(b'<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/'
                    b'2006/main"><w:body>')
            written = 0
            while written < xml_mb << 20:
                para = ("<w:p><w:r><w:t>" + " ".join(rng.choices(words, k=40)) + "</w:t></w:r></w:p>").encode()
                f.write(para)
                written += len(para)
            f.write(b"</w:body></w:document>")
        z.writestr("word/media/image1.bin", rng.randbytes(media_mb << 20), compress_type=zipfile.ZIP_STORED)


def ordinary(work: Path) -> Path:
    root = work / "ordinary"
    for sub in ("docling", "chroma"):
        src = DATA / sub
        for path in sorted(src.rglob("*")):
            if path.is_file() and path.suffix.lower() in (".docx", ".html", ".md"):
                dest = root / sub / path.relative_to(src)
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(path.read_bytes())
    return root


def speed(before: str, after: str, work: Path, repeat: int) -> dict:
    root = ordinary(work)
    files = sum(1 for p in root.rglob("*") if p.is_file())
    walls: dict[str, list[float]] = {"before": [], "after": []}
    cpus: dict[str, list[float]] = {"before": [], "after": []}  # main + workers, user + system
    chunks = {}
    for i in range(repeat):
        for name, src in (("before", before), ("after", after)):
            db = work / f"{name}-{i}.db"
            wall, figures, out = cli(src, ingest_args(root, db))
            walls[name].append(wall)
            cpus[name].append(figures.get("main_cpu_s", 0.0) + figures.get("worker_cpu_s", 0.0))
            chunks[name] = json.loads(out)["in_store"]
            print(f"  speed {name} run {i}: {wall:.2f} s, cpu {cpus[name][-1]:.2f} s", file=sys.stderr, flush=True)
    med = {k: statistics.median(v) for k, v in walls.items()}
    cpu_med = {k: statistics.median(v) for k, v in cpus.items()}
    return {"files": files, "chunks": chunks, "median_s": med, "runs": walls, "ratio": med["after"] / med["before"],
            "median_cpu_s": cpu_med, "cpu_runs": cpus, "cpu_ratio": cpu_med["after"] / cpu_med["before"]}


def hostile(before: str, after: str, work: Path, docx_mb: int, line_mb: int, limit_gb: float) -> list[dict]:
    cases = work / "hostile"
    made = []
    for name, filename, write in (
            ("huge DOCX", "big.docx", lambda p: big_docx(p, docx_mb, 10)),
            ("one huge line", "line.md", lambda p: p.write_bytes(b"# Title\n\n" + b"ledger " * (line_mb * 2**20 // 7)))):
        folder = cases / filename.split(".")[0]
        folder.mkdir(parents=True)
        write(folder / filename)
        (folder / "ok.md").write_text("# Fine\n\nAn ordinary file.\n", encoding="utf-8")
        made.append((name, folder, (folder / filename).stat().st_size))
    rows = []
    for name, folder, size in made:
        for label, src in (("before", before), ("after", after)):
            db = work / f"h-{label}-{folder.name}.db"
            wall, figures, out = cli(src, ingest_args(folder, db), limit_gb)
            try:
                errors = [e["error"][:120] for e in json.loads(out)["errors"]]
            except (ValueError, KeyError, TypeError):
                errors = []
            rows.append({"case": name, "bytes": size, "code": label, "wall_s": wall, **figures, "errors": errors})
            print(f"  hostile {name} {label}: {wall:.1f} s {figures} {errors}", file=sys.stderr, flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="source tree (src/) of the code before")
    ap.add_argument("--after", default=str(Path(__file__).resolve().parents[1] / "src"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--docx-mb", type=int, default=60, help="inflated size of the DOCX's document.xml (the "
                    "extraction guard allows 64)")
    ap.add_argument("--line-mb", type=int, default=45, help="size of the one-line Markdown file (--max-bytes: 50)")
    ap.add_argument("--main-limit-gb", type=float, default=8.0,
                    help="address-space cap on the CLI process in the hostile runs (the machine is shared)")
    ap.add_argument("--only", default="speed,hostile")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="chunkwise-wmem-") as tmp:
        work = Path(tmp)
        if "speed" in args.only:
            out["speed"] = speed(args.before, args.after, work, args.repeat)
        if "hostile" in args.only:
            out["hostile"] = hostile(args.before, args.after, work, args.docx_mb, args.line_mb, args.main_limit_gb)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
