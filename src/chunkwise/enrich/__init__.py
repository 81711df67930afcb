"""Chunk -> ChunkRecord: ids, provenance, access tags, timestamps, embed key and quality."""
from chunkwise.enrich.records import ChunkRecord, build_records

__all__ = ["ChunkRecord", "build_records"]
