"""Extraction measured against Docling's groundtruth (``../shared/data/docling``): headings, reading
order, table cells and word recall, per file and per format (PDF, DOCX, HTML).

What each figure is (the groundtruth is Docling's own frozen output, see its README):
- heading recall / precision: ``#`` lines of the groundtruth Markdown against the heading blocks
  chunkwise extracts, matched on normalised text (case, punctuation, numbering spaces aside);
  "level ±1": matched headings whose depth below the document's top heading is within one level;
- reading order: groundtruth paragraphs (blank-line blocks, tables and images left out) located in
  the extracted text by their first eight normalised words (each after the previous one found when
  it recurs there); the longest increasing run of their positions over the number located (1.0:
  every located paragraph in the same order);
- table cells: text of every non-empty groundtruth table cell (the JSON's ``table_cells``) found as a
  cell of an extracted table (multiset);
- word recall: groundtruth words (Markdown syntax stripped, HTML entities of Docling's Markdown
  unescaped) found in the extracted text (multiset);
- page right (paged sources): groundtruth text items of four words or more (page furniture aside)
  located by their first eight normalised words in the text of an extracted page; the share of those
  found on the page the groundtruth's ``prov`` gives;
- boxes (PDF): groundtruth text and table items (page furniture aside) with a ``prov`` box, turned to
  points from the page's top left; "box overlap": the share of them that some extracted block's box
  (``meta["boxes"]``) on the same page overlaps; "box cover": the share of which one block box holds
  at least half the item's area; "box IoU": the mean over the items of the best intersection over
  union with a block box on the page (1.0: the same boxes; how tight ours are, as blocks and items
  are both paragraphs, headings and tables).

Documents come from ``chunkwise.pipeline.documents.load_document`` — the Document that
``chunkwise extract FILE --json`` prints and every chunk is cut from.

    PYTHONPATH=src python benchmarks/docling_compare.py [--data ../shared/data/docling] [--formats pdf,docx,html]
                                                        [--files] [--json] [--html-whole-page | --html-all-visible]
"""
from __future__ import annotations

import argparse
import bisect
import html
import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "docling"
FORMATS = ("pdf", "docx", "html")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MD_NOISE = re.compile(r"<!--.*?-->|!\[[^\]]*\]\([^)]*\)|\]\([^)]*\)|[`*_>#|]|^\s*[-:| ]{3,}\s*$", re.M | re.S)


def words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def norm(text: str) -> str:
    return " ".join(words(text))


def pairs(data: Path, fmt: str) -> list[tuple[Path, Path]]:
    """(source, groundtruth .md) for every source with a groundtruth."""
    src, gt = data / fmt / "sources", data / fmt / "groundtruth"
    out = []
    for path in sorted(src.glob(f"*.{fmt}")):
        md = gt / (f"{path.stem}.md" if fmt == "pdf" else f"{path.name}.md")
        if md.is_file():
            out.append((path, md))
    return out


def gt_headings(md: str) -> list[tuple[int, str]]:
    """(level, normalised text) of each ``#`` line; a link in a heading counts as its text only
    (``## [Home](/home.html)`` is the heading "Home", not "home home html")."""
    out = []
    for line in md.splitlines():
        m = re.match(r"^(#{1,6})\s+(.*\S)", line)
        text = norm(_MD_LINK.sub(r"\1", m.group(2))) if m else ""
        if text:
            out.append((len(m.group(1)), text))
    return out


def gt_paragraphs(md: str) -> list[str]:
    out = []
    for block in re.split(r"\n\s*\n", md):
        b = block.strip()
        if not b or b.startswith(("|", "<!--", "#", "![")):
            continue
        w = words(_MD_NOISE.sub(" ", b))
        if len(w) >= 8:
            out.append(" ".join(w[:8]))
    return out


def _gt_json(json_path: Path) -> dict:
    """The groundtruth's item JSON, or {} when it is absent (a few over 500 KB are) or unreadable."""
    try:
        return json.loads(json_path.read_text(encoding="utf-8")) if json_path.is_file() else {}
    except ValueError:
        return {}


