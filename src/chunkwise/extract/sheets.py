"""Spreadsheets and delimited text -> Document: each sheet a section (a level-1 heading with its name),
each table on it a ``table`` block (pipe rows, first row the header, so the chunker repeats the
header in every piece of a large table it splits by rows). A sheet holds several tables when blank
rows separate them; columns empty in every row of a table are dropped. Cells are written as a
reader sees them (``xlsx`` formats numbers and dates; CSV and ODS cells are text already), a line
break inside a cell becomes a space so a row stays one line.

This module also reads CSV and TSV (stdlib ``csv``; strict UTF-8 as for text files, the delimiter
of a ``.csv`` sniffed among ``, ; | tab``). ``MAX_CELLS`` bounds the work on any one file: past it
the rest of the file is dropped with a warning, never silently.
"""
from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable

from chunkwise import ids
from chunkwise.errors import InputError
from chunkwise.extract.builder import TextBuilder
from chunkwise.extract.text import decode
from chunkwise.types import Document

MAX_CELLS = 2_000_000  # non-empty cells read from one file
MAX_COLUMNS = 1_000  # a wider row is cut (a sheet claiming 16,384 used columns is usually one stray cell)
_WS = re.compile(r"\s+")


class Sheets:
    """Sheets written one after another into one text, with a shared cell budget."""

    def __init__(self, source: str) -> None:
        self.out = TextBuilder()
        self.source = source
        self.cells = 0
        self.warnings: list[str] = []
        self.full = False

    def sheet(self, name: str, rows: Iterable[list[str]]) -> None:
        """One sheet: a heading (when named) and its tables; an empty sheet adds nothing."""
        tables = list(self._tables(rows, name))
        if not tables:
            return
        if name:
            self.out.block("heading", name, 1, name, {"role": "sheet"})
        for table in tables:
            # A title typed above a table in its own row ("Stanley Cups") is a caption, not the header.
            while len(table) > 2 and sum(1 for c in table[0] if c) == 1 and sum(1 for c in table[1] if c) > 1:
                caption = next(c for c in table[0] if c)
                self.out.block("paragraph", caption, meta={"role": "caption"})
                table = table[1:]
            self.out.table(table)

    def _tables(self, rows: Iterable[list[str]], name: str):
        current: list[list[str]] = []
        for row in rows:
            if self.full:
                break
            cells = [cell_text(c) for c in row[:MAX_COLUMNS]]
            if len(row) > MAX_COLUMNS and any(row[MAX_COLUMNS:]):
                self._warn(f"{name or 'table'}: columns past {MAX_COLUMNS:,} dropped")
            filled = sum(1 for c in cells if c)
            if not filled:
                if current:
                    yield _trim(current)
                    current = []
                continue
            self.cells += filled
            if self.cells > MAX_CELLS:
                self.full = True
                self._warn(f"over {MAX_CELLS:,} cells: the rest of the file (from {name or 'this table'}) not read")
                break
            current.append(cells)
        if current:
            yield _trim(current)

    def _warn(self, msg: str) -> None:
        if msg not in self.warnings:
            self.warnings.append(msg)

    def document(self, data: bytes, media_type: str, metadata: dict | None = None,
                 warnings: Iterable[str] = ()) -> Document:
        warns = [*warnings, *self.warnings]
        if not self.out.pos:
            warns.append("no cell has text")
        return Document(doc_id=self.source, source=self.source, media_type=media_type, text=self.out.value(),
                        blocks=tuple(self.out.blocks), metadata=metadata or {}, sha256=ids.bytes_sha256(data),
                        warnings=tuple(dict.fromkeys(warns)))


def cell_text(value) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    return _WS.sub(" ", text).strip() if text else ""


def _trim(rows: list[list[str]]) -> list[list[str]]:
    """Drop columns that are empty in every row (and pad ragged rows)."""
    width = max(len(r) for r in rows)
    keep = [j for j in range(width) if any(j < len(r) and r[j] for r in rows)]
    return [[r[j] if j < len(r) else "" for j in keep] for r in rows]


# -- CSV and TSV --------------------------------------------------------------------------------------
CSV = "text/csv"
TSV = "text/tab-separated-values"


def extract(data: bytes, source: str, media_type: str = CSV) -> Document:
    """One CSV or TSV file: a single sheet (no heading) whose blank rows separate tables."""
    text, warnings = decode(data, source)
    if not text.strip():
        raise InputError(f"{source} is empty; skipped")
    delimiter = "\t" if media_type == TSV else _sniff(text)
    if csv.field_size_limit() < 10_000_000:  # a long text cell is data, not an error
        csv.field_size_limit(10_000_000)
    sheets = Sheets(source)
    try:
        sheets.sheet("", csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as exc:
        raise InputError(f"{source}: not readable as {'TSV' if delimiter == chr(9) else 'CSV'} ({exc})") from None
    return sheets.document(data, media_type, {"title": source.rsplit("/", 1)[-1]}, warnings)


def _sniff(text: str) -> str:
    sample = text[:20_000]
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;|\t").delimiter
    except csv.Error:
        return ","
