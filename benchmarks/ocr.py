"""OCR benchmark: words recovered and pages/s for scanned PDF pages without a text layer.

Pages are generated: seeded random English words rendered with Pillow's bundled font at about 12 pt
on a 300 dpi A4 canvas, optionally with noise and a slight rotation as a scanner adds, each page an
image-only PDF page (fpdf2). chunkwise reads them through ``extract.pdf`` (PDFium rendering and
Tesseract in the OCR child process); the reference is pytesseract on the same images directly,
without PDF rendering or the child process.

    .venv/bin/python benchmarks/ocr.py [--pages 10] [--noise] [--json FILE]

Needs the ``ocr`` extra, fpdf2 and Debian's tesseract-ocr tesseract-ocr-eng.
"""
from __future__ import annotations

import argparse
import io
import json
import random
import re
import sys
import time
from collections import Counter

SEED = 20261201
WORDS = ("harbour ledger keeper lantern anchor voyage compass beacon tide shipwright cargo river "
         "market window garden winter summer letter number family morning evening village station "
         "bridge church island forest mountain valley engine signal captain sailor weather rain "
         "storm north south east west second minute hour paper office report record account "
         "history council school doctor bottle basket candle silver copper iron stone timber "
         "rope canvas barrel cellar kitchen table chair mirror clock pocket").split()
WORDS_PER_LINE, LINES = 9, 28


def make_pages(n: int, noise: bool):
    from PIL import Image, ImageDraw, ImageFilter, ImageFont

    rng = random.Random(SEED)
    font = ImageFont.load_default(size=50)
    pages, truth = [], []
    for _ in range(n):
        image = Image.new("L", (2480, 3508), 255)
        draw = ImageDraw.Draw(image)
        words = []
        for i in range(LINES):
            line = [rng.choice(WORDS) for _ in range(WORDS_PER_LINE)]
            words += line
            draw.text((200, 250 + i * 105), " ".join(line), fill=0, font=font)
        if noise:
            image = image.rotate(0.6, fillcolor=255).filter(ImageFilter.GaussianBlur(1.2))
            pixels = image.load()
            for _ in range(40_000):
                pixels[rng.randrange(2480), rng.randrange(3508)] = rng.choice((0, 255))
        pages.append(image)
        truth.append(words)
    return pages, truth


def to_pdf(pages) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    for image in pages:
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        pdf.add_page()
        pdf.image(buf, x=0, y=0, w=210, h=297)
    return bytes(pdf.output())


def recovered(truth: list[str], text: str) -> tuple[int, int]:
    """Ground-truth words found in the text, counted as multisets (a word read twice counts once)."""
    got = Counter(re.findall(r"[a-z]+", text.lower()))
    want = Counter(truth)
    return sum(min(c, got[w]) for w, c in want.items()), sum(want.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--noise", action="store_true", help="blur, rotate and speckle the pages")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    import pytesseract
    from chunkwise.extract import ocr, pdf

    if why := ocr.missing():
        print(f"error: OCR is not available: {why}", file=sys.stderr)
        return 2
    pages, truth = make_pages(args.pages, args.noise)
    data = to_pdf(pages)
    rows = []

    start = time.perf_counter()
    raw = [pytesseract.image_to_string(p, lang="eng") for p in pages]
    seconds = time.perf_counter() - start
    found, total = map(sum, zip(*(recovered(t, r) for t, r in zip(truth, raw))))
    rows.append({"name": "pytesseract on the images (reference)", "seconds": seconds, "found": found,
                 "total": total, "confidence": None})

    start = time.perf_counter()
    doc = pdf.extract(data, "scan.pdf")
    seconds = time.perf_counter() - start
    texts = [doc.text[p.start : p.end] for p in doc.pages]
    found, total = map(sum, zip(*(recovered(t, r) for t, r in zip(truth, texts))))
    confs = [p.ocr_confidence for p in doc.pages if p.ocr_confidence is not None]
    rows.append({"name": "chunkwise extract.pdf (PDFium + Tesseract in the OCR process)", "seconds": seconds,
                 "found": found, "total": total,
                 "confidence": round(sum(confs) / len(confs), 1) if confs else None,
                 "review_pages": sum(bool(p.review_reason) for p in doc.pages)})

    kind = "noisy (blur 1.2 px, 0.6° rotation, speckle)" if args.noise else "clean"
    print(f"{args.pages} {kind} pages, {LINES * WORDS_PER_LINE} words each, 300 dpi, seed {SEED}\n")
    print("| reader | words recovered | pages/s | mean confidence | pages to review |")
    print("|---|--:|--:|--:|--:|")
    for r in rows:
        conf = "" if r["confidence"] is None else f"{r['confidence']:.1f}"
        print(f"| {r['name']} | {r['found'] / r['total']:.1%} ({r['found']}/{r['total']}) | "
              f"{args.pages / r['seconds']:.2f} | {conf} | {r.get('review_pages', '')} |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
