"""``code``: source and config files packed by their syntax tree, so a function that fits is never cut.

A tree-sitter grammar (the ``code`` extra) gives the structure; this module only turns it into cut
levels, and ``pack`` does the packing: between top-level units (definitions, statements, imports,
top-level keys of a config file) a BLOCK cut, between the members of a class / impl / table an ITEM
cut, between the statements of a function body a LINE cut, at other line ends a SENTENCE cut. A
namespace / module adds no level (C# and C++ put a whole file in one): its members are top-level
units and its own edges SECTION cuts. A comment or decorator run directly above a unit travels with
it. Because a function holds no cut of its own level or higher, the packer can only cut inside it when
it does not fit alone. A piece cut inside a line is flagged ``needs_review``. The heading path is the
chain of enclosing containers ("namespace geo", "class Server", "impl Store", "[tool.ruff]"), and a
piece cut from inside a function too long for one piece ends it with the function's signature.
Without a grammar for the language (or without the extra) the file is line-packed: blank lines first,
then line ends.
"""
from __future__ import annotations

import importlib
import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

from chunkwise.chunking import boundaries
from chunkwise.chunking.base import BaseChunker, Draft
from chunkwise.chunking.levels import Level
from chunkwise.chunking.pack import pack

# language -> (module, function returning the grammar)
GRAMMARS = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "bash": ("tree_sitter_bash", "language"),
    "json": ("tree_sitter_json", "language"),
    "yaml": ("tree_sitter_yaml", "language"),
    "toml": ("tree_sitter_toml", "language"),
}
# node type -> the word a heading path shows before its name
CONTAINERS = {
    "class_definition": "class", "class_declaration": "class", "abstract_class_declaration": "class",
    "class": "class", "interface_declaration": "interface", "enum_declaration": "enum",
    "record_declaration": "record", "impl_item": "impl", "trait_item": "trait", "mod_item": "mod",
    "internal_module": "namespace", "module": "module", "table": "", "table_array_element": "",
    "namespace_definition": "namespace", "namespace_declaration": "namespace", "class_specifier": "class",
    "struct_specifier": "struct", "struct_declaration": "struct", "trait_declaration": "trait",
}
# A namespace declared by one line (C# ``namespace Shop;``, PHP ``namespace App;``) holds what follows
# it up to the next such line.
_OPEN_NAMESPACES = frozenset({"file_scoped_namespace_declaration", "namespace_definition"})
# Containers whose members keep the level the namespace itself has (C# and C++ put every class in one).
_NAMESPACES = frozenset({"namespace_definition", "namespace_declaration", "internal_module", "mod_item", "module"})
_WRAPPERS = ("decorated_definition", "export_statement", "template_declaration")
_DECLARATIONS = frozenset({"declaration", "field_declaration", "type_definition"})
# Nodes that only group top-level units (C's include guards and #if blocks, extern "C" { }): their
# members are units of the same depth.
TRANSPARENT = frozenset({"preproc_ifdef", "preproc_if", "preproc_else", "preproc_elif", "preproc_elifdef",
                         "linkage_specification"})
_DEPTH_LEVEL = (Level.BLOCK, Level.ITEM, Level.LINE)
_NEWLINE = re.compile("\n")
_SQL_END = re.compile(r";[ \t]*(?:--[^\n]*)?(?=\n|\Z)")
_SIGNATURE_CHARS = 160  # a signature longer than this is shown cut: it is context, not the code
_MAX_NODES = 200_000  # a generated file with millions of units: below that, lines carry the cuts


@dataclass(frozen=True, slots=True)
class Outline:
    """What a syntax tree says about a text: cuts ``(position, level)`` and containers
    ``(start, end, label)`` in character offsets."""

    cuts: tuple[tuple[int, Level], ...]
    containers: tuple[tuple[int, int, str], ...]
    parsed: bool
    # units with comment lines above them: (lead start, own first line, end, level). When lead and
    # unit do not fit together the unit's own line becomes a cut of its level (``CodeChunker``).
    leads: tuple[tuple[int, int, int, Level], ...] = ()
    # functions (definition start, end, signature): one too long for a piece gives the pieces cut
    # from inside its body its signature as the last step of their heading path
    functions: tuple[tuple[int, int, str], ...] = ()


