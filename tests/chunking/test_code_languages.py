"""Issue 29 item 3: a tree-sitter grammar for each of C, C++, C#, Java, Go, Rust, TypeScript,
JavaScript, Python, Ruby and PHP; a definition that fits is one chunk (nested ones included), the
enclosing namespace / class / module is the heading path, and a body too long for one chunk is cut at
statements with the function's signature as the last step of the heading path."""
from __future__ import annotations

import pytest

pytest.importorskip("tree_sitter")

from chunkers import chunk_text  # noqa: E402
from chunkwise import api  # noqa: E402
from chunkwise.chunking.code import has_grammar, outline  # noqa: E402
from chunkwise.config import ChunkConfig  # noqa: E402

CPP = """#include <vector>

namespace geo {

// Squared length of a value.
inline double sq(double x) { return x * x; }

/// A point in the plane.
class Point {
 public:
  Point(double x, double y) : x_(x), y_(y) {}

  double norm() const {
    double s = sq(x_) + sq(y_);
    return s;
  }

  class Builder {
   public:
    Builder& x(double v) {
      x_ = v;
      return *this;
    }

   private:
    double x_ = 0;
  };

 private:
  double x_, y_;
};

template <typename T>
struct Box {
  T value;

  T get() const {
    return value;
  }
};

}  // namespace geo
"""

CSHARP = """using System;

namespace Shop.Billing
{
    /// <summary>An invoice with lines.</summary>
    public class Invoice
    {
        public decimal Total { get; set; }

        public decimal Tax(decimal rate)
        {
            var t = Total * rate;
            return Math.Round(t, 2);
        }

        public override string ToString()
        {
            return $"Invoice {Total}";
        }
    }

    public interface IStore
    {
        void Put(string key, Invoice value);
    }
}
"""

RUBY = """require "json"

module Shop
  # An invoice with lines.
  class Invoice
    attr_reader :lines

    def initialize(lines)
      @lines = lines
    end

    # Sum of the line totals.
    def total
      lines.sum { |l| l.price * l.quantity }
    end
  end
end

def helper(x)
  x * 2
end
"""

PHP = """<?php
namespace App\\Billing;

use App\\Models\\Line;

/** An invoice with lines. */
class Invoice
{
    private array $lines = [];

    public function total(): float
    {
        $t = 0;
        foreach ($this->lines as $line) {
            $t += $line->price;
        }
        return $t;
    }

    public function add(Line $line): void
    {
        $this->lines[] = $line;
    }
}

function helper($x)
{
    return $x * 2;
}
"""

C = """#include <stdlib.h>

/* A growable buffer. */
struct buf {
    char *data;
    size_t len;
};

/* Append one byte, growing the buffer. */
int buf_push(struct buf *b, char c)
{
    char *p = realloc(b->data, b->len + 1);
    if (!p)
        return -1;
    b->data = p;
    b->data[b->len++] = c;
    return 0;
}

void buf_free(struct buf *b)
{
    free(b->data);
}
"""

JAVA = """package shop;

import java.util.List;

/** An invoice with lines. */
public class Invoice {
    private final List<Line> lines;

    public Invoice(List<Line> lines) {
        this.lines = lines;
    }

    /** Sum of the line totals. */
    public double total() {
        double t = 0;
        for (Line l : lines) {
            t += l.price();
        }
        return t;
    }
}
"""

JS = """import { readFile } from "fs";

export class Loader {
  constructor(root) {
    this.root = root;
  }

  async load(name) {
    const text = await readFile(`${this.root}/${name}`, "utf8");
    return JSON.parse(text);
  }
}

export function helper(x) {
  return x * 2;
}
"""

CASES = [
    ("cpp", CPP, ["  double norm", "    Builder& x", "  T get", "inline double sq"],
     {"    Builder& x": ("namespace geo", "class Point", "class Builder"), "  T get": ("namespace geo", "struct Box"),
      "  double norm": ("namespace geo", "class Point")}),
    ("csharp", CSHARP, ["        public decimal Tax", "        public override string ToString"],
     {"        public decimal Tax": ("namespace Shop.Billing", "class Invoice")}),
    ("ruby", RUBY, ["    def initialize", "    # Sum of the line totals", "def helper"],
     {"    def initialize": ("module Shop", "class Invoice")}),
    ("php", PHP, ["    public function total", "    public function add", "function helper"],
     {"    public function add": ("namespace App\\Billing", "class Invoice"),
      "function helper": ("namespace App\\Billing",)}),
    ("c", C, ["int buf_push", "void buf_free", "struct buf"], {}),
    ("java", JAVA, ["    public Invoice(", "    /** Sum"], {"    /** Sum": ("class Invoice",)}),
    ("javascript", JS, ["  async load", "export function helper"], {"  async load": ("class Loader",)}),
]


def _span(text: str, head: str) -> tuple[int, int]:
    """A definition from its first line (comment included) to the line before the next blank line."""
    a = text.index(head) + len(head) - len(head.lstrip())
    b = text.find("\n\n", a)
    return a, len(text.rstrip()) if b == -1 else b


