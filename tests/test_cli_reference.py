"""docs/cli.md is generated from the argument parser; this fails when it is out of date."""
import argparse
from pathlib import Path

from chunkwise.cli.main import build_parser
from chunkwise.cli.reference import reference, render

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def test_cli_reference_is_up_to_date():
    assert DOC.read_text(encoding="utf-8") == reference(), (
        "docs/cli.md is out of date; run: python scripts/gen_cli_reference.py")


def test_reference_lists_every_visible_flag_and_no_hidden_alias():
    text = reference()
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sections = {}
    for part in text.split("\n## `chunkwise ")[1:]:
        sections[part.split("`")[0]] = part
    for name, p in sub.choices.items():
        assert name in sections
        own = "\n".join(part for key, part in sections.items() if key == name or key.startswith(name + " "))
        for action in p._actions:
            for flag in action.option_strings:
                if flag in ("-h", "--help"):
                    continue
                assert any(f"{flag}{end}" in own for end in " ,`") == (action.help != argparse.SUPPRESS), (name, flag)


def test_render_escapes_table_cells():
    p = argparse.ArgumentParser(prog="x")
    p.add_argument("--a", help="one | two")
    assert "one \\| two" in render(p)


def test_one_name_for_one_concept():
    """The same concept has the same flag in every command that takes it; old names are hidden."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    visible = {name: {f for a in p._actions if a.help != argparse.SUPPRESS for f in a.option_strings}
               for name, p in sub.choices.items()}
    for cmd in ("search", "check", "manifest", "serve", "ingest"):
        assert "--db" in visible[cmd]
    for cmd in ("search", "eval"):
        assert {"--k", "--mode", "--json"} <= visible[cmd]
    assert "--all-versions" not in visible["search"]  # = --versions all, kept working
    assert build_parser().parse_args(["search", "q", "--db", "x", "--groups", "g", "--all-versions"]).all_versions
