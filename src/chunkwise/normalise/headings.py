"""Heading text as a heading path shows it: MkDocs / Python-Markdown ``attr_list`` and Pandoc
attribute blocks at the end of a heading (``## CORS { #cors }``, ``# Intro {#intro .unnumbered}``,
``## Setup {: .note data-x="1" }``, ``# Appendix {-}``) are markup for the renderer, not words of the
heading; left in, they show up in every chunk's path and embedded header."""
from __future__ import annotations

import re

_ATTR = r"""(?:[#.][^\s{}]+|[A-Za-z_][\w.:-]*=(?:"[^"]*"|'[^']*'|[^\s{}"']+)|-)"""
_TRAILING_ATTRS = re.compile(rf"\s*\{{:?\s*{_ATTR}(?:\s+{_ATTR})*\s*\}}\s*$")


def heading_label(text: str) -> str:
    """``text`` without a trailing attribute block; a heading that is nothing else stays as it is."""
    stripped = _TRAILING_ATTRS.sub("", text)
    return stripped if stripped.strip() else text
