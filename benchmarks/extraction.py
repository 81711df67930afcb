"""Extraction throughput of chunkwise against the raw parser passes it is built on.

Why: every chunkwise extractor wraps one parser (pypdf, selectolax/Lexbor, python-docx,
markdown-it) and adds what a plain text dump lacks: structure (headings, lists, tables), a page map,
offsets, hidden-text removal and, for PDF, header/footer removal and hyphenation repair. This harness
measures what that costs, side by side in one process on the same inputs, so the overhead ("x raw")
is comparable on whatever machine runs it.

Method:
- the inputs are generated at run time, deterministically, in memory and in a temporary directory
  (never in the repository): a 200-page PDF manual (fpdf2), a ~2 MB HTML page, a ~100-page DOCX
  (python-docx), and examples/*.md concatenated 200 times;
- a timed repetition makes one call on the whole input; the best of ``--repeat`` repetitions is kept
  (GC collected before and disabled during the timed call, as ``timeit`` does); extractor modules are
  imported before timing;
- rates: PDF pages/s, DOCX paragraphs/s (paragraphs in the body, tables excluded), HTML and Markdown
  MB/s of input; "input MB/s" is file bytes / best time for every row;
- ``x raw`` is a row's best time divided by the best time of its raw reference pass; ``best cpu s``
  and ``x raw cpu`` are the same on the least CPU seconds of the repetitions (read these when the
  machine is loaded);
- HTML also times trafilatura alone with the settings chunkwise's main-content judge uses
  (``extract/html_main.py``): chunkwise's HTML cost is that judge plus its own block walk;
- the "output" column is computed untimed from the best run, to show each contender did its job.

Run: ``.venv/bin/python benchmarks/extraction.py [--repeat N] [--json FILE]``
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import io
import json
import os
import platform
import random
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _timing import timed

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = REPO_ROOT / "examples"
DISTRIBUTIONS = ["pypdf", "python-docx", "selectolax", "trafilatura", "markdown-it-py", "markdown-it-pyrs",
                 "chunkwise", "fpdf2"]
PDF_PAGES = 200
PDF_WORDS_PER_PAGE = 350
PDF_HEADER = "Northwind Pay \u2014 Operations Manual"
HTML_TARGET_BYTES = 2_000_000
DOCX_WORDS = 35_000  # ~350 words a page, 100 pages (tables not counted)
MD_COPIES = 200
SEED = 20240611
PDF_MEDIA = "application/pdf"
DOCX_MEDIA = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

WORDS = ("the payment batch is settled after the clearing window closes and each merchant account "
         "receives a statement with fees refunds and chargebacks listed by day an operator checks "
         "that totals match the ledger before release if a mismatch appears the batch stays on hold "
         "until finance approves a correction customers see pending funds in the dashboard while "
         "support staff follow the escalation path below").split()
LONG_WORDS = ("reconciliation authorisation settlement infrastructure notification configuration "
              "responsibilities documentation verification administrator availability disbursement "
              "intermediary acknowledgement investigation transactional compliance escalation "
              "operational provisioning").split()
TOPICS = ("Settlement", "Chargebacks", "Merchant Onboarding", "Ledger Reconciliation", "Incident Response",
          "Access Control", "Payouts", "Fraud Review", "Reporting", "Data Retention")


# --------------------------------------------------------------------------- prose


def sentence(rng: random.Random) -> str:
    words = [rng.choice(LONG_WORDS) if rng.random() < 0.18 else rng.choice(WORDS)
             for _ in range(rng.randint(8, 20))]
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random, words: int) -> str:
    out: list[str] = []
    while sum(len(s.split()) for s in out) < words:
        out.append(sentence(rng))
    return " ".join(out)


def prose(rng: random.Random, total_words: int) -> list[str]:
    """Paragraphs of 40-110 words adding up to about ``total_words``."""
    paras: list[str] = []
    left = total_words
    while left > 20:
        paras.append(paragraph(rng, min(left, rng.randint(40, 110))))
        left -= len(paras[-1].split())
    return paras


# --------------------------------------------------------------------------- fixtures


def wrap(pdf: Any, text: str, width: float) -> list[str]:
    """Greedy line fill; a long word that does not fit is hyphenated when its first part fits."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        trial = f"{line} {word}" if line else word
        if pdf.get_string_width(trial) <= width:
            line = trial
            continue
        cut = len(word) // 2
        head = f"{line} {word[:cut]}-" if line else f"{word[:cut]}-"
        if len(word) >= 10 and line and pdf.get_string_width(head) <= width:
            lines.append(head)
            line = word[cut:]
        else:
            lines.append(line)
            line = word
    return lines + [line] if line else lines


