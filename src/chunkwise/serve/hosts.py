"""Which ``Host`` names a server answers to: the defence against DNS rebinding.

A web page on any site can make the browser send requests to ``127.0.0.1:8080`` under a name the
attacker controls (rebinding that name to the loopback address after the page has loaded): the
browser then treats the server's answers as the attacker's own origin. The one thing such a request
cannot fake is the ``Host`` header, which carries the attacker's name. So a server answers only
the names it was configured with: the loopback names, the address it listens on, and whatever the
operator adds (``--allowed-host``). Pure: no framework imports.
"""
from __future__ import annotations

import ipaddress

from chunkwise.api import ConfigError

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
UNSPECIFIED = ("0.0.0.0", "::", "")


def normalise(name: str) -> str:
    """``LocalHost.`` -> ``localhost``; ``[::1]`` -> ``::1``; addresses in their canonical form."""
    name = name.strip().lower().rstrip(".")
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return name


def host_name(header: str) -> str | None:
    """The name in a ``Host`` header value (port dropped), or None when it is not a valid one."""
    value = header.strip()
    if not value or any(c.isspace() or c in "/@?#\\" for c in value):
        return None
    if value.startswith("["):  # [v6]:port
        end = value.find("]")
        if end < 0 or (value[end + 1:] and not (value[end + 1] == ":" and value[end + 2:].isdigit())):
            return None
        return normalise(value[: end + 1])
    name, colon, port = value.rpartition(":") if value.count(":") == 1 else (value, "", "")
    if colon and not port.isdigit():
        return None
    return normalise(name if colon else value) or None


def check_name(name: str) -> str:
    """An ``--allowed-host`` value: one host name or address, no port, no scheme, no wildcard."""
    out = host_name(name)
    if out is None or "*" in name or "," in name or out != normalise(name):
        raise ConfigError(f"--allowed-host {name!r}: give one host name or address as clients write it in the URL "
                          "(e.g. --allowed-host search.example.com), without scheme, port or wildcard")
    return out


def is_loopback_name(name: str) -> bool:
    name = normalise(name)
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def allowed_hosts(listen_host: str, extra: tuple[str, ...] = ()) -> frozenset[str]:
    """The loopback names, the listening address unless it is a wildcard, and ``extra``."""
    names = {*LOOPBACK_NAMES, *(check_name(x) for x in extra)}
    if normalise(listen_host) not in UNSPECIFIED:
        names.add(normalise(listen_host))
    return frozenset(names)


def permitted_host(headers: list[tuple[bytes, bytes]], allowed: frozenset[str]) -> bool:
    """Exactly one ``Host`` header naming an allowed host (HTTP/1.0 without one is refused too)."""
    values = [v for k, v in headers if k.lower() == b"host"]
    if len(values) != 1:
        return False
    try:
        name = host_name(values[0].decode("ascii"))
    except UnicodeDecodeError:
        return False
    return name is not None and name in allowed
