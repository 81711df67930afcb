"""``chunkwise audit`` on ingest's pool (``pipeline/audit.py``): two workers, a big PDF split across
them, give the rows one worker gives, in walk order."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("pypdf")
pytest.importorskip("fpdf")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "extract"))

from pdf_fixtures import write_long_pdf  # noqa: E402

from chunkwise.extract.audit import AuditRow  # noqa: E402
from chunkwise.pipeline.audit import AuditSource, audit_sources  # noqa: E402
from chunkwise.sandbox import Fanout  # noqa: E402
from chunkwise.sources import SourceFile, iter_sources  # noqa: E402


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    root = tmp_path_factory.mktemp("audit-docs")
    (root / "a-note.md").write_text("# Note\n\nThe harbour ledger closes at noon.\n", encoding="utf-8")
    (root / "b-empty.txt").write_bytes(b"")  # skipped: a row all the same
    write_long_pdf(root / "c-long.pdf", pages=64)  # split for two workers
    write_long_pdf(root / "d-short.pdf", pages=20)
    (root / "e-old.doc").write_bytes(b"\xd0\xcf\x11\xe0" + b"\0" * 600)  # legacy Word: skipped with a hint
    return root


def test_two_workers_and_a_split_pdf_give_one_workers_rows_in_walk_order(docs):
    walked = list(iter_sources([docs], root=docs))
    one = [r.to_dict() for r in audit_sources(walked, workers=1)]
    two = [r.to_dict() for r in audit_sources(walked, workers=2)]
    assert two == one
    assert [r["source"] for r in two] == [getattr(s, "doc_id", "") or str(s.path) for s in walked]
    assert {r["source"]: r["status"] for r in two}["c-long.pdf"] in ("ok", "warn")
    assert next(r for r in two if r["source"] == "c-long.pdf")["pages"] == 64


def test_the_long_pdf_fans_out_for_two_workers_only(docs):
    long = next(s for s in iter_sources([docs], root=docs) if isinstance(s, SourceFile) and s.doc_id == "c-long.pdf")
    assert isinstance(AuditSource(2)(long), Fanout)
    assert isinstance(AuditSource(1)(long), AuditRow)
