"""HTML main-content quality on real saved pages: article text kept and boilerplate kept.

Data: trafilatura's own evaluation corpus (its repository's ``tests/eval`` and ``tests/cache`` HTML
pages and ``tests/evaldata.json``: per page, strings that belong to the article ("with") and
strings of page boilerplate ("without"), ~990 pages in many languages). Setup, once:

    git clone https://github.com/adbar/trafilatura && export CW_HTML_EVAL=$PWD/trafilatura/tests

(measured on commit e90b0ef5 of that repository; ``git archive HEAD tests/eval tests/cache
tests/evaldata.json`` is all it needs; default place ../shared/data/trafilatura-eval/tests).
Scoring is trafilatura's own: whitespace-normalised substring matching of each expected string in
the extracted text; article kept = found "with" / all "with", boilerplate kept = found "without" /
all "without". Contenders: chunkwise today (tag rules only, ``main_content=False``), trafilatura
alone with its benchmark settings, and chunkwise with trafilatura as the judge (the default; scored on
the text chunking reads: the page furniture that extraction reports in place, ``role: furniture``
blocks, is removed before chunking and left out here too).
Three scorings, each applied alike to the expected strings and to every contender's output:
trafilatura's (whitespace-normalised); "NFC + soft hyphens" (the sixth session's "as chunked": both
sides NFC-composed and without U+00AD); and "as chunked": both sides passed through
``chunkwise.normalise.normalise``, the repairs every chunk's text gets (zero-width and bidi characters
dropped, soft hyphens dropped, NFC, ligatures folded, words hyphenated across a line break joined,
whitespace collapsed). A page written in NFD, or with ``&shy;`` inside words, holds strings that
trafilatura's scoring misses; the expected strings hold no HTML entities (checked: none), so entity
decoding plays no part. Every figure is also given per half of the pages (A/B by the SHA-256 of the
file name): the selection's thresholds were tuned on half A only, so half B is the held-out evidence.
For the default contender it also counts, per half, the article strings it missed that are in no
block it read from the page (furniture included): text it never reads on purpose (hidden elements,
scripts and JSON-LD, ``<template>``) or outside the page's main region when the judge found no
article. That count bounds what selection rules can win back.

    .venv/bin/python benchmarks/html_main_content.py [--data DIR] [--limit N] [--only TEXT] [--json FILE]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time
import unicodedata
from dataclasses import asdict, dataclass
from pathlib import Path

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "trafilatura-eval" / "tests"


@dataclass
class Score:
    name: str
    pages: int = 0
    with_found: int = 0
    with_total: int = 0
    without_found: int = 0
    without_total: int = 0
    errors: int = 0
    seconds: float = 0.0
    unread: int = -1  # article strings missed that are in no block read from the page (-1: not counted)

    @property
    def article_kept(self) -> float:
        return self.with_found / self.with_total if self.with_total else 0.0

    @property
    def boilerplate_kept(self) -> float:
        return self.without_found / self.without_total if self.without_total else 0.0


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def norm_nfc(text: str) -> str:
    return norm(unicodedata.normalize("NFC", text.replace("\xad", "")))


def norm_chunked(text: str) -> str:
    """The text as chunkwise stores and embeds it: its own repairs, not a re-implementation of them."""
    from chunkwise.normalise import normalise

    return norm(normalise(text).text)


SCORINGS = {"whitespace": norm, "NFC + soft hyphens": norm_nfc, "as chunked": norm_chunked}


def half(name: str) -> str:
    """The deterministic split: "A" (tuning) or "B" (held out)."""
    return "AB"[int(hashlib.sha256(name.encode()).hexdigest(), 16) % 2]


def load(data: Path, limit: int | None) -> list[tuple[dict, bytes]]:
    index = json.loads((data / "evaldata.json").read_text(encoding="utf-8"))
    pages = []
    for url in sorted(index):
        item = index[url]
        for sub in ("cache", "eval"):
            path = data / sub / item["file"]
            if path.is_file():
                pages.append((item, path.read_bytes()))
                break
    return pages[:limit] if limit else pages


def contenders():
    import trafilatura
    from chunkwise.extract import html
    from chunkwise.normalise import without_furniture

    return {
        "chunkwise tag rules (before: main_content=False)":
            lambda b: html.extract(b, "p.html", main_content=False).text,
        "trafilatura alone (extract, benchmark settings)":
            lambda b: trafilatura.extract(b, include_comments=False, include_tables=True,
                                          include_formatting=False),
        # what chunking reads: the extracted text without the page furniture it reports (and, for the
        # count of strings it never read, the whole text with that furniture)
        "chunkwise + trafilatura judge (default)": lambda b: _Read(html.extract(b, "p.html"), without_furniture),
    }


@dataclass(frozen=True)
class _Read:
    """An extracted document: its chunked text (``str``) and every block read from the page (``seen``)."""

    doc: object
    chunked: object

    def __str__(self) -> str:
        return self.chunked(self.doc)

    @property
    def seen(self) -> str:
        return self.doc.text


def score(name: str, run, pages) -> dict[str, Score]:
    """Scores over all pages ("all") and per half ("A", "B"), under each scoring ("all/as chunked")."""
    out = {f"{k}/{sc}": Score(name) for k in ("all", "A", "B") for sc in SCORINGS}
    start = time.perf_counter()
    for item, data in pages:
        try:
            got = run(data) or ""
            raw, seen = str(got), getattr(got, "seen", None)
        except Exception:  # noqa: BLE001 - a crash costs that page's recall, as in trafilatura's scoring
            err = 1
            raw, seen = "", None
        else:
            err = 0
        for sc, fn in SCORINGS.items():
            text = fn(raw)
            seen_text = fn(seen) if seen is not None else None
            for s in (out[f"all/{sc}"], out[f"{half(item['file'])}/{sc}"]):
                s.errors += err
                s.pages += 1
                s.with_total += len(item["with"])
                s.without_total += len(item["without"])
                missed = [fn(w) for w in item["with"] if fn(w) not in text]
                s.with_found += len(item["with"]) - len(missed)
                s.without_found += sum(fn(w) in text for w in item["without"])
                if seen_text is not None:
                    s.unread = max(s.unread, 0) + sum(w not in seen_text for w in missed)
    for s in out.values():
        s.seconds = time.perf_counter() - start
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("CW_HTML_EVAL", DEFAULT)),
                        help="trafilatura's tests/ folder (evaldata.json, eval/, cache/)")
    parser.add_argument("--limit", type=int, help="first N pages only (sorted by URL)")
    parser.add_argument("--only", help="run only the contenders whose name contains this")
    parser.add_argument("--json", type=Path, help="also write the scores as JSON here")
    args = parser.parse_args(argv)
    if not (args.data / "evaldata.json").is_file():
        print(f"error: no evaldata.json in {args.data}: pass trafilatura's tests/ folder (commit e90b0ef5) "
              "with --data DIR or CW_HTML_EVAL=DIR (setup: this file's docstring)", file=sys.stderr)
        return 2
    pages = load(args.data, args.limit)
    results = []
    for name, run in contenders().items():
        if args.only and args.only not in name:
            continue
        print(f"... {name}", file=sys.stderr, flush=True)
        results.append(score(name, run, pages))
    first = results[0]
    print(f"{len(pages)} pages (A {first['A/whitespace'].pages}, B {first['B/whitespace'].pages}), "
          f"{first['all/whitespace'].with_total} article strings, {first['all/whitespace'].without_total} "
          "boilerplate strings")
    for sc in SCORINGS:
        print(f"\nscoring: {sc}\n")
        print("| extractor | article text kept | boilerplate kept | article A / B | boilerplate A / B | errors | s |")
        print("|---|--:|--:|--:|--:|--:|--:|")
        for r in results:
            a, h_a, h_b = r[f"all/{sc}"], r[f"A/{sc}"], r[f"B/{sc}"]
            print(f"| {a.name} | {a.article_kept:.1%} | {a.boilerplate_kept:.1%} | {h_a.article_kept:.1%} / "
                  f"{h_b.article_kept:.1%} | {h_a.boilerplate_kept:.1%} / {h_b.boilerplate_kept:.1%} | "
                  f"{a.errors} | {a.seconds:.1f} |")
        for r in results:
            h_a, h_b = r[f"A/{sc}"], r[f"B/{sc}"]
            if h_a.unread >= 0:
                print(f"\n{h_a.name}: article strings missed A {h_a.with_total - h_a.with_found}, "
                      f"B {h_b.with_total - h_b.with_found}; of them in no block read from the page "
                      f"(never read: hidden, script, JSON-LD; or outside the main region) A {h_a.unread}, B {h_b.unread}")
    if args.json:
        args.json.write_text(json.dumps([{k: asdict(s) | {"article_kept": s.article_kept,
                                                          "boilerplate_kept": s.boilerplate_kept}
                                          for k, s in r.items()} for r in results], indent=2) + "\n",
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
