"""The CLI is a thin layer: each command has help, JSON for machines, and clean errors with exit codes."""
import json
import subprocess
import sys

import pytest

from chunkwise.cli.main import build_parser, main

COMMANDS = ["audit", "bench", "check", "chunk", "eval", "extract", "ingest", "manifest", "mcp", "pg", "pg-secure", "plan", "review", "search", "serve"]


def run(*args):
    return subprocess.run([sys.executable, "-m", "chunkwise.cli.main", *args], capture_output=True, text=True)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command, capsys):
    argv = [command, "overlap", "--help"] if command == "bench" else [command, "--help"]  # bench: per experiment
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    assert "--json" in capsys.readouterr().out


def test_parser_knows_every_command():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert sorted(sub.choices) == sorted(COMMANDS)


def test_chunk_json_lines(capsys):
    assert main(["chunk", "examples/incident-runbook.md", "--json", "--size", "128"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    text = open("examples/incident-runbook.md", encoding="utf-8").read()
    assert rows and all(r["text"] == text[r["start_char"] : r["end_char"]] for r in rows)
    assert all(r["size"] <= 128 for r in rows)
    assert {"heading_path", "needs_review", "start_char", "end_char", "size"} <= set(rows[0])


def test_chunk_folder_prints_a_summary(capsys):
    assert main(["chunk", "examples/"]) == 0
    out = capsys.readouterr().out
    assert "incident-runbook.md" in out and "0 failed" in out


def test_chunk_reports_a_bad_file_and_goes_on(tmp_path, capsys):
    (tmp_path / "good.md").write_text("# Title\n\nSome text here.\n", encoding="utf-8")
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe\x00\x00garbage\x00\x81" * 10)
    (tmp_path / "latin1.md").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    assert main(["chunk", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "good.md" in captured.out and "2 failed" in captured.out  # binary .txt and latin-1 .md
    assert "invalid UTF-8 at byte 3" in captured.err and "re-save the file as UTF-8" in captured.err


def test_plan_json_matches_seed_001():
    out = run("plan", "--size", "200", "--overlap", "50", "--doc-words", "100000", "--json")
    assert out.returncode == 0
    data = json.loads(out.stdout)
    assert data["chunks"] == 667 and data["stored_units"] == 133_300
    assert data["guaranteed_evidence"] == 51


def test_plan_table_is_readable():
    out = run("plan", "--size", "100", "--overlap", "0", "--evidence", "26")
    assert out.returncode == 0 and "0.250" in out.stdout


@pytest.mark.parametrize("args,needle", [
    (["chunk", "examples/access-policy.md", "--size", "10", "--overlap", "10", "--strategy", "fixed"], "overlap"),
    (["plan", "--size", "5", "--overlap", "7"], "overlap"),
    (["chunk", "no/such/file.md"], "no such file"),
])
def test_bad_usage_is_one_clean_line(args, needle):
    out = run(*args)
    assert out.returncode in (1, 2)
    assert "Traceback" not in out.stderr and needle in out.stderr


def test_ingest_twice_changes_nothing(tmp_path, capsys):
    db = str(tmp_path / "index.db")
    assert main(["ingest", "examples/", "--db", db, "--acl", "staff", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["added"] == first["in_store"] > 0 and first["embedded"] == first["added"]
    assert main(["ingest", "examples/", "--db", db, "--acl", "staff", "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert {k: second[k] for k in ("added", "removed", "embedded", "metadata_updated")} == dict.fromkeys(
        ("added", "removed", "embedded", "metadata_updated"), 0)
    assert second["skipped_documents"] == 7 and second["in_store"] == first["in_store"]


def test_ingest_bad_config_file_is_a_clean_error(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text("[chunking\nsize = 1", encoding="utf-8")
    out = run("ingest", "examples/", "--db", str(tmp_path / "i.db"), "--config", str(bad))
    assert out.returncode == 2 and "not valid TOML" in out.stderr


def test_check_and_manifest(tmp_path, capsys):
    import sqlite3

    db = str(tmp_path / "index.db")
    assert main(["ingest", "examples/", "--db", db, "--acl", "staff", "--json"]) == 0
    capsys.readouterr()
    assert main(["check", "--db", db, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["chunks"] == report["ready"] + report["review"] > 0
    assert report["embed_models"] == ["all-MiniLM-L6-v2-onnx-int8@1"]  # the default model
    assert main(["manifest", "--db", db, "--json"]) == 0
    m = json.loads(capsys.readouterr().out)
    assert len(m["documents"]) == 7 and m["chunks"] == report["chunks"] and m["fingerprint"]
    con = sqlite3.connect(db)  # corrupt the collection: a second model's chunk and a lost vector
    con.execute("UPDATE chunks SET embed_model = 'other@1' WHERE rowid = (SELECT min(rowid) FROM chunks)")
    con.execute("DELETE FROM vectors WHERE rowid = (SELECT min(rowid) FROM vectors)")
    con.commit()
    assert main(["check", "--db", db]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "mixed" in out and "without a vector" in out


def test_check_without_a_store_is_a_clear_error(tmp_path):
    out = run("check", "--db", str(tmp_path / "missing.db"))
    assert out.returncode == 1 and "chunkwise ingest" in out.stderr
