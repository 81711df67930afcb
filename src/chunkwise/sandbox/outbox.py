"""Messages to one worker, written only as far as its socket takes them: the feeder never blocks on a send.

Why: a worker answers an item with one blocking send (a prepared document can be megabytes) and
reads its next item only after that. The pool's feeder thread is the only reader of the workers'
answers; when it blocked sending a big item (a split PDF's ``Join`` carries every page's scan) to a
worker that was itself blocked sending its answer, neither side read again: ``chunkwise ingest
--workers 2`` on the office files of ``../shared/data`` hung with both workers in a socket send
and the main process waiting. Through an ``Outbox`` a send takes what the socket accepts now; the
rest waits here until the feeder's wait says the socket is writable, and meanwhile the feeder keeps
reading every answer. So the feeder always drains, whatever the sizes and the socket buffers.

The bytes are ``multiprocessing.connection.Connection``'s wire format (a length header, then the
pickle), so the worker reads them with ``conn.recv()``. POSIX file descriptors only.
"""
from __future__ import annotations

import os
import struct
from multiprocessing.reduction import ForkingPickler


def frame(obj) -> tuple[bytes, memoryview]:
    """``obj`` as ``Connection.send`` writes it: the header and the pickle. Raises what pickling raises."""
    data = ForkingPickler.dumps(obj)
    n = len(data)
    head = struct.pack("!i", n) if n <= 0x7FFFFFFF else struct.pack("!i", -1) + struct.pack("!Q", n)
    return head, data


class Outbox:
    """The bytes queued for one connection's file descriptor ``fd`` (owned by its ``Connection``;
    only the feeder thread reads or writes it, so switching it to non-blocking for a write is safe)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pending = bytearray()  # deleting from the front of a bytearray does not copy the rest

    def put(self, obj) -> None:
        """Queue ``obj``; pickling errors propagate and leave the queue as it was."""
        head, data = frame(obj)
        self.pending += head
        self.pending += data

    def flush(self) -> bool:
        """Write what the socket takes without waiting; True when nothing is left. Raises
        ``OSError`` (``BrokenPipeError``) when the worker's end is closed: the worker is gone."""
        if not self.pending:
            return True
        os.set_blocking(self.fd, False)
        try:
            while self.pending:
                try:
                    n = os.write(self.fd, self.pending)
                except BlockingIOError:
                    break
                del self.pending[:n]
        finally:
            os.set_blocking(self.fd, True)
        return not self.pending

    def clear(self) -> None:
        self.pending.clear()
