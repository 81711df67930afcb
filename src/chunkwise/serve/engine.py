"""The search workers: a few threads, each with its own Retriever over the store.

A SQLite connection may only be used by the thread that opened it, so each worker opens its own
(read-only) Retriever; they share the query model (one copy; ONNX Runtime and the hashing embedder
may be called from several threads) and the in-memory dense index (``IndexCache``: one copy of the
vectors, rebuilt once when the store's generation moves). A heavy query occupies one worker while
the others answer light ones; SQLite and ONNX Runtime run without the GIL, so threads overlap.

Two lanes: a job is light or heavy (``cost.py`` predicts which from the request), and heavy jobs
are admitted to at most ``workers - 1`` workers at a time, so with two or more workers one is always
free for light jobs: a client sending wide queries back to back cannot queue light callers behind
seconds of its work. A free worker takes a waiting light job first, then a heavy one if a heavy
slot is free. (With one worker there is no reserve: heavy and light share it in arrival order.)

Every job has a time limit, counted from when a worker takes it: SQLite's progress handler (on
PostgreSQL, ``statement_timeout``) stops the running statement once it has passed
(``QueryTimeout``, answered 503), so a query that would
scan for minutes holds a worker for seconds. Jobs beyond what the workers can start soon are
refused at once (``Busy``, 503) instead of queueing without bound. The event loop never waits on a
worker: /health reads the store's generation on a thread of its own.
"""
from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Sequence

from chunkwise import api
from chunkwise.errors import StoreError, StoreLost, StoreTimeout

CORES = os.cpu_count() or 1
WORKERS = max(2, min(4, CORES))
MAX_WORKERS = 64
QUERY_SECONDS = 10.0
QUEUE_PER_WORKER = 16  # waiting jobs per worker before new ones are refused (Busy)


class QueryTimeout(Exception):
    """A job ran past its time limit and was stopped."""


class Busy(Exception):
    """Every worker is taken and the queue is full."""


def os_thread_name(name: str) -> None:
    """Give this thread ``name`` in the operating system too (Linux: 15 bytes), so ``top -H`` and
    per-thread CPU readings (/proc/PID/task/*/comm; benchmarks/serve.py) tell the search workers
    from the event loop. Where the C library lacks the call, nothing happens."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.pthread_self.restype = ctypes.c_void_p  # a pointer-sized handle, not the default int
        libc.pthread_setname_np.argtypes = (ctypes.c_void_p, ctypes.c_char_p)
        libc.pthread_setname_np(libc.pthread_self(), name.encode()[:15])
    except (OSError, AttributeError, TypeError):
        pass


def serving_embedder(embedder):
    """The query model set up for a server: ONNX Runtime runs each query on the calling worker's
    thread alone, without a pool of its own that spins between runs. The search workers are the
    parallelism; a pool per call put more busy threads on the cores the workers need (under 8
    clients its thread took ~25 ms of CPU per hybrid request: benchmarks/serve_threads.py)."""
    from chunkwise.embed.onnx import OnnxMiniLMEmbedder

    if isinstance(embedder, OnnxMiniLMEmbedder) and embedder._session is None:
        embedder.threads, embedder.spinning = 1, False
    return embedder


def store_lost(exc: BaseException, reopening: bool = False) -> StoreLost | None:
    """A one-line ``StoreLost`` for the caller when ``exc`` is a broken PostgreSQL connection (or,
    ``reopening``, a failed attempt to open a new one), else None. The cause (it names the server's
    address) goes to the server's log, one line, not to the caller."""
    from chunkwise.store import server_lost

    if server_lost(exc) is None and not (reopening and isinstance(exc, StoreError)):
        return None
    reason = " ".join(str(exc).split())[:300] or type(exc).__name__
    print(f"chunkwise serve: the PostgreSQL store is unreachable ({reason}); reconnecting on the next request",
          file=sys.stderr, flush=True)
    return StoreLost("cannot reach the PostgreSQL store; the server reconnects on the next request: retry shortly")


