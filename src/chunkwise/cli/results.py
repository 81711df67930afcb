"""``chunkwise search`` for people: each result shows what it points at first (the hit chunk's
heading path and text, the query's words marked by the search analyzer), then the passage's other
text as context around it. Printed from ``SearchResult.to_dict()``, so the text and the JSON show
the same hit, context and marks.

Marks are ANSI bold (``--color``); without colour the text is plain. Everything printed passes
through ``safe`` (untrusted documents never reach the terminal raw); marks are added after escaping.
"""
from __future__ import annotations

import os
import sys
from typing import Sequence, TextIO

from chunkwise.cli.output import safe

HIT_WIDTH = 400  # characters of the hit chunk shown (a window around its marked words when longer)
CONTEXT_WIDTH = 120  # characters of context shown on each side
ON, OFF = "\x1b[1m", "\x1b[0m"


def use_color(choice: str, stream: TextIO) -> bool:
    """``always``, ``never``, or ``auto``: a terminal, and ``NO_COLOR`` unset."""
    if choice == "auto":
        return stream.isatty() and not os.environ.get("NO_COLOR")
    return choice == "always"


def _flatten(text: str, spans: Sequence[Sequence[int]]) -> tuple[str, list[tuple[int, int]]]:
    """``text`` on one line (each whitespace run one space, ends stripped) and ``spans`` moved onto it."""
    chars: list[str] = []
    index = [0] * (len(text) + 1)  # original offset -> offset in the flat text
    for i, c in enumerate(text):
        index[i] = len(chars)
        if not c.isspace():
            chars.append(c)
        elif chars and chars[-1] != " ":
            chars.append(" ")
    index[len(text)] = len(chars)
    if chars and chars[-1] == " ":
        chars.pop()
    n = len(chars)
    moved = [(min(index[s], n), min(index[e], n)) for s, e in spans if 0 <= s < e <= len(text)]
    return "".join(chars), [(s, e) for s, e in moved if e > s]


def _window(n: int, spans: Sequence[tuple[int, int]], width: int, anchor: str) -> tuple[int, int]:
    """The ``width`` characters of a text of ``n`` to show: all of it when it fits; else the window
    holding the most marks (``anchor`` "start"/"end": the first/last ``width`` characters whatever
    the marks, as context next to the hit is shown; "marks": cut there only when there are none)."""
    if n <= width:
        return 0, n
    if not spans or anchor != "marks":
        return (n - width, n) if anchor == "end" else (0, width)
    lead = min(40, width // 4)  # a little text before the first marked word
    best, start = -1, 0
    for s, _ in spans:
        lo = max(0, min(s - lead, n - width))
        count = sum(1 for a, b in spans if a >= lo and b <= lo + width)
        if count > best:
            best, start = count, lo
    return start, start + width


def snippet(text: str, spans: Sequence[Sequence[int]], width: int, color: bool, anchor: str = "marks") -> str:
    """``text`` on one line, at most ``width`` characters (``…`` where cut), marked words in bold."""
    flat, moved = _flatten(text, spans)
    lo, hi = _window(len(flat), moved, width, anchor)
    # cut at word boundaries
    if lo > 0:
        sp = flat.find(" ", lo, lo + 20)
        lo = sp + 1 if sp >= 0 else lo
    if hi < len(flat):
        sp = flat.rfind(" ", hi - 20, hi)
        hi = sp if sp > lo else hi
    pieces, at = [], lo
    for s, e in moved:
        s, e = max(s, lo), min(e, hi)
        if e <= s or s < at:
            continue
        pieces.append(safe(flat[at:s]))
        word = safe(flat[s:e])
        pieces.append(f"{ON}{word}{OFF}" if color else word)
        at = e
    pieces.append(safe(flat[at:hi]))
    return ("…" if lo > 0 else "") + "".join(pieces) + ("…" if hi < len(flat) else "")


def print_search(result: dict, tokenizer: str, color: bool, out: TextIO | None = None) -> None:
    """The text form of ``search``'s answer (``result``: ``SearchResult.to_dict()``)."""
    out = out or sys.stdout
    results = result["results"]
    by_doc = result.get("per") == "document"
    docs = f"{max((r['document_rank'] for r in results), default=0)} documents, " if by_doc else ""
    print(f"query: {safe(result['query'])}  (mode {result['mode']}, {docs}{len(results)} passages, "
          f"{result['context_tokens']} context tokens in {tokenizer})", file=out)
    shown = 0
    for r in results:
        if by_doc and r["document_rank"] != shown:
            shown = r["document_rank"]
            print(f"\n== document {shown}: {safe(r['source_uri'] or r['doc_id'])}", file=out)
        hit, marks, ctx = r["hit"], r["marks"], r["context"]
        page = f" p.{hit['page']}" if hit["page"] is not None else ""
        version = f"  version {safe(r['version'])}" if r["version"] else ""
        chars = f"chars {hit['start_char']}-{hit['end_char']}  " if hit["start_char"] is not None else ""
        print(f"\n[{r['rank']}] {safe(r['source_uri'] or r['doc_id'])}{page}{version}  "
              f"{chars}score {r['score']:.4g}", file=out)
        if hit["heading_path"]:
            print("    " + safe(" > ".join(hit["heading_path"])), file=out)
        print("    " + snippet(hit["text"], marks["hit"], HIT_WIDTH, color), file=out)
        if ctx["before"].strip() or ctx["after"].strip():
            how = f"expanded from {len(r['expanded_from'])} hit chunk(s)" if r["expanded_from"] else "merged hits"
            where = f": passage chars {r['start_char']}-{r['end_char']}" if r["start_char"] is not None else ""
            print(f"    context ({how}){where}", file=out)
            if ctx["before"].strip():
                print("      before: " + snippet(ctx["before"], marks["before"], CONTEXT_WIDTH, color, "end"), file=out)
            if ctx["after"].strip():
                print("      after:  " + snippet(ctx["after"], marks["after"], CONTEXT_WIDTH, color, "start"), file=out)
        if r["also_in"]:
            print("    also in: " + ", ".join(safe(v["source_uri"] or v["doc_id"])
                                          + (f" ({safe(v['version'])})" if v["version"] else "")
                                          for v in r["also_in"]), file=out)
        if r["superseded_by"]:
            print("    superseded by: " + ", ".join(safe(d) for d in r["superseded_by"]), file=out)