def gt_cells(json_path: Path) -> list[str]:
    data = _gt_json(json_path)
    return [norm(c.get("text", "")) for t in data.get("tables", []) for c in t.get("data", {}).get("table_cells", [])
            if norm(c.get("text", ""))]


def gt_page_items(json_path: Path) -> list[tuple[int, str]]:
    """(page, first eight normalised words) of every groundtruth text item of four words or more,
    page furniture aside: what "page right for every block" is checked on."""
    out = []
    for item in _gt_json(json_path).get("texts", []):
        w = words(item.get("text", ""))
        if item.get("label") in ("page_header", "page_footer") or len(w) < 4 or not item.get("prov"):
            continue
        out.append((item["prov"][0]["page_no"], " ".join(w[:8])))
    return out


def page_score(items: list[tuple[int, str]], doc) -> dict:
    """Groundtruth items located in the text of one of the extracted pages, and of those, found on
    their own page (a passage that recurs counts right when one of its pages is the groundtruth's)."""
    pages = {p.number: norm(doc.text[p.start:p.end]) for p in getattr(doc, "pages", ())}
    located = right = 0
    for page, key in items if pages else ():
        on = [n for n, text in pages.items() if key in text]
        located += bool(on)
        right += page in on
    return {"page_gt": len(items) if pages else 0, "page_items": located, "page_right": right}


def extracted_cells(doc) -> list[str]:
    cells = []
    for b in doc.blocks:
        if b.kind != "table":
            continue
        for line in doc.text[b.start:b.end].splitlines():
            if re.fullmatch(r"\s*\|?[\s:|-]*\|?\s*", line):
                continue  # the separator row
            cells += [norm(c) for c in re.split(r"(?<!\\)\|", line.strip().strip("|")) if norm(c)]
    return cells


def multiset_recall(wanted: list[str], found: list[str]) -> tuple[int, int]:
    have = Counter(found)
    hit = 0
    for w in wanted:
        if have[w] > 0:
            have[w] -= 1
            hit += 1
    return hit, len(wanted)


def heading_scores(gt: list[tuple[int, str]], doc) -> dict:
    ours = [(b.level or 1, norm(doc.text[b.start:b.end])) for b in doc.blocks if b.kind == "heading"]
    ours = [(lv, t) for lv, t in ours if t]
    gmin = min((lv for lv, _ in gt), default=1)
    omin = min((lv for lv, _ in ours), default=1)
    pool = list(ours)
    matched = level_ok = 0
    for lv, text in gt:
        j = next((i for i, (_, t) in enumerate(pool) if t == text or _close(t, text)), None)
        if j is None:
            continue
        matched += 1
        level_ok += abs((pool[j][0] - omin) - (lv - gmin)) <= 1
        pool.pop(j)
    return {"gt_headings": len(gt), "headings": len(ours), "matched": matched, "level_ok": level_ok,
            "precision_matched": len(ours) - len(pool)}


def _close(a: str, b: str) -> bool:
    """Same heading apart from a numbering or a trailing word (``5 1 hyper`` vs ``hyper``)."""
    if not a or not b:
        return False
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 12 and (long_.endswith(short) or long_.startswith(short))


def order_score(paras: list[str], doc) -> dict:
    """Each paragraph is looked for after the previous one found, then anywhere: a paragraph whose
    first eight words recur (boilerplate, "Lorem ipsum ...") is placed at its next occurrence, not
    always at the first one, which counted a document in perfect order as out of order."""
    text = norm(doc.text)
    found, cursor = [], 0
    for p in paras:
        at = text.find(p, cursor)
        at = text.find(p) if at < 0 else at
        if at >= 0:
            found.append(at)
            cursor = max(cursor, at + 1)
    return {"paragraphs": len(paras), "located": len(found), "in_order": _lis(found)}


def _lis(xs: list[int]) -> int:
    tails: list[int] = []
    for x in xs:
        i = bisect.bisect_left(tails, x)
        tails[i:i + 1] = [x]
    return len(tails)