@lru_cache(maxsize=None)
def _parser(language: str):
    """A tree-sitter parser for ``language``, or None when the grammar (or the extra) is missing."""
    spec = GRAMMARS.get(language)
    if spec is None:
        return None
    try:
        import tree_sitter
        module = importlib.import_module(spec[0])
    except ImportError:
        return None
    return tree_sitter.Parser(tree_sitter.Language(getattr(module, spec[1])()))


def has_grammar(language: str) -> bool:
    return _parser(language) is not None


_COMMENT_MARKS = {"python": ("#",), "bash": ("#",), "yaml": ("#",), "toml": ("#",), "ruby": ("#",),
                  "php": ("//", "/*", "*", "#")}
_C_MARKS = ("//", "/*", "*")


class _Lines:
    """Row/column (bytes) of tree-sitter -> character offsets, through line starts; and the comment
    lines directly above a row, which belong to what follows them."""

    def __init__(self, text: str, language: str = "") -> None:
        self.text = text
        self.starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]
        self.ascii = text.isascii()
        self.marks = _COMMENT_MARKS.get(language, () if language == "json" else _C_MARKS)

    def lead(self, row: int) -> int:
        """The first row of the unbroken run of comment lines ending just above ``row``."""
        while row > 0 and self.marks:
            line = self.text[self.start(row - 1) : self.start(row)].lstrip()
            if not line.startswith(self.marks):
                break
            row -= 1
        return row

    def start(self, row: int) -> int:
        return self.starts[min(row, len(self.starts) - 1)]

    def first(self, row: int) -> int:
        """Where ``row``'s text begins after its indentation: a cut there lets a unit that fits be
        measured without the indentation in front of it (which ``chars`` would count)."""
        s = self.start(row)
        n = len(self.text)
        while s < n and self.text[s] in " \t":
            s += 1
        return s

    def at(self, point) -> int:
        row, col = point
        s = self.start(row)
        if self.ascii:
            return min(s + col, len(self.text))
        line = self.text[s : s + col].encode("utf-8")[:col]  # col counts bytes: at most col chars
        return s + len(line.decode("utf-8", "ignore"))


def outline(text: str, language: str) -> Outline:
    """Cuts and containers for ``text``; line cuts only when no grammar is available."""
    parser = _parser(language)
    if parser is None:
        return Outline(tuple(_line_cuts(text, language)), (), False)
    tree = parser.parse(text.encode("utf-8"))
    lines = _Lines(text, language)
    cuts: list[tuple[int, Level]] = [(p, Level.SENTENCE) for p, _ in boundaries.lines(text)]
    containers: list[tuple[int, int, str]] = []
    leads: list[tuple[int, int, int, Level]] = []
    functions: list[tuple[int, int, str]] = []
    budget = [_MAX_NODES]
    _units(_unwrap(tree.root_node), 0, lines, (cuts, containers, leads, functions), budget)
    return Outline(tuple(cuts), tuple(containers), True, tuple(leads), tuple(functions))


def _line_cuts(text: str, language: str):
    """Blank lines, then line ends; SQL statements (a line ending in ``;``) count as blank lines."""
    yield from boundaries.paragraphs(text)
    if language == "sql":
        yield from ((m.end(), Level.BLOCK) for m in _SQL_END.finditer(text))
    yield from boundaries.lines(text)


def _unwrap(node):
    """Step through nodes that only wrap one other (a JSON document's object, a YAML stream)."""
    for _ in range(8):
        kids = [c for c in node.named_children if "comment" not in c.type]
        if (len(kids) != 1 or kids[0].type in CONTAINERS or kids[0].type in _WRAPPERS
                or kids[0].child_by_field_name("body") is not None):  # a file of one definition
            return node
        if kids[0].end_point[0] - kids[0].start_point[0] < 1:
            return node
        node = kids[0]
    return node


def _definition(node):
    """The definition a wrapper holds (decorators, ``export``, ``template <...>``), or the node
    itself; None for a wrapper around nothing."""
    for _ in range(4):
        if node.type in _DECLARATIONS:  # C/C++ ``struct buf { ... };``, a nested ``class B { ... };``
            kind = node.child_by_field_name("type")
            return kind if kind is not None and kind.child_by_field_name("body") is not None else node
        if node.type not in _WRAPPERS:
            return node
        nxt = node.child_by_field_name("definition") or node.child_by_field_name("declaration")
        if nxt is None:
            named = [c for c in node.named_children if c.type not in ("decorator", "comment")]
            nxt = named[-1] if named else None
        if nxt is None:
            return None
        node = nxt
    return node


