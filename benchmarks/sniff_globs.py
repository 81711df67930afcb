"""What the libraries cost on the walk's hot path: ``check_head`` (filetype sniffs suspect heads
only) and ``PathFilter.keeps`` (pathspec's GitIgnoreSpec), per call, over the text and binary heads
of /work/shared/data (or any folder given) and every relative path in it.

    PYTHONPATH=src python benchmarks/sniff_globs.py [FOLDER]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from chunkwise.sources.globs import PathFilter
from chunkwise.sources.sniff import HEAD_BYTES, PLAIN, check_head


def per_call(fn, items, repeat=5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for item in items:
            fn(item)
        best = min(best, time.perf_counter() - start)
    return best / max(1, len(items)) * 1e6


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data")
    files = [p for p in folder.rglob("*") if p.is_file()][:5000]
    heads = [p.open("rb").read(HEAD_BYTES) for p in files]
    rels = [p.relative_to(folder).as_posix() for p in files]
    text = [h for h in heads if h and check_head("f.txt", PLAIN, h) is None]
    binary = [h for h in heads if h and check_head("f.txt", PLAIN, h) is not None]
    print(f"{len(files)} files under {folder}: {len(text)} heads taken as text, {len(binary)} refused")
    print(f"check_head text   {per_call(lambda h: check_head('f.txt', PLAIN, h), text):8.2f} us/call")
    print(f"check_head binary {per_call(lambda h: check_head('f.txt', PLAIN, h), binary):8.2f} us/call")
    filt = PathFilter(include=("*.md", "*.txt", "docs/**", "**/*.pdf"), exclude=("node_modules/", "**/drafts/**", "!x.md"))
    print(f"PathFilter.keeps  {per_call(filt.keeps, rels):8.2f} us/call (4 include, 3 exclude patterns)")


if __name__ == "__main__":
    main()
