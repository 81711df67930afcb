"""`chunkwise chunk ... --json` output of two trees compared byte for byte.

Why: the chunk command's output path is sped up (issue 26 item 7) on the condition that its JSON
lines stay byte-identical. Each file of the given folders is run through both trees' CLI (fresh
processes, the same flags) for each config; any difference is printed with its first differing line.

Run: ``PYTHONPATH=src python benchmarks/cli_chunk_identity.py --before OTHER/src DIR_OR_FILE...``
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CONFIGS = (
    ["--strategy", "fixed", "--size", "256"],
    ["--strategy", "fixed", "--size", "128", "--overlap", "32"],
    ["--strategy", "fixed", "--size", "200", "--unit", "words", "--overlap", "20"],
    ["--strategy", "fixed", "--size", "800", "--unit", "chars"],
    ["--strategy", "recursive", "--size", "256"],
    ["--strategy", "auto", "--size", "256", "--header", "path", "--acl", "team:a"],
)


def run(src: Path, flags: list[str], path: Path) -> tuple[int, bytes, bytes]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    p = subprocess.run([sys.executable, "-m", "chunkwise.cli.main", "chunk", *flags, "--json", str(path)],
                       capture_output=True, env=env)
    return p.returncode, p.stdout, p.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="the other tree's src/")
    ap.add_argument("paths", nargs="+", type=Path)
    args = ap.parse_args()
    files = sorted(f for p in args.paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file())
    same = differ = lines = 0
    for flags in CONFIGS:
        for f in files:
            a, b = run(REPO / "src", flags, f), run(args.before, flags, f)
            if a == b:
                same += 1
                lines += a[1].count(b"\n")
                continue
            differ += 1
            la, lb = a[1].split(b"\n"), b[1].split(b"\n")
            at = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
            print(f"DIFFER {' '.join(flags)} {f}: rc {a[0]}/{b[0]}, lines {len(la)}/{len(lb)}, first at line {at}; "
                  f"stderr equal: {a[2] == b[2]}")
        print(f"{' '.join(flags)}: done", flush=True)
    print(f"{len(files)} files x {len(CONFIGS)} configs: {same} identical ({lines} JSON lines), {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