def _inner(node):
    """The node whose children are ``node``'s members or statements, or None."""
    node = _definition(node)
    if node is None:
        return None
    if node.type in ("table", "table_array_element"):
        return node
    body = node.child_by_field_name("body") or node.child_by_field_name("value")
    return _unwrap(body) if body is not None else None


def _label(node, text: str, lines: _Lines) -> str | None:
    node = _definition(node)
    if node is None:
        return None
    word = CONTAINERS.get(node.type)
    if node.type in ("table", "table_array_element"):
        first = node.named_children[0] if node.named_children else None
        if first is None:
            return None
        return "[" + text[lines.at(first.start_point) : lines.at(first.end_point)] + "]"
    if node.type in ("pair", "block_mapping_pair"):
        key = node.child_by_field_name("key")
        return text[lines.at(key.start_point) : lines.at(key.end_point)].strip("\"'") if key is not None else None
    if word is None:
        return None
    name = node.child_by_field_name("name") or node.child_by_field_name("type")
    if name is None:
        return word or None
    shown = " ".join(text[lines.at(name.start_point) : lines.at(name.end_point)].split())
    return f"{word} {shown}".strip()


def _signature(node, text: str, lines: _Lines) -> tuple[int, str] | None:
    """Where a function's definition starts and its signature (the text before its body, on one
    line): the context a piece cut from inside its body carries in its heading path."""
    node = _definition(node)
    body = node.child_by_field_name("body") if node is not None else None
    if body is None:
        return None
    start = lines.at(node.start_point)
    shown = " ".join(text[start : lines.at(body.start_point)].split())
    for tail in ("{", ":", "=>", "="):
        shown = shown.removesuffix(tail).rstrip()
    return (start, shown[:_SIGNATURE_CHARS]) if shown else None


def _units(node, depth: int, lines: _Lines, out: tuple[list, list, list, list], budget: list) -> None:
    """Cut before each member of ``node`` that begins a line (with the comment lines directly above
    it) at the level of ``depth``; descend into containers and bodies. ``out``: the cuts, containers,
    leads and function (start, end, signature) lists being filled. A namespace does not deepen the
    level of what it holds; members of containers nested deeper than a class are LINE cuts, and a
    function's statements are LINE cuts only where the function itself is cut above LINE."""
    cuts, containers, leads, functions = out
    text = lines.text
    last = len(_DEPTH_LEVEL) - 1
    level = _DEPTH_LEVEL[min(depth, last)]
    opened: list[tuple[int, str]] = []  # one-line namespace declarations: (start, label)
    for kid in node.named_children:
        budget[0] -= 1
        if budget[0] < 0:
            break
        row = kid.start_point[0]
        if "comment" in kid.type or text[lines.start(row) : lines.at(kid.start_point)].strip():
            continue  # comments travel with what follows; ``a = 1; b = 2``: the line cut serves
        end = trimmed_end(kid)
        # before the unit (and its comment lines) and after its last line: what lies between two
        # units (a banner comment, blank lines) never glues one unit to the next
        lead = lines.lead(row)
        stop = lines.start(end[0] + 1) - 1 if end[0] + 1 < len(lines.starts) else len(text)
        definition = _definition(kid)
        # a namespace's members keep its level, so its own edges rank above them: one that fits is whole
        edge = Level.SECTION if depth == 0 and definition is not None and definition.type in _NAMESPACES else level
        cuts.append((lines.first(lead), edge))
        cuts.append((stop, edge))
        if lead < row:
            leads.append((lines.first(lead), lines.first(row), stop, edge))
        if kid.type in TRANSPARENT:
            _units(kid.child_by_field_name("body") or kid, depth, lines, out, budget)
            continue
        if kid.type in _OPEN_NAMESPACES and kid.child_by_field_name("body") is None:
            name = kid.child_by_field_name("name")
            if name is not None:
                opened.append((lines.start(row), "namespace " + text[lines.at(name.start_point) : lines.at(name.end_point)]))
            continue
        if kid.end_point[0] == kid.start_point[0]:
            continue
        inner = _inner(kid)
        if inner is None:
            continue
        label = _label(kid, text, lines)
        code = definition.type in CONTAINERS
        if label is not None and (code or kid.type in ("pair", "block_mapping_pair")) and (code or depth < last):
            containers.append((lines.first(row), lines.at(end), label))
            _units(inner, depth if definition.type in _NAMESPACES else depth + 1, lines, out, budget)
        elif depth < last:  # a function: its statements are LINE cuts, nothing deeper
            sig = _signature(kid, text, lines)
            if sig is not None:
                functions.append((sig[0], lines.at(end), sig[1]))
            _units(inner, last, lines, out, budget)
    bounds = [a for a, _ in opened[1:]] + [lines.at(node.end_point)]
    containers.extend((a, b, label) for (a, label), b in zip(opened, bounds))