class Engine:
    def __init__(self, db: str, *, bm25: str = "fts5", generator_tokenizer: str | None = None,
                 workers: int = WORKERS, query_seconds: float = QUERY_SECONDS, **ranking: Any) -> None:
        """``ranking``: the Retriever's field_weights and fusion. ``workers``: search threads;
        ``query_seconds``: the time limit of one job."""
        from chunkwise.retrieve.store import IndexCache
        from chunkwise.store.sqlite.threads import without_memory_statistics

        if not 1 <= workers <= MAX_WORKERS or query_seconds <= 0:
            raise api.ConfigError(f"--search-workers must be 1-{MAX_WORKERS} and --query-timeout positive "
                                  f"(got {workers}, {query_seconds:g})")
        # Before the workers open their connections: SQLite's process-wide allocation counter made
        # two concurrent searches cost a third more CPU each (store/sqlite/threads.py). Done only
        # when nothing of SQLite is in use yet (the server's start); elsewhere nothing changes.
        self.sqlite_statistics_off = without_memory_statistics()
        self.db = db
        self.query_seconds = query_seconds
        self.workers = workers
        self.heavy_slots = max(1, workers - 1)
        self.max_waiting = workers * QUEUE_PER_WORKER  # per lane
        self._lanes: dict[bool, deque] = {False: deque(), True: deque()}  # heavy? -> waiting jobs
        self._heavy_running = 0
        self._running = 0  # jobs the workers are running now (spare_core reads it)
        self._closing = False
        self._ready = threading.Condition()
        self._local = threading.local()
        self._threads: list[threading.Thread] = []
        self.cache = IndexCache()
        options = dict(bm25=bm25, generator_tokenizer=generator_tokenizer, index_cache=self.cache, **ranking)
        try:
            self.primary = self._start(db, options)  # the first opens the model; the others share it
            self.embedder = serving_embedder(self.primary.embedder)  # before the model loads (warm)
            for _ in range(workers - 1):
                self._start(db, {**options, "embedder": self.embedder})
        except BaseException:
            self.close()
            raise
        self.model = self.embedder.name if self.embedder is not None else None
        self.dim = self.embedder.dim if self.embedder is not None else None
        self._status = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chunkwise-status")
        self._status_store = None

    @property
    def retriever(self):
        """This worker's Retriever (the first worker's outside the workers: a PostgreSQL store's
        connection may be used from any thread, a SQLite store's only from its own)."""
        return getattr(self._local, "retriever", None) or self.primary

    def _start(self, db: str, options: dict):
        opened: Future = Future()
        thread = threading.Thread(target=self._work, args=(db, options, opened), daemon=True,
                                  name=f"chunkwise-search-{len(self._threads)}")
        self._threads.append(thread)
        thread.start()
        return opened.result()

    def _work(self, db: str, options: dict, opened: Future) -> None:
        os_thread_name(threading.current_thread().name)
        try:
            retriever = api.open_retriever(db, **options)
        except BaseException as exc:
            opened.set_exception(exc)
            return
        self._local.retriever = self._own(retriever)
        self._local.reopen = lambda: self._own(api.open_retriever(db, **{**options, "embedder": self.embedder}))
        opened.set_result(retriever)
        try:
            while True:
                job = self._next()
                if job is None:
                    return
                heavy, (fn, args, kwargs, future, limited) = job
                try:
                    if not future.set_running_or_notify_cancel():
                        continue
                    try:
                        result = self._run(fn, args, kwargs, limited)
                    except BaseException as exc:
                        future.set_exception(exc)
                    else:
                        future.set_result(result)
                finally:
                    with self._ready:
                        self._running -= 1
                        if heavy:
                            self._heavy_running -= 1
                            self._ready.notify()  # a worker waiting with only heavy jobs queued may take one now
        finally:
            self._drop()

    def _own(self, retriever):
        """A worker's Retriever splits a hybrid search over a second thread only while fewer jobs
        run than there are cores: with every core busy with searches the split only adds a thread
        start and GIL hand-overs to each request (benchmarks/serve.py, 8 clients)."""
        retriever.spare_core = lambda: self._running < CORES
        return retriever

    def _run(self, fn: Callable[..., Any], args: tuple, kwargs: dict, limited: bool) -> Any:
        """One job on this worker's Retriever. A server store's connection that broke (PostgreSQL
        stopped or restarted) is dropped and opened again, and the job (a read) runs once more on
        the new one; if the store cannot be reached again, ``StoreLost`` (answered 503 on one line)
        and the next job tries again, so the server recovers by itself once PostgreSQL is back."""
        for attempt in (1, 2):
            retriever = self._local.retriever
            if retriever is None:
                try:
                    retriever = self._local.retriever = self._local.reopen()
                except Exception as exc:
                    lost = store_lost(exc, reopening=True)
                    if lost is None:
                        raise
                    raise lost from None
            try:
                if limited:  # a rebuild after an ingest is not the query's work: outside its limit
                    retriever.warm()
                with self._limited(retriever) if limited else nullcontext():
                    return fn(*args, **kwargs)
            except Exception as exc:
                lost = store_lost(exc)
                if lost is None:
                    raise
                self._drop()
                if attempt == 2:
                    raise lost from None
        raise AssertionError("unreachable")

    def _drop(self) -> None:
        """Close this worker's Retriever (its connection may be dead already) and forget it."""
        retriever, self._local.retriever = getattr(self._local, "retriever", None), None
        if retriever is not None:
            try:
                retriever.close()
            except Exception:  # a dead connection may fail to close: it is gone either way
                pass

    def _next(self) -> tuple[bool, tuple] | None:
        """The next job for a free worker, waiting until there is one it may take: a light job
        first, else a heavy one while fewer than ``heavy_slots`` run. None: the engine closes."""
        with self._ready:
            while True:
                if self._lanes[False]:
                    self._running += 1
                    return False, self._lanes[False].popleft()
                if self._lanes[True] and self._heavy_running < self.heavy_slots:
                    self._heavy_running += 1
                    self._running += 1
                    return True, self._lanes[True].popleft()
                if self._closing:
                    return None
                self._ready.wait()

    @contextmanager
    def _limited(self, retriever):
        """Run one job under the time limit: the store stops the statement running when it passes
        (``Store.time_limit``: SQLite's progress handler, PostgreSQL's ``statement_timeout``)."""
        try:
            with retriever.store.time_limit(self.query_seconds):
                yield
        except StoreTimeout:
            raise self._timeout() from None

    def _timeout(self) -> QueryTimeout:
        return QueryTimeout(f"the search ran past its {self.query_seconds:g} s limit and was stopped; ask a narrower "
                            "question or a smaller k")

    def warm(self) -> None:
        """Load the model and build the in-memory index now, so the first caller does not wait
        seconds for them (and a broken model fails at start, not on the first query). Not under
        the per-query time limit: at 100k chunks on a loaded machine this takes longer than one
        query may, and a server that cannot start is no safer. Then every worker reads its own
        connection's FTS5 row sizes (~0.5 s of CPU at 100k chunks), which its first query would
        otherwise pay."""
        def run() -> None:
            if self.embedder is not None:
                self.embedder.embed(["warm up"])
                self.retriever.warm()
        self._queue(False, True, run, (), {}).result()
        together = threading.Barrier(self.workers)

        def each() -> None:
            try:
                self.retriever.warm()
            finally:
                together.wait()  # this worker holds its job until every other worker has taken one
        for job in [self._queue(False, True, each, (), {}) for _ in range(self.workers)]:
            job.result()

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
        """Queue a light job (the lane every job takes unless it is marked heavy)."""
        return self.submit_in(False, fn, *args, **kwargs)

    def submit_in(self, heavy: bool, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
        """Queue a job in the light or the heavy lane; Busy when that lane's queue is full."""
        return self._queue(heavy, False, fn, args, kwargs)

    def _queue(self, heavy: bool, unlimited: bool, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Future:
        future: Future = Future()
        with self._ready:
            lane = self._lanes[bool(heavy)]
            if len(lane) >= self.max_waiting:
                kind = "heavy" if heavy else "light"
                raise Busy(f"the search workers are busy and {len(lane)} {kind} requests wait; retry shortly")
            lane.append((fn, args, kwargs, future, not unlimited))
            self._ready.notify()
        return future

    async def call(self, fn: Callable[..., Any], *args: Any, heavy: bool = False, **kwargs: Any) -> Any:
        return await asyncio.wrap_future(self.submit_in(heavy, fn, *args, **kwargs))

    async def status(self) -> dict:
        """The store's generation and each index's state, read off the workers (for /health)."""
        return await asyncio.wrap_future(self._status.submit(self._read_status))

    def _read_status(self) -> dict:
        for attempt in (1, 2):  # a broken server connection is opened again, as the workers do
            try:
                if self._status_store is None:
                    self._status_store = api.open_store(self.db)
                generation = self._status_store.generation()
                break
            except Exception as exc:
                lost = store_lost(exc, reopening=self._status_store is None)
                if lost is None:
                    raise
                store, self._status_store = self._status_store, None
                if store is not None:
                    try:
                        store.close()
                    except Exception:
                        pass
                if attempt == 2:
                    raise lost from None
        r = self.primary
        memory = "in the store (always current)" if r.native else self.cache.state(generation)
        indexes = {"bm25": "in the store (always current)" if r.bm25_backend == "fts5" or r.native else memory}
        if self.embedder is not None:
            indexes["dense"] = memory
        return {"generation": generation, "indexes": indexes}

    # -- run on a worker ------------------------------------------------------------------------
    def search(self, query: str, groups: Sequence[str], **options: Any) -> dict:
        return self.retriever.search(query, groups, **options).to_dict()

    def document(self, doc_id: str, groups: Sequence[str]) -> dict | None:
        doc = api.visible_document(self.retriever, doc_id, groups)
        return None if doc is None else doc.to_dict()

    def documents(self, groups: Sequence[str], **options: Any):
        return api.visible_documents(self.retriever, groups, **options)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embedder.embed(list(texts))

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text as the model reads them (special tokens included); embedders without a
        tokenizer of their own (hashing) count whitespace-separated words."""
        counter = getattr(self.embedder, "count_tokens", None)
        if counter is not None:
            return list(counter(list(texts)))
        return [len(t.split()) for t in texts]

    def close(self) -> None:
        """Stop the workers once the jobs already queued are done."""
        ready = getattr(self, "_ready", None)
        if ready is not None:
            with ready:
                self._closing = True
                ready.notify_all()
        for thread in self._threads:
            thread.join(timeout=30)
        status = getattr(self, "_status", None)
        if status is not None:
            def shut() -> None:
                if self._status_store is not None:
                    self._status_store.close()
            status.submit(shut).result()
            status.shutdown(wait=True)