def _whole_page(path: Path):
    """An HTML file without the main-content step (``html.extract(..., main_content=False)``): the
    page's own main region, navigation, asides and footers dropped by tag."""
    from chunkwise.extract import html as html_extract

    return html_extract.extract(path.read_bytes(), str(path), main_content=False)


def _all_visible(path: Path):
    """Every visible block of an HTML file, page chrome (menus, sidebars, footers) included: what
    Docling converts. Not a product mode: it shows how much of the word-recall gap is page chrome
    (scripts, forms and hidden elements are still left out)."""
    from types import SimpleNamespace

    from chunkwise.extract import html as h
    from chunkwise.extract.html_walk import candidates, emit

    page, _ = h._decode(path.read_bytes())
    tree = h._import_parser()(h._without_noscript(page))
    h._sanitise(tree)
    out = emit(candidates(tree.body or tree.root, chrome_too=False))
    return SimpleNamespace(text=out.value(), blocks=tuple(out.blocks))


def gt_boxes(json_path: Path) -> list[tuple[int, float, float, float, float]]:
    """(page, x0, top, x1, bottom) of every groundtruth text and table item, page furniture aside, in
    points from the page's top left (Docling's boxes are bottom-left unless they say otherwise)."""
    data = _gt_json(json_path)
    heights = {int(k): v["size"]["height"] for k, v in data.get("pages", {}).items()}
    out = []
    for item in data.get("texts", []) + data.get("tables", []):
        if item.get("label") in ("page_header", "page_footer"):
            continue
        for prov in item.get("prov", [])[:1]:
            b, page = prov["bbox"], prov["page_no"]
            if b.get("coord_origin", "BOTTOMLEFT") == "BOTTOMLEFT":
                h = heights.get(page, 0.0)
                top, bottom = h - max(b["t"], b["b"]), h - min(b["t"], b["b"])
            else:
                top, bottom = min(b["t"], b["b"]), max(b["t"], b["b"])
            out.append((page, min(b["l"], b["r"]), top, max(b["l"], b["r"]), bottom))
    return out


def box_score(items: list[tuple], doc) -> dict:
    """Groundtruth boxes overlapped by an extracted block's box on their page, and covered (half their
    area or more inside one block box)."""
    ours: dict[int, list[tuple]] = {}
    for b in doc.blocks:
        for box in b.meta.get("boxes", ()) if b.meta else ():
            ours.setdefault(box[0], []).append(box[1:])
    overlap = cover = 0
    iou = 0.0
    for page, x0, top, x1, bottom in items if ours else ():
        area = max(x1 - x0, 0.01) * max(bottom - top, 0.01)
        inter = [(max(0.0, min(x1, b[2]) - max(x0, b[0])) * max(0.0, min(bottom, b[3]) - max(top, b[1])),
                  (b[2] - b[0]) * (b[3] - b[1])) for b in ours.get(page, ())]
        overlap += any(i > 0 for i, _ in inter)
        cover += any(i >= 0.5 * area for i, _ in inter)
        iou += max((i / (area + a - i) for i, a in inter if area + a - i > 0), default=0.0)
    return {"box_gt": len(items) if ours else 0, "box_overlap": overlap, "box_cover": cover, "box_iou_sum": iou}


def measure_file(path: Path, md_path: Path, fmt: str, whole_page: bool | str = False) -> dict:
    from chunkwise.pipeline.documents import load_document

    # Docling's Markdown escapes &, < and > as entities: "&lt;m:f&gt;" is the text "<m:f>", not the words "lt", "gt"
    md = html.unescape(md_path.read_text(encoding="utf-8"))
    json_path = md_path.with_suffix(".json")
    row = {"file": path.name, "format": fmt}
    try:
        if whole_page and fmt == "html":
            doc = _all_visible(path) if whole_page == "all" else _whole_page(path)
        else:
            doc = load_document(path)
    except Exception as exc:  # noqa: BLE001 - a file chunkwise refuses scores zero, with its reason
        return {**row, "error": f"{type(exc).__name__}: {exc}"[:200]}
    row.update(heading_scores(gt_headings(md), doc))
    row.update(order_score(gt_paragraphs(md), doc))
    row["cells_hit"], row["cells"] = multiset_recall(gt_cells(json_path), extracted_cells(doc))
    row.update(page_score(gt_page_items(json_path), doc))
    row.update(box_score(gt_boxes(json_path), doc))
    row["words_hit"], row["words"] = multiset_recall(words(_MD_NOISE.sub(" ", md)), words(doc.text))
    return row


