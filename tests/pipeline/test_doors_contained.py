"""Issue 25 item 9: no door parses a file in the calling process. ``chunkwise chunk``, ``chunkwise
audit``, ``chunkwise extract``, ``chunk_file``, ``api.audit`` and ``load_document`` run with the
extraction entry point patched to raise in this process: they still give the in-process answer,
because the parsing happens in a contained worker (a fresh interpreter that never sees the patch, or
a fork of this process, where the patch sees another process id and parses). A file that
crashes its parser is that file's error, and the caller survives it."""
import json
import os

import pytest

import chunkwise.extract as extract_pkg
import chunkwise.extract.audit as audit_mod
from chunkwise import api
from chunkwise.cli.main import main
from chunkwise.extract.audit import audit_document
from chunkwise.pipeline.documents import read_source
from chunkwise.pipeline.doors import records_of
from chunkwise.pipeline.prepare import PrepareTask
from chunkwise.sources import iter_sources

pytest.importorskip("markdown_it_pyrs")

NESTED = "> " * 60_000 + "deep\n"  # markdown-it-pyrs overflows its stack (tests/sandbox/hostile.py)
HANDBOOK = ("---\nacl: staff\n---\n# Handbook\n\nLeave is booked in the portal.\n\n## Payroll\n"
            "<!-- acl: finance -->\n\nSalaries are paid on the 25th.\n")


class ParsedHere(AssertionError):
    pass


HERE = os.getpid()


def _refusing(real):
    def refuse(*args, **kwargs):
        if os.getpid() == HERE:
            raise ParsedHere("a file was parsed in the calling process")
        return real(*args, **kwargs)  # a forked worker inherits the patch: parsing there is the point

    return refuse


@pytest.fixture
def docs(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    (d / "handbook.md").write_text(HANDBOOK, encoding="utf-8")
    (d / "notes.txt").write_text("Plain notes about the quarterly ledger.\n", encoding="utf-8")
    return d


@pytest.fixture
def in_process(docs):
    """What each door answers when the file is parsed here (computed before the patch)."""
    preparer = api.door_preparer(None, acl="staff")
    src = next(s for s in iter_sources([docs / "handbook.md"]))
    task = PrepareTask(str(src.path), src.doc_id, src.doc_id, src.media_type, src.sha256, src.size)
    audit_rows = [audit_document(read_source(s)) for s in iter_sources([docs], root=docs)]
    return {"records": records_of(preparer(task)), "audit": [r.to_dict() for r in audit_rows],
            "text": read_source(src).text}


@pytest.fixture
def no_parsing_here(monkeypatch, in_process):  # after ``in_process``: it parses here, before the patch
    monkeypatch.setattr(extract_pkg, "extract_bytes", _refusing(extract_pkg.extract_bytes))
    monkeypatch.setattr(audit_mod, "audit_document", _refusing(audit_mod.audit_document))
    with pytest.raises(ParsedHere):  # the patch does bite in this process
        read_source(next(iter_sources([__file__])))


def test_chunk_file_parses_in_a_worker(docs, in_process, no_parsing_here):
    got = api.chunk_file(docs / "handbook.md", acl="staff")
    assert [r.to_dict() for r in got] == [r.to_dict() for r in in_process["records"]]
    assert {tuple(r.acl) for r in got} == {("staff",), ("finance",)}


def test_cli_chunk_parses_in_a_worker(docs, in_process, no_parsing_here, capsys):
    assert main(["chunk", str(docs / "handbook.md"), "--acl", "staff", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["chunk_id"] for r in rows] == [r.chunk_id for r in in_process["records"]]
    assert [r["text"] for r in rows] == [r.text for r in in_process["records"]]


def test_audit_parses_in_a_worker(docs, in_process, no_parsing_here, capsys):
    assert [r.to_dict() for r in api.audit([docs], root=docs)] == in_process["audit"]
    assert main(["audit", str(docs), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert sorted(r["source"] for r in rows) == ["handbook.md", "notes.txt"]
    assert all(r["status"] in ("ok", "warn") for r in rows)


def test_extract_parses_in_a_worker(docs, in_process, no_parsing_here, capsys):
    assert api.load_document(docs / "handbook.md").text == in_process["text"]
    assert main(["extract", str(docs / "handbook.md"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["text"] == in_process["text"]


def test_a_parser_crash_is_that_files_error_in_every_door(docs, capsys):
    (docs / "crash.md").write_text(NESTED, encoding="utf-8")
    rows = {r.source: r for r in api.audit([docs], root=docs)}
    assert rows["crash.md"].status == "error" and "crash" in rows["crash.md"].error
    assert rows["handbook.md"].status in ("ok", "warn")
    with pytest.raises(api.InputError, match="crash.md: worker crashed"):
        api.chunk_file(docs / "crash.md")
    assert main(["chunk", str(docs), "--json"]) == 1
    captured = capsys.readouterr()
    assert "crash.md: worker crashed" in captured.err
    assert {json.loads(line)["doc_id"] for line in captured.out.splitlines()} == {"handbook.md", "notes.txt"}


def test_a_script_without_a_main_guard_can_call_chunk_file(docs, tmp_path):
    """Workers are spawned: without care, the child would re-run the caller's script."""
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text(f"from chunkwise import api\nprint(len(api.chunk_file({str(docs / 'handbook.md')!r})))\n")
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    env = {**os.environ, "PYTHONPATH": os.path.abspath(src), "HF_HUB_OFFLINE": "1", "TIKTOKEN_CACHE_DIR": ""}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout) >= 2
