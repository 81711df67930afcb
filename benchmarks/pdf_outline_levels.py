"""PDF heading levels measured against the PDFs' own outlines (bookmarks), where they have one.

Why this and not Docling: Docling's PDF groundtruth (``../shared/data/docling/pdf/groundtruth``)
writes every one of its 65 section headers at one level (JSON ``section_header`` ``level`` 1, Markdown
``##``), so "level within ±1 of Docling's" says nothing about levels. An outline written by the
document's author (or the tool that made the PDF) is a hierarchy that does carry information.

For each PDF of the given folders whose outline has at least two levels, the outline entries whose
title is in the file's text (as pypdf reads it: an excerpt keeps its whole book's outline, and
destinations are often broken) are the reference: (depth, title). chunkwise's heading blocks are
matched to them on normalised text (``docling_compare.norm`` and its numbering/trailing-word rule);
"level ±1" counts matched headings whose depth below the document's top heading is within one of the
entry's depth below the outline's top (the rule ``docling_compare`` uses); "exact" counts equal
relative depths. Recall is over outline entries; a PDF read with errors scores zero.

    PYTHONPATH=src python benchmarks/pdf_outline_levels.py [FOLDER ...] [--skip 400p] [--files]
"""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import docling_compare as dc  # noqa: E402

DEFAULT = [Path(__file__).resolve().parents[2] / "shared" / "data"]


def outline(path: Path) -> list[tuple[int, str]]:
    """(depth from 1, normalised title) of the outline entries that point into the file."""
    import pypdf

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    reader = pypdf.PdfReader(str(path))
    out: list[tuple[int, str]] = []

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            if dc.norm(item.title or ""):
                out.append((depth, dc.norm(item.title)))

    try:
        walk(reader.outline, 1)
        text = " " + dc.norm(" ".join(page.extract_text() or "" for page in reader.pages)) + " "
    except Exception:  # noqa: BLE001 - no readable outline: not a reference
        return []
    # an excerpt keeps its whole book's outline (DA-1p.pdf: 1,372 entries, one page), and destinations
    # are often broken: an entry counts when its title is in the file's text as pypdf reads it
    return [(d, t) for d, t in out if f" {t} " in text]


def score(path: Path, ref: list[tuple[int, str]]) -> dict:
    from chunkwise.extract import PDF, extract_bytes

    row = {"file": path.name, "entries": len(ref), "matched": 0, "level_ok": 0, "exact": 0, "headings": 0}
    try:  # the extractor itself, in this process: the contained worker's clock stops a 619-page book on a loaded machine
        doc = extract_bytes(path.read_bytes(), str(path), PDF)
    except Exception as exc:  # noqa: BLE001
        return {**row, "error": f"{type(exc).__name__}: {exc}"[:160]}
    ours = [(b.level or 1, dc.norm(doc.text[b.start:b.end])) for b in doc.blocks if b.kind == "heading"]
    ours = [(lv, t) for lv, t in ours if t]
    row["headings"] = len(ours)
    rmin = min((d for d, _ in ref), default=1)
    omin = min((lv for lv, _ in ours), default=1)
    pool = list(ours)
    for depth, title in ref:
        j = next((i for i, (_, t) in enumerate(pool) if t == title or dc._close(t, title)), None)
        if j is None:
            continue
        diff = abs((pool[j][0] - omin) - (depth - rmin))
        row["matched"] += 1
        row["level_ok"] += diff <= 1
        row["exact"] += diff == 0
        pool.pop(j)
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="*", type=Path, default=DEFAULT)
    ap.add_argument("--skip", default="", help="comma-separated name parts to leave out (e.g. 619p)")
    ap.add_argument("--files", action="store_true")
    args = ap.parse_args(argv)
    skip = [s for s in args.skip.split(",") if s]
    rows = []
    for folder in args.folders:
        if not folder.is_dir():
            print(f"no folder {folder}", file=sys.stderr)
            return 2
        for path in sorted(folder.rglob("*.pdf")):
            if any(s in path.name for s in skip):
                continue
            ref = outline(path)
            if len({d for d, _ in ref}) >= 2:
                rows.append(score(path, ref))
    tot = {k: sum(r[k] for r in rows) for k in ("entries", "matched", "level_ok", "exact")}
    print("| PDFs | outline entries | matched as headings | level ±1 (of matched) | exact (of matched) |")
    print("|--:|--:|--:|--:|--:|")
    m = max(tot["matched"], 1)
    print(f"| {len(rows)} | {tot['entries']} | {tot['matched']} ({tot['matched'] / max(tot['entries'], 1):.3f}) | "
          f"{tot['level_ok']} ({tot['level_ok'] / m:.3f}) | {tot['exact']} ({tot['exact'] / m:.3f}) |")
    if args.files:
        for r in rows:
            print(f"{r['file']:45} entries {r['entries']} matched {r['matched']} level±1 {r['level_ok']} "
                  f"exact {r['exact']} (ours {r['headings']} headings){' ERROR ' + r['error'] if 'error' in r else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
