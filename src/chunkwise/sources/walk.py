"""Files, folders and globs -> a deterministic stream of ``SourceFile`` or ``SourceError``.

A bad file never stops the stream: it becomes a ``SourceError`` with a message saying what to do,
and the good files beside it come through exactly as they would alone. Symbolic links that lead out of
the root are reported and never read (a link to /etc or a home folder must not end up in an index).
Links to folders inside the root are not descended: the walk reaches their targets under their own
paths, which keeps doc ids unique and makes link cycles harmless.
"""
from __future__ import annotations

import functools
import os
import stat
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from chunkwise import ids
from chunkwise.errors import ConfigError
from chunkwise.sources.globs import PathFilter
from chunkwise.sources.sniff import (CODE, DOCX, HEAD_BYTES, SUFFIXES, check_docx, check_head, media_type_for,
                                     shebang_language, unsupported_message)

BLOCK = 1 << 20  # sha256 is streamed in 1 MiB blocks: memory stays flat whatever the file size
_MAGIC_CHARS = frozenset("*?[")
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_HELD = object()  # a file the caller said it holds (``held``): not yielded


@dataclass(frozen=True)
class SourceFile:
    """A readable file of a supported type. ``doc_id`` is its POSIX path relative to the root (NFC)."""

    path: Path
    doc_id: str
    media_type: str
    size: int
    sha256: str


@dataclass(frozen=True)
class SourceError:
    """A file (or folder, or pattern) that cannot be used, with a message saying what to do.
    ``skipped``: not a failure (an empty file, a type chunkwise does not read such as an image)."""

    path: Path
    doc_id: str
    error: str
    skipped: bool = False


