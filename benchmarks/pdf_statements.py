"""Financial statements in PDF keep their row labels and every column (issue 27 item 9).

The labelled check: the balance sheet and the statement of operations of a public 10-K filing
(``../shared/data/unstructured/example-docs/example-10k.html``, read with lxml: label, year, value),
laid out as a statement page is printed — labels on the left (sections, indented items, wrapped long
labels), two year columns of right-aligned figures with the dollar sign apart, negatives in
parentheses, no rules — with fpdf2. Scored: a (label, year, value) triple is found when an extracted
table has a row whose label cell is the label and whose cell under that year's column is the value
(normalised: case, punctuation and ``$`` aside). Also scored, as the peer, pypdf's plain text: a
triple counts when one text line holds the label followed by both years' values in order.

    PYTHONPATH=src python benchmarks/pdf_statements.py [--html PATH] [--out statement.pdf]
"""
from __future__ import annotations

import argparse
import re
import sys
import textwrap
from pathlib import Path

DEFAULT_HTML = Path(__file__).resolve().parents[2] / "shared" / "data" / "unstructured" / "example-docs" / "example-10k.html"
WANTED = ("Total current assets", "Total costs and expenses")  # the balance sheet, the statement of operations
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
_FIGURE = re.compile(r"^\(?[\d,.]+\)?$|^[\u2014\u2013-]$")
_WORD = re.compile(r"[^\W_]+")


def norm(text: str) -> str:
    return " ".join(_WORD.findall(text.casefold()))


def statements(html: bytes) -> list[tuple[list[str], list[tuple[str, list[str]]]]]:
    """(years, rows of (label, values)) of each wanted statement table; a row with no values is a
    section label ("Current assets:")."""
    from lxml import html as lhtml

    root = lhtml.fromstring(html)
    out = []
    for table in root.iter("table"):
        text = table.text_content()
        if not any(w in text for w in WANTED):
            continue
        years: list[str] = []
        rows: list[tuple[str, list[str]]] = []
        for tr in table.iter("tr"):
            cells = [" ".join(td.text_content().split()) for td in tr.iter("td", "th")]
            cells = [c for c in cells if c and c != "$"]
            if not cells:
                continue
            if not years and sum(bool(re.fullmatch(r"20\d\d", c)) for c in cells) >= 2:
                years = [c for c in cells if re.fullmatch(r"20\d\d", c)][:2]
                continue
            label, values = cells[0], []
            for c in cells[1:]:
                if c == ")" and values:
                    values[-1] += ")"
                elif _FIGURE.match(c):
                    values.append(c)
            if _FIGURE.match(label):
                continue
            rows.append((label, values[:2] if len(values) >= 2 else []))
        if years and rows:
            out.append((years, rows))
    return out


def render(tables, title: str = "Consolidated statements") -> bytes:
    """One page per statement, as printed: no rules, figures right-aligned under their year."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="letter")
    pdf.set_auto_page_break(False)
    face = "Helvetica"
    if FONT.is_file():
        pdf.add_font("DejaVu", "", str(FONT))
        face = "DejaVu"
    right = (430.0, 530.0)  # right edges of the two year columns
    dollar = (350.0, 450.0)
    for years, rows in tables:
        pdf.add_page()
        pdf.set_font(face, size=11)
        pdf.text(200, 50, title.upper())
        pdf.set_font(face, size=8)
        pdf.text(330, 80, "December 31,")
        y = 95.0
        for yr, r in zip(years, right):
            pdf.text(r - pdf.get_string_width(yr), y, yr)
        y += 16
        for k, (label, values) in enumerate(rows):
            indent = 0 if not values or label.endswith(":") else (16 if label.lower().startswith("total") else 8)
            lines = textwrap.wrap(_plain(label, face), 62 - indent // 4) or [""]
            for i, part in enumerate(lines):
                pdf.text(50 + indent + (10 if i else 0), y, part)
                if i < len(lines) - 1:
                    y += 10
            for v, r, d in zip(values, right, dollar):
                v = _plain(v, face)
                pdf.text(r - pdf.get_string_width(v.rstrip(")")), y, v)
                if k == 0 or label.lower().startswith("total assets") or label.lower().startswith("total liabilities and"):
                    pdf.text(d, y, "$")
            y += 12
            if y > 740:
                pdf.add_page()
                y = 60.0
    return bytes(pdf.output())


def _plain(text: str, face: str) -> str:
    return text if face != "Helvetica" else text.translate(str.maketrans("\u2014\u2019\u2013", "-'-"))


def truth(tables) -> list[tuple[str, str, str]]:
    return [(norm(label), yr, norm(v)) for years, rows in tables for label, values in rows
            for yr, v in zip(years, values)]


def table_triples(doc) -> set[tuple[str, str, str]]:
    """(label, year, value) read from the document's table blocks: the year of a column is the year
    found in its header cell (or in any cell above the row, for a header written as a row)."""
    out = set()
    for b in doc.blocks:
        if b.kind != "table":
            continue
        years: dict[int, str] = {}
        for line in doc.text[b.start:b.end].splitlines():
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
            if all(re.fullmatch(r"[\s:-]*", c) for c in cells):
                continue
            found = {i: c for i, c in enumerate(cells) if re.fullmatch(r"20\d\d", c)}
            if len(found) >= 2:
                years = found
                continue
            label = norm(cells[0]) if cells else ""
            for i, yr in years.items():
                if i < len(cells) and label:
                    out.add((label, yr, norm(cells[i])))
    return out


def text_triples(text: str, tables) -> set[tuple[str, str, str]]:
    """The peer (plain text): a triple counts when one line holds its label, then both values in order."""
    out = set()
    lines = [norm(ln) for ln in text.splitlines()]
    for years, rows in tables:
        for label, values in rows:
            if not values:
                continue
            want = " ".join([norm(label)] + [norm(v) for v in values])
            if any(want in ln for ln in lines):
                out.update((norm(label), yr, norm(v)) for yr, v in zip(years, values))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--html", type=Path, default=DEFAULT_HTML)
    ap.add_argument("--out", type=Path, help="also write the generated PDF here")
    args = ap.parse_args(argv)
    if not args.html.is_file():
        print(f"no 10-K at {args.html} (see ../shared/data/unstructured)", file=sys.stderr)
        return 2
    import io

    import pypdf

    from chunkwise.extract import extract_bytes

    tables = statements(args.html.read_bytes())
    data = render(tables)
    if args.out:
        args.out.write_bytes(data)
    want = truth(tables)
    doc = extract_bytes(data, "statements.pdf", "application/pdf")
    raw = "\n".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(data)).pages)
    print(f"statements: {len(tables)}, rows with figures: {sum(1 for _, rows in tables for _, v in rows if v)}, "
          f"labelled cells (label, year, value): {len(want)}")
    print("| contender | cells found | cell recall |")
    print("|---|--:|--:|")
    for name, got in (("pypdf extract_text (one line holds label and values)", text_triples(raw, tables)),
                      ("chunkwise extract_bytes (table cells)", table_triples(doc))):
        hit = sum(1 for t in want if t in got)
        print(f"| {name} | {hit} of {len(want)} | {hit / len(want):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
