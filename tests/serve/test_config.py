"""Bad configuration fails fast: one line saying what to do, exit 2, nothing listening."""
from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest
from .serving import SRC

from chunkwise.cli.main import main


def one_line_error(capsys, argv) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("chunkwise: error: "), err
    return err


def test_no_way_to_name_groups(capsys, store):
    assert "--trust-groups-header" in one_line_error(capsys, ["serve", "--db", str(store)])


def test_two_ways_to_name_groups(capsys, store, tokens_file):
    err = one_line_error(capsys, ["serve", "--db", str(store), "--trust-groups-header", "--tokens", str(tokens_file)])
    assert "choose one" in err


def test_missing_store_is_not_created(capsys, tmp_path):
    db = tmp_path / "nope.db"
    assert "chunkwise ingest" in one_line_error(capsys, ["serve", "--db", str(db), "--trust-groups-header"])
    assert not db.exists()


def test_not_a_store(capsys, tmp_path):
    bad = tmp_path / "junk.db"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    assert "not a chunkwise store" in one_line_error(capsys, ["serve", "--db", str(bad), "--trust-groups-header"])


def test_insecure_mode_only_on_loopback(capsys, store):
    err = one_line_error(capsys, ["serve", "--db", str(store), "--insecure-groups-in-body", "--host", "0.0.0.0"])
    assert "loopback" in err


@pytest.mark.parametrize("content, says", [
    (None, "cannot read"),
    ("{nope", "not JSON"),
    ("[]", "non-empty JSON object"),
    ("{}", "non-empty JSON object"),
    (json.dumps({"short": ["sre"]}), "at least 16"),
    (json.dumps({"a-long-enough-token-123": []}), "non-empty list"),
    (json.dumps({"a-long-enough-token-123": "sre"}), "non-empty list"),
    (json.dumps({"a-long-enough-token-123": ["sre", ""]}), "non-empty list"),
    (json.dumps({"sha256:abc": ["sre"]}), "64 hex"),
    (json.dumps({"with a space in the token": ["sre"]}), "visible ASCII"),
    (json.dumps({"a-long-enough-token-123": ["<script>"]}), "entry 1: groups: access tag"),
])
def test_bad_tokens_file(capsys, store, tmp_path, content, says):
    path = tmp_path / "tokens.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert says in one_line_error(capsys, ["serve", "--db", str(store), "--tokens", str(path)])


def test_port_in_use(capsys, store):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        err = one_line_error(capsys, ["serve", "--db", str(store), "--trust-groups-header", "--port", str(port)])
    assert f"127.0.0.1:{port}" in err and "--port" in err


def test_the_real_command_exits_2_with_one_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "chunkwise.cli.main", "serve", "--db", str(tmp_path / "x.db"),
                        "--trust-groups-header"], capture_output=True, text=True, timeout=120,
                       env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"})
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "no such store" in r.stderr
