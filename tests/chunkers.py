"""The chunker alone, for tests of chunking itself: ``Chunk``s with offsets into the text given
(level, kind, section, rows...). The doors (``chunkwise.chunk_text``/``chunk_file``) return the
records ingest would store instead; those are tested in tests/pipeline/test_doors.py."""
from chunkwise.api import make_chunker


def chunk_text(text: str, config=None, **options):
    return make_chunker(config, **options).chunk(text)