@pytest.mark.parametrize("lang, text, defs, paths", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("size", [40, 64])
def test_definitions_that_fit_are_whole_under_their_containers(lang, text, defs, paths, size):
    assert has_grammar(lang)
    chunks = chunk_text(text, ChunkConfig(strategy="code", language=lang, size=size))
    assert all(c.text == text[c.start_char : c.end_char] and c.size <= size for c in chunks)
    assert not any(c.needs_review for c in chunks)
    sizer = api.make_chunker(ChunkConfig(size=size)).sizer
    for head in defs:
        a, b = _span(text, head)
        if sizer.count(text[a:b]) > size:
            continue
        holder = [c for c in chunks if c.start_char <= a and b <= c.end_char]
        assert holder, (lang, head, [(c.start_char, c.end_char) for c in chunks])
        if head in paths:  # the path names the containers enclosing the chunk: the definition's, or outer ones
            path = holder[0].heading_path
            assert paths[head][: len(path)] == path, (head, path)


@pytest.mark.parametrize("lang, text, paths", [(c[0], c[1], c[3]) for c in CASES if c[3]], ids=[c[0] for c in CASES if c[3]])
def test_a_definition_chunked_alone_has_its_full_container_path(lang, text, paths):
    sizer = api.make_chunker(ChunkConfig(size=64)).sizer
    for head, path in paths.items():
        a, b = _span(text, head)
        size = sizer.count(text[a:b])  # the definition just fits: its chunk holds nothing else
        chunks = chunk_text(text, ChunkConfig(strategy="code", language=lang, size=size))
        holder = [c for c in chunks if c.start_char <= a and b <= c.end_char]
        assert holder and holder[0].heading_path == path, (head, [(c.heading_path, c.text[:30]) for c in chunks])


def test_grammars_for_every_language_the_issue_names():
    names = ["c", "cpp", "csharp", "java", "go", "rust", "typescript", "javascript", "python", "ruby", "php"]
    assert [n for n in names if not has_grammar(n)] == []


def test_a_nested_class_is_a_container_below_its_class_and_a_namespace_adds_no_depth():
    o = outline(CPP, "cpp")
    labels = [label for _, _, label in o.containers]
    assert labels == ["namespace geo", "class Point", "class Builder", "struct Box"]
    cuts = dict(o.cuts)
    # members of a namespace are top-level units (BLOCK), members of its classes ITEM
    assert cuts[CPP.index("class Point") - len("/// A point in the plane.\n")].name == "BLOCK"
    assert cuts[CPP.index("double norm")].name == "ITEM"


def test_one_line_namespaces_hold_what_follows_them():
    cs = "namespace Shop.Billing;\n\npublic class Invoice\n{\n    public int Total() { return 1; }\n}\n"
    o = outline(cs, "csharp")
    assert ("namespace Shop.Billing", len(cs)) in {(label, e) for _, e, label in o.containers}
    php = "<?php\nnamespace A;\nfunction f() {\n  return 1;\n}\nnamespace B;\nfunction g() {\n  return 2;\n}\n"
    spans = {label: (s, e) for s, e, label in outline(php, "php").containers}
    assert php[slice(*spans["namespace A"])].rstrip().endswith("return 1;\n}")
    assert php[spans["namespace B"][0]:].startswith("namespace B;")


@pytest.mark.parametrize("lang, text, signature", [
    ("python", "class Store:\n    def load(self, key, default=None):\n"
     + "".join(f"        value_{i} = self.fetch(key, {i})\n" for i in range(60)) + "        return value_59\n",
     ("class Store", "def load(self, key, default=None)")),
    ("cpp", "namespace io {\nint parse(const char *s, size_t n) {\n"
     + "".join(f"  int v{i} = step(s, n, {i});\n" for i in range(60)) + "  return v59;\n}\n}\n",
     ("namespace io", "int parse(const char *s, size_t n)")),
    ("ruby", "class Store\n  def load(key)\n" + "".join(f"    v{i} = fetch(key, {i})\n" for i in range(60))
     + "    v59\n  end\nend\n", ("class Store", "def load(key)")),
])
def test_a_body_too_long_is_cut_at_statements_with_its_signature_as_context(lang, text, signature):
    chunks = chunk_text(text, ChunkConfig(strategy="code", language=lang, size=64, header="path"))
    assert len(chunks) > 2 and not any(c.needs_review for c in chunks)
    assert all(c.size <= 64 for c in chunks)
    first = text.index(signature[-1].split("(")[0])
    last = text.rindex("59")
    inside = [c for c in chunks if first < c.start_char and c.end_char <= text.index("\n", last)]
    assert len(inside) >= 2 and all(c.heading_path == signature for c in inside), [c.heading_path for c in chunks]
    assert all(c.embed_text.startswith(" > ".join(signature)) for c in inside)
    # a function that fits keeps the plain container path: no signature step
    small = chunk_text(text, ChunkConfig(strategy="code", language=lang, size=2000))
    assert len(small) == 1 and small[0].heading_path == ()


def test_a_namespace_that_fits_is_whole():
    # the code-chunking benchmark's 6 split definitions: TypeScript namespaces of protocol.d.ts, cut
    # between their members once a namespace stopped adding a level (its edges now rank above them)
    ns = "".join(f"export namespace Domain{i} {{\n" + "".join(
        f"    /**\n     * Event {j} of domain {i}.\n     */\n    export type Event{j} = {{ id: number; name: string }};\n\n"
        for j in range(3)) + "}\n\n" for i in range(6))
    sizer = api.make_chunker(ChunkConfig(size=128)).sizer
    spans = [(m, ns.index("}\n\n", m) + 1) for m in (ns.index(f"export namespace Domain{i}") for i in range(6))]
    size = max(sizer.count(ns[a:b]) for a, b in spans) + 8
    assert size < 2 * min(sizer.count(ns[a:b]) for a, b in spans)  # two never fit together
    chunks = api.chunk_text(ns, ChunkConfig(strategy="code", language="typescript", size=size))
    for a, b in spans:
        assert any(c.start_char <= a and b <= c.end_char for c in chunks), ns[a:a + 30]