def summarise(rows: list[dict]) -> dict:
    ok = [r for r in rows if "error" not in r]

    def ratio(a: str, b: str) -> float | None:
        den = sum(r[b] for r in ok)
        return round(sum(r[a] for r in ok) / den, 4) if den else None

    return {"files": len(rows), "errors": len(rows) - len(ok),
            "heading_recall": ratio("matched", "gt_headings"), "heading_recall_level": ratio("level_ok", "gt_headings"),
            "heading_precision": ratio("precision_matched", "headings"),
            "order_min": min((r["in_order"] / r["located"] for r in ok if r["located"]), default=None),
            "order_mean": round(sum(r["in_order"] / r["located"] for r in ok if r["located"])
                                / max(1, sum(1 for r in ok if r["located"])), 4),
            "located": ratio("located", "paragraphs"),
            "cell_recall": ratio("cells_hit", "cells"), "word_recall": ratio("words_hit", "words"),
            "page_right": ratio("page_right", "page_items"),
            "box_overlap": ratio("box_overlap", "box_gt"), "box_cover": ratio("box_cover", "box_gt"),
            "box_iou": ratio("box_iou_sum", "box_gt"),
            "word_recall_min": min((r["words_hit"] / r["words"] for r in ok if r["words"]), default=None)}


def run(data: Path, formats=FORMATS, whole_page: bool | str = False) -> dict:
    out = {}
    for fmt in formats:
        rows = [measure_file(p, md, fmt, whole_page) for p, md in pairs(data, fmt)]
        out[fmt] = {"summary": summarise(rows), "files": rows}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--files", action="store_true", help="print every file's row too")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--html-whole-page", action="store_true",
                    help="HTML without the main-content step (every visible block, as Docling converts a page)")
    ap.add_argument("--html-all-visible", action="store_true",
                    help="HTML with every visible block, page chrome included (what Docling converts; not a product mode)")
    args = ap.parse_args(argv)
    if not args.data.is_dir():
        print(f"no Docling data at {args.data} (see ../shared/data/docling/README.md)", file=sys.stderr)
        return 2
    result = run(args.data, tuple(args.formats.split(",")), "all" if args.html_all_visible else args.html_whole_page)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    cols = ("files", "errors", "heading_recall", "heading_recall_level", "heading_precision", "order_min",
            "order_mean", "located", "cell_recall", "word_recall", "word_recall_min", "page_right",
            "box_overlap", "box_cover", "box_iou")
    print("| format | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for fmt, res in result.items():
        s = res["summary"]
        print(f"| {fmt} | " + " | ".join("" if s[c] is None else f"{s[c]:.3f}" if isinstance(s[c], float) else str(s[c])
                                        for c in cols) + " |")
    if args.files:
        for fmt, res in result.items():
            for r in res["files"]:
                if "error" in r:
                    print(f"{fmt:5} {r['file']:45} ERROR {r['error']}")
                    continue
                order = f"{r['in_order']}/{r['located']}/{r['paragraphs']}"
                print(f"{fmt:5} {r['file']:45} headings {r['matched']}/{r['gt_headings']} (ours {r['headings']}) "
                      f"order {order} cells {r['cells_hit']}/{r['cells']} words {r['words_hit']}/{r['words']}"
                      + (f" pages {r['page_right']}/{r['page_items']} (of {r['page_gt']})" if r["page_gt"] else "")
                      + (f" boxes {r['box_overlap']}/{r['box_cover']}/{r['box_gt']} IoU {r['box_iou_sum'] / r['box_gt']:.2f}"
                         if r["box_gt"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
