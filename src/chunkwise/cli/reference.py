"""The CLI reference (``docs/cli.md``) written from the argument parser itself, so it cannot drift:
``python scripts/gen_cli_reference.py`` rewrites it and tests/cli/test_cli_reference.py fails when
the checked-in file differs. Hidden aliases (``help=argparse.SUPPRESS``) are left out.
"""
from __future__ import annotations

import argparse

HEADER = """# CLI reference

Generated from the argument parser by `python scripts/gen_cli_reference.py`; do not edit by hand
(a test fails when this file is out of date). Every command exits 0 on success, 1 on a failed run and
2 on bad usage or configuration; with `--json` its output, and any error, is JSON (an error is one
object: `{"error": "...", "exit_code": 2}`). Walk-throughs are in [the CLI guide](guides/cli.md).
"""


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _flag(action: argparse.Action) -> str:
    if not action.option_strings:
        name = action.metavar or action.dest.upper()
        return f"`{name}{' ...' if action.nargs in ('+', '*') else ''}`"
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return f"`{names}`"
    if action.choices is not None and action.metavar is None:
        value = "{" + ",".join(map(str, action.choices)) + "}"
    else:
        value = action.metavar or action.dest.upper()
    return f"`{names} {value}`"


def _describe(action: argparse.Action) -> str:
    text = action.help or ""
    if action.required and action.option_strings:
        text = f"required. {text}"
    default = action.default
    shown = (default not in (None, False, [], argparse.SUPPRESS) and action.nargs != 0
             and "default" not in text.lower())
    if shown:
        text += f" (default: {', '.join(map(str, default)) if isinstance(default, list) else default})"
    return _cell(text)


def _subcommands(parser: argparse.ArgumentParser):
    """(name, help, parser) of each sub-command, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, helps.get(name, ""), sub


def _section(prog: str, about: str, parser: argparse.ArgumentParser, out: list[str]) -> None:
    out += ["", f"## `{prog}`", ""]
    about = _cell(about).rstrip(".")
    if about:
        out += [about[:1].upper() + about[1:] + ".", ""]
    rows = [a for a in parser._actions
            if a.help != argparse.SUPPRESS and not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]
    if rows:
        out += ["| argument | meaning |", "| --- | --- |"]
        out += [f"| {_flag(a)} | {_describe(a)} |" for a in rows]
    for name, helptext, sub in _subcommands(parser):
        _section(f"{prog} {name}", helptext or "", sub, out)


def render(parser: argparse.ArgumentParser) -> str:
    """The Markdown reference of every command and sub-command of ``parser``."""
    out = [HEADER.rstrip("\n")]
    names = [name for name, _, _ in _subcommands(parser)]
    if names:
        out += ["", "Commands: " + ", ".join(f"[`{name}`](#{parser.prog}-{name})" for name in names) + "."]
    _section(parser.prog, parser.description or "", parser, out)
    return "\n".join(out) + "\n"


def reference() -> str:
    from chunkwise.cli.main import build_parser

    return render(build_parser())
