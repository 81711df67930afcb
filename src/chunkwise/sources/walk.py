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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from chunkwise import ids
from chunkwise.errors import ConfigError
from chunkwise.sources.globs import PathFilter
from chunkwise.sources.sniff import CODE, DOCX, HEAD_BYTES, check_docx, check_head, media_type_for, shebang_language, unsupported_message

BLOCK = 1 << 20  # sha256 is streamed in 1 MiB blocks: memory stays flat whatever the file size
_MAGIC_CHARS = frozenset("*?[")


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
    include: Iterable[str] = (), exclude: Iterable[str] = (),
) -> Iterator[SourceFile | SourceError]:
    """Expand files, folders (recursively, sorted by name) and globs (``**`` spans folders). ``doc_id``
    is relative to ``root`` when given, else to the folder given (a glob: its fixed leading folders; a
    single file: its parent). Hidden files and folders are skipped while walking. ``include`` /
    ``exclude`` globs (see ``sources.globs``) filter by that relative path; an excluded folder is not
    walked. Bad settings raise ``ConfigError`` now, not at the first ``next()``."""
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
    return _iterate([os.fspath(p) for p in paths], base, max_bytes, filt)


def _iterate(args: list[str], base: Path | None, max_bytes: int, filt: PathFilter) -> Iterator[SourceFile | SourceError]:
    seen: set[str] = set()
    ids: dict[str, Path] = {}
    for arg in args:
        for item in _expand(arg, base, filt):
            if isinstance(item, SourceError):
                yield item
                continue
            path, top, plain = item if len(item) == 3 else (*item, False)
            if filt and (rel := _rel(Path(path), top)) is not None and not filt.keeps(rel):
                continue
            key = os.fspath(path)
            if key in seen:  # the same file reached twice (a folder and a glob over it)
                continue
            seen.add(key)
            # A plain file met by the walk is a string until it becomes a SourceFile: pathlib costs
            # more than reading and hashing a small file, and a no-op re-ingest does little else.
            result = _inspect_plain(key, top, max_bytes) if plain else inspect_file(Path(path), top, max_bytes)
            if isinstance(result, SourceFile):
                if result.doc_id in ids:
                    yield SourceError(path, result.doc_id, f"{result.doc_id}: same doc_id as {ids[result.doc_id]}; "
                                      "pass a common root (--root) so every file gets its own id")
                    continue
                ids[result.doc_id] = path
            if result is not None:
                yield result


def _expand(arg: str, base: Path | None, filt: PathFilter) -> Iterator[tuple[Path, Path] | SourceError]:
    """(file, root) pairs for one argument, or a SourceError when it names nothing."""
    path = Path(os.path.abspath(arg))
    if path.is_dir():
        yield from _walk(path, base or path, filt)
    elif os.path.lexists(path):  # before globbing: "report [draft].md" is a file name, not a pattern
        yield path, base or path.parent
    elif _MAGIC_CHARS.intersection(arg):
        import glob

        top = base or _glob_root(arg)
        matches = sorted(glob.glob(arg, recursive=True))
        if not matches:
            yield SourceError(path, arg, f"{arg}: matched no files; check the pattern (and quote it for the shell)")
        for match in matches:
            p = Path(os.path.abspath(match))
            if p.is_dir() and not p.is_symlink():
                yield from _walk(p, top, filt)
            else:
                yield p, top
    else:
        yield SourceError(path, arg, f"{arg}: no such file or folder")


def _glob_root(pattern: str) -> Path:
    """The fixed folders in front of a pattern's first wildcard: ``docs/**/*.md`` -> ``docs``."""
    fixed = []
    for part in Path(pattern).parts[:-1]:
        if _MAGIC_CHARS.intersection(part):
            break
        fixed.append(part)
    return Path(os.path.abspath(os.path.join(*fixed) if fixed else "."))


