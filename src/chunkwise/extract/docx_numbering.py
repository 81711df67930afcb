"""DOCX list and heading numbers ("1.", "2.3.1", "a)", "iv.") as a reader sees them.

Why: Word draws these numbers from ``word/numbering.xml``; they are not in the paragraph's runs. Read
without them, "see section 2.3" or "step 4" points at nothing, a numbered heading loses the number
people cite it by, and ordered lists lose their order. So each numbered paragraph gets its label
computed as Word does: per abstract numbering definition one counter per level (list instances that
share a definition continue each other unless one restarts with ``startOverride``), a level's first
use starts at its ``start``, using a level restarts every deeper one, ``lvlText`` ("%1.%2.") names
which levels' values to print and ``numFmt`` how (decimal, letters, roman; ``isLgl`` forces decimal).
Bullets (and ``none``) give no label: a glyph carries no words.

Numbering comes from the paragraph's ``numPr``, else its style chain's (heading styles often carry
one); ``numId`` 0 switches numbering off. Bounded: at most 9 levels, counters are plain integers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from chunkwise.extract.ooxml import W_NS

W = "{%s}" % W_NS
_PLACE = re.compile(r"%([1-9])")
_MAX_LEVELS = 9
_ROMAN = ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"), (40, "xl"),
          (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"))


@dataclass(frozen=True)
class Level:
    start: int
    fmt: str  # numFmt: decimal, lowerLetter, upperRoman, bullet, none, ...
    text: str  # lvlText: "%1.%2."
    legal: bool  # isLgl: every level printed as decimal


def _attr(el, tag: str) -> str | None:
    found = el.find(tag) if el is not None else None
    return found.get(W + "val") if found is not None else None


def _int(value: str | None, default: int) -> int:
    try:
        return max(0, min(int(value), 1_000_000)) if value is not None else default
    except ValueError:
        return default


def _levels(el) -> dict[int, Level]:
    out = {}
    for lvl in el.findall(W + "lvl"):
        ilvl = _int(lvl.get(W + "ilvl"), -1)
        if 0 <= ilvl < _MAX_LEVELS:
            out[ilvl] = Level(_int(_attr(lvl, W + "start"), 1), _attr(lvl, W + "numFmt") or "decimal",
                              _attr(lvl, W + "lvlText") or "", lvl.find(W + "isLgl") is not None)
    return out


class Numbering:
    """The numbering definitions of one document and the counters of a walk through it, in order."""

    def __init__(self, numbering_root, styles_root) -> None:
        self.abstract: dict[str, dict[int, Level]] = {}
        self.style_link: dict[str, str] = {}  # abstractNum id -> numbering style it takes its levels from
        self.nums: dict[str, tuple[str, dict[int, int], dict[int, Level]]] = {}
        self.style_num: dict[str, tuple[str | None, str | None]] = {}  # style id -> (numId, ilvl)
        self.counters: dict[str, list[int | None]] = {}
        self.started: set[tuple[str, int]] = set()  # (numId, level) whose startOverride has been applied
        root = numbering_root
        for an in root.iter(W + "abstractNum") if root is not None else ():
            aid = an.get(W + "abstractNumId", "")
            self.abstract[aid] = _levels(an)
            if link := _attr(an, W + "numStyleLink"):
                self.style_link[aid] = link
        for num in root.iter(W + "num") if root is not None else ():
            nid = num.get(W + "numId", "")
            overrides, levels = {}, {}
            for ov in num.findall(W + "lvlOverride"):
                ilvl = _int(ov.get(W + "ilvl"), -1)
                if not 0 <= ilvl < _MAX_LEVELS:
                    continue
                if (start := _attr(ov, W + "startOverride")) is not None:
                    overrides[ilvl] = _int(start, 1)
                levels.update({k: v for k, v in _levels(ov).items() if k == ilvl})
            self.nums[nid] = (_attr(num, W + "abstractNumId") or "", overrides, levels)
        for st in styles_root.iter(W + "style") if styles_root is not None else ():
            numpr = st.find(f"{W}pPr/{W}numPr")
            if numpr is not None and st.get(W + "styleId"):
                self.style_num[st.get(W + "styleId")] = (_attr(numpr, W + "numId"), _attr(numpr, W + "ilvl"))

    def resolve(self, ppr, style_chain) -> tuple[str, int] | None:
        """(numId, level) numbering this paragraph, or None: its own numPr, else its style chain's."""
        numpr = ppr.find(W + "numPr") if ppr is not None else None
        num_id, ilvl = (_attr(numpr, W + "numId"), _attr(numpr, W + "ilvl")) if numpr is not None else (None, None)
        for sid in style_chain:
            if num_id is not None and ilvl is not None:
                break
            s_num, s_lvl = self.style_num.get(sid, (None, None))
            num_id = num_id if num_id is not None else s_num
            ilvl = ilvl if ilvl is not None else s_lvl
        if num_id in (None, "0") or num_id not in self.nums:
            return None
        return num_id, min(_int(ilvl, 0), _MAX_LEVELS - 1)

    def _definition(self, num_id: str) -> tuple[str, dict[int, Level]]:
        """The abstract definition's id and levels (a numStyleLink followed once, to its style's list)."""
        aid, _, own = self.nums[num_id]
        if aid in self.style_link:
            linked = self.style_num.get(self.style_link[aid], (None, None))[0]
            if linked in self.nums and self.nums[linked][0] != aid:
                aid = self.nums[linked][0]
        return aid, {**self.abstract.get(aid, {}), **own}

    def label(self, num_id: str, ilvl: int) -> str:
        """Advance the counters for one numbered paragraph and return its label ("" for bullets)."""
        aid, levels = self._definition(num_id)
        level = levels.get(ilvl)
        if level is None:
            return ""
        counts = self.counters.setdefault(aid, [None] * _MAX_LEVELS)
        start = self.nums[num_id][1].get(ilvl)
        if start is not None and (num_id, ilvl) not in self.started:
            self.started.add((num_id, ilvl))  # "restart numbering": this instance begins again here
            counts[ilvl] = start
        else:
            counts[ilvl] = level.start if counts[ilvl] is None else counts[ilvl] + 1
        for deeper in range(ilvl + 1, _MAX_LEVELS):
            counts[deeper] = None
        if level.fmt in ("bullet", "none") or not level.text:
            return ""

        def value(m: re.Match) -> str:
            k = int(m.group(1)) - 1
            lv = levels.get(k)
            if counts[k] is None:  # a skipped level prints its start, and counts on from there
                counts[k] = lv.start if lv else 1
            n = counts[k]
            fmt = "decimal" if level.legal or lv is None else lv.fmt
            return _format(n, fmt)

        return _PLACE.sub(value, level.text).strip()


def _format(n: int, fmt: str) -> str:
    if fmt in ("lowerLetter", "upperLetter"):
        s = chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1) if n > 0 else str(n)
        return s.upper() if fmt == "upperLetter" else s
    if fmt in ("lowerRoman", "upperRoman") and 0 < n < 4000:
        out, rest = "", n
        for value, digits in _ROMAN:
            while rest >= value:
                out, rest = out + digits, rest - value
        return out.upper() if fmt == "upperRoman" else out
    if fmt == "decimalZero":
        return f"{n:02d}"
    if fmt in ("bullet", "none"):
        return ""
    return str(n)
