"""XLSX -> Document with openpyxl (read-only, cached formula values): sheets in workbook order as
sections, tables with their header row (see ``sheets``). The zip is checked against ``ooxml``'s
limits and any DTD refused before openpyxl sees it. Hidden sheets are left out with a warning: a
reader does not see them, and hidden text is how instructions are smuggled into an index.

Cells as displayed, for the common formats: dates as ISO dates (a time of day when the format shows
one), percentages, fixed decimals, thousands separators and a currency sign; TRUE/FALSE; other
numbers without float noise (``0.1 + 0.2`` shows as 0.3).
"""
from __future__ import annotations

import datetime as dt
import io
import re
import zipfile

from chunkwise.errors import DependencyError, InputError
from chunkwise.extract.ooxml import open_package, refuse_dtd
from chunkwise.extract.sheets import Sheets
from chunkwise.types import Document

MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
_DECIMALS = re.compile(r"0\.(0+)")
_CURRENCY = re.compile(r"[$€£¥]")
_QUOTED = re.compile(r'"[^"]*"|\[[^\]]*\]')


def extract(data: bytes, source: str) -> Document:
    pkg = open_package(data, source, "XLSX")
    refuse_dtd(pkg)
    try:
        import openpyxl
    except ImportError as exc:
        raise DependencyError("XLSX extraction needs openpyxl: pip install 'chunkwise[office]'") from exc
    sheets = Sheets(source)
    try:
        wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
        try:
            for ws in wb.worksheets:
                if ws.sheet_state != "visible":
                    sheets.warnings.append(f"hidden sheet '{ws.title}' not read")
                    continue
                sheets.sheet(ws.title, ([display(c) for c in row] for row in ws.iter_rows()))
            title = (wb.properties.title or "").strip() if wb.properties else ""
        finally:
            wb.close()
    except (KeyError, ValueError, TypeError, AttributeError, IndexError, SyntaxError, zipfile.BadZipFile,
            OSError) as exc:
        raise InputError(f"{source}: not a readable XLSX ({type(exc).__name__}: {str(exc)[:120]}); the file "
                         "is corrupt or another format (legacy .xls must be saved as .xlsx first)") from None
    return sheets.document(data, MEDIA_TYPE, {"title": title} if title else {})


def display(cell) -> str:
    """A cell's value as Excel shows it, for the common number formats."""
    value = getattr(cell, "value", None)
    if value is None:
        return ""
    fmt = _QUOTED.sub("", getattr(cell, "number_format", "") or "General")
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0) or not any(ch in fmt.lower() for ch in "hs"):
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="seconds" if value.second else "minutes")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (int, float)):
        return _number(value, fmt, getattr(cell, "number_format", "") or "")
    return str(value)


def _number(value: float, fmt: str, raw_fmt: str) -> str:
    m = _DECIMALS.search(fmt)
    places = len(m.group(1)) if m else None
    if "%" in fmt:
        value *= 100
    if places is not None:
        text = f"{value:,.{places}f}" if "," in fmt else f"{value:.{places}f}"
    elif fmt not in ("General", "@") and ("0" in fmt or "#" in fmt):
        text = f"{value:,.0f}" if "," in fmt else f"{value:.0f}"
    elif isinstance(value, int) or (value.is_integer() and abs(value) < 1e15):
        text = str(int(value))
    else:
        text = f"{value:.12g}"
    sign = _CURRENCY.search(raw_fmt)
    if sign and sign.group() not in text:
        text = ("-" + sign.group() + text[1:]) if text.startswith("-") else sign.group() + text
    return text + "%" if "%" in fmt else text
