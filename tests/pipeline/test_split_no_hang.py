"""Regression: ``chunkwise ingest --workers 2`` with a split PDF among other PDFs hung (the pool's
feeder blocked sending the split PDF's join, which carries every page's scan, to a worker that was
itself blocked sending a document back). With the workers' socket buffers shrunk to 4 KB every
answer and every join fills its socket, so the cycle was certain; now the feeder never blocks on a
send (sandbox/outbox.py). The run is in a thread with a deadline: a hang fails the test (its
workers are then killed). The store is the one a single worker builds."""
from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path

import pytest
from no_hang import tiny_socket_buffers, within

pytest.importorskip("pypdf")
pytest.importorskip("fpdf")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "extract"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from pdf_fixtures import write_long_pdf  # noqa: E402
from test_split_ingest import CONFIG, NOW, store  # noqa: E402

from chunkwise.embed.hashing import HashingEmbedder  # noqa: E402
from chunkwise.pipeline import ingest  # noqa: E402
from chunkwise.sandbox import Limits  # noqa: E402

DEADLINE = 300.0  # seconds; the run takes ~20 s on a loaded machine


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    root = tmp_path_factory.mktemp("split-hang")
    write_long_pdf(root / "long.pdf", pages=64)  # split among the workers
    for i in range(6):  # each sent back as tens of KB while the join may be on its way
        write_long_pdf(root / f"report{i}.pdf", pages=12 + i)
    return root


def test_a_split_pdf_among_other_pdfs_does_not_hang_two_workers(docs, tmp_path):
    kw = dict(embedder=HashingEmbedder(), acl=("staff",), now=NOW, limits=Limits(memory_mb=1024, seconds=None))

    def unstick():
        for child in multiprocessing.active_children():
            child.kill()

    with tiny_socket_buffers():
        two = within(DEADLINE, lambda: ingest([docs], tmp_path / "two.db", CONFIG, workers=2, **kw), unstick,
                     "ingest with two workers hung on a split PDF among other PDFs")
    one = ingest([docs], tmp_path / "one.db", CONFIG, workers=1, **kw)
    assert not one.errors and one.added > 200
    assert two.to_dict() == one.to_dict()
    assert store(tmp_path / "two.db") == store(tmp_path / "one.db")
