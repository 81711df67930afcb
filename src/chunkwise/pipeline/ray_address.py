"""Where a ``--ray-address`` points, and whether anything answers there: checked before a run starts,
because ray.init retries an unreachable head for minutes without a word."""
from __future__ import annotations

from chunkwise.errors import ConfigError

CONNECT_SECONDS = 10.0  # a head node answers a TCP connection in milliseconds; ray.init itself waits minutes


def endpoint(address: str) -> tuple[str, int] | None:
    """(host, port) of ``HOST:PORT``, ``[IPv6]:PORT`` or ``ray://HOST[:PORT]`` (Ray's default ports);
    None for Ray's own words (``auto``, ``local``), which name no host to try."""
    client = address.startswith("ray://")
    rest = address[len("ray://"):] if client else address
    if not client and rest in ("auto", "local"):
        return None
    rest = rest.split("/", 1)[0]
    host, sep, port = rest.rpartition(":")
    if not sep or host.endswith(":") or (host.count(":") and not host.startswith("[")):
        host, port = rest, ""
    host = host.strip("[]")
    if not port:
        return host, 10001 if client else 6379
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--ray-address {address}: {port!r} is not a port; give HOST:PORT or ray://HOST:PORT")
    return host, int(port)


def check_reachable(address: str, seconds: float = CONNECT_SECONDS) -> None:
    """Refuse an address nothing answers at, before any work: ray.init retries an unreachable head
    for minutes (a closed port included) and would hold the run without a word."""
    import socket

    where = endpoint(address)
    if where is None:
        return
    try:
        socket.create_connection(where, timeout=seconds).close()
    except OSError as exc:
        why = f"no answer within {seconds:g} s" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise ConfigError(f"cannot reach the Ray cluster at {address} ({why}); check "
                          f"--ray-address (HOST:PORT of `ray start --head`), or drop it to start a local one") from None
