"""``page_count`` (run before a big PDF is split across workers) keeps parser noise off stderr:
the extraction that follows hears and reports the same messages, and a damaged file must not
print to the terminal of whoever ingests it (issue 27: parser warnings captured, never to stderr)."""
import re
import subprocess
import sys

import pytest

pytest.importorskip("fpdf")
pytest.importorskip("pypdf")

from fpdf import FPDF  # noqa: E402



def _pdf_with_wrong_startxref() -> bytes:
    pdf = FPDF()
    for i in range(3):
        pdf.add_page()
        pdf.set_font("helvetica", size=12)
        pdf.cell(text=f"page {i}")
    data = bytes(pdf.output())
    return re.sub(rb"startxref\s+(\d+)", lambda m: b"startxref\n" + str(int(m.group(1)) + 7).encode(), data)


def test_page_count_of_a_damaged_pdf_prints_nothing(tmp_path):
    # In a fresh interpreter: pytest's own logging handlers would swallow what pypdf logs here.
    path = tmp_path / "damaged.pdf"
    path.write_bytes(_pdf_with_wrong_startxref())
    code = ("import sys; from pathlib import Path; from chunkwise.extract.pdf import page_count; "
            "print(page_count(Path(sys.argv[1]).read_bytes(), 'damaged.pdf'))")
    run = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "3"
    assert "startxref" not in run.stderr and "Object Streams" not in run.stderr, run.stderr
