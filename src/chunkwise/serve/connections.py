"""Connection limits uvicorn lacks: a deadline for the request head, and a cap on open connections.

uvicorn times out only an idle keep-alive connection after a response; a connection that sends
nothing, or trickles a header a byte at a time, is held for ever, so a client can hold thousands
(issue 25: 3,000 half-open sockets). Here every connection must deliver a complete request head
within ``head_seconds`` of opening (or of its previous response), and when more than
``max_connections`` are open the oldest one still waiting for its head is closed to make room,
so idle sockets can never crowd out callers. The request body's own deadline is the Guard's
(middleware.py); uvicorn's ``h11_max_incomplete_event_size`` bounds the head's size.
"""
from __future__ import annotations

import resource
import socket
from collections import OrderedDict

HEAD_SECONDS = 10.0
BODY_PER_HEAD = 3  # the body's deadline is this many times the head's (--read-timeout)
MAX_CONNECTIONS = 4096
MAX_HEAD_BYTES = 16 * 1024  # h11's own default, made explicit: a request head above it is a 400
KEEP_ALIVE_SECONDS = 5


def no_delay(transport) -> None:
    """Turn off Nagle's algorithm on an accepted TCP connection. asyncio does so only for sockets
    created with ``proto=IPPROTO_TCP``; ``socket.create_server`` (how ``listen`` opens the port) leaves
    proto 0, so without this a response written in two parts (head, then body) waited for the
    client's delayed ACK: 44 ms on every request, even ``GET /health`` (benchmarks/serve.py)."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def protocol(head_seconds: float = HEAD_SECONDS, max_connections: int = MAX_CONNECTIONS):
    """uvicorn's h11 protocol with the head deadline and the connection cap (one class per server:
    the queue of connections waiting for a head is shared by its connections)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    waiting: OrderedDict = OrderedDict()  # connections without a request in flight, oldest first

    class Guarded(H11Protocol):
        _head_timer = None

        def connection_made(self, transport) -> None:
            no_delay(transport)
            super().connection_made(transport)
            self._await_head()
            if len(self.connections) > max_connections:
                victim = next(iter(waiting))  # this one at the latest: it waits for its head too
                victim._close()

        def _await_head(self) -> None:
            self._stop_head_timer()
            waiting[self] = None
            self._head_timer = self.loop.call_later(head_seconds, self._close)

        def _stop_head_timer(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            waiting.pop(self, None)

        def _close(self) -> None:
            self._stop_head_timer()
            if not self.transport.is_closing():
                self.transport.close()

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not None and not self.cycle.response_complete:
                self._stop_head_timer()  # a request head arrived: the app's (and the Guard's) turn

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
                self._await_head()

        def connection_lost(self, exc) -> None:
            self._stop_head_timer()
            super().connection_lost(exc)

    return Guarded


def raise_open_files(wanted: int) -> int:
    """Raise this process's soft limit of open files towards ``wanted`` (never above the hard
    limit): each connection is a file. Returns the limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return target
    return soft