def iter_sources(
    paths: Iterable[str | os.PathLike], root: str | os.PathLike | None = None, max_bytes: int = 50_000_000,
    include: Iterable[str] = (), exclude: Iterable[str] = (), held: Callable[[str, str], bool] | None = None,
) -> Iterator[SourceFile | SourceError]:
    """Expand files, folders (recursively, sorted by name) and globs (``**`` spans folders). ``doc_id``
    is relative to ``root`` when given, else to the folder given (a glob: its fixed leading folders; a
    single file: its parent). Hidden files and folders are skipped while walking. ``include`` /
    ``exclude`` globs (see ``sources.globs``) filter by that relative path; an excluded folder is not
    walked. ``held(doc_id, sha256)``: asked for every good file once it is hashed; a file it says the
    caller already holds in that version is not yielded (a no-op re-ingest builds nothing per file).
    Bad settings raise ``ConfigError`` now, not at the first ``next()``."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
        raise ConfigError(f"max_bytes must be a positive number of bytes, got {max_bytes!r}; e.g. 50000000")
    base = None
    if root is not None:
        base = Path(os.path.abspath(root))
        if not base.is_dir():
            raise ConfigError(f"root {root} is not a folder; pass the folder that holds the documents")
    filt = PathFilter(tuple(include), tuple(exclude))
    return _Walk(base, max_bytes, filt, held).run([os.fspath(p) for p in paths])


class _Walk:
    """One expansion: the files seen so far (a file reached twice is yielded once) and the doc ids
    given (two files never share one)."""

    def __init__(self, base: Path | None, max_bytes: int, filt: PathFilter, held) -> None:
        self.base, self.max_bytes, self.filt, self.held = base, max_bytes, filt, held
        self.seen: set[str] = set()
        self.ids: dict[str, Path | str] = {}

    def run(self, args: list[str]) -> Iterator[SourceFile | SourceError]:
        for arg in args:
            path = Path(os.path.abspath(arg))
            if path.is_dir():
                yield from self.folder(path, self.base or path)
            elif os.path.lexists(path):  # before globbing: "report [draft].md" is a file name, not a pattern
                yield from self.other(path, self.base or path.parent)
            elif _MAGIC_CHARS.intersection(arg):
                import glob

                top = self.base or _glob_root(arg)
                matches = sorted(glob.glob(arg, recursive=True))
                if not matches:
                    yield SourceError(path, arg, f"{arg}: matched no files; check the pattern (and quote it for the shell)")
                for match in matches:
                    p = Path(os.path.abspath(match))
                    if p.is_dir() and not p.is_symlink():
                        yield from self.folder(p, top)
                    else:
                        yield from self.other(p, top)
            else:
                yield SourceError(path, arg, f"{arg}: no such file or folder")

    def other(self, path: Path, top: Path) -> Iterator[SourceFile | SourceError]:
        """A file named by an argument or a glob, or a link the walk met: checked in full."""
        filt = self.filt
        if filt and (rel := _rel(path, top)) is not None and not filt.keeps(rel):
            return
        key = os.fspath(path)
        if key in self.seen:  # the same file reached twice (a folder and a glob over it)
            return
        self.seen.add(key)
        yield from self.found(inspect_file(path, top, self.max_bytes, self.held), path)

    def found(self, result, path) -> Iterator[SourceFile | SourceError]:
        if isinstance(result, SourceFile):
            if result.doc_id in self.ids:
                yield SourceError(Path(path), result.doc_id, f"{result.doc_id}: same doc_id as "
                                  f"{self.ids[result.doc_id]}; pass a common root (--root) so every file gets its own id")
                return
            self.ids[result.doc_id] = Path(path)
        elif result is _HELD:
            return
        if result is not None:
            yield result

    def folder(self, folder: Path, root: Path) -> Iterator[SourceFile | SourceError]:
        """Depth-first, entries sorted by name, iterative (no recursion limit on deep trees).

        A regular file met here (the walk never enters linked folders) is inside the root by
        construction, so it stays a string until it becomes a SourceFile: no pathlib, no resolving,
        one open/fstat/read per small file. That loop is most of a no-op re-ingest."""
        top = os.fspath(root)
        top = top if top.endswith(os.sep) else top + os.sep
        cut = len(top)
        filt, seen, ids, held, max_bytes = self.filt, self.seen, self.ids, self.held, self.max_bytes
        stack = [_listing(folder, root)]
        while stack:
            entry = next(stack[-1], None)
            if entry is None:
                stack.pop()
                continue
            if isinstance(entry, SourceError):
                yield entry
                continue
            if entry.name.startswith("."):
                continue
            if _is_real_dir(entry):
                path = Path(entry.path)
                if not (filt.exclude and filt.excluded(_rel(path, root) or "", folder=True)):
                    stack.append(_listing(path, root))
                continue
            path = entry.path
            if not _is_plain_file(entry) or not path.startswith(top):
                yield from self.other(Path(path), root)
                continue
            rel = path[cut:] if os.sep == "/" else path[cut:].replace(os.sep, "/")
            if not rel.isascii():
                try:
                    rel.encode("utf-8")
                except UnicodeEncodeError:
                    yield from self.other(Path(path), root)  # the slow path words the error
                    continue
                rel = unicodedata.normalize("NFC", rel)
            if filt and not filt.keeps(rel):
                continue
            if path in seen:
                continue
            seen.add(path)
            name = entry.name
            dot = name.rfind(".")  # the suffix os.path.splitext gives, for a name that is not hidden
            media_type = SUFFIXES.get(name[dot:].lower()) if dot > 0 else None
            result = (_typed_read(path, rel, max_bytes, held) if media_type is None else
                      _read_or_error(path, rel, media_type, max_bytes, held))
            if result is _HELD:
                continue
            if type(result) is SourceFile and rel not in ids:
                ids[rel] = result.path
                yield result
            else:
                yield from self.found(result, path)


def _glob_root(pattern: str) -> Path:
    """The fixed folders in front of a pattern's first wildcard: ``docs/**/*.md`` -> ``docs``."""
    fixed = []
    for part in Path(pattern).parts[:-1]:
        if _MAGIC_CHARS.intersection(part):
            break
        fixed.append(part)
    return Path(os.path.abspath(os.path.join(*fixed) if fixed else "."))


def _is_plain_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _is_real_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _listing(folder: Path, root: Path) -> Iterator[os.DirEntry | SourceError]:
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        name = _rel(folder, root) or folder.name
        yield SourceError(folder, name, f"{name}/: cannot list folder ({exc.strerror or exc}); check its permissions")
        return
    yield from entries


def _rel(path: Path, root: Path) -> str | None:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None