def make_pdf(path: Path, rng: random.Random) -> bytes:
    """A manual: running header, "Page N of 200" footer, chapter/section headings, hyphenated prose."""
    from fpdf import FPDF

    class Manual(FPDF):
        def header(self) -> None:
            self.set_font("Helvetica", "", 9)
            self.cell(0, 8, PDF_HEADER, align="C", new_x="LMARGIN", new_y="NEXT")
            self.ln(4)

        def footer(self) -> None:
            self.set_y(-15)
            self.set_font("Helvetica", "", 9)
            self.cell(0, 8, f"Page {self.page_no()} of {PDF_PAGES}", align="C")

    pdf = Manual(format="A4")
    pdf.core_fonts_encoding = "windows-1252"  # the em dash of the header
    pdf.set_auto_page_break(False)
    width = pdf.epw
    for n in range(1, PDF_PAGES + 1):
        pdf.add_page()
        if n % 10 == 1:
            pdf.set_font("Helvetica", "B", 18)
            pdf.cell(0, 10, f"Chapter {n // 10 + 1}. {TOPICS[(n // 10) % len(TOPICS)]}",
                     new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
        elif n % 3 == 0:
            pdf.set_font("Helvetica", "B", 14)
            pdf.cell(0, 8, f"{n // 10 + 1}.{n % 10} {rng.choice(TOPICS)} procedures",
                     new_x="LMARGIN", new_y="NEXT")
            pdf.ln(1)
        pdf.set_font("Helvetica", "", 11)
        for para in prose(rng, PDF_WORDS_PER_PAGE):
            for line in wrap(pdf, para, width):
                pdf.cell(0, 5.5, line, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
    pdf.output(str(path))
    return path.read_bytes()


def html_section(rng: random.Random, i: int) -> str:
    """One h2 section: paragraphs, an h3, a list, sometimes a table, a script or hidden text."""
    parts = [f"<section id='s{i}'><h2>{i}. {rng.choice(TOPICS)} procedures</h2>"]
    parts += [f"<p>{p}</p>" for p in prose(rng, 300)]
    parts.append(f"<h3>{i}.1 Checklist</h3><ul>")
    parts += [f"<li>{sentence(rng)}</li>" for _ in range(rng.randint(3, 7))]
    parts.append("</ul>")
    if i % 4 == 0:
        rows = "".join(f"<tr><td>{rng.choice(TOPICS)}</td><td>{rng.randint(1, 999)}</td>"
                       f"<td>{sentence(rng)}</td></tr>" for _ in range(8))
        parts.append(f"<table><thead><tr><th>Area</th><th>Count</th><th>Note</th></tr></thead>"
                     f"<tbody>{rows}</tbody></table>")
    if i % 7 == 0:
        parts.append(f"<script>window.dataLayer=window.dataLayer||[];dataLayer.push({{s:{i}}});</script>")
    if i % 9 == 0:
        parts.append(f"<div style='display:none'>{sentence(rng)}</div><p hidden>{sentence(rng)}</p>")
    parts.append(f"<ol>{''.join(f'<li>{sentence(rng)}</li>' for _ in range(3))}</ol></section>")
    return "\n".join(parts)


def make_html(rng: random.Random) -> bytes:
    """A long documentation page: nav, header, footer, article with h1-h3, scripts, styles, hidden divs."""
    head = ("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Operations Manual</title>"
            "<style>body{font-family:sans-serif}.hidden{display:none}nav a{margin:0 4px}</style>"
            "<script>function track(e){console.log(e)}</script></head><body>"
            "<header><a href='/'>Northwind Pay</a> <span>Docs</span></header>"
            "<nav>" + "".join(f"<a href='#t{k}'>{t}</a>" for k, t in enumerate(TOPICS)) + "</nav>"
            "<main><article><h1>Northwind Pay Operations Manual</h1>")
    tail = ("</article></main><aside>Related: <a href='/faq'>FAQ</a></aside>"
            "<footer>&copy; Northwind Pay. <a href='/privacy'>Privacy</a></footer>"
            "<script>track('view')</script></body></html>")
    body: list[str] = []
    size = len(head) + len(tail)
    while size < HTML_TARGET_BYTES:
        body.append(html_section(rng, len(body) + 1))
        size += len(body[-1]) + 1
    return (head + "\n".join(body) + tail).encode("utf-8")


def make_docx(path: Path, rng: random.Random) -> bytes:
    """About 100 pages: Heading 1-3, body paragraphs, bullet and numbered lists, a table every chapter."""
    from docx import Document

    doc = Document()
    doc.add_heading("Northwind Pay Operations Manual", 0)
    words, chapter = 0, 0
    while words < DOCX_WORDS:
        chapter += 1
        doc.add_heading(f"{chapter}. {TOPICS[chapter % len(TOPICS)]}", 1)
        for sec in range(1, 4):
            doc.add_heading(f"{chapter}.{sec} {rng.choice(TOPICS)} procedures", 2)
            for para in prose(rng, 300):
                doc.add_paragraph(para)
                words += len(para.split())
            doc.add_heading(f"{chapter}.{sec}.1 Checklist", 3)
            items = [(sentence(rng), "List Bullet") for _ in range(4)] + [(sentence(rng), "List Number")]
            for item, style in items:
                doc.add_paragraph(item, style=style)
                words += len(item.split())
        table = doc.add_table(rows=1, cols=3)
        for cell, title in zip(table.rows[0].cells, ("Area", "Count", "Note")):
            cell.text = title
        for _ in range(6):
            row = table.add_row().cells
            row[0].text, row[1].text, row[2].text = rng.choice(TOPICS), str(rng.randint(1, 999)), sentence(rng)
    doc.save(str(path))
    return path.read_bytes()


def make_markdown() -> str:
    files = sorted(EXAMPLES.glob("*.md"))
    if not files:
        raise SystemExit(f"no *.md files in {EXAMPLES}")
    one = "\n\n".join(f.read_text(encoding="utf-8") for f in files)
    return "\n\n".join([one] * MD_COPIES)


@dataclass
class Fixtures:
    pdf: bytes
    html: bytes
    docx: bytes
    markdown: str
    docx_paragraphs: int


def make_fixtures() -> Fixtures:
    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory(prefix="chunkwise-bench-") as tmp:
        pdf = make_pdf(Path(tmp) / "manual.pdf", rng)
        docx = make_docx(Path(tmp) / "manual.docx", rng)
    from docx import Document

    count = len(Document(io.BytesIO(docx)).paragraphs)
    return Fixtures(pdf, make_html(rng), docx, make_markdown(), count)


# --------------------------------------------------------------------------- contenders


@dataclass(frozen=True)
class Contender:
    fmt: str  # PDF, HTML, DOCX, Markdown
    name: str
    run: Callable[[], Any]  # timed
    ref: str  # raw pass this row is compared with (its own name for a raw pass)
    units: float  # pages, MB or paragraphs processed per call
    unit: str
    input_bytes: int
    describe: Callable[[Any], str]  # untimed summary of the output


def cw() -> Any:
    """An installed chunkwise wins; otherwise benchmark the working tree's src/."""
    try:
        return importlib.import_module("chunkwise")
    except ImportError:
        sys.path.insert(0, str(REPO_ROOT / "src"))
        return importlib.import_module("chunkwise")


def preload() -> None:
    cw()
    for name in ("extract", "extract.pdf", "extract.html", "extract.docx", "extract.text", "normalise",
                 "chunking.markdown"):
        importlib.import_module(f"chunkwise.{name}")


def kchars(n: int) -> str:
    return f"{n / 1000:.0f}k chars"


_FOOTER_RE = re.compile(r"Page \d+ of \d+")
_HYPHEN_BREAK_RE = re.compile(r"[a-z]-\n[a-z]")


def leftovers(text: str) -> str:
    """What normalisation should remove: running headers, page footers, hyphen breaks."""
    footers, breaks = len(_FOOTER_RE.findall(text)), len(_HYPHEN_BREAK_RE.findall(text))
    return f"headers {text.count(PDF_HEADER)}, footers {footers}, hyphen breaks {breaks}"


def describe_doc(doc: Any) -> str:
    heads = sum(1 for b in doc.blocks if b.kind == "heading")
    pages = f", {len(doc.pages)} pages" if doc.pages else ""
    return f"{kchars(len(doc.text))}{pages}, {len(doc.blocks)} blocks, {heads} headings"


def pdf_contenders(fx: Fixtures) -> list[Contender]:
    import pypdf
    from chunkwise.extract import extract_bytes
    from chunkwise.normalise import normalise_document

    data = fx.pdf
    raw_name = "pypdf extract_text, all pages"

    def raw() -> list[str]:
        return [page.extract_text() for page in pypdf.PdfReader(io.BytesIO(data)).pages]

    def cw_extract() -> Any:
        return extract_bytes(data, "manual.pdf", PDF_MEDIA)

    def cw_normalised() -> Any:
        doc = extract_bytes(data, "manual.pdf", PDF_MEDIA)
        return doc, normalise_document(doc)

    def describe_raw(pages: list[str]) -> str:
        return f"{kchars(sum(map(len, pages)))}; {leftovers(chr(10).join(pages))}"

    def describe_norm(out: Any) -> str:
        doc, norm = out
        return f"{kchars(len(norm.text))} (of {kchars(len(doc.text))}); {leftovers(norm.text)}"

    common = dict(units=PDF_PAGES, unit="pages/s", input_bytes=len(data))
    return [
        Contender("PDF", raw_name, raw, raw_name, describe=describe_raw, **common),
        Contender("PDF", "chunkwise extract_bytes", cw_extract, raw_name,
                  describe=lambda d: f"{describe_doc(d)}; {leftovers(d.text)}", **common),
        Contender("PDF", "chunkwise extract_bytes + normalise_document", cw_normalised, raw_name,
                  describe=describe_norm, **common),
    ]


def html_contenders(fx: Fixtures) -> list[Contender]:
    from selectolax.lexbor import LexborHTMLParser
    from chunkwise.extract import extract_bytes

    data = fx.html
    html = data.decode("utf-8")
    try:  # imported before timing, as the extractors are; a missing one skips its row only
        import trafilatura  # noqa: F401
    except ImportError:
        pass
    raw_name = "selectolax Lexbor body.text()"
    common = dict(units=len(data) / 1e6, unit="MB/s", input_bytes=len(data))
    return [
        Contender("HTML", raw_name, lambda: LexborHTMLParser(html).body.text(), raw_name,
                  describe=lambda t: kchars(len(t)), **common),
        Contender("HTML", "trafilatura extract (main content; chunkwise's judge, its settings)",
                  lambda: trafilatura_text(html), raw_name, describe=lambda t: kchars(len(t)), **common),
        Contender("HTML", "chunkwise extract_bytes", lambda: extract_bytes(data, "page.html", "text/html"),
                  raw_name, describe=describe_doc, **common),
    ]


def trafilatura_text(html: str) -> str:
    """trafilatura's main text of a page with the settings chunkwise's HTML extractor asks of it (on
    the page as it is; chunkwise passes its sanitised copy): what that judge alone costs."""
    import trafilatura

    return trafilatura.extract(html, include_comments=False, include_tables=True, include_formatting=False,
                               include_links=False, include_images=False, deduplicate=False) or ""


def docx_contenders(fx: Fixtures) -> list[Contender]:
    from docx import Document
    from chunkwise.extract import extract_bytes

    data = fx.docx
    raw_name = "python-docx paragraphs .text"

    def raw() -> list[str]:
        return [p.text for p in Document(io.BytesIO(data)).paragraphs]

    common = dict(units=fx.docx_paragraphs, unit="paragraphs/s", input_bytes=len(data))
    return [
        Contender("DOCX", raw_name, raw, raw_name,
                  describe=lambda ps: f"{kchars(sum(map(len, ps)))}, {len(ps)} paragraphs", **common),
        Contender("DOCX", "chunkwise extract_bytes", lambda: extract_bytes(data, "manual.docx", DOCX_MEDIA),
                  raw_name, describe=describe_doc, **common),
    ]


def markdown_contenders(fx: Fixtures) -> list[Contender]:
    from markdown_it import MarkdownIt
    from chunkwise.chunking.markdown import parse_markdown

    text = fx.markdown
    size = len(text.encode("utf-8"))
    py_name, rs_name = "markdown-it-py parse", "markdown-it-pyrs tree"
    md_py = MarkdownIt("commonmark").enable("table")
    try:
        import markdown_it_pyrs

        md_rs = markdown_it_pyrs.MarkdownIt("commonmark").enable_many(["table", "front_matter"])
        rs_run: Callable[[], Any] = lambda: md_rs.tree(text)
    except ImportError as exc:
        missing = ImportError(str(exc))  # `exc` itself is unbound once the except block ends

        def rs_run() -> Any:  # reported as skipped
            raise missing

    def sections(doc: Any) -> str:
        return f"{len(doc.sections)} sections, {sum(len(s.blocks) for s in doc.sections)} blocks"

    common = dict(units=size / 1e6, unit="MB/s", input_bytes=size)
    return [
        Contender("Markdown", py_name, lambda: md_py.parse(text), py_name,
                  describe=lambda toks: f"{len(toks)} tokens", **common),
        Contender("Markdown", rs_name, rs_run, rs_name,
                  describe=lambda tree: f"{len(tree.children)} top-level nodes", **common),
        Contender("Markdown", "chunkwise parse_markdown (auto: pyrs)", lambda: parse_markdown(text), rs_name,
                  describe=sections, **common),
        Contender("Markdown", "chunkwise parse_markdown(backend=\"py\")",
                  lambda: parse_markdown(text, backend="py"), py_name, describe=sections, **common),
    ]


# --------------------------------------------------------------------------- measurement


@dataclass
class Result:
    fmt: str
    name: str
    ref: str
    unit: str
    input_bytes: int
    rate: float | None = None
    input_mb_per_s: float | None = None
    seconds: float | None = None
    cpu_seconds: float | None = None  # CPU s of the best (fastest wall) call
    best_cpu: float | None = None  # least CPU s of the calls: the comparable figure on a loaded machine
    x_raw: float | None = None
    x_raw_cpu: float | None = None
    output: str = ""
    skipped: str | None = None




def measure(c: Contender, repeat: int) -> Result:
    result = Result(c.fmt, c.name, c.ref, c.unit, c.input_bytes)
    best: tuple[float, float, Any] | None = None
    try:
        for _ in range(repeat):
            run = timed(c.run)
            result.best_cpu = run[1] if result.best_cpu is None else min(result.best_cpu, run[1])
            if best is None or run[0] < best[0]:
                best = run
            run = None  # free the output before the next repetition
        assert best is not None
        result.output = c.describe(best[2])
    except Exception as exc:  # noqa: BLE001 - any failure skips this row only
        result.skipped = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        return result
    result.seconds, result.cpu_seconds = best[0], best[1]
    result.rate = c.units / best[0]
    result.input_mb_per_s = c.input_bytes / 1e6 / best[0]
    return result


def add_ratios(results: list[Result]) -> None:
    by_name = {(r.fmt, r.name): r for r in results}
    for r in results:
        ref = by_name.get((r.fmt, r.ref))
        if r.seconds and ref is not None and ref.seconds:
            r.x_raw = r.seconds / ref.seconds
        if r.best_cpu and ref is not None and ref.best_cpu:
            r.x_raw_cpu = r.best_cpu / ref.best_cpu


# --------------------------------------------------------------------------- report


def version(name: str) -> str:
    if name == "chunkwise":
        module = cw()
        return f"{importlib.metadata.version('chunkwise')} ({Path(module.__file__).parent})"
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def environment(fx: Fixtures, repeat: int) -> dict[str, Any]:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "nproc": affinity or os.cpu_count(),
        "repeat": repeat,
        "versions": {name: version(name) for name in DISTRIBUTIONS},
        "inputs": {
            "pdf": {"pages": PDF_PAGES, "bytes": len(fx.pdf)},
            "html": {"bytes": len(fx.html)},
            "docx": {"bytes": len(fx.docx), "paragraphs": fx.docx_paragraphs},
            "markdown": {"bytes": len(fx.markdown.encode("utf-8")), "copies": MD_COPIES},
        },
    }


def fmt(value: float | None, spec: str) -> str:
    return "" if value is None else format(value, spec)


def markdown(env: dict[str, Any], results: list[Result]) -> str:
    inp = env["inputs"]
    lines = ["# chunkwise extraction benchmark", "",
             f"- Python: {env['python']}",
             f"- Machine: {env['platform']}, nproc={env['nproc']}",
             "- Versions: " + ", ".join(f"{k} {v}" for k, v in env["versions"].items()),
             f"- Inputs (generated, seed {SEED}): PDF {inp['pdf']['pages']} pages "
             f"({inp['pdf']['bytes'] / 1e6:.2f} MB); HTML {inp['html']['bytes'] / 1e6:.2f} MB; "
             f"DOCX {inp['docx']['paragraphs']} paragraphs ({inp['docx']['bytes'] / 1e6:.2f} MB); "
             f"Markdown examples/*.md x{inp['markdown']['copies']} ({inp['markdown']['bytes'] / 1e6:.2f} MB)",
             f"- One call on the whole input, best of {env['repeat']}", "",
             "| format | contender | rate | input MB/s | best s | cpu/wall | x raw | best cpu s | x raw cpu | output |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|---|"]
    for r in results:
        if r.skipped is None:
            cpu_wall = r.cpu_seconds / r.seconds if r.seconds and r.cpu_seconds is not None else None
            lines.append(f"| {r.fmt} | {r.name} | {fmt(r.rate, ',.1f')} {r.unit} | "
                         f"{fmt(r.input_mb_per_s, '.2f')} | {fmt(r.seconds, '.4f')} | {fmt(cpu_wall, '.2f')} | "
                         f"{fmt(r.x_raw, '.2f')} | {fmt(r.best_cpu, '.4f')} | {fmt(r.x_raw_cpu, '.2f')} | {r.output} |")
    skipped = [r for r in results if r.skipped]
    if skipped:
        lines += ["", "Skipped:"] + [f"- {r.fmt} {r.name}: {r.skipped}" for r in skipped]
    lines += ["", "x raw = best time / best time of the raw pass of the same format "
              "(chunkwise parse_markdown auto is compared with markdown-it-pyrs, backend=\"py\" with "
              "markdown-it-py). Raw python-docx `.paragraphs` skips table text; chunkwise includes it. "
              "best cpu s = least CPU s of this process over the calls; x raw cpu = the same ratio on it "
              "(the figure to read when the machine is loaded)."]
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="repetitions, best kept (default: 3)")
    parser.add_argument("--json", type=Path, help="also write the results as JSON to this file")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    preload()
    print("... generating inputs", file=sys.stderr, flush=True)
    fx = make_fixtures()
    contenders = pdf_contenders(fx) + html_contenders(fx) + docx_contenders(fx) + markdown_contenders(fx)
    results = []
    for c in contenders:
        print(f"... {c.fmt}: {c.name}", file=sys.stderr, flush=True)
        results.append(measure(c, args.repeat))
    add_ratios(results)
    env = environment(fx, args.repeat)
    print(markdown(env, results))
    if args.json:
        payload = {"environment": env, "results": [asdict(r) for r in results]}
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
