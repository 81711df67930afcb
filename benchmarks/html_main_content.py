"""HTML main-content quality on real saved pages: article text kept and boilerplate kept.

Data: trafilatura's own evaluation corpus (its repository's ``tests/eval`` and ``tests/cache`` HTML
pages and ``tests/evaldata.json``: per page, strings that belong to the article ("with") and
strings of page boilerplate ("without"), ~990 pages in many languages). Setup, once:

    git clone https://github.com/adbar/trafilatura && export CW_HTML_EVAL=$PWD/trafilatura/tests

(on the project machines a copy sits in ../shared/data/trafilatura-eval/tests, the default).
Scoring is trafilatura's own: whitespace-normalised substring matching of each expected string in
the extracted text; article kept = found "with" / all "with", boilerplate kept = found "without" /
all "without". Contenders: chunkwise today (tag rules only, ``main_content=False``), trafilatura
alone with its benchmark settings, and chunkwise with trafilatura as the judge (the default).

    .venv/bin/python benchmarks/html_main_content.py [--data DIR] [--limit N] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
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

    @property
    def article_kept(self) -> float:
        return self.with_found / self.with_total if self.with_total else 0.0

    @property
    def boilerplate_kept(self) -> float:
        return self.without_found / self.without_total if self.without_total else 0.0


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


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

    return {
        "chunkwise tag rules (before: main_content=False)":
            lambda b: html.extract(b, "p.html", main_content=False).text,
        "trafilatura alone (extract, benchmark settings)":
            lambda b: trafilatura.extract(b, include_comments=False, include_tables=True,
                                          include_formatting=False),
        "chunkwise + trafilatura judge (default)": lambda b: html.extract(b, "p.html").text,
    }


def score(name: str, run, pages) -> Score:
    s = Score(name)
    start = time.perf_counter()
    for item, data in pages:
        try:
            text = norm(run(data) or "")
        except Exception:  # noqa: BLE001 - a crash costs that page's recall, as in trafilatura's scoring
            s.errors += 1
            text = ""
        s.pages += 1
        s.with_total += len(item["with"])
        s.without_total += len(item["without"])
        s.with_found += sum(norm(w) in text for w in item["with"])
        s.without_found += sum(norm(w) in text for w in item["without"])
    s.seconds = time.perf_counter() - start
    return s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("CW_HTML_EVAL", DEFAULT)),
                        help="trafilatura's tests/ folder (evaldata.json, eval/, cache/)")
    parser.add_argument("--limit", type=int, help="first N pages only (sorted by URL)")
    parser.add_argument("--json", type=Path, help="also write the scores as JSON here")
    args = parser.parse_args(argv)
    if not (args.data / "evaldata.json").is_file():
        print(f"error: no evaldata.json in {args.data}; see the setup step in this file's docstring",
              file=sys.stderr)
        return 2
    pages = load(args.data, args.limit)
    results = []
    for name, run in contenders().items():
        print(f"... {name}", file=sys.stderr, flush=True)
        results.append(score(name, run, pages))
    print(f"{len(pages)} pages, {results[0].with_total} article strings, "
          f"{results[0].without_total} boilerplate strings\n")
    print("| extractor | article text kept | boilerplate kept | errors | s |")
    print("|---|--:|--:|--:|--:|")
    for r in results:
        print(f"| {r.name} | {r.article_kept:.1%} | {r.boilerplate_kept:.1%} | {r.errors} | {r.seconds:.1f} |")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) | {"article_kept": r.article_kept,
                                                      "boilerplate_kept": r.boilerplate_kept}
                                         for r in results], indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
