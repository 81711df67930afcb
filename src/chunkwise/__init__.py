"""chunkwise: retrieval units with exact offsets, hard size caps and evidence.

Only light modules are imported here; tokenizers and other heavy libraries load
lazily when a sizer that needs them is built.
"""
from chunkwise.api import chunk_document, chunk_file, chunk_text, evaluate, make_chunker, plan, search
from chunkwise.config import ChunkConfig
from chunkwise.errors import ChunkwiseError, ConfigError, DependencyError, InputError
from chunkwise.types import Chunk, Document, Page

__all__ = [
    "Chunk",
    "Document",
    "Page",
    "ChunkConfig",
    "ChunkwiseError",
    "ConfigError",
    "DependencyError",
    "InputError",
    "chunk_document",
    "chunk_file",
    "chunk_text",
    "evaluate",
    "make_chunker",
    "plan",
    "search",
]
__version__ = "0.1.0"
