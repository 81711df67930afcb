"""Issue 10 items 8-10: the gate tells the truth, stores are not silently reconfigured, and every
foreseeable bad input is one clean line with exit code 2 (usage/config) or 1 (run), never a traceback."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

from chunkwise.cli.main import main

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")


def corpus(root, n=3):
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        words = " ".join(f"topic{i} rollback ledger word{j}" for j in range(30))
        (root / f"doc{i}.md").write_text(f"# Doc {i}\n\n## Part\n\n{words}\n", encoding="utf-8")
    return root


def cli(*args, prefix=()):
    env = {**os.environ, "PYTHONPATH": os.path.abspath(SRC)}
    return subprocess.run([*prefix, sys.executable, "-m", "chunkwise.cli.main", *args], capture_output=True, text=True,
                          env=env)


def clean(out, code):
    assert out.returncode == code, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.startswith("chunkwise: error:")]
    assert len(lines) == 1, out.stderr
    return lines[0]


# -- item 9: a store keeps its settings ---------------------------------------------------------

def test_a_rerun_without_flags_uses_the_stores_settings(tmp_path, capsys):
    docs, db = corpus(tmp_path / "docs"), str(tmp_path / "i.db")
    assert main(["ingest", str(docs), "--db", db, "--acl", "staff", "--size", "64", "--strategy", "fixed",
                 "--embedder", "hashing-256", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["ingest", str(docs), "--db", db, "--acl", "staff", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["added"], again["removed"], again["embedded"]) == (0, 0, 0)
    assert again["skipped_documents"] == 3 and again["unchanged"] == first["added"]
    assert main(["manifest", "--db", db, "--json"]) == 0
    m = json.loads(capsys.readouterr().out)
    assert m["config"]["size"] == 64 and m["config"]["strategy"] == "fixed" and m["embed_model"] == "hashing-256@1"


def test_other_chunk_settings_or_embedder_are_refused_unless_reconfigure(tmp_path, capsys):
    docs, db = corpus(tmp_path / "docs"), str(tmp_path / "i.db")
    assert main(["ingest", str(docs), "--db", db, "--acl", "staff", "--size", "64", "--embedder", "hashing",
                 "--json"]) == 0
    capsys.readouterr()
    assert main(["ingest", str(docs), "--db", db, "--acl", "staff", "--size", "128"]) == 2
    err = capsys.readouterr().err
    assert "size 64 -> 128" in err and "--reconfigure" in err
    assert main(["ingest", str(docs), "--db", db, "--acl", "staff", "--embedder", "hashing-256"]) == 2
    err = capsys.readouterr().err
    assert "hashing-384@1" in err and "hashing-256@1" in err and "--reconfigure" in err
    assert main(["check", "--db", db]) == 0  # nothing was touched by the refused runs
    capsys.readouterr()
    assert main(["ingest", str(docs), "--db", db, "--acl", "staff", "--size", "128", "--embedder", "hashing-256",
                 "--reconfigure", "--json"]) == 0
    capsys.readouterr()
    assert main(["check", "--db", db, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["embed_models"] == ["hashing-256@1"] and report["oversized"] == 0


# -- item 8: the gate tells the truth -------------------------------------------------------------

def test_ingest_without_tags_warns_at_once_and_the_gate_fails(tmp_path, capsys):
    docs, db = corpus(tmp_path / "docs"), str(tmp_path / "i.db")
    assert main(["ingest", str(docs), "--db", db, "--json"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("warning: no access tags given")  # before anything else is printed
    assert "none of its" in err
    assert main(["check", "--db", db]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "nothing can be served" in out and "--acl" in out
    assert main(["search", "rollback", "--db", db, "--groups", "staff", "--mode", "dense"]) == 2
    err = capsys.readouterr().err
    assert "nothing in this store can be served" in err and "has no vectors" not in err


def test_an_empty_store_fails_the_gate(tmp_path, capsys):
    """An ingest of a folder with nothing chunkwise reads leaves a store with no chunks: the gate must
    not call that a release (it said "gate: PASS")."""
    (tmp_path / "empty").mkdir()
    db = str(tmp_path / "i.db")
    assert main(["ingest", str(tmp_path / "empty"), "--db", db, "--acl", "staff", "--embedder", "hashing"]) == 0
    capsys.readouterr()
    assert main(["check", "--db", db]) == 1
    out = capsys.readouterr().out
    assert "gate: FAIL" in out and "holds no chunks" in out


def test_some_unservable_chunks_are_a_loud_warning_and_fail_strict(tmp_path, capsys):
    docs, db = corpus(tmp_path / "docs"), str(tmp_path / "i.db")
    (docs / "doc0.md").write_text("---\nacl: hr\n---\n" + (docs / "doc0.md").read_text(encoding="utf-8"),
                                  encoding="utf-8")
    assert main(["ingest", str(docs), "--db", db, "--json"]) == 0  # only doc0 has tags
    capsys.readouterr()
    assert main(["check", "--db", db]) == 0
    captured = capsys.readouterr()
    assert "with warnings" in captured.out and "can never be served" in captured.err and "missing_acl" in captured.err
    assert main(["check", "--db", db, "--strict"]) == 1


# -- item 10: clean errors ------------------------------------------------------------------------

def test_unusable_db_paths_are_one_line_errors(tmp_path):
    docs = corpus(tmp_path / "docs")
    text = tmp_path / "notes.txt"
    text.write_text("not a store\n", encoding="utf-8")
    assert "not a chunkwise store" in clean(cli("ingest", str(docs), "--db", str(text)), 2)
    assert "not a chunkwise store" in clean(cli("search", "x", "--db", str(text), "--groups", "a"), 2)
    assert "is a folder" in clean(cli("ingest", str(docs), "--db", str(docs)), 2)
    assert "is a folder" in clean(cli("check", "--db", str(docs)), 2)
    assert text.read_text(encoding="utf-8") == "not a store\n"


def test_a_foreign_sqlite_database_is_refused_and_left_untouched(tmp_path):
    docs, db = corpus(tmp_path / "docs"), tmp_path / "app.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE customers (name TEXT)")
    con.commit()
    con.close()
    line = clean(cli("ingest", str(docs), "--db", str(db)), 2)
    assert "another application" in line and "customers" in line
    assert "another application" in clean(cli("check", "--db", str(db)), 2)
    tables = {n for (n,) in sqlite3.connect(db).execute("SELECT name FROM sqlite_master")}
    assert tables == {"customers"}


@pytest.mark.parametrize("toml, needle", [
    ("[chunking]\nsizee = 100\n", "unknown key 'sizee' in [chunking] (did you mean 'size'?)"),
    ("[chunking]\nsize = \"100\"\n", "size must be an integer"),
    ("[ingest]\nacl = 5\n", "access tags must be a comma-separated string or a list"),
    ("[ingest]\nacl_map = [\"hr\"]\n", "expected a mapping of glob"),
    ("[ingest]\nembedder = 3\n", "embedder must be a string"),
    ("[indexing]\nsize = 3\n", "unknown table or key 'indexing'"),
    ("[eval]\nk = \"ten\"\n", "k must be an integer"),
])
def test_config_file_mistakes(tmp_path, toml, needle):
    docs, conf = corpus(tmp_path / "docs"), tmp_path / "chunkwise.toml"
    conf.write_text(toml, encoding="utf-8")
    assert needle in clean(cli("ingest", str(docs), "--db", str(tmp_path / "i.db"), "--config", str(conf)), 2)


def test_acl_map_that_is_a_list_and_a_junk_tokenizer(tmp_path):
    docs, amap = corpus(tmp_path / "docs"), tmp_path / "map.json"
    amap.write_text('["hr", "finance"]', encoding="utf-8")
    assert "expected a mapping of glob" in clean(cli("ingest", str(docs), "--db", str(tmp_path / "i.db"),
                                                      "--acl-map", str(amap)), 2)
    junk = tmp_path / "tokenizer.json"
    junk.write_bytes(b"\x00junk{")
    assert "not a usable Hugging Face tokenizer.json" in clean(cli("chunk", str(docs / "doc0.md"), "--tokenizer",
                                                                   str(junk)), 2)
    assert "not a usable" in clean(cli("ingest", str(docs), "--db", str(tmp_path / "j.db"), "--tokenizer", str(junk)), 2)


def test_a_second_writer_gets_a_clean_busy_message(tmp_path, capsys):
    docs, db = corpus(tmp_path / "docs"), str(tmp_path / "i.db")
    assert main(["ingest", str(docs), "--db", db, "--acl", "staff", "--json"]) == 0
    (docs / "doc1.md").write_text("# Changed\n\nA new body for the second run.\n", encoding="utf-8")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        line = clean(cli("ingest", str(docs), "--db", db, "--acl", "staff", "--wait", "0.3"), 1)
        assert "busy" in line and "another ingest" in line
        found = cli("search", "rollback", "--db", db, "--groups", "staff", "--json")  # readers are not blocked
        assert found.returncode == 0 and json.loads(found.stdout)["results"]
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def _without_write_permission():
    """A command prefix under which the file permissions apply even to root (CAP_DAC_OVERRIDE dropped)."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot make a file read-only")
    caps = "-dac_override,-dac_read_search"
    return ("setpriv", "--bounding-set", caps, "--inh-caps", caps)


def test_search_and_check_work_on_a_read_only_store_and_ingest_says_why_not(tmp_path):
    docs, folder = corpus(tmp_path / "docs"), tmp_path / "ro"
    folder.mkdir()
    db = folder / "i.db"
    assert cli("ingest", str(docs), "--db", str(db), "--acl", "staff").returncode == 0
    prefix = _without_write_permission()
    os.chmod(db, 0o444)
    os.chmod(folder, 0o555)
    try:
        found = cli("search", "rollback", "--db", str(db), "--groups", "staff", "--json", prefix=prefix)
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["results"]
        assert cli("check", "--db", str(db), prefix=prefix).returncode == 0
        assert "read-only" in clean(cli("ingest", str(docs), "--db", str(db), "--acl", "staff", prefix=prefix), 2)
    finally:
        os.chmod(folder, 0o755)
        os.chmod(db, 0o644)
