"""iter_sources: folders, globs and single files; every bad file reported, good files unaffected."""
from __future__ import annotations

import hashlib
import os
import time
import tracemalloc
import unicodedata
from pathlib import Path

import pytest

from chunkwise.errors import ConfigError, InputError
from chunkwise.extract.text import extract
from chunkwise.normalise import normalise
from chunkwise.sources import SourceError, SourceFile, iter_sources
from chunkwise.sources import walk as walk_module

PLAIN, MARKDOWN = "text/plain", "text/markdown"


def _by_id(items) -> dict[str, SourceFile | SourceError]:
    return {x.doc_id: x for x in items}


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_folder_recursive_sorted_with_relative_ids(tmp_path):
    root = tmp_path / "docs"
    for name in ("b.md", "a.txt", "sub/z.md", "sub/deeper/c.html", "c.markdown"):
        _write(root / name, b"hello\n")
    items = list(iter_sources([str(root)]))
    assert [x.doc_id for x in items] == ["a.txt", "b.md", "c.markdown", "sub/deeper/c.html", "sub/z.md"]
    assert all(isinstance(x, SourceFile) and x.path.is_absolute() for x in items)
    assert {x.doc_id: x.media_type for x in items}["sub/deeper/c.html"] == "text/html"
    assert items == list(iter_sources([root]))  # deterministic, str or Path


def test_single_file_root_is_its_parent_and_sha256_streams(tmp_path):
    data = b"# Title\n\nbody\n"
    f = _write(tmp_path / "one" / "note.md", data)
    [item] = iter_sources([str(f)])
    assert item == SourceFile(f, "note.md", MARKDOWN, len(data), hashlib.sha256(data).hexdigest())


def test_explicit_root_and_globs(tmp_path):
    root = tmp_path / "kb"
    _write(root / "x" / "a.md", b"a")
    _write(root / "x" / "b.txt", b"b")
    _write(root / "y" / "c.md", b"c")
    got = [x.doc_id for x in iter_sources([str(root / "**" / "*.md")])]
    assert got == ["x/a.md", "y/c.md"]  # relative to the glob's fixed folders
    got = [x.doc_id for x in iter_sources([str(root / "x" / "*")], root=root)]
    assert got == ["x/a.md", "x/b.txt"]
    # a file reached twice (folder + glob) is yielded once
    assert [x.doc_id for x in iter_sources([str(root), str(root / "**" / "*.md")])] == ["x/a.md", "x/b.txt", "y/c.md"]
    [err] = iter_sources([str(root / "*.pdf")])
    assert isinstance(err, SourceError) and "matched no files" in err.error


def test_missing_path_and_file_outside_explicit_root(tmp_path):
    other = _write(tmp_path / "elsewhere" / "a.md", b"a")
    (tmp_path / "root").mkdir()
    missing, outside = iter_sources([str(tmp_path / "nope"), str(other)], root=tmp_path / "root")
    assert "no such file or folder" in missing.error
    assert "outside the root" in outside.error


def test_bad_settings_fail_at_call_time(tmp_path):
    with pytest.raises(ConfigError, match="max_bytes"):
        iter_sources([str(tmp_path)], max_bytes=0)
    with pytest.raises(ConfigError, match="not a folder"):
        iter_sources([str(tmp_path)], root=tmp_path / "missing")


def test_hidden_files_and_folders_skipped(tmp_path):
    _write(tmp_path / ".git" / "config.md", b"x")
    _write(tmp_path / ".hidden.md", b"x")
    _write(tmp_path / "shown.md", b"x")
    assert [x.doc_id for x in iter_sources([str(tmp_path)])] == ["shown.md"]


def test_names_with_spaces_and_non_ascii(tmp_path):
    _write(tmp_path / "année 2024" / "résumé final.md", b"# CV\n")
    _write(tmp_path / "日本語 ファイル.txt", "テキスト".encode())
    items = _by_id(iter_sources([str(tmp_path)]))
    assert set(items) == {"année 2024/résumé final.md", "日本語 ファイル.txt"}
    assert all(isinstance(x, SourceFile) for x in items.values())


def test_decomposed_file_name_gives_nfc_doc_id(tmp_path):
    nfd = unicodedata.normalize("NFD", "café.md")
    _write(tmp_path / nfd, b"x")
    [item] = iter_sources([str(tmp_path)])
    assert item.doc_id == "café.md" and item.path.name == nfd


def test_file_name_that_is_not_utf8_is_reported(tmp_path):
    try:
        fd = os.open(os.fsencode(tmp_path) + b"/bad\xff.md", os.O_CREAT | os.O_WRONLY)
    except OSError:
        pytest.skip("file system refuses non-UTF-8 names")
    os.write(fd, b"x")
    os.close(fd)
    [item] = iter_sources([str(tmp_path)])
    assert isinstance(item, SourceError) and "not valid UTF-8" in item.error and "rename" in item.error


