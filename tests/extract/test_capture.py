"""Parser warnings are the file's warnings, never lines on stderr (issue 27: pypdf printed 1,480 of them)."""
from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest

from chunkwise.errors import InputError
from chunkwise.extract import extract_bytes
from chunkwise.extract.capture import MAX_DISTINCT, captured, summary

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _broken_xref_pdf() -> bytes:
    """A one-page PDF whose startxref points 7 bytes off: pypdf reads it and logs warnings."""
    fpdf = pytest.importorskip("fpdf")
    pdf = fpdf.FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.cell(0, 10, "Harbour ledger page one")
    data = bytes(pdf.output())
    m = re.search(rb"startxref\s+(\d+)", data)
    return data[: m.start(1)] + str(int(m.group(1)) + 7).encode() + data[m.end(1):]


def _run(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"}, timeout=120)


def test_pypdf_warnings_become_the_documents_and_stay_off_stderr(tmp_path):
    pytest.importorskip("pypdf")
    (tmp_path / "bad.pdf").write_bytes(_broken_xref_pdf())
    code = ("import json; from chunkwise.extract import extract_bytes\n"
            "d = extract_bytes(open('bad.pdf','rb').read(), 'bad.pdf', 'application/pdf')\n"
            "print(json.dumps([d.text, list(d.warnings)]))")
    done = _run(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # before: "incorrect startxref pointer(3)" and more, on stderr
    text, said = json.loads(done.stdout)
    assert "Harbour ledger" in text
    assert any(w.startswith("parser warning, pypdf: incorrect startxref pointer") for w in said)


def test_audit_row_carries_the_parser_warnings(tmp_path):
    pytest.importorskip("pypdf")
    from chunkwise.api import audit

    (tmp_path / "bad.pdf").write_bytes(_broken_xref_pdf())
    (row,) = audit([tmp_path / "bad.pdf"])
    assert row.status == "warn"
    assert any("pypdf: incorrect startxref pointer" in w for w in row.warnings)


def test_warnings_module_and_logging_are_both_captured_and_counted():
    log = logging.getLogger("somelib.inner")
    with captured() as said:
        log.warning("object %d is broken", 6)
        log.warning("object %d is broken", 6)
        log.info("below the warning level: not a finding")
        warnings.warn("a parser's UserWarning", UserWarning, stacklevel=1)
    lines = summary(said)
    assert "parser warning, somelib: object N is broken (2 times)" in lines
    assert any(line.endswith("a parser's UserWarning") for line in lines)
    assert len(lines) == 2


def test_nested_capture_keeps_each_files_warnings_apart():
    log = logging.getLogger("somelib")
    with captured() as outer:
        log.warning("outer file")
        with captured() as inner:
            log.warning("attachment")
        log.warning("outer again")
    assert [s.split(": ", 1)[1] for s in outer] == ["outer file", "outer again"]
    assert [s.split(": ", 1)[1] for s in inner] == ["attachment"]


def test_other_threads_records_are_not_taken():
    log = logging.getLogger("somelib")
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    keep = Keep()
    logging.getLogger().addHandler(keep)
    try:
        with captured() as said:
            t = threading.Thread(target=lambda: log.warning("from another thread"))
            t.start()
            t.join()
            log.warning("from this file")
    finally:
        logging.getLogger().removeHandler(keep)
    assert said == ["somelib: from this file"]
    assert "from another thread" in seen


def test_the_handler_is_gone_afterwards_so_basicconfig_still_works(tmp_path):
    code = ("import logging; from chunkwise.extract.capture import captured\n"
            "with captured():\n    logging.getLogger('x').warning('quiet')\n"
            "logging.basicConfig(format='CONFIGURED %(message)s')\n"
            "logging.getLogger('x').warning('loud')")
    done = _run(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "CONFIGURED loud"


def test_outside_a_capture_a_warning_still_reaches_stderr_as_python_would(tmp_path):
    code = ("import logging, threading; from chunkwise.extract.capture import captured\n"
            "def other(): logging.getLogger('x').warning('other thread speaks')\n"
            "with captured():\n"
            "    t = threading.Thread(target=other); t.start(); t.join()\n")
    done = _run(code, tmp_path)
    assert done.stderr.strip() == "other thread speaks"


def test_summary_is_bounded():
    said = [f"lib: message {chr(97 + i)}" for i in range(MAX_DISTINCT + 5)] + ["lib: message a"]
    lines = summary(said + ["lib: " + "x" * 5000])
    assert len(lines) == MAX_DISTINCT + 1
    assert lines[0] == "parser warning, lib: message a (2 times)"
    assert lines[-1] == "parser warning: 6 more of 6 other kinds"
    assert all(len(line) < 400 for line in lines)


def test_messages_differing_only_in_numbers_are_one_kind():
    said = [f"pypdf: Ignoring wrong pointing object {n} 0 (offset 0)" for n in (6, 8, 10)]
    assert summary(said) == ["parser warning, pypdf: Ignoring wrong pointing object N N (offset N) (3 times)"]
    assert summary(said[:1]) == ["parser warning, pypdf: Ignoring wrong pointing object 6 0 (offset 0)"]


def test_an_unreadable_file_names_what_the_parser_said():
    pytest.importorskip("pypdf")
    with pytest.raises(InputError) as err:
        extract_bytes(b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\nstartxref\n9999\n%%EOF", "broken.pdf",
                      "application/pdf")
    message = str(err.value)
    assert message.startswith("broken.pdf: not a readable PDF")
    assert "parser warning, pypdf: incorrect startxref pointer" in message


def test_an_ingest_run_reports_them_per_file(tmp_path):
    pytest.importorskip("pypdf")
    from chunkwise.config import ChunkConfig
    from chunkwise.pipeline import ingest

    root = tmp_path / "docs"
    root.mkdir()
    (root / "bad.pdf").write_bytes(_broken_xref_pdf())
    heard: list[str] = []
    stats = ingest([root], tmp_path / "s.db", ChunkConfig(strategy="structure", size=128), embedder=None,
                   acl="staff", warn=heard.append)
    assert not stats.errors
    said = [w for w in stats.warnings if w.startswith("bad.pdf: parser warning, pypdf: incorrect startxref")]
    assert len(said) == 1 and said[0] in heard
