"""The writer's batch and the pool's waits: a batch is committed while the pool makes the writer
wait, once it is ``WriteStage.IDLE_SECONDS`` old (not at every wait: a commit per small document
was a sixth of the main process's CPU), so another connection sees what was written within about
that long, and the lock is never held through a long wait."""
from __future__ import annotations

import sqlite3
import sys
import time
from pathlib import Path

from chunkwise.access import AccessTags
from chunkwise.config import ChunkConfig
from chunkwise.pipeline.prepare import Preparer, PrepareSettings, PrepareTask
from chunkwise.pipeline.write import IngestStats, WriteStage
from chunkwise.sandbox import Limits, run
from chunkwise.store.sqlite.sqlite import SQLiteStore

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sandbox"))
from hostile import GOOD, task  # noqa: E402

CONFIG = ChunkConfig(strategy="structure", size=32)


def visible(db) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM documents").fetchone()[0]
    finally:
        con.close()


def prepared(tmp_path, name: str):
    path = tmp_path / name
    path.write_text(f"# {name}\n\nThe ledger of {name} is audited each quarter by the finance team.\n", "utf-8")
    return Preparer(PrepareSettings(CONFIG, "none", AccessTags.parse(["staff"], "acl")))(
        PrepareTask(str(path), name, name, "text/markdown", "0" * 64, path.stat().st_size))


def test_a_young_batch_waits_an_old_one_is_committed_at_the_next_idle(tmp_path):
    db = tmp_path / "s.db"
    with SQLiteStore(db) as store:
        stage = WriteStage(store, root=str(tmp_path), inputs="i", now="2026-01-01T00:00:00Z", model="none",
                           embedding=False, stats=IngestStats())
        with stage.batched():
            stage.write(prepared(tmp_path, "a.md"), {})
            stage.idle()  # just written: kept open for the next documents
            assert visible(db) == 0
            stage.write(prepared(tmp_path, "b.md"), {})
            time.sleep(stage.IDLE_SECONDS + 0.05)
            assert visible(db) == 0
            stage.idle()
            assert visible(db) == 2
            stage.idle()  # nothing pending: nothing to do
        assert visible(db) == 2


def test_the_pool_calls_idle_again_while_a_wait_lasts():
    calls: list[float] = []
    start = time.monotonic()
    out = list(run(task, [GOOD[0], "sleep", GOOD[1]], workers=2, limits=Limits(memory_mb=256, seconds=1.5),
                   idle=lambda: calls.append(time.monotonic() - start)))
    assert [o.ok for o in out] == [True, False, True]
    late = [t for t in calls if t > 1.0]  # the consumer waits for "sleep" (results come in order)
    assert len(late) >= 3, calls
