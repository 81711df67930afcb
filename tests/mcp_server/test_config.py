"""``chunkwise mcp`` refuses, with one line and exit 2, every way of starting it that would not
say whose groups it serves, before anything is loaded."""
from __future__ import annotations

import subprocess
import sys

import pytest

from chunkwise.api import ConfigError
from chunkwise.mcp.start import group_source

from .mcp_helpers import ENV


@pytest.mark.parametrize("transport, groups, tokens, header, host, words", [
    ("stdio", None, None, False, "127.0.0.1", "--groups"),
    ("stdio", "sre", "t.json", False, "127.0.0.1", "--groups"),
    ("stdio", None, None, True, "127.0.0.1", "--groups"),
    ("http", None, None, False, "127.0.0.1", "once"),
    ("http", "sre", "t.json", False, "127.0.0.1", "once"),
    ("http", "sre", None, False, "0.0.0.0", "loopback"),
    ("stdio", " , ", None, False, "127.0.0.1", "at least one group"),
    ("stdio", "bad\x00tag", None, False, "127.0.0.1", "access tag"),
])
def test_bad_group_policies_are_config_errors(transport, groups, tokens, header, host, words):
    with pytest.raises(ConfigError, match=words):
        group_source(transport, groups, tokens, header, host)


def test_good_group_policies():
    assert group_source("stdio", "sre, ops", None, False, "127.0.0.1") == (("ops", "sre"), None)
    assert group_source("http", "sre", None, False, "::1") == (("sre",), None)
    fixed, source = group_source("http", None, None, True, "0.0.0.0")
    assert fixed is None and source.name == "header"


@pytest.mark.parametrize("args, words", [
    (["--db", "{missing}", "--groups", "sre"], "no such store"),
    (["--db", "{store}", "--transport", "stdio", "--tokens", "x.json"], "--groups"),
    (["--db", "{store}", "--transport", "http", "--tokens", "{missing}"], "cannot read it"),
    (["--db", "{store}", "--transport", "http", "--groups", "sre", "--host", "0.0.0.0"], "loopback"),
])
def test_cli_refuses_with_one_line_and_exit_2(mcp_store, tmp_path, args, words):
    args = [a.format(missing=tmp_path / "missing", store=mcp_store) for a in args]
    done = subprocess.run([sys.executable, "-m", "chunkwise.cli.main", "mcp", *args], env=ENV, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("chunkwise: error:") and words in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and done.stdout == ""


def test_the_ready_line_says_where_groups_come_from_in_the_flags_words(capsys):
    from chunkwise.mcp.start import _ready

    _ready(False, {"store": "index.db", "model": "m@1", "auth": "groups"})
    line = capsys.readouterr().err
    assert line.rstrip().endswith("groups from --groups") and "from groups" not in line, line
    _ready(True, {"store": "index.db", "model": "m@1", "auth": "groups"})
    assert '"auth": "groups"' in capsys.readouterr().err  # the machine's form is unchanged
