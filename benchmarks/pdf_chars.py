"""How long each PDF reader takes to give every character of a file with its position, in CPU seconds
of this process (issue 27 item 6: could a pdfium-based reader make ``chunkwise audit`` 5x faster?).

    PYTHONPATH=src python benchmarks/pdf_chars.py FILE.pdf ... [--plumber-every N]

Readers, each over every page of each file, one after another in this process:
- ``chunkwise pypdf``: chunkwise's own text layer (``pdf._scan``: pypdf's ``extract_text`` with a
  visitor giving every piece its font, size and position, lines built, rules counted): what the
  audit pays on every page today.
- ``pypdf extract_text``: pypdf's plain text, no positions (a floor for pypdf).
- ``pdfplumber chars``: ``page.chars`` (pdfminer's layout, every character with its box, font and
  size): what the audit pays on each table-candidate page. ``--plumber-every N`` reads every Nth page
  only and scales its time to the whole file (it is the slow one).
- ``pdfium chars``: pypdfium2 (PDFium, C++): each page's text page, and for every character its code
  point, box and font size through the raw C calls (no Python object a character beyond the tuple).
- ``pdfium chars + paths``: the same, plus the page's path objects counted (the drawn rules the
  table-candidate test needs).
The character counts differ by design: pdfium adds generated spaces and line breaks, pypdf's counts are
of its text output.
"""
from __future__ import annotations

import argparse
import ctypes
import io
import sys
import time
from pathlib import Path


def chunkwise_pypdf(data: bytes, name: str):
    import pypdf

    from chunkwise.extract import pdf

    reader = pdf._open(pypdf, data, name)
    scan = pdf._scan(pypdf, reader, name, 0, None)
    return scan.count, sum(len(line.text) for page in scan.pages for line in page)


def pypdf_text(data: bytes, name: str):
    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(data))
    n = chars = 0
    for page in reader.pages:
        n += 1
        try:
            chars += len(page.extract_text())
        except Exception:  # noqa: BLE001 - a broken page counts as empty, as chunkwise leaves it
            pass
    return n, chars


def plumber_chars(data: bytes, name: str, every: int = 1):
    import pdfplumber

    with pdfplumber.open(io.BytesIO(data)) as doc:
        total = len(doc.pages)
        wanted = list(range(1, total + 1, every))
    with pdfplumber.open(io.BytesIO(data), pages=wanted) as doc:
        chars = 0
        for page in doc.pages:
            try:
                chars += len(page.chars)
            except Exception:  # noqa: BLE001
                pass
    return total, chars, len(wanted)


def pdfium_chars(data: bytes, name: str, paths: bool = False):
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    doc = pdfium.PdfDocument(data)
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    refs = tuple(ctypes.byref(v) for v in (left, right, bottom, top))
    chars = rules = 0
    for page in doc:
        text = page.get_textpage()
        tp = text.raw
        n = raw.FPDFText_CountChars(tp)
        out = []
        for i in range(n):
            raw.FPDFText_GetCharBox(tp, i, *refs)
            out.append((raw.FPDFText_GetUnicode(tp, i), left.value, top.value, right.value, bottom.value,
                        raw.FPDFText_GetFontSize(tp, i)))
        chars += n
        if paths:
            rules += sum(1 for _ in page.get_objects(filter=(raw.FPDF_PAGEOBJ_PATH,), max_depth=2))
        text.close()
        page.close()
    pages = len(doc)
    doc.close()
    return pages, chars


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--plumber-every", type=int, default=1, help="pdfplumber reads every Nth page (time scaled)")
    args = ap.parse_args(argv)
    import pdfplumber  # noqa: F401 - imports paid before the clocks start
    import pypdf  # noqa: F401
    import pypdfium2  # noqa: F401

    readers = (
        ("chunkwise pypdf", chunkwise_pypdf),
        ("pypdf extract_text", pypdf_text),
        ("pdfplumber chars", lambda d, n: plumber_chars(d, n, args.plumber_every)),
        ("pdfium chars", pdfium_chars),
        ("pdfium chars + paths", lambda d, n: pdfium_chars(d, n, paths=True)),
    )
    print("| file | reader | pages | characters | CPU s | CPU ms a page | x pdfium chars |")
    print("|---|---|--:|--:|--:|--:|--:|")
    for path in args.files:
        data = path.read_bytes()
        got = {}
        for label, fn in readers:
            c0 = time.process_time()
            res = fn(data, path.name)
            cpu = time.process_time() - c0
            pages, chars = res[0], res[1]
            if len(res) == 3 and res[2] != pages:  # sampled: scaled to every page
                cpu, chars = cpu * pages / res[2], round(chars * pages / res[2])
                label += f" (1 page in {args.plumber_every}, scaled)"
            got[label] = (pages, chars, cpu)
        base = got["pdfium chars"][2]
        for label, (pages, chars, cpu) in got.items():
            print(f"| {path.name} | {label} | {pages} | {chars} | {cpu:.2f} | {1000 * cpu / max(pages, 1):.1f} | "
                  f"{cpu / base:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
