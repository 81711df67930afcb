"""The doors besides ingest parse in a contained worker (issue 25 item 9): ``chunkwise chunk`` and
``chunkwise audit``, before (parsed in the main process) and after (one contained worker, records
packed), side by side in one run of this script.

Hostile: a DOCX whose ``document.xml`` inflates to ``--docx-mb`` MB of varied words with 10 MB of
media, and a Markdown file of one ``--line-mb`` MB line, each alone in a folder with one ordinary
file; ``chunk --json`` (output to a pipe, read and counted) and ``audit --json``. Peak memory from a
wrapper that runs the CLI's ``main()`` in itself (``worker_memory.WRAPPER``): ``RUSAGE_SELF`` is the
main process, ``RUSAGE_CHILDREN`` the largest worker; the wrapper's address space is capped at
``--main-limit-gb`` (a shared machine). Speed: ``chunk --json`` and ``audit --json`` over the
ordinary corpus (Docling's DOCX/HTML/Markdown and the Chroma benchmark's Markdown), alternating
before/after, ``--repeat`` times; wall time and the CPU time of main + workers.

    nice .venv/bin/python benchmarks/door_memory.py --before BEFORE/src --after src --json out.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from worker_memory import WRAPPER, big_docx, ordinary  # noqa: E402

import worker_memory  # noqa: E402

# CPU time too: user+system of main and of its (reaped) children.
worker_memory.WRAPPER = WRAPPER.replace(
    'print(json.dumps({"code": code, "main_mb": self_mb, "worker_mb": children_mb}), file=sys.stderr)',
    'me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)\n'
    'sys.stdout.flush()\n'
    'print(json.dumps({"code": code, "main_mb": self_mb, "worker_mb": children_mb, '
    '"cpu_s": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime}), file=sys.stderr)')
assert worker_memory.WRAPPER != WRAPPER


SKIP: set[str] = set()  # "case/command/side" runs measured already (--skip)


def commands(folder: Path) -> dict[str, list[str]]:
    return {"chunk": ["chunk", str(folder), "--json", "--acl", "bench"], "audit": ["audit", str(folder), "--json"]}


def hostile(before: str, after: str, work: Path, docx_mb: int, line_mb: int, limit_gb: float) -> list[dict]:
    rows = []
    for name, filename, write in (
            ("huge DOCX", "big.docx", lambda p: big_docx(p, docx_mb, 10)),
            ("one huge line", "line.md", lambda p: p.write_bytes(b"# Title\n\n" + b"ledger " * (line_mb * 2**20 // 7)))):
        folder = work / "hostile" / filename.split(".")[0]
        folder.mkdir(parents=True)
        write(folder / filename)
        (folder / "ok.md").write_text("# Fine\n\nAn ordinary file.\n", encoding="utf-8")
        size = (folder / filename).stat().st_size
        for command, args in commands(folder).items():
            for label, src in (("before", before), ("after", after)):
                if f"{name}/{command}/{label}" in SKIP:
                    continue
                # after: the worker's wall-time limit raised (the shared machine runs at a load of ~30,
                # so the default 300 s per file is a limit on the machine, not on the file); before has none
                extra = ["--file-timeout", "3600"] if label == "after" else []
                wall, figures, out = worker_memory.cli(src, args + extra, limit_gb)
                lines = out.count("\n")
                rows.append({"case": name, "bytes": size, "command": command, "code": label, "wall_s": wall,
                             "output_lines": lines, "output_mb": len(out) / 2**20, **figures})
                print(f"  {name} {command} {label}: {wall:.1f} s {figures} lines={lines}", file=sys.stderr, flush=True)
    return rows


def speed(before: str, after: str, work: Path, repeat: int) -> dict:
    root = ordinary(work)
    out: dict = {"files": sum(1 for p in root.rglob("*") if p.is_file())}
    for command, args in commands(root).items():
        walls: dict[str, list[float]] = {"before": [], "after": []}
        cpus: dict[str, list[float]] = {"before": [], "after": []}
        lines = {}
        for i in range(repeat):
            for label, src in (("before", before), ("after", after)):
                wall, figures, stdout = worker_memory.cli(src, args)
                walls[label].append(wall)
                cpus[label].append(figures.get("cpu_s", float("nan")))
                lines[label] = stdout.count("\n")
                print(f"  speed {command} {label} run {i}: {wall:.2f} s cpu {cpus[label][-1]:.2f} s",
                      file=sys.stderr, flush=True)
        med = {k: statistics.median(v) for k, v in walls.items()}
        cpu = {k: statistics.median(v) for k, v in cpus.items()}
        out[command] = {"runs": walls, "cpu_runs": cpus, "median_s": med, "median_cpu_s": cpu, "lines": lines,
                        "ratio": med["after"] / med["before"], "cpu_ratio": cpu["after"] / cpu["before"]}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="source tree (src/) where chunk/audit parse in the main process")
    ap.add_argument("--after", default=str(Path(__file__).resolve().parents[1] / "src"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--docx-mb", type=int, default=60)
    ap.add_argument("--line-mb", type=int, default=45)
    ap.add_argument("--main-limit-gb", type=float, default=6.0)
    ap.add_argument("--only", default="speed,hostile")
    ap.add_argument("--json")
    ap.add_argument("--skip", action="append", default=[], help='a hostile run already measured: "huge DOCX/chunk/before"')
    args = ap.parse_args(argv)
    SKIP.update(args.skip)
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="chunkwise-doors-") as tmp:
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
