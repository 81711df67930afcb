#!/usr/bin/env python3
"""Write docs/cli.md from chunkwise's argument parser (``--check``: exit 1 when it is out of date)."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from chunkwise.cli.reference import reference  # noqa: E402

TARGET = ROOT / "docs" / "cli.md"


def main(argv: list[str]) -> int:
    text = reference()
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET.relative_to(ROOT)} is out of date; run: python scripts/gen_cli_reference.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
