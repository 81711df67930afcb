"""``--include`` / ``--exclude`` patterns, matched against a file's path relative to its root.

The rules are gitignore's, which is what people type: ``*`` and ``?`` stay inside one path segment,
``**`` spans segments (``docs/**/*.md``, ``**/drafts/**``), ``[abc]`` is a class, and a pattern
without a ``/`` matches the name at any depth (``*.md``, ``node_modules``). A pattern that matches a
folder matches everything in it, so an excluded folder is never walked.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from chunkwise.errors import ConfigError


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """The regex of one pattern (anchored; see the module rules)."""
    pat = pattern.strip()
    if not pat:
        raise ConfigError("an --include/--exclude pattern is empty; give a glob such as '*.md' or 'drafts/**'")
    anchored = "/" in pat.rstrip("/")
    pat = pat.strip("/") if anchored else pat.rstrip("/")
    out, i, n = [], 0, len(pat)
    while i < n:
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and (j := pat.find("]", i + 2)) != -1:
            body = pat[i + 1 : j]
            body = "^" + body[1:] if body[0] in "!^" else body
            out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
            i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    try:
        return re.compile(f"{prefix}{''.join(out)}(?:/.*)?", re.S)
    except re.error as exc:
        raise ConfigError(f"--include/--exclude pattern {pattern!r} is not a valid glob ({exc})") from exc


@dataclass(frozen=True)
class PathFilter:
    """Which relative paths to keep: matching some ``include`` (or any, when there is none) and no
    ``exclude``. Patterns are validated at construction."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("include", "exclude"):
            value = getattr(self, name)
            if isinstance(value, str):
                value = (value,)
            if not all(isinstance(p, str) for p in value):
                raise ConfigError(f"{name} patterns must be strings (globs such as '*.md'), got {value!r}")
            object.__setattr__(self, name, tuple(value))
            for p in value:
                compile_glob(p)

    def __bool__(self) -> bool:
        return bool(self.include or self.exclude)

    def excluded(self, rel: str) -> bool:
        """``rel`` (a file or a folder) matches an exclude pattern."""
        return any(compile_glob(p).fullmatch(rel) for p in self.exclude)

    def keeps(self, rel: str) -> bool:
        """A file at ``rel`` is read."""
        if self.excluded(rel):
            return False
        return not self.include or any(compile_glob(p).fullmatch(rel) for p in self.include)
