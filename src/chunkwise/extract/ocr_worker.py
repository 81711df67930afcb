"""OCR child process: render PDF pages with PDFium and read them with Tesseract.

Run as ``python -m chunkwise.extract.ocr_worker`` by ``chunkwise.extract.ocr``; never imported by
the library. A hostile PDF can crash a native renderer or make it allocate without bound, so this
runs in its own process under an address-space limit and a deadline: a bad file costs only itself.
Input on stdin: a JSON header line ``{"pages": [...], "dpi": N, "max_pixels": N, "lang": "eng",
"page_timeout": S, "memory_limit": BYTES}`` then the PDF bytes. Output on stdout: one JSON object per page.
"""
from __future__ import annotations

import json
import sys


def _render(pdfium, document, index: int, dpi: int, max_pixels: int):
    page = document[index]
    try:
        width, height = page.get_size()  # points
        scale = dpi / 72
        pixels = width * scale * height * scale
        if pixels > max_pixels:  # a poster-sized page: fewer pixels, never a memory bomb
            scale *= (max_pixels / pixels) ** 0.5
        bitmap = page.render(scale=scale, grayscale=True)
        try:
            return bitmap.to_pil(), height, scale
        finally:
            bitmap.close()
    finally:
        page.close()


def _read(pytesseract, image, lang: str, timeout: float) -> list[dict]:
    data = pytesseract.image_to_data(image, lang=lang, output_type=pytesseract.Output.DICT, timeout=timeout)
    words = []
    for i, text in enumerate(data["text"]):
        text = (text or "").strip()
        if not text:
            continue
        words.append({"text": text, "conf": float(data["conf"][i]), "block": data["block_num"][i],
                      "par": data["par_num"][i], "line": data["line_num"][i], "left": data["left"][i],
                      "top": data["top"][i], "height": data["height"][i],
                      "width": data["width"][i]})
    return words


def main() -> int:
    header = json.loads(sys.stdin.buffer.readline())
    data = sys.stdin.buffer.read()
    import resource  # the limit binds this process and the tesseract it starts

    limit = int(header["memory_limit"])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import pypdfium2 as pdfium
    import pytesseract

    document = pdfium.PdfDocument(data)
    try:
        for index in header["pages"]:
            try:
                image, height, scale = _render(pdfium, document, index, header["dpi"], header["max_pixels"])
                words = _read(pytesseract, image, header["lang"], header["page_timeout"])
                result = {"page": index, "words": words, "height": height, "scale": scale}
            except RuntimeError as exc:  # pytesseract's timeout, or tesseract failing on this page
                result = {"page": index, "error": str(exc).splitlines()[0][:200] if str(exc) else "failed"}
            except (pdfium.PdfiumError, OSError, ValueError) as exc:
                result = {"page": index, "error": f"{type(exc).__name__}: {exc}"[:200]}
            sys.stdout.write(json.dumps(result) + "\n")
            sys.stdout.flush()
    finally:
        document.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
