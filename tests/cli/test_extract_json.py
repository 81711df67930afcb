"""``chunkwise extract FILE --json`` (issue 27, "Done means"): blocks with their page, heading level
and table cells, through the command line on files made here (a two-page PDF with a heading and a
ruled table, a slide deck), so a citation or a reviewer can see where each block came from."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunkwise.cli.main import main
from chunkwise.extract.builder import TextBuilder, table_cells

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "extract"))
from pdf_fixtures import TABLE, _pdf, draw_table  # noqa: E402


def _extract(capsys, path) -> dict:
    assert main(["extract", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_table_cells_invert_the_pipe_rows_written():
    rows = [["Year", "a|b", ""], ["2023", "", "x"], ["", "1 | 2", "\\"], ["e", "f", ""]]
    out = TextBuilder()
    out.block("paragraph", "Before the table.")
    out.table(rows)
    assert table_cells("".join(out.parts), out.blocks[-1]) == rows


def test_pdf_blocks_carry_page_heading_level_and_cells(tmp_path, capsys):
    pytest.importorskip("pdfplumber")
    pdf = _pdf()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "Harbour traffic was logged by hand for a century before the sensors arrived.")
    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=20)
    pdf.cell(0, 12, "Station Traffic", new_x="LMARGIN", new_y="NEXT")
    draw_table(pdf)
    path = tmp_path / "traffic.pdf"
    path.write_bytes(bytes(pdf.output()))

    data = _extract(capsys, path)
    blocks = [b for b in data["blocks"] if b["kind"] != "page_break"]
    assert [p["number"] for p in data["pages"]] == [1, 2]
    assert blocks[0]["page"] == 1 and "Harbour traffic" in data["text"][blocks[0]["start"]:blocks[0]["end"]]
    [heading] = [b for b in blocks if b["kind"] == "heading"]
    assert heading["text"] == "Station Traffic" and heading["level"] >= 1 and heading["page"] == 2
    [table] = [b for b in blocks if b["kind"] == "table"]
    assert table["page"] == 2 and table["cells"] == TABLE  # header row first, every cell whole
    assert all(b["start"] >= data["pages"][b["page"] - 1]["start"] for b in blocks)


def test_slides_are_pages_and_their_tables_have_cells(tmp_path, capsys):
    pytest.importorskip("pptx")
    from format_fixtures import pptx_bytes

    path = tmp_path / "deck.pptx"
    path.write_bytes(pptx_bytes())
    data = _extract(capsys, path)
    [table] = [b for b in data["blocks"] if b["kind"] == "table"]
    assert table["cells"] == [["Region", "Revenue"], ["North", "120"], ["South", "95"]]
    assert table["page"] == 3  # the third slide
    assert [b["page"] for b in data["blocks"] if b["kind"] == "heading"][:3] == [1, 2, 3]


def test_pdf_blocks_and_chunks_carry_their_boxes(tmp_path, capsys):
    pytest.importorskip("fpdf")
    from boxes_fixtures import LINES, contains, drawn, write_boxes_pdf

    path = write_boxes_pdf(tmp_path / "ledgers.pdf")
    data = _extract(capsys, path)
    for number, _, _, text in LINES:
        at = data["text"].index(text)
        block = next(b for b in data["blocks"] if b["kind"] != "page_break" and b["start"] <= at < b["end"])
        [box] = block["boxes"]
        assert box[0] == number and contains(box, drawn(text))
    assert all("boxes" not in b for b in data["blocks"] if b["kind"] == "page_break")
    assert main(["chunk", str(path), "--json", "--size", "20"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert records and all(r["boxes"] and r["boxes"][0][0] == r["page"] for r in records)
    assert [b[0] for r in records if r["page_end"] for b in r["boxes"]] == [1, 2]


def test_a_text_files_blocks_have_no_boxes(tmp_path, capsys):
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\nHarbour words.\n", encoding="utf-8")
    assert all("boxes" not in b for b in _extract(capsys, path)["blocks"])


@pytest.mark.parametrize("given", ["folder", "glob"])
def test_extract_takes_one_file_and_refuses_a_folder_or_a_glob_of_several(tmp_path, capsys, given):
    (tmp_path / "a.md").write_text("# A\n\nfirst\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("# B\n\nsecond\n", encoding="utf-8")
    path = str(tmp_path) if given == "folder" else str(tmp_path / "*.md")
    assert main(["extract", path]) == 2  # it printed a.md alone, exit 0, as if that were the folder
    cap = capsys.readouterr()
    assert cap.out == "" and "one file" in cap.err and len(cap.err.splitlines()) == 1, cap.err
    (tmp_path / "b.md").unlink()
    assert main(["extract", str(tmp_path / "*.md")]) == 0 and "first" in capsys.readouterr().out  # one match: that file


@given(st.lists(st.sampled_from([0, 0, 1, 3, 10]), max_size=10), st.data())
def test_the_page_of_an_unpaged_block_is_found_by_binary_search(lengths, data):
    """``extract --json`` finds a PPTX block's slide by binary search: the same page as the first
    page that holds its start (or starts there, an empty page included), for every offset."""
    from types import SimpleNamespace

    from chunkwise.cli.extract import _page_at

    pages, at = [], 0
    for n, length in enumerate(lengths):
        pages.append(SimpleNamespace(number=n + 1, start=at, end=at + length))
        at += length
    x = data.draw(st.integers(0, at + 1))
    first = next((p.number for p in pages if p.start <= x < p.end or p.start == x), None)
    assert _page_at(SimpleNamespace(pages=pages), [p.start for p in pages], x) == first
