"""The storage interface's width: methods of ``Store`` and of each ranker protocol, capability
probes (``getattr(store, ...)``/``hasattr(store, ...)``) outside store/, and copies of the write
protocol, for this checkout and (with ``--against REV``) a git revision, side by side.

    PYTHONPATH=src python benchmarks/store_surface.py --against ade19e9
"""
from __future__ import annotations

import argparse
import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = re.compile(r"(getattr|hasattr)\((self\.)?store\b")


def protocol_methods(source: str) -> dict[str, int]:
    """Public methods per Protocol class of store/base.py (dunders left out)."""
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and any(getattr(b, "id", "") == "Protocol" for b in node.bases):
            out[node.name] = sum(1 for f in node.body if isinstance(f, ast.FunctionDef) and not f.name.startswith("__"))
    return out


def files_at(rev: str | None) -> dict[str, str]:
    """Path -> text of every src/chunkwise/**.py at ``rev`` (None: the working tree)."""
    if rev is None:
        return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in (ROOT / "src/chunkwise").rglob("*.py")}
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "src/chunkwise"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    return {n: subprocess.run(["git", "show", f"{rev}:{n}"], cwd=ROOT, check=True, capture_output=True,
                              text=True).stdout for n in names if n.endswith(".py")}


def measure(rev: str | None) -> dict:
    files = files_at(rev)
    methods = protocol_methods(files["src/chunkwise/store/base.py"])
    probes = sum(len(PROBE.findall(text)) for name, text in files.items() if "/store/" not in name)
    writers = sum(text.count("def write_document(") for name, text in files.items() if "/store/" in name
                  and not name.endswith("base.py"))
    occurrence = sum(text.count("seen.get(") for text in files.values())
    return {"Store methods": methods.get("Store", 0),
            "ranker protocol methods": {k: v for k, v in methods.items() if k != "Store"},
            "capability probes outside store/": probes, "write_document implementations": writers,
            "occurrence counters": occurrence, "store modules": sorted(n for n in files if "/store/" in n)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", help="a git revision to compare with (e.g. the commit before the change)")
    args = ap.parse_args()
    now = measure(None)
    before = measure(args.against) if args.against else None
    for key, value in now.items():
        if key == "store modules":
            continue
        print(f"{key:34} {str(before[key]) if before else '':>24}  ->  {value}")
    print("store modules:", ", ".join(m.removeprefix("src/chunkwise/store/") for m in now["store modules"]))


if __name__ == "__main__":
    main()