def _walk(folder: Path, root: Path, filt: PathFilter = PathFilter()) -> Iterator[tuple[Path, Path] | SourceError]:
    """Depth-first, entries sorted by name, iterative (no recursion limit on deep trees)."""
    stack = [_listing(folder, root)]
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
        elif isinstance(entry, SourceError):
            yield entry
        elif not entry.name.startswith("."):
            if _is_real_dir(entry):
                path = Path(entry.path)
                if not (filt.exclude and filt.excluded(_rel(path, root) or "")):
                    stack.append(_listing(path, root))
            else:
                # A regular file met by the walk (which never enters linked folders) is inside the
                # root by construction: no need to resolve its path, the expensive part of a no-op run.
                plain = _is_plain_file(entry)
                yield (entry.path if plain else Path(entry.path)), root, plain


def _is_plain_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _inspect_plain(path: str, root: Path, max_bytes: int) -> SourceFile | SourceError:
    top = os.fspath(root)
    top = top if top.endswith(os.sep) else top + os.sep
    if not path.startswith(top):  # pragma: no cover - the walk yields paths below its root
        return inspect_file(Path(path), root, max_bytes)
    rel = path[len(top):] if os.sep == "/" else path[len(top):].replace(os.sep, "/")
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return inspect_file(Path(path), root, max_bytes)  # the slow path words the error
    doc_id = unicodedata.normalize("NFC", rel) if not rel.isascii() else rel
    return _typed_read(path, doc_id, max_bytes)


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


def inspect_file(path: Path, root: Path, max_bytes: int) -> SourceFile | SourceError | None:
    """Check one file: inside the root, a regular file of a known type, under the size limit, content
    matching its suffix; then its sha256. None for a link to a folder inside the root (walked anyway)."""
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
    return _typed_read(path, doc_id, max_bytes)


def _typed_read(path: str | Path, doc_id: str, max_bytes: int) -> SourceFile | SourceError:
    name = os.path.basename(path)
    media_type = media_type_for(name)
    if media_type is None and not os.path.splitext(name)[1] and _shebang(path):
        media_type = CODE  # an extensionless script: its #! line says what it is
    if media_type is None:
        return SourceError(Path(path), doc_id, unsupported_message(doc_id), skipped=True)
    try:
        return _read(path, doc_id, media_type, max_bytes)
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


def _read(path: str | Path, doc_id: str, media_type: str, max_bytes: int) -> SourceFile | SourceError:
    # os.open/os.read rather than open(): no buffered file object per file. O_NONBLOCK so that a
    # FIFO is seen for what it is (fstat) instead of blocking the walk on open.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return SourceError(Path(path), doc_id, f"{doc_id}: not a regular file (a pipe, socket or device); "
                               "skipped", skipped=True)
        if st.st_size > max_bytes:
            return SourceError(Path(path), doc_id, _too_big(doc_id, st.st_size, max_bytes))
        digest, size = ids.sha256_stream(), 0
        want = min(BLOCK, st.st_size + 1)  # small files: one read returns the whole file
        while block := os.read(fd, want):
            if size == 0 and (problem := check_head(doc_id, media_type, block[:HEAD_BYTES])):
                return SourceError(Path(path), doc_id, problem)
            digest.update(block)
            size += len(block)
            if size > max_bytes:  # grew since fstat
                return SourceError(Path(path), doc_id, _too_big(doc_id, size, max_bytes))
    finally:
        os.close(fd)
    if size == 0:
        return SourceError(Path(path), doc_id, check_head(doc_id, media_type, b"") or f"{doc_id} is empty; skipped",
                           skipped=True)
    if media_type == DOCX and (problem := check_docx(doc_id, Path(path))):
        return SourceError(Path(path), doc_id, problem)
    return SourceFile(Path(path), doc_id, media_type, size, digest.hexdigest())


def _too_big(doc_id: str, size: int, limit: int) -> str:
    return f"{doc_id} is {_amount(size)}, over the {_amount(limit)} limit; raise --max-bytes"


def _amount(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n:,} bytes"
