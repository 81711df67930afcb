"""Headings in plain text (issue 27 item 4): public RFCs scored against their own tables of contents,
and prose text files checked for invented headings.

RFCs: the expected headings are the entries of each RFC's "Table of Contents" (numbered sections
``1.``, ``1.2.3``, ``Appendix A.``, ``A.1.`` and unnumbered ones such as "Authors' Addresses"); the
extracted ones are the heading blocks of ``load_document`` (what ``chunkwise extract FILE --json``
shows and chunks are cut from) found after the table of contents. A numbered heading matches by its
number, an unnumbered one by its normalised title. Recall: expected entries found; precision:
extracted body headings that are in the table of contents, leaving out numbered headings one level
below the deepest the table lists (``8.1.2.1`` under a listed ``8.1.2``: real, but unconfirmable).

Prose (``--prose DIR``): every ``.txt`` file under DIR (the books and letters of
``../shared/data/unstructured``); the figure is the number of heading blocks extracted (target 0).

The RFC texts are public (rfc-editor.org): ``curl -sO https://www.rfc-editor.org/rfc/rfc$n.txt``. The
figures in BENCHMARKS were measured on copies from public GitHub repositories (this machine has no
network), byte for byte these files (repository, commit, path; git blob id to check a copy):

    aykay76/mifty       d21aaeb5ebfd54b0c284c6b4f2a9dab42554e794 rfcs/rfc1035.txt  dbc5c5edaad9c64bfacd8fb2a6d2d937b4a85536
    kjgrahn/allergy     e8621e6ecbc54104fa856bd080abd9b9d40fe3ea rfc2616.txt       b3c4f455f849817cd09784e480f2daee419c14e9
    schrepfler/uri4s    1e8594125dd4eaeccfd21481e7940fba7fee7180 rfc3986.txt       41b6c89299b1220a9df32676ecf76644ca3101f8
    sidgwick/read-rfc   ba987b4a2710e38f08485852fc703c2c683045e3 rfc6749.txt       a68759df4b26cf31d8326c87ec7c6118d79e8f5e

e.g. ``git clone https://github.com/kjgrahn/allergy && git -C allergy show e8621e6:rfc2616.txt >
DIR/rfc2616.txt``. The rfc2616 copy has its page breaks stripped (so ``13.5.4`` directly follows body
text and is missed). Pass the folder:

    PYTHONPATH=src python benchmarks/text_headings.py --rfc DIR [--prose ../shared/data/unstructured] [--files]
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

_ENTRY = re.compile(r"^\s*(?:(?P<num>(?:Appendix\s+)?(?:[A-Z]|\d+)(?:\.\d+)*\.?)\s+)?(?P<title>\S.*?)"
                    r"(?:\s*(?:\.\s*){2,}|\s{2,}|\.(?=\d+\s*$))\s*(?P<page>\d+)\s*$")  # "...Dates.89": leader eaten
_HEAD = re.compile(r"^\s*(?P<num>(?:Appendix\s+)?(?:[A-Z]|\d+)(?:\.\d+)*\.?)\s+(?P<title>\S.*)$")
_WORD = re.compile(r"[^\W_]+")
_FURNITURE = re.compile(r"\[Page \w+\]\s*$|^RFC \d+ ")  # page footers and running heads


def norm(text: str) -> str:
    return " ".join(_WORD.findall(text.casefold()))


def key(num: str | None, title: str) -> str:
    if num:
        n = num.removeprefix("Appendix").strip().rstrip(".")
        if n and (n[0].isdigit() or len(n.split(".")[0]) == 1):
            return "#" + n
    return norm(title)


def toc(text: str) -> tuple[list[str], int]:
    """(keys of the table of contents' entries, offset where the body starts after it)."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if ln.strip().lower() == "table of contents"), None)
    if start is None:
        return [], 0
    keys, pending, i = [], "", start + 1
    for i in range(start + 1, len(lines)):
        line = lines[i].rstrip("\n").lstrip("\f")
        if not line.strip() or _FURNITURE.search(line):
            continue
        m = _ENTRY.match(pending + " " + line.strip() if pending else line)
        if m:
            keys.append(key(m.group("num"), m.group("title")))
            pending = ""
        elif line.startswith(" ") and not pending:
            pending = line  # a title wrapped over two lines
        else:
            break  # a line at the left margin that is no entry: the body begins
    body = sum(len(ln) for ln in lines[: i])
    return keys, body


def score_rfc(path: Path) -> dict:
    from chunkwise.pipeline.documents import load_document

    text = path.read_text(encoding="utf-8", errors="replace")
    expected, body = toc(text)
    doc = load_document(path)
    got = []
    for b in doc.blocks:
        if b.kind != "heading" or b.start < body:
            continue
        h = " ".join(doc.text[b.start:b.end].split())
        m = _HEAD.match(h)
        got.append(key(m.group("num"), m.group("title")) if m else key(None, h))
    want = set(expected)
    found = want & set(got)
    depth = max((k.count(".") for k in want if k.startswith("#")), default=0)
    # a numbered heading deeper than the table of contents goes (8.1.2.1 under a listed 8.1.2) is
    # outside what the table can confirm: left out of precision, counted apart
    below = [g for g in got if g not in want and g.startswith("#") and g.count(".") > depth
             and g.rsplit(".", 1)[0] in want]
    scored = [g for g in got if g not in below]
    return {"file": path.name, "toc": len(want), "headings": len(scored), "below_toc": len(below),
            "recall_hit": len(found), "precision_hit": sum(1 for g in scored if g in want),
            "missed": sorted(want - found), "extra": [g for g in scored if g not in want]}


def prose_headings(folder: Path) -> list[tuple[str, list[str]]]:
    """(file, its headings' text with any Roman or Arabic number dropped, "CHAPTER XII" -> "CHAPTER")."""
    from chunkwise.pipeline.documents import load_document

    out = []
    for path in sorted(folder.rglob("*.txt")):
        try:
            doc = load_document(path)
        except Exception as exc:  # noqa: BLE001 - a file chunkwise refuses (UTF-16 without BOM, empty) is listed
            out.append((f"{path.relative_to(folder)} (not read: {type(exc).__name__})", []))
            continue
        heads = [re.sub(r"\s+(?:[IVXLC]+|\d+)\.?$", "", " ".join(doc.text[b.start:b.end].split()))
                 for b in doc.blocks if b.kind == "heading"]
        out.append((str(path.relative_to(folder)), heads))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rfc", type=Path, help="a folder of RFC .txt files")
    ap.add_argument("--prose", type=Path, help="a folder whose .txt files are prose (no headings expected)")
    ap.add_argument("--files", action="store_true", help="print what each RFC missed and added")
    args = ap.parse_args(argv)
    if not args.rfc and not args.prose:
        ap.error("give --rfc DIR, --prose DIR or both")
    if args.rfc:
        rows = [score_rfc(p) for p in sorted(args.rfc.glob("*.txt"))]
        print("| RFC | ToC entries | headings after the ToC (below its depth) | recall | precision |")
        print("|---|--:|--:|--:|--:|")
        for r in rows:
            rec = r["recall_hit"] / r["toc"] if r["toc"] else 0.0
            prec = r["precision_hit"] / r["headings"] if r["headings"] else 0.0
            print(f"| {r['file']} | {r['toc']} | {r['headings']} ({r['below_toc']}) | {rec:.3f} | {prec:.3f} |")
        if args.files:
            for r in rows:
                print(f"{r['file']}: missed {' '.join(r['missed'])}; not in the table: {' | '.join(r['extra'])}")
    if args.prose:
        rows = prose_headings(args.prose)
        invented = [(name, heads) for name, heads in rows if heads]
        print(f"\nprose .txt files: {len(rows)}, with headings: {len(invented)}, headings: {sum(len(h) for _, h in rows)}")
        for name, heads in invented:
            print(f"  {name}: {len(heads)}: " + ", ".join(f"{h} x{c}" if c > 1 else h for h, c in Counter(heads).most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