def inspect_file(path: Path, root: Path, max_bytes: int, held=None) -> SourceFile | SourceError | None:
    """Check one file: inside the root, a regular file of a known type, under the size limit, content
    matching its suffix; then its sha256. None for a link to a folder inside the root (walked anyway).
    ``held``: as for ``iter_sources`` (a held file gives the internal ``_HELD``)."""
    rel = _rel(path, root)
    if rel is None:
        return SourceError(path, path.name, f"{path}: outside the root {root}; pass a --root that contains it")
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        return SourceError(path, shown, f"{shown}: file name is not valid UTF-8; rename the file")
    doc_id = unicodedata.normalize("NFC", rel)
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return SourceError(path, doc_id, f"{doc_id}: broken or looping symbolic link; fix or remove it")
    if not real.is_relative_to(_resolved(root)):
        return SourceError(path, doc_id, f"{doc_id}: symbolic link to {real}, outside the root {root}; not "
                           "followed (copy the file into the root to include it)")
    if real.is_dir() or _under_linked_dir(path, root):
        return None
    return _typed_read(path, doc_id, max_bytes, held)


def _typed_read(path: str | Path, doc_id: str, max_bytes: int, held=None) -> SourceFile | SourceError | object:
    name = os.path.basename(path)
    media_type = media_type_for(name)
    if media_type is None and not os.path.splitext(name)[1] and _shebang(path):
        media_type = CODE  # an extensionless script: its #! line says what it is
    if media_type is None:
        return SourceError(Path(path), doc_id, unsupported_message(doc_id), skipped=True)
    return _read_or_error(path, doc_id, media_type, max_bytes, held)


def _read_or_error(path: str | Path, doc_id: str, media_type: str, max_bytes: int, held=None):
    try:
        return _read(path, doc_id, media_type, max_bytes, held)
    except OSError as exc:
        return SourceError(Path(path), doc_id, f"{doc_id}: cannot read ({exc.strerror or exc}); check its permissions")


def _shebang(path: Path) -> bool:
    """An extensionless regular file whose first line is a ``#!`` naming a known interpreter."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as fh:
            return shebang_language(fh.read(256)) is not None
    except OSError:
        return False


@functools.lru_cache(maxsize=64)
def _resolved(root: Path) -> Path:
    return root.resolve()


def _under_linked_dir(path: Path, root: Path) -> bool:
    """A glob may reach a file through a linked folder inside the root; the walk would not."""
    return any(p.is_symlink() for p in path.parents if p != root and p.is_relative_to(root))


def _read(path: str | Path, doc_id: str, media_type: str, max_bytes: int, held=None) -> SourceFile | SourceError | object:
    # os.open/os.read rather than open(): no buffered file object per file. O_NONBLOCK so that a
    # FIFO is seen for what it is (fstat) instead of blocking the walk on open.
    fd = os.open(path, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return SourceError(Path(path), doc_id, f"{doc_id}: not a regular file (a pipe, socket or device); "
                               "skipped", skipped=True)
        expected = st.st_size
        if expected > max_bytes:
            return SourceError(Path(path), doc_id, _too_big(doc_id, expected, max_bytes))
        # Small files (nearly all): one read of size + 1 returns the whole file, and a short read of
        # exactly the size fstat gave is the end of it, so no second read is needed.
        block = os.read(fd, min(BLOCK, expected + 1))
        if block and (problem := check_head(doc_id, media_type, block[:HEAD_BYTES])):
            return SourceError(Path(path), doc_id, problem)
        digest, size = ids.sha256_stream(), len(block)
        digest.update(block)
        while block and not (size == expected and size < BLOCK):
            block = os.read(fd, BLOCK)
            digest.update(block)
            size += len(block)
            if size > max_bytes:  # grew since fstat
                return SourceError(Path(path), doc_id, _too_big(doc_id, size, max_bytes))
    finally:
        os.close(fd)
    if size == 0:
        return SourceError(Path(path), doc_id, check_head(doc_id, media_type, b"") or f"{doc_id} is empty; skipped",
                           skipped=True)
    sha256 = digest.hexdigest()
    if held is not None and held(doc_id, sha256):  # the caller holds these bytes: nothing more to check
        return _HELD
    if media_type == DOCX and (problem := check_docx(doc_id, Path(path))):
        return SourceError(Path(path), doc_id, problem)
    return SourceFile(Path(path), doc_id, media_type, size, sha256)


def _too_big(doc_id: str, size: int, limit: int) -> str:
    return f"{doc_id} is {_amount(size)}, over the {_amount(limit)} limit; raise --max-bytes"


def _amount(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n:,} bytes"
