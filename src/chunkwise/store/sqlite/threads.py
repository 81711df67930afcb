"""SQLite set up for a process whose threads search at the same time (``chunkwise serve``'s workers).

SQLite keeps memory statistics (``SQLITE_CONFIG_MEMSTATUS``, on unless the library was built
without them): every allocation it makes takes one mutex shared by the whole process. Builds
without the lookaside allocator (Debian's libsqlite3: ``OMIT_LOOKASIDE``) allocate for nearly every
row an FTS5 query visits, so two searches running on two cores take that one mutex hundreds of
thousands of times each, and every take moves its cache line to the other core or waits for it.
Measured at 100k chunks (bm25, each search in a thread of its own with its own connection): two
searches at once cost 57-61 ms of CPU each against 44-45 ms for one alone; with the statistics
off, 43-45 against 42-43 (benchmarks/serve_threads.py and benchmarks/serve.py show it served).

The statistics can be switched off only while SQLite is not initialised, and Python's ``sqlite3``
initialises it on import: so SQLite is shut down and started again, which is safe only when nothing
of it is in use. ``without_memory_statistics`` does that only when this is the process's only Python
thread (nobody can open a connection meanwhile) and SQLite holds no memory (no connection,
statement or registered extension); otherwise it changes nothing. Nothing chunkwise or Python's
``sqlite3`` does depends on the statistics (``sqlite3_memory_used``, the soft heap limit).
"""
from __future__ import annotations

import threading

_CONFIG_MEMSTATUS = 9  # sqlite3.h: SQLITE_CONFIG_MEMSTATUS (int: 0 off)
_OK = 0
_lock = threading.Lock()


def _library():
    """The SQLite library Python's ``sqlite3`` runs on (its extension module's symbols resolve to
    the shared library it links, or to the copy built into it), or None where it cannot be reached
    (a build that does not export them, no ctypes)."""
    try:
        import ctypes

        import _sqlite3

        lib = ctypes.CDLL(_sqlite3.__file__)
        for name in ("sqlite3_shutdown", "sqlite3_config", "sqlite3_initialize", "sqlite3_memory_used"):
            getattr(lib, name)
    except (ImportError, OSError, AttributeError):
        return None
    lib.sqlite3_memory_used.restype = ctypes.c_int64
    return lib


def memory_statistics_on(lib=None) -> bool | None:
    """Does SQLite count its allocations now (None: the library cannot be reached)? Read from the
    count of allocations outstanding, which stays 0 when the statistics are off: probed with one
    in-memory connection."""
    import sqlite3

    lib = lib or _library()
    if lib is None:
        return None
    probe = sqlite3.connect(":memory:")
    try:
        return lib.sqlite3_memory_used() > 0
    finally:
        probe.close()


def without_memory_statistics() -> bool:
    """Switch SQLite's memory statistics off for this process when that is safe (see the module
    doc); True when they are off afterwards. Idempotent."""
    lib = _library()
    if lib is None:
        return False
    with _lock:
        if not memory_statistics_on(lib):
            return True
        if threading.active_count() != 1 or lib.sqlite3_memory_used() != 0:
            return False  # a connection open, or a thread that may open one: leave SQLite as it is
        import ctypes

        if lib.sqlite3_shutdown() != _OK:
            return False
        lib.sqlite3_config(_CONFIG_MEMSTATUS, ctypes.c_int(0))
        lib.sqlite3_initialize()  # (the next connection would initialise it too)
        return not memory_statistics_on(lib)
