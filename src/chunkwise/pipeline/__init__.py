"""Ingestion in three stages with one-way data (see README, "Layout"):

    walk ──► prepare (pure, per source) ──► embed (across documents) ──► write (per document)
             executors.Executor.map          embed.EmbedStage            write.WriteStage -> store

*prepare* (``prepare.Preparer``) is a picklable callable from a ``PrepareTask`` to ``Prepared``
records (or a ``PrepareFailure``); it never touches the store, so ``ingest(..., executor=...)``
can run it in worker processes. The executor seam is ``executors.Executor``: ``map(fn, items)``
returning results in input order, pulling items lazily.
"""
from chunkwise.pipeline.executors import Executor, InlineExecutor
from chunkwise.pipeline.ingest import ingest
from chunkwise.pipeline.prepare import Prepared, PrepareFailure, Preparer, PrepareSettings, PrepareTask
from chunkwise.pipeline.write import IngestStats

__all__ = ["Executor", "IngestStats", "InlineExecutor", "PrepareFailure", "PrepareSettings", "PrepareTask", "Prepared",
           "Preparer", "ingest"]