def trimmed_end(node):
    """Where ``node`` ends without trailing comments: grammars hang a dedented comment block that
    introduces the next definition on the end of the previous one."""
    for _ in range(64):
        kids = [c for c in node.children if "comment" not in c.type]
        if not kids:
            break
        if kids[-1] is node.children[-1] and not kids[-1].children:
            return kids[-1].end_point
        node = kids[-1]
    return node.end_point


class CodeChunker(BaseChunker):
    """Packs whole syntax units (see the module docstring); ``config.language`` names the grammar."""

    name = "code"

    def drafts(self, text: str, title: str) -> list[Draft]:
        shape = outline(text, self.config.language)
        paths = _PathIndex(shape.containers)
        budget, _ = self.body_budget(paths.longest, title)
        split = self._oversized(text, shape.functions, budget)
        if split:
            paths = _PathIndex((*shape.containers, *split))
            budget, _ = self.body_budget(paths.longest, title)
        floor = Level.SENTENCE if shape.parsed else Level.LINE
        cuts = [*shape.cuts, *self._detached(text, shape.leads, budget)]
        pieces = pack(text, 0, len(text), cuts, self.sizer, budget, self.config.overlap, floor=floor)
        out = []
        for p in pieces:
            reasons = ("split_inside_line",) if p.review else ()
            out.append(Draft(p.start, p.end, p.size, p.level, p.review, reasons, heading_path=paths.of(p.start, p.end),
                             kind="code", exact=p.exact))
        return out


    def _oversized(self, text: str, functions, budget: int) -> list[tuple[int, int, str]]:
        """The functions that cannot be one piece (measured only where their UTF-8 bytes exceed the
        budget, as in ``_detached``)."""
        ascii = text.isascii()
        big = [f for f in functions
               if f[1] - f[0] > self.char_cap or (f[1] - f[0] if ascii else len(text[f[0]:f[1]].encode())) > budget]
        sizes = self.sizer.count_many([text[a:e] for a, e, _ in big]) if big else []
        return [f for f, n in zip(big, sizes) if n > budget or f[1] - f[0] > self.char_cap]

    def _detached(self, text: str, leads, budget: int) -> list[tuple[int, Level]]:
        """A unit whose comment lines do not fit with it starts a piece of its own: only a cut at
        inside it (the comments then close the piece before). Measured only where the UTF-8 bytes
        (never fewer than the tokens, words or characters) could exceed the budget."""
        chars = self.char_cap
        ascii = text.isascii()
        big = [x for x in leads
               if x[2] - x[0] > chars or (x[2] - x[0] if ascii else len(text[x[0]:x[2]].encode())) > budget]
        sizes = self.sizer.count_many([text[a:e] for a, _, e, _ in big]) if big else []
        return [(own, level) for (a, own, e, level), n in zip(big, sizes) if n > budget or e - a > chars]


class _PathIndex:
    """Heading paths from nested container spans: those that strictly enclose a piece."""

    def __init__(self, containers) -> None:
        self.items = sorted(containers, key=lambda c: (c[0], -c[1]))
        self.starts = [c[0] for c in self.items]
        self.parent: list[int] = []
        stack: list[int] = []
        for i, (s, e, _) in enumerate(self.items):
            while stack and self.items[stack[-1]][1] < e:
                stack.pop()
            self.parent.append(stack[-1] if stack else -1)
            stack.append(i)
        self.longest = max((self._chain(i) for i in range(len(self.items))), key=len, default=())

    def _chain(self, i: int) -> tuple[str, ...]:
        out = []
        while i >= 0:
            out.append(self.items[i][2])
            i = self.parent[i]
        return tuple(reversed(out))

    def of(self, start: int, end: int) -> tuple[str, ...]:
        i = bisect_right(self.starts, start - 1) - 1  # the last container opening before the piece
        while i >= 0 and not (self.items[i][0] < start and end <= self.items[i][1]):
            i = self.parent[i]
        return self._chain(i) if i >= 0 else ()
