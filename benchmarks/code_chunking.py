"""Code chunking: how often a chunk starts at a definition boundary, and how many definitions that
fit under the cap end up split, for chunkwise's ``code`` strategy against its ``recursive`` one and
LangChain's language-aware ``RecursiveCharacterTextSplitter.from_language``.

Corpus: real source files this machine already has (no download): Python standard-library packages
(json, http, email, logging, urllib), CPython's C headers, Playwright's JavaScript and TypeScript
declaration files (from the venv), Go files from git's contrib folder. Every contender gets the same
cap in MiniLM tokens (LangChain through ``length_function``).

Reference boundaries come from tree-sitter, independently of the chunkers: the first character of
every top-level unit and every member of a class / impl / interface, or of the comment/decorator run
directly above it. A chunk "starts at a boundary" when its first non-space character is one.
A definition "fits" when its text measures at most the cap; it "is split" when no chunk holds it whole.

Run: ``.venv/bin/python benchmarks/code_chunking.py [--size 256] [--json FILE]``
"""
from __future__ import annotations

import argparse
import glob
import json
import sys
import sysconfig
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from chunkwise import api  # noqa: E402
from chunkwise.chunking import code as code_mod  # noqa: E402
from chunkwise.config import ChunkConfig  # noqa: E402

LC_LANG = {"python": "PYTHON", "c": "C", "javascript": "JS", "typescript": "TS", "go": "GO"}


def corpus() -> list[tuple[str, str, str]]:
    """(path, language, text) of the benchmark files, in a fixed order."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    include = Path(sysconfig.get_paths()["include"])
    site = Path(sysconfig.get_paths()["purelib"])
    venv_site = HERE.parent / ".venv" / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    if not (site / "playwright").is_dir() and venv_site.is_dir():
        site = venv_site
    pw = site / "playwright" / "driver" / "package"
    groups = [
        ("python", [p for pkg in ("json", "http", "email", "logging", "urllib") for p in sorted((stdlib / pkg).glob("*.py"))]),
        ("c", sorted(include.glob("*.h"))),
        ("javascript", [Path(p) for p in sorted(glob.glob(str(pw / "lib" / "**" / "*.js"), recursive=True))
                        if "vite" not in p and "Bundle" not in p and Path(p).stat().st_size < 400_000]),
        ("typescript", sorted((pw / "types").glob("*.d.ts"))),
        ("go", [Path(p) for p in sorted(glob.glob("/usr/share/doc/git/contrib/**/*.go", recursive=True))]),
    ]
    out = []
    for lang, paths in groups:
        for p in paths:
            try:
                text = p.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if text.strip():
                out.append((str(p), lang, text))
    return out


def reference(text: str, lang: str) -> tuple[set[int], list[tuple[int, int]]]:
    """Boundary positions (first non-space characters) and definition spans, from tree-sitter."""
    parser = code_mod._parser(lang)
    tree = parser.parse(text.encode("utf-8"))
    lines = code_mod._Lines(text, lang)
    starts: set[int] = set()
    defs: list[tuple[int, int]] = []

    def first_char(pos: int) -> int:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        return pos

    def walk(node, depth: int) -> None:
        for kid in node.named_children:
            if "comment" in kid.type:
                continue
            row = kid.start_point[0]
            a = lines.at(kid.start_point)
            starts.add(first_char(a))
            starts.add(first_char(lines.start(lines.lead(row))))  # its doc comment / decorator run
            if kid.type in code_mod.TRANSPARENT:  # #ifndef guards, extern "C": their members are top-level
                walk(kid.child_by_field_name("body") or kid, depth)
                continue
            inner = code_mod._inner(kid)
            if inner is not None and kid.end_point[0] > kid.start_point[0]:
                b = lines.at(code_mod.trimmed_end(kid))
                while b > a and text[b - 1].isspace():  # a C macro ending in a line continuation spans the newline
                    b -= 1
                defs.append((a, b))
                if depth == 0 and code_mod._label(kid, text, lines) is not None:
                    walk(inner, 1)

    walk(code_mod._unwrap(tree.root_node), 0)
    return starts, defs


def contenders(size: int):
    sizer = api.make_chunker(ChunkConfig(size=size)).sizer
    out = {}
    code = {}

    def chunkwise_code(text, lang):
        ch = code.setdefault(lang, api.make_chunker(ChunkConfig(strategy="code", language=lang, size=size)))
        return [(c.start_char, c.end_char) for c in ch.chunk(text)]

    out["chunkwise code"] = chunkwise_code
    rec = api.make_chunker(ChunkConfig(strategy="recursive", size=size))
    out["chunkwise recursive"] = lambda text, lang: [(c.start_char, c.end_char) for c in rec.chunk(text)]
    try:
        from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

        splitters = {}

        def langchain(text, lang):
            sp = splitters.setdefault(lang, RecursiveCharacterTextSplitter.from_language(
                getattr(Language, LC_LANG[lang]), chunk_size=size, chunk_overlap=0, length_function=sizer.count,
                add_start_index=True))
            return [(d.metadata["start_index"], d.metadata["start_index"] + len(d.page_content))
                    for d in sp.create_documents([text])]

        out["LangChain from_language"] = langchain
    except ImportError as exc:
        print(f"LangChain skipped: {exc}", file=sys.stderr)
    return out, sizer


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    files = corpus()
    runs, sizer = contenders(args.size)
    refs = {path: reference(text, lang) for path, lang, text in files}
    fits = {path: [(a, b) for a, b in refs[path][1] if sizer.count(text[a:b]) <= args.size]
            for path, _, text in files}
    rows = []
    for name, run in runs.items():
        chunks = at = split = 0
        t0 = time.process_time()  # CPU: wall time here depends on what else shares the cores
        per_lang: dict[str, list[int]] = {}
        for path, lang, text in files:
            spans = run(text, lang)
            starts, _ = refs[path]
            hit = sum(1 for a, _ in spans if _first(text, a) in starts)
            broken = sum(1 for a, b in fits[path] if not any(s <= a and b <= e for s, e in spans))
            chunks += len(spans)
            at += hit
            split += broken
            agg = per_lang.setdefault(lang, [0, 0])
            agg[0] += len(spans)
            agg[1] += hit
        rows.append({"contender": name, "chunks": chunks, "at_boundary": round(at / chunks, 3),
                     "fitting_definitions_split": split, "cpu_seconds": round(time.process_time() - t0, 2),
                     "by_language": {k: round(v[1] / v[0], 3) for k, v in per_lang.items()}})
    total_defs = sum(len(v) for v in fits.values())
    langs = sorted({lang for _, lang, _ in files})
    print(f"{len(files)} files ({', '.join(f'{lang} {sum(1 for _, x, _ in files if x == lang)}' for lang in langs)}), "
          f"cap {args.size} MiniLM tokens, {total_defs} definitions that fit")
    print(f"{'contender':26} {'chunks':>7} {'at boundary':>12} {'fitting defs split':>19} {'cpu s':>6}  by language")
    for r in rows:
        by = " ".join(f"{k} {v:.2f}" for k, v in r["by_language"].items())
        print(f"{r['contender']:26} {r['chunks']:7} {r['at_boundary']:12.3f} {r['fitting_definitions_split']:19} "
              f"{r['cpu_seconds']:6.1f}  {by}")
    if args.json:
        Path(args.json).write_text(json.dumps({"size": args.size, "files": len(files), "fitting_definitions": total_defs,
                                               "rows": rows}, indent=2))
    return 0


def _first(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


if __name__ == "__main__":
    sys.exit(main())
