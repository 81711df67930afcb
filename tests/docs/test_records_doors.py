"""docs/guides/python.md: what ``chunk_file`` returns is what ``ingest`` stores, field by field, but
for the fields only a store has (the embedder's name and key, the ingest's clock), as the guide says."""
import shutil
from pathlib import Path

import chunkwise

ROOT = Path(__file__).resolve().parents[2]
STORE_ONLY = {"embed_model", "embed_key", "ingested_at"}


def test_chunk_file_records_are_the_stored_ones_but_for_the_store_only_fields(tmp_path):
    guide = (ROOT / "docs" / "guides" / "python.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in guide.split("### Records", 1)[0] for name in STORE_ONLY)  # the guide names them
    for name in ("release-notes.md", "maintenance-manual.pdf", "incident-runbook.md"):
        shutil.copy(ROOT / "examples" / name, tmp_path / name)
        made = [r.to_dict() for r in chunkwise.chunk_file(tmp_path / name, acl="staff")]
        chunkwise.ingest([tmp_path / name], tmp_path / "s.db", acl="staff", embedder="hashing", workers=1)
        with chunkwise.open_store(tmp_path / "s.db") as store:
            stored = sorted(store.records_of(made[0]["doc_id"]).values(), key=lambda r: r["chunk_index"])
        assert len(made) == len(stored) > 0
        for a, b in zip(made, stored):
            differ = {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)}
            assert differ <= STORE_ONLY, (name, {k: (a.get(k), b.get(k)) for k in differ - STORE_ONLY})
