"""The doors skip the lexical analysis ingest's writer needs (``PrepareSettings.lexical``): their
records must be exactly the records of a preparation that analyses, and ingest must still analyse."""
from dataclasses import replace

from chunkwise import api
from chunkwise.lexical import LexicalFields
from chunkwise.pipeline.prepare import Preparer, PrepareTask

TEXT = "# Café notes\n\nThe pages were paged twice.\n\n" + "Staff read the ledger entries. " * 120


def test_door_records_equal_an_analysing_preparation_and_carry_no_lexical_fields(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text(TEXT, encoding="utf-8")
    door = api.door_preparer(api.ChunkConfig(strategy="fixed", size=64), acl="staff")
    assert door.settings.lexical is False
    analysing = Preparer(replace(door.settings, lexical=True))
    task = PrepareTask(str(path), "notes.md", "notes.md", "text/markdown", "", path.stat().st_size)
    quiet, full = door(task), analysing(task)
    assert quiet.records == full.records and len(full.records) > 3
    assert quiet.lexical == {}
    assert set(full.lexical) == {r["chunk_id"] for r in full.records}
    first = full.records[0]
    assert full.lexical[first["chunk_id"]] == LexicalFields.of_record(first).values()