def test_symlink_out_of_root_reported_not_followed(tmp_path):
    secret = _write(tmp_path / "private" / "secret.md", b"password")
    root = tmp_path / "root"
    _write(root / "ok.md", b"fine")
    (root / "leak.md").symlink_to(secret)
    (root / "leakdir").symlink_to(secret.parent, target_is_directory=True)
    items = _by_id(iter_sources([str(root)]))
    assert isinstance(items["ok.md"], SourceFile)
    for name in ("leak.md", "leakdir"):
        assert isinstance(items[name], SourceError)
        assert "outside the root" in items[name].error and "not followed" in items[name].error
    assert "leakdir/secret.md" not in items


def test_symlinks_inside_root(tmp_path):
    _write(tmp_path / "real" / "a.md", b"a")
    (tmp_path / "alias.md").symlink_to(tmp_path / "real" / "a.md")
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)  # a cycle: must not hang
    (tmp_path / "broken.md").symlink_to(tmp_path / "gone.md")
    items = _by_id(iter_sources([str(tmp_path)]))
    assert set(items) == {"alias.md", "broken.md", "real/a.md"}
    assert items["alias.md"].sha256 == items["real/a.md"].sha256
    assert "broken" in items["broken.md"].error


def test_binary_behind_text_suffix(tmp_path):
    _write(tmp_path / "png.txt", b"\x89PNG\r\n\x1a\n" + bytes(100))
    _write(tmp_path / "pdf.md", b"%PDF-1.7\n...")
    _write(tmp_path / "nul.txt", b"abc\x00def")
    _write(tmp_path / "zip.html", b"PK\x03\x04rest")
    items = _by_id(iter_sources([str(tmp_path)]))
    assert all(isinstance(x, SourceError) and "binary content" in x.error for x in items.values())
    assert "PNG" in items["png.txt"].error and "rename it to .png" in items["png.txt"].error


def test_unsupported_and_special_files(tmp_path):
    _write(tmp_path / "site.css", b"body {}")
    _write(tmp_path / "README", b"hi")
    os.mkfifo(tmp_path / "pipe.txt")  # reading it would block forever
    os.mkfifo(tmp_path / "fifo")  # nor may sniffing an extensionless name for a #! line open it
    items = _by_id(iter_sources([str(tmp_path)]))
    assert "unsupported file type '.css'" in items["site.css"].error and items["site.css"].skipped
    assert "no file extension" in items["README"].error
    assert "not a regular file" in items["pipe.txt"].error


