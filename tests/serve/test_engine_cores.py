"""The engine lets a worker's hybrid search take a second thread only while a core is idle
(``Retriever.spare_core``): with as many jobs running as there are cores, it says no."""
from __future__ import annotations

import threading

import pytest

from .serving import make_store

from chunkwise.serve import engine as engine_module
from chunkwise.serve.engine import Engine


def test_spare_core_follows_the_running_jobs(tmp_path, monkeypatch):
    monkeypatch.setattr(engine_module, "CORES", 2)
    engine = Engine(str(make_store(tmp_path)), workers=3)
    try:
        assert engine.submit(lambda: engine.retriever.spare_core()).result(timeout=60) is True  # 1 of 2 cores
        together = threading.Barrier(2, timeout=60)

        def both() -> bool:
            together.wait()  # two jobs running at once: both cores taken
            seen = engine.retriever.spare_core()
            together.wait()
            return seen

        pair = [engine.submit(both) for _ in range(2)]
        assert [f.result(timeout=60) for f in pair] == [False, False]
        assert engine.submit(lambda: engine.retriever.spare_core()).result(timeout=60) is True
        assert engine._running == 0
    finally:
        engine.close()


def test_a_failed_job_still_frees_its_count(tmp_path):
    engine = Engine(str(make_store(tmp_path)), workers=2)
    try:
        def boom() -> None:
            raise ValueError("no")

        with pytest.raises(ValueError):
            engine.submit(boom).result(timeout=60)
        assert engine.submit(lambda: engine._running).result(timeout=60) == 1  # only itself
    finally:
        engine.close()


def test_the_query_model_runs_on_the_worker_thread_without_a_spinning_pool(tmp_path):
    """The served ONNX model: one intra-op thread (the calling worker's), no spinning, and the same
    vectors as the model with its default pool."""
    pytest.importorskip("onnxruntime")
    from chunkwise.embed import make_embedder

    engine = Engine(str(make_store(tmp_path, embedder="minilm-onnx-int8")), workers=2)
    try:
        engine.warm()
        options = engine.embedder._load().get_session_options()
        assert options.intra_op_num_threads == 1
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
        texts = ["How do I roll back a deploy?", "pager handover"]
        got = engine.submit(engine.embed, texts).result(timeout=120)
    finally:
        engine.close()
    want = make_embedder("minilm-onnx-int8").embed(texts)
    assert [pytest.approx(list(w), abs=1e-5) for w in want] == [list(g) for g in got]
