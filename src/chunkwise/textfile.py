"""Small text files named on the command line (config, access map, tokens, grid, golden set), read
with a bound: ``/dev/zero``, a huge file or a binary one is one line that says what was wrong, never
a multi-gigabyte read or a decoding traceback."""
from __future__ import annotations

import os

from chunkwise.errors import ConfigError

MiB = 1024 * 1024
CONFIG_LIMIT = 16 * MiB  # config, --acl-map, --tokens, --grid: a few kilobytes in practice
GOLDEN_LIMIT = 256 * MiB  # a golden set: hundreds of thousands of questions


def read_bytes(path: str | os.PathLike, what: str, limit: int = CONFIG_LIMIT) -> bytes:
    """At most ``limit`` bytes of ``path`` (a file, or a pipe such as ``<(...)``); more is refused
    after reading ``limit + 1`` bytes, so a device that never ends costs no more than that."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except IsADirectoryError:
        raise ConfigError(f"{what} {os.fspath(path)} is a folder; give a file") from None
    except OSError as exc:
        raise ConfigError(f"{what} {os.fspath(path)}: cannot read it ({exc.strerror or exc})") from exc
    if len(data) > limit:
        raise ConfigError(f"{what} {os.fspath(path)}: larger than {limit // MiB} MiB; this file is expected to be "
                          f"small text (check the path)")
    return data


def read_text(path: str | os.PathLike, what: str, limit: int = CONFIG_LIMIT) -> str:
    """``read_bytes`` decoded as UTF-8 (a leading byte order mark is dropped)."""
    data = read_bytes(path, what, limit)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{what} {os.fspath(path)}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                          f"{exc.start}); save it as UTF-8") from None
