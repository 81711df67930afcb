"""``--include`` / ``--exclude`` patterns, matched against a file's path relative to its root.

The rules are gitignore's, which is what people type, and are git's own as implemented by
``pathspec`` (``GitIgnoreSpec``), not a hand-written translation: ``*`` and ``?`` stay inside one
path segment, ``**`` spans segments (``docs/**/*.md``, ``**/drafts/**``), ``[abc]`` is a class, a
pattern without a ``/`` matches the name at any depth (``*.md``, ``node_modules``), a trailing ``/``
matches folders only, and ``!pattern`` takes back what an earlier pattern of the same list matched
(``--exclude 'drafts/**' --exclude '!drafts/keep.md'``). A pattern that matches a folder matches
everything in it, so an excluded folder is never walked (and, as in git, nothing inside it can be
taken back).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import pathspec

from chunkwise.errors import ConfigError


@lru_cache(maxsize=256)
def compile_spec(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """One list of patterns as git reads a .gitignore (later lines override earlier ones)."""
    for pattern in patterns:
        if not pattern.strip() or pattern.strip() == "!":
            raise ConfigError("an --include/--exclude pattern is empty; give a glob such as '*.md' or 'drafts/**'")
    try:
        return pathspec.GitIgnoreSpec.from_lines([p.strip() for p in patterns])
    except (re.error, ValueError, TypeError) as exc:
        bad = patterns if len(patterns) != 1 else patterns[0]
        raise ConfigError(f"--include/--exclude pattern {bad!r} is not a valid glob ({exc})") from None


@dataclass(frozen=True)
class PathFilter:
    """Which relative paths to keep: matching ``include`` (or any, when there is none) and not
    ``exclude``. Patterns are validated at construction."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    _specs: tuple = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        specs = []
        for name in ("include", "exclude"):
            value = getattr(self, name)
            if isinstance(value, str):
                value = (value,)
            if not all(isinstance(p, str) for p in value):
                raise ConfigError(f"{name} patterns must be strings (globs such as '*.md'), got {value!r}")
            object.__setattr__(self, name, tuple(value))
            specs.append(compile_spec(tuple(value)) if value else None)
        object.__setattr__(self, "_specs", tuple(specs))

    def __bool__(self) -> bool:
        return bool(self.include or self.exclude)

    def excluded(self, rel: str, *, folder: bool = False) -> bool:
        """``rel`` (a file, or a folder when ``folder``) matches the exclude patterns."""
        spec = self._specs[1]
        return spec is not None and spec.match_file(rel + "/" if folder and rel else rel)

    def keeps(self, rel: str) -> bool:
        """A file at ``rel`` is read."""
        if self.excluded(rel):
            return False
        spec = self._specs[0]
        return spec is None or spec.match_file(rel)
