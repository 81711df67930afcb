"""Hostile work items for the executor tests, in a module light to import: every replacement
worker imports it to unpickle ``task``."""
from __future__ import annotations

import functools
import os
import time
import zlib

from chunkwise.chunking.markdown import parse_markdown

NESTED = "> " * 60_000 + "deep\n"                       # 120 KB: markdown-it-pyrs overflows its stack
PANIC = "| a |\n|---|\n| The regex [^`]+ matches. |\n"  # markdown-it-pyrs: index out of bounds (a BaseException)
GOOD = [f"# Title {i}\n\nSome text {i}.\n\n## Part\n\n- a\n- b {i}\n" for i in range(6)]


@functools.lru_cache(maxsize=1)
def bomb() -> tuple[str, bytes]:
    """2.3 MB of zlib inflating to 512 MiB (made once, in the test process; workers get it as an item)."""
    z, block = zlib.compressobj(1), b"\0" * (1 << 20)
    return ("inflate", b"".join(z.compress(block) for _ in range(512)) + z.flush())


parse_rs = functools.partial(parse_markdown, backend="rs")


def task(item):
    """Good items parse Markdown; named bad ones misbehave the way real inputs do."""
    if item == "hang":
        while True:
            pass
    if item == "pid":
        return os.getpid()
    if item == "sleep":
        time.sleep(3600)
    if isinstance(item, tuple) and item[0] == "inflate":
        return len(zlib.decompress(item[1]))
    if item == "grow":
        hog = []
        while True:
            hog.append(bytearray(16 << 20))
    if item == "raise":
        raise ValueError("bad front matter\nsecond line")
    if item == "exit":
        os._exit(3)
    if item == "unpicklable":
        return lambda: None
    return parse_rs(item)


class Ballast:
    """A worker that holds ``mb`` MB from its warm-up on (a loaded model, say), then allocates
    ``item`` MB for an item: the memory limit is the worker's whole address space, ballast included."""

    def __init__(self, mb: int) -> None:
        self.mb, self.held = mb, None

    def warm_up(self) -> None:
        self.held = bytearray(self.mb << 20)

    def __call__(self, item: int) -> int:
        return len(bytearray(item << 20))


class Unloadable:
    """A function whose warm-up refuses its setting (a tokenizer file that does not load)."""

    def warm_up(self) -> None:
        from chunkwise.errors import ConfigError

        raise ConfigError("tokenizer x.json: not a usable Hugging Face tokenizer.json")

    def __call__(self, item):
        return item