def test_unreadable_file_reported(tmp_path, monkeypatch):
    _write(tmp_path / "a.md", b"a")
    _write(tmp_path / "b.md", b"b")

    real_open = os.open

    def deny(path, *args, **kwargs):  # the walk reads with os.open (no buffered file object per file)
        if str(path).endswith("a.md"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(walk_module.os, "open", deny)
    items = _by_id(iter_sources([str(tmp_path)]))
    assert items["a.md"].error == "a.md: cannot read (Permission denied); check its permissions"
    assert isinstance(items["b.md"], SourceFile)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_unreadable_file_and_folder_for_real(tmp_path):
    _write(tmp_path / "locked.md", b"x").chmod(0)
    _write(tmp_path / "closed" / "inner.md", b"x")
    (tmp_path / "closed").chmod(0)
    try:
        items = _by_id(iter_sources([str(tmp_path)]))
    finally:
        (tmp_path / "closed").chmod(0o755)
    assert "cannot read" in items["locked.md"].error
    assert "cannot list folder" in items["closed"].error


def test_huge_single_line_streamed_and_refused_cleanly(tmp_path):
    data = b"x" * 20_000_000  # 20 MB, one line, no spaces
    big = _write(tmp_path / "big.txt", data)
    tracemalloc.start()
    t0 = time.process_time()  # CPU time of this process: other work on the machine does not count
    [item] = iter_sources([str(big)])
    elapsed = time.process_time() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert item.sha256 == hashlib.sha256(data).hexdigest() and item.size == 20_000_000
    assert peak < 4_000_000, f"sniffing/hashing held {peak} bytes: the file was read whole"
    assert elapsed < 2.0
    [refused] = iter_sources([str(big)], max_bytes=5_000_000)
    assert refused.error == "big.txt is 20.0 MB, over the 5.0 MB limit; raise --max-bytes"
    # and, under the limit, extraction and normalisation of it stay linear
    t0 = time.process_time()
    norm = normalise(extract(big.read_bytes(), item.doc_id, item.media_type).text)
    assert norm.text == data.decode() and norm.to_original[len(norm.text)] == len(data)
    assert time.process_time() - t0 < 3.0  # a quadratic step would take minutes at 20 MB


@pytest.mark.parametrize("size", [1, walk_module.BLOCK - 1, walk_module.BLOCK, walk_module.BLOCK + 1,
                                  2 * walk_module.BLOCK, 2 * walk_module.BLOCK + 7])
def test_sha256_and_size_at_read_block_boundaries(tmp_path, size):
    data = bytes(range(97, 123)) * (size // 26 + 1)
    data = data[:size]
    _write(tmp_path / "walked" / "f.txt", data)
    walked = next(iter(iter_sources([str(tmp_path / "walked")])))  # the folder walk's read loop
    named = next(iter(iter_sources([str(tmp_path / "walked" / "f.txt")])))  # a file argument's
    for item in (walked, named):
        assert (item.size, item.sha256) == (size, hashlib.sha256(data).hexdigest())


def test_held_files_are_hashed_but_not_yielded(tmp_path):
    _write(tmp_path / "kept.md", b"kept")
    _write(tmp_path / "sub" / "held.md", b"held")
    _write(tmp_path / "changed.md", b"new bytes")
    _write(tmp_path / "empty.md", b"")
    (tmp_path / "alias.md").symlink_to(tmp_path / "sub" / "held.md")  # reached by the slow path
    holds = {"sub/held.md": hashlib.sha256(b"held").hexdigest(), "alias.md": hashlib.sha256(b"held").hexdigest(),
             "changed.md": hashlib.sha256(b"old bytes").hexdigest()}
    asked = []

    def held(doc_id, sha256):
        asked.append(doc_id)
        return holds.get(doc_id) == sha256

    items = _by_id(iter_sources([str(tmp_path)], held=held))
    assert sorted(asked) == ["alias.md", "changed.md", "kept.md", "sub/held.md"]  # every good file, once
    assert set(items) == {"changed.md", "empty.md", "kept.md"}
    assert items["changed.md"].sha256 == hashlib.sha256(b"new bytes").hexdigest()
    assert isinstance(items["empty.md"], SourceError)


def test_empty_files_reported_as_skipped(tmp_path):
    _write(tmp_path / "empty.md", b"")
    _write(tmp_path / "empty.pdf", b"")
    items = _by_id(iter_sources([str(tmp_path)]))
    assert items["empty.md"].error == "empty.md is empty; skipped"
    assert items["empty.pdf"].error == "empty.pdf is empty; skipped"


def test_doc_id_collision_between_single_files(tmp_path):
    a = _write(tmp_path / "a" / "same.md", b"1")
    b = _write(tmp_path / "b" / "same.md", b"2")
    first, second = iter_sources([str(a), str(b)])
    assert isinstance(first, SourceFile)
    assert isinstance(second, SourceError) and "same doc_id" in second.error and "--root" in second.error


def _ingest(paths, **kw) -> dict[str, object]:
    """What a caller does: sources, then text extraction; every outcome keyed by doc_id."""
    out: dict[str, object] = {}
    for item in iter_sources(paths, **kw):
        if isinstance(item, SourceError):
            out[item.doc_id] = item.error
            continue
        try:
            out[item.doc_id] = extract(item.path.read_bytes(), item.doc_id, item.media_type)
        except InputError as exc:
            out[item.doc_id] = str(exc)
    return out


def test_folder_of_bad_input_completes_and_reports_each(tmp_path):
    root = tmp_path / "mixed"
    good = {"good one.md": b"# Good\n\nFirst good file.\n", "sub/good two.txt": "Zweite gute Datei.\n".encode()}
    bad = {
        "empty.txt": b"",
        "blank.md": b" \n\t\n  ",
        "latin1.txt": "caf\xe9".encode("latin-1"),
        "binary.txt": b"\x89PNG\r\n\x1a\n" + bytes(64),
        "huge.txt": b"y" * 3_000,
    }
    for name, data in {**good, **bad}.items():
        _write(root / name, data)
    _write(root / "bom.md", b"\xef\xbb\xbf# Bom\n")
    _write(root / "utf16.txt", "UTF-16 text".encode("utf-16"))
    _write(root / "名前 with spaces.md", "# 名前\n".encode())
    _write(root / ".hidden.md", b"never seen")
    (root / "escape.md").symlink_to(_write(tmp_path / "outside.md", b"outside"))

    results = _ingest([str(root)], max_bytes=2_000)
    assert ".hidden.md" not in results
    assert results["empty.txt"] == "empty.txt is empty; skipped"
    assert results["blank.md"] == "blank.md is empty; skipped"
    assert results["latin1.txt"].startswith("latin1.txt: invalid UTF-8 at byte 3")
    assert "binary content" in results["binary.txt"]
    assert results["huge.txt"] == "huge.txt is 3,000 bytes, over the 2,000 bytes limit; raise --max-bytes"
    assert "outside the root" in results["escape.md"]
    assert results["bom.md"].text == "# Bom\n" and results["bom.md"].warnings
    assert results["utf16.txt"].text == "UTF-16 text"
    assert results["名前 with spaces.md"].text == "# 名前\n"
    # the good files come out exactly as they do alone
    for name in good:
        alone = _ingest([str(root / name)], root=root)[name]
        assert results[name] == alone and results[name].text == good[name].decode()
