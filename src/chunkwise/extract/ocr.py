"""OCR for PDF pages without a usable text layer (the ``ocr`` extra: pytesseract, pypdfium2, and
Debian's ``tesseract-ocr`` with its language data).

Only pages whose text layer has almost no letters are read, so a page with real text is never
replaced by a guess. Rendering (PDFium) and recognition (Tesseract) run in a child process
(``ocr_worker``) under a memory limit and a deadline, with a cap on pages and on pixels per page:
a scanned bomb or a renderer crash costs that file its OCR, never the run. Each page gets its mean
word confidence; a page below ``min_confidence`` is marked for review so its chunks are not served
as if the text were certain.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from chunkwise.extract.pdf_lines import Line

MIN_CONFIDENCE = 60.0  # mean word confidence (0-100) below which a page's chunks go to review
MIN_TEXT_CHARS = 20  # a text layer with fewer letters and digits than this is not usable
MAX_PAGES = 100  # pages OCR'd per document; the rest stay needs_ocr with a warning
DPI = 300
MAX_PIXELS = 25_000_000  # per rendered page (A4 at 300 dpi is 8.7 million)
PAGE_TIMEOUT = 60.0  # seconds Tesseract may spend on one page
MEMORY_LIMIT = 2 << 30  # address space of the OCR process, bytes
LOW_CONFIDENCE = "low_ocr_confidence"


@dataclass(frozen=True)
class OcrPage:
    lines: list[Line]
    confidence: float  # mean word confidence weighted by word length, 0-100
    words: int


def usable(lines: list[Line]) -> bool:
    """A text layer worth keeping: enough letters and digits to be more than a stray page number."""
    return sum(ch.isalnum() for ln in lines for ch in ln.text) >= MIN_TEXT_CHARS


def missing() -> str:
    """Why OCR cannot run here ("" when it can), as an install hint."""
    for module in ("pytesseract", "pypdfium2"):
        try:
            __import__(module)
        except ImportError:
            return f"pip install 'chunkwise[ocr]' ({module} is missing)"
    if shutil.which("tesseract") is None:
        return "apt-get install tesseract-ocr tesseract-ocr-eng (the tesseract program is missing)"
    return ""


# A clock limit is the last guard against a page that makes Tesseract crawl; its output then depends on
# the machine's load (issue 27 item 8), so the warning says so instead of passing in silence.
CLOCK_HINT = (" — a wall-clock limit (the last guard): on a faster or quieter machine this may be read, so "
              "the output of this file can differ between runs; raise ocr_timeout or OCR this file alone")


def ocr_pages(data: bytes, indices: list[int], warnings: list[str], lang: str = "eng",
              timeout: float = PAGE_TIMEOUT) -> dict[int, OcrPage]:
    """0-based page index → OCR result, for the pages that could be read."""
    if not indices:
        return {}
    if len(indices) > MAX_PAGES:
        warnings.append(f"{len(indices)} pages need OCR; only the first {MAX_PAGES} were read")
        indices = indices[:MAX_PAGES]
    header = {"pages": indices, "dpi": DPI, "max_pixels": MAX_PIXELS, "lang": lang, "page_timeout": timeout,
              "memory_limit": MEMORY_LIMIT}
    lines, error = _run(json.dumps(header).encode() + b"\n" + data, timeout * len(indices) + 30)
    out: dict[int, OcrPage] = {}
    for raw in lines:
        try:
            result = json.loads(raw)
        except ValueError:
            continue
        index = result.get("page")
        if not isinstance(index, int) or index not in indices:
            continue
        if "error" in result:
            clock = CLOCK_HINT if "timeout" in str(result["error"]).lower() else ""
            warnings.append(f"page {index + 1}: OCR failed ({result['error']}){clock}")
            continue
        page = _page(result)
        if page.words:
            out[index] = page
    if error:
        clock = CLOCK_HINT if error.startswith("over ") else ""
        warnings.append(f"OCR stopped: {error}; {len(indices) - len(out)} page(s) left unread{clock}")
    return out


def _run(payload: bytes, deadline: float) -> tuple[list[bytes], str]:
    env = dict(os.environ, OMP_THREAD_LIMIT="1")  # one Tesseract thread: pages in parallel are the caller's choice
    root = str(Path(__file__).resolve().parents[2])  # the folder holding the chunkwise package
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    proc = subprocess.Popen([sys.executable, "-m", "chunkwise.extract.ocr_worker"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        out, err = proc.communicate(payload, timeout=deadline)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        return out.splitlines(), f"over {deadline:.0f} s"
    if proc.returncode:
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        return out.splitlines(), f"the OCR process failed ({last[0][:200]})"
    return out.splitlines(), ""


def _page(result: dict) -> OcrPage:
    """Tesseract's words → lines in its reading order, a blank line between paragraphs; positions
    in PDF points so paragraph gaps work as for a text layer."""
    height, scale = float(result["height"]), float(result["scale"]) or 1.0
    lines: list[Line] = []
    key = None
    words: list[dict] = []
    weight = total = 0.0

    def close() -> None:
        if words:
            text = " ".join(w["text"] for w in words)
            first = words[0]
            y = height - (first["top"] + first["height"]) / scale
            box = (min(w["left"] for w in words) / scale, height - max(w["top"] + w["height"] for w in words) / scale,
                   max(w["left"] + w.get("width", 0) for w in words) / scale, height - min(w["top"] for w in words) / scale)
            lines.append(Line(text, 0.0, y, first["left"] / scale, box=box))

    for w in result["words"]:
        here = (w["block"], w["par"], w["line"])
        if here != key:
            close()
            if key is not None and here[:2] != key[:2]:
                lines.append(Line("", 0.0, None, None))
            key, words = here, []
        words.append(w)
        if w["conf"] >= 0:
            weight += len(w["text"])
            total += w["conf"] * len(w["text"])
    close()
    return OcrPage(lines, round(total / weight, 1) if weight else 0.0, len(result["words"]))
