"""Nothing from a document reaches the terminal raw in table mode: ESC sequences (clear screen,
set title), carriage returns, bidi overrides and newlines in file names are shown escaped."""
import json

import pytest

from chunkwise.cli.main import main
from chunkwise.cli.output import emit_json, safe, table

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\r\u202eevil\u009b31m"
FORGED = "evil\nchunkwise: error: forged.md"


def _raw_controls(s: str) -> list[str]:
    return [c for c in s if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F or c in "\u202e\u2066"]


def test_safe_escapes_controls_and_keeps_text():
    assert safe("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert safe("l1\nl2\r\t") == "l1\\nl2\\r\\t"
    assert safe("\u202eabc\u009b") == "\\u202eabc\\x9b"
    assert safe("Grüße 財務 — ok") == "Grüße 財務 — ok"
    assert "\n" not in table(["a"], [[FORGED]]).split("\n", 2)[2]


def test_json_output_escapes_c1_too(capsys):
    emit_json({"t": HOSTILE})
    out = capsys.readouterr().out
    assert not _raw_controls(out) and json.loads(out)["t"] == HOSTILE


@pytest.fixture()
def hostile_tree(tmp_path):
    root = tmp_path / "kb"
    root.mkdir()
    (root / "doc.md").write_text(f"# Title {HOSTILE}\n\nThe budget {HOSTILE} is here.\n", encoding="utf-8")
    (root / f"{FORGED}\x1b[2J.md").write_text("# Plain\n\nThe budget again.\n", encoding="utf-8")
    (root / "bad\x1b[2J.md").write_bytes(b"# Bad\n\n\xff\xfe invalid utf-8\n")
    # a warning naming the file (ingest reports it the moment it is known, on stderr)
    (root / "warn\x1b]0;t\x07.md").write_text("---\nacl: [x\n---\n# Held\n\nThe budget held.\n", encoding="utf-8")
    return root


def test_every_table_command_escapes_documents_and_names(hostile_tree, tmp_path, capsys):
    db = tmp_path / "s.db"
    outputs = []
    for argv in (["chunk", str(hostile_tree / "doc.md")], ["chunk", str(hostile_tree)], ["audit", str(hostile_tree)],
                 ["ingest", str(hostile_tree), "--db", str(db), "--acl", "staff", "--embedder", "none"],
                 ["manifest", "--db", str(db)], ["check", "--db", str(db)],
                 ["search", f"budget {HOSTILE}", "--db", str(db), "--groups", "staff", "--mode", "bm25"]):
        main(argv)
        cap = capsys.readouterr()
        outputs.append((argv[0], cap.out, cap.err))
    for command, out, err in outputs:
        for stream in (out, err):
            assert not _raw_controls(stream), (command, [c for c in _raw_controls(stream)][:5])
            assert not any(line.startswith("chunkwise: error: forged") for line in stream.splitlines()), command
    seen = "".join(o + e for _, o, e in outputs)
    assert "\\x1b[2J" in seen and "\\u202e" in seen and "evil\\nchunkwise" in seen  # shown, escaped
