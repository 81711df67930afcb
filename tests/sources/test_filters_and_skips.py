"""Small things real folders need (issue 14 item 6): include/exclude globs with **, unsupported files
skipped rather than failed, ``chunkwise extract``, heading attributes out of heading paths."""
from __future__ import annotations

import json

import pytest

from chunkwise import api
from chunkwise.cli.main import main
from chunkwise.errors import ConfigError
from chunkwise.normalise import heading_label
from chunkwise.sources import SourceError, SourceFile, iter_sources
from chunkwise.sources.globs import PathFilter


def _tree(root):
    files = {
        "README.md": "# Top\n\nIntro text.\n",
        "docs/guide.md": "# Guide\n\nGuide text.\n",
        "docs/drafts/wip.md": "# WIP\n\nNot ready.\n",
        "docs/api/ref.txt": "Reference text.\n",
        "node_modules/pkg/readme.md": "# Vendored\n\nNoise.\n",
        "assets/logo.png": b"\x89PNG\r\n\x1a\n" + b"\x00" * 32,
        "assets/site.css": "body { color: red }\n",
        "bin/tool.exe": b"MZ\x90\x00" + b"\x00" * 32,
    }
    for rel, body in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body if isinstance(body, bytes) else body.encode())
    return root


def _ids(items, kind=SourceFile):
    return sorted(i.doc_id for i in items if isinstance(i, kind))


@pytest.mark.parametrize("include, exclude, expected", [
    ((), ("node_modules",), ["README.md", "docs/api/ref.txt", "docs/drafts/wip.md", "docs/guide.md"]),
    (("*.md",), ("node_modules/**", "docs/drafts/**"), ["README.md", "docs/guide.md"]),
    (("docs/**",), ("**/drafts",), ["docs/api/ref.txt", "docs/guide.md"]),
    (("docs/**/*.md",), (), ["docs/drafts/wip.md", "docs/guide.md"]),
    (("docs/*.md",), (), ["docs/guide.md"]),
    (("**/ref.t?t",), (), ["docs/api/ref.txt"]),
])
def test_include_exclude_globs(tmp_path, include, exclude, expected):
    root = _tree(tmp_path)
    assert _ids(iter_sources([root], include=include, exclude=exclude)) == expected


