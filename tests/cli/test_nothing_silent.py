"""Item 7 of issue 24: nothing ingest passes over is silent. Every file not read is counted by type
(summary and JSON), ``--strict`` makes it an error, an empty file is a warning (exit 0, no
``error:``), a missing PATH is exit 2 and creates nothing, and with ``--json`` an error is JSON."""
import json
import subprocess
import sys

from chunkwise.cli.main import main

ODD = {"s.key": b"slides", "t.key": b"slides", "u.numbers": b"cells", "i.png": b"\x89PNG\r\n\x1a\nxx", "empty.md": b""}


def folder(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    (d / "a.md").write_text("# A\n\nhello world\n", encoding="utf-8")
    for name, data in ODD.items():
        (d / name).write_bytes(data)
    return d


def run(*args, cwd):
    return subprocess.run([sys.executable, "-m", "chunkwise.cli.main", *args], capture_output=True, text=True, cwd=cwd)


def test_skipped_files_are_counted_by_type_in_json(tmp_path, capsys):
    d = folder(tmp_path)
    code = main(["ingest", str(d), "--db", str(tmp_path / "x.db"), "--acl", "staff", "--embedder", "none",
                 "--workers", "1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["added"] == 1 and out["errors"] == []
    assert out["skipped"] == {".key": 2, ".numbers": 1, ".png": 1, ".md": 1}
    assert any("empty.md is empty" in w for w in out["warnings"])


def test_summary_names_what_was_not_read_and_an_empty_file_is_a_warning(tmp_path):
    d = folder(tmp_path)
    r = run("ingest", str(d), "--db", "x.db", "--acl", "staff", "--embedder", "none", "--workers", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "not read: 2 .key, 1 .md, 1 .numbers, 1 .png" in r.stdout
    assert "warning: empty.md is empty" in r.stderr and "error" not in r.stderr


def test_a_single_empty_file_is_a_warning_not_an_error(tmp_path):
    (tmp_path / "empty.md").write_bytes(b"")
    r = run("ingest", "empty.md", "--db", "x.db", "--acl", "staff", "--embedder", "none", "--workers", "1",
            cwd=tmp_path)
    assert r.returncode == 0 and "error" not in r.stderr and "warning: empty.md is empty" in r.stderr


def test_strict_makes_every_file_not_read_an_error(tmp_path, capsys):
    d = folder(tmp_path)
    code = main(["ingest", str(d), "--db", str(tmp_path / "x.db"), "--acl", "staff", "--embedder", "none",
                 "--workers", "1", "--json", "--strict"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert sorted(e["path"] for e in out["errors"]) == sorted(ODD)
    assert out["added"] == 1  # the readable file is still ingested


def test_a_missing_path_is_a_usage_error_and_creates_no_store(tmp_path):
    r = run("ingest", "nope", "--db", "x.db", cwd=tmp_path)
    assert r.returncode == 2 and "nope: no such file or folder" in r.stderr
    assert not (tmp_path / "x.db").exists() and list(tmp_path.iterdir()) == []


def test_with_json_an_error_is_one_json_object(tmp_path):
    r = run("ingest", "nope", "--db", "x.db", "--json", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr == ""
    assert json.loads(r.stdout) == {"error": "nope: no such file or folder", "exit_code": 2}
    r = run("search", "q", "--db", "missing.db", "--groups", "staff", "--json", cwd=tmp_path)
    assert r.returncode == 2 and json.loads(r.stdout)["exit_code"] == 2


def test_with_json_a_usage_error_is_json_too(capsys):
    import pytest

    with pytest.raises(SystemExit) as exc:
        main(["ingest", "--json"])
    assert exc.value.code == 2
    out = json.loads(capsys.readouterr().out)
    assert out["exit_code"] == 2 and "PATH" in out["error"]


def test_each_error_and_warning_names_its_file_once(tmp_path, capsys):
    d = tmp_path / "docs"
    (d / "a").mkdir(parents=True)
    (d / "a" / "f.md").write_text("---\nacl: [x\n---\n# H\n\ntext\n", encoding="utf-8")  # unreadable access tags
    (d / "a" / "b.pdf").write_bytes(b"not a pdf")
    code = main(["ingest", str(d), "--db", str(tmp_path / "x.db"), "--acl", "staff", "--embedder", "none",
                 "--workers", "1"])
    err = capsys.readouterr().err
    assert code == 1
    assert "error: a/b.pdf: not a PDF" in err and "warning: a/f.md: front matter is not valid YAML" in err, err
    assert "a/b.pdf: a/b.pdf" not in err and "a/f.md: a/f.md" not in err, err


def test_a_folder_with_nothing_to_read_is_a_warning_not_a_silent_success(tmp_path, capsys):
    """Eighth session, helper frontdoor: an empty folder (or one of types chunkwise does not read) left
    an empty store with exit 0 and not a word (a glob that matches nothing is an error already)."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "data.xyz").write_text("x", encoding="utf-8")
    for path in ("empty", "other"):
        capsys.readouterr()
        assert main(["ingest", str(tmp_path / path), "--db", str(tmp_path / f"{path[:5]}.db"), "--acl", "staff",
                     "--embedder", "none", "--json"]) == 0
        err = capsys.readouterr().err
        assert "no file chunkwise reads; the store holds no chunks" in err, (path, err)
    (tmp_path / "other" / "a.md").write_text("# A\n\nRead.\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["ingest", str(tmp_path / "other"), "--db", str(tmp_path / "x.db"), "--acl", "staff",
                 "--embedder", "none"]) == 0
    assert "holds no chunks" not in capsys.readouterr().err
