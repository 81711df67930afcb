"""Office Math (OMML, ``m:oMath``) as linear text, kept in place in its paragraph.

Why: a DOCX equation is XML of fractions, scripts, radicals and n-ary operators whose text runs are
``m:t``, not ``w:t``; read as a paragraph's runs it vanishes, and a question about a formula then
has nothing to match. Written out in a linear form close to UnicodeMath — ``(a+b)/(2c)``, ``x^(2)``,
``√(b^2-4ac)``, ``∑_(i=1)^(n) x_(i)`` — it stays searchable, readable in a passage and countable by
any tokenizer. Unknown elements give the text of their children, so nothing typed is lost.
"""
from __future__ import annotations

M_NAMESPACES = ("http://schemas.openxmlformats.org/officeDocument/2006/math",
                "http://purl.oclc.org/ooxml/officeDocument/math")  # transitional, Strict
_SKIP = {"rPr", "ctrlPr", "fPr", "sSupPr", "sSubPr", "sSubSupPr", "sPrePr", "radPr", "naryPr", "dPr", "funcPr",
         "accPr", "barPr", "boxPr", "borderBoxPr", "groupChrPr", "limLowPr", "limUppPr", "eqArrPr", "mPr", "mcs",
         "mrPr", "oMathParaPr", "argPr", "phantPr"}


def is_math(tag: str) -> bool:
    """An ``m:oMath`` or ``m:oMathPara`` element (either namespace)."""
    return tag.rsplit("}", 1)[-1] in ("oMath", "oMathPara") and tag[1:].split("}", 1)[0] in M_NAMESPACES


def linear(el) -> str:
    """``el`` (an OMML element) as one line of linear math."""
    return " ".join(_text(el).split())


def _local(el) -> str:
    tag = el.tag if isinstance(el.tag, str) else ""
    return tag.rsplit("}", 1)[-1]


def _child(el, name: str):
    return next((c for c in el if _local(c) == name), None)


def _val(el, prop: str, name: str, default: str) -> str:
    """The ``m:val`` of ``<prop><name m:val=…/></prop>`` under ``el`` (an empty value is kept)."""
    p = _child(el, prop)
    node = _child(p, name) if p is not None else None
    if node is None:
        return default
    return next((v for k, v in node.attrib.items() if k.rsplit("}", 1)[-1] == "val"), default)


def _part(el, name: str) -> str:
    c = _child(el, name)
    return _text(c) if c is not None else ""


def _group(s: str) -> str:
    """A script, operand or scripted base: bare when it is one symbol, a number or already one
    bracketed group, else in parentheses (``((x-c)/v)^2``, never the ambiguous ``(x-c)/v^2``)."""
    s = s.strip()
    if len(s) == 1 or s.replace(".", "", 1).isdigit() or (s[:1] in "([{" and _closes_at_end(s)):
        return s
    return f"({s})"


def _closes_at_end(s: str) -> bool:
    """``s`` is one bracketed group: its first bracket closes at its last character."""
    depth = 0
    for i, ch in enumerate(s):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0:
            return i == len(s) - 1
    return False


def _text(el) -> str:
    name = _local(el)
    if name in _SKIP:
        return ""
    if name == "t":
        return el.text or ""
    if name == "f":
        return f"{_group(_part(el, 'num'))}/{_group(_part(el, 'den'))}"
    if name == "sSup":
        return f"{_group(_part(el, 'e'))}^{_group(_part(el, 'sup'))}"
    if name == "sSub":
        return f"{_group(_part(el, 'e'))}_{_group(_part(el, 'sub'))}"
    if name == "sSubSup":
        return f"{_group(_part(el, 'e'))}_{_group(_part(el, 'sub'))}^{_group(_part(el, 'sup'))}"
    if name == "sPre":
        return f"_{_group(_part(el, 'sub'))}^{_group(_part(el, 'sup'))}{_part(el, 'e')}"
    if name == "rad":
        degree = _part(el, "deg").strip()
        return f"{'(' + degree + ')' if degree else ''}√({_part(el, 'e')})"
    if name == "nary":
        op = _val(el, "naryPr", "chr", "∫")
        sub, sup = _part(el, "sub").strip(), _part(el, "sup").strip()
        return op + (f"_{_group(sub)}" if sub else "") + (f"^{_group(sup)}" if sup else "") + f" {_part(el, 'e')}"
    if name == "d":
        begin, end = _val(el, "dPr", "begChr", "("), _val(el, "dPr", "endChr", ")")
        sep = _val(el, "dPr", "sepChr", "|")
        return begin + sep.join(_text(c) for c in el if _local(c) == "e") + end
    if name == "func":
        return f" {_part(el, 'fName').strip()} {_part(el, 'e')}"  # apart from a script before it: "a_n cos", not "a_ncos"
    if name in ("limLow", "limUpp"):
        return f"{_part(el, 'e')}{'_' if name == 'limLow' else '^'}{_group(_part(el, 'lim'))}"
    if name == "eqArr":
        return "; ".join(_text(c) for c in el if _local(c) == "e")
    if name == "m":
        rows = [", ".join(_text(e) for e in r if _local(e) == "e") for r in el if _local(r) == "mr"]
        return "[" + "; ".join(rows) + "]"
    if name == "oMathPara":
        return "\n".join(_text(c) for c in el if _local(c) == "oMath")
    return "".join(_text(c) for c in el)
