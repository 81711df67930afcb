"""Accepted connections have Nagle's algorithm off (a response's head and body are two writes:
with Nagle on, the body waited for the client's delayed ACK, 44 ms a request)."""
import asyncio
import socket

import pytest

pytest.importorskip("uvicorn")

from uvicorn.config import Config  # noqa: E402
from uvicorn.server import ServerState  # noqa: E402

from chunkwise.serve.connections import protocol  # noqa: E402
from chunkwise.serve.start import listen  # noqa: E402


async def _app(scope, receive, send):  # pragma: no cover - never called: no request is sent
    raise AssertionError


def test_the_served_protocol_turns_nagle_off_on_every_accepted_connection():
    async def main():
        config = Config(app=_app, log_level="error")
        config.load()
        state = ServerState()
        sock = listen("127.0.0.1", 0)
        assert sock.proto == 0  # how the port is opened: asyncio would leave Nagle on by itself
        guarded = protocol()
        server = await asyncio.get_running_loop().create_server(
            lambda: guarded(config=config, server_state=state, app_state={}), sock=sock)
        port = sock.getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(100):
            if state.connections:
                break
            await asyncio.sleep(0.01)
        (conn,) = state.connections
        accepted = conn.transport.get_extra_info("socket")
        flag = accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        writer.close()
        server.close()
        await server.wait_closed()
        return flag

    assert asyncio.run(main()) != 0