def test_excluded_folder_is_never_walked(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    (root / "node_modules" / "locked").mkdir()
    (root / "node_modules" / "locked").chmod(0)
    try:
        items = list(iter_sources([root], exclude=["node_modules"]))
    finally:
        (root / "node_modules" / "locked").chmod(0o755)
    assert not any("node_modules" in i.doc_id for i in items)


def test_bad_pattern_fails_fast():
    with pytest.raises(ConfigError, match="empty"):
        PathFilter(include=("",))
    with pytest.raises(ConfigError, match="strings"):
        PathFilter(exclude=(3,))


def test_recursive_glob_argument(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    monkeypatch.chdir(root)
    assert _ids(iter_sources(["docs/**/*.md"])) == ["drafts/wip.md", "guide.md"]


def test_unsupported_types_are_skipped_not_failed(tmp_path):
    root = _tree(tmp_path)
    errors = [i for i in iter_sources([root]) if isinstance(i, SourceError)]
    assert sorted(e.doc_id for e in errors) == ["assets/logo.png", "assets/site.css", "bin/tool.exe"]
    assert all(e.skipped and e.error.endswith(")") and "skipped" in e.error for e in errors)
    failures = [i for i in api.iter_documents([root]) if isinstance(i, api.SourceFailure)]
    assert failures and all(f.skipped for f in failures)


def test_audit_and_chunk_exit_zero_with_skipped_files(tmp_path, capsys):
    root = _tree(tmp_path)
    assert main(["audit", str(root), "--exclude", "node_modules", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    status = {r["source"]: r["status"] for r in rows}
    assert status["assets/logo.png"] == status["bin/tool.exe"] == "skipped"
    assert "node_modules/pkg/readme.md" not in status and status["README.md"] == "ok"
    assert main(["chunk", str(root), "--include", "docs/**", "--exclude", "**/drafts"]) == 0
    out = capsys.readouterr().out
    assert "docs/guide.md" in out and "wip" not in out and "README" not in out


def test_ingest_include_exclude(tmp_path, capsys):
    root = _tree(tmp_path)
    db = tmp_path / "s.db"
    assert main(["ingest", str(root), "--db", str(db), "--acl", "staff", "--include", "*.md",
                 "--exclude", "node_modules", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["errors"] == []
    assert main(["manifest", "--db", str(db), "--json"]) == 0
    docs = json.loads(capsys.readouterr().out)["documents"]
    assert sorted(d["doc_id"].rsplit("/", 1)[-1] for d in docs) == ["README.md", "guide.md", "wip.md"]


def test_extract_prints_the_text_offsets_point_into(tmp_path, capsys):
    path = tmp_path / "note.md"
    path.write_text("---\ntitle: Note\n---\n# Head\n\nBody \x1b]0;pwned\x07 text.\n", encoding="utf-8")
    assert main(["extract", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    doc = api.load_document(path)
    assert data["text"] == doc.text and data["body_start"] == doc.body_start
    [chunk] = api.chunk_document(doc)
    assert data["text"][chunk.start_char : chunk.end_char].startswith("# Head")
    assert main(["extract", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "\x07" not in shown and "\\x1b]0;pwned\\x07" in shown
    assert main(["extract", str(tmp_path / "missing.md")]) == 2  # a PATH that names nothing: a usage error, as in ingest


@pytest.mark.parametrize("raw, label", [
    ("CORS { #cors }", "CORS"),
    ("Intro {#intro .unnumbered}", "Intro"),
    ("Setup {: .note data-x=\"1\" }", "Setup"),
    ("Appendix {-}", "Appendix"),
    ("Using {braces} in text", "Using {braces} in text"),
    ("Set {x} = {y}", "Set {x} = {y}"),
    ("{ #only }", "{ #only }"),
])
def test_heading_attributes(raw, label):
    assert heading_label(raw) == label


def test_heading_attributes_left_out_of_heading_paths():
    text = "# API { #api }\n\n## CORS {#cors .important}\n\nAllowed origins are listed here.\n"
    [chunk] = [c for c in api.chunk_text(text, strategy="structure", size=64) if "origins" in c.text]
    assert chunk.heading_path == ("API", "CORS")
    assert chunk.text == text[chunk.start_char : chunk.end_char]


def test_globs_follow_git_negation_and_folder_only_patterns(tmp_path):
    """The patterns are git's (pathspec's GitIgnoreSpec): ``!`` takes back an earlier match of the
    same list, a trailing ``/`` matches folders only, and an excluded folder's files stay excluded."""
    root = _tree(tmp_path)
    (root / "docs" / "drafts" / "keep.md").write_text("# Keep\n\nKept.\n")
    (root / "notes").write_text("a file named like a folder\n")
    kept = _ids(iter_sources([root], include=["*.md", "!docs/drafts/wip.md"], exclude=["node_modules/"]))
    assert kept == ["README.md", "docs/drafts/keep.md", "docs/guide.md"]
    only_folders = PathFilter(exclude=("notes/", "drafts/"))
    assert only_folders.keeps("notes") and not only_folders.keeps("notes/a.md")
    assert only_folders.excluded("docs/drafts", folder=True) and only_folders.keeps("docs/drafts.md")
    inside = PathFilter(exclude=("docs/", "!docs/guide.md"))
    assert inside.excluded("docs", folder=True)  # never walked, so guide.md cannot come back (as in git)


def test_invalid_glob_is_a_config_error():
    with pytest.raises(ConfigError, match="not a valid glob"):
        PathFilter(include=("[z-a].md",))
